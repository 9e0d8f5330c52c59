/// Something a plugin type can do beyond its kind's protocol, declared when it registers
/// (`registerBackend(…, abilities: [.liveView])`). The host asks by ability: it uses a
/// plugin's live view, settings or catalogue only when the plugin declared them, and
/// `shutterpipe plugins` lists them. A declared ability the plugin does not implement
/// refuses the plugin when it is made; one this shutterpipe does not know (the plugin
/// is newer) is listed as such and never used.
///
/// Each ability is a protocol of the contract; a new ability is an additive change (a
/// minor revision): plugins built before it simply do not declare it.
public struct PluginAbility: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ name: String) { rawValue = name }

    public var description: String { rawValue }
    public static func < (a: PluginAbility, b: PluginAbility) -> Bool { a.rawValue < b.rawValue }

    /// A backend streams live view frames: ``LiveViewSource`` (one camera) or
    /// ``CameraLiveViewSource`` (each camera of a session).
    public static let liveView = PluginAbility("liveView")
    /// A backend reads and changes camera settings: ``CameraSettingsControl``.
    public static let cameraSettings = PluginAbility("cameraSettings")
    /// A trigger or sink is told when the session opens: ``SessionObserver``.
    public static let sessionObserver = PluginAbility("sessionObserver")
    /// A sink keeps the session's shots and answers queries: ``ShotCatalogue``.
    public static let shotCatalogue = PluginAbility("shotCatalogue")
    /// A sink keeps photos in folders of its own, which the catalogue indexes: ``PhotoArchive`` (9.5).
    public static let photoArchive = PluginAbility("photoArchive")
    /// A trigger lets other programs reach the running session: ``SessionEntrance`` (9.5).
    public static let sessionEntrance = PluginAbility("sessionEntrance")
    /// A backend holds the shutter open for a time it is given: ``BulbCapture`` (10.1).
    public static let bulbCapture = PluginAbility("bulbCapture")

    /// Every ability this shutterpipe knows, with the protocol it stands for.
    public static let known: [PluginAbility: String] = [
        .liveView: "LiveViewSource", .cameraSettings: "CameraSettingsControl",
        .sessionObserver: "SessionObserver", .shotCatalogue: "ShotCatalogue",
        .photoArchive: "PhotoArchive", .sessionEntrance: "SessionEntrance",
        .bulbCapture: "BulbCapture",
    ]

    /// The known abilities `plugin` implements: what the host assumes of a plugin it made
    /// itself, which declares nothing (the catalogue recorder, a test's double).
    public static func implemented(by plugin: Any) -> Set<PluginAbility> {
        Set(known.keys.filter { $0.isImplemented(by: plugin) == true })
    }

    /// Whether `plugin` implements this ability's protocol (`nil`: an ability this
    /// shutterpipe does not know).
    public func isImplemented(by plugin: Any) -> Bool? {
        switch self {
        case .liveView: return plugin is any LiveViewSource
        case .cameraSettings: return plugin is any CameraSettingsControl
        case .sessionObserver: return plugin is any SessionObserver
        case .shotCatalogue: return plugin is any ShotCatalogue
        case .photoArchive: return plugin is any PhotoArchive
        case .sessionEntrance: return plugin is any SessionEntrance
        case .bulbCapture: return plugin is any BulbCapture
        default: return nil
        }
    }
}

/// A plugin declared an ability it does not implement, or implements one it did not
/// declare.
public struct AbilityMismatchError: Error, Sendable, CustomStringConvertible {
    public var type: String
    public var kind: PluginKind
    public var ability: PluginAbility
    public var declared: Bool

    public var description: String {
        let name = PluginAbility.known[ability] ?? ability.rawValue
        return declared
            ? "\(kind) type '\(type)' declares the ability '\(ability)' but does not implement \(name); implement it or drop it from abilities:"
            : "\(kind) type '\(type)' implements \(name) but does not declare the ability '\(ability)'; add it to abilities: when registering"
    }
}

/// A backend whose camera settings can be read and changed during a session: ISO,
/// shutter speed, aperture, image format. A backend adopts it besides
/// ``CaptureBackend``; triggers reach it through ``EventChannel/send(_:answer:)``, and the
/// coordinator calls it in the settings request's turn among the events, never during a
/// capture (its rule 15). (Added in ABI 5.)
///
/// ## Contract
/// - Both calls come only in photo mode (after a successful `prepare`), and never overlap
///   a capture or each other. They run under the coordinator's `settingsTimeout`: honour
///   cancellation, and block no thread of the cooperative pool.
/// - `camera`: the camera's name in the pipeline, for a backend that drives several;
///   `nil` means every camera.
/// - ``apply(_:camera:)`` checks every change against the camera's own choices before it
///   changes anything. A change the camera does not offer (or a setting it does not have,
///   or a read-only one) is refused by throwing ``SettingsRefusal``: cause
///   ``FailureCause/invalidConfiguration``, a message that names the setting and its
///   choices, the settings concerned as they are now, and nothing changed. It returns each
///   changed setting as the camera reads it back afterwards (cameras round: 1/200 may
///   read back as 1/250). Any other ``ShutterError`` is a failure to reach the camera.
/// - A backend that reopens its camera (after a reconnection) applies the session's
///   changes again, so that they outlive the connection they were made on.
public protocol CameraSettingsControl: Sendable {
    /// The settings named by `keys`, or every setting when `keys` is empty, with their
    /// values and choices.
    func settings(_ keys: [String], camera: String?) async throws -> [CameraSetting]

    /// Applies every change, or none when one is refused; returns the changed settings as
    /// read back.
    func apply(_ changes: [SettingChange], camera: String?) async throws -> [CameraSetting]
}

/// A settings change refused before anything was changed: the error, and the settings it
/// named as they are now (their values and choices), so the user sees what to pick.
public struct SettingsRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why, with cause ``FailureCause/invalidConfiguration``.
    public var error: ShutterError
    /// The settings the refused change named, where the camera has them.
    public var settings: [CameraSetting]

    /// Creates a refusal.
    public init(_ error: ShutterError, settings: [CameraSetting] = []) {
        self.error = error
        self.settings = settings
    }

    public var description: String { error.description }
}

/// One camera setting, with its value and what it may be set to.
public struct CameraSetting: Sendable, Equatable, Codable {
    /// What kind of value it takes. It may grow (contract 10 on): switch over it with
    /// `@unknown default`, and show a kind you do not know as its ``CameraSetting/value``, read-only.
    public enum Kind: String, Sendable, Equatable, Codable, CaseIterable {
        /// Free text.
        case text
        /// A number between ``CameraSetting/range``'s bounds.
        case range
        /// On or off (`1` or `0`).
        case toggle
        /// One of ``CameraSetting/choices``.
        case menu
        /// A date, in seconds since 1970.
        case date
        /// An action rather than a value (autofocus, say): it cannot be set.
        case button
    }

    /// The name to read and set it by (libgphoto2's widget name: `iso`, `f-number`).
    public var key: String
    /// The camera's own label for it ("ISO Speed").
    public var label: String
    /// The group it belongs to ("capturesettings"), when the camera groups them.
    public var section: String?
    /// What kind of value it takes.
    public var kind: Kind
    /// Its current value, as the camera words it.
    public var value: String
    /// For a ``Kind/menu``: the values it may take.
    public var choices: [String]
    /// For a ``Kind/range``: its bounds and step.
    public var range: SettingRange?
    /// Whether the camera lets it be changed.
    public var readOnly: Bool
    /// The camera's name in the pipeline, when a backend drives several.
    public var camera: String?

    /// Creates a setting.
    public init(key: String, label: String, section: String? = nil, kind: Kind, value: String, choices: [String] = [],
                range: SettingRange? = nil, readOnly: Bool = false, camera: String? = nil) {
        self.key = key
        self.label = label
        self.section = section
        self.kind = kind
        self.value = value
        self.choices = choices
        self.range = range
        self.readOnly = readOnly
        self.camera = camera
    }

    /// What it may be set to, in words: the choices, the range, or what kind of value.
    public var allowedValues: String {
        if readOnly { return "read-only" }
        switch kind {
        case .menu: return choices.isEmpty ? "no choices offered" : choices.joined(separator: ", ")
        case .range:
            return range.map { "\(SettingRange.text($0.minimum)) to \(SettingRange.text($0.maximum)) in steps of \(SettingRange.text($0.step))" } ?? "a number"
        case .toggle: return "0 or 1"
        case .text: return "any text"
        case .date: return "seconds since 1970, or now"
        case .button: return "an action; it cannot be set"
        }
    }
}

/// The bounds of a ``CameraSetting/Kind/range`` setting.
public struct SettingRange: Sendable, Equatable, Codable {
    public var minimum: Double
    public var maximum: Double
    public var step: Double

    /// Creates a range.
    public init(minimum: Double, maximum: Double, step: Double) {
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
    }
}

extension SettingRange {
    /// A number as a setting shows it: `5` rather than `5.0`, `0.5` as it is.
    public static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

/// One change to a camera setting: `iso=400`.
public struct SettingChange: Sendable, Hashable, Codable {
    /// The setting's key; backends also take their usual friendly names (`aperture`).
    public var key: String
    /// The value wanted, as the user wrote it (`1/200`, `f/8`, `400`).
    public var value: String

    /// Creates a change.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// Reads `KEY=VALUE`; `nil` when there is no `=` or either side is empty.
    public init?(parsing text: String) {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let key = text[..<equals].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !key.isEmpty, !value.isEmpty else { return nil }
        self.init(key: key, value: value)
    }
}

/// A request from a trigger to read or change camera settings, sent with
/// ``EventChannel/send(_:answer:)``.
public struct SettingsRequest: Sendable, Equatable {
    /// What is asked. It may grow (contract 10 on): refuse what you do not know.
    public enum Action: Sendable, Equatable {
        /// Read these settings; every setting when empty.
        case read([String])
        /// Change these settings, all or none.
        case change([SettingChange])
    }

    /// What is asked.
    public var action: Action
    /// The camera's name in the pipeline; `nil` for every camera.
    public var camera: String?
    /// The trigger's own name for what arrived, for logs.
    public var origin: String?

    /// Creates a request.
    public init(_ action: Action, camera: String? = nil, origin: String? = nil) {
        self.action = action
        self.camera = camera
        self.origin = origin
    }
}

/// The coordinator's answer to a ``SettingsRequest``.
public struct SettingsAnswer: Sendable, Equatable {
    /// The request this answers.
    public var request: SettingsRequest
    /// For a read: the settings read. For a change: each changed setting as read back.
    /// For a refused change: the settings it named, with their current values and choices,
    /// where they could be read.
    public var settings: [CameraSetting]
    /// Why it was refused or failed; `nil` on success.
    public var failure: ShutterError?
    /// How long the coordinator took, from dequeuing the request.
    public var duration: Duration

    /// Creates an answer.
    public init(request: SettingsRequest, settings: [CameraSetting] = [], failure: ShutterError? = nil, duration: Duration = .zero) {
        self.request = request
        self.settings = settings
        self.failure = failure
        self.duration = duration
    }

    /// One line: `settingsApplied iso=400 shutterspeed=1/200`, `settings iso=400 …` for a
    /// read, or `settingsRefused CAUSE: MESSAGE`. This is the shape the `stdin` trigger
    /// prints.
    public var summary: String {
        if let failure { return "settingsRefused \(failure.cause.rawValue): \(failure.description)" }
        let word: String
        switch request.action {
        case .read: word = "settings"
        case .change: word = "settingsApplied"
        }
        return ([word] + settings.map { setting in
            (setting.camera.map { "\($0)." } ?? "") + "\(setting.key)=\(setting.value)"
        }).joined(separator: " ")
    }
}

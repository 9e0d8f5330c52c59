import Foundation
import ShutterPipeKit

/// Driving the lens from the page: near or far in three step sizes, and autofocus, as
/// settings changes on the camera's own controls. libgphoto2 words them differently for
/// each maker; this reads which one a camera has, from its settings, and words the change:
///
/// - `manualfocusdrive` as a menu of `Near 1`…`Far 3` (Canon EOS, Olympus OM-D,
///   Panasonic): that choice (the largest the camera offers, where it has fewer sizes);
/// - `manualfocusdrive` as a range (Nikon: signed steps, negative is near): ±20, ±200, ±1000;
/// - `focusdistance`, a menu of distances (the PTP standard's FocusDistance, as generic
///   cameras and the virtual camera offer it): 1, 3 or 10 choices nearer or farther;
/// - `autofocusdrive` (a toggle): `1`, one autofocus run.
///
/// A camera with none of them gets no lens buttons.
struct LensDrive: Equatable {
    enum Direction: String { case near, far }

    /// How the camera drives its focus, if it can.
    enum Focus: Equatable {
        case steps(choices: [String])
        case signedRange(SettingRange)
        case distance(choices: [String], current: String)
    }

    var focus: Focus?
    var autofocus: Bool

    /// The settings to read to find out.
    static let keys = ["manualfocusdrive", "focusdistance", "autofocusdrive"]

    /// What `settings` (one camera's) allow.
    init(_ settings: [CameraSetting]) {
        let byKey = Dictionary(settings.filter { !$0.readOnly }.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        if let drive = byKey["manualfocusdrive"], drive.kind == .menu, drive.choices.contains(where: { $0.hasPrefix("Near ") }) {
            focus = .steps(choices: drive.choices)
        } else if let drive = byKey["manualfocusdrive"], drive.kind == .range, let range = drive.range {
            focus = .signedRange(range)
        } else if let distance = byKey["focusdistance"], distance.kind == .menu, distance.choices.count > 1 {
            focus = .distance(choices: distance.choices, current: distance.value)
        } else {
            focus = nil
        }
        autofocus = byKey["autofocusdrive"].map { $0.kind == .toggle || $0.kind == .button } ?? false
    }

    /// For the page: which buttons to show.
    var json: [String: Any] { ["drive": focus != nil, "autofocus": autofocus] }

    /// The change that moves the lens `step` (1, 2 or 3) towards `direction`; a refusal
    /// when the camera cannot, or the lens is at its end.
    func change(_ direction: Direction, step: Int) -> Result<SettingChange, ShutterError> {
        let step = min(max(step, 1), 3)
        switch focus {
        case nil:
            return .failure(ShutterError(.invalidConfiguration, "this camera has no lens drive that libgphoto2 can reach (no manualfocusdrive or focusdistance setting)",
                                         fix: "focus on the camera, or with autofocus where it has it"))
        case .steps(let choices):
            let word = direction == .near ? "Near" : "Far"
            let offered = (1...step).reversed().first { choices.contains("\(word) \($0)") }
            guard let offered else {
                return .failure(ShutterError(.invalidConfiguration, "the camera's manualfocusdrive has no '\(word) 1'; its choices: \(choices.joined(separator: ", "))"))
            }
            return .success(SettingChange(key: "manualfocusdrive", value: "\(word) \(offered)"))
        case .signedRange(let range):
            let size = Double([20, 200, 1000][step - 1])
            let value = min(max(direction == .near ? -size : size, range.minimum), range.maximum)
            return .success(SettingChange(key: "manualfocusdrive", value: SettingRange.text(value)))
        case .distance(let choices, let current):
            let ordered = Self.nearestFirst(choices)
            let index = ordered.firstIndex(of: current) ?? Self.nearestIndex(to: current, in: ordered)
            let moved = index + (direction == .near ? -1 : 1) * [1, 3, 10][step - 1]
            let target = min(max(moved, 0), ordered.count - 1)
            guard target != index else {
                return .failure(ShutterError(.invalidConfiguration, "the lens is at its \(direction == .near ? "nearest" : "farthest") focus distance (\(current))",
                                             fix: "drive it the other way"))
            }
            return .success(SettingChange(key: "focusdistance", value: ordered[target]))
        }
    }

    /// The change for one autofocus run.
    var autofocusChange: Result<SettingChange, ShutterError> {
        autofocus ? .success(SettingChange(key: "autofocusdrive", value: "1"))
            : .failure(ShutterError(.invalidConfiguration, "this camera has no autofocusdrive that libgphoto2 can reach", fix: "focus on the camera"))
    }

    /// libgphoto2's distances (`300 mm`, `infinite`), nearest first.
    static func nearestFirst(_ choices: [String]) -> [String] {
        choices.sorted { millimetres($0) < millimetres($1) }
    }

    private static func millimetres(_ choice: String) -> Double {
        if choice == "infinite" { return .infinity }
        return Double(choice.split(separator: " ").first ?? "") ?? .infinity
    }

    private static func nearestIndex(to value: String, in ordered: [String]) -> Int {
        let wanted = millimetres(value)
        return ordered.indices.min { abs(millimetres(ordered[$0]) - wanted) < abs(millimetres(ordered[$1]) - wanted) } ?? 0
    }
}

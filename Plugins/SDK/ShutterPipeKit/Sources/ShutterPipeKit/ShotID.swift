import Foundation

/// The one identity of a shot. The coordinator gives it when it asks the camera to fire,
/// or when a photo taken with the camera's own button arrives, and it travels with the
/// shot everywhere: on the ``CapturedPhoto``, in every sink's ``ShotContext``, in the
/// ``ShutterAnswer`` that triggers, sinks and observers see, and in the catalogue. Nothing
/// else counts shots. (Added in ABI 6.)
///
/// It is unique across runs: ``run`` names one start of a pipeline (its start time in UTC
/// and a random suffix), ``number`` counts that run's shots from 1. Ids sort in the order
/// the shots were taken, across runs too. Its text form, `20261203T150807Z-4f2a#12`, is
/// what logs, hooks (`SHUTTERPIPE_SHOT_ID`) and JSON carry, and ``init(_:)`` reads back.
public struct ShotID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The run of the pipeline that took the shot.
    public let run: String
    /// The shot's number in its run, from 1.
    public let number: Int

    /// Creates an id.
    public init(run: String, number: Int) {
        self.run = run
        self.number = number
    }

    /// Reads the text form `RUN#NUMBER`; `nil` for anything else.
    public init?(_ text: String) {
        guard let hash = text.lastIndex(of: "#"), hash != text.startIndex,
              let number = Int(text[text.index(after: hash)...]), number > 0 else { return nil }
        self.init(run: String(text[..<hash]), number: number)
    }

    /// `RUN#NUMBER`.
    public var description: String { "\(run)#\(number)" }

    /// A new run's name: the moment in UTC to the second, then four random hex digits,
    /// so that two runs started in the same second differ.
    public static func newRun(at moment: Date = Date()) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: moment)
        let stamp = String(format: "%04d%02d%02dT%02d%02d%02dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
                           parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
        return "\(stamp)-\(String(format: "%04x", UInt16.random(in: 0...UInt16.max)))"
    }

    /// By run, then by number.
    public static func < (lhs: ShotID, rhs: ShotID) -> Bool {
        (lhs.run, lhs.number) < (rhs.run, rhs.number)
    }

    /// Encoded as its text form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = ShotID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a shot id: \(text)"))
        }
        self = id
    }

    /// Encoded as its text form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

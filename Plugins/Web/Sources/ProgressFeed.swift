import Foundation
import ShutterPipeKit
import Synchronization

/// The shots in flight, told to the pages as the terminal's status line shows them:
/// "capturing 2.1 s", "downloading 45 % of 24.0 MB", "storing". Five times a second, while
/// a page listens, the session's shots in flight (``SessionView/shotsInFlight``) are read
/// (never waiting for the coordinator) and a `progress` event goes out when they changed;
/// the answer that ends a shot says how it ended (the cause when it failed).
final class ProgressFeed: Sendable {
    private struct Watch: @unchecked Sendable { let timer: DispatchSourceTimer }  // a dispatch source is safe to cancel from any thread
    private let watch = Mutex<Watch?>(nil)
    /// What was told last, as words (nil before anything was).
    private let last = Mutex<String?>(nil)

    /// Starts reading `shots` for `hub`'s listeners; the running session's own shots only
    /// go to those that may see them.
    func start(_ shots: @escaping @Sendable () -> [ShotInFlight], hub: EventHub, session: String) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "shutterpipe web progress"))
        timer.schedule(deadline: .now() + 0.2, repeating: 0.2, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self, weak hub] in
            guard let self, let hub, hub.count > 0 else { return }
            let now = shots().sorted { $0.number < $1.number }.map(Self.json)
            let words = now.map { $0["words"] as? String ?? "" }.joined(separator: "|")
            let changed = self.last.withLock { last -> Bool in
                defer { last = words }
                return last.map { $0 != words } ?? !now.isEmpty
            }
            guard changed else { return }
            hub.publish("progress") { access in access.admitsLive(session: session) ? ["shots": now] : nil }
        }
        watch.withLock { $0?.timer.cancel(); $0 = Watch(timer: timer) }
        timer.resume()
    }

    func stop() {
        watch.withLock { $0?.timer.cancel(); $0 = nil }
    }

    /// A shot in flight for the page, with the words the status line would show.
    static func json(_ shot: ShotInFlight) -> [String: Any] {
        var words: String
        switch shot.phase {
        case .capturing: words = String(format: "capturing %.1f s", shot.seconds)
        case .downloading:
            if let total = shot.total, total > 0 {
                words = String(format: "downloading %d %% of %.1f MB", Int(Double(shot.bytes) * 100 / Double(total)), Double(total) / 1e6)
            } else {
                words = String(format: "downloading %.1f MB", Double(shot.bytes) / 1e6)
            }
        case .storing: words = "storing"
        @unknown default: words = shot.phase.rawValue
        }
        // Whole tenths of a second: the feed says a change, not every tick.
        return ["number": shot.number, "phase": shot.phase.rawValue, "words": "shot \(shot.number) \(words)",
                "bytes": shot.bytes, "total": shot.total.map { $0 as Any } ?? NSNull()]
    }
}

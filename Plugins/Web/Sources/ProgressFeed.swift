import Foundation
import ShutterPipeKit
import Synchronization

/// The shots in flight, told to the pages as the terminal's status line shows them:
/// "capturing 2.1 s", "downloading 45 % of 24.0 MB", "storing". The session's shots in
/// flight (``SessionView/shotsInFlight``) are read (never waiting for the coordinator) at
/// once when they change (``SessionView/observeShotsInFlight``: a phase, an early
/// preview) and five times a second while a page listens, and a `progress` event goes
/// out when what it says changed; the answer that ends a shot says how it ended.
///
/// A shot's early preview (the camera's thumbnail, before its file is whole) is kept
/// here while the shot is in flight and served at `/api/inflight/N/preview.jpg`; the
/// event names it, so a page paints it as the shot's placeholder.
final class ProgressFeed: Sendable {
    private struct Watch: @unchecked Sendable { let timer: DispatchSourceTimer }  // a dispatch source is safe to cancel from any thread
    private let watch = Mutex<Watch?>(nil)
    /// What was told last, as words (nil before anything was).
    private let last = Mutex<String?>(nil)
    /// The early previews of the shots in flight, by shot number.
    private let previews = Mutex<[Int: EarlyPreview]>([:])
    /// Sharp previews made here from shots' bytes before their files landed, by number.
    private let sharp = Mutex<[Int: Data]>([:])
    /// Tells the pages now (set at the start).
    private let tellNow = Mutex<(@Sendable () -> Void)?>(nil)
    /// Where the reads happen, one at a time.
    private let queue = DispatchQueue(label: "shutterpipe web progress")

    /// Starts reading `session`'s shots in flight for `hub`'s listeners; the running
    /// session's own shots only go to those that may see them.
    func start(_ session: SessionView, hub: EventHub, name: String) {
        let shots = session.shotsInFlight
        let tell: @Sendable () -> Void = { [weak self, weak hub] in
            guard let self, let hub else { return }
            var now = shots().sorted { $0.number < $1.number }
            let numbers = Set(now.map(\.number))
            // A sharp preview made from the bytes takes the camera's thumbnail's place.
            let sharp = self.sharp.withLock { sharp in
                sharp = sharp.filter { numbers.contains($0.key) }
                return sharp
            }
            for index in now.indices {
                if let data = sharp[now[index].number] {
                    now[index].preview = EarlyPreview(file: now[index].preview?.file ?? "", camera: now[index].preview?.camera, jpeg: data, source: "preview")
                }
            }
            self.previews.withLock { kept in
                // A stored shot's page may still show its early preview: the last few stay.
                for shot in now { if let preview = shot.preview { kept[shot.number] = preview } }
                if kept.count > Self.kept { for number in kept.keys.sorted().prefix(kept.count - Self.kept) { kept[number] = nil } }
            }
            guard hub.count > 0 else { return }
            let told = now.map(Self.json)
            let words = told.map { ($0["words"] as? String ?? "") + ($0["preview"] as? String ?? "") }.joined(separator: "|")
            let changed = self.last.withLock { last -> Bool in
                defer { last = words }
                return last.map { $0 != words } ?? !told.isEmpty
            }
            guard changed else { return }
            hub.publish("progress") { access in access.admitsLive(session: name) ? ["shots": told] : nil }
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 0.2, repeating: 0.2, leeway: .milliseconds(20))
        timer.setEventHandler(handler: tell)
        watch.withLock { $0?.timer.cancel(); $0 = Watch(timer: timer) }
        session.observeShotsInFlight { [queue] in queue.async(execute: tell) }
        tellNow.withLock { [queue] in $0 = { queue.async(execute: tell) } }
        timer.resume()
    }

    /// Shot `number`'s preview, made from its bytes while the sinks store them: shown in
    /// its thumbnail's place until the stored photo's comes.
    func sharpPreview(_ data: Data, of number: Int) {
        sharp.withLock { $0[number] = data }
        tellNow.withLock { $0 }?()
    }

    /// How many shots' early previews are kept (the latest ones).
    static let kept = 8

    /// The early preview of shot `number`, while it is in flight and a little after.
    func preview(of number: Int) -> EarlyPreview? {
        previews.withLock { $0[number] }
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
        var object: [String: Any] = ["number": shot.number, "phase": shot.phase.rawValue, "words": "shot \(shot.number) \(words)",
                                     "bytes": shot.bytes, "total": shot.total.map { $0 as Any } ?? NSNull()]
        if let preview = shot.preview {
            // Its size in the address: a later preview of the same shot is another picture.
            object["preview"] = "/api/inflight/\(shot.number)/preview.jpg?v=\(preview.jpeg.count)"
            object["previewSource"] = preview.source
            object["previewCamera"] = preview.camera.map { $0 as Any } ?? NSNull()
        }
        return object
    }
}

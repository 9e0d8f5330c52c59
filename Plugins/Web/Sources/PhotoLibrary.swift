import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import Synchronization

/// The recent photos the page and `/api/photos` show, by id: the shot's number in this
/// run (its ``ShotID``'s; the coordinator counts shots, not we), never a path (routes take
/// ids only). A failure before the camera fired has no id. Bounded: the oldest go first.
final class PhotoLibrary: Sendable {
    struct Entry: Sendable {
        var id: Int?
        var shot: ShotID?
        var state: ShutterState
        var time: Date
        var paths: [String]
        /// The camera of each path (its frame), `nil` for a session's only camera.
        var cameras: [String?] = []
        var cause: FailureCause?
        var message: String?
        var trigger: String
    }

    /// What the session looks like from its answers.
    struct Summary: Sendable {
        var inPhotoMode = false
        var stored = 0
        var failed = 0
        var latest: Entry?
    }

    private let keeping: Int
    /// The entries, the summary, and the handles of the answers recorded last (held, so
    /// that no new handle can take an old one's place), so that an answer is recorded once
    /// whether the request that waits for it or the session's observer records it first.
    private let state = Mutex<(entries: [Entry], summary: Summary, recorded: [PendingAnswer])>(([], Summary(), []))

    init(keeping: Int) {
        self.keeping = keeping
    }

    /// Notes an answer once: `first` is false when it was already recorded (it came with a
    /// handle seen before). `entry` is its entry when it is a shot (a success or a failed
    /// photo).
    func record(_ answer: ShutterAnswer, trigger: String) -> (entry: Entry?, first: Bool) {
        state.withLock { state -> (entry: Entry?, first: Bool) in
            if let handle = answer.request.pendingAnswer {
                if state.recorded.contains(handle) {
                    return (answer.shot.flatMap { shot in state.entries.last { $0.shot == shot } }, false)
                }
                state.recorded.append(handle)
                if state.recorded.count > 256 { state.recorded.removeFirst() }
            }
            return (Self.note(answer, trigger: trigger, in: &state.entries, &state.summary, keeping: keeping), true)
        }
    }

    private static func note(_ answer: ShutterAnswer, trigger: String, in entries: inout [Entry], _ summary: inout Summary, keeping: Int) -> Entry? {
        switch answer.state {
        case .enteredPhotoMode: summary.inPhotoMode = true
        case .exitedOrUnableToEnter: summary.inPhotoMode = false
        case .photoSuccess: summary.inPhotoMode = true
        case .photoFailed: if answer.failure?.cause == .notInPhotoMode { summary.inPhotoMode = false }
        @unknown default: break  // a newer contract's state: it says nothing this page knows
        }
        guard answer.state == .photoSuccess || answer.state == .photoFailed, answer.failure?.cause != .busy else { return nil }
        if answer.state == .photoSuccess { summary.stored += 1 } else { summary.failed += 1 }
        let entry = Entry(id: answer.shot?.number, shot: answer.shot, state: answer.state, time: Date(), paths: answer.stored.map(\.location),
                          cameras: answer.stored.map(\.camera), cause: answer.failure?.cause, message: answer.failure?.message, trigger: trigger)
        entries.append(entry)
        if entries.count > keeping { entries.removeFirst(entries.count - keeping) }
        summary.latest = entry
        return entry
    }

    /// Newest first.
    var entries: [Entry] { state.withLock { $0.entries.reversed() } }

    var summary: Summary { state.withLock { $0.summary } }

    func entry(_ id: Int) -> Entry? {
        state.withLock { state in state.entries.first { $0.id == id } }
    }

    /// The newest photo that has a file.
    var latestWithFile: Entry? {
        state.withLock { state in state.entries.last { !$0.paths.isEmpty } }
    }
}

/// The JSON the routes and the event stream send.
enum WebJSON {
    /// An answer for the page; a viewer's has no paths and no message (they name the
    /// studio's folders).
    static func answer(_ answer: ShutterAnswer, trigger: String, photo: Int?, for access: WebAccess = .operatorAccess) -> [String: Any] {
        var object: [String: Any] = ["state": answer.state.rawValue, "event": answer.request.event.rawValue, "trigger": trigger,
                                     "paths": access.isViewer ? [] : answer.stored.map(\.location)]
        if let failure = answer.failure {
            object["cause"] = failure.cause.rawValue
            if !access.isViewer {
                object["message"] = failure.message
                if let fix = failure.fix { object["fix"] = fix }
            }
        }
        if let photo { object["photo"] = photo }
        // Where it came from: a sequence's frame ("sequence stack frame 3/9"), the camera's
        // button, a client. A viewer sees only a sequence's progress: other origins name
        // the machine's devices and clients (a scanner's /dev/input path, an address).
        if let origin = answer.request.origin, !access.isViewer || origin.hasPrefix("sequence ") { object["origin"] = origin }
        if !answer.warnings.isEmpty { object["warnings"] = answer.warnings }
        return object
    }

    /// A recent photo for the page, with a frame per camera (its preview); a viewer's has
    /// no paths and no message.
    static func photo(_ entry: PhotoLibrary.Entry, for access: WebAccess) -> [String: Any] {
        let cameras = entry.frameCameras
        let frames = cameras.map { camera -> [String: Any] in
            var query = cameras.count > 1 ? "frame=" + (camera ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics)! : ""
            if access.isViewer { query += (query.isEmpty ? "" : "&") + "as=viewer" }
            let preview = entry.id.flatMap { id in PreviewMaker.previewSource(entry.paths(of: camera)).map { _ in "/api/photos/\(id)/preview.jpg" + (query.isEmpty ? "" : "?" + query) } }
            return ["camera": camera ?? NSNull(), "preview": preview ?? NSNull(), "query": query]
        }
        var object: [String: Any] = ["id": entry.id ?? NSNull(), "shotID": entry.shot?.description ?? NSNull(), "state": entry.state.rawValue, "time": entry.time.formatted(.iso8601),
                                     "paths": access.isViewer ? [] : entry.paths, "trigger": entry.trigger, "frames": frames,
                                     "preview": frames.first?["preview"] ?? NSNull()]
        if let cause = entry.cause { object["cause"] = cause.rawValue }
        if let message = entry.message, !access.isViewer { object["message"] = message }
        return object
    }
}

extension PhotoLibrary.Entry {
    /// The cameras of its photo files, in order: a frame each (one `nil` for a session's
    /// only camera, or a shot without files).
    var frameCameras: [String?] {
        var cameras: [String?] = []
        for (index, path) in paths.enumerated() where PhotoFormat(path) != nil {
            let camera = index < self.cameras.count ? self.cameras[index] : nil
            if !cameras.contains(camera) { cameras.append(camera) }
        }
        return cameras.isEmpty ? [nil] : cameras
    }

    /// The paths of `camera`'s frame.
    func paths(of camera: String?) -> [String] {
        guard frameCameras.count > 1 else { return paths }
        return paths.enumerated().filter { index, _ in (index < cameras.count ? cameras[index] : nil) == camera }.map(\.element)
    }
}

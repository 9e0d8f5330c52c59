import Foundation
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
    private let state = Mutex<(entries: [Entry], summary: Summary)>(([], Summary()))

    init(keeping: Int) {
        self.keeping = keeping
    }

    /// Notes an answer; returns its entry when it is a shot (a success or a failed photo).
    func record(_ answer: ShutterAnswer, trigger: String) -> Entry? {
        state.withLock { state -> Entry? in
            switch answer.state {
            case .enteredPhotoMode: state.summary.inPhotoMode = true
            case .exitedOrUnableToEnter: state.summary.inPhotoMode = false
            case .photoSuccess: state.summary.inPhotoMode = true
            case .photoFailed: if answer.failure?.cause == .notInPhotoMode { state.summary.inPhotoMode = false }
            }
            guard answer.state == .photoSuccess || answer.state == .photoFailed, answer.failure?.cause != .busy else { return nil }
            if answer.state == .photoSuccess { state.summary.stored += 1 } else { state.summary.failed += 1 }
            let entry = Entry(id: answer.shot?.number, shot: answer.shot, state: answer.state, time: Date(), paths: answer.stored.map(\.location),
                              cause: answer.failure?.cause, message: answer.failure?.message, trigger: trigger)
            state.entries.append(entry)
            if state.entries.count > keeping { state.entries.removeFirst(state.entries.count - keeping) }
            state.summary.latest = entry
            return entry
        }
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
    static func answer(_ answer: ShutterAnswer, trigger: String, photo: Int?) -> [String: Any] {
        var object: [String: Any] = ["state": answer.state.rawValue, "event": answer.request.event.rawValue, "trigger": trigger,
                                     "paths": answer.stored.map(\.location)]
        if let failure = answer.failure {
            object["cause"] = failure.cause.rawValue
            object["message"] = failure.message
            if let fix = failure.fix { object["fix"] = fix }
        }
        if let photo { object["photo"] = photo }
        if !answer.warnings.isEmpty { object["warnings"] = answer.warnings }
        return object
    }

    static func photo(_ entry: PhotoLibrary.Entry) -> [String: Any] {
        var object: [String: Any] = ["id": entry.id ?? NSNull(), "shotID": entry.shot?.description ?? NSNull(), "state": entry.state.rawValue, "time": entry.time.formatted(.iso8601),
                                     "paths": entry.paths, "trigger": entry.trigger,
                                     "preview": entry.id.flatMap { id in PreviewMaker.previewSource(entry.paths).map { _ in "/api/photos/\(id)/preview.jpg" } } ?? NSNull()]
        if let cause = entry.cause { object["cause"] = cause.rawValue }
        if let message = entry.message { object["message"] = message }
        return object
    }
}

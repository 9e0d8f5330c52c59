import ShutterPipeKit
import ShutterPipeSupport

/// What storing one photo in every sink came to.
struct StoreOutcome: Sendable {
    /// What every sink stored of the photo, in sink order.
    var files: [StoredFile] = []
    /// The sinks' own files the photo was written into (``SinkReceipt/records``).
    var records: [StoredFile] = []
    /// What sinks said that did not stop the photo being stored.
    var warnings: [String] = []
    /// The first failure, if any sink failed.
    var failure: ShutterError?
    /// Whether the photo is archived: no sink failed, and every archival sink (there is
    /// at least one) stored every file of it. Only then may the camera's copy go (rule 12).
    var archived = false
}

/// The sinks of a pipeline, in config order, and how a photo goes through them (rules 5
/// and 12): every sink gets it, even after one failed; an archival sink's receipt must
/// list every file of the photo; then, once the answer is out, the backend learns whether
/// the photo is archived (``finish(_:archived:)``).
struct SinkChain: Sendable {
    let sinks: [NamedSink]
    let backend: any CaptureBackend
    let settings: CoordinatorSettings
    let log: Logger

    /// Whether any sink keeps the photos' bytes. Without one, every shot stays on the
    /// camera's card.
    var archives: Bool { sinks.contains { $0.sink.role == .archival } }

    /// Hands `photo` to every sink; the outcome says whether it is archived.
    func store(_ photo: CapturedPhoto, context: ShotContext) async -> StoreOutcome {
        var outcome = StoreOutcome()
        var context = context
        var archivedByAll = archives
        for named in sinks {
            let sink = named.sink
            context.storedSoFar = outcome.files
            let shot = context
            do {
                let receipt = try await withDeadline(settings.storeTimeout, "sink '\(named.name)'") {
                    try await sink.store(photo, context: shot)
                }
                outcome.files += receipt.files
                outcome.records += receipt.records
                outcome.warnings += receipt.warnings
                if sink.role == .archival {
                    let missing = receipt.filesMissing(from: photo)
                    if !missing.isEmpty {
                        throw ShutterError(.unexpected, "sink '\(named.name)' keeps photos but did not report storing \(missing.joined(separator: ", "))",
                                           fix: "the photo stays on the camera; report this to the sink's author")
                    }
                }
            } catch {
                let error = ShutterError.wrapping(error)
                log.error("sink '\(named.name)' failed for shot #\(context.shotNumber): \(error)")
                if outcome.failure == nil { outcome.failure = error }
                if sink.role == .archival { archivedByAll = false }
            }
        }
        outcome.archived = archivedByAll && outcome.failure == nil
        return outcome
    }

    /// Tells the backend whether `photo` is archived, so it may delete the camera's copy.
    /// Called after the answer: deleting never delays it (in a burst, a camera runs the
    /// delete after the next capture, which can take seconds).
    func finish(_ photo: CapturedPhoto, archived: Bool, by owner: (any CaptureBackend)? = nil) async {
        let backend = owner ?? self.backend
        do {
            try await withDeadline(settings.finishTimeout, "the backend finishing with the photo") {
                await backend.finish(photo, stored: archived)
            }
        } catch {
            log.warning("\(ShutterError.wrapping(error)); the photo stays on the camera")
        }
    }
}

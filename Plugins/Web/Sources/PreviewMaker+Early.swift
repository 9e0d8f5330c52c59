#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport

/// Previews made from a shot's bytes before its file lands (issue 43): decoded as soon as
/// the backend hands the photo over, shown in the shot's place while the sinks store it,
/// and adopted as the stored file's preview so that it is decoded once.
extension PreviewMaker {
    /// Starts making the preview of shot `shot`'s JPEG from its bytes (the camera's, as the
    /// backend handed them over, before the sinks store them), on a thread of its own;
    /// `made` hears it. One at a time: in a burst a shot whose bytes come while another is
    /// being made is skipped (its preview is made from its file, as before).
    ///
    /// With `waitingFirst`, for a backend that makes the preview itself as the bytes come
    /// (``CapturedFile/previewFollows``), the job waits that long for it (``offerSharp``)
    /// and decodes only if none came: two decodes of one photo at once took the cores
    /// from each other, and the sharp preview came later than from one.
    func prepareEarly(_ jpeg: Data, shot: Int, waitingFirst: Duration = .zero, made: @escaping @Sendable (Data) -> Void) {
        let job = ImageJob<Data>()
        let start = state.withLock { state -> Bool in
            guard state.earlyJob == nil else { return false }
            state.earlyJob = (shot, job)
            return true
        }
        guard start else { return }
        OwnedThread.start("shutterpipe web early preview") { [self] in
            // At the sinks' own level (nice 10): the photo's store and the answer that says
            // it is durable take their share beside it; lower, a busy machine starved it
            // for a minute while the page's request for the stored photo's preview waited.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            if waitingFirst > .zero, case .success(let given)? = job.result(within: waitingFirst) {
                // The backend's came (``offerSharp`` kept it): nothing to decode.
                state.withLock { state in
                    state.earlyJob = nil
                    if let key = state.earlyKeys.removeValue(forKey: shot) { state.making[key] = nil }
                }
                log.debug("preview of shot \(shot): the backend's, as it said it would send one; not decoded here")
                return made(given)
            }
            let started = ContinuousClock.now
            let result = Result { () throws(ShutterError) -> Data in try Self.makeFromJPEG(jpeg, longEdge: longEdge, budget: budget).0 }
            let adoptedAs = state.withLock { state -> String? in
                state.earlyJob = nil
                guard case .success(let preview) = result else { return nil }
                if let key = state.earlyKeys.removeValue(forKey: shot) {
                    // Stored meanwhile: it is that file's preview now.
                    state.making[key] = nil
                    state.keep(key, preview)
                    return key
                }
                state.early.append((shot, preview))
                if state.early.count > 4 { state.early.removeFirst(state.early.count - 4) }
                return nil
            }
            job.finish(result)
            guard case .success(let preview) = result else { return }
            if let adoptedAs { disk.withLock { $0 }?.write(preview, key: adoptedAs, longEdge: longEdge) }
            log.debug("preview of shot \(shot) made from its bytes before they were stored, in \(formatDuration(ContinuousClock.now - started))",
                      [("earlyPreviewMs", String(format: "%.2f", (ContinuousClock.now - started) / .milliseconds(1)))])
            made(preview)
        }
    }

    /// Shot `shot` is stored at `path` (its JPEG): the preview made from its bytes becomes
    /// that file's, so it is not decoded again; one still being made is waited for by
    /// whoever asks for the file's preview. Returns whether there was one.
    @discardableResult
    func adoptEarly(shot: Int, as path: String) -> Bool {
        let key = Self.key(path) + "|upright"
        let (adopted, made) = state.withLock { state -> (Bool, Data?) in
            state.storedKeys.append((shot, key))
            if state.storedKeys.count > 8 { state.storedKeys.removeFirst(state.storedKeys.count - 8) }
            if let index = state.early.firstIndex(where: { $0.shot == shot }) {
                let data = state.early.remove(at: index).data
                state.keep(key, data)
                return (true, data)
            }
            guard let (making, job) = state.earlyJob, making == shot, state.making[key] == nil else { return (false, nil) }
            state.earlyKeys[shot] = key
            state.making[key] = job
            return (true, nil)
        }
        if let made { disk.withLock { $0 }?.write(made, key: key, longEdge: longEdge) }
        return adopted
    }
}

extension PreviewMaker {
    /// A sharp preview of shot `shot` made elsewhere: the camera worker decodes a JPEG as
    /// its bytes come off the wire and sends its preview a few milliseconds after the last
    /// byte, often once the shot was stored and answered. It becomes the shot's preview:
    /// whoever waits for the one being made (from the bytes, or from the stored file) gets
    /// it now, and the stored file's preview is this one. One that is not a JPEG of a
    /// preview's size (at least 1000 px, at most twice the page's long edge) is not taken.
    func offerSharp(_ preview: Data, shot: Int) {
        guard let size = JPEGDecoder.dimensions(preview), max(size.width, size.height) >= min(longEdge, 1000),
              max(size.width, size.height) <= 2 * longEdge else { return }
        let (finishing, storedAs) = state.withLock { state -> ([ImageJob<Data>], String?) in
            var finishing: [ImageJob<Data>] = []
            if let (making, job) = state.earlyJob, making == shot { finishing.append(job) }
            guard let key = state.earlyKeys.removeValue(forKey: shot) ?? state.storedKeys.last(where: { $0.shot == shot })?.key else {
                // Not stored yet: the stored file adopts it (``adoptEarly``).
                state.early.removeAll { $0.shot == shot }
                state.early.append((shot, preview))
                if state.early.count > 4 { state.early.removeFirst(state.early.count - 4) }
                return (finishing, nil)
            }
            if let job = state.making.removeValue(forKey: key) { finishing.append(job) }
            state.keep(key, preview)
            return (finishing, key)
        }
        for job in finishing { job.finish(.success(preview)) }
        if let storedAs { disk.withLock { $0 }?.write(preview, key: storedAs, longEdge: longEdge) }
        log.debug("preview of shot \(shot) taken from the backend (decoded as its bytes came)\(storedAs == nil ? "" : ", after it was stored")")
    }
}

extension PreviewMaker.State {
    /// Keeps a preview in memory under `key`, the oldest going first.
    mutating func keep(_ key: String, _ data: Data) {
        guard !cache.contains(where: { $0.key == key }) else { return }
        cache.append((key, data))
        if cache.count > PreviewMaker.cacheSize { cache.removeFirst(cache.count - PreviewMaker.cacheSize) }
    }
}

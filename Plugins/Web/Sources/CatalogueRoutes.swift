import Dispatch
import Foundation
import ShutterPipeKit
import Synchronization

/// The routes over the session's catalogue (``ShotCatalogue``): every shot it holds, by
/// its catalogue id, across restarts, not only the recent ones the page keeps.
///
/// - `GET /api/shots?limit=100&rating=>=3&label=Red&picked=1&rejected=1&failed=1&camera=A&session=S`:
///   shots, newest first.
/// - `GET /api/shots/ID`: one shot. `GET /api/shots/ID/preview.jpg`: its preview.
/// - `GET /api/shots/ID/full.jpg`: the shot at full size, upright (``FullSizeImage``):
///   from its JPEG, HEIF or TIFF, else its RAW; `?from=raw` takes the RAW of a RAW+JPEG
///   pair (100 % of the sensor's own pixels).
///
/// File names are given without their folders. A session without a catalogue answers 404
/// with the fix.
struct CatalogueRoutes: Sendable {
    let trigger: WebTrigger

    func answer(_ request: HTTPRequest) -> HTTPResponse? {
        let path = request.path
        guard path == "/api/shots" || path.hasPrefix("/api/shots/") else { return nil }
        guard request.method == "GET" else { return .error(405, "\(request.method) is not allowed on \(path)") }
        guard let catalogue = trigger.catalogue else {
            return .error(404, "this session keeps no catalogue", fix: "remove 'catalogue: off' from the config; /api/photos lists the recent shots")
        }
        if path == "/api/shots" { return list(request, catalogue) }
        var rest = path.dropFirst("/api/shots/".count)
        var image: String?
        for suffix in ["/preview.jpg", "/full.jpg"] where rest.hasSuffix(suffix) {
            image = suffix
            rest = rest.dropLast(suffix.count)
        }
        guard let id = Int(rest), id > 0 else {
            return .error(404, "no such route: \(path)", fix: "shots are /api/shots/ID, /api/shots/ID/preview.jpg and /api/shots/ID/full.jpg, with ID from /api/shots")
        }
        let found: CatalogueShot?
        switch WebTrigger.blocking({ try await catalogue.shot(id) }) {
        case .success(let shot): found = shot
        case .failure(let error): return .error(503, error.message, fix: error.fix)
        }
        guard let shot = found else { return .error(404, "no shot \(id) in the catalogue", fix: "/api/shots lists the ids") }
        guard let image else { return .json(Self.json(shot)) }
        let paths = shot.files.filter { !$0.missing }.map(\.path)
        let fromRAW = image == "/full.jpg" && request.query["from"] == "raw"
        guard let source = fromRAW ? paths.first(where: { PhotoFormat($0) == .raw }) : PreviewMaker.previewSource(paths) else {
            return .error(404, "shot \(id) has no \(fromRAW ? "RAW" : "JPEG, HEIF, TIFF or RAW") file on disk to show")
        }
        do {
            let data = image == "/full.jpg" ? try trigger.previews.fullSize(of: source) : try trigger.previews.preview(of: source)
            return HTTPResponse(status: 200, contentType: "image/jpeg", headers: [("Cache-Control", "max-age=3600")], body: .bytes(data))
        } catch {
            return .error(500, error.message, fix: error.fix)
        }
    }

    private func list(_ request: HTTPRequest, _ catalogue: any ShotCatalogue) -> HTTPResponse {
        var filter = ShotFilter()
        let query = request.query
        filter.limit = min(1000, max(1, query["limit"].flatMap { Int($0) } ?? 100))
        if let rating = query["rating"] {
            guard let parsed = ShotFilter.parseRating(rating) else { return .error(400, "rating '\(rating)' is not 3, >=3, <2 or -1") }
            filter.rating = parsed
        }
        filter.label = query["label"].flatMap { ShotMarkChange.labelName($0) }
        filter.camera = query["camera"]
        filter.session = query["session"]
        filter.keyword = query["keyword"]
        filter.pickedOnly = query["picked"] == "1"
        filter.rejectedOnly = query["rejected"] == "1"
        filter.failedOnly = query["failed"] == "1"
        let selection = filter
        switch WebTrigger.blocking({ try await catalogue.shots(selection) }) {
        case .success(let shots): return .json(["shots": shots.map(Self.json)])
        case .failure(let error): return .error(503, error.message, fix: error.fix)
        }
    }

    /// A shot for the page: marks, EXIF summary, file names (never folders), its preview.
    static func json(_ shot: CatalogueShot) -> [String: Any] {
        let iso = ISO8601DateFormatter()
        var object: [String: Any] = [
            "id": shot.id, "state": shot.state.rawValue, "rating": shot.rating, "keywords": shot.keywords,
            "files": shot.files.map { file -> [String: Any] in
                ["name": (file.path as NSString).lastPathComponent, "kind": file.kind.rawValue, "size": file.size, "missing": file.missing]
            },
        ]
        let optional: [String: Any?] = [
            "shotID": shot.shotID?.description, "session": shot.session, "camera": shot.camera, "trigger": shot.trigger,
            "time": shot.moment.map(iso.string), "label": shot.label, "pick": shot.pick.word, "cause": shot.failureCause,
            "message": shot.failureMessage, "exposureTime": shot.exif.exposureTime, "aperture": shot.exif.aperture, "iso": shot.exif.iso,
            "focalLength": shot.exif.focalLength, "lens": shot.exif.lens, "model": shot.exif.model, "taken": shot.exif.captureTime,
        ]
        for (key, value) in optional { object[key] = value ?? NSNull() }
        let onDisk = shot.files.filter { !$0.missing }.map(\.path)
        let shown = PreviewMaker.previewSource(onDisk) != nil
        object["preview"] = shown ? "/api/shots/\(shot.id)/preview.jpg" : NSNull()
        object["full"] = shown ? "/api/shots/\(shot.id)/full.jpg" : NSNull()
        return object
    }
}

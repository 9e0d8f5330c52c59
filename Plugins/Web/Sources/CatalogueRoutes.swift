import Dispatch
import Foundation
import ShutterPipeImaging
import ShutterPipeKit
import ShutterPipeSupport
import Synchronization

/// The routes over the session's catalogue (``ShotCatalogue``): every shot it holds, by
/// its catalogue id, across restarts, not only the recent ones the page keeps.
///
/// - `GET /api/shots?limit=100&offset=0&rating=>=3&label=Red&picked=1&rejected=1&failed=1&camera=A&session=S`:
///   shots, newest first, and how many the filter selects in all (`total`).
/// - `GET /api/shots/ID`: one shot, with its frames (a camera's files and marks each).
///   `GET /api/shots/ID/preview.jpg`: its preview.
/// - `GET /api/shots/ID/full.jpg`: the shot at full size, upright (``FullSizeImage``):
///   from its JPEG, HEIF or TIFF, else its RAW; `?from=raw` takes the RAW of a RAW+JPEG
///   pair (100 % of the sensor's own pixels).
/// - Every image route takes `?frame=CAMERA`: that camera's frame of a shot of several
///   (without it, the first frame's); never another camera's file.
/// - `GET /api/shots/ID/image.json` and `/tiles/COLUMN-ROW.png`: the full-size image's
///   size, and lossless tiles of it (``FullImageCache``): the page's 100 % view.
/// - `GET /api/shots/ID/histogram.json`: the preview's histogram (``Histogram``).
/// - `POST /api/marks`: ratings, labels, picks (``ShotMarksRoute``).
///
/// File names are given without their folders. A session without a catalogue answers 404
/// with the fix.
struct CatalogueRoutes: Sendable {
    let trigger: WebTrigger
    /// What the request may see: a viewer only the shots of its scope, and the originals
    /// only where they were shared (``WebAccess``).
    var access: WebAccess = .operatorAccess

    func answer(_ request: HTTPRequest) -> HTTPResponse? {
        let path = request.path
        guard path == "/api/shots" || path.hasPrefix("/api/shots/") || path == "/api/marks" else { return nil }
        let method = path == "/api/marks" ? "POST" : "GET"
        guard request.method == method else { return .error(405, "\(request.method) is not allowed on \(path)") }
        guard let catalogue = trigger.catalogue else {
            return .error(404, "this session keeps no catalogue", fix: "remove 'catalogue: off' from the config; /api/photos lists the recent shots")
        }
        if path == "/api/marks" { return ShotMarksRoute(trigger: trigger, access: access).answer(request, catalogue) }
        if path == "/api/shots" { return list(request, catalogue) }
        let rest = path.dropFirst("/api/shots/".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let what = String(rest[slash...])
        guard let id = Int(rest[..<slash]), id > 0 else {
            return .error(404, "no such route: \(path)", fix: "shots are /api/shots/ID, /api/shots/ID/preview.jpg and /api/shots/ID/full.jpg, with ID from /api/shots")
        }
        let found: CatalogueShot?
        switch WebTrigger.blocking({ try await catalogue.shot(id) }) {
        case .success(let shot): found = shot
        case .failure(let error): return .error(503, error.message, fix: error.fix)
        }
        // A shot outside a viewer's scope does not exist for it.
        guard let shot = found, access.admits(shot) else { return .error(404, "no shot \(id) in the catalogue", fix: "/api/shots lists the ids") }
        if what.isEmpty { return .json(Self.json(shot, for: access)) }
        // The frame asked for, else the first: a RAW or a full size is always the shown
        // frame's own, never another camera's.
        let frame: CatalogueFrame
        if let name = request.query["frame"] {
            guard let found = shot.frames.first(where: { ($0.camera ?? "") == name }) else {
                return .error(404, "shot \(id) has no frame of camera '\(LogText.escaped(name))'", fix: "its frames are in /api/shots/\(id)")
            }
            frame = found
        } else {
            frame = shot.frames.first ?? CatalogueFrame(camera: nil)
        }
        let paths = (shot.frames.count > 1 ? shot.files(of: frame.camera) : shot.files).filter { !$0.missing }.map(\.path)
        let fromRAW = request.query["from"] == "raw"
        let original = fromRAW || what == "/full.jpg" || what == "/image.json" || what.hasPrefix("/tiles/")
        if original && !access.originals {
            return .error(403, "the operator has not shared the originals of these shots: previews only",
                          fix: "ask the operator (the web trigger's viewerOriginals, or a share with the originals)")
        }
        guard let source = fromRAW ? paths.first(where: { PhotoFormat($0) == .raw }) : PreviewMaker.previewSource(paths) else {
            return .error(404, "shot \(id) has no \(fromRAW ? "RAW" : "JPEG, HEIF, TIFF or RAW") file on disk to show")
        }
        do {
            switch what {
            case "/preview.jpg":
                let preview = try trigger.previews.preview(of: source)
                // The shot is on screen: its 100 % view is decoded ahead (a JPEG's), for a
                // page that may look at it (a viewer without the originals cannot).
                if access.originals { trigger.fullImages.decodeAhead(source) }
                return .image(preview, type: "image/jpeg")
            case "/thumbnail.jpg":
                return .image(try trigger.previews.thumbnail(of: source), type: "image/jpeg")
            case "/full.jpg":
                return .image(try trigger.previews.fullSize(of: source), type: "image/jpeg")
            case "/image.json":
                let image = try trigger.fullImages.dimensions(of: source)
                return .json(["width": image.width, "height": image.height, "tileSize": FullImageCache.tileSize, "from": fromRAW ? "raw" : "photo"])
            case "/histogram.json":
                return .json(try Histogram(jpeg: trigger.previews.preview(of: source)).json)
            case _ where what.hasPrefix("/tiles/") && what.hasSuffix(".png"):
                let name = what.dropFirst("/tiles/".count).dropLast(".png".count).split(separator: "-", omittingEmptySubsequences: false)
                guard name.count == 2, let column = Int(name[0]), let row = Int(name[1]) else {
                    return .error(404, "no such tile: \(what)", fix: "tiles are /api/shots/ID/tiles/COLUMN-ROW.png, of tileSize pixels, as /api/shots/ID/image.json gives")
                }
                guard let tile = try trigger.fullImages.tile(of: source, column: column, row: row) else {
                    return .error(404, "tile \(column)-\(row) is outside shot \(id)'s image", fix: "/api/shots/\(id)/image.json gives its size")
                }
                return .image(tile, type: "image/png")
            default:
                return .error(404, "no such route: \(path)", fix: "a shot has /preview.jpg, /thumbnail.jpg, /full.jpg, /image.json, /tiles/COLUMN-ROW.png and /histogram.json")
            }
        } catch {
            trigger.warnOnce("web: shot \(id)'s \(what.dropFirst()) refused: \(LogText.escaped(error.message))")
            return .error(500, error.message, fix: error.fix)
        }
    }

    private func list(_ request: HTTPRequest, _ catalogue: any ShotCatalogue) -> HTTPResponse {
        var filter = ShotFilter()
        let query = request.query
        filter.limit = min(1000, max(1, query["limit"].flatMap { Int($0) } ?? 100))
        filter.offset = max(0, query["offset"].flatMap { Int($0) } ?? 0)
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
        filter.collapseSequences = query["collapse"] == "sequences"
        guard let narrowed = access.narrowed(filter) else { return .json(["shots": [Any](), "total": 0, "offset": filter.offset ?? 0]) }
        if case .shots(let ids) = access.scope { return listChosen(ids, narrowed, catalogue) }
        let selection = narrowed
        let access = self.access
        switch WebTrigger.blocking({ (try await catalogue.shots(selection), try await catalogue.count(selection)) }) {
        case .success(let (shots, total)): return .json(["shots": shots.map { Self.json($0, for: access) }, "total": total, "offset": selection.offset ?? 0])
        case .failure(let error): return .error(503, error.message, fix: error.fix)
        }
    }

    /// The shots of a share of chosen shots, newest first, a page at a time (the filter's
    /// other conditions aside: a selection is what the operator chose to show).
    private func listChosen(_ ids: Set<Int>, _ filter: ShotFilter, _ catalogue: any ShotCatalogue) -> HTTPResponse {
        let ordered = ids.sorted(by: >)
        let page = Array(ordered.dropFirst(filter.offset ?? 0).prefix(filter.limit ?? 100))
        let access = self.access
        switch WebTrigger.blocking({ () async throws -> [CatalogueShot] in
            var found: [CatalogueShot] = []
            for id in page { if let shot = try await catalogue.shot(id) { found.append(shot) } }
            return found
        }) {
        case .success(let shots): return .json(["shots": shots.map { Self.json($0, for: access) }, "total": ordered.count, "offset": filter.offset ?? 0])
        case .failure(let error): return .error(503, error.message, fix: error.fix)
        }
    }

    /// A shot for the page: marks, EXIF summary, file names (never folders), its preview,
    /// and its frames: each camera's files, marks and images (`frames`, one for a shot of
    /// one camera). A viewer's has no copies (where the studio sent them), no failure
    /// message, and no full-size link unless the originals were shared; its links keep
    /// its tab a viewer.
    static func json(_ shot: CatalogueShot, for access: WebAccess = .operatorAccess) -> [String: Any] {
        func file(_ file: CatalogueFile) -> [String: Any] {
            ["name": PathName.lastComponent(file.path), "kind": file.kind.rawValue, "size": file.size, "missing": file.missing,
             "camera": file.camera ?? NSNull(), "copies": access.isViewer ? [] : file.copies.map(\.destination)]
        }
        let several = shot.frames.count > 1
        let frames = (shot.frames.isEmpty ? [CatalogueFrame(camera: nil, rating: shot.rating, label: shot.label, pick: shot.pick)] : shot.frames).map { frame -> [String: Any] in
            let files = several ? shot.files(of: frame.camera) : shot.files
            let onDisk = files.filter { !$0.missing }.map(\.path)
            let source = PreviewMaker.previewSource(onDisk)
            // The query every image route of this frame takes (and a viewer's role).
            var query = several ? "frame=" + (frame.camera ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics)! : ""
            if access.isViewer { query += (query.isEmpty ? "" : "&") + "as=viewer" }
            let suffix = query.isEmpty ? "" : "?" + query
            return ["camera": frame.camera ?? NSNull(), "rating": frame.rating, "label": frame.label ?? NSNull(), "pick": frame.pick.word ?? NSNull(),
                    "files": files.map(file), "query": query,
                    "preview": source != nil ? "/api/shots/\(shot.id)/preview.jpg\(suffix)" : NSNull(),
                    "thumbnail": source != nil ? "/api/shots/\(shot.id)/thumbnail.jpg\(suffix)" : NSNull(),
                    "full": source != nil && access.originals ? "/api/shots/\(shot.id)/full.jpg\(suffix)" : NSNull(),
                    "hasRAW": access.originals && onDisk.contains { PhotoFormat($0) == .raw } && source.map { PhotoFormat($0) != .raw } == true]
        }
        var object: [String: Any] = [
            "id": shot.id, "state": shot.state.rawValue, "rating": shot.rating, "keywords": shot.keywords,
            "files": shot.files.map(file), "frames": frames,
        ]
        let optional: [String: Any?] = [
            "shotID": shot.shotID?.description, "session": shot.session, "sessionRun": shot.sessionRun, "camera": shot.camera, "trigger": shot.trigger,
            "time": shot.moment.map { $0.formatted(.iso8601) }, "label": shot.label, "pick": shot.pick.word, "cause": shot.failureCause,
            "message": shot.failureMessage, "exposureTime": shot.exif.exposureTime, "aperture": shot.exif.aperture, "iso": shot.exif.iso,
            "focalLength": shot.exif.focalLength, "lens": shot.exif.lens, "model": shot.exif.model, "taken": shot.exif.captureTime,
            // A sequence's frame: the page groups the frames of one run.
            "sequence": shot.sequence.map { place -> [String: Any] in
                ["name": place.name, "kind": place.kind, "run": place.run, "index": place.index, "count": place.count,
                 "setting": place.setting ?? NSNull(), "value": place.value ?? NSNull(), "ev": place.ev ?? NSNull()]
            },
        ]
        for (key, value) in optional { object[key] = value ?? NSNull() }
        if access.isViewer { object["message"] = NSNull() }
        // The first frame's images, for pages that know no frames.
        for key in ["preview", "full", "thumbnail", "hasRAW"] { object[key] = frames[0][key] }
        return object
    }
}

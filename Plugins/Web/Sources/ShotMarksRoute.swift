import Foundation
import ShutterPipeKit

/// `POST /api/marks`: ratings, colour labels and picks from the page's keys and buttons.
///
/// The body is `{"marks": [{"id": 12, "rating": 4}, {"id": 12, "label": "Red"},
/// {"id": 13, "pick": "picked", "camera": "B"}]}`: each change goes, in the order given,
/// to the shot's XMP sidecars and then to the catalogue (``ShotCatalogue/mark(_:_:)``);
/// with `camera`, to that camera's frame of the shot alone. The page sends
/// the keys typed while the previous request was under way in one request, so that
/// nothing typed is lost or reordered. Every open page hears each change as a `marked`
/// event, whoever made it. The reply is `{"shots": [...]}`, each shot as it is after its
/// change; a change that fails stops the rest (409, or 400 for a malformed one), with
/// those applied before it named in `applied`.
struct ShotMarksRoute: Sendable {
    let trigger: WebTrigger
    /// A viewer marks only the shots of its scope.
    var access: WebAccess = .operatorAccess

    static let usage = "the body is {\"marks\": [{\"id\": 12, \"rating\": 4}]}: a shot's catalogue id and \"rating\" (0–5), \"label\" (a colour name or \"none\") or \"pick\" (\"picked\", \"rejected\", \"none\"); \"camera\" marks that camera's frame alone"

    func answer(_ request: HTTPRequest, _ catalogue: any ShotCatalogue) -> HTTPResponse {
        guard let object = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
              let marks = object["marks"] as? [[String: Any]], !marks.isEmpty, marks.count <= 1000 else {
            return .error(400, "not a list of marks", fix: Self.usage)
        }
        var parsed: [(Int, String?, [ShotMarkChange])] = []
        for mark in marks {
            guard let id = mark["id"] as? Int, id > 0 else { return .error(400, "a mark without a shot id", fix: Self.usage) }
            let camera = mark["camera"] as? String
            guard mark["camera"] == nil || mark["camera"] is NSNull || camera?.isEmpty == false else {
                return .error(400, "'camera' takes a camera's name", fix: Self.usage)
            }
            var changes: [ShotMarkChange] = []
            if let rating = mark["rating"] {
                guard let value = rating as? Int, (0...5).contains(value) else { return .error(400, "'rating' takes 0 to 5", fix: Self.usage) }
                changes.append(.rating(value))
            }
            if let label = mark["label"] {
                guard label is NSNull || label is String else { return .error(400, "'label' takes a colour name or \"none\"", fix: Self.usage) }
                changes.append(.label((label as? String).flatMap(ShotMarkChange.labelName)))
            }
            if let pick = mark["pick"] {
                guard let value = (pick as? String).flatMap(Pick.init(word:)) else { return .error(400, "'pick' takes picked, rejected or none", fix: Self.usage) }
                changes.append(.pick(value))
            }
            guard !changes.isEmpty else { return .error(400, "mark of shot \(id) changes nothing", fix: Self.usage) }
            parsed.append((id, camera, changes))
        }
        let batch = parsed
        let access = self.access
        switch WebTrigger.blocking(timeout: .seconds(30), { () async -> ([CatalogueShot], ShutterError?) in
            var done: [CatalogueShot] = []
            for (id, camera, changes) in batch {
                do {
                    // Out of a viewer's scope is as good as not there.
                    if access.isViewer, try await catalogue.shot(id).map(access.admits) != true {
                        return (done, ShutterError(.invalidConfiguration, "no shot \(id) in the catalogue", fix: "/api/shots lists the ids"))
                    }
                    done.append(try await camera == nil ? catalogue.mark(id, changes) : catalogue.mark(id, camera: camera, changes))
                } catch { return (done, ShutterError.wrapping(error)) }
            }
            return (done, nil)
        }) {
        case .success(let (shots, nil)):
            return .json(["shots": shots.map { CatalogueRoutes.json($0, for: access) }])
        case .success(let (shots, failure?)):
            var response = HTTPResponse.json(["error": failure.message, "fix": failure.fix.map { $0 as Any } ?? NSNull(), "applied": shots.map { CatalogueRoutes.json($0, for: access) }], status: 409)
            response.headers.append(("Cache-Control", "no-store"))
            return response
        case .failure(let error):
            return .error(503, error.message, fix: error.fix)
        }
    }
}

import Foundation

/// The review screen at `/`: the session's shots in a grid, one large in the loupe (to
/// 100 % and beyond, with its histogram, clipping and exposure), two to four side by side
/// in compare, marked from the keyboard or by touch, and for the operator the shutter and
/// every camera's live view, with framing overlays, focus aids, the lens and settings. It
/// works on a phone and on a 4K screen, offline (no CDN, no build step), and it updates
/// itself from `/events`. Opened as `/#token=…` (or `/?token=…`), it passes the token on.
///
/// The page is plain HTML, CSS and JavaScript in real files under `Sources/Page/`:
/// `index.html`, `page.css`, and the script in parts served as one `/page.js`, in this
/// order: `script.js` (the session and its marks), `grid.js`, `viewer.js` (the loupe and
/// compare), `loupe.js`, `live.js` (live view, overlays, focus aids), `camera-controls.js`
/// (settings, the lens), `start.js` (wires it up). SwiftPM embeds them in the binary at
/// build time (`.embedInCode` in Package.swift: `PackageResources`), so `swift run` and
/// the `.deb` serve them with no file beside the program.
enum WebPage {
    /// The script's parts, in the order they are served.
    static let scriptParts: [[UInt8]] = [
        PackageResources.script_js, PackageResources.grid_js, PackageResources.viewer_js, PackageResources.loupe_js,
        PackageResources.live_js, PackageResources.camera_controls_js, PackageResources.start_js,
    ]

    static let html = Data(PackageResources.index_html)
    static let css = Data(PackageResources.page_css)
    static let script = Data(scriptParts.joined())

    /// The page's files, by path; `nil` for another path.
    static func asset(_ path: String) -> HTTPResponse? {
        let (type, body): (String, Data)
        switch path {
        case "/", "/index.html": (type, body) = ("text/html; charset=utf-8", html)
        case "/page.css": (type, body) = ("text/css; charset=utf-8", css)
        case "/page.js": (type, body) = ("text/javascript; charset=utf-8", script)
        default: return nil
        }
        return HTTPResponse(status: 200, contentType: type, headers: [("Cache-Control", "no-store")], body: .bytes(body))
    }
}

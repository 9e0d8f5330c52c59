import Foundation

/// The review screen at `/`: the session's shots in a grid, one large in the loupe (to
/// 100 % and beyond, with its histogram, clipping and exposure), two to four side by side
/// in compare, marked from the keyboard or by touch, and for the operator the shutter and
/// every camera's live view, with framing overlays, focus aids, the lens and settings. It
/// works on a phone and on a 4K screen, offline (no CDN, no build step), and it updates
/// itself from `/events`. Opened as `/#token=…` (or `/?token=…`), it passes the token on.
///
/// The page is plain HTML, CSS and JavaScript, in these files: the markup here, the style
/// (``WebPageStyle``), and the script: the session and its marks (``WebPageScript``), the
/// grid (``WebPageGrid``), the loupe and compare (``WebPageViewer``), live view with its
/// overlays and focus aids (``WebPageLive``), the camera's settings and lens
/// (``WebPageCameraControls``).
enum WebPage {
    /// The page's files, by path; `nil` for another path.
    static func asset(_ path: String) -> HTTPResponse? {
        let (type, text): (String, String)
        switch path {
        case "/", "/index.html": (type, text) = ("text/html; charset=utf-8", html)
        case "/page.css": (type, text) = ("text/css; charset=utf-8", WebPageStyle.css)
        case "/page.js": (type, text) = ("text/javascript; charset=utf-8", WebPageScript.js + WebPageGrid.js + WebPageViewer.js + WebPageLoupe.js + WebPageLive.js + WebPageCameraControls.js + WebPageScript.start)
        default: return nil
        }
        return HTTPResponse(status: 200, contentType: type, headers: [("Cache-Control", "no-store")], body: .bytes(Data(text.utf8)))
    }

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="referrer" content="no-referrer">
<title>shutterpipe</title>
<link rel="stylesheet" href="/page.css">
</head>
<body data-view="loupe">
<header>
  <b>shutterpipe</b>
  <span id="mode">idle</span>
  <span><span id="stored">0</span> stored · <span id="failed">0</span> failed</span>
  <span id="free"></span>
  <span id="battery"></span>
  <span class="grow"></span>
  <nav id="views">
    <button id="show-grid" title="Grid (G)">Grid</button>
    <button id="show-loupe" title="Loupe (E)">Loupe</button>
    <button id="show-compare" title="Compare (C)">Compare</button>
    <button id="show-live" title="Live view (L)" data-operator hidden>Live</button>
  </nav>
  <button id="share" title="Share with a client" data-operator>Share</button>
  <button id="help" title="Keyboard shortcuts (?)">?</button>
</header>
<div id="filters">
  <label>Rating <select id="filter-rating"><option value="">any</option><option value=">=1">★+</option><option value=">=2">★★+</option><option value=">=3">★★★+</option><option value=">=4">★★★★+</option><option value="5">★★★★★</option><option value="0">unrated</option></select></label>
  <label>Label <select id="filter-label"><option value="">any</option><option>Red</option><option>Yellow</option><option>Green</option><option>Blue</option><option>Purple</option></select></label>
  <label>Pick <select id="filter-pick"><option value="">any</option><option value="picked">picked</option><option value="rejected">rejected</option><option value="failed">failed shots</option></select></label>
  <label>Camera <select id="filter-camera"><option value="">any</option></select></label>
  <label>Session <select id="filter-session"><option value="">any</option></select></label>
  <span id="count"></span>
</div>
<main>
  <section id="grid" tabindex="0" aria-label="every shot, newest first"><div id="grid-space"></div></section>
  <section id="loupe" aria-label="one shot large">
    <div id="loupe-view" class="viewport"></div>
    <aside id="panel">
      <canvas id="histogram" width="256" height="100" aria-label="histogram"></canvas>
      <div class="clip">
        <label><input type="checkbox" id="clip-high"> highlights ≥ <input type="number" id="clip-high-at" min="1" max="255" value="250"></label>
        <label><input type="checkbox" id="clip-low"> shadows ≤ <input type="number" id="clip-low-at" min="0" max="254" value="5"></label>
      </div>
      <dl id="exposure"></dl>
      <div class="zoom"><button id="zoom-fit">Fit</button><button id="zoom-100">100 %</button><button id="zoom-200">200 %</button><button id="pin" title="Pin as the reference to compare with the newest (R)">Pin</button><button id="raw" title="100 % from the RAW of a RAW+JPEG shot (W)" hidden>RAW</button><button id="ghost" title="Show this shot as a ghost over live view, to line up with it (O)" data-operator hidden>Ghost</button></div>
    </aside>
  </section>
  <section id="compare" aria-label="shots side by side"></section>
  <section id="live-view" aria-label="live view">
    <div id="live-wall"></div>
    <aside id="live-panel">
      <label>Camera <select id="live-camera"></select></label>
      <fieldset><legend>Framing</legend>
        <label>Grid <select id="overlay-grid"><option value="">none</option><option value="thirds">thirds</option><option value="quarters">quarters</option><option value="cross">centre cross</option></select></label>
        <label>Mask <select id="overlay-mask"><option value="">none</option><option>1:1</option><option>4:5</option><option>16:9</option><option value="custom">custom</option></select>
          <input id="overlay-mask-custom" placeholder="3:2" size="5" hidden></label>
        <label>Ghost <input type="range" id="ghost-opacity" min="0" max="100" value="50"></label>
        <span id="ghost-name">no ghost: choose a shot's Ghost button in the loupe</span>
      </fieldset>
      <fieldset><legend>Focus</legend>
        <label>Magnifier <select id="magnify"><option value="0">off</option><option value="5">5×</option><option value="10">10×</option></select></label>
        <small>a click on the frame chooses the point</small>
        <label><input type="checkbox" id="peaking"> Peaking <input type="color" id="peaking-colour" value="#ff3030"></label>
        <label>threshold <input type="number" id="peaking-threshold" min="4" max="255" value="48"></label>
      </fieldset>
      <details id="camera-settings" open data-operator><summary>Camera settings</summary>
        <label>For <select id="settings-camera"></select></label>
        <div id="settings-list"></div>
        <p id="settings-state"></p>
      </details>
    </aside>
  </section>
  <button id="new-shot" hidden>New shot ↑</button>
  <div id="empty">No shot yet</div>
</main>
<div id="marks" aria-label="marks">
  <span class="stars"><button id="mark-rating-0" data-rating="0" title="No rating (0)">✕</button><button id="mark-rating-1" data-rating="1" title="1">★</button><button id="mark-rating-2" data-rating="2" title="2">★</button><button id="mark-rating-3" data-rating="3" title="3">★</button><button id="mark-rating-4" data-rating="4" title="4">★</button><button id="mark-rating-5" data-rating="5" title="5">★</button></span>
  <span class="labels"><button id="mark-label-Red" data-label="Red" title="Red (6)"></button><button id="mark-label-Yellow" data-label="Yellow" title="Yellow (7)"></button><button id="mark-label-Green" data-label="Green" title="Green (8)"></button><button id="mark-label-Blue" data-label="Blue" title="Blue (9)"></button><button id="mark-label-Purple" data-label="Purple" title="Purple"></button></span>
  <button id="mark-pick-picked" data-pick="picked" title="Pick (P)">Pick</button><button id="mark-pick-rejected" data-pick="rejected" title="Reject (X)">Reject</button><button id="mark-pick-none" data-pick="none" title="Clear the pick (U)">Clear</button>
</div>
<div id="state"></div>
<footer data-operator>
  <button id="enter">Enter</button>
  <button id="shutter" aria-label="Take a photo">Shoot</button>
  <button id="exit">Exit</button>
  <input id="session-label" type="text" maxlength="200" placeholder="Label" aria-label="Session label: the next shots carry it ({label}); Enter sets it" title="Session label ({label}): Enter sets it, empty clears it">
</footer>
<dialog id="help-dialog">
  <h2>Keys</h2>
  <table>
    <tr><td>0–5</td><td>rating</td></tr><tr><td>6 7 8 9</td><td>label red, yellow, green, blue (again: clear)</td></tr>
    <tr><td>P · X · U</td><td>pick · reject · clear the pick</td></tr>
    <tr><td>← →</td><td>older · newer shot</td></tr><tr><td>↑ ↓</td><td>a row up · down (grid)</td></tr>
    <tr><td>Enter · E</td><td>loupe</td></tr><tr><td>G · Esc</td><td>grid</td></tr><tr><td>C</td><td>compare the selected shots (Ctrl-click in the grid)</td></tr>
    <tr><td>Z · click</td><td>100 % on the spot · again: fit</td></tr><tr><td>+ −</td><td>zoom in · out; drag to pan, pinch on a phone</td></tr>
    <tr><td>R</td><td>pin this shot as the reference against the newest</td></tr>
    <tr><td>W</td><td>RAW+JPEG: 100 % from the RAW (LibRaw's demosaic) · again: from the JPEG</td></tr>
    <tr><td>L</td><td>live view · O: this shot as its ghost</td></tr>
    <tr><td>H · S</td><td>highlight · shadow clipping</td></tr><tr><td>?</td><td>this list</td></tr>
  </table>
  <form method="dialog"><button>Close</button></form>
</dialog>
<dialog id="share-dialog">
  <h2>Share with a client</h2>
  <p>They see <b id="share-scope">this session</b> live<span id="share-marks"></span>; nothing of this machine, and they cannot shoot or change settings.</p>
  <p><label><input type="checkbox" id="share-originals"> with the originals (full size, 100 %, RAW)</label>
     <button type="button" id="share-chosen">Share only the chosen shots</button></p>
  <img id="share-code" alt="QR code of the viewer link">
  <p><code id="share-link"></code></p>
  <p id="share-note"></p>
  <form method="dialog"><button>Close</button></form>
</dialog>
<script src="/page.js"></script>
</body>
</html>
"""#
}

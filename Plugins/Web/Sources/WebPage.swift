/// The page at `/`: the last shot large, a strip of recent shots, the mode and counts, a
/// large shutter button, enter and exit. It works on a phone, and it updates itself from
/// `/events`, with no reloads. Opened as `/?token=…`, it passes the token on.
enum WebPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>shutterpipe</title>
<style>
  :root { color-scheme: dark; --ok: #3ecf6e; --bad: #ff5d5d; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px system-ui, sans-serif; background: #111; color: #eee; display: flex; flex-direction: column; height: 100vh; }
  header { display: flex; gap: 1em; align-items: center; padding: .5em 1em; background: #1b1b1b; flex-wrap: wrap; }
  header b { font-size: 1.1em; }
  #mode.photo { color: var(--ok); }
  main { flex: 1; display: flex; align-items: center; justify-content: center; min-height: 0; padding: .5em; }
  #latest { max-width: 100%; max-height: 100%; object-fit: contain; }
  #empty { color: #888; }
  #state { padding: .3em 1em; min-height: 1.8em; }
  #state.photoSuccess { color: var(--ok); } #state.photoFailed { color: var(--bad); }
  #strip { display: flex; gap: .4em; overflow-x: auto; padding: .4em 1em; background: #1b1b1b; min-height: 5.5em; }
  #strip figure { margin: 0; text-align: center; font-size: .75em; cursor: pointer; }
  #strip img { height: 4em; display: block; border: 2px solid transparent; }
  #strip .photoFailed { color: var(--bad); }
  #strip .photoFailed img, #strip .nofile { height: 4em; width: 5em; display: flex; align-items: center; justify-content: center; border: 2px solid var(--bad); }
  footer { display: flex; gap: .6em; padding: .6em 1em; justify-content: center; align-items: center; }
  button { font: inherit; padding: .6em 1.2em; border-radius: .5em; border: 1px solid #444; background: #262626; color: #eee; }
  #shutter { width: 5em; height: 5em; border-radius: 50%; background: #eee; color: #111; font-weight: bold; border: .3em solid #888; }
  #shutter:disabled { opacity: .5; }
</style>
</head>
<body>
<header>
  <b>shutterpipe</b>
  <span id="mode">idle</span>
  <span><span id="stored">0</span> stored · <span id="failed">0</span> failed</span>
  <span id="free"></span>
  <span id="battery"></span>
</header>
<main><img id="latest" alt="the last shot" hidden><span id="empty">No photo yet</span></main>
<div id="state"></div>
<div id="strip"></div>
<footer>
  <button id="enter">Enter</button>
  <button id="live" hidden>Live</button>
  <button id="shutter" aria-label="Take a photo">Shoot</button>
  <button id="exit">Exit</button>
</footer>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token");
const withToken = (url) => token ? url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : url;
const headers = token ? { "Authorization": "Bearer " + token } : {};
const $ = (id) => document.getElementById(id);
let stored = 0, failed = 0;

let live = false;
function show(photo) {
  if (!photo || live) return;
  if (photo.preview) {
    $("latest").src = withToken(photo.preview);
    $("latest").hidden = false;
    $("empty").hidden = true;
  }
}

function addToStrip(photo) {
  const figure = document.createElement("figure");
  figure.className = photo.state;
  figure.dataset.id = photo.id;
  if (photo.preview) {
    const image = document.createElement("img");
    image.src = withToken(photo.preview);
    image.alt = "shot " + photo.id;
    figure.appendChild(image);
  } else {
    const none = document.createElement("div");
    none.className = "nofile";
    none.textContent = "✕";
    figure.appendChild(none);
  }
  const caption = document.createElement("figcaption");
  caption.textContent = new Date(photo.time).toLocaleTimeString() + (photo.state === "photoFailed" ? " failed" : "");
  if (photo.message) caption.title = photo.message;
  figure.appendChild(caption);
  figure.onclick = () => show(photo);
  $("strip").prepend(figure);
  while ($("strip").children.length > 50) $("strip").lastChild.remove();
}

function showState(answer) {
  $("state").className = answer.state;
  $("state").textContent = answer.state + (answer.cause ? " " + answer.cause + ": " + answer.message : "") +
    (answer.paths && answer.paths.length ? " " + answer.paths.join(" ") : "");
}

function setMode(mode) {
  $("mode").textContent = mode;
  $("mode").className = mode;
}

async function post(event) {
  $("shutter").disabled = event === "capture";
  try {
    const response = await fetch(withToken("/api/" + event), { method: "POST", headers });
    showState(await response.json());
  } catch (error) {
    $("state").textContent = "no answer: " + error;
  } finally {
    $("shutter").disabled = false;
  }
}

async function start() {
  const status = await (await fetch(withToken("/api/status"), { headers })).json();
  setMode(status.mode);
  $("live").hidden = !status.liveView;
  stored = status.stored; failed = status.failed;
  $("stored").textContent = stored; $("failed").textContent = failed;
  if (status.freeBytes !== null) $("free").textContent = (status.freeBytes / 1e9).toFixed(1) + " GB free";
  $("battery").textContent = status.cameras.filter((camera) => camera.battery).map((camera) => (camera.name ? camera.name + " " : "") + "battery " + camera.battery).join(" · ");
  const photos = (await (await fetch(withToken("/api/photos"), { headers })).json()).photos;
  photos.slice().reverse().forEach(addToStrip);
  show(photos.find((photo) => photo.preview));
  const events = new EventSource(withToken("/events"));
  events.addEventListener("photo", (message) => {
    const photo = JSON.parse(message.data);
    addToStrip(photo);
    if (photo.state === "photoSuccess") { stored += 1; if (live) $("live").click(); show(photo); } else { failed += 1; }
    $("stored").textContent = stored; $("failed").textContent = failed;
  });
  events.addEventListener("answer", (message) => {
    const answer = JSON.parse(message.data);
    showState(answer);
    if (answer.state === "enteredPhotoMode" || answer.state === "photoSuccess") setMode("photo");
    if (answer.state === "exitedOrUnableToEnter") setMode("idle");
  });
  document.body.dataset.ready = "yes";
}

// For tests and kiosks: what the large image shows, once the browser has decoded it.
$("latest").onload = () => { document.body.dataset.shownWidth = $("latest").naturalWidth; document.body.dataset.shownSource = $("latest").src; };
// Live view in the large image; a new shot switches back to it.
$("live").onclick = () => {
  live = !live;
  $("live").textContent = live ? "Last shot" : "Live";
  if (live) { $("latest").src = withToken("/live.mjpg"); $("latest").hidden = false; $("empty").hidden = true; }
  else { fetch(withToken("/api/photos"), { headers }).then((r) => r.json()).then((list) => show(list.photos.find((p) => p.preview))); }
};
$("shutter").onclick = () => post("capture");
$("enter").onclick = () => post("enter");
$("exit").onclick = () => post("exit");
start();
</script>
</body>
</html>
"""#
}

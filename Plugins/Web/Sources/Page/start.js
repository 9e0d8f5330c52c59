// The review screen's script, last part: the shutter (`post`) and its state, the share
// link, the session label, and `start`, which wires the page up once script.js,
// grid.js, viewer.js, live.js and camera-controls.js are in.
async function post(event) {
  $("shutter").disabled = event === "capture";
  try {
    const response = await fetch("/api/" + event, { method: "POST", headers });
    const answer = await response.json();
    if (!response.ok) showError(Object.assign(new Error(answer.error), { fix: answer.fix })); else showState(answer);
  } catch (error) {
    showError(new Error("no answer: " + error.message));
  } finally {
    $("shutter").disabled = false;
  }
}

function showState(answer) {
  $("state").className = answer.state;
  $("state").textContent = answer.state + (answer.cause ? " " + answer.cause + (answer.message ? ": " + answer.message : "") : "") + (answer.paths && answer.paths.length ? " " + answer.paths.map((p) => p.split("/").pop()).join(" ") : "");
  // A sequence's frame says how far the sequence is, while it runs.
  const frame = /^sequence (.+) frame (\d+)\/(\d+)$/.exec(answer.origin || "");
  if (frame) {
    $("state").textContent = "sequence " + frame[1] + ": frame " + frame[2] + " of " + frame[3] + " · " + $("state").textContent;
    window.sequenceProgress = (window.sequenceProgress || []).concat(frame[2] + "/" + frame[3]);
  }
  if (answer.state === "enteredPhotoMode" || answer.state === "photoSuccess") setMode("photo");
  if (answer.state === "exitedOrUnableToEnter") setMode("idle");
}

// The shots in flight, as the terminal's status line says them: capturing, downloading
// x % of y MB, storing. The answer that ends a shot says how it went.
function showProgress(shots) {
  showEarly(shots);
  $("progress").textContent = shots.map((shot) => shot.words).join(" · ");
  document.body.dataset.inFlight = shots.map((shot) => shot.phase).join(",");
  if (shots.length) window.progressSeen = (window.progressSeen || []).concat(shots.map((shot) => shot.phase));
}

// Sequences the config plans: the operator picks one and runs it; Exit stops it between
// frames. Its frames come as shots; its end as a `sequence` event.
function showSequences(names) {
  if (!$("sequences")) return;
  $("sequences").hidden = !names.length;
  $("sequence-name").replaceChildren(...names.map((name) => Object.assign(document.createElement("option"), { value: name, textContent: name })));
}

async function runSequence() {
  const name = $("sequence-name").value;
  $("run-sequence").disabled = true;
  try {
    const response = await fetch("/api/sequence", { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ name }) });
    const answer = await response.json();
    if (!response.ok) { $("run-sequence").disabled = false; return showError(Object.assign(new Error(answer.error), { fix: answer.fix })); }
    $("state").className = ""; $("state").textContent = "sequence " + name + " running";
  } catch (error) {
    $("run-sequence").disabled = false; showError(new Error("no answer: " + error.message));
  }
}

function sequenceEnded(sequence) {
  if ($("run-sequence")) $("run-sequence").disabled = false;
  $("state").className = sequence.cause ? "photoFailed" : "photoSuccess";
  $("state").textContent = sequence.summary;
  document.body.dataset.sequence = sequence.summary;
}

function setMode(mode) { $("mode").textContent = mode; $("mode").className = mode; }

// The share panel: the viewer link (the session that runs, by default), or a link of its
// own for the chosen shots (grid: click to choose) or the current session label.
async function share(what) {
  let link, code;
  if (what) {
    const response = await fetch("/api/share", { method: "POST", headers: { ...headers, "Content-Type": "application/json" },
                                                 body: JSON.stringify({ ...what, originals: $("share-originals").checked }) });
    link = await response.json();
    if (!response.ok) throw Object.assign(new Error(link.error || response.statusText), { fix: link.fix });
    code = link.qr; $("share-scope").textContent = what.shots ? what.shots.length + " chosen shot(s)" : "the shots labelled " + what.sessionLabel;
  } else {
    link = await get("/api/share"); code = "/api/share.svg";
    $("share-scope").textContent = link.scope + (link.originals ? ", with the originals" : ", previews only");
  }
  $("share-link").textContent = link.link || "";
  $("share-note").textContent = link.note || "";
  $("share-marks").textContent = app.viewersMayMark ? " and may rate, label and pick" : "";
  $("share-code").hidden = !link.link;
  if (link.link) $("share-code").src = code;
  $("share-chosen").disabled = !app.chosen.some((picture) => picture.shot.id);
  if (!$("share-dialog").open) $("share-dialog").showModal();
}

async function start() {
  await signedIn.catch(() => {});
  let status;
  try { status = await get("/api/status"); } catch (error) { showError(error); return; }
  app.role = status.role; app.mayMark = status.mayMark; app.viewersMayMark = status.viewersMayMark;
  document.body.dataset.role = app.role;
  if (app.role !== "operator") document.querySelectorAll("[data-operator]").forEach((element) => element.remove());
  setMode(status.mode);
  app.stored = status.stored; app.failed = status.failed;
  $("stored").textContent = app.stored; $("failed").textContent = app.failed;
  liveView.setCameras(status.liveViewCameras || []);
  showSequences(status.sequences || []);
  if ($("show-live")) $("show-live").hidden = $("ghost").hidden = !status.liveView;
  app.started = true;
  if (app.view === "live") setView("live");
  if (status.freeBytes !== null) $("free").textContent = (status.freeBytes / 1e9).toFixed(1) + " GB free";
  $("battery").textContent = (status.cameras || []).filter((c) => c.battery).map((c) => (c.name ? c.name + " " : "") + "battery " + c.battery).join(" · ");
  await reload().catch(showError);
  const events = new EventSource(withRole("/events"));
  events.addEventListener("photo", (m) => onPhoto(JSON.parse(m.data)));
  events.addEventListener("answer", (m) => showState(JSON.parse(m.data)));
  events.addEventListener("shot", (m) => onRecorded(JSON.parse(m.data)));
  events.addEventListener("marked", (m) => onMarked(JSON.parse(m.data)));
  events.addEventListener("copied", (m) => onCopied(JSON.parse(m.data)));
  events.addEventListener("progress", (m) => showProgress(JSON.parse(m.data).shots));
  events.addEventListener("sequence", (m) => sequenceEnded(JSON.parse(m.data)));
  // A new connection may be a new run of the session, whose shot numbers start again.
  events.onopen = () => { answered.clear(); document.body.dataset.ready = "yes"; };
}

document.addEventListener("keydown", onKey);
fillHelp();
$("undo").onclick = () => undo();
$("advance").onclick = () => toggleAdvance();
document.body.dataset.advance = localStorage.getItem("shutterpipe-advance") === "on" ? "on" : "off";
$("advance").setAttribute("aria-pressed", String(document.body.dataset.advance === "on"));
$("show-grid").onclick = () => setView("grid");
$("show-loupe").onclick = () => setView("loupe");
$("show-compare").onclick = () => setView("compare");
$("help").onclick = () => $("help-dialog").showModal();
if ($("share")) $("share").onclick = () => share().catch(showError);
if ($("share-chosen")) $("share-chosen").onclick = () => share({ shots: [...new Set(app.chosen.filter((p) => p.shot.id).map((p) => p.shot.id))] }).catch(showError);
$("new-shot").onclick = () => { app.current = 0; $("new-shot").hidden = true; $("grid").scrollTop = 0; render(); };
$("pin").onclick = pin;
if ($("run-sequence")) $("run-sequence").onclick = () => runSequence();
$("raw").onclick = () => loupe.toggleRAW();
$("zoom-fit").onclick = () => loupe.setZoom("fit");
$("zoom-100").onclick = () => loupe.setZoom(1);
$("zoom-200").onclick = () => loupe.setZoom(2);
for (const id of ["clip-high", "clip-low", "clip-high-at", "clip-low-at"]) $(id).onchange = () => loupe.draw();
// The mark buttons act on the frame shown, or on the whole shot when "Whole shot" is on
// (or Shift is held).
const wholeShot = (event) => event.shiftKey || $("whole-shot").getAttribute("aria-pressed") === "true";
$("whole-shot").onclick = () => $("whole-shot").setAttribute("aria-pressed", String($("whole-shot").getAttribute("aria-pressed") !== "true"));
document.querySelectorAll("#marks [data-rating]").forEach((b) => b.onclick = (e) => markAndAdvance(target(focusedPicture(), wholeShot(e)), { rating: Number(b.dataset.rating) }));
document.querySelectorAll("#marks [data-label]").forEach((b) => b.onclick = (e) => { const p = focusedPicture(); mark(target(p, wholeShot(e)), { label: p && p.frame.label === b.dataset.label ? "none" : b.dataset.label }); });
document.querySelectorAll("#marks [data-pick]").forEach((b) => b.onclick = (e) => markAndAdvance(target(focusedPicture(), wholeShot(e)), { pick: b.dataset.pick }));
for (const [id, key] of [["filter-rating", "rating"], ["filter-label", "label"], ["filter-pick", "pick"], ["filter-camera", "camera"], ["filter-session", "session"]]) {
  $(id).onchange = () => { app.filter[key] = $(id).value; reload().catch(showError); };
}
$("filter-collapse").onchange = () => { app.filter.collapse = $("filter-collapse").checked; reload().catch(showError); };
async function setLabel() {
  const field = $("session-label");
  try {
    const response = await fetch("/api/label", { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ label: field.value }) });
    const answer = await response.json();
    if (!response.ok) return showError(Object.assign(new Error(answer.error), { fix: answer.fix }));
    field.value = answer.label || "";
    $("state").className = "";
    $("state").textContent = answer.label ? "label " + answer.label + ": the next shots carry it" : "label cleared";
  } catch (error) {
    showError(new Error("no answer: " + error.message));
  }
}

if ($("shutter")) {
  $("session-label").onkeydown = (event) => { if (event.key === "Enter") { event.preventDefault(); setLabel(); } };
  $("shutter").onclick = () => post("capture");
  $("enter").onclick = () => post("enter");
  $("exit").onclick = () => post("exit");
  $("show-live").onclick = () => setView("live");
  $("ghost").onclick = useAsGhost;
  $("live-camera").onchange = () => { liveView.shown = $("live-camera").value; liveView.open(); };
  $("settings-camera").onchange = () => cameraControls.fill();
  $("overlay-mask").onchange = () => { $("overlay-mask-custom").hidden = $("overlay-mask").value !== "custom"; liveView.redraw(); };
  for (const id of ["overlay-grid", "overlay-mask-custom", "ghost-opacity", "magnify"]) $(id).oninput = () => liveView.redraw();
  $("magnify").onchange = () => liveView.redraw();
}
window.addEventListener("resize", () => render());
// "#view=grid" (or loupe, compare, live) opens the page in that view.
setView(["grid", "loupe", "compare", "live"].find((v) => v === new URLSearchParams(location.hash.slice(1)).get("view")) || "loupe");
start();

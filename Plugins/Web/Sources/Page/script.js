// The review screen's script, first part: the token and role, the shots (loaded a page at
// a time from `/api/shots`, and live from `/events`) and their frames (what each camera
// took of a shot), marks (each to a frame, or with Shift to the whole shot; sent in order,
// batched while one request is under way), the keyboard, the shutter. grid.js and
// viewer.js follow it; start.js ends it.
"use strict";
// The token: after "#" (never sent in a request line), else ?token=. It goes once to
// /api/session, which sets it as a cookie (HttpOnly, SameSite=Strict): no URL the page
// loads carries it, and it leaves the address bar.
const token = new URLSearchParams(location.hash.slice(1)).get("token") || new URLSearchParams(location.search).get("token");
if (token) {
  const rest = new URLSearchParams(location.hash.slice(1)); rest.delete("token");
  history.replaceState(null, "", "/" + (rest.toString() ? "#" + rest.toString() : ""));
}
// The tab's role, kept for this tab alone (sessionStorage): a viewer link opened in the
// operator's browser never makes the operator's tabs viewers, nor the reverse. Each role
// has a cookie of its own; a viewer tab asks with its own (the header, or ?as=viewer where
// no header can go: images, tiles, the event stream).
const headers = token ? { "Authorization": "Bearer " + token } : {};
const tabRole = { get: () => sessionStorage.getItem("shutterpipe-role"), set: (role) => sessionStorage.setItem("shutterpipe-role", role) };
const asViewer = () => { if (tabRole.get() === "viewer") headers["X-Shutterpipe-As"] = "viewer"; };
asViewer();
const signedIn = token ? fetch("/api/session", { method: "POST", headers: { "Authorization": "Bearer " + token } })
  .then((response) => response.json()).then((body) => { if (body.role) { tabRole.set(body.role); asViewer(); } }) : Promise.resolve();
const withRole = (url) => tabRole.get() === "viewer" ? url + (url.includes("?") ? "&" : "?") + "as=viewer" : url;
const $ = (id) => document.getElementById(id);
const LABELS = ["Red", "Yellow", "Green", "Blue", "Purple"];
window.paints = [];      // for tests and bench-screen: each preview the loupe painted, with its time
window.tilePaints = [];  // each 100 % tile painted

// `current` is the shot the cursor is on and `frame` its frame (by its place among the
// frames shown); `chosen` and `reference` hold pictures: a frame of a shot.
const app = {
  role: "operator", mayMark: true, catalogue: true,
  shots: [], total: 0, provisional: 0, loading: new Set(), framesPerShot: 1,
  current: 0, frame: 0, chosen: [], reference: null, view: "loupe",
  filter: {}, generation: 0, histogram: null,
};
const keyOf = (shot) => shot ? (shot.shotID || "id" + shot.id) : null;
const currentShot = () => app.shots[app.current];

// MARK: frames
// Every shot has frames (one for a shot of one camera, whose marks are the shot's). A
// shot from the server has them; one made here (an answer not recorded yet) gets them.
function normalize(shot) {
  if (!shot.frames || !shot.frames.length) {
    shot.frames = [{ camera: null, rating: shot.rating || 0, label: shot.label || null, pick: shot.pick || null, preview: shot.preview || null,
                     thumbnail: shot.thumbnail || shot.preview || null, full: shot.full || null, hasRAW: Boolean(shot.hasRAW), files: shot.files || [], query: "" }];
  }
  app.framesPerShot = Math.max(app.framesPerShot, shot.frames.length);
  return shot;
}
// The frames shown: with a camera filter, only that camera's (where the shot has it).
function framesOf(shot) {
  if (!shot) return [];
  const all = normalize(shot).frames;
  if (app.filter.camera && all.length > 1) { const only = all.filter((f) => f.camera === app.filter.camera); if (only.length) return only; }
  return all;
}
// A picture: one frame of a shot, what a viewer shows and a mark goes to.
function pictureAt(index, frame) {
  const shot = app.shots[index];
  if (!shot) return null;
  const frames = framesOf(shot);
  return { shot, frame: frames[Math.max(0, Math.min(frames.length - 1, frame))] };
}
const currentPicture = () => pictureAt(app.current, app.frame);
const pictureKey = (picture) => picture ? keyOf(picture.shot) + "/" + (picture.frame.camera || "") : null;
// The same camera's frame of another shot (its first frame when it has none).
function frameLike(shot, camera) {
  const frames = framesOf(shot), at = frames.findIndex((f) => f.camera === camera);
  return Math.max(0, at);
}
// The shot's own marks from its frames': the highest rating of a frame not rejected,
// picked when one is, rejected when all are, the first label (as the catalogue sums them).
function sumUp(shot) {
  const frames = shot.frames, kept = frames.filter((f) => f.pick !== "rejected");
  if (frames.length === 1) { shot.rating = frames[0].rating || 0; shot.label = frames[0].label || null; shot.pick = frames[0].pick || null; return; }
  shot.pick = frames.some((f) => f.pick === "picked") ? "picked" : kept.length ? null : "rejected";
  shot.rating = Math.max(0, ...(kept.length ? kept : frames).map((f) => f.rating || 0));
  shot.label = (frames.find((f) => f.label) || {}).label || null;
}

async function get(url) {
  const response = await fetch(url, { headers });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(body.error || response.statusText), { status: response.status, fix: body.fix });
  return body;
}

function filterQuery() {
  const f = app.filter, q = new URLSearchParams();
  if (f.rating) q.set("rating", f.rating);
  if (f.label) q.set("label", f.label);
  if (f.pick === "picked") q.set("picked", "1");
  if (f.pick === "rejected") q.set("rejected", "1");
  if (f.pick === "failed") q.set("failed", "1");
  if (f.camera) q.set("camera", f.camera);
  if (f.session) q.set("session", f.session);
  if (f.collapse) q.set("collapse", "sequences");
  return q.toString();
}
const filtered = () => filterQuery() !== "";

// A shot as an answer shows it, before the catalogue has recorded it: a frame per camera.
function fromPhoto(photo) {
  const frames = (photo.frames && photo.frames.length ? photo.frames : [{ camera: null, preview: photo.preview }]).map((frame) => (
    { camera: frame.camera || null, rating: 0, label: null, pick: null, preview: frame.preview || null, thumbnail: frame.preview || null, full: null, hasRAW: false, files: [], query: frame.query || "" }));
  return normalize({ provisional: true, id: null, shotID: photo.shotID, number: photo.id, state: photo.state, time: photo.time, trigger: photo.trigger,
           cause: photo.cause || null, message: photo.message || null, rating: 0, label: null, pick: null, files: [],
           preview: photo.preview, thumbnail: photo.preview, full: null, frames });
}

// Loads the page of 100 shots that holds each index from..to not loaded yet.
function ensureLoaded(from, to) {
  if (!app.catalogue) return;
  for (let start = Math.floor(Math.max(0, from - app.provisional) / 100) * 100; start + app.provisional < to; start += 100) {
    let missing = false;
    for (let i = start + app.provisional; i < Math.min(to, start + app.provisional + 100); i++) if (!app.shots[i]) { missing = true; break; }
    if (!missing || app.loading.has(start)) continue;
    app.loading.add(start);
    const generation = app.generation;
    get("/api/shots?limit=100&offset=" + start + (filtered() ? "&" + filterQuery() : "")).then((page) => {
      if (generation !== app.generation) return;
      // Never below what is already here: a page asked for before a shot was recorded
      // counts it neither in its total nor, by then, among the provisional ones.
      app.total = Math.max(page.total + app.provisional, app.shots.filter(Boolean).length);
      page.shots.forEach((shot, i) => {
        normalize(shot);
        const top = app.shots.findIndex((s, j) => j < app.provisional && s && s.shotID && s.shotID === shot.shotID);
        if (top >= 0) { app.shots[top] = shot; app.provisional -= 1; return; }
        if (!app.shots[start + app.provisional + i]) app.shots[start + app.provisional + i] = shot;
      });
      page.shots.forEach(noteChoices);
      render();
    }).catch((error) => showError(error)).finally(() => app.loading.delete(start));
  }
}

async function reload() {
  app.generation += 1;
  app.shots = []; app.provisional = 0; app.loading.clear(); app.current = 0; app.frame = 0; app.chosen = []; grid.perShot = 1; app.framesPerShot = 1;
  try {
    const page = await get("/api/shots?limit=100" + (filtered() ? "&" + filterQuery() : ""));
    app.shots = page.shots.map(normalize); app.total = page.total;
    page.shots.forEach(noteChoices);
  } catch (error) {
    if (error.status !== 404) throw error;
    // A session without a catalogue: its recent shots, unmarked.
    app.catalogue = false; app.mayMark = false;
    app.shots = (await get("/api/photos")).photos.map(fromPhoto); app.total = app.shots.length;
  }
  render();
}

function noteChoices(shot) {
  const cameras = (shot.frames || []).map((f) => f.camera).filter(Boolean);
  for (const [select, value] of [...(cameras.length ? cameras : [shot.camera || shot.model]).map((c) => ["filter-camera", c]), ["filter-session", shot.session]]) {
    if (value && ![...$(select).options].some((o) => o.value === value)) $(select).add(new Option(value, value));
  }
}

// A new answer: the shot goes on top at once; the page follows it unless the user looks
// at an older one, who gets the "new shot" badge instead.
function onPhoto(photo) {
  if (photo.state === "photoSuccess") app.stored += 1; else app.failed += 1;
  $("stored").textContent = app.stored; $("failed").textContent = app.failed;
  // The shot's early preview, shown while it was in flight, gives way to the photo.
  const number = photo.shotID ? Number(String(photo.shotID).split("#").pop()) : null;
  if (number) answered.add(number);
  const early = app.shots.findIndex((s) => s && s.inFlight && s.inFlight === number);
  if (early >= 0) {
    const before = app.shots[early], shot = fromPhoto(photo);
    // The loupe keeps the early picture on screen until the photo's own is decoded (viewer.js).
    clearTimeout(before.leaving); carryOver(before, shot); app.shots[early] = shot; render(); return;
  }
  if (filtered() && app.catalogue) return;  // the catalogue's "shot" event tells whether it belongs
  insertOnTop(fromPhoto(photo), true);
}

// First pixels: a shot in flight whose camera sent its thumbnail (before the file is
// whole) goes on top at once with that picture, as a placeholder the photo replaces.
// One that ends without a photo (it failed before any) goes after half a minute.
// The shot numbers whose photo came: a progress event told late never brings them back.
const answered = new Set();
function showEarly(shots) {
  if (filtered() && app.catalogue) return;
  for (const inFlight of shots) {
    if (!inFlight.preview || answered.has(inFlight.number)) continue;
    const here = app.shots.find((s) => s && s.inFlight === inFlight.number);
    if (here) {
      if (here.preview !== inFlight.preview) {
        here.preview = here.thumbnail = here.frames[0].preview = here.frames[0].thumbnail = inFlight.preview;
        here.frames[0].previewSource = inFlight.previewSource; render();
      }
      continue;
    }
    const frame = { camera: inFlight.previewCamera || null, rating: 0, label: null, pick: null, preview: inFlight.preview, thumbnail: inFlight.preview,
                    full: null, hasRAW: false, files: [], query: "", previewSource: inFlight.previewSource };
    insertOnTop({ provisional: true, inFlight: inFlight.number, id: null, shotID: "in flight#" + inFlight.number, number: null, state: "inFlight",
                  time: null, trigger: null, rating: 0, label: null, pick: null, files: [], preview: inFlight.preview, thumbnail: inFlight.preview,
                  full: null, frames: [frame] }, true);
  }
  const flying = new Set(shots.map((s) => s.number));
  for (const shot of app.shots) {
    if (!shot || !shot.inFlight || flying.has(shot.inFlight) || shot.leaving) continue;
    shot.leaving = setTimeout(() => {
      // Its photo came (and took its place), or comes yet: only a shot that ended without
      // one goes.
      const index = app.shots.indexOf(shot);
      if (index < 0 || answered.has(shot.inFlight)) return;
      app.shots.splice(index, 1); app.total -= 1; app.provisional = Math.max(0, app.provisional - 1);
      if (app.current > index) app.current -= 1;
      render();
    }, 30000);
  }
}

function insertOnTop(shot, provisional) {
  const following = app.current === 0 && (app.view !== "grid" || $("grid").scrollTop < 4);
  app.shots.unshift(normalize(shot)); app.total += 1;
  if (provisional) app.provisional += 1;
  if (!following) { app.current += 1; $("new-shot").hidden = false; }
  render();
}

// The catalogue recorded a shot: it has its id from now on (its marks can be sent).
// Marks made on it meanwhile move to it, frame by frame, and are sent.
function onRecorded(shot) {
  normalize(shot);
  const index = app.shots.findIndex((s) => s && keyOf(s) === keyOf(shot));
  if (index >= 0) {
    const before = app.shots[index];
    if (before.provisional) {
      app.provisional = Math.max(0, app.provisional - 1); shot.preview = before.preview || shot.preview;
      shot.frames.forEach((frame) => { const was = before.frames.find((f) => f.camera === frame.camera); if (was && !frame.preview) frame.preview = was.preview; });
    }
    carryOver(before, shot);
    app.shots[index] = shot;
  } else if (filtered()) {
    return void reload();
  } else {
    insertOnTop(shot, false);
  }
  noteChoices(shot);
  render(); flushMarks();
}

// Marks, undos and choices made on `before` (a provisional shot) now belong to `shot`.
function carryOver(before, shot) {
  for (const entry of marksQueue) if (entry.shot === before) { entry.shot = shot; applyLocally(shot, entry.camera, entry.change); }
  for (const entry of undoStack) if (entry.shot === before) entry.shot = shot;
  for (const list of [app.chosen]) list.forEach((p, i) => { if (p.shot === before) list[i] = { shot, frame: shot.frames[frameLike(shot, p.frame.camera)] }; });
}

// A shot's marks changed (this page, another one, the socket, the command line): each
// frame's, in place (the pictures on screen hold these objects).
function onMarked(shot) {
  const index = app.shots.findIndex((s) => s && s.id === shot.id);
  if (index < 0 || marksQueue.some((m) => m.shot === app.shots[index])) return;  // ours are still on their way
  const here = app.shots[index];
  Object.assign(here, { rating: shot.rating, label: shot.label, pick: shot.pick });
  for (const frame of shot.frames || []) {
    const mine = here.frames.find((f) => f.camera === frame.camera);
    if (mine) Object.assign(mine, { rating: frame.rating, label: frame.label, pick: frame.pick });
  }
  render();
}

// A copy of the shot's files was made (a mirror, an upload): its files as they are now.
function onCopied(shot) {
  const index = app.shots.findIndex((s) => s && s.id === shot.id);
  if (index < 0) return;
  const here = app.shots[index];
  here.files = shot.files;
  for (const frame of shot.frames || []) { const mine = here.frames.find((f) => f.camera === frame.camera); if (mine) mine.files = frame.files; }
  render();
}

// MARK: marks
// A mark goes to a target: a picture's frame, or with `whole` every frame of its shot.
// A shot of one camera has one frame: the same either way.
const marksQueue = [];
let marksSending = false;

// `camera` undefined: every frame; else that camera's frame (null: the only camera's).
function applyLocally(shot, camera, change) {
  const frames = camera === undefined ? shot.frames : shot.frames.filter((f) => (f.camera || null) === camera);
  for (const frame of frames) {
    if (change.rating !== undefined && frame.pick === "rejected" && change.pick === undefined) frame.pick = null;  // a rating clears a reject
    if (change.rating !== undefined) frame.rating = change.rating;
    if (change.label !== undefined) frame.label = change.label === "none" ? null : change.label;
    if (change.pick !== undefined) frame.pick = change.pick === "none" ? null : change.pick;
  }
  sumUp(shot);
}

function target(picture, whole) {
  if (!picture) return null;
  return { shot: picture.shot, camera: whole || picture.shot.frames.length < 2 ? undefined : (picture.frame.camera || null), frame: picture.frame };
}

function mark(to, change, { undoing = false } = {}) {
  if (!to || !to.shot || !app.mayMark) return;
  const shot = to.shot;
  if (!undoing) {
    // What each frame it changes had, for Ctrl-Z.
    const frames = to.camera === undefined ? shot.frames : shot.frames.filter((f) => (f.camera || null) === to.camera);
    const before = frames.map((frame) => {
      const was = {};
      if (change.rating !== undefined) was.rating = frame.rating || 0;
      if (change.label !== undefined) was.label = frame.label || "none";
      if (change.pick !== undefined || (change.rating !== undefined && frame.pick === "rejected")) was.pick = frame.pick || "none";
      return { camera: shot.frames.length < 2 ? undefined : (frame.camera || null), change: was };
    });
    undoStack.push({ shot, before });
    if (undoStack.length > 200) undoStack.shift();
  }
  applyLocally(shot, to.camera, change);
  marksQueue.push({ shot, camera: to.camera, change });
  render(); flushMarks();
}

// In order: what was typed while a request was under way goes in the next one, whole.
async function flushMarks() {
  document.body.dataset.marksPending = marksQueue.length;
  if (marksSending) return;
  const batch = [];
  while (marksQueue.length && marksQueue[0].shot.id) batch.push(marksQueue.shift());
  if (!batch.length) return;
  marksSending = true;
  try {
    const marks = batch.map((m) => ({ id: m.shot.id, ...(m.camera ? { camera: m.camera } : {}), ...m.change }));
    const response = await fetch("/api/marks", { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ marks }) });
    const body = await response.json();
    if (!response.ok) showError(Object.assign(new Error(body.error), { fix: body.fix }));
  } catch (error) {
    showError(error);
  } finally {
    marksSending = false;
    flushMarks();
  }
}

function showError(error) {
  $("state").className = "photoFailed";
  $("state").textContent = error.message + (error.fix ? " — " + error.fix : "");
}

// MARK: keys
// The keys: one table, read by the key handler and by the "?" list, so they never differ.
// `ctrl`: with Ctrl (or ⌘) held; the others without it.
const KEYS = [
  { keys: "0–5", help: "rating of the frame shown (with Shift: of every frame of the shot)", match: (k) => k >= "0" && k <= "5",
    run: (k, picture, whole) => markAndAdvance(target(picture, whole), { rating: Number(k) }) },
  { keys: "6 7 8 9", help: "label red, yellow, green, blue (again: clear; with Shift: the whole shot)", match: (k) => k >= "6" && k <= "9",
    run: (k, picture, whole) => { const label = LABELS[Number(k) - 6]; mark(target(picture, whole), { label: picture && picture.frame.label === label ? "none" : label }); } },
  { keys: "P · X · U", help: "pick · reject · clear the pick (with Shift: the whole shot)", match: (k) => k === "p" || k === "x" || k === "u",
    run: (k, picture, whole) => markAndAdvance(target(picture, whole), { pick: { p: "picked", x: "rejected", u: "none" }[k] }) },
  { keys: "Ctrl-Z", help: "undo the last mark (again: the one before)", ctrl: true, match: (k) => k === "z", run: () => undo() },
  { keys: "A", help: "after a rating or pick, go on to the next shot (on · off)", match: (k) => k === "a", run: () => toggleAdvance() },
  { keys: "← →", help: "grid: the frame to the left · right; loupe: older · newer shot (the same camera's frame); compare: the pane to the left · right",
    match: (k) => k === "ArrowLeft" || k === "ArrowRight", run: (k) => arrow(k === "ArrowRight" ? 1 : -1) },
  { keys: "↑ ↓", help: "grid: a row up · down; loupe: the shot's frame before · after (its other cameras)",
    match: (k) => (k === "ArrowUp" || k === "ArrowDown") && (app.view === "grid" || app.view === "loupe"),
    run: (k) => app.view === "grid" ? move(k === "ArrowDown" ? grid.columns : -grid.columns) : stepFrame(k === "ArrowDown" ? 1 : -1) },
  { keys: "Enter · E", help: "loupe", match: (k) => k === "Enter" || k === "e", run: () => setView("loupe") },
  { keys: "G · Esc", help: "grid", match: (k) => k === "g" || (k === "Escape" && app.view !== "grid"), run: () => setView("grid") },
  { keys: "C", help: "compare the chosen frames (Ctrl-click them in the grid), else a shot's cameras side by side, else this shot and the one before; the framed pane takes the keys", match: (k) => k === "c", run: () => setView("compare") },
  { keys: "Z · click", help: "100 % on the spot · again: fit", match: (k) => k === "z", run: () => loupe.toggleZoom() },
  { keys: "+ −", help: "zoom in · out; drag to pan, pinch on a phone", match: (k) => k === "+" || k === "=" || k === "-",
    run: (k) => viewers().forEach((v) => v.zoomBy(k === "-" ? 0.5 : 2)) },
  { keys: "R", help: "pin this frame as the reference against the newest shot's", match: (k) => k === "r", run: () => pin() },
  { keys: "W", help: "RAW+JPEG: 100 % from the RAW (LibRaw's demosaic) · again: from the JPEG", match: (k) => k === "w", run: () => loupe.toggleRAW() },
  { keys: "L", help: "live view", match: (k) => k === "l" && $("show-live") && !$("show-live").hidden, run: () => setView("live") },
  { keys: "O", help: "this shot as live view's ghost", match: (k) => k === "o" && $("ghost") && !$("ghost").hidden, run: () => useAsGhost() },
  { keys: "H · S", help: "highlight · shadow clipping", match: (k) => k === "h" || k === "s",
    run: (k) => { const box = $(k === "h" ? "clip-high" : "clip-low"); box.checked = !box.checked; loupe.draw(); } },
  { keys: "?", help: "this list", match: (k) => k === "?", run: () => $("help-dialog").showModal() },
];

function onKey(event) {
  if (event.target.matches("input, select, textarea") || event.altKey) return;
  if (document.querySelector("dialog[open]") && event.key !== "Escape") return;
  // Shift with a digit gives "!" or "%" as the key: the digit is read from the key's place.
  const digit = event.shiftKey && /^(Digit|Numpad)[0-9]$/.test(event.code) ? event.code.slice(-1) : null;
  const k = digit || (event.key.length === 1 ? event.key.toLowerCase() : event.key), picture = focusedPicture();
  const ctrl = event.ctrlKey || event.metaKey;
  const entry = KEYS.find((entry) => Boolean(entry.ctrl) === ctrl && entry.match(k));
  if (!entry) return;
  entry.run(k, picture, event.shiftKey);
  event.preventDefault();
}

// The "?" list, from the same table.
function fillHelp() {
  const table = $("help-dialog").querySelector("table");
  table.replaceChildren(...KEYS.map((entry) => {
    const row = document.createElement("tr"), keys = document.createElement("td"), help = document.createElement("td");
    keys.textContent = entry.keys; help.textContent = entry.help; row.append(keys, help);
    return row;
  }));
}

// The arrows move as drawn: in the grid to the frame on that side (across shots); in
// compare, the focus to the pane on that side; in the loupe to the older (←) or newer
// (→) shot, keeping the camera.
function arrow(by) {
  if (app.view === "grid") return stepAcross(by);
  if (app.view === "compare") return compare.focusBy(by);
  move(-by);
}

// Grid: the next frame in reading order, into the next shot past the last.
function stepAcross(by) {
  const frames = framesOf(currentShot()).length;
  if (app.frame + by >= 0 && app.frame + by < frames) { app.frame += by; return render(); }
  const next = Math.max(0, Math.min(app.total - 1, app.current + by));
  if (next === app.current) return;
  app.current = next;
  app.frame = by > 0 ? 0 : Math.max(0, framesOf(currentShot()).length - 1);
  if (app.current === 0) $("new-shot").hidden = true;
  grid.reveal(app.current);
  render();
}

// Loupe: the shot's frame before or after (its other cameras' pictures).
function stepFrame(by) {
  const frames = framesOf(currentShot()).length;
  const next = Math.max(0, Math.min(frames - 1, app.frame + by));
  if (next === app.frame) return;
  app.frame = next;
  render();
}

// Marks undone with Ctrl-Z: each mark remembers what it changed, frame by frame.
const undoStack = [];
function undo() {
  const last = undoStack.pop();
  if (!last) return;
  for (const { camera, change } of last.before) mark({ shot: last.shot, camera }, change, { undoing: true });
}

// After a rating or a pick, the next shot (A turns it on or off; kept in this browser).
function markAndAdvance(to, change) {
  mark(to, change);
  if (localStorage.getItem("shutterpipe-advance") === "on" && app.view === "loupe" && to && to.shot === currentShot()) move(1);
}
function toggleAdvance() {
  const on = localStorage.getItem("shutterpipe-advance") !== "on";
  localStorage.setItem("shutterpipe-advance", on ? "on" : "off");
  document.body.dataset.advance = on ? "on" : "off";
  if ($("advance")) $("advance").setAttribute("aria-pressed", String(on));
}

// To another shot, on the same camera's frame where it has one.
function move(by) {
  const next = Math.max(0, Math.min(app.total - 1, app.current + by));
  if (next === app.current) return;
  const camera = currentPicture() ? currentPicture().frame.camera : null;
  app.current = next;
  app.frame = app.shots[next] ? frameLike(app.shots[next], camera) : 0;
  if (app.current === 0) $("new-shot").hidden = true;
  grid.reveal(app.current);
  render();
}

function setView(view) {
  app.view = view;
  document.body.dataset.view = view;
  for (const name of ["grid", "loupe", "compare", "live"]) if ($("show-" + name)) $("show-" + name).classList.toggle("on", name === view);
  if (view === "grid") grid.reveal(app.current);
  // Live view needs photo mode: the Live button enters it.
  if (view === "live" && app.started && $("mode").textContent !== "photo") post("enter").then(() => liveView.open()); else liveView.open();
  render();
}

function useAsGhost() {
  const picture = currentPicture();
  liveView.useGhost(picture && { ...picture.shot, preview: picture.frame.preview || picture.shot.preview, files: picture.frame.files || picture.shot.files });
  setView("live");
}

function pin() {
  const picture = currentPicture();
  app.reference = app.reference && pictureKey(app.reference) === pictureKey(picture) ? null : picture;
  $("pin").setAttribute("aria-pressed", String(Boolean(app.reference)));
  if (app.reference) setView("compare"); else render();
}

function render() {
  $("empty").hidden = app.total > 0 || app.view === "live";
  $("count").textContent = app.total + " shot" + (app.total === 1 ? "" : "s");
  ensureLoaded(app.current, app.current + 2);
  if (app.shots[app.current]) app.frame = Math.max(0, Math.min(framesOf(currentShot()).length - 1, app.frame));
  if (app.view === "grid") grid.render();
  if (app.view === "loupe") { loupe.show(currentPicture()); panel.show(currentPicture()); frameStrip(); }
  if (app.view === "compare") compare.render();
  markButtons(focusedPicture());
  // For tests: the frame the keys act on.
  const focused = focusedPicture();
  document.body.dataset.frame = focused ? (focused.shot.id || "") + "/" + (focused.frame.camera || "") : "";
}

// The loupe's frame buttons: a shot of several cameras shows which one is on screen.
function frameStrip() {
  const shot = currentShot(), frames = shot ? framesOf(shot) : [];
  const strip = $("frames");
  const wanted = frames.length > 1 ? frames.map((f) => f.camera || "-").join("|") : "";
  if (strip.dataset.frames !== wanted) {
    strip.dataset.frames = wanted;
    strip.replaceChildren(...(frames.length > 1 ? frames : []).map((frame, at) => {
      const button = document.createElement("button");
      button.textContent = frame.camera || "-"; button.title = "camera " + (frame.camera || "") + " (↑ ↓)";
      button.onclick = () => { app.frame = at; render(); };
      return button;
    }));
  }
  [...strip.children].forEach((button, at) => button.setAttribute("aria-pressed", String(at === app.frame)));
  strip.hidden = frames.length < 2;
}

function markButtons(picture) {
  const marks = picture ? picture.frame : null;
  $("marks").hidden = !app.mayMark;
  document.querySelectorAll("#marks [data-rating]").forEach((b) => b.classList.toggle("on", Boolean(marks) && Number(b.dataset.rating) <= (marks.rating || 0) && b.dataset.rating !== "0"));
  document.querySelectorAll("#marks [data-label]").forEach((b) => { b.style.background = "var(--" + b.dataset.label + ")"; b.classList.toggle("on", Boolean(marks) && marks.label === b.dataset.label); });
  document.querySelectorAll("#marks [data-pick]").forEach((b) => b.setAttribute("aria-pressed", String(Boolean(marks) && (marks.pick || "none") === b.dataset.pick && b.dataset.pick !== "none")));
  $("whole-shot").hidden = !picture || picture.shot.frames.length < 2;
}

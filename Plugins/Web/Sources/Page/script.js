// The review screen's script, first part: the token and role, the shots (loaded a page at
// a time from `/api/shots`, and live from `/events`), marks (sent in order, batched while
// one request is under way), the keyboard, the shutter. grid.js and
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

const app = {
  role: "operator", mayMark: true, catalogue: true,
  shots: [], total: 0, provisional: 0, loading: new Set(),
  current: 0, chosen: [], reference: null, view: "loupe",
  filter: {}, generation: 0, histogram: null,
};
const keyOf = (shot) => shot ? (shot.shotID || "id" + shot.id) : null;
const currentShot = () => app.shots[app.current];

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
  return q.toString();
}
const filtered = () => filterQuery() !== "";

// A shot as an answer shows it, before the catalogue has recorded it.
function fromPhoto(photo) {
  return { provisional: true, id: null, shotID: photo.shotID, number: photo.id, state: photo.state, time: photo.time, trigger: photo.trigger,
           cause: photo.cause || null, message: photo.message || null, rating: 0, label: null, pick: null, files: [],
           preview: photo.preview, thumbnail: photo.preview, full: null };
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
      app.total = page.total + app.provisional;
      page.shots.forEach((shot, i) => {
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
  app.shots = []; app.provisional = 0; app.loading.clear(); app.current = 0;
  try {
    const page = await get("/api/shots?limit=100" + (filtered() ? "&" + filterQuery() : ""));
    app.shots = page.shots; app.total = page.total;
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
  for (const [select, value] of [["filter-camera", shot.camera || shot.model], ["filter-session", shot.session]]) {
    if (value && ![...$(select).options].some((o) => o.value === value)) $(select).add(new Option(value, value));
  }
}

// A new answer: the shot goes on top at once; the page follows it unless the user looks
// at an older one, who gets the "new shot" badge instead.
function onPhoto(photo) {
  if (photo.state === "photoSuccess") app.stored += 1; else app.failed += 1;
  $("stored").textContent = app.stored; $("failed").textContent = app.failed;
  if (filtered() && app.catalogue) return;  // the catalogue's "shot" event tells whether it belongs
  insertOnTop(fromPhoto(photo), true);
}

function insertOnTop(shot, provisional) {
  const following = app.current === 0 && (app.view !== "grid" || $("grid").scrollTop < 4);
  app.shots.unshift(shot); app.total += 1;
  if (provisional) app.provisional += 1;
  if (!following) { app.current += 1; $("new-shot").hidden = false; }
  render();
}

// The catalogue recorded a shot: it has its id from now on (its marks can be sent).
function onRecorded(shot) {
  const index = app.shots.findIndex((s) => s && keyOf(s) === keyOf(shot));
  if (index >= 0) {
    const before = app.shots[index];
    if (before.provisional) { app.provisional -= 1; shot.preview = before.preview || shot.preview; }
    app.shots[index] = Object.assign(shot, pendingMarks(before));
  } else if (filtered()) {
    return void reload();
  } else {
    insertOnTop(shot, false);
  }
  noteChoices(shot);
  render(); flushMarks();
}

// A shot's marks changed (this page, another one, the socket, the command line).
function onMarked(shot) {
  const index = app.shots.findIndex((s) => s && s.id === shot.id);
  if (index < 0 || marksQueue.some((m) => m.shot === app.shots[index])) return;  // ours are still on their way
  app.shots[index] = Object.assign(app.shots[index], { rating: shot.rating, label: shot.label, pick: shot.pick });
  render();
}

// A copy of the shot's files was made (a mirror, an upload): its files as they are now.
function onCopied(shot) {
  const index = app.shots.findIndex((s) => s && s.id === shot.id);
  if (index < 0) return;
  app.shots[index] = Object.assign(app.shots[index], { files: shot.files });
  render();
}

// MARK: marks
const marksQueue = [];
let marksSending = false;
function pendingMarks(shot) {
  const marks = {};
  for (const entry of marksQueue) if (entry.shot === shot) Object.assign(marks, entry.change, entry.change.label === "none" ? { label: null } : {}, entry.change.pick === "none" ? { pick: null } : {});
  return { rating: shot.rating, label: shot.label, pick: shot.pick, ...marks };
}

function mark(shot, change, { undoing = false } = {}) {
  if (!shot || !app.mayMark) return;
  if (!undoing) {
    const before = {};
    if (change.rating !== undefined) before.rating = shot.rating || 0;
    if (change.label !== undefined) before.label = shot.label || "none";
    if (change.pick !== undefined || (change.rating !== undefined && shot.pick === "rejected")) before.pick = shot.pick || "none";
    undoStack.push({ shot, before });
    if (undoStack.length > 200) undoStack.shift();
  }
  if (change.rating !== undefined && shot.pick === "rejected" && change.pick === undefined) shot.pick = null;  // a rating clears a reject
  const local = { ...change };
  if (local.label === "none") local.label = null;
  if (local.pick === "none") local.pick = null;
  Object.assign(shot, local);
  marksQueue.push({ shot, change });
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
    const response = await fetch("/api/marks", { method: "POST", headers: { ...headers, "Content-Type": "application/json" },
                                                 body: JSON.stringify({ marks: batch.map((m) => ({ id: m.shot.id, ...m.change })) }) });
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
  { keys: "0–5", help: "rating", match: (k) => k >= "0" && k <= "5", run: (k, shot) => markAndAdvance(shot, { rating: Number(k) }) },
  { keys: "6 7 8 9", help: "label red, yellow, green, blue (again: clear)", match: (k) => k >= "6" && k <= "9",
    run: (k, shot) => { const label = LABELS[Number(k) - 6]; mark(shot, { label: shot && shot.label === label ? "none" : label }); } },
  { keys: "P · X · U", help: "pick · reject · clear the pick", match: (k) => k === "p" || k === "x" || k === "u",
    run: (k, shot) => markAndAdvance(shot, { pick: { p: "picked", x: "rejected", u: "none" }[k] }) },
  { keys: "Ctrl-Z", help: "undo the last mark (again: the one before)", ctrl: true, match: (k) => k === "z", run: () => undo() },
  { keys: "A", help: "after a rating or pick, go on to the next shot (on · off)", match: (k) => k === "a", run: () => toggleAdvance() },
  { keys: "← →", help: "grid: the cell to the left · right; loupe: older · newer shot; compare: the pane to the left · right",
    match: (k) => k === "ArrowLeft" || k === "ArrowRight", run: (k) => arrow(k === "ArrowRight" ? 1 : -1) },
  { keys: "↑ ↓", help: "a row up · down (grid)", match: (k) => (k === "ArrowUp" || k === "ArrowDown") && app.view === "grid",
    run: (k) => move(k === "ArrowDown" ? grid.columns : -grid.columns) },
  { keys: "Enter · E", help: "loupe", match: (k) => k === "Enter" || k === "e", run: () => setView("loupe") },
  { keys: "G · Esc", help: "grid", match: (k) => k === "g" || (k === "Escape" && app.view !== "grid"), run: () => setView("grid") },
  { keys: "C", help: "compare the chosen shots (click them in the grid); the framed pane takes the keys", match: (k) => k === "c", run: () => setView("compare") },
  { keys: "Z · click", help: "100 % on the spot · again: fit", match: (k) => k === "z", run: () => loupe.toggleZoom() },
  { keys: "+ −", help: "zoom in · out; drag to pan, pinch on a phone", match: (k) => k === "+" || k === "=" || k === "-",
    run: (k) => viewers().forEach((v) => v.zoomBy(k === "-" ? 0.5 : 2)) },
  { keys: "R", help: "pin this shot as the reference against the newest", match: (k) => k === "r", run: () => pin() },
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
  const k = event.key.length === 1 ? event.key.toLowerCase() : event.key, shot = focusedShot();
  const ctrl = event.ctrlKey || event.metaKey;
  const entry = KEYS.find((entry) => Boolean(entry.ctrl) === ctrl && entry.match(k));
  if (!entry) return;
  entry.run(k, shot);
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

// The arrows move as drawn: in the grid to the cell on that side; in compare, the focus
// to the pane on that side; in the loupe to the older (←) or newer (→) shot.
function arrow(by) {
  if (app.view === "grid") return move(by);
  if (app.view === "compare") return compare.focusBy(by);
  move(-by);
}

// Marks undone with Ctrl-Z: each mark remembers what it changed.
const undoStack = [];
function undo() {
  const last = undoStack.pop();
  if (!last) return;
  mark(last.shot, last.before, { undoing: true });
}

// After a rating or a pick, the next shot (A turns it on or off; kept in this browser).
function markAndAdvance(shot, change) {
  mark(shot, change);
  if (localStorage.getItem("shutterpipe-advance") === "on" && app.view === "loupe" && shot === currentShot()) move(1);
}
function toggleAdvance() {
  const on = localStorage.getItem("shutterpipe-advance") !== "on";
  localStorage.setItem("shutterpipe-advance", on ? "on" : "off");
  document.body.dataset.advance = on ? "on" : "off";
  if ($("advance")) $("advance").setAttribute("aria-pressed", String(on));
}

function move(by) {
  const next = Math.max(0, Math.min(app.total - 1, app.current + by));
  if (next === app.current) return;
  app.current = next;
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
  liveView.useGhost(currentShot());
  setView("live");
}

function pin() {
  app.reference = app.reference && keyOf(app.reference) === keyOf(currentShot()) ? null : currentShot();
  $("pin").setAttribute("aria-pressed", String(Boolean(app.reference)));
  if (app.reference) setView("compare"); else render();
}

function render() {
  $("empty").hidden = app.total > 0 || app.view === "live";
  $("count").textContent = app.total + " shot" + (app.total === 1 ? "" : "s");
  ensureLoaded(app.current, app.current + 2);
  if (app.view === "grid") grid.render();
  if (app.view === "loupe") { loupe.show(currentShot()); panel.show(currentShot()); }
  if (app.view === "compare") compare.render();
  markButtons(focusedShot());
}

function markButtons(shot) {
  $("marks").hidden = !app.mayMark;
  document.querySelectorAll("#marks [data-rating]").forEach((b) => b.classList.toggle("on", Boolean(shot) && Number(b.dataset.rating) <= (shot.rating || 0) && b.dataset.rating !== "0"));
  document.querySelectorAll("#marks [data-label]").forEach((b) => { b.style.background = "var(--" + b.dataset.label + ")"; b.classList.toggle("on", Boolean(shot) && shot.label === b.dataset.label); });
  document.querySelectorAll("#marks [data-pick]").forEach((b) => b.setAttribute("aria-pressed", String(Boolean(shot) && (shot.pick || "none") === b.dataset.pick && b.dataset.pick !== "none")));
}

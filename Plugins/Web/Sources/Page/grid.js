// The review screen's grid: every shot, newest first, in cells laid out by their index.
// Only the rows on screen (and one beyond each edge) exist in the page, and a cell's
// thumbnail is asked for only once scrolling has rested on it: a 10,000-shot session
// scrolls with a few dozen elements and loads only the thumbnails it shows.
const grid = {
  columns: 1, cellWidth: 160, cellHeight: 160, cells: new Map(), idle: 0, scheduled: false,

  layout() {
    const element = $("grid"), least = parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--cell")) || 180;
    this.columns = Math.max(1, Math.floor(element.clientWidth / least));
    this.cellWidth = element.clientWidth / this.columns;
    this.cellHeight = Math.round(this.cellWidth * 0.8 + 22);
    $("grid-space").style.height = Math.ceil(app.total / this.columns) * this.cellHeight + "px";
  },

  // The indexes on screen now.
  onScreen() {
    const element = $("grid");
    const first = Math.floor(element.scrollTop / this.cellHeight) * this.columns;
    const last = Math.min(app.total, Math.ceil((element.scrollTop + element.clientHeight) / this.cellHeight) * this.columns);
    return [first, last];
  },

  render() {
    if (app.view !== "grid") return;
    this.layout();
    const [first, last] = this.onScreen();
    const from = Math.max(0, first - this.columns), to = Math.min(app.total, last + this.columns);
    ensureLoaded(from, to);
    const wanted = new Map();
    for (let index = from; index < to; index++) { const shot = app.shots[index]; wanted.set(shot ? keyOf(shot) : "slot" + index, index); }
    for (const [key, cell] of this.cells) if (!wanted.has(key)) { cell.remove(); this.cells.delete(key); }
    for (const [key, index] of wanted) {
      let cell = this.cells.get(key);
      if (!cell) { cell = this.make(index); this.cells.set(key, cell); $("grid-space").appendChild(cell); }
      this.fill(cell, app.shots[index], index);
    }
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.loadThumbnails(), 90);
  },

  make(index) {
    const cell = document.createElement("div");
    cell.className = "cell";
    cell.innerHTML = '<div class="frame"><div class="picture"></div><div class="meta"></div></div>';
    cell.onclick = (event) => {
      const at = Number(cell.dataset.index);
      if (event.ctrlKey || event.metaKey) return void choose(app.shots[at]);
      const open = at === app.current;
      app.current = at;
      if (at === 0) $("new-shot").hidden = true;
      if (open) setView("loupe"); else render();
    };
    cell.ondblclick = () => { app.current = Number(cell.dataset.index); setView("loupe"); };
    return cell;
  },

  fill(cell, shot, index) {
    cell.dataset.index = index;
    cell.style.cssText = "left:" + (index % this.columns) * this.cellWidth + "px;top:" + Math.floor(index / this.columns) * this.cellHeight + "px;width:" + this.cellWidth + "px;height:" + this.cellHeight + "px";
    const failed = Boolean(shot) && (shot.state === "failed" || shot.state === "photoFailed");
    cell.className = "cell" + (shot ? " " + (failed ? "photoFailed" : "photoSuccess") : "") + (index === app.current ? " current" : "") +
      (shot && app.chosen.includes(shot) ? " chosen" : "") + (shot && shot.pick === "rejected" ? " rejected" : "");
    if (!shot) return;
    const picture = cell.querySelector(".picture");
    if (failed && !shot.preview) {
      if (picture.dataset.failed !== shot.cause) { picture.textContent = "✕ " + (shot.cause || "failed") + (shot.message ? ": " + shot.message : ""); picture.dataset.failed = shot.cause; }
      picture.title = shot.message || "";
    }
    const time = shot.taken || shot.time ? new Date(shot.time || shot.taken).toLocaleTimeString() : "";
    const meta = '<span class="stars-shown">' + "★".repeat(shot.rating || 0) + "</span>" +
      // A label is any text a sidecar held: only the known ones name a colour, and the text is escaped.
      (shot.label ? '<span class="dot" style="background:' + (LABELS.includes(shot.label) ? "var(--" + shot.label + ")" : "#ddd") + '" title="' + escapeHTML(shot.label) + '"></span>' : "") +
      (shot.pick ? '<span class="pick-' + shot.pick + '">' + (shot.pick === "picked" ? "⚑" : "✕") + "</span>" : "") +
      "<span>" + time + '</span><span class="camera">' + escapeHTML(shot.camera || shot.model || "") + "</span>";
    if (cell.querySelector(".meta").innerHTML !== meta) cell.querySelector(".meta").innerHTML = meta;
  },

  // Thumbnails for the cells on screen, once scrolling rested.
  loadThumbnails() {
    const [first, last] = this.onScreen();
    for (let index = first; index < last; index++) {
      const shot = app.shots[index], cell = shot && this.cells.get(keyOf(shot));
      const source = shot && (shot.thumbnail || shot.preview);
      if (!cell || !source || cell.dataset.source === source) continue;
      cell.dataset.source = source;
      const image = new Image();
      image.alt = "shot " + (shot.id || shot.number);
      image.decoding = "async";
      image.src = source;
      cell.querySelector(".picture").replaceChildren(image);
    }
    // For tests and bench-screen: when the first screen of thumbnails was complete, from the page's start.
    if (!window.gridReady) {
      const images = [...$("grid").querySelectorAll(".cell img")];
      if (images.length && images.length === last - first) Promise.all(images.map((i) => i.decode().catch(() => {}))).then(() => { if (!window.gridReady) window.gridReady = performance.now(); });
    }
  },

  // Scrolls so that the cell at `index` shows.
  reveal(index) {
    if (app.view !== "grid") return;
    this.layout();
    const element = $("grid"), top = Math.floor(index / this.columns) * this.cellHeight;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + this.cellHeight > element.scrollTop + element.clientHeight) element.scrollTop = top + this.cellHeight - element.clientHeight;
  },
};

function escapeHTML(text) { return String(text).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";"); }

// Ctrl-click: up to four shots to compare.
function choose(shot) {
  if (!shot) return;
  const at = app.chosen.indexOf(shot);
  if (at >= 0) app.chosen.splice(at, 1); else { app.chosen.push(shot); if (app.chosen.length > 4) app.chosen.shift(); }
  render();
}

$("grid").addEventListener("scroll", () => {
  if (grid.scheduled) return;
  grid.scheduled = true;
  requestAnimationFrame(() => { grid.scheduled = false; grid.render(); if ($("grid").scrollTop < 4 && app.current === 0) $("new-shot").hidden = true; });
});

// The review screen's grid: every shot, newest first, in cells laid out by their index.
// A shot of several cameras is one cell with its frames side by side (a camera filter
// narrows it to that camera's); cells are as wide as the widest shot needs. Only the rows
// on screen (and one beyond each edge) exist in the page, and a frame's thumbnail is asked
// for only once scrolling has rested on it: a 10,000-shot session scrolls with a few
// dozen elements and loads only the thumbnails it shows.
const grid = {
  columns: 1, cellWidth: 160, cellHeight: 160, perShot: 1, cells: new Map(), idle: 0, scheduled: false,
  // A focus stack's frames: each one's sharpness (shot id → the variance of the Laplacian
  // of its thumbnail, measured here as it loads), and the sharpest of each run.
  sharpness: new Map(), sharpest: new Set(),

  layout() {
    const element = $("grid"), least = parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--cell")) || 180;
    // As many frames side by side as the widest shot loaded has (four at most).
    this.perShot = Math.max(this.perShot, Math.min(4, app.framesPerShot || 1));
    this.columns = Math.max(1, Math.floor(element.clientWidth / (least * this.perShot)));
    this.cellWidth = element.clientWidth / this.columns;
    this.cellHeight = Math.round(this.cellWidth / this.perShot * 0.8 + 22);
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
      if (!cell) { cell = this.make(); this.cells.set(key, cell); $("grid-space").appendChild(cell); }
      this.fill(cell, app.shots[index], index);
    }
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.loadThumbnails(), 90);
  },

  make() {
    const cell = document.createElement("div");
    cell.className = "cell";
    // A click on a frame makes it the current one; a second click opens it in the loupe.
    cell.onclick = (event) => {
      const at = Number(cell.dataset.index), box = event.target.closest(".frame");
      const frame = box ? Number(box.dataset.frame) : 0;
      if (event.ctrlKey || event.metaKey) return void choose(pictureAt(at, frame));
      const open = at === app.current && frame === app.frame;
      app.current = at; app.frame = frame;
      if (at === 0) $("new-shot").hidden = true;
      if (open) setView("loupe"); else render();
    };
    cell.ondblclick = (event) => {
      const box = event.target.closest(".frame");
      app.current = Number(cell.dataset.index); app.frame = box ? Number(box.dataset.frame) : 0;
      setView("loupe");
    };
    return cell;
  },

  fill(cell, shot, index) {
    cell.dataset.index = index;
    cell.style.cssText = "left:" + (index % this.columns) * this.cellWidth + "px;top:" + Math.floor(index / this.columns) * this.cellHeight + "px;width:" + this.cellWidth + "px;height:" + this.cellHeight + "px";
    const failed = Boolean(shot) && (shot.state === "failed" || shot.state === "photoFailed");
    const frames = shot ? framesOf(shot) : [];
    // A sequence's frames, one run of it, read as one group: a band under each of them,
    // open at the first frame and closed at the last.
    const place = shot && shot.sequence;
    cell.className = "cell" + (shot ? " " + (failed ? "photoFailed" : "photoSuccess") : "") + (index === app.current ? " current" : "") + (frames.length > 1 ? " group" : "") +
      // Collapsed (one per sequence), the cell stands for its whole run: a closed band.
      (place ? " in-sequence" + (place.index === 1 || app.filter.collapse ? " sequence-first" : "") + (place.index === place.count || app.filter.collapse ? " sequence-last" : "") : "") +
      (shot && this.sharpest.has(shot.id) ? " sharpest" : "");
    if (!shot) return;
    // A box per frame, made again only when the frames change (a recorded shot, a filter).
    const layout = frames.map((frame) => frame.camera || "").join("|");
    if (cell.dataset.frames !== layout || cell.children.length !== frames.length) {
      cell.dataset.frames = layout;
      cell.dataset.source = "";
      cell.replaceChildren(...frames.map((frame, at) => {
        const box = document.createElement("div");
        box.className = "frame"; box.dataset.frame = at;
        box.innerHTML = '<div class="picture"></div><div class="meta"></div>';
        return box;
      }));
    }
    const time = shot.taken || shot.time ? new Date(shot.time || shot.taken).toLocaleTimeString() : "";
    frames.forEach((frame, at) => {
      const box = cell.children[at];
      box.dataset.camera = frame.camera || "";
      box.className = "frame" + (index === app.current && at === app.frame ? " current" : "") + (app.chosen.some((p) => p.shot === shot && p.frame === frame) ? " chosen" : "") +
        (frame.pick === "rejected" ? " rejected" : "");
      const picture = box.querySelector(".picture");
      if (failed && !frame.preview) {
        if (picture.dataset.failed !== shot.cause) { picture.textContent = "✕ " + (shot.cause || "failed") + (shot.message ? ": " + shot.message : ""); picture.dataset.failed = shot.cause; }
        picture.title = shot.message || "";
      }
      const meta = '<span class="stars-shown">' + "★".repeat(frame.rating || 0) + "</span>" +
        // A label is any text a sidecar held: only the known ones name a colour, and the text is escaped.
        (frame.label ? '<span class="dot" style="background:' + (LABELS.includes(frame.label) ? "var(--" + frame.label + ")" : "#ddd") + '" title="' + escapeHTML(frame.label) + '"></span>' : "") +
        (frame.pick ? '<span class="pick-' + frame.pick + '">' + (frame.pick === "picked" ? "⚑" : "✕") + "</span>" : "") +
        (at === 0 ? "<span>" + time + "</span>" : "") +
        (at === 0 && place ? '<span class="sequence" title="' + escapeHTML(place.kind + " '" + place.name + "', run " + place.run + (place.value ? ", " + (place.setting || "") + " " + place.value : "")) + '">' +
          escapeHTML(place.name) + (app.filter.collapse ? " ×" + place.count : " " + place.index + "/" + place.count) + (this.sharpest.has(shot.id) ? " ◎" : "") + "</span>" : "") +
        '<span class="camera">' + escapeHTML(frame.camera || (at === 0 ? shot.camera || shot.model || "" : "")) + "</span>";
      if (box.querySelector(".meta").innerHTML !== meta) box.querySelector(".meta").innerHTML = meta;
    });
  },

  // Thumbnails for the cells on screen, once scrolling rested.
  loadThumbnails() {
    const [first, last] = this.onScreen();
    let wanted = 0;
    for (let index = first; index < last; index++) {
      const shot = app.shots[index], cell = shot && this.cells.get(keyOf(shot));
      if (!cell) continue;
      framesOf(shot).forEach((frame, at) => {
        const source = frame.thumbnail || frame.preview, box = cell.children[at];
        if (!source || !box) return;
        wanted += 1;
        if (box.dataset.source === source) return;
        box.dataset.source = source;
        const image = new Image();
        image.alt = "shot " + (shot.id || shot.number) + (frame.camera ? " " + frame.camera : "");
        image.decoding = "async";
        if (at === 0 && shot.sequence && shot.sequence.kind === "focus stack") image.onload = () => this.measure(shot, image);
        image.src = source;
        box.querySelector(".picture").replaceChildren(image);
      });
    }
    // For tests and bench-screen: when the first screen of thumbnails was complete, from the page's start.
    if (!window.gridReady) {
      const images = [...$("grid").querySelectorAll(".cell img")];
      if (images.length && images.length >= wanted) Promise.all(images.map((i) => i.decode().catch(() => {}))).then(() => { if (!window.gridReady) window.gridReady = performance.now(); });
    }
  },

  // The sharpness of a focus stack's frame: the variance of the Laplacian (4 neighbours)
  // of its thumbnail's grey, as the tests compute it with Pillow from the photo.
  measure(shot, image) {
    if (this.sharpness.has(shot.id) || !image.naturalWidth) return;
    const canvas = document.createElement("canvas");
    canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
    const context = canvas.getContext("2d", { willReadFrequently: true });
    context.drawImage(image, 0, 0);
    const { data, width, height } = context.getImageData(0, 0, canvas.width, canvas.height);
    const grey = new Float32Array(width * height);
    for (let i = 0; i < grey.length; i++) grey[i] = 0.299 * data[4 * i] + 0.587 * data[4 * i + 1] + 0.114 * data[4 * i + 2];
    let sum = 0, squares = 0, count = 0;
    for (let y = 1; y < height - 1; y++) for (let x = 1; x < width - 1; x++) {
      const i = y * width + x, value = grey[i - 1] + grey[i + 1] + grey[i - width] + grey[i + width] - 4 * grey[i];
      sum += value; squares += value * value; count += 1;
    }
    this.sharpness.set(shot.id, count ? squares / count - (sum / count) ** 2 : 0);
    this.markSharpest();
  },

  // The sharpest frame of each run of a focus stack, once every frame of it loaded here
  // has been measured.
  markSharpest() {
    const runs = new Map();
    for (const shot of app.shots) {
      const place = shot && shot.sequence;
      if (!place || place.kind !== "focus stack" || shot.id === undefined) continue;
      const key = place.name + "#" + place.run + "#" + (shot.session || "") + "#" + (shot.sessionRun || "");
      if (!runs.has(key)) runs.set(key, []);
      runs.get(key).push(shot);
    }
    const sharpest = new Set();
    // Collapsed, a run shows one frame: none is the sharpest of the others.
    if (app.filter.collapse) runs.clear();
    for (const frames of runs.values()) {
      if (!frames.every((shot) => this.sharpness.has(shot.id))) continue;
      sharpest.add(frames.reduce((best, shot) => (this.sharpness.get(shot.id) > this.sharpness.get(best.id) ? shot : best)).id);
    }
    if ([...sharpest].join() !== [...this.sharpest].join()) { this.sharpest = sharpest; this.render(); }
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

// Ctrl-click: up to four frames to compare (of one shot or of several).
function choose(picture) {
  if (!picture) return;
  const at = app.chosen.findIndex((p) => p.shot === picture.shot && p.frame === picture.frame);
  if (at >= 0) app.chosen.splice(at, 1); else { app.chosen.push(picture); if (app.chosen.length > 4) app.chosen.shift(); }
  render();
}

$("grid").addEventListener("scroll", () => {
  if (grid.scheduled) return;
  grid.scheduled = true;
  requestAnimationFrame(() => { grid.scheduled = false; grid.render(); if ($("grid").scrollTop < 4 && app.current === 0) $("new-shot").hidden = true; });
});

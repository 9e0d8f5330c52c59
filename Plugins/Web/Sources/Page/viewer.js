// The review screen's loupe and compare: a ``Viewer`` shows one picture (a camera's frame
// of a shot: its preview, and at 100 % that frame's own files, never another camera's) fit to its box, or
// zoomed (100 % is one pixel of the photo on one pixel of the screen) on the spot
// clicked, pinched or scrolled at, and panned by dragging. Past what the preview holds it
// shows the photo's own pixels: lossless tiles of the full-size image, only those on
// screen; never an upscaled preview. loupe.js makes the loupe and the compare
// panes of them.
class Viewer {
  constructor(element, view, main) {
    this.element = element; this.view = view; this.main = main;
    element.classList.add("viewport");
    element.innerHTML = '<div class="layer"><img class="preview" alt=""><canvas class="clipping"></canvas><div class="tiles"></div></div><div class="caption"></div>';
    this.layer = element.querySelector(".layer"); this.preview = element.querySelector(".preview");
    this.clipping = element.querySelector("canvas"); this.tiles = element.querySelector(".tiles"); this.caption = element.querySelector(".caption");
    this.shot = null; this.frame = null; this.picture = null; this.full = null; this.tileImages = new Map(); this.pointers = new Map(); this.gesture = null; this.clip = null;
    this.preview.onload = () => this.painted();
    element.addEventListener("pointerdown", (e) => this.down(e));
    element.addEventListener("pointermove", (e) => this.moveTo(e));
    element.addEventListener("pointerup", (e) => this.up(e));
    element.addEventListener("pointercancel", (e) => { this.pointers.delete(e.pointerId); this.gesture = null; });
    element.addEventListener("wheel", (e) => { e.preventDefault(); this.zoomAround(e.clientX, e.clientY, this.scale() * Math.pow(1.0015, -e.deltaY)); }, { passive: false });
    new ResizeObserver(() => this.draw()).observe(element);
  }

  show(picture) {
    const shot = picture ? picture.shot : null, frame = picture ? picture.frame : null;
    // The same frame, recorded since (or its in-flight picture made sharper: shown anew).
    if (picture && this.picture && pictureKey(picture) === pictureKey(this.picture) && (frame.preview === this.shownPreview || !shot.inFlight)) {
      this.shot = shot; this.frame = frame; this.picture = picture;  // the same frame, recorded since: it may have its id and RAW now
      if (this.main) $("raw").hidden = !frame.hasRAW;
      if (this.view.zoom !== "fit") this.loadFull();
      return;
    }
    // The photo of the shot in flight on screen: the same picture, stored now. The early one
    // stays until the photo's own preview is decoded, then gives way: nothing blank between.
    const landed = this.shot && this.shot.inFlight && this.frame && this.frame.previewSource === "preview" && shot && !shot.inFlight
      && frame && frame.preview && !this.preview.hidden && shot.shotID && Number(String(shot.shotID).split("#").pop()) === this.shot.inFlight;
    if (landed) {
      this.shot = shot; this.frame = frame; this.picture = picture; this.full = null;
      const key = pictureKey(picture), next = new Image();
      next.onload = () => { if (pictureKey(this.picture) === key) this.preview.src = this.shownPreview = frame.preview; };
      next.src = frame.preview;
      if (this.main) $("raw").hidden = !frame.hasRAW;
      this.draw();
      return;
    }
    this.shot = shot; this.frame = frame; this.picture = picture; this.full = null; this.clip = null; this.fromRAW = false;
    if (this.main) { $("raw").hidden = !frame || !frame.hasRAW; $("raw").setAttribute("aria-pressed", "false"); }
    this.tiles.replaceChildren(); this.tileImages.clear();
    const failure = this.element.querySelector(".failed");
    if (failure) failure.remove();
    clearTimeout(this.dwell);
    if (!shot || !frame.preview) {
      this.preview.removeAttribute("src"); this.preview.hidden = true; this.caption.textContent = "";
      if (shot) { const note = document.createElement("div"); note.className = "failed"; note.textContent = "✕ " + (shot.cause || shot.state) + (shot.message ? ": " + shot.message : ""); this.element.appendChild(note); }
      return;
    }
    this.preview.hidden = false;
    this.caption.textContent = this.name() + " · loading";
    this.preview.src = this.shownPreview = frame.preview;
    // The full size is decoded once the shot is looked at (a burst passing by costs nothing), or at once for a zoom.
    if (this.view.zoom !== "fit") this.loadFull(); else this.dwell = setTimeout(() => this.loadFull(), 1000);
  }

  // "shot 12", and its camera for a frame of a shot of several ("shot 12 · B").
  name() {
    const which = this.shot.inFlight ? this.shot.inFlight + " (in flight)" : this.shot.id || this.shot.number;
    return "shot " + which + (this.frame.camera ? " · " + this.frame.camera : "");
  }

  // A compare pane's marks, over its picture: the frame's stars, label, pick.
  showMarks() {
    if (this.main) return;
    let marks = this.element.querySelector(".marks");
    if (!marks) { marks = document.createElement("div"); marks.className = "marks"; this.element.appendChild(marks); }
    const frame = this.frame;
    marks.textContent = !frame ? "" : (this.frame.camera ? this.frame.camera + " " : "") + ("★".repeat(frame.rating || 0) || "☆") + (frame.label ? " · " + frame.label : "") + (frame.pick === "picked" ? " · picked" : frame.pick === "rejected" ? " · rejected" : "");
    marks.dataset.shot = this.shot && this.shot.id ? this.shot.id : "";
    marks.dataset.camera = frame && frame.camera ? frame.camera : "";
  }

  // Noted once the preview is decoded and the next frame drew it (or 200 ms later: a page
  // the browser draws no frames for is not held up).
  painted() {
    const shot = this.shot, picture = this.picture;
    let noted = false;
    const note = () => {
      if (noted || pictureKey(picture) !== pictureKey(this.picture)) return;
      noted = true;
      window.paints.push({ shot: keyOf(shot), id: shot.id, camera: picture.frame.camera || null, at: performance.timeOrigin + performance.now(), main: this.main,
                           width: this.preview.naturalWidth });
      if (this.main) { document.body.dataset.shownWidth = this.preview.naturalWidth; document.body.dataset.shownSource = this.preview.src; }
    };
    this.preview.decode().catch(() => {}).then(() => { this.draw(); requestAnimationFrame(note); setTimeout(note, 200); });
  }

  // The full size's dimensions (decoding it on the server, once); a second call while
  // they are on their way gets the same promise, so a click then is not lost.
  loadFull() {
    const shot = this.shot, key = pictureKey(this.picture), source = this.source();
    if (!shot || !shot.id || !this.frame.full || this.full) return Promise.resolve();
    if (this.fullLoading && this.fullLoading.key === key && this.fullLoading.source === source) return this.fullLoading.promise;
    const promise = get("/api/shots/" + shot.id + "/image.json" + source).then((full) => { if (pictureKey(this.picture) === key && this.source() === source) { this.full = full; this.draw(); } })
      .catch(() => {}).finally(() => { if (this.fullLoading && this.fullLoading.promise === promise) this.fullLoading = null; });
    this.fullLoading = { key, source, promise };
    return promise;
  }

  // The query of this frame's full-size routes: its camera, and "from=raw" when the 100 %
  // view shows the RAW of a RAW+JPEG frame (that frame's own RAW).
  source() {
    const parts = [this.frame && this.frame.query, this.fromRAW && this.frame && this.frame.hasRAW ? "from=raw" : ""].filter(Boolean);
    return parts.length ? "?" + parts.join("&") : "";
  }

  // RAW+JPEG: the 100 % view from the RAW (LibRaw's demosaic), or back from the JPEG.
  toggleRAW() {
    if (!this.frame || !this.frame.hasRAW) return;
    this.fromRAW = !this.fromRAW;
    this.full = null; this.fullLoading = null;
    this.tiles.replaceChildren(); this.tileImages.clear();
    $("raw").setAttribute("aria-pressed", String(this.fromRAW));
    this.loadFull();
    this.draw();
  }

  dims() { return this.full ? [this.full.width, this.full.height] : [this.preview.naturalWidth, this.preview.naturalHeight]; }

  box() { const r = this.element.getBoundingClientRect(); return { left: r.left, top: r.top, width: r.width, height: r.height }; }

  fit() { const [W, H] = this.dims(), b = this.box(); return W ? Math.min(b.width / W, b.height / H) : 1; }

  // CSS pixels per pixel of the photo.
  scale() {
    const fit = this.fit();
    if (this.view.zoom === "fit" || !this.full) return fit;
    return this.view.zoom / devicePixelRatio;
  }

  draw() {
    const [W, H] = this.dims();
    if (!W || this.preview.hidden) return;
    const b = this.box(), scale = this.scale(), fit = this.fit();
    let x = b.width / 2 - this.view.cx * W * scale, y = b.height / 2 - this.view.cy * H * scale;
    x = W * scale <= b.width ? (b.width - W * scale) / 2 : Math.min(0, Math.max(b.width - W * scale, x));
    y = H * scale <= b.height ? (b.height - H * scale) / 2 : Math.min(0, Math.max(b.height - H * scale, y));
    x = Math.round(x * devicePixelRatio) / devicePixelRatio; y = Math.round(y * devicePixelRatio) / devicePixelRatio;  // tiles meet on whole pixels: no seams
    if (scale > fit) { this.view.cx = (b.width / 2 - x) / (W * scale); this.view.cy = (b.height / 2 - y) / (H * scale); }
    this.layer.style.transform = "translate(" + x + "px," + y + "px) scale(" + scale + ")";
    for (const element of [this.preview, this.clipping]) { element.style.width = W + "px"; element.style.height = H + "px"; }
    // The preview while it has at least as many pixels as the screen shows; beyond, the photo's own.
    const enough = !this.full || this.preview.naturalWidth >= W * scale * devicePixelRatio * 0.999;
    this.preview.style.visibility = enough ? "visible" : "hidden";
    this.tiles.hidden = enough;
    this.element.classList.toggle("zoomed", scale > fit * 1.001);
    this.element.classList.toggle("pixels", scale * devicePixelRatio > 1.001);
    const zoom = scale > fit * 1.001 ? Math.round(scale * devicePixelRatio * 100) + " %" : "fit";
    // Which picture is on screen: the camera's thumbnail while the shot is in flight, the
    // preview, or the photo's own pixels.
    const shown = !enough ? (this.fromRAW ? "full size, RAW" : "full size")
      : this.frame.previewSource && this.frame.previewSource !== "preview" ? this.frame.previewSource + " " + this.preview.naturalWidth + "×" + this.preview.naturalHeight
      : "preview " + this.preview.naturalWidth + " px";
    this.caption.textContent = this.name() + " · " + zoom + " · " + shown;
    // For tests: the zoom, what is shown, and where the photo's top-left corner is on the page.
    if (this.main) { document.body.dataset.zoom = zoom; document.body.dataset.shown = shown; document.body.dataset.origin = [b.left + x, b.top + y].join(","); }
    if (!enough) this.loadTiles(x, y, scale, b, W, H);
    this.drawClipping(enough);
  }

  loadTiles(x, y, scale, b, W, H) {
    const size = this.full.tileSize, shot = this.shot;
    const c0 = Math.max(0, Math.floor(-x / scale / size)), c1 = Math.min(Math.ceil(W / size), Math.ceil((b.width - x) / scale / size));
    const r0 = Math.max(0, Math.floor(-y / scale / size)), r1 = Math.min(Math.ceil(H / size), Math.ceil((b.height - y) / scale / size));
    for (let r = r0; r < r1; r++) for (let c = c0; c < c1; c++) {
      const key = c + "-" + r;
      if (this.tileImages.has(key)) continue;
      const tile = new Image();
      tile.style.left = c * size + "px"; tile.style.top = r * size + "px";
      tile.style.width = Math.min(size, W - c * size) + "px"; tile.style.height = Math.min(size, H - r * size) + "px";
      tile.onload = () => { if (shot === this.shot) { window.tilePaints.push({ shot: shot.id, tile: key, at: performance.timeOrigin + performance.now() }); if (this.main) document.body.dataset.tilesShown = this.tiles.querySelectorAll("img").length; } };
      const query = this.source();
      tile.src = withRole("/api/shots/" + shot.id + "/tiles/" + key + ".png" + query);
      this.tiles.appendChild(tile);
      this.tileImages.set(key, tile);
    }
  }

  // Highlights and shadows past their thresholds, over the preview (in red and blue).
  drawClipping(visible) {
    const high = $("clip-high").checked, low = $("clip-low").checked;
    this.clipping.hidden = !(this.main && visible && (high || low) && this.preview.naturalWidth);
    if (this.clipping.hidden) return;
    const highAt = Number($("clip-high-at").value), lowAt = Number($("clip-low-at").value), settings = [high, low, highAt, lowAt, this.preview.src].join();
    if (this.clip === settings) return;
    this.clip = settings;
    const w = this.preview.naturalWidth, h = this.preview.naturalHeight, source = document.createElement("canvas");
    source.width = w; source.height = h;
    const context = source.getContext("2d", { willReadFrequently: true });
    context.drawImage(this.preview, 0, 0);
    const pixels = context.getImageData(0, 0, w, h), overlay = new ImageData(w, h), p = pixels.data, o = overlay.data;
    for (let i = 0; i < p.length; i += 4) {
      const brightest = Math.max(p[i], p[i + 1], p[i + 2]);
      if (high && brightest >= highAt) { o[i] = 255; o[i + 3] = 220; } else if (low && brightest <= lowAt) { o[i + 1] = 90; o[i + 2] = 255; o[i + 3] = 220; }
    }
    this.clipping.width = w; this.clipping.height = h;
    this.clipping.getContext("2d").putImageData(overlay, 0, 0);
  }

  spread() { const [a, b] = [...this.pointers.values()]; return Math.hypot(a.x - b.x, a.y - b.y) || 1; }

  down(event) {
    this.element.setPointerCapture(event.pointerId);
    this.pointers.set(event.pointerId, { x: event.clientX, y: event.clientY, startX: event.clientX, startY: event.clientY });
    this.moved = false;
    if (this.pointers.size === 2) this.gesture = { spread: this.spread(), scale: this.scale() };
    if (!this.main && compare.focused !== this) compare.focus(this);
  }

  moveTo(event) {
    const point = this.pointers.get(event.pointerId);
    if (!point) return;
    const dx = event.clientX - point.x, dy = event.clientY - point.y;
    point.x = event.clientX; point.y = event.clientY;
    if (Math.abs(event.clientX - point.startX) + Math.abs(event.clientY - point.startY) > 4) this.moved = true;
    if (this.pointers.size === 2 && this.gesture) {
      const [a, b] = [...this.pointers.values()];
      this.zoomAround((a.x + b.x) / 2, (a.y + b.y) / 2, this.gesture.scale * this.spread() / this.gesture.spread);
    } else if (this.pointers.size === 1 && this.view.zoom !== "fit") {
      const [W, H] = this.dims(), scale = this.scale();
      this.view.cx -= dx / (W * scale); this.view.cy -= dy / (H * scale);
      this.changed();
    }
  }

  up(event) {
    const click = this.pointers.size === 1 && !this.moved;
    this.pointers.delete(event.pointerId);
    if (this.pointers.size < 2) this.gesture = null;
    if (click) this.toggleZoom(event.clientX, event.clientY);
  }

  // 100 % on the spot (the centre without one), or back to fit.
  toggleZoom(clientX, clientY) {
    const b = this.box();
    if (this.view.zoom !== "fit" && this.scale() > this.fit() * 1.001) return this.setZoom("fit");
    this.zoomAround(clientX ?? b.left + b.width / 2, clientY ?? b.top + b.height / 2, 1 / devicePixelRatio);
  }

  setZoom(zoom) {
    if (zoom === "fit") { this.view.zoom = "fit"; this.view.cx = 0.5; this.view.cy = 0.5; return this.changed(); }
    const b = this.box();
    this.zoomAround(b.left + b.width / 2, b.top + b.height / 2, zoom / devicePixelRatio);
  }

  zoomBy(factor) { const b = this.box(); this.zoomAround(b.left + b.width / 2, b.top + b.height / 2, this.scale() * factor); }

  // Zooms to `scale` keeping the point under (clientX, clientY) where it is; waits for the full size first.
  zoomAround(clientX, clientY, scale) {
    if (!this.shot || !this.shot.id) return;
    if (!this.full) { this.loadFull().then(() => { if (this.full) this.zoomAround(clientX, clientY, scale); }); return; }
    const [W, H] = this.dims(), b = this.box(), before = this.scale(), fit = this.fit();
    scale = Math.min(8 / devicePixelRatio, scale);
    if (scale <= fit * 1.001) return this.setZoom("fit");
    const x = b.width / 2 - this.view.cx * W * before, y = b.height / 2 - this.view.cy * H * before;
    const drawnX = W * before <= b.width ? (b.width - W * before) / 2 : Math.min(0, Math.max(b.width - W * before, x));
    const drawnY = H * before <= b.height ? (b.height - H * before) / 2 : Math.min(0, Math.max(b.height - H * before, y));
    const px = (clientX - b.left - drawnX) / before, py = (clientY - b.top - drawnY) / before;
    this.view.zoom = scale * devicePixelRatio;
    this.view.cx = (b.width / 2 - (clientX - b.left - px * scale)) / (W * scale);
    this.view.cy = (b.height / 2 - (clientY - b.top - py * scale)) / (H * scale);
    this.changed();
  }

  changed() { for (const viewer of viewers()) if (viewer.view === this.view) { if (viewer !== this && viewer.view.zoom !== "fit") viewer.loadFull(); viewer.draw(); } }
}

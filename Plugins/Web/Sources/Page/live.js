// The review screen's live view, for framing and focusing: each camera's stream
// (`/live/{camera}.mjpg`, read with `fetch` so that the token goes in a header and the
// newest frame is decoded, never a queue), one camera large or a wall of all of them.
// Over each frame the page draws the framing overlays (grid lines, an aspect mask, a
// ghost of an earlier shot) and the focus aids: a magnifier that crops the full-size
// frame (each frame pixel a block of 5 or 10, never smoothed) and focus peaking (an edge
// filter on the frame's luma). For tests and `scripts/bench-live`, `window.liveState`
// holds each camera's frames, latency and peaking figures.
// MARK: live view
window.liveState = {};     // camera → { frames, number, latencies, peaking: { ms, marked }, magnifier }
window.peakingTimes = [];  // each frame's peaking, in ms (performance marks)
const liveView = {
  cameras: [], shown: "", tiles: new Map(), ghost: null, point: { x: 0.5, y: 0.5 },
  options() {
    const custom = /^(\d+(?:\.\d+)?)\s*[:x×\/]\s*(\d+(?:\.\d+)?)$/.exec($("overlay-mask-custom").value.trim());
    const mask = $("overlay-mask").value === "custom" ? (custom ? Number(custom[1]) / Number(custom[2]) : null)
      : $("overlay-mask").value ? $("overlay-mask").value.split(":").map(Number).reduce((a, b) => a / b) : null;
    return { grid: $("overlay-grid").value, mask, ghost: Number($("ghost-opacity").value) / 100,
             magnify: Number($("magnify").value), peaking: $("peaking").checked,
             threshold: Number($("peaking-threshold").value) || 48, colour: $("peaking-colour").value };
  },
  // The cameras from /api/status; the view opens their streams.
  setCameras(cameras) {
    this.cameras = cameras.filter((c) => c.liveView).map((c) => c.name);
    const select = $("live-camera");
    select.replaceChildren(...this.cameras.map((name) => new Option(name, name)));
    if (this.cameras.length > 1) select.add(new Option("All cameras", ""), 0);
    select.value = this.cameras.length > 1 ? "" : this.cameras[0] || "";
    this.shown = select.value;
  },
  // Opens the streams to show, closes the others: a camera nobody watches stops its live view.
  open() {
    const wanted = app.view === "live" ? (this.shown ? [this.shown] : this.cameras) : [];
    for (const [name, tile] of this.tiles) if (!wanted.includes(name)) { tile.close(); this.tiles.delete(name); }
    for (const name of wanted) if (!this.tiles.has(name)) this.tiles.set(name, new LiveTile(name, this.cameras.indexOf(name)));
    const wall = $("live-wall");
    wall.replaceChildren(...wanted.map((name) => this.tiles.get(name).element));
    wall.style.setProperty("--live-columns", Math.ceil(Math.sqrt(wanted.length)) || 1);
    this.tiles.forEach((tile) => tile.drawOverlay());
    if (wanted.length) cameraControls.load();
  },
  redraw() { this.tiles.forEach((tile) => tile.drawOverlay()); },
  useGhost(shot) {
    if (!shot || !shot.preview) return;
    const image = new Image();
    image.onload = () => { this.ghost = { shot, image }; $("ghost-name").textContent = "ghost: " + ["#" + (shot.number || shot.id), ...(shot.files || []).slice(0, 1).map((f) => f.name)].join(" "); this.redraw(); };
    image.onerror = () => showError(new Error("the ghost's preview could not be loaded"));
    image.src = shot.preview;
  },
};

// One camera's stream and its canvases: the frame, then its peaking marks, then the overlays.
class LiveTile {
  constructor(camera, index) {
    this.camera = camera; this.index = index;
    this.element = document.createElement("div");
    this.element.className = "live-tile";
    this.element.dataset.camera = camera;
    this.element.innerHTML = '<canvas class="frame"></canvas><canvas class="overlay"></canvas><div class="caption"></div><div class="lens" hidden></div><div class="failed" hidden></div>';
    this.canvas = this.element.querySelector(".frame");
    this.overlay = this.element.querySelector(".overlay");
    this.context = this.canvas.getContext("2d");
    this.state = window.liveState[camera] = { frames: 0, number: 0, latencies: [], peaking: null, magnifier: null, width: 0, height: 0, fps: 0 };
    this.arrivals = [];
    this.controller = new AbortController();
    this.pending = null; this.decoding = false;
    this.work = {};  // peaking's buffers, this tile's own: tiles decode at the same time
    this.canvas.onclick = this.overlay.onclick = (event) => this.choosePoint(event);
    cameraControls.lensButtons(this);
    this.read();
  }

  close() { this.controller.abort(); }

  // The stream, as multipart parts: each part's Content-Length gives its JPEG.
  async read() {
    const path = "/live/" + encodeURIComponent(this.camera) + ".mjpg";
    try {
      const response = await fetch(path, { headers, signal: this.controller.signal, cache: "no-store" });
      if (!response.ok) { const body = await response.json().catch(() => ({})); return this.fail(body.error || response.statusText, body.fix); }
      const reader = response.body.getReader();
      let buffer = new Uint8Array(0);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const joined = new Uint8Array(buffer.length + value.length);
        joined.set(buffer); joined.set(value, buffer.length); buffer = joined;
        for (;;) {
          const end = headEnd(buffer);
          if (end < 0) break;
          const length = Number((/Content-Length:\s*(\d+)/i.exec(latin1(buffer.subarray(0, end))) || [])[1]);
          if (!(length > 0)) { buffer = buffer.slice(end + 4); continue; }
          if (buffer.length < end + 4 + length) break;
          this.arrived(buffer.slice(end + 4, end + 4 + length));
          buffer = buffer.slice(end + 4 + length);
        }
      }
      if (!this.controller.signal.aborted) this.fail("the live view stream ended", "the camera left photo mode or was disconnected; Enter starts it again");
    } catch (error) {
      if (error.name !== "AbortError") this.fail("live view: " + error.message);
    }
  }

  fail(message, fix) {
    const failed = this.element.querySelector(".failed");
    failed.hidden = false;
    failed.textContent = this.camera + ": " + message + (fix ? " — " + fix : "");
  }

  // The newest frame waits while one is decoded; older ones are dropped.
  arrived(jpeg) {
    if (this.decoding) { this.pending = jpeg; return; }
    this.decode(jpeg);
  }

  async decode(jpeg) {
    this.decoding = true;
    try {
      const stamp = /live view frame (\d+) at (\d{13})/.exec(latin1(jpeg.subarray(0, 400)));
      const bitmap = await createImageBitmap(new Blob([jpeg], { type: "image/jpeg" }));
      const options = liveView.options();
      const marks = options.peaking ? await peak(this.work, bitmap, options.threshold, options.colour) : null;
      this.paint(bitmap, stamp ? { number: Number(stamp[1]), at: Number(stamp[2]) } : null, marks);
      bitmap.close();
    } catch (error) {
      this.fail("a frame could not be decoded: " + error.message);
    } finally {
      this.decoding = false;
      if (this.pending) { const next = this.pending; this.pending = null; this.decode(next); }
    }
  }

  paint(bitmap, stamp, marks) {
    const W = bitmap.width, H = bitmap.height, options = liveView.options();
    if (this.canvas.width !== W || this.canvas.height !== H) {
      this.canvas.width = this.overlay.width = W; this.canvas.height = this.overlay.height = H;
      this.state.width = W; this.state.height = H;
      this.drawOverlay();
    }
    this.state.peaking = marks && { ms: marks.ms, marked: marks.marked, number: stamp && stamp.number };
    if (marks) { window.peakingTimes.push(marks.ms); if (window.peakingTimes.length > 3000) window.peakingTimes.splice(0, 1000); }
    const zoom = options.magnify;
    this.element.classList.toggle("magnified", zoom > 0);
    if (zoom) this.context.fillStyle = "#000", this.context.fillRect(0, 0, W, H);
    this.state.magnifier = place(this.context, bitmap, W, H, zoom, liveView.point);
    if (marks) place(this.context, marks.canvas, W, H, zoom, liveView.point);
    this.state.frames += 1;
    this.state.number = stamp ? stamp.number : this.state.frames;
    const now = performance.now();
    this.arrivals.push(now);
    while (this.arrivals[0] < now - 1000) this.arrivals.shift();
    this.state.fps = this.arrivals.length;
    this.element.querySelector(".caption").textContent = this.camera + " · " + this.state.fps + " fps";
    if (stamp) requestAnimationFrame(() => {
      const latency = performance.timeOrigin + performance.now() - stamp.at;
      this.state.latencies.push(latency);
      if (this.state.latencies.length > 3000) this.state.latencies.splice(0, 1000);
    });
  }

  // A click chooses the magnifier's point, in the frame's own coordinates.
  choosePoint(event) {
    const spot = this.frameAt(event.clientX, event.clientY);
    if (!spot || liveView.options().magnify) return;
    liveView.point = spot;
    liveView.redraw();
  }

  // Where the frame is drawn inside the canvas's box (object-fit: contain), in CSS pixels.
  frameBox() {
    const box = this.canvas.getBoundingClientRect(), W = this.canvas.width || 1, H = this.canvas.height || 1;
    const scale = Math.min(box.width / W, box.height / H);
    return { x: box.left + (box.width - W * scale) / 2, y: box.top + (box.height - H * scale) / 2, width: W * scale, height: H * scale };
  }

  frameAt(clientX, clientY) {
    const box = this.frameBox();
    const x = (clientX - box.x) / box.width, y = (clientY - box.y) / box.height;
    return x >= 0 && x <= 1 && y >= 0 && y <= 1 ? { x, y } : null;
  }

  // The ghost, the mask and the grid, in the frame's pixels; none while magnified.
  drawOverlay() {
    const W = this.overlay.width, H = this.overlay.height, o = liveView.options(), c = this.overlay.getContext("2d");
    c.clearRect(0, 0, W, H);
    if (!W || o.magnify) return;
    const ghost = liveView.ghost;
    if (ghost && o.ghost > 0) {
      const s = Math.min(W / ghost.image.naturalWidth, H / ghost.image.naturalHeight), w = ghost.image.naturalWidth * s, h = ghost.image.naturalHeight * s;
      c.globalAlpha = o.ghost;
      c.drawImage(ghost.image, (W - w) / 2, (H - h) / 2, w, h);
      c.globalAlpha = 1;
    }
    // The framed area: the whole frame, or the mask's ratio centred in it.
    let fx = 0, fy = 0, fw = W, fh = H;
    if (o.mask) {
      if (W / H > o.mask) { fw = Math.round(H * o.mask); fx = Math.round((W - fw) / 2); } else { fh = Math.round(W / o.mask); fy = Math.round((H - fh) / 2); }
      c.fillStyle = "rgba(0, 0, 0, 0.6)";
      c.fillRect(0, 0, W, fy); c.fillRect(0, fy + fh, W, H - fy - fh); c.fillRect(0, fy, fx, fh); c.fillRect(fx + fw, fy, W - fx - fw, fh);
    }
    const line = Math.max(1, Math.round(W / 640));
    c.fillStyle = "rgba(255, 255, 255, 0.75)";
    const fractions = { thirds: [1 / 3, 2 / 3], quarters: [1 / 4, 1 / 2, 3 / 4] }[o.grid] || [];
    for (const f of fractions) {
      c.fillRect(Math.round(fx + fw * f - line / 2), fy, line, fh);
      c.fillRect(fx, Math.round(fy + fh * f - line / 2), fw, line);
    }
    if (o.grid === "cross") {
      const arm = Math.round(Math.min(fw, fh) / 16), cx = Math.round(fx + fw / 2), cy = Math.round(fy + fh / 2);
      c.fillRect(cx - arm, cy - line, 2 * arm, 2 * line); c.fillRect(cx - line, cy - arm, 2 * line, 2 * arm);
    }
    if (liveView.point.x !== 0.5 || liveView.point.y !== 0.5) {
      c.strokeStyle = "rgba(255, 210, 60, 0.9)"; c.lineWidth = line;
      c.strokeRect(liveView.point.x * W - W / 20, liveView.point.y * H - H / 20, W / 10, H / 10);
    }
  }
}

// Draws `source` (the frame or its marks) whole, or magnified: a crop of W/zoom × H/zoom
// frame pixels around the point, each pixel a zoom × zoom block (no smoothing).
function place(context, source, W, H, zoom, point) {
  if (!zoom) { context.drawImage(source, 0, 0); return null; }
  const w = Math.floor(W / zoom), h = Math.floor(H / zoom);
  const x0 = Math.max(0, Math.min(W - w, Math.round(point.x * W - w / 2))), y0 = Math.max(0, Math.min(H - h, Math.round(point.y * H - h / 2)));
  const ox = Math.floor((W - w * zoom) / 2), oy = Math.floor((H - h * zoom) / 2);
  context.imageSmoothingEnabled = false;
  context.drawImage(source, x0, y0, w, h, ox, oy, w * zoom, h * zoom);
  context.imageSmoothingEnabled = true;
  return { zoom, x0, y0, width: w, height: h, ox, oy };
}

// Focus peaking: where the luma's central differences (|dx| + |dy|) reach the threshold,
// a pixel of the colour; the rest transparent. Timed as a performance measure. `work`
// keeps the buffers from one frame to the next.
async function peak(work, bitmap, threshold, colour) {
  const start = performance.now();
  const W = bitmap.width, H = bitmap.height, n = W * H;
  if (!work.canvas || work.canvas.width !== W || work.canvas.height !== H) {
    work.canvas = new OffscreenCanvas(W, H); work.context = work.canvas.getContext("2d", { willReadFrequently: true });
    work.marks = new OffscreenCanvas(W, H); work.context2 = work.marks.getContext("2d");
    work.luma = new Uint8Array(n); work.image = new ImageData(W, H);
  }
  const pixels = await framePixels(work, bitmap), luma = work.luma;
  for (let i = 0; i < n; i++) { const p = pixels[i]; luma[i] = ((p & 255) * 77 + ((p >>> 8) & 255) * 150 + ((p >>> 16) & 255) * 29) >> 8; }
  const out = new Uint32Array(work.image.data.buffer);  // its border stays transparent: only the inside is written
  const r = parseInt(colour.slice(1, 3), 16), g = parseInt(colour.slice(3, 5), 16), b = parseInt(colour.slice(5, 7), 16);
  const mark = ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
  let marked = 0;
  for (let y = 1; y < H - 1; y++) {
    for (let i = y * W + 1, end = y * W + W - 1; i < end; i++) {
      const dx = luma[i + 1] - luma[i - 1], dy = luma[i + W] - luma[i - W];
      if ((dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy) >= threshold) { out[i] = mark; marked++; } else out[i] = 0;
    }
  }
  work.context2.putImageData(work.image, 0, 0);
  const ms = performance.measure("peaking", { start, end: performance.now() }).duration;
  performance.clearMeasures("peaking");  // a session's hours of frames would pile up in the timeline
  return { canvas: work.marks, marked, ms };
}

// The frame's RGBA pixels: copied out of a VideoFrame (WebCodecs: into one buffer, kept),
// else read back from a canvas.
async function framePixels(work, bitmap) {
  const W = bitmap.width, H = bitmap.height;
  if (typeof VideoFrame === "function" && work.copyWorks !== false) {
    try {
      if (!work.rgba || work.rgba.length !== W * H * 4) work.rgba = new Uint8Array(W * H * 4);
      const frame = new VideoFrame(bitmap, { timestamp: 0 });
      try { await frame.copyTo(work.rgba, { format: "RGBA" }); } finally { frame.close(); }
      work.copyWorks = true;
      return new Uint32Array(work.rgba.buffer);
    } catch (error) {
      work.copyWorks = false;  // this browser cannot: the canvas from now on
    }
  }
  work.context.drawImage(bitmap, 0, 0);
  return new Uint32Array(work.context.getImageData(0, 0, W, H).data.buffer);
}

function headEnd(bytes) {
  for (let i = 0; i + 3 < bytes.length; i++) if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  return -1;
}
const latin1 = (bytes) => String.fromCharCode.apply(null, bytes.subarray(0, Math.min(bytes.length, 4096)));

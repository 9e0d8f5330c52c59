// The review screen's loupe and compare panes, each a viewer.js `Viewer` showing one
// picture (a frame of a shot; the panes of one compare share their zoom and centre), and
// the panel beside the loupe: the histogram, the clipping overlays and the exposure.
const loupe = new Viewer($("loupe-view"), { zoom: "fit", cx: 0.5, cy: 0.5 }, true);

const compare = {
  viewers: [], view: { zoom: "fit", cx: 0.5, cy: 0.5 }, focused: null,
  // The pinned reference and the newest shot's frame of its camera; else the frames chosen
  // in the grid; else the frames of a shot of several cameras side by side; else this
  // shot and the one before.
  pictures() {
    if (app.reference) {
      const newest = app.shots[0];
      if (!newest || keyOf(newest) === keyOf(app.reference.shot)) return [app.reference];
      return [app.reference, { shot: newest, frame: framesOf(newest)[frameLike(newest, app.reference.frame.camera)] }];
    }
    if (app.chosen.length >= 2) return app.chosen;
    const shot = currentShot();
    if (shot && framesOf(shot).length >= 2) return framesOf(shot).map((frame) => ({ shot, frame }));
    return [currentPicture(), app.shots[app.current + 1] && pictureAt(app.current + 1, frameLike(app.shots[app.current + 1], currentPicture() && currentPicture().frame.camera))].filter(Boolean);
  },
  render() {
    const pictures = this.pictures();
    while (this.viewers.length < pictures.length) { const element = document.createElement("div"); element.id = "compare-" + this.viewers.length; $("compare").appendChild(element); this.viewers.push(new Viewer(element, this.view, false)); }
    while (this.viewers.length > pictures.length) this.viewers.pop().element.remove();
    pictures.forEach((picture, index) => { this.viewers[index].show(picture); this.viewers[index].element.classList.toggle("reference", Boolean(app.reference) && index === 0); });
    // One pane always has the focus, and shows it: the keys and the mark buttons act on it.
    if (!this.viewers.includes(this.focused)) this.focused = this.viewers[0] || null;
    this.viewers.forEach((viewer) => { viewer.element.classList.toggle("focused", viewer === this.focused); viewer.showMarks(); });
    document.body.dataset.compareFocus = this.focused && this.focused.shot ? (this.focused.shot.id || "") : "";
  },
  focus(viewer) { this.focused = viewer; render(); },
  focusBy(by) {
    const at = this.viewers.indexOf(this.focused);
    const next = this.viewers[Math.max(0, Math.min(this.viewers.length - 1, at + by))];
    if (next) this.focus(next);
  },
};

// The picture the keys and the mark buttons act on: in compare, the framed pane's (never
// one that is not on screen); elsewhere the current one.
function focusedPicture() {
  if (app.view !== "compare") return currentPicture();
  if (!compare.viewers.includes(compare.focused)) compare.focused = compare.viewers[0] || null;
  return compare.focused && compare.focused.picture ? compare.focused.picture : null;
}
function viewers() { return app.view === "compare" ? compare.viewers : [loupe]; }

const panel = {
  frame: null,
  show(picture) {
    const shot = picture && picture.shot, frame = picture && picture.frame;
    this.exposure(shot, frame);
    if (frame === this.frame && (!shot || shot.id === this.id)) return;
    this.frame = frame; this.id = shot && shot.id;
    app.histogram = null;
    const canvas = $("histogram");
    canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
    if (shot && shot.id && frame.preview) {
      get("/api/shots/" + shot.id + "/histogram.json" + (frame.query ? "?" + frame.query : "")).then((histogram) => { if (this.frame === frame) { app.histogram = histogram; this.draw(histogram); document.body.dataset.histogramFor = shot.id; } }).catch(() => {});
    }
  },
  // Luma filled in grey, red, green and blue as lines; the top is the highest count between the ends (clipping does not flatten the rest).
  draw(histogram) {
    const canvas = $("histogram"), context = canvas.getContext("2d"), w = canvas.width, h = canvas.height;
    const top = Math.max(1, ...["luma", "red", "green", "blue"].flatMap((channel) => histogram[channel].slice(1, 255)));
    context.clearRect(0, 0, w, h);
    context.fillStyle = "#8a8a8a";
    histogram.luma.forEach((count, value) => { const bar = Math.min(h, count / top * h); context.fillRect(value * w / 256, h - bar, w / 256 + 0.5, bar); });
    for (const [channel, colour] of [["red", "#ff4d4d"], ["green", "#4dff6a"], ["blue", "#4d8dff"]]) {
      context.strokeStyle = colour; context.beginPath();
      histogram[channel].forEach((count, value) => { const at = h - Math.min(h, count / top * h); if (value) context.lineTo(value * w / 256, at); else context.moveTo(0, at); });
      context.stroke();
    }
  },
  exposure(shot, frame) {
    const rows = [];
    if (shot) {
      const files = frame && shot.frames.length > 1 ? frame.files || [] : shot.files || [];
      const size = (bytes) => bytes > 1e6 ? (bytes / 1e6).toFixed(1) + " MB" : Math.round(bytes / 1e3) + " kB";
      if (shot.exposureTime) rows.push(["Shutter", shot.exposureTime + " s"]);
      if (shot.aperture) rows.push(["Aperture", "f/" + shot.aperture]);
      if (shot.iso) rows.push(["ISO", shot.iso]);
      if (shot.focalLength) rows.push(["Focal length", shot.focalLength + " mm"]);
      if (shot.lens) rows.push(["Lens", shot.lens]);
      if (frame && frame.camera) rows.push(["Camera", frame.camera + " (" + shot.frames.length + " cameras)"]);
      else if (shot.camera || shot.model) rows.push(["Camera", [shot.camera, shot.model].filter(Boolean).join(" · ")]);
      if (shot.taken || shot.time) rows.push(["Time", shot.taken || new Date(shot.time).toLocaleString()]);
      for (const file of files) rows.push([file.kind, file.name + " · " + size(file.size) + (file.missing ? " · missing" : "")]);
      // Where the files went after the shot: mirrors and uploads, as they are made.
      const copies = [...new Set(files.flatMap((file) => file.copies || []))];
      const shortName = (place) => place.startsWith(":") ? place.replace(/^:([a-z0-9]+)[^:]*:/, "$1:") : place.split("/").filter(Boolean).pop();
      if (copies.length) rows.push(["Copies", copies.map(shortName).join(" · ")]);
      if (shot.shotID) rows.push(["Shot", shot.shotID]);
      if (shot.state === "failed" || shot.state === "photoFailed") rows.push(["Failed", (shot.cause || "") + (shot.message ? ": " + shot.message : "")]);
    }
    const html = rows.map(([name, value]) => "<dt>" + escapeHTML(name) + "</dt><dd>" + escapeHTML(value) + "</dd>").join("");
    if ($("exposure").innerHTML !== html) $("exposure").innerHTML = html;
  },
};

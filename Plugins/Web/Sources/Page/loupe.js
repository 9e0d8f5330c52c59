// The review screen's loupe and compare panes, each a viewer.js `Viewer` (the
// panes of one compare share their zoom and centre), and the panel beside the loupe:
// the histogram, the clipping overlays and the exposure.
const loupe = new Viewer($("loupe-view"), { zoom: "fit", cx: 0.5, cy: 0.5 }, true);

const compare = {
  viewers: [], view: { zoom: "fit", cx: 0.5, cy: 0.5 }, focused: null,
  // The pinned reference and the newest; else the shots chosen in the grid; else this one and the one before.
  shots() {
    if (app.reference) { const newest = app.shots[0]; return newest && keyOf(newest) !== keyOf(app.reference) ? [app.reference, newest] : [app.reference]; }
    if (app.chosen.length >= 2) return app.chosen;
    return [app.shots[app.current], app.shots[app.current + 1]].filter(Boolean);
  },
  render() {
    const shots = this.shots();
    while (this.viewers.length < shots.length) { const element = document.createElement("div"); element.id = "compare-" + this.viewers.length; $("compare").appendChild(element); this.viewers.push(new Viewer(element, this.view, false)); }
    while (this.viewers.length > shots.length) this.viewers.pop().element.remove();
    shots.forEach((shot, index) => { this.viewers[index].show(shot); this.viewers[index].element.classList.toggle("reference", Boolean(app.reference) && index === 0); });
    // One pane always has the focus, and shows it: the keys and the mark buttons act on it.
    if (!this.viewers.includes(this.focused)) this.focused = this.viewers[0] || null;
    this.viewers.forEach((viewer) => { viewer.element.classList.toggle("focused", viewer === this.focused); viewer.showMarks(); });
    document.body.dataset.compareFocus = this.focused && this.focused.shot ? (this.focused.shot.id || "") : "";
  },
  focus(viewer) { this.focused = viewer; this.render(); markButtons(focusedShot()); },
  focusBy(by) {
    const at = this.viewers.indexOf(this.focused);
    const next = this.viewers[Math.max(0, Math.min(this.viewers.length - 1, at + by))];
    if (next) this.focus(next);
  },
};

// The shot the keys and the mark buttons act on: in compare, the framed pane's (never a
// shot that is not on screen); elsewhere the current one.
function focusedShot() {
  if (app.view !== "compare") return currentShot();
  if (!compare.viewers.includes(compare.focused)) compare.focused = compare.viewers[0] || null;
  return compare.focused ? compare.focused.shot : null;
}
function viewers() { return app.view === "compare" ? compare.viewers : [loupe]; }

const panel = {
  shot: null,
  show(shot) {
    this.exposure(shot);
    if (shot === this.shot && (!shot || shot.id === this.id)) return;
    this.shot = shot; this.id = shot && shot.id;
    app.histogram = null;
    const canvas = $("histogram");
    canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
    if (shot && shot.id && shot.preview) {
      get("/api/shots/" + shot.id + "/histogram.json").then((histogram) => { if (this.shot === shot) { app.histogram = histogram; this.draw(histogram); document.body.dataset.histogramFor = shot.id; } }).catch(() => {});
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
  exposure(shot) {
    const rows = [];
    if (shot) {
      const size = (bytes) => bytes > 1e6 ? (bytes / 1e6).toFixed(1) + " MB" : Math.round(bytes / 1e3) + " kB";
      if (shot.exposureTime) rows.push(["Shutter", shot.exposureTime + " s"]);
      if (shot.aperture) rows.push(["Aperture", "f/" + shot.aperture]);
      if (shot.iso) rows.push(["ISO", shot.iso]);
      if (shot.focalLength) rows.push(["Focal length", shot.focalLength + " mm"]);
      if (shot.lens) rows.push(["Lens", shot.lens]);
      if (shot.camera || shot.model) rows.push(["Camera", [shot.camera, shot.model].filter(Boolean).join(" · ")]);
      if (shot.taken || shot.time) rows.push(["Time", shot.taken || new Date(shot.time).toLocaleString()]);
      for (const file of shot.files || []) rows.push([file.kind, file.name + " · " + size(file.size) + (file.missing ? " · missing" : "")]);
      // Where the files went after the shot: mirrors and uploads, as they are made.
      const copies = [...new Set((shot.files || []).flatMap((file) => file.copies || []))];
      const shortName = (place) => place.startsWith(":") ? place.replace(/^:([a-z0-9]+)[^:]*:/, "$1:") : place.split("/").filter(Boolean).pop();
      if (copies.length) rows.push(["Copies", copies.map(shortName).join(" · ")]);
      if (shot.shotID) rows.push(["Shot", shot.shotID]);
      if (shot.state === "failed" || shot.state === "photoFailed") rows.push(["Failed", (shot.cause || "") + (shot.message ? ": " + shot.message : "")]);
    }
    const html = rows.map(([name, value]) => "<dt>" + escapeHTML(name) + "</dt><dd>" + escapeHTML(value) + "</dd>").join("");
    if ($("exposure").innerHTML !== html) $("exposure").innerHTML = html;
  },
};

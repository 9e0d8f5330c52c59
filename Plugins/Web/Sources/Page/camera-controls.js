// The review screen's camera controls, the operator's only: each camera's settings with
// their values and choices (`GET /api/settings`), changed through `POST /api/settings`
// (the path `shutterpipe set` takes: between shots, confirmed, or refused with the
// camera's reason; for a rig, one change to every camera at once), and the lens buttons
// on each live tile (`POST /api/lens`), shown only where the camera can drive its lens.
// MARK: camera controls
const MAIN_SETTINGS = ["iso", "shutterspeed", "shutterspeed2", "f-number", "aperture", "whitebalance", "imageformat", "imagequality",
                       "drivemode", "capturemode", "focusmode", "exposurecompensation", "expprogram", "meteringmode", "colortemperature"];
window.lensAnswers = [];     // each lens button's answer, for tests
window.settingsAnswers = []; // each settings change's answer
const cameraControls = {
  settings: null, loading: null,
  load(again) {
    if (app.role !== "operator" || (this.loading && !again)) return this.loading;
    this.loading = get("/api/settings").then((settings) => {
      this.settings = settings;
      this.fill();
      liveView.tiles.forEach((tile) => this.lensButtons(tile));
      document.body.dataset.settingsLoaded = "yes";
    }).catch((error) => { this.loading = null; this.say("camera settings: " + error.message + (error.fix ? " — " + error.fix : ""), false); });
    return this.loading;
  },
  camera(name) { return this.settings && this.settings.cameras.find((c) => c.name === name); },

  // Near and far in three sizes, and autofocus: only what this camera can do.
  lensButtons(tile) {
    const bar = tile.element.querySelector(".lens"), camera = this.camera(tile.camera);
    if (!camera || app.role !== "operator") { bar.hidden = true; return; }
    const buttons = [];
    if (camera.lens.drive) {
      for (const [move, step, text] of [["near", 3, "≪≪≪"], ["near", 2, "≪≪"], ["near", 1, "≪"], ["far", 1, "≫"], ["far", 2, "≫≫"], ["far", 3, "≫≫≫"]]) {
        buttons.push(this.lensButton("lens-" + tile.index + "-" + move + "-" + step, text, move + " " + step, { move, step }, tile.camera));
      }
    }
    if (camera.lens.autofocus) buttons.push(this.lensButton("lens-" + tile.index + "-af", "AF", "autofocus", { autofocus: true }, tile.camera));
    bar.replaceChildren(...buttons);
    bar.hidden = buttons.length === 0;
  },
  lensButton(id, text, title, body, camera) {
    const button = document.createElement("button");
    Object.assign(button, { id, textContent: text, title: "focus " + title });
    button.onclick = async () => {
      button.disabled = true;
      try {
        const answer = await this.send("/api/lens", { camera, ...body });
        window.lensAnswers.push(answer);
        const now = answer.ok && (answer.body.applied || [])[0];
        this.say(answer.ok ? camera + ": focus " + title + (now ? ", " + now.key + " now " + now.value : "") : camera + ": " + refusal(answer.body), answer.ok);
      } finally { button.disabled = false; }
    };
    return button;
  },

  // The settings of the chosen camera (the first one's for "all cameras"), the main ones first.
  fill() {
    const select = $("settings-camera"), before = select.value, cameras = this.settings.cameras;
    select.replaceChildren(...cameras.map((c) => new Option(c.name, c.name)));
    if (cameras.length > 1) select.add(new Option("All cameras", ""), 0);
    select.value = [...select.options].some((o) => o.value === before) ? before : select.options[0].value;
    const camera = this.camera(select.value) || cameras[0];
    const groups = new Map([["main", []]]);
    for (const setting of camera ? camera.settings : []) {
      const group = MAIN_SETTINGS.includes(setting.key) ? "main" : setting.section || "other";
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group).push(setting);
    }
    $("settings-list").replaceChildren(...[...groups].filter(([, list]) => list.length).map(([group, list]) => {
      const details = document.createElement("details");
      details.open = group === "main";
      details.innerHTML = "<summary></summary>";
      details.firstChild.textContent = group === "main" ? "Exposure and format" : group;
      for (const setting of list) details.appendChild(this.row(setting));
      return details;
    }));
  },
  row(setting) {
    const label = document.createElement("label"), name = document.createElement("span");
    label.className = "setting"; name.textContent = setting.label || setting.key; name.title = setting.key;
    let control;
    if (setting.readOnly || setting.kind === "button") {
      control = document.createElement("output"); control.textContent = setting.value;
    } else if (setting.kind === "menu" && setting.choices) {
      control = document.createElement("select");
      const choices = setting.choices.includes(setting.value) ? setting.choices : [setting.value, ...setting.choices];
      control.replaceChildren(...choices.map((c) => new Option(c, c)));
      control.value = setting.value;
    } else if (setting.kind === "toggle") {
      control = document.createElement("input"); control.type = "checkbox"; control.checked = setting.value === "1";
    } else {
      control = document.createElement("input");
      if (setting.kind === "range" && setting.range) Object.assign(control, { type: "number", min: setting.range.minimum, max: setting.range.maximum, step: setting.range.step || "any" });
      control.value = setting.value;
    }
    control.id = "setting-" + setting.key;
    control.onchange = () => this.change(setting.key, control.type === "checkbox" ? (control.checked ? "1" : "0") : control.value);
    label.append(name, control);
    return label;
  },
  async change(key, value) {
    const camera = $("settings-camera").value;
    this.say("setting " + key + " to " + value + (camera ? " on " + camera : " on every camera") + "…", true);
    const answer = await this.send("/api/settings", { ...(camera ? { camera } : {}), changes: { [key]: value } });
    const applied = answer.ok && (answer.body.applied || []).map((s) => (s.camera ? s.camera + " " : "") + s.key + " = " + s.value).join(", ");
    this.say(answer.ok ? applied || key + " = " + value : "refused: " + refusal(answer.body), answer.ok);
    await this.load(true);  // the camera's values as they are now: a refusal puts the old one back
    window.settingsAnswers.push(answer);
  },
  async send(path, body) {
    try {
      const response = await fetch(path, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify(body) });
      return { ok: response.ok, status: response.status, body: await response.json().catch(() => ({})) };
    } catch (error) {
      return { ok: false, status: 0, body: { error: "no answer: " + error.message } };
    }
  },
  say(text, ok) { $("settings-state").textContent = text; $("settings-state").className = ok ? "" : "photoFailed"; },
};
const refusal = (body) => (body.error || "refused") + (body.fix ? " — " + body.fix : "");

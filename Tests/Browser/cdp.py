#!/usr/bin/env python3
"""Drives a real browser (Debian's chromium-headless-shell) through the DevTools protocol
for the web trigger's tests, with nothing but the standard library.

  cdp.py URL STEP...

Steps, run in order; each prints one JSON line (or fails with exit 1):
  wait:EXPRESSION         until the JavaScript EXPRESSION is true (20 s at most)
  eval:EXPRESSION         prints its value
  click:ELEMENT-ID        a real mouse click (press and release) at the element's centre
  tap:CSS-SELECTOR        the same at the centre of the first element the selector finds (with Ctrl held: tap:Ctrl+SELECTOR)
  key:KEYS                real key presses, one after another, as typed (key:4, key:5544), or one named key
                          (key:ArrowLeft, ArrowRight, ArrowUp, ArrowDown, Enter, Escape), or a letter with Ctrl (key:Ctrl+z),
                          or a digit with Shift (key:Shift+3: "#" on a US keyboard, at the key Digit3)
  pinch:ELEMENT-ID         two fingers spread apart over the element (a phone's zoom; needs a mobile viewport)
  viewport:W,H,SCALE,MOBILE   the window as a phone or a screen (e.g. 390,844,3,1), then the page again
  screenshot:FILE         a PNG of the page
"""
import base64, json, os, shutil, signal, socket, struct, subprocess, sys, tempfile, time, urllib.request


class Socket:
    """A WebSocket client (RFC 6455), enough for DevTools: text frames, masked."""

    def __init__(self, url):
        rest = url[len("ws://"):]
        hostport, path = rest.split("/", 1)
        host, port = hostport.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=120)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, hostport, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise SystemExit("no websocket: %r" % head)
        self.next_id = 0

    def send(self, method, **params):
        self.next_id += 1
        payload = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        header = bytes([0x81])
        length = len(payload)
        if length < 126:
            header += bytes([0x80 | length])
        elif length < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", length)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", length)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        while True:
            message = json.loads(self.receive())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit("%s: %s" % (method, message["error"]))
                return message.get("result", {})

    def exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise SystemExit("the browser closed the connection")
            data += chunk
        return data

    def receive(self):
        message = b""
        while True:
            first, second = self.exactly(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self.exactly(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self.exactly(8))[0]
            message += self.exactly(length)
            if first & 0x80:
                return message.decode()


def evaluate(page, expression):
    result = page.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
    if "exceptionDetails" in result:
        raise SystemExit("%s: %s" % (expression, result["exceptionDetails"].get("text")))
    return result["result"].get("value")


def descendants(root):
    """The processes under `root` (its zygotes and renderers), read from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    stat = f.read()
                parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def main():
    url, steps = sys.argv[1], sys.argv[2:]
    # A SIGTERM (timeout, a test's deadline) ends this script through its cleanup.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit("stopped by SIGTERM"))
    profile = tempfile.mkdtemp(prefix="shutterpipe-browser-")
    # In this script's process group: a test that kills the group (its deadline) kills the
    # browser, its zygotes and renderers with it.
    browser = subprocess.Popen(["chromium-headless-shell", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
                                "--user-data-dir=" + profile, "--window-size=900,700", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               # Below the tests' own priority: its processes yield the cores to them.
                               preexec_fn=lambda: os.nice(10))
    try:
        active = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not os.path.exists(active) or not open(active).read().strip():
            if time.time() > deadline or browser.poll() is not None:
                raise SystemExit("the browser did not start")
            time.sleep(0.05)
        port = open(active).read().split()[0]
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port))
        page = Socket(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
        page.send("Page.enable")
        page.send("Page.navigate", url=url)
        for step in steps:
            kind, _, argument = step.partition(":")
            if kind == "wait":
                # Generous: it ends a wait that would never end, and never judges speed (a
                # shot and its preview took over 20 s with every core busy).
                deadline = time.time() + 60
                while not evaluate(page, "(() => { try { return Boolean(%s); } catch (error) { return false; } })()" % argument):
                    if time.time() > deadline:
                        raise SystemExit("never true: %s; the page: %s" % (argument, evaluate(page, "document.body ? document.body.innerText : ''")))
                    time.sleep(0.1)
                print(json.dumps({"wait": argument, "ok": True}))
            elif kind == "eval":
                print(json.dumps({"eval": argument, "value": evaluate(page, argument)}))
            elif kind == "click":
                box = evaluate(page, "(() => { const r = document.getElementById(%s).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(argument))
                for event in ("mousePressed", "mouseReleased"):
                    page.send("Input.dispatchMouseEvent", type=event, x=box[0], y=box[1], button="left", clickCount=1)
                print(json.dumps({"click": argument, "at": box}))
            elif kind == "tap":
                ctrl = argument.startswith("Ctrl+")
                selector = argument[5:] if ctrl else argument
                box = evaluate(page, "(() => { const e = document.querySelector(%s); if (!e) return null; const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(selector))
                if box is None:
                    raise SystemExit("nothing to tap: %s" % selector)
                for event in ("mousePressed", "mouseReleased"):
                    page.send("Input.dispatchMouseEvent", type=event, x=box[0], y=box[1], button="left", clickCount=1, modifiers=2 if ctrl else 0)
                print(json.dumps({"tap": argument, "at": box}))
            elif kind == "key":
                named = {"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40, "Enter": 13, "Escape": 27}
                if argument.startswith("Shift+") and len(argument) == 7 and argument[-1].isdigit():
                    # A digit with Shift held (modifiers: 8): the key is its US symbol, the code the digit's.
                    digit = argument[-1]
                    char = ")!@#$%^&*("[int(digit)]
                    page.send("Input.dispatchKeyEvent", type="keyDown", key=char, code="Digit" + digit, text=char, windowsVirtualKeyCode=ord(digit), modifiers=8)
                    page.send("Input.dispatchKeyEvent", type="keyUp", key=char, code="Digit" + digit, windowsVirtualKeyCode=ord(digit), modifiers=8)
                    print(json.dumps({"keys": argument}))
                    continue
                if argument.startswith("Ctrl+") and len(argument) == 6:
                    # One letter with Ctrl held (modifiers: 2), as a real Ctrl-Z.
                    char = argument[-1]
                    code = ord(char.upper())
                    page.send("Input.dispatchKeyEvent", type="rawKeyDown", key=char, code="Key" + char.upper(), windowsVirtualKeyCode=code, modifiers=2)
                    page.send("Input.dispatchKeyEvent", type="keyUp", key=char, code="Key" + char.upper(), windowsVirtualKeyCode=code, modifiers=2)
                    print(json.dumps({"keys": argument}))
                    continue
                if argument in named:
                    code = named[argument]
                    page.send("Input.dispatchKeyEvent", type="rawKeyDown", key=argument, code=argument, windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)
                    page.send("Input.dispatchKeyEvent", type="keyUp", key=argument, code=argument, windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)
                for char in ([] if argument in named else argument):
                    page.send("Input.dispatchKeyEvent", type="keyDown", key=char, text=char)
                    page.send("Input.dispatchKeyEvent", type="keyUp", key=char)
                print(json.dumps({"keys": argument}))
            elif kind == "pinch":
                x, y = evaluate(page, "(() => { const r = document.getElementById(%s).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(argument))
                fingers = lambda spread: [{"x": x - spread, "y": y, "id": 0}, {"x": x + spread, "y": y, "id": 1}]
                page.send("Input.dispatchTouchEvent", type="touchStart", touchPoints=fingers(20))
                for step in range(1, 13):
                    page.send("Input.dispatchTouchEvent", type="touchMove", touchPoints=fingers(20 + step * 10))
                page.send("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])
                print(json.dumps({"pinch": argument, "at": [x, y]}))
            elif kind == "viewport":
                width, height, scale, mobile = argument.split(",")
                page.send("Emulation.setDeviceMetricsOverride", width=int(width), height=int(height), deviceScaleFactor=float(scale), mobile=mobile == "1")
                if mobile == "1":
                    page.send("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
                page.send("Page.navigate", url=url)
                print(json.dumps({"viewport": argument}))
            elif kind == "screenshot":
                data = base64.b64decode(page.send("Page.captureScreenshot", format="png")["data"])
                open(argument, "wb").write(data)
                print(json.dumps({"screenshot": argument, "bytes": len(data)}))
            else:
                raise SystemExit("unknown step %r" % step)
    finally:
        # The browser and everything under it: its zygotes and renderers outlive it otherwise.
        for pid in descendants(browser.pid) + [browser.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        browser.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()

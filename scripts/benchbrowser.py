"""A chromium-headless-shell (Debian's) kept open for a whole benchmark run, driven over
the DevTools protocol with Tests/Browser/cdp.py: for the benchmarks of the web page
(bench-screen, bench-live)."""
import json, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "Browser"))
import cdp  # noqa: E402


class Browser:
    """A chromium-headless-shell kept open for the whole run."""

    def __init__(self, width=1600, height=1000):
        self.profile = tempfile.mkdtemp(prefix="shutterpipe-bench-browser-")
        self.process = subprocess.Popen(["chromium-headless-shell", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
                                         "--user-data-dir=" + self.profile, "--window-size=%d,%d" % (width, height), "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        active = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not os.path.exists(active) or not open(active).read().strip():
            if time.time() > deadline:
                raise SystemExit("the browser did not start")
            time.sleep(0.05)
        port = open(active).read().split()[0]
        import urllib.request
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port))
        self.page = cdp.Socket(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
        self.page.send("Page.enable")

    def open(self, url):
        self.page.send("Page.navigate", url=url)
        self.wait("document.body && document.body.dataset.ready == 'yes'")

    def eval(self, expression):
        return cdp.evaluate(self.page, expression)

    def wait(self, expression, limit=120):
        deadline = time.time() + limit
        while not self.eval("(() => { try { return Boolean(%s); } catch (e) { return false; } })()" % expression):
            if time.time() > deadline:
                raise SystemExit("never true: %s" % expression)
            time.sleep(0.01)

    def until_paint(self, predicate, limit=60):
        """Waits inside the page until `window.paints` (the loupe's paint records) holds one
        that `predicate` (a JavaScript function of a record) accepts; false after `limit`
        seconds. One DevTools call, resolved by the page's own push: a poll every few
        milliseconds is a round trip each, whose CPU (the browser's and ours) the program
        under test lost on two cores."""
        return self.eval("""new Promise((resolve) => {
          const found = () => window.paints.some(%s);
          if (found()) return resolve(true);
          const push = window.paints.push;
          const timer = setTimeout(() => { window.paints.push = push; resolve(false); }, %d);
          window.paints.push = function (...records) {
            const count = push.apply(this, records);
            if (found()) { clearTimeout(timer); window.paints.push = push; resolve(true); }
            return count;
          };
        })""" % (predicate, int(limit * 1000)))

    def key(self, char):
        self.page.send("Input.dispatchKeyEvent", type="keyDown", key=char, text=char)
        self.page.send("Input.dispatchKeyEvent", type="keyUp", key=char)

    def click(self, element):
        box = self.eval("(() => { const r = document.getElementById(%s).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()" % json.dumps(element))
        for kind in ("mousePressed", "mouseReleased"):
            self.page.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def close(self):
        for pid in cdp.descendants(self.process.pid) + [self.process.pid]:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

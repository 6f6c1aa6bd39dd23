#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_ui_browser.py - the web view (/ui/) in a real browser: Debian's headless Chromium,
driven over the DevTools protocol (python3-websocket), against real tiletuned daemons on free
loopback ports.

1. A daemon with a finished `sim` job: the jobs list has its row, the job page draws one SVG
   point per successful trial (convergence and model-vs-measurement plots), the parameter bars,
   Spearman, the best config's args; a screenshot goes to $TT_ARTIFACT_DIR (CI artifact).  The
   same pages without JavaScript are complete tables; the shape page shows a CI verdict.
2. A daemon whose `cmd:` toolchain takes 0.5 s a trial: the page of the running job, loaded
   once, updates itself over SSE until the job is done (points grow, state changes).
3. With `ui = false` the routes answer 404.
4. `tlctl tune --wait` on a terminal (a pseudo-terminal from the pty module) draws the
   convergence curve under its progress bar.

Run by ctest (tests/CMakeLists.txt) with TT_SOURCE_DIR and TT_BIN_DIR set.  Prints the plain
closing line "N passed, N failed"; exits 1 on any failure.
"""
import json
import os
import pty
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import websocket  # Debian python3-websocket

SRC = os.environ.get("TT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("TT_BIN_DIR", os.path.join(SRC, "build", "bin"))
ARTIFACTS = os.environ.get("TT_ARTIFACT_DIR", os.path.join(BIN, "..", "artifacts"))
SANITIZED = bool(os.environ.get("TT_SANITIZED"))
SLOW = 3 if SANITIZED else 1
TOKEN = "ui-browser-secret"
RESULTS = {"passed": 0, "failed": 0}


def check(cond, what):
    RESULTS["passed" if cond else "failed"] += 1
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Daemon:
    """A real tiletuned on a free port with a temporary SQLite database."""

    def __init__(self, tmp, name, extra=()):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.log = open(os.path.join(tmp, name + ".log"), "w")
        digest = subprocess.check_output([os.path.join(BIN, "tiletuned"), "hash-token", TOKEN],
                                         text=True).strip()
        tokens = json.dumps([{"name": "ui", "secret_sha256": digest, "scopes": "read,tune,admin"}])
        cmd = [os.path.join(BIN, "tiletuned"), "serve", "--listen", "127.0.0.1:%d" % self.port,
               "--db", "sqlite:" + os.path.join(tmp, name + ".db"), "--tokens", tokens,
               "--workers", "1", "--work-dir", os.path.join(tmp, name + "-work")] + list(extra)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30 * SLOW
        while time.time() < deadline:
            try:
                if self.get("/healthz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("daemon %s did not become healthy (log %s)" % (name, self.log.name))

    def request(self, method, path, body=None, token=True):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if token:
            req.add_header("Authorization", "Bearer " + TOKEN)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")

    def get(self, path):
        return self.request("GET", path, token=False)

    def json(self, method, path, body=None):
        status, text = self.request(method, path, body)
        return status, json.loads(text) if text.strip() else None

    def wait_job(self, job, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            _, j = self.json("GET", "/v1/jobs/%d" % job)
            if j["state"] in ("done", "failed", "cancelled"):
                return j
            time.sleep(0.1)
        raise RuntimeError("job %d did not finish" % job)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class Browser:
    """Headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(self, tmp):
        exe = find_chromium()
        if not exe:
            raise RuntimeError("chromium is not installed (deploy/install-deps.sh installs it)")
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-dev-shm-usage", "--remote-debugging-port=0", "--remote-allow-origins=*",
             "--user-data-dir=" + os.path.join(tmp, "chromium"), "--window-size=1280,1600",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.time() + 60
        while time.time() < deadline and port is None:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            if "DevTools listening on ws://" in line:
                port = int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        if port is None:
            raise RuntimeError("chromium did not start its DevTools endpoint")
        targets = []
        while not targets and time.time() < deadline:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10) as r:
                targets = [t for t in json.load(r) if t.get("type") == "page"]
            time.sleep(0.1)
        self.ws = websocket.create_connection(targets[0]["webSocketDebuggerUrl"], timeout=60)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": 1600, "deviceScaleFactor": 1, "mobile": False})

    def call(self, method, params=None):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params or {}}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self.event(msg)

    def event(self, msg):
        """A DevTools event that arrived while waiting for an answer (ignored here)."""

    def goto(self, url):
        self.call("Page.navigate", {"url": url})
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.eval("document.readyState") == "complete":
                return
            time.sleep(0.05)
        raise RuntimeError("page did not load: " + url)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        return r.get("result", {}).get("value")

    def wait_for(self, expr, timeout=20):
        deadline = time.time() + timeout * SLOW
        while time.time() < deadline:
            if self.eval(expr):
                return True
            time.sleep(0.05)
        return False

    def screenshot(self, path):
        r = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        import base64
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.kill()
            self.proc.wait()


GEMM = {"M": 1024, "N": 1024, "K": 1024, "dtype": "float16"}


def finished_job(d, b):
    status, ans = d.json("POST", "/v1/tune", {"template": "gemm", "target": "a2", "problem": GEMM,
                                               "backend": "sim", "strategy": "model-refine",
                                               "budget": {"trials": 24}})
    check(status == 201 or status == 202, "sim job submitted (%d)" % status)
    job = ans["job"]
    d.wait_job(job, 120 * SLOW)
    _, tr = d.json("GET", "/v1/jobs/%d/trials?limit=1000" % job)
    trials = tr["trials"]
    ok = [t for t in trials if t["status"] == "ok" and t.get("median_us", 0) > 0]
    pred = [t for t in ok if t.get("predicted_us", 0) > 0]
    values = sum(len({json.dumps(t["config"][k]) for t in ok}) for k in ok[0]["config"])

    # jobs list, rendered by the server and kept live by the script
    b.goto(d.url + "/ui/")
    check(b.eval("document.querySelectorAll('#jobs tbody tr').length") == 1, "jobs list: one row")
    check(b.eval("document.querySelector('#jobs tbody tr').dataset.job") == str(job),
          "jobs list: the row is the job")
    check(b.wait_for("document.getElementById('jobs').dataset.refreshed >= '1'", 10),
          "jobs list: refreshed from /v1/jobs by the script")
    check("done" in b.eval("document.querySelector('#jobs tbody tr').textContent"),
          "jobs list: the state after the refresh")

    # job page
    b.goto(d.url + "/ui/jobs/%d" % job)
    check(b.wait_for("document.getElementById('job').dataset.updates >= '1'"), "job page: plots drawn")
    n_conv = b.eval("document.querySelectorAll('#plot-convergence svg circle.trial').length")
    check(n_conv == len(ok), "convergence: one point per successful trial (%s of %d)" % (n_conv, len(ok)))
    check(b.eval("!!document.querySelector('#plot-convergence svg polyline.best')"),
          "convergence: the best-so-far line")
    n_sc = b.eval("document.querySelectorAll('#plot-scatter svg circle.trial').length")
    check(n_sc == len(pred), "scatter: one point per predicted trial (%s of %d)" % (n_sc, len(pred)))
    rho = b.eval("document.getElementById('spearman') && document.getElementById('spearman').dataset.rho")
    check(rho is not None and rho != "" and -1 <= float(rho) <= 1, "scatter: Spearman shown (%s)" % rho)
    check(b.eval("!!document.querySelector('#plot-scatter polygon.band')"), "scatter: the error band")
    n_bars = b.eval("document.querySelectorAll('#plot-params svg rect.bar').length")
    check(n_bars == values, "params: one bar per value seen (%s of %d)" % (n_bars, values))
    check(b.eval("document.querySelectorAll('#trials tbody tr').length") == len(trials),
          "trials table: every trial")
    args = b.eval("document.getElementById('best-args').textContent")
    check(bool(args) and args.startswith("--") and "block_M=" in args, "best config as args: %s" % args)
    check(b.eval("!!document.querySelector('#trace button')"), "sim job: the trace button")
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "ui-job.png")
    b.screenshot(shot)
    check(os.path.getsize(shot) > 10000, "screenshot saved: " + shot)

    # the trace the button fetches is a Chrome trace of the simulator
    b.eval("document.querySelector('#trace button').click()")
    check(b.wait_for("!!document.querySelector('#trace a[download]')", 30),
          "trace: downloadable after the click")

    # without JavaScript: the server-rendered tables are complete
    status, html = d.get("/ui/jobs/%d" % job)
    check(status == 200 and html.count("<tr><td>") >= len(trials), "job page without JS: trial rows")
    status, html = d.get("/ui/")
    check(status == 200 and 'data-job="%d"' % job in html, "jobs list without JS: the row")
    return job


def shape_page(d, job):
    status, ans = d.json("POST", "/v1/check", {"entries": [
        {"template": "gemm", "target": "a2", "problem": GEMM, "samples_us": [1e6, 1e6, 1e6]}]})
    check(status == 200 and ans["entries"][0]["verdict"] == "regressed" and ans["history"] is True,
          "check: a regressed verdict, recorded")
    status, ans = d.json("GET", "/v1/checks?template=gemm&target=a2")
    check(status == 200 and len(ans["checks"]) == 1 and ans["checks"][0]["verdict"] == "regressed",
          "GET /v1/checks: the history")
    status, html = d.get("/ui/shapes?template=gemm&target=a2")
    check(status == 200 and 'class="verdict regressed"' in html and "/ui/jobs/%d" % job in html,
          "shape page: best per shape with the check history")
    status, _ = d.get("/ui/jobs/999999")
    check(status == 404, "job page of an unknown job: 404")
    status, _ = d.get("/ui/assets/nothing.js")
    check(status == 404, "unknown asset: 404")
    status, body = d.get("/ui/assets/app.js")
    check(status == 200 and "EventSource" in body, "app.js served from the binary")


SLOW_RUN = r"""#!/bin/sh
# a toolchain run step that takes 0.5 s and prints a latency from the config's BLOCK
sleep 0.5
b=$(printf '%s' "$TT_CONFIG_JSON" | sed -n 's/.*"BLOCK":\([0-9]*\).*/\1/p')
echo "{\"latency_us\": [$((1000 / b + 5))], \"correct\": true}"
"""


def live_job(tmp, b):
    run = os.path.join(tmp, "slow_run.sh")
    with open(run, "w") as f:
        f.write(SLOW_RUN)
    toolchains = json.dumps({"slow": {"build": "true", "run": "sh " + run,
                                      "build_timeout": 30, "run_timeout": 30}})
    d = Daemon(tmp, "live", ["--templates-dir", os.path.join(SRC, "tests", "data", "templates-cmd"),
                             "--toolchains", toolchains])
    try:
        status, ans = d.json("POST", "/v1/tune", {"template": "fake_vec", "target": "a2",
                                                   "problem": {"N": 4096}, "backend": "cmd:slow",
                                                   "strategy": "random", "budget": {"trials": 12}})
        check(status in (201, 202), "slow cmd: job submitted (%d)" % status)
        job = ans["job"]
        b.goto(d.url + "/ui/jobs/%d" % job)
        seen = []
        deadline = time.time() + 120 * SLOW
        while time.time() < deadline:
            st = b.eval("(function(){var j=document.getElementById('job');"
                        "return [j.dataset.state||'', +(j.dataset.points||0), +(j.dataset.updates||0)];})()")
            if st and (not seen or st != seen[-1]):
                seen.append(st)
            if st and st[0] == "done":
                break
            time.sleep(0.1)
        final = d.wait_job(job, 60 * SLOW)
        _, tr = d.json("GET", "/v1/jobs/%d/trials?limit=1000" % job)
        n_ok = len([t for t in tr["trials"] if t["status"] == "ok"])
        partial = [s for s in seen if 0 < s[1] < n_ok]
        check(final["state"] == "done", "slow job finished")
        check(bool(partial), "running page showed partial progress: %s" % seen[:6])
        check(bool(seen) and seen[-1][0] == "done" and seen[-1][1] == n_ok,
              "page updated itself to the final state (%s)" % (seen[-1] if seen else None))
        check(bool(seen) and seen[-1][2] >= 2, "page redrew on progress events (%s updates)" %
              (seen[-1][2] if seen else 0))
    finally:
        d.stop()


def ui_off(tmp):
    d = Daemon(tmp, "off", ["--ui", "false"])
    try:
        status, body = d.get("/ui/")
        check(status == 404 and '"not_found"' in body, "ui = false: /ui/ answers 404 (JSON)")
        status, _ = d.get("/ui/assets/app.js")
        check(status == 404, "ui = false: assets 404")
    finally:
        d.stop()


def tlctl_live_curve(d):
    """tlctl tune --wait with stderr on a terminal: braille curve under the progress bar."""
    master, slave = pty.openpty()
    env = dict(os.environ, TILETUNE_URL=d.url, TILETUNE_TOKEN=TOKEN, COLUMNS="70", TERM="xterm")
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([os.path.join(BIN, "tlctl"), "tune", "gemm", "-p",
                          "M=2048,N=2048,K=1024,dtype=float16", "-t", "a2", "--budget", "16",
                          "--wait"], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    deadline = time.time() + 120 * SLOW
    while time.time() < deadline:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    p.wait(timeout=30)
    os.close(master)
    text = out.decode("utf-8", "replace")
    braille = sum(1 for ch in text if 0x2801 <= ord(ch) <= 0x28FF)
    check(p.returncode == 0, "tlctl tune --wait on a terminal: exit 0 (%s)" % p.returncode)
    check(braille > 0 and "x: trial" in text and "\x1b[" in text,
          "tlctl tune --wait: the live curve under the progress bar (%d braille dots)" % braille)


def main():
    tmp = tempfile.mkdtemp(prefix="tt-ui-")
    b = None
    daemons = []
    try:
        b = Browser(tmp)
        d = Daemon(tmp, "sim")
        daemons.append(d)
        job = finished_job(d, b)
        shape_page(d, job)
        tlctl_live_curve(d)
        live_job(tmp, b)
        ui_off(tmp)
    except Exception as e:  # a failure of the harness is a failure of the test
        check(False, "harness: %r (logs in %s)" % (e, tmp))
    finally:
        for d in daemons:
            d.stop()
        if b:
            b.close()
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    if RESULTS["failed"] == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if RESULTS["failed"] or RESULTS["passed"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

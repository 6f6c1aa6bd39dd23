#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_ui_edge.py - the web view (/ui/) at its edges, in Debian's headless Chromium over the
DevTools protocol (helpers from test_ui_browser.py), against real tiletuned daemons:

1. A `sim` job of more than 1000 trials (the API's page): the plots read every trial (one point
   each), the table says which trials it lists.  No JavaScript error on the pages.
2. Errors are pages: an unknown job and a hostile template name on the shape page answer the
   API's status with its message HTML-escaped (an injected handler never runs), the shape
   form kept; every /ui/ answer carries the Content-Security-Policy and its companions.
3. The copy button says what happened when the clipboard refuses (text selected for Ctrl+C);
   every plot has an accessible name.
4. The jobs list, open while the first job is submitted, drops its "No jobs yet" line, does
   not poll while its tab is hidden and refreshes when shown again; the
   page of a running `cmd:` job ends with the final state, best config and trial rows, and a
   failed job's page draws no plot and offers no trace.

Run by ctest with TT_SOURCE_DIR and TT_BIN_DIR; prints "N passed, N failed", exits 1 on failure.
"""
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_ui_browser as ui  # noqa: E402  (the Daemon and Browser helpers)

check = ui.check
HOSTILE = "<img src=x onerror=window.__xss=1>"


class Browser(ui.Browser):
    """The helper's browser, keeping the page's JavaScript errors and console messages."""

    def __init__(self, tmp):
        self.events = []
        super().__init__(tmp)
        self.call("Log.enable")

    def event(self, msg):
        if msg.get("method") in ("Runtime.exceptionThrown", "Log.entryAdded") or (
                msg.get("method") == "Runtime.consoleAPICalled"
                and msg["params"].get("type") == "error"):
            self.events.append(msg)

    def errors(self):
        out, self.events = self.events, []
        return [json.dumps(m["params"])[:300] for m in out]


def headers(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.headers


def many_trials(d, b):
    status, ans = d.json("POST", "/v1/tune", {"template": "gemm", "target": "a2",
                                               "problem": ui.GEMM, "backend": "sim",
                                               "strategy": "random", "budget": {"trials": 1100}})
    check(status in (201, 202), "1100-trial sim job submitted (%d)" % status)
    job = ans["job"]
    final = d.wait_job(job, 300 * ui.SLOW)
    ok = 0
    for off in (0, 1000):
        _, tr = d.json("GET", "/v1/jobs/%d/trials?offset=%d&limit=1000" % (job, off))
        ok += len([t for t in tr["trials"] if t["status"] == "ok" and t.get("median_us", 0) > 0])
    b.errors()
    b.goto(d.url + "/ui/jobs/%d" % job)
    check(b.wait_for("document.getElementById('job').dataset.updates >= '1'", 60), "plots drawn")
    pts = b.eval("document.querySelectorAll('#plot-convergence circle.trial').length")
    check(pts == ok and ok > 1000, "convergence: every trial past the first 1000 (%s of %d)" % (pts, ok))
    check(b.eval("(document.getElementById('trials-more')||{}).textContent||''")
          .startswith("The first 1000 of 1100 trials"), "trial table: says it lists 1000 of 1100")
    check(b.eval("document.querySelectorAll('#trials tbody tr').length") == 1000,
          "trial table: the first 1000 rows")
    check(final["state"] == "done", "job done")
    for path in ("/ui/", "/ui/jobs/%d" % job):
        b.goto(d.url + path)
        time.sleep(0.5 * ui.SLOW)
        errs = b.errors()
        check(not errs, "no console error or exception on %s: %s" % (path, errs[:2]))
    return job


def error_pages(d, b, job):
    status, html = d.get("/ui/jobs/999999")
    check(status == 404 and html.startswith("<!doctype html>") and "no job 999999" in html,
          "unknown job: the API's 404 as a page (%d)" % status)
    q = urllib.request.quote(HOSTILE)
    status, html = d.get("/ui/shapes?template=" + q + "&target=a2")
    check(status == 404 and HOSTILE not in html and "&lt;img src=x" in html,
          "hostile template name: 404 page with the name escaped")
    b.goto(d.url + "/ui/shapes?template=" + q + "&target=a2")
    time.sleep(0.3)
    check(b.eval("window.__xss") is None, "hostile template name: the injected handler never ran")
    check(HOSTILE in (b.eval("document.getElementById('error').textContent") or ""),
          "hostile template name: shown as text")
    check(b.eval("document.querySelector('form.chooser input[name=template]').value") == HOSTILE,
          "shape page error: the form keeps what was typed")
    status, html = d.get("/ui/shapes?template=gemm&target=a3")
    check(status == 404 and 'class="chooser"' in html and "nothing tuned for gemm" in html,
          "nothing tuned on a target: the shape page says so (%d)" % status)
    csp = "default-src 'none'; script-src 'self'"
    for path in ("/ui/", "/ui/jobs/%d" % job, "/ui/shapes?template=gemm&target=a2",
                 "/ui/assets/app.js"):
        h = headers(d.url + path)
        check((h.get("Content-Security-Policy") or "").startswith(csp)
              and h.get("X-Content-Type-Options") == "nosniff"
              and h.get("X-Frame-Options") == "DENY" and h.get("Referrer-Policy") == "no-referrer",
              "security headers on " + path)


def jobs_page_offset(d, b):
    """A later page of the jobs list (?offset=) stays that page when the script refreshes it
    (it re-read the first 100 jobs, so older pages showed the newest)."""
    b.goto(d.url + "/ui/?offset=1")     # this daemon has one job: page 2 is empty
    check(b.wait_for("Number(document.getElementById('jobs').dataset.refreshed) >= 1", 10),
          "jobs page 2: refreshed by the script")
    rows = b.eval("document.querySelectorAll('#jobs tbody tr').length")
    check(rows == 0 and b.eval("!document.getElementById('jobs-empty').hidden")
          and b.eval("document.getElementById('jobs-older').hidden"),
          "jobs page 2: still no rows after a refresh (%s), no older page" % rows)


def copy_and_labels(d, b, job):
    b.goto(d.url + "/ui/jobs/%d" % job)
    check(b.wait_for("document.getElementById('job').dataset.updates >= '1'", 60), "plots drawn")
    labels = b.eval("[...document.querySelectorAll('svg[role=img]')].map(s => s.getAttribute('aria-label'))")
    check(len(labels) == 3 and all(labels), "every plot has an accessible name: %s" % labels)
    # clicked from a script the document is not focused: the clipboard API refuses
    b.eval("document.querySelector('button[data-copy]').click()")
    check(b.wait_for("document.querySelector('button[data-copy]').textContent !== 'copy'", 5),
          "copy: the button answers (%s)" % b.eval("document.querySelector('button[data-copy]').textContent"))
    said = b.eval("document.querySelector('button[data-copy]').textContent")
    sel = b.eval("window.getSelection().toString()")
    args = b.eval("document.getElementById('best-args').textContent")
    check(said == "copied" or (said.startswith("selected") and sel == args),
          "copy: copied, or the args selected for Ctrl+C (%s)" % said)


def requests_of_jobs_list(d):
    """GET /v1/jobs answers the daemon counted so far (its /metrics)."""
    with urllib.request.urlopen(d.url + "/metrics", timeout=30) as r:
        text = r.read().decode()
    n = 0
    for line in text.splitlines():
        if line.startswith('tiletune_http_requests_total{route="GET /v1/jobs",'):
            n += int(float(line.rsplit(" ", 1)[1]))
    return n


def hidden_tab(d, b):
    """A jobs list in a hidden tab does not poll; shown again, it refreshes at once."""
    b.eval("Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});"
           "document.dispatchEvent(new Event('visibilitychange')); 1")
    ticks = "Number(document.getElementById('jobs').dataset.refreshed)"
    time.sleep(0.5)   # a poll already on its way lands
    before, shown = requests_of_jobs_list(d), b.eval(ticks)
    time.sleep(4.5)   # two periods of the 2 s poll
    after = requests_of_jobs_list(d)
    check(before > 0 and after == before and b.eval(ticks) == shown,
          "jobs list: no poll while the tab is hidden (%d -> %d GET /v1/jobs)" % (before, after))
    b.eval("Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});"
           "document.dispatchEvent(new Event('visibilitychange')); 1")
    check(b.wait_for("%s > %d" % (ticks, shown), 1.0),
          "jobs list: refreshed as soon as the tab is shown again")


def live_pages(tmp, b):
    run = os.path.join(tmp, "slow_run.sh")
    with open(run, "w") as f:
        f.write(ui.SLOW_RUN)
    toolchains = json.dumps({"slow": {"build": "true", "run": "sh " + run},
                             "broken": {"build": "false", "run": "true"}})
    d = ui.Daemon(tmp, "edge-live", ["--templates-dir",
                                     os.path.join(ui.SRC, "tests", "data", "templates-cmd"),
                                     "--toolchains", toolchains])
    try:
        b.goto(d.url + "/ui/")
        check(b.eval("!document.getElementById('jobs-empty').hidden"), "jobs list: 'No jobs yet'")
        body = {"template": "fake_vec", "target": "a2", "problem": {"N": 4096},
                "strategy": "random", "budget": {"trials": 30}}
        status, ans = d.json("POST", "/v1/tune", dict(body, backend="cmd:slow"))
        check(status in (201, 202), "slow job submitted (%d)" % status)
        job = ans["job"]
        check(b.wait_for("document.getElementById('jobs').dataset.refreshed >= '1' && "
                         "document.getElementById('jobs-empty').hidden", 10),
              "jobs list: the 'No jobs yet' line goes when a job is listed")
        hidden_tab(d, b)
        b.goto(d.url + "/ui/jobs/%d" % job)
        first = b.eval("document.getElementById('summary').innerText.split('\\n')[0]")
        check("done" not in first, "running job page: loaded before the end (%s)" % first)
        check(b.wait_for("document.getElementById('job').dataset.state === 'done'", 60),
              "running job page: followed to the end")
        check(b.wait_for("/state\\s+done/.test(document.getElementById('summary').innerText)", 10),
              "running job page: the summary says done (%s)" %
              b.eval("document.getElementById('summary').innerText.split('\\n')[0]"))
        check(b.eval("!!document.getElementById('best-args')"), "running job page: the best config")
        check(b.eval("document.querySelectorAll('#trials tbody tr').length") == 30,
              "running job page: every trial row")
        status, ans = d.json("POST", "/v1/tune", dict(body, backend="cmd:broken"))
        failed = d.wait_job(ans["job"], 60 * ui.SLOW)
        b.errors()
        b.goto(d.url + "/ui/jobs/%d" % ans["job"])
        check(b.wait_for("document.getElementById('job').dataset.updates >= '1'"), "failed job: page")
        check(failed["state"] == "failed" and b.eval("document.querySelectorAll('svg').length") == 0
              and b.eval("!document.querySelector('#trace button')"),
              "failed job: no plot, no trace button")
        errs = b.errors()
        check(not errs, "failed job: no console error (%s)" % errs[:2])
    finally:
        d.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="tt-ui-edge-")
    b = d = None
    try:
        b = Browser(tmp)
        d = ui.Daemon(tmp, "edge")
        job = many_trials(d, b)
        error_pages(d, b, job)
        jobs_page_offset(d, b)
        copy_and_labels(d, b, job)
        live_pages(tmp, b)
    except Exception as e:  # a failure of the harness is a failure of the test
        check(False, "harness: %r (logs in %s)" % (e, tmp))
    finally:
        if d:
            d.stop()
        if b:
            b.close()
    res = ui.RESULTS
    print("%d passed, %d failed" % (res["passed"], res["failed"]))
    if res["failed"] == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if res["failed"] or res["passed"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

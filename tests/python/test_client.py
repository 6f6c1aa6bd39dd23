# SPDX-License-Identifier: MIT
"""test_client.py - every tiletune.Client method against a real tiletuned."""
import ast
import gzip
import json
import os
import re
import subprocess
import sys

import pytest

import tiletune
from conftest import ADMIN, CLIENT_DIR, TUNE, TUNE2, free_port, slow

SHAPE = {"M": 1024, "N": 1024, "K": 1024, "dtype": "float16"}
KT_CACHE = {"device_name": "Ascend910B2", "kernel_name": "vadd", "problem_size": [1048576],
            "tune_params_keys": ["block", "unroll"],
            "tune_params": {"block": [64, 128, 256], "unroll": [1, 2]}, "objective": "time",
            "cache": {"64,1": {"block": 64, "unroll": 1, "time": 0.021, "times": [0.021, 0.022]},
                      "128,1": {"block": 128, "unroll": 1, "time": 0.017, "times": [0.017]},
                      "256,2": {"block": 256, "unroll": 2, "time": 0.015, "times": [0.015]}}}
T1 = {"General": {"BenchmarkName": "vadd", "OutputFormat": "JSON"},
      "ConfigurationSpace": {"TuningParameters": [
          {"Name": "block", "Type": "int", "Values": "[64, 128, 256]", "Default": 64},
          {"Name": "unroll", "Type": "int", "Values": "[1, 2]", "Default": 1}],
          "Conditions": []}}


@pytest.fixture(scope="module")
def tuned(daemon):
    """SHAPE tuned once on the simulator (8 trials); returns the finished job document."""
    job = tiletune.Client(daemon.url, TUNE).tune("gemm", "a2", SHAPE, budget=8, seed=1)
    return job.wait(timeout=slow(120))


def test_health_ready_catalog(daemon):
    c = tiletune.Client(daemon.url)
    assert c.health()["status"] == "ok"
    assert c.ready()["ready"] is True
    names = {t["name"] for t in c.templates()}
    assert "gemm" in names
    g = c.template("gemm")
    assert g["name"] == "gemm" and len(g["hash"]) == 16
    assert {p["name"] for p in g["params"]} >= {"block_M", "block_N", "block_K", "K_L1", "S1",
                                                 "S2"}
    assert any("a2" in t.get("aliases", []) for t in c.targets())


def test_predict_top_and_given_config(daemon):
    c = tiletune.Client(daemon.url)
    p = c.predict("gemm", "a2", SHAPE, top=3)
    assert p["source"] == "model" and len(p["results"]) == 3
    assert [r["rank"] for r in p["results"]] == [1, 2, 3]
    cfg = p["results"][0]["config"]
    one = c.predict("gemm", "a2", "M=1024,N=1024,K=1024,dtype=float16", config=cfg)
    assert one["results"][0]["config"] == cfg and one["results"][0]["feasible"] is True
    bad = dict(cfg, K_L1=96, block_K=256)
    assert c.predict("gemm", "a2", SHAPE, configs=[bad])["results"][0]["feasible"] is False


def test_simulate_with_trace(daemon):
    c = tiletune.Client(daemon.url)
    cfg = {"block_M": 128, "block_N": 256, "block_K": 64, "K_L1": 256, "S1": 2, "S2": 2}
    s = c.simulate("gemm", "a3", {"M": 1024, "N": 1024, "K": 1024}, cfg, trace=True)
    assert s["source"] == "sim" and s["time_us"] > 0 and len(s["trace"]) > 0
    assert "trace" not in c.simulate("gemm", "a3", "M=1024,N=1024,K=1024", cfg)


def test_tune_wait_progress_and_live_best(daemon, capsys):
    c = tiletune.Client(daemon.url, TUNE)
    job = c.tune("gemm", "a2", {"M": 512, "N": 768, "K": 1024}, budget=6, seed=2)
    assert isinstance(job, tiletune.Job) and job.id > 0
    assert job.submitted["links"]["events"] == f"/v1/jobs/{job.id}/events"
    seen = []
    info = job.wait(progress=seen.append)
    assert info["state"] == "done" and seen and seen[-1]["done"] == info["progress"]["done"]
    assert job.done and job.best == info["best"] and job.best["measured_by"] == "sim"
    assert job.progress["done"] == info["progress"]["done"]
    job2 = c.tune("gemm", "a2", {"M": 512, "N": 768, "K": 2048}, budget=4)
    job2.wait(progress=True)
    err = capsys.readouterr().err
    assert f"job {job2.id} [" in err and "trials" in err and "done" in err


def test_wait_with_timeout_polls(daemon):
    c = tiletune.Client(daemon.url, TUNE)
    job = c.tune("gemm", "a2", {"M": 640, "N": 640, "K": 640}, budget=3)
    info = job.wait(timeout=slow(120), poll=0.1)
    assert info["state"] == "done"



def test_wait_timeout_bounds_the_requests_to_a_hung_server(make_daemon):
    """wait(timeout=1) on a server that accepts connections but never answers (stopped
    with SIGSTOP: a hung host) returns soon after that second, with ServerUnreachable; it
    used to wait for the client's request timeout once per try (here 4 x 3600 s)."""
    import signal
    import threading
    d = make_daemon(workers=0)                       # the job stays queued
    c = tiletune.Client(d.url, TUNE, timeout=3600)
    job = c.tune("gemm", "a2", "M=64,N=64,K=64", budget=2)
    out = {}

    def waiter():
        try:
            out["info"] = job.wait(timeout=1, poll=0.1)
        except Exception as e:                       # noqa: BLE001  (checked below)
            out["error"] = e

    os.kill(d.proc.pid, signal.SIGSTOP)
    try:
        t = threading.Thread(target=waiter, daemon=True)
        t.start()
        t.join(slow(60))                             # not a timing: "returns at all"
        assert not t.is_alive(), "wait(timeout=1) still waiting for the hung server"
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
        # answering again before the fixture's SIGTERM: a SIGTERM that comes right after
        # the SIGCONT can take its default action (the main thread sigwait()s for it)
        tiletune.Client(d.url, timeout=slow(30)).health()
    assert isinstance(out.get("error"), tiletune.ServerUnreachable), out
    assert "timed out" in str(out["error"])


@pytest.mark.parametrize("timeout", [None, slow(300)], ids=["events", "polling"])
def test_wait_survives_a_daemon_restart(make_daemon, timeout):
    """The daemon restarts (down for a few seconds: longer than the client's connection
    retries) while a job waits in its queue; wait() follows the job to its end on the
    restarted daemon (used to raise Unavailable / ServerUnreachable)."""
    import threading
    import time
    d = make_daemon(workers=0)                       # the job stays queued until restarted
    c = tiletune.Client(d.url, TUNE)
    job = c.tune("gemm", "a2", "M=64,N=64,K=64", budget=2)
    out = {}

    def waiter():
        try:
            out["info"] = job.wait(timeout=timeout)
        except Exception as e:                       # noqa: BLE001  (reported below)
            out["error"] = e

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.5)
    assert d.stop() == 0
    time.sleep(3)
    d.extra["workers"] = 1
    d.start()                                        # same port and database
    t.join(slow(120))
    assert not t.is_alive() and "error" not in out, out
    assert out["info"]["state"] == "done" and out["info"]["progress"]["done"] == 2

def test_events_stream(daemon, tuned):
    c = tiletune.Client(daemon.url)
    ev = list(c.events(tuned["id"]))
    assert ev[-1][0] == "end" and ev[-1][1]["state"] == "done"
    assert any(e == "progress" and d["done"] == tuned["progress"]["done"] for e, d in ev)


def test_job_handle_jobs_and_trials(daemon, tuned):
    c = tiletune.Client(daemon.url)
    j = c.job(tuned["id"])
    assert j.state == "done" and j.info["problem_key"] == tuned["problem_key"]
    ids = [x["id"] for x in c.jobs(state="done", template="gemm", limit=1000)]
    assert tuned["id"] in ids and ids == sorted(ids, reverse=True)
    assert all(x["state"] == "done" for x in c.jobs(state="done"))
    assert len(c.jobs(limit=1)) == 1
    t = c.trials(tuned["id"], offset=0, limit=3)
    assert t["total"] == tuned["progress"]["done"] and len(t["trials"]) == min(3, t["total"])
    assert j.trials(limit=2)["limit"] == 2
    # every page read, in order, whatever the page size (old client: one page only)
    whole = c.trials(tuned["id"], offset=0, limit=1000)["trials"]
    for page in (1, 3, 1000):
        got = list(c.all_trials(tuned["id"], page=page))
        assert [x["seq"] for x in got] == [x["seq"] for x in whole] and len(got) == t["total"]
    assert [x["seq"] for x in j.all_trials(page=2)] == [x["seq"] for x in whole]
    for page in (0, 1001, 2.0, True):
        with pytest.raises(ValueError):
            next(c.all_trials(tuned["id"], page=page))


def test_cancel_queued_job(make_daemon):
    d = make_daemon(workers=0)
    c = tiletune.Client(d.url, TUNE)
    job = c.tune("gemm", "a2", "M=64,N=64,K=64", budget=2)
    assert job.state == "queued"
    with pytest.raises(tiletune.Forbidden):              # someone else's job
        tiletune.Client(d.url, TUNE2).cancel(job.id)
    job.cancel()
    assert job.state == "cancelled"
    with pytest.raises(tiletune.JobFailed) as ei:
        job.wait()
    assert ei.value.code == "cancelled"
    assert job.wait(raise_on_failure=False)["state"] == "cancelled"



@pytest.mark.parametrize("call", [
    lambda c, j: c.cancel(j + 0.9),          # int() made this cancel job j
    lambda c, j: c.job(float(j)),
    lambda c, j: c.trials(True),             # bool is not a job id (was job 1)
    lambda c, j: c.job_info(None),
    lambda c, j: tiletune.Job(c, "1.5"),
    lambda c, j: c.import_(5, format="kt-cache", template="vadd"),   # was 5 NUL bytes
    lambda c, j: c.import_([KT_CACHE], format="kt-cache", template="vadd"),
    lambda c, j: c.best("gemm", "a2", ["M=64"]),
    lambda c, j: c.tune("gemm", "a2", 64),
])
def test_wrong_types_are_refused_not_coerced(make_daemon, call):
    d = make_daemon(workers=0)
    c = tiletune.Client(d.url, TUNE)
    job = c.tune("gemm", "a2", "M=64,N=64,K=64", budget=2)
    sent = c.requests_sent
    with pytest.raises(TypeError):
        call(c, job.id)
    assert c.requests_sent == sent and c.job(job.id).state == "queued"


def test_problem_none_is_a_template_without_inputs(make_daemon):
    d = make_daemon()
    c = tiletune.Client(d.url, TUNE)
    c.import_(T1, format="t1", template="vadd")
    c.import_(KT_CACHE, format="kt-cache", template="vadd", target="a2")
    assert c.best("vadd", "a2", None)["config"] == {"block": 256, "unroll": 2}
    assert c.export("vadd", "a2", problem=None)["count"] == 1
    with pytest.raises(tiletune.Unsupported):       # sent: refused for the backend, not
        c.tune("vadd", "a2", None, backend="model")  # an AttributeError in the client

def test_best_exact_and_nearest(daemon, tuned):
    c = tiletune.Client(daemon.url)
    b = c.best("gemm", "a2", SHAPE)
    assert b["exact"] is True and b["config"] == tuned["best"]["config"]
    assert b["job"] == tuned["id"] and b["time_kind"] == "simulated"
    assert c.best("gemm", "a2", "M=1024,N=1024,K=1024,dtype=float16", backend="sim",
                  hash=b["template_hash"])["config"] == b["config"]
    with pytest.raises(tiletune.NotFound):
        c.best("gemm", "a2", dict(SHAPE, M=1000000))
    n = c.best("gemm", "a2", dict(SHAPE, M=1000000), nearest=True)
    assert n["exact"] is False and n["distance"] > 0


def test_check_and_pin(daemon, tuned):
    c = tiletune.Client(daemon.url, TUNE)
    med = tuned["best"]["measured_us"]
    ok = c.check([{"template": "gemm", "target": "a2", "problem": SHAPE,
                   "samples_us": [med, med, med]}], tolerance=0.05)
    assert ok["verdict"] == "pass" and ok["counts"]["pass"] == 1
    bad = c.check([{"template": "gemm", "target": "a2", "problem": SHAPE,
                    "samples_us": [med * 3]}])
    assert bad["verdict"] == "regressed"
    pin = c.check([{"template": "gemm", "target": "a2", "problem": SHAPE}], pin="py-release")
    assert pin["pinned"] >= 1
    again = c.check([{"template": "gemm", "target": "a2", "problem": SHAPE,
                      "samples_us": [med]}], baseline="py-release")
    assert again["baseline"] == "py-release" and again["verdict"] == "pass"
    re = c.check([{"template": "gemm", "target": "a2", "problem": SHAPE}], remeasure=True,
                 backend="sim")
    assert re["entries"][0]["verdict"] in ("pass", "improved")
    with pytest.raises(tiletune.InvalidArgument) as ei:
        c.check([{"template": "gemm", "target": "a2", "problem": SHAPE, "samples_us": "x"}])
    assert ei.value.path == "entries[0].samples_us"


def test_export_formats(daemon, tuned, tmp_path):
    c = tiletune.Client(daemon.url)
    doc = c.export("gemm", "a2")
    rec = [r for r in doc["records"] if r["job"] == tuned["id"]]
    assert rec and rec[0]["config"] == tuned["best"]["config"]
    spec = c.export("gemm", "a2", format="specializations")
    specs = [ast.literal_eval(n.value) for n in ast.parse(spec).body      # Python source
             if isinstance(n, ast.Assign) and n.targets[0].id == "SPECIALIZATIONS"][0]
    assert any(s["M"] == 1024 and s["block_M"] == tuned["best"]["config"]["block_M"]
               for s in specs)
    assert "registry" in c.export("gemm", "a2", format="registry-inc").lower()
    hdr = c.export("gemm", "a2", format="c-header")
    assert isinstance(hdr, str) and "find_gemm_entry" in hdr
    t4 = c.export("gemm", "a2", format="t4", job=tuned["id"])
    assert isinstance(t4, dict)
    with pytest.raises(tiletune.BadRequest):
        c.export("gemm", "a2", format="yaml")


def test_import_t1_and_kt_cache(make_daemon, tmp_path):
    d = make_daemon()
    c = tiletune.Client(d.url, TUNE)
    r = c.import_(T1, format="t1", template="vadd")
    assert r["kind"] == "template" and r["template"] == "vadd"
    p = tmp_path / "vadd.json.gz"
    p.write_bytes(gzip.compress(json.dumps(KT_CACHE).encode()))
    r = c.import_file(str(p), format="kt-cache", template="vadd", target="a2")
    assert r["kind"] == "data" and r["added"] == 3
    r = c.import_(json.dumps(KT_CACHE), format="kt-cache", template="vadd", target="a2")
    assert r["added"] == 0 and r["skipped"] == 3
    with pytest.raises(tiletune.Unauthorized):
        tiletune.Client(d.url).import_(b"{}", format="kt-cache", template="vadd")


def test_config_resolution(daemon, isolated_env, monkeypatch, tmp_path):
    conf = isolated_env / ".config" / "tiletune"
    conf.mkdir(parents=True)
    (conf / "tlctl.conf").write_text(f"# comment\nurl = {daemon.url}\ntoken = {TUNE}\n"
                                     "timeout = 7\n")
    c = tiletune.Client()
    assert (c.url, c.token, c.timeout) == (daemon.url, TUNE, 7.0)
    assert c.settings.source == {"url": "file", "token": "file", "timeout": "file"}
    monkeypatch.setenv("TILETUNE_TOKEN", ADMIN)
    c = tiletune.Client()
    assert c.token == ADMIN and c.settings.source["token"] == "env"
    assert "config" in c.request("GET", "/v1/config")    # the env token (admin) was used
    c = tiletune.Client(token=TUNE2, url="http://example.invalid:1/")
    assert (c.url, c.token) == ("http://example.invalid:1", TUNE2)
    xdg = tmp_path / "xdg"
    (xdg / "tiletune").mkdir(parents=True)
    (xdg / "tiletune" / "tlctl.conf").write_text("url = http://xdg.invalid:2\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    assert tiletune.Client().url == "http://xdg.invalid:2"
    monkeypatch.setenv("TLCTL_CONFIG", str(tmp_path / "missing.conf"))
    with pytest.raises(FileNotFoundError):
        tiletune.Client()



@pytest.mark.parametrize("call,path", [
    (lambda c: c.tune("gemm", "a2", "M=\udcff,N=64,K=64"), "problem"),
    (lambda c: c.predict("gemm", "a2", {"M": 64, "N": 64, "K": 64, "dtype": "\udcff"}),
     "problem.dtype"),
    (lambda c: c.check([{"template": "gemm", "target": "a2", "problem": {"M": "\udcff"},
                         "samples_us": [1.0]}]), "entries[0].problem.M"),
    (lambda c: c.best("gemm", "a2", {"M": "\udcff"}), "M"),
    (lambda c: c.template("g\udcffmm"), "template"),
    (lambda c: c.export("gemm", "a\udcff"), "target"),
])
def test_text_that_is_not_utf8_is_refused_before_sending(daemon, call, path):
    """Lone surrogates (non-UTF-8 bytes decoded with surrogateescape) are BadEncoding,
    naming where they are; nothing is sent (used to be a malformed_json answer or a
    UnicodeEncodeError from the codec)."""
    c = tiletune.Client(daemon.url, TUNE)
    with pytest.raises(tiletune.BadEncoding) as ei:
        call(c)
    assert ei.value.path == path and ei.value.code == "bad_encoding"
    assert c.requests_sent == 0


def test_nan_is_refused_before_sending(daemon):
    c = tiletune.Client(daemon.url, TUNE)
    with pytest.raises(ValueError, match="JSON"):
        c.check([{"template": "gemm", "target": "a2", "problem": SHAPE,
                  "samples_us": [float("nan")]}])
    assert c.requests_sent == 0

# tlctl.conf lines -> the settings read (url, token, timeout) or the ValueError's text; the
# rules are tlctl's (client/opts.c, docs/tlctl.md "Configuration")
CONFIG_LINES = [
    (b"token = tok#en\n", (None, "tok#en", 60.0)),        # '#' inside a value stays
    (b"token = tok # lab\n", (None, "tok", 60.0)),         # ' #' starts a comment
    (b"  # indented comment\n\ntimeout = 7\t# s\n", (None, None, 7.0)),
    (b"url = http://h:1\r\ntimeout=86400\r\n", ("http://h:1", None, 86400.0)),
    (b"tokne = secret\n", "c.conf:1: unknown key 'tokne'"),
    (b"url = http://h:1\njunk line\n", "c.conf:2: expected key = value"),
    (b"timeout = abc\n", "c.conf:1: timeout needs seconds in 1..86400"),
    (b"timeout = 0.5\n", "c.conf:1: timeout needs seconds in 1..86400"),
    (b"timeout = 0\n", "c.conf:1: timeout needs seconds in 1..86400"),
    (b"timeout = 86401\n", "c.conf:1: timeout needs seconds in 1..86400"),
    (b"timeout = nan\n", "c.conf:1: timeout needs seconds in 1..86400"),
    (b"timeout = inf\n", "c.conf:1: timeout needs seconds in 1..86400"),
    (b"token = \xff\xfe\n", "c.conf: not valid UTF-8"),
    (b'token = "tok"\n', (None, "tok", 60.0)),            # one pair of quotes goes
    (b"token = 'a\"b'\n", (None, 'a"b', 60.0)),
    (b'token = ""tok""\n', (None, '"tok"', 60.0)),        # only one pair
    (b'token = "tok\n', (None, '"tok', 60.0)),            # unmatched: kept
]


@pytest.mark.parametrize("text,expect", CONFIG_LINES)
def test_config_file_lines_as_tlctl(tmp_path, monkeypatch, text, expect):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.conf").write_bytes(text)
    if isinstance(expect, str):
        with pytest.raises(ValueError, match=re.escape(expect)):
            tiletune.Client(config_file="c.conf")
        return
    c = tiletune.Client(config_file="c.conf")
    url, token, timeout = expect
    assert (c.url, c.token, c.timeout) == (url or "http://127.0.0.1:7878", token, timeout)


# server URLs tlctl refuses (client/http.c tl_url_check) are refused here too, at Client();
# "notaurl" used to fail only at the first request (unknown url type) and "ftp://h" was
# fetched over FTP
@pytest.mark.parametrize("url,why", [
    ("notaurl", "the scheme must be http:// or https://"),
    ("ftp://127.0.0.1", "the scheme must be http:// or https://"),
    ("http://", "no host"),
    ("http://[::1", "Invalid IPv6 URL"),
    ("http://127.0.0.1:99999", "Port out of range"),
    ("http://127.0.0.1:7878/?x=1", "no ?query or #fragment"),
    ("http://127.0.0.1:7878/#top", "no ?query or #fragment"),
])
def test_bad_server_url_is_refused(url, why, isolated_env, monkeypatch):
    with pytest.raises(ValueError, match=re.escape(why)) as ei:
        tiletune.Client(url)
    assert "(from arg)" in str(ei.value)
    monkeypatch.setenv("TILETUNE_URL", url)
    with pytest.raises(ValueError, match=r"\(from env\)"):
        tiletune.Client()


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_timeout_argument_must_be_finite_and_positive(timeout):
    with pytest.raises(ValueError, match="timeout"):
        tiletune.Client("http://127.0.0.1:1", timeout=timeout)

PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
              "ALL_PROXY", "no_proxy", "NO_PROXY")


@pytest.mark.parametrize("var", ["http_proxy", "HTTP_PROXY"])
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_loopback_server_is_reached_without_the_proxy(daemon, monkeypatch, var, host):
    """A host's proxy variables (a corporate machine has them, often without 127.0.0.1 in
    no_proxy) must not send requests for a loopback daemon to the proxy, which cannot reach
    it: the old client went through it and said the daemon refused the connection."""
    for v in PROXY_VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv(var, f"http://127.0.0.1:{free_port()}")     # a proxy that is down
    c = tiletune.Client(daemon.url.replace("127.0.0.1", host), retries=0)
    assert c.health()["status"] == "ok" and c.templates()
    assert c.proxy is None


def test_unreachable_through_a_proxy_names_the_proxy(monkeypatch):
    """A remote server is reached through the environment's proxy, and when that fails the
    error names the proxy (the old one named only the server)."""
    for v in PROXY_VARS:
        monkeypatch.delenv(v, raising=False)
    proxy = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("http_proxy", proxy)
    c = tiletune.Client("http://tiletune.invalid:7878", retries=0)
    with pytest.raises(tiletune.ServerUnreachable, match="through the proxy " + re.escape(proxy)):
        c.health()
    monkeypatch.setenv("no_proxy", "tiletune.invalid")
    assert tiletune.Client("http://tiletune.invalid:7878", retries=0).proxy is None


def test_retries_with_backoff_then_unreachable():
    port = free_port()                      # nothing listens there
    c = tiletune.Client(f"http://127.0.0.1:{port}", TUNE, retries=2, backoff=0.01)
    with pytest.raises(tiletune.ServerUnreachable) as ei:
        c.health()
    assert c.requests_sent == 3 and ei.value.status is None
    c.requests_sent = 0
    with pytest.raises(ConnectionError):    # refused: a submission may be retried too
        c.tune("gemm", "a2", "M=64,N=64,K=64")
    assert c.requests_sent == 3


def test_retry_reaches_a_server_that_comes_up(make_daemon):
    d = make_daemon()
    url = d.url
    assert d.stop() == 0
    import threading
    t = threading.Timer(0.3, d.start)       # same port and database
    t.start()
    try:
        c = tiletune.Client(url, retries=8, backoff=0.1, max_backoff=slow(2))
        assert c.health()["status"] == "ok" and c.requests_sent > 1
    finally:
        t.join()
    assert d.url == url


def test_busy_is_retried_for_every_request():
    """A stand-in server that sheds the first two requests with tiletune's 503 busy (which
    the daemon answers before doing any of a request, so a submission may be sent again)."""
    import http.server
    import threading

    hits = []

    class H(http.server.BaseHTTPRequestHandler):
        def _answer(self):
            hits.append(self.command)
            n = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(n)
            busy = len(hits) % 3 != 0
            body = (b'{"error": {"code": "busy", "message": "too many heavy requests"}}'
                    if busy else b'{"source": "model", "results": []}')
            self.send_response(503 if busy else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        c = tiletune.Client(f"http://127.0.0.1:{srv.server_address[1]}", TUNE, retries=3,
                            backoff=0.01)
        assert c.predict("gemm", "a2", "M=64,N=64,K=64", top=1)["source"] == "model"
        assert hits == ["POST"] * 3
        hits.clear()
        c.request("POST", "/v1/tune", json_body={"template": "gemm"})   # a submission too
        assert hits == ["POST"] * 3
        hits.clear()
        c2 = tiletune.Client(c.url, TUNE, retries=1, backoff=0.01)
        with pytest.raises(tiletune.ServerError) as ei:         # retries spent: Busy
            c2.predict("gemm", "a2", "M=64,N=64,K=64", top=1)
        assert isinstance(ei.value, tiletune.Busy) and ei.value.status == 503
        assert hits == ["POST"] * 2
    finally:
        srv.shutdown()
        srv.server_close()


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\n"
EVENT = b'event: progress\ndata: {"done": 1}\n\n'
CUT = {     # answers a proxy or a dying daemon gives: cut off, or not the API's JSON
    "short body": HEAD % b"application/json" + b'Content-Length: 100\r\n\r\n{"templates": [',
    "cut chunk": HEAD % b"application/json" + b"Transfer-Encoding: chunked\r\n\r\n"
                 b'40\r\n{"templates": [',
    "broken json": HEAD % b"application/json" + b'Content-Length: 5\r\n\r\n{"a":',
    "html page": HEAD % b"text/html" + b"Content-Length: 12\r\n\r\n<html></html>",
    "cut events": HEAD % b"text/event-stream" + b"Transfer-Encoding: chunked\r\n\r\n"
                  b"%x\r\n%s\r\n40\r\nevent: pro" % (len(EVENT), EVENT),
}


@pytest.fixture
def cutting_server():
    """A stand-in that gives every connection one prepared answer (``srv.answer``) and
    closes it: what a daemon killed mid-answer or a proxy's login page looks like."""
    import socket
    import threading
    import types
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    srv = types.SimpleNamespace(answer=b"", hits=[],
                                url=f"http://127.0.0.1:{sock.getsockname()[1]}")

    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                srv.hits.append(conn.recv(65536).split(b" ", 1)[0])
                conn.sendall(srv.answer)

    threading.Thread(target=serve, daemon=True).start()
    yield srv
    sock.close()


@pytest.mark.parametrize("kind", ["short body", "cut chunk", "broken json", "html page"])
def test_an_answer_cut_off_or_not_json_is_a_bad_answer(cutting_server, kind):
    """The old client let http.client.IncompleteRead or json's ValueError out (not a
    TiletuneError: @autotune did not fall back on its cache, `python3 -m tiletune` printed a
    traceback or said 'usage'), and an html page reached the caller as a str."""
    cutting_server.answer = CUT[kind]
    url = cutting_server.url
    c = tiletune.Client(url, TUNE, retries=2, backoff=0.01)
    with pytest.raises(tiletune.BadAnswer) as ei:
        c.templates()
    assert isinstance(ei.value, tiletune.ServerUnreachable) and ei.value.code == "bad_answer"
    cut = kind in ("short body", "cut chunk")
    assert cutting_server.hits == [b"GET"] * (3 if cut else 1)      # a GET is read again
    cutting_server.hits.clear()
    with pytest.raises(tiletune.BadAnswer):
        c.tune("gemm", "a2", "M=64,N=64,K=64")
    assert cutting_server.hits == [b"POST"]                         # never submitted twice
    p = subprocess.run([sys.executable, "-m", "tiletune", "--url", url, "best", "gemm",
                        "-t", "a2", "-p", "M=64"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=CLIENT_DIR))
    assert (p.returncode, p.stdout) == (3, "") and "Traceback" not in p.stderr, p.stderr


def test_an_event_stream_cut_off_is_a_bad_answer(cutting_server):
    cutting_server.answer = CUT["cut events"]
    c = tiletune.Client(cutting_server.url, retries=0)
    got = []
    with pytest.raises(tiletune.BadAnswer):
        for ev in c.events(1):
            got.append(ev)
    assert got == [("progress", {"done": 1})]

# SPDX-License-Identifier: MIT
"""test_autotune.py - @tiletune.autotune with a stand-in factory against real daemons.

tilelang cannot be installed here, so the factory is a stand-in that records the keyword
arguments it was called with: what a @tilelang.jit factory would have been given."""
import functools
import inspect
import json
import os
import subprocess
import sys
import threading
import warnings

import pytest

import tiletune
from conftest import CLIENT_DIR, TUNE, slow

PARAMS = ("block_M", "block_N", "block_K", "K_L1", "S1", "S2")


def make_factory(**opts):
    """A fresh decorated stand-in factory (its own in-process cache) and its call log."""
    calls = []

    def gemm(M, N, K, block_M, block_N, block_K, K_L1, S1, S2, dtype="float16", **more):
        """Stand-in GEMM factory: records its arguments."""
        kw = dict(M=M, N=N, K=K, block_M=block_M, block_N=block_N, block_K=block_K,
                  K_L1=K_L1, S1=S1, S2=S2, dtype=dtype, **more)
        calls.append(kw)
        return kw

    opts.setdefault("ttl", None)
    deco = tiletune.autotune(template="gemm", key=["M", "N", "K", "dtype"], target="a2", **opts)
    return deco(gemm), gemm, calls


def tune_shape(url, shape, budget=6):
    return tiletune.Client(url, TUNE).tune("gemm", "a2", shape, budget=budget, seed=3
                                           ).wait(timeout=slow(120))


def config_of(kw):
    """The tunables a factory call got (everything but the shape)."""
    return {k: v for k, v in kw.items() if k not in ("M", "N", "K", "dtype")}


def test_keeps_signature_and_docstring(daemon):
    fn, raw, _ = make_factory(url=daemon.url)
    assert fn.__name__ == "gemm" and fn.__doc__ == raw.__doc__
    assert inspect.signature(fn) == inspect.signature(raw) and fn.__wrapped__ is raw
    with pytest.raises(TypeError):
        tiletune.autotune(template="gemm", key=["M", "Q"], target="a2")(raw)
    with pytest.raises(ValueError):
        tiletune.autotune(template="gemm", key=["M"], target="a2", tune="later")(raw)


def test_exact_nearest_predicted(make_daemon):
    d = make_daemon()
    c = tiletune.Client(d.url)
    fn, _, calls = make_factory(url=d.url)
    # nothing tuned: the model's top-1, marked predicted
    r = fn.resolve(2048, 1024, 1024)
    assert r.source == "predicted" and r.predicted and r.cached is None
    top = c.predict("gemm", "a2", {"M": 2048, "N": 1024, "K": 1024, "dtype": "float16"}, top=1)
    assert r.config == top["results"][0]["config"] and r.detail["source"] == "model"
    # tuned 1024^3: exact for it, nearest (distance 1) for 2048x1024x1024
    job = tune_shape(d.url, {"M": 1024, "N": 1024, "K": 1024})
    fn2, _, calls2 = make_factory(url=d.url)
    out = fn2(1024, 1024, 1024)
    assert config_of(out) == job["best"]["config"] and calls2[-1]["M"] == 1024
    r = fn2.resolve(1024, 1024, 1024)
    assert r.source == "exact" and not r.predicted and r.cached == "memory"
    assert r.detail["job"] == job["id"] and r.template_hash == c.template("gemm")["hash"]
    r = fn2.resolve(M=2048, N=1024, K=1024)
    assert r.source == "nearest" and r.config == job["best"]["config"]
    assert r.detail["distance"] == pytest.approx(1.0)
    # the other dtype has no tuned neighbour: predicted again
    assert fn2.resolve(2048, 1024, 1024, dtype="bfloat16").source == "predicted"
    # nearest=False skips the neighbour
    fn3, _, _ = make_factory(url=d.url, nearest=False)
    assert fn3.resolve(2048, 1024, 1024).source == "predicted"
    # predict=False: NotFound, or the given default
    fn4, _, _ = make_factory(url=d.url, predict=False, nearest=False)
    with pytest.raises(tiletune.NotFound):
        fn4(4096, 4096, 4096)
    dflt = dict(block_M=64, block_N=64, block_K=32, K_L1=64, S1=1, S2=1)
    fn5, _, calls5 = make_factory(url=d.url, predict=False, nearest=False, default=dflt)
    assert config_of(fn5(4096, 4096, 4096)) == dflt
    assert fn5.resolve(4096, 4096, 4096).source == "default"


def test_caller_pins_and_unknown_params(make_daemon):
    d = make_daemon()
    fn, _, calls = make_factory(url=d.url)
    out = fn(512, 512, 512, block_M=32)
    assert out["block_M"] == 32 and out["block_N"] == fn.resolve(512, 512, 512).config["block_N"]

    def narrow(M, N, K, block_M, block_N, block_K, K_L1, S1, dtype="float16"):
        return S1

    f = tiletune.autotune(template="gemm", key=["M", "N", "K", "dtype"], target="a2",
                          url=d.url)(narrow)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(512, 512, 512)
    assert any("'S2' is not an argument" in str(x.message) for x in w)

    class FakeDtype:                        # torch.bfloat16 prints as "torch.bfloat16"
        def __str__(self):
            return "torch.bfloat16"

    r = fn.resolve(512, 512, 512, dtype=FakeDtype())
    assert r.shape["dtype"] == "bfloat16" and r.shape_key.endswith("dtype=bfloat16")

    def mapped(m, n, k, in_dtype="float16", **tunables):
        return tunables

    g = tiletune.autotune(template="gemm", key={"m": "M", "n": "N", "k": "K",
                                                "in_dtype": "dtype"}, target="a2",
                          url=d.url)(mapped)
    assert set(g(512, 512, 512)) >= set(PARAMS)        # **kwargs takes every param


# numpy's scalar types as dtype arguments: the classes themselves, not instances (numpy is
# not installed here; these classes have numpy's names, module and bases)
NP_FLOAT16 = type("float16", (float,), {"__module__": "numpy"})
NP_INT8 = type("int8", (int,), {"__module__": "numpy"})


def test_dtype_given_as_a_scalar_type(daemon):
    fn, _, calls = make_factory(url=daemon.url)
    # old code: "<class 'numpy.float16'>" was sent, and numpy.int8 (an int class, whose
    # __index__ is unbound) raised "descriptor '__index__' ... needs an argument"
    assert fn.autotuner.bind((512, 512, 512), {"dtype": NP_INT8})[0]["dtype"] == "int8"
    r = fn.resolve(512, 512, 512, dtype=NP_FLOAT16)
    assert r.shape["dtype"] == "float16" and r.shape_key == "M=512,N=512,K=512,dtype=float16"
    assert fn(512, 512, 512, dtype=NP_FLOAT16)["dtype"] is NP_FLOAT16     # passed unchanged


def test_partial_and_callable_object_factories(daemon):
    """A factory without __qualname__ (functools.partial, an instance with __call__, as a
    jit wrapper may be) is named by its function or class in the messages; the old code
    raised AttributeError from the warning about a param the factory does not take."""
    def kernel(M, N, K, block_M, block_N, block_K, K_L1, S1, S2, dtype="float16"):
        return block_M

    class Factory:
        def __call__(self, M, N, K, block_M, dtype="float16"):
            return block_M

    for fac, name in ((functools.partial(kernel, K=512), "kernel"), (Factory(), "Factory")):
        f = tiletune.autotune(template="gemm", key=["M", "N", "K", "dtype"], target="a2",
                              url=daemon.url, disk_cache=False)(fac)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert f(512, 512) if name == "kernel" else f(512, 512, 512)
        assert any(f"{name}; not passed" in str(x.message) for x in w), name
        with pytest.raises(TypeError, match=f"not arguments of .*{name}$"):
            tiletune.autotune(template="gemm", key=["Q"], target="a2")(fac)


def test_memory_cache_and_concurrent_threads(make_daemon):
    d = make_daemon()
    tune_shape(d.url, {"M": 1024, "N": 1024, "K": 1024})
    client = tiletune.Client(d.url, retries=2)
    fn, _, calls = make_factory(client=client)
    shapes = [(1024, 1024, 1024), (1024, 2048, 1024), (256, 256, 4096)]
    expect = {}
    errors = []
    barrier = threading.Barrier(12)

    def worker(i):
        try:
            barrier.wait()
            for j in range(10):
                s = shapes[(i + j) % len(shapes)]
                out = fn(*s)
                expect.setdefault(s, config_of(out))
                assert config_of(out) == expect[s]
        except BaseException as e:              # reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert len(calls) == 120
    # one resolution per shape: the template hash once, best (+ predict when not tuned)
    assert client.requests_sent <= 1 + 2 * len(shapes)
    sources = {s: fn.resolve(*s).source for s in shapes}
    assert sources[(1024, 1024, 1024)] == "exact" and sources[(256, 256, 4096)] in (
        "nearest", "predicted")
    before = client.requests_sent
    fn(1024, 1024, 1024)
    assert client.requests_sent == before     # answered from memory


def test_disk_cache_when_the_server_is_down(make_daemon, isolated_env, tmp_path):
    d = make_daemon()
    job = tune_shape(d.url, {"M": 1024, "N": 1024, "K": 1024})
    fn, _, _ = make_factory(url=d.url)
    assert fn.resolve(1024, 1024, 1024).source == "exact"
    pred = fn.resolve(300, 300, 300, dtype="bfloat16")
    assert pred.source == "predicted"
    root = tmp_path / "cache" / "tiletune" / "v1"       # $XDG_CACHE_HOME/tiletune
    files = [os.path.join(p, f) for p, _, fs in os.walk(root) for f in fs]
    assert len([f for f in files if f.endswith(".json")]) == 3   # 2 shapes + hash.json
    assert not [f for f in files if ".tmp-" in f]
    assert d.stop() == 0
    # a new decorated factory (= a restarted process) with the server down
    fn2, _, calls2 = make_factory(url=d.url, retry_down=600)
    out = fn2(1024, 1024, 1024)
    r = fn2.resolve(1024, 1024, 1024)
    assert config_of(out) == job["best"]["config"] and r.stale and r.source == "exact"
    r = fn2.resolve(300, 300, 300, dtype="bfloat16")
    assert r.stale and r.source == "predicted" and r.predicted and r.config == pred.config
    with pytest.raises(tiletune.ServerUnreachable):
        fn2(4096, 4096, 4096)                       # never seen: nothing to fall back on
    sent = fn2.autotuner.client.requests_sent
    with pytest.raises(tiletune.ServerUnreachable):
        fn2(4096, 4096, 4096)
    assert fn2.autotuner.client.requests_sent == sent   # down: not asked again for a while
    dflt = dict(block_M=64, block_N=64, block_K=32, K_L1=64, S1=1, S2=1)
    fn3, _, _ = make_factory(url=d.url, default=dflt)
    r = fn3.resolve(4096, 4096, 4096)
    assert r.source == "default" and r.stale and r.config == dflt
    # a separate process that restarts while the server is down
    code = ("import tiletune, json\n"
            "f = tiletune.autotune(template='gemm', key=['M','N','K','dtype'], target='a2', "
            f"url={d.url!r})(lambda M, N, K, dtype='float16', **kw: kw)\n"
            "r = f.resolve(1024, 1024, 1024)\n"
            "print(json.dumps({'config': f(1024, 1024, 1024), 'stale': r.stale}))\n")
    env = dict(os.environ, PYTHONPATH=CLIENT_DIR, XDG_CACHE_HOME=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=slow(60))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["stale"] is True and doc["config"] == job["best"]["config"]



def test_disk_cache_keeps_backends_apart(make_daemon):
    """``backend=`` restricts which stored results count, also from the disk cache: with the
    server down, a factory tuned on sim must not get the answer another process resolved
    for the model backend (one file per shape served both, the last writer won)."""
    d = make_daemon()
    job = tune_shape(d.url, {"M": 1024, "N": 1024, "K": 1024})      # measured by sim only
    sim, _, _ = make_factory(url=d.url, backend="sim")
    model, _, _ = make_factory(url=d.url, backend="model")
    online = {"sim": sim.resolve(1024, 1024, 1024),
              "model": model.resolve(1024, 1024, 1024)}                # written last
    assert online["sim"].source == "exact" and online["sim"].config == job["best"]["config"]
    assert online["model"].source == "predicted"
    assert d.stop() == 0
    for backend, want in online.items():
        fn, _, _ = make_factory(url=d.url, backend=backend)        # restarted processes
        r = fn.resolve(1024, 1024, 1024)
        assert (r.source, r.stale, r.config) == (want.source, True, want.config), backend


class Proxy:
    """A minimal reverse proxy in front of a real daemon: forwards every request and, as
    nginx does, answers 502 Bad Gateway (HTML) when the daemon behind it is down."""

    def __init__(self, upstream):
        import http.server
        import urllib.error
        import urllib.request

        class H(http.server.BaseHTTPRequestHandler):
            def _forward(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                hdrs = {k: v for k, v in self.headers.items()
                        if k.lower() in ("authorization", "content-type", "accept")}
                req = urllib.request.Request(upstream + self.path, data=body,
                                             method=self.command, headers=hdrs)
                try:
                    with urllib.request.urlopen(req, timeout=30) as r:
                        status, ctype, out = r.status, r.headers.get("Content-Type"), r.read()
                except urllib.error.HTTPError as e:
                    status, ctype, out = e.code, e.headers.get("Content-Type"), e.read()
                except OSError:
                    status, ctype = 502, "text/html"
                    out = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
                self.send_response(status)
                self.send_header("Content-Type", ctype or "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_DELETE = _forward

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def test_a_5xx_answer_is_the_server_down_too(make_daemon):
    """Behind a proxy a stopped daemon is a 502, not a refused connection; the factory must
    fall back to its cache as when unreachable (it used to raise ServerError from the
    kernel call)."""
    d = make_daemon()
    proxy = Proxy(d.url)
    try:
        job = tune_shape(d.url, {"M": 1024, "N": 1024, "K": 1024})
        fn, _, _ = make_factory(url=proxy.url)
        assert fn.resolve(1024, 1024, 1024).source == "exact"
        assert d.stop() == 0
        fn2, _, calls = make_factory(url=proxy.url, retry_down=600)   # a restarted process
        out = fn2(1024, 1024, 1024)
        r = fn2.resolve(1024, 1024, 1024)
        assert config_of(out) == job["best"]["config"] and r.stale and r.cached == "memory"
        dflt = dict(block_M=64, block_N=64, block_K=32, K_L1=64, S1=1, S2=1)
        fn3, _, _ = make_factory(url=proxy.url, default=dflt)
        r = fn3.resolve(2048, 2048, 2048)
        assert r.source == "default" and r.stale
        fn4, _, _ = make_factory(url=proxy.url)
        with pytest.raises(tiletune.ServerError) as ei:          # nothing known: the error
            fn4(2048, 2048, 2048)
        assert ei.value.status == 502
    finally:
        proxy.close()

def test_corrupt_cache_file_reads_as_missing(tmp_path):
    dc = tiletune.DiskCache(str(tmp_path))
    rec = {"server": "http://s", "template": "gemm", "template_hash": "h", "target": "a2",
           "shape_key": "M=1", "config": {"block_M": 16}}
    dc.store(rec)
    assert dc.load("http://s", "gemm", "h", "a2", "M=1")["config"] == {"block_M": 16}
    p = dc.shape_path("http://s", "gemm", "h", "a2", "M=1")
    with open(p, "w") as f:
        f.write('{"config": {"blo')             # a torn write by something else
    assert dc.load("http://s", "gemm", "h", "a2", "M=1") is None
    assert dc.load("http://other", "gemm", "h", "a2", "M=1") is None



GOOD_RECORD = {"config": {"block_M": 16}, "source": "exact", "template": "gemm",
               "template_hash": "h", "target": "a2", "shape": {"M": 1},
               "shape_key": "M=1,N=2,K=3,dtype=float16", "job": None, "detail": {},
               "resolved_at": 1.0}


@pytest.mark.parametrize("damage", [
    lambda r: r.pop("template_hash"),                 # KeyError in from_record
    lambda r: r.pop("target"),
    lambda r: r.update(resolved_at="yesterday"),      # ValueError
    lambda r: r.update(shape=[1, 2, 3]),              # TypeError
    lambda r: r.update(detail="fast"),                # ValueError
    "[" * 100000 + "]" * 100000,                      # RecursionError in json.load
], ids=["no_hash", "no_target", "resolved_at", "shape", "detail", "nested"])
def test_damaged_cache_record_reads_as_missing_when_the_server_is_down(tmp_path, damage):
    """Server down, a record on disk that is JSON but not a whole record: the default is
    used (used to be a KeyError/TypeError/ValueError/RecursionError out of the call)."""
    from conftest import free_port
    from tiletune.cache import write_json_atomic
    url = f"http://127.0.0.1:{free_port()}"
    dflt = {"block_M": 64}
    fn, _, _ = make_factory(url=url, cache_dir=str(tmp_path), template_hash="h",
                            default=dflt, retry_down=600)
    rec = dict(GOOD_RECORD, server=url)
    dc = tiletune.DiskCache(str(tmp_path))
    path = dc.shape_path(url, "gemm", "h", "a2", rec["shape_key"])
    write_json_atomic(path, rec)
    assert fn.resolve(1, 2, 3).config == {"block_M": 16}          # the whole record works
    fn.cache_clear()
    if isinstance(damage, str):
        with open(path, "w") as f:
            f.write(damage)
    else:
        damage(rec)
        write_json_atomic(path, rec)
    r = fn.resolve(1, 2, 3)
    assert r.source == "default" and r.stale and r.config == dflt

def test_background_tuning_changes_the_resolved_config(make_daemon):
    d = make_daemon()
    fn, _, calls = make_factory(url=d.url, token=TUNE, tune="background", budget=6)
    first = fn.resolve(768, 1024, 1024)
    assert first.source == "predicted" and first.job
    assert fn.autotuner.jobs() == {first.shape_key: first.job}
    assert fn.wait_tuning(timeout=slow(180)), "background job not followed in time"
    assert not fn.autotuner.errors
    after = fn.resolve(768, 1024, 1024)
    best = tiletune.Client(d.url).best("gemm", "a2", {"M": 768, "N": 1024, "K": 1024})
    assert after.source == "exact" and not after.predicted and after.job == first.job
    assert after.config == best["config"] and best["job"] == first.job
    assert config_of(fn(768, 1024, 1024)) == best["config"]
    assert fn.autotuner.jobs() == {first.shape_key: first.job}   # no second job


def test_blocking_tuning_and_missing_token(make_daemon):
    d = make_daemon()
    fn, _, _ = make_factory(url=d.url, token=TUNE, tune="blocking", budget=4)
    r = fn.resolve(640, 512, 1024)
    assert r.source == "exact" and r.job and r.detail["job"] == r.job
    # background without a token: a warning, and the call still runs with the prediction
    fn2, _, calls2 = make_factory(url=d.url, tune="background")
    with pytest.warns(UserWarning, match="cannot submit a tuning job"):
        r = fn2.resolve(999, 999, 999)
    assert r.source == "nearest" and r.job is None
    assert isinstance(fn2.autotuner.errors[0], tiletune.Unauthorized)
    fn3, _, _ = make_factory(url=d.url, tune="blocking")
    with pytest.raises(tiletune.Unauthorized):
        fn3(998, 998, 998)


def gated_daemon(make_daemon, tmp_path):
    """A daemon whose cmd:gate backend measures nothing until the file ``gate`` exists, so a
    job stays running for as long as a test needs; returns (daemon, open_gate)."""
    gate = tmp_path / "gate"
    run = (f"while [ ! -e {gate} ]; do sleep 0.05; done; "
           "echo '{\"latency_us\": [10], \"correct\": true}'")
    d = make_daemon(toolchains={"gate": {"run": run}})
    return d, lambda: gate.touch()


def test_blocking_callers_of_one_shape_wait_for_its_one_job(make_daemon, tmp_path):
    """tune="blocking" with threads: a caller that comes while another thread waits for the
    shape's job waits for that job too (it used to get the untuned config at once)."""
    import time
    d, open_gate = gated_daemon(make_daemon, tmp_path)
    fn, _, _ = make_factory(url=d.url, token=TUNE, tune="blocking", budget=1,
                            backend="cmd:gate", ttl=300)
    got = {}

    def call(name):
        got[name] = fn.resolve(640, 640, 640)

    first = threading.Thread(target=call, args=("first",))
    first.start()
    c = tiletune.Client(d.url)
    while not fn.autotuner.jobs():              # the first caller has submitted the job
        assert first.is_alive(), got
        time.sleep(0.01)
    others = [threading.Thread(target=call, args=(n,)) for n in ("second", "third")]
    for t in others:
        t.start()
    open_gate()
    for t in [first] + others:
        t.join(slow(120))
    [job] = fn.autotuner.jobs().values()
    assert {n: (r.source, r.job) for n, r in got.items()} == {
        n: ("exact", job) for n in ("first", "second", "third")}
    assert [j["id"] for j in c.jobs(template="gemm")] == [job]


def test_blocking_after_ctrl_c_waits_for_the_running_job(make_daemon, tmp_path):
    """Ctrl-C (KeyboardInterrupt) while a blocking call waits leaves the job running; the next
    call of the shape waits for that job instead of returning the untuned config at once."""
    import signal
    import time
    d, open_gate = gated_daemon(make_daemon, tmp_path)
    fn, _, _ = make_factory(url=d.url, token=TUNE, tune="blocking", budget=1,
                            backend="cmd:gate", ttl=300)

    def interrupt_once_submitted():
        while not fn.autotuner.jobs():
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    # Python's own handler even when started with SIGINT ignored (a background `&` job)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_once_submitted, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            fn.resolve(704, 640, 640)
    finally:
        signal.signal(signal.SIGINT, old)
    [job] = fn.autotuner.jobs().values()
    c = tiletune.Client(d.url)
    assert c.job_info(job)["state"] in ("queued", "running")     # left running
    got = []
    again = threading.Thread(target=lambda: got.append(fn.resolve(704, 640, 640)))
    again.start()
    open_gate()
    again.join(slow(120))
    assert [(r.source, r.job) for r in got] == [("exact", job)]
    assert [j["id"] for j in c.jobs(template="gemm")] == [job]     # no second job


def test_blocking_wait_through_a_server_gone_down_gives_the_stale_config(make_daemon,
                                                                         tmp_path):
    """tune="blocking": a server that goes down while a call waits for the shape's job (for
    longer than the client's timeout) makes the call return the untuned config, stale, as
    for a server down at the call; the old code raised ServerUnreachable from this call and
    from every later one.  Once the server is back, the same job is waited for."""
    import time
    d, open_gate = gated_daemon(make_daemon, tmp_path)
    client = tiletune.Client(d.url, TUNE, timeout=2, retries=1)
    fn, _, _ = make_factory(client=client, tune="blocking", budget=1, backend="cmd:gate",
                            ttl=300)
    got = []

    def call():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                got.append((fn.resolve(768, 640, 640), [str(x.message) for x in w]))
            except Exception as e:          # noqa: BLE001 -- reported by the assert below
                got.append((e, []))

    t = threading.Thread(target=call)
    t.start()
    while not fn.autotuner.jobs():
        assert t.is_alive(), got
        time.sleep(0.01)
    [job] = fn.autotuner.jobs().values()
    d.kill()
    t.join(slow(120))
    [(r, warned)] = got
    assert isinstance(r, tiletune.Resolution), r
    assert (r.source, r.stale, r.job) == ("predicted", True, job)
    assert any(f"went down while waiting for tuning job {job}" in m for m in warned), warned
    again = fn.resolve(768, 640, 640)                   # no second wait for the outage
    assert (again.stale, again.cached, again.job) == (True, "memory", job)
    open_gate()
    d.start()                                           # same port and database
    fn.cache_clear()
    r = fn.resolve(768, 640, 640)
    assert (r.source, r.stale, r.job) == ("exact", False, job)
    assert [j["id"] for j in tiletune.Client(d.url).jobs(template="gemm")] == [job]


def _in_child(fn, args):
    """fork(); the child resolves ``args`` and exits.  Returns (pid, read end of a pipe that
    carries the child's ``[source, job]`` or its error as JSON)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                # the child: never returns into pytest
        code = 1
        try:
            os.close(r)
            res = fn.resolve(*args)
            out, code = [res.source, res.job], 0
        except BaseException as e:              # reported to the parent
            out = repr(e)
        os.write(w, json.dumps(out).encode())
        os._exit(code)
    os.close(w)
    return pid, r


def _child_result(pid, r):
    """The child's answer; kills it and fails when it has not exited after a generous wait."""
    import time
    until = time.monotonic() + slow(120)
    while time.monotonic() < until:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            with os.fdopen(r, "rb") as f:
                return os.waitstatus_to_exitcode(status), json.loads(f.read() or b"null")
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(r)
    pytest.fail("the forked child hung on a lock another thread of its parent held")


def test_fork_while_another_thread_waits_for_the_shape(make_daemon, tmp_path):
    """A process that forks (DataLoader workers, multiprocessing's fork) while one of its
    threads waits for a shape's blocking tuning job: the child inherited that thread's locks
    held and hung forever on its first call of the shape; now it waits for the same job."""
    import time
    d, open_gate = gated_daemon(make_daemon, tmp_path)
    fn, _, _ = make_factory(url=d.url, token=TUNE, tune="blocking", budget=1,
                            backend="cmd:gate", ttl=300)
    got = []
    first = threading.Thread(target=lambda: got.append(fn.resolve(576, 640, 640)))
    first.start()
    while not fn.autotuner.jobs():              # the thread has submitted and waits
        assert first.is_alive(), got
        time.sleep(0.01)
    with warnings.catch_warnings():             # 3.12: "fork() of a multi-threaded process"
        warnings.simplefilter("ignore", DeprecationWarning)
        pid, r = _in_child(fn, (576, 640, 640))
    open_gate()
    first.join(slow(120))
    [job] = fn.autotuner.jobs().values()
    assert [(x.source, x.job) for x in got] == [("exact", job)]
    assert _child_result(pid, r) == (0, ["exact", job])
    assert [j["id"] for j in tiletune.Client(d.url).jobs(template="gemm")] == [job]


def test_redecorated_factory_reuses_the_running_job(make_daemon, tmp_path):
    """A notebook cell run again decorates the same factory anew (a new Autotuner, empty
    caches): its first call used to submit a second job for a shape whose job was still
    running; it now follows that job (same server, template version, target and job
    options), and other options still get their own job."""
    d, open_gate = gated_daemon(make_daemon, tmp_path)
    opts = dict(url=d.url, token=TUNE, tune="background", budget=1, backend="cmd:gate")
    fn1, _, _ = make_factory(**opts)
    first = fn1.resolve(512, 640, 640)
    fn2, _, _ = make_factory(**opts)            # the cell again
    again = fn2.resolve(512, 640, 640)
    other, _, _ = make_factory(**dict(opts, seed=7))
    third = other.resolve(512, 640, 640)
    assert first.job and again.job == first.job and third.job not in (None, first.job)
    open_gate()
    assert all(f.wait_tuning(timeout=slow(120)) for f in (fn1, fn2, other))
    assert not (fn1.autotuner.errors or fn2.autotuner.errors or other.autotuner.errors)
    assert fn2.resolve(512, 640, 640).source == "exact"
    jobs = tiletune.Client(d.url).jobs(template="gemm")
    assert sorted(j["id"] for j in jobs) == sorted([first.job, third.job])

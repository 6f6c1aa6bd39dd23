# SPDX-License-Identifier: MIT
"""test_cli.py - `python3 -m tiletune` (best, tune, export) and its exit codes."""
import json
import os
import subprocess
import sys

import pytest

from conftest import CLIENT_DIR, READ, TUNE, free_port, slow


def run(*args, env=None):
    e = dict(os.environ, PYTHONPATH=CLIENT_DIR)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "tiletune", *args], env=e, text=True,
                          capture_output=True, timeout=slow(180))


def test_help():
    r = run("--help")
    assert r.returncode == 0 and "best" in r.stdout and "tune" in r.stdout
    assert "export" in r.stdout and "exit codes" in r.stdout
    for cmd in ("best", "tune", "export"):
        r = run(cmd, "--help")
        assert r.returncode == 0 and "--target" in r.stdout, cmd
    assert run("best", "gemm").returncode == 2          # -p and -t are required
    assert run("frobnicate").returncode == 2


def test_tune_best_export(daemon, tmp_path):
    env = {"TILETUNE_URL": daemon.url, "TILETUNE_TOKEN": TUNE}
    p = "M=1536,N=1024,K=512,dtype=float16"
    r = run("tune", "gemm", "-p", p, "-t", "a2", "-n", "5", "--seed", "4", "--wait", env=env)
    assert r.returncode == 0, r.stderr
    assert "trials" in r.stderr and "done: best" in r.stdout
    r = run("best", "gemm", "-p", p, "-t", "a2", "-f", "json", env=env)
    assert r.returncode == 0, r.stderr
    best = json.loads(r.stdout)
    assert best["exact"] is True
    r = run("best", "gemm", "-p", p, "-t", "a2", "-f", "args", env=env)
    assert r.stdout.split() == [f"--{k}={v}" for k, v in best["config"].items()]
    r = run("best", "gemm", "-p", p, "-t", "a2", "-f", "env", env=env)
    assert f"TT_BLOCK_M={best['config']['block_M']}" in r.stdout.splitlines()
    r = run("best", "gemm", "-p", "M=3072,N=1024,K=512", "-t", "a2", "--nearest", env=env)
    assert r.returncode == 0 and "nearest (distance 1.0)" in r.stdout
    out = tmp_path / "spec.py"
    r = run("export", "gemm", "-t", "a2", "-f", "specializations", "-o", str(out), env=env)
    assert r.returncode == 0 and "SPECIALIZATIONS = [" in out.read_text()
    r = run("--url", daemon.url, "export", "gemm", "-t", "a2", env={})
    assert r.returncode == 0 and json.loads(r.stdout)["count"] >= 1
    r = run("tune", "gemm", "-p", "M=64,N=64,K=64", "-t", "a2", "-n", "2", "--json", env=env)
    assert r.returncode == 0 and json.loads(r.stdout)["state"] == "queued"


SCALE = {"tiletune": 1, "name": "pyscale", "version": "1", "inputs": {"N": "int"},
         "params": {"block": [256, 512, 1024]}, "let": {"n_num": "ceildiv(N, block)"},
         "buffers": {"X_UB": {"scope": "UB", "shape": ["block"], "dtype": "float16",
                              "copies": 2}},
         "tensors": {"X": {"shape": ["N"], "dtype": "float16"},
                     "Y": {"shape": ["N"], "dtype": "float16", "output": True}},
         "kernel": {"grid": {"bx": "n_num"}, "cores": "vector", "body": [
             {"copy": ["gm:X", "X_UB"], "along": ["bx"]},
             {"vec": "muls", "out": "X_UB", "in": ["X_UB"]},
             {"copy": ["X_UB", "gm:Y"], "along": ["bx"]}]}}


def test_template_file(daemon, tmp_path):
    """As tlctl: a TEMPLATE with a '/' or a .json tail is a document file: tune sends it
    inline (stored under its name), best asks for that version; bad files exit 2."""
    env = {"TILETUNE_URL": daemon.url, "TILETUNE_TOKEN": TUNE}
    f = tmp_path / "pyscale.json"
    f.write_text(json.dumps(SCALE))
    r = run("tune", str(f), "-p", "N=65536", "-t", "a2", "-n", "3", "--wait", env=env)
    assert r.returncode == 0, r.stderr
    r = run("best", str(f), "-p", "N=65536", "-t", "a2", "-f", "json", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["template"] == "pyscale"
    assert run("best", str(f), "-t", "a2", env=env).returncode == 2     # N has no default
    f.write_text(json.dumps(dict(SCALE, params={"block": [256, 2048]})))   # another version
    r = run("best", str(f), "-p", "N=65536", "-t", "a2", env=env)
    assert r.returncode == 5 and "not_found" in r.stderr
    for i, (text, want) in enumerate([(None, "No such file"), ('{"name": ', "cannot read"),
                                      ('{"a": 1, "a": 2}', "duplicate object key"),
                                      ("[1]", "does not hold a JSON object")]):
        bad = tmp_path / f"bad{i}.json"
        if text is not None:
            bad.write_text(text)
        r = run("tune", str(bad), "-p", "N=1", "-t", "a2", env=env)
        assert r.returncode == 2 and want in r.stderr and str(bad) in r.stderr, r.stderr


def test_exit_codes(daemon):
    env = {"TILETUNE_URL": daemon.url}
    r = run("best", "gemm", "-p", "M=7,N=7,K=7,dtype=bfloat16", "-t", "a2", env=env)
    assert r.returncode == 5 and "not_found, HTTP 404" in r.stderr
    r = run("tune", "gemm", "-p", "M=64,N=64,K=64", "-t", "a2", env=env)
    assert r.returncode == 4 and "unauthorized" in r.stderr
    r = run("--token", READ, "tune", "gemm", "-p", "M=64,N=64,K=64", "-t", "a2", env=env)
    assert r.returncode == 4 and "forbidden" in r.stderr
    r = run("--url", f"http://127.0.0.1:{free_port()}", "best", "gemm", "-p", "M=1", "-t", "a2")
    assert r.returncode == 3 and "cannot reach" in r.stderr
    for url in ("notaurl", "ftp://127.0.0.1", "http://127.0.0.1:99999"):   # as tlctl: 2
        r = run("--url", url, "best", "gemm", "-p", "M=1", "-t", "a2")
        assert r.returncode == 2 and "bad server URL" in r.stderr, (url, r.stderr)
    # a token with a control character is a usage error that does not show the secret (old
    # code: exit 2 with "Invalid header value b'Bearer abc\\ndef'", the token on stderr)
    for where in ("env", "arg"):
        args = ("--token", "abc\ndef") if where == "arg" else ()
        e = {"TILETUNE_URL": daemon.url, "TILETUNE_TOKEN": "abc\ndef"} if where == "env" else env
        r = run(*args, "best", "gemm", "-p", "M=1", "-t", "a2", env=e)
        assert r.returncode == 2 and "holds a control character" in r.stderr, r.stderr
        assert "abc" not in r.stderr and "def" not in r.stderr, r.stderr


# an argument that is not valid UTF-8 is a usage error (exit 2, bad_encoding) before any
# request, as in tlctl; tune used to send it escaped and exit 5 with the server's
# malformed_json, best and export to fail in Python's codec
@pytest.mark.parametrize("args", [
    ("tune", "gemm", "-p", b"M=\xff,N=64,K=64", "-t", "a2"),
    ("tune", "gemm", "-p", "M=64,N=64,K=64", "-t", b"a\xff"),
    ("best", "gemm", "-p", b"M=\xff,N=64,K=64", "-t", "a2"),
    ("best", b"g\xffmm", "-p", "M=64,N=64,K=64", "-t", "a2"),
    ("export", "gemm", "-t", "a2", "-p", b"M=\xff"),
])
def test_non_utf8_argument_is_a_usage_error(daemon, args):
    r = run(*args, env={"TILETUNE_URL": daemon.url, "TILETUNE_TOKEN": TUNE})
    assert r.returncode == 2, r.stderr
    assert "not valid UTF-8 (bad_encoding)" in r.stderr and "Traceback" not in r.stderr


def test_arguments_as_tlctl(make_daemon):
    """Arguments tlctl takes or refuses itself: --budget/--seed/--timeout ranges are usage
    errors (were sent and answered 400, exit 5), tune --objective and export -T are taken
    (were unknown arguments), -p may be left out for a template without inputs."""
    from test_client import KT_CACHE, T1
    import tiletune
    d = make_daemon()
    c = tiletune.Client(d.url, TUNE)
    c.import_(T1, format="t1", template="vadd")
    c.import_(KT_CACHE, format="kt-cache", template="vadd", target="a2")
    env = {"TILETUNE_URL": d.url, "TILETUNE_TOKEN": TUNE}
    p = "M=64,N=64,K=64"
    rows = [
        (("tune", "gemm", "-p", p, "-t", "a2", "-n", "0"), 2, "1..1000000"),
        (("tune", "gemm", "-p", p, "-t", "a2", "-n", "1000001"), 2, "1..1000000"),
        (("tune", "gemm", "-p", p, "-t", "a2", "--seed", str(2 ** 62 + 1)), 2, "--seed"),
        (("--timeout", "0.5", "best", "gemm", "-p", p, "-t", "a2"), 2, "1..86400"),
        (("--timeout", "86401", "best", "gemm", "-p", p, "-t", "a2"), 2, "1..86400"),
        (("best", "gemm", "-t", "a2"), 2, "--problem is required"),
        (("best", "vadd", "-t", "a2", "-f", "json"), 0, ""),
        # sent without a problem: refused for the backend, not for a missing -p
        (("tune", "vadd", "-t", "a2", "-b", "model", "-n", "2"), 5, "has no kernel"),
        # --wait: the export below needs this job's best stored
        (("tune", "gemm", "-p", p, "-t", "a2", "-n", "2", "--objective", "mean", "--wait"), 0,
         ""),
        (("tune", "gemm", "-p", p, "-t", "a2", "--objective", "fastest"), 5, "objective"),
        (("export", "-T", "gemm", "-t", "a2", "-f", "c-header"), 0, ""),
        (("export", "-t", "a2"), 2, "template"),
    ]
    for args, code, err in rows:
        r = run(*args, env=env)
        assert r.returncode == code and err in r.stderr, (args, r.returncode, r.stderr)
    assert json.loads(run("best", "vadd", "-t", "a2", "-f", "json", env=env).stdout
                      )["config"] == {"block": 256, "unroll": 2}


@pytest.mark.parametrize("args", [
    ("export", "gemm", "-t", "a2"),
    ("export", "gemm", "-t", "a2", "-f", "specializations"),
    ("best", "gemm", "-p", "M=1536,N=1024,K=512,dtype=float16", "-t", "a2", "-f", "json"),
])
def test_closed_output_pipe_is_quiet(daemon, args):
    """stdout a pipe whose reader has gone (`| head`, `| grep -q`): exit quietly with 141,
    what a shell reports for tlctl killed by SIGPIPE.  Was 'tiletune: [Errno 32] Broken
    pipe' on stderr and exit 2, a usage error."""
    env = dict(os.environ, PYTHONPATH=CLIENT_DIR, TILETUNE_URL=daemon.url, TILETUNE_TOKEN=TUNE)
    subprocess.run([sys.executable, "-m", "tiletune", "tune", "gemm", "-p",
                    "M=1536,N=1024,K=512,dtype=float16", "-t", "a2", "-n", "2", "--wait"],
                   env=env, capture_output=True, check=True, timeout=slow(180))
    rd, wr = os.pipe()
    os.close(rd)                         # the reader is gone before anything is written
    try:
        r = subprocess.run([sys.executable, "-m", "tiletune", *args], env=env, stdout=wr,
                           stderr=subprocess.PIPE, text=True, timeout=slow(180))
    finally:
        os.close(wr)
    assert (r.returncode, r.stderr) == (141, "")

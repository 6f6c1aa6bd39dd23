# SPDX-License-Identifier: MIT
"""conftest.py - pytest fixtures for the Python client: a real tiletuned on a free port.

The daemon is build/bin/tiletuned (or $TT_BIN_DIR/tiletuned, which ctest sets, so the ASan
build tests its own binary) started with `serve --config-file` on a temp SQLite database and
four tokens (admin, tune, tune2, read), polled on /healthz and stopped with SIGTERM after;
a non-zero exit (e.g. a sanitizer report) fails the test that owned it, and the tail of its
log is printed.  No timing assertions: waits are generous polls (x4 under TT_SANITIZED).
Exit status 5 (no tests collected) is turned into a failure, and the summary line is written
to $TT_PYTEST_SUMMARY for tests/run.sh.
"""
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("TT_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
BIN_DIR = os.environ.get("TT_BIN_DIR") or os.path.join(SOURCE_DIR, "build", "bin")
CLIENT_DIR = os.path.join(SOURCE_DIR, "client", "python")
sys.path.insert(0, CLIENT_DIR)

TOKENS = {"admin": ("admin-secret", "admin"), "tuner": ("tune-secret", "tune"),
          "tuner2": ("tune2-secret", "tune"), "reader": ("read-secret", "read")}
ADMIN, TUNE, TUNE2, READ = (TOKENS[n][0] for n in ("admin", "tuner", "tuner2", "reader"))


def slow(seconds):
    """Generous waits: four times longer under the sanitizers (the daemon is slower)."""
    return seconds * 4 if os.environ.get("TT_SANITIZED") else seconds


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """One tiletuned process on a free port with its own directory and database."""

    def __init__(self, directory, **extra):
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.config_path = os.path.join(self.dir, "config.json")
        self.log_path = os.path.join(self.dir, "daemon.log")
        self.db = "sqlite:" + os.path.join(self.dir, "tt.db")
        self.extra = extra
        self.proc = None
        self.port = None
        self.url = None

    def _write_config(self):
        toks = [{"name": n, "secret_sha256": hashlib.sha256(s.encode()).hexdigest(),
                 "scopes": sc} for n, (s, sc) in TOKENS.items()]
        cfg = {"listen": f"127.0.0.1:{self.port}", "db": self.db, "workers": 1,
               "open_reads": True, "log_level": "debug", "log_file": "", "work_dir": self.dir,
               "tokens": toks,
               "templates_dir": os.path.join(SOURCE_DIR, "templates"),
               "targets_dir": os.path.join(SOURCE_DIR, "costmodel", "targets"),
               # request wall-time budgets scale like every wait under the sanitizers
               "request_seconds_anon": slow(5), "request_seconds_token": slow(60)}
        cfg.update(self.extra)
        with open(self.config_path, "w") as f:
            json.dump(cfg, f, indent=2)

    def start(self):
        """Start (or restart on the same port and database) and wait for /healthz."""
        for _ in range(3):
            if self.port is None or self.proc is not None:
                self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self._write_config()
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(
                [os.path.join(BIN_DIR, "tiletuned"), "serve", "--config-file", self.config_path],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            log.close()
            if self._healthy(slow(20)):
                return self
            self.kill()
        raise RuntimeError("tiletuned did not become healthy:\n" + self.log_tail())

    def _healthy(self, seconds):
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def stop(self):
        """SIGTERM and wait; returns the exit status (SIGKILL after a generous wait)."""
        if self.proc is None:
            return 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=slow(30))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = 255
        self.proc = None
        return rc

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-n:]
        except OSError:
            return "(no log)"


def _finish(d):
    rc = d.stop()
    if rc != 0:
        pytest.fail(f"tiletuned exited with {rc}; tail of {d.log_path}:\n{d.log_tail()}",
                    pytrace=False)


@pytest.fixture(scope="session")
def daemon(tmp_path_factory):
    """The shared daemon of the session (tests that stop or limit it start their own)."""
    d = Daemon(tmp_path_factory.mktemp("tiletuned")).start()
    yield d
    _finish(d)


@pytest.fixture
def make_daemon(tmp_path):
    """Start extra daemons with config overrides: make_daemon(max_body_bytes=4096)."""
    started = []

    def make(**extra):
        d = Daemon(tmp_path / f"d{len(started)}", **extra).start()
        started.append(d)
        return d

    yield make
    for d in started:
        _finish(d)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No user config, token or cache leaks into a test: HOME and XDG dirs are temporary."""
    for v in ("TILETUNE_URL", "TILETUNE_TOKEN", "TLCTL_CONFIG", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(v, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield home


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 5:                     # no tests collected: that is a failure here
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    path = os.environ.get("TT_PYTEST_SUMMARY")
    if not path:
        return
    st = terminalreporter.stats
    parts = [f"{len(st.get(k, []))} {k}" for k in ("passed", "failed", "error", "skipped")
             if st.get(k)]
    took = time.time() - getattr(terminalreporter, "_sessionstarttime", time.time())
    line = (f"python client tests ({BIN_DIR}): " + (", ".join(parts) or "no tests") +
            f" in {took:.1f}s, exit {exitstatus}\n")
    with open(path, "w") as f:
        f.write(line)

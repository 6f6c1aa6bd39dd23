# SPDX-License-Identifier: MIT
"""test_tlctl_text.py - what the real tlctl ($TT_BIN_DIR/tlctl) prints for people (tables,
text lines) when text from the server carries terminal controls: a cmd: toolchain's result
line quoted in a re-measurement's error, a template's version and description.

Those strings reached the terminal raw, so an escape sequence in them acted on the user's
terminal (an OSC retitled the window, CSI 2J cleared the screen).  Now every text printer
spells controls (C0, DEL, C1, bidirectional overrides) as \\xNN / \\uNNNN and keeps valid
UTF-8; --json and -f json keep the server's strings exact.  Also: --no-color reaches the live
plot that tune --wait draws on a terminal.
"""
import json
import os
import subprocess
import urllib.request

from conftest import BIN_DIR, TUNE
from test_tlctl_ci import GEMM_P, flip_daemon

TLCTL = os.path.join(BIN_DIR, "tlctl")
OSC = "\x1b]0;pwned\x07"          # set the window title
CLEAR = "\x1b[2J"                 # clear the screen
C1_CSI = "\u009b2J"               # the one-character CSI of the C1 set
RLO = "\u202e"                    # right-to-left override
# bytes that must never reach a terminal from server text (UTF-8 of U+009B and U+202E)
ACTIVE = [b"\x1b", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae"]


def tlctl(daemon, *args):
    env = dict(os.environ, TILETUNE_URL=daemon.url, TILETUNE_TOKEN=TUNE)
    return subprocess.run([TLCTL, *args], env=env, capture_output=True, timeout=300)


def assert_inert(r, *shown):
    """No active byte in stdout or stderr; each of `shown` (escaped spelling) on stdout."""
    for out in (r.stdout, r.stderr):
        for b in ACTIVE:
            assert b not in out, (b, out)
    for s in shown:
        assert s.encode() in r.stdout, (s, r.stdout)


def test_check_error_line_from_toolchain(make_daemon, tmp_path):
    result = tmp_path / "result"
    d = flip_daemon(make_daemon, result)
    # not JSON: the server quotes the line back in the entry's error
    result.write_text('{"latency_us": [10], "correct": tr' + OSC + CLEAR + 'ue, "é": 1}\n')
    check = ["check", "-T", "gemm", "-t", "a2", "-p", GEMM_P, "--remeasure", "--backend",
             "cmd:flip"]
    r = tlctl(d, *check)
    assert r.returncode == 1, r.stderr
    assert_inert(r, "tr\\x1b]0;pwned\\x07\\x1b[2Jue", "\"é\"")
    error_lines = [ln for ln in r.stdout.decode().splitlines() if ln.startswith("error: ")]
    assert len(error_lines) == 1, r.stdout
    r = tlctl(d, *check, "-f", "json")            # the report for programs stays exact
    assert r.returncode == 1, r.stderr
    assert OSC + CLEAR in json.loads(r.stdout)["entries"][0]["error"]


def test_templates_table_version_and_description(daemon):
    doc = {"tiletune": 1, "name": "txt_hostile", "version": "1" + C1_CSI + RLO,
           "description": "sum " + OSC + CLEAR + " done",
           "params": {"block": [256, 1024]},
           "tensors": {"X": {"shape": [65536], "dtype": "float16"}}}
    req = urllib.request.Request(f"{daemon.url}/v1/templates/{doc['name']}", method="PUT",
                                 data=json.dumps(doc).encode(),
                                 headers={"Authorization": f"Bearer {TUNE}"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        assert resp.status == 201
    r = tlctl(daemon, "templates")
    assert r.returncode == 0, r.stderr
    assert_inert(r, "1\\x9b2J\\u202e", "sum \\x1b]0;pwned\\x07\\x1b[2J done")
    r = tlctl(daemon, "--json", "templates")
    assert r.returncode == 0, r.stderr
    t = [x for x in json.loads(r.stdout)["templates"] if x["name"] == "txt_hostile"]
    assert t and t[0]["version"] == doc["version"] and OSC in t[0]["summary"], t


# tune --wait on a terminal draws a live convergence curve on stderr with its best-so-far line
# in red; that plot looked at NO_COLOR only, so `tlctl --no-color tune --wait` still drew the
# red escapes (the table after it, on stdout, had no colour). NO_COLOR set but empty does not
# turn colour off (no-color.org: "present and not an empty string"); it used to.
def test_no_color_flag_reaches_the_live_plot(daemon):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TILETUNE_URL=daemon.url, TILETUNE_TOKEN=TUNE)
    for flag, extra, red in (("--no-color", {}, False), ("", {"NO_COLOR": "1"}, False),
                             ("", {}, True), ("", {"NO_COLOR": ""}, True)):
        cmd = (f"{TLCTL} {flag} tune gemm -p M=1024,N=1024,K=1024,dtype=float16 -t a2 "
               "--budget 12 --wait")
        r = subprocess.run(["script", "-qec", cmd, "/dev/null"], env=dict(env, **extra),
                           capture_output=True, timeout=300)   # script(1): tlctl on a pty
        assert r.returncode == 0, r.stdout
        assert b"\r\x1b[K[" in r.stdout, r.stdout            # the terminal form was drawn
        assert (b"\x1b[31m" in r.stdout) == red, (flag, extra, r.stdout)

# SPDX-License-Identifier: MIT
"""test_tlctl_ci.py - tlctl check and tlctl export as a CI job and an AOT build use them: the
real tlctl ($TT_BIN_DIR/tlctl) against the session's tiletuned, kernels tuned on the simulator.

- the JUnit report parses (xml.etree) and the counts a CI system reads (tests, failures,
  skipped, one failure element per failed testcase) agree with the exit code, and it parses
  when a message holds what XML 1.0 cannot (control characters, U+FFFF); --tolerance
  refuses what is not a number in 0..10, the empty value too; a --measured file with a
  duplicate key is a usage error;
- the xLLM exports refuse a template without inputs (xLLM needs a non-empty DISPATCH_SCHEMA),
  while json and c-header export it;
- a c-header of int inputs at the ends of int64 compiles with -std=c11 -pedantic -Werror and
  its lookup finds both rows; a c-header's median_us is the stored double, not 6 digits of it.
"""
import json
import os
import subprocess
import urllib.request
import xml.etree.ElementTree as ET

import pytest

from conftest import BIN_DIR, TUNE

TLCTL = os.path.join(BIN_DIR, "tlctl")
GEMM_P = "M=1536,N=1536,K=1536,dtype=float16"
UNTUNED_P = "M=1000,N=1000,K=1000,dtype=float16"


def tlctl(daemon, *args):
    env = dict(os.environ, TILETUNE_URL=daemon.url, TILETUNE_TOKEN=TUNE)
    return subprocess.run([TLCTL, *args], env=env, text=True, capture_output=True, timeout=300)


def tune(daemon, template, *problem):
    r = tlctl(daemon, "tune", template, *problem, "-t", "a2", "--backend", "sim",
              "--budget", "3", "--wait")
    assert r.returncode == 0, r.stderr


def put_template(daemon, doc):
    req = urllib.request.Request(f"{daemon.url}/v1/templates/{doc['name']}", method="PUT",
                                 data=json.dumps(doc).encode(),
                                 headers={"Authorization": f"Bearer {TUNE}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status == 201


def vector_template(name, inputs):
    """A vector kernel over a fixed 64 Ki tensor: its inputs only name the problem."""
    return {"tiletune": 1, "name": name, "version": "1", "inputs": inputs,
            "params": {"block": [256, 1024]}, "let": {"n_num": "ceildiv(65536, block)"},
            "buffers": {"X_UB": {"scope": "UB", "shape": ["block"], "dtype": "float16",
                                 "copies": 2}},
            "tensors": {"X": {"shape": [65536], "dtype": "float16"},
                        "Y": {"shape": [65536], "dtype": "float16", "output": True}},
            "kernel": {"grid": {"bx": "n_num"}, "cores": "vector",
                       "body": [{"copy": ["gm:X", "X_UB"], "along": ["bx"]},
                                {"vec": "muls", "out": "X_UB", "in": ["X_UB"]},
                                {"copy": ["X_UB", "gm:Y"], "along": ["bx"]}]}}


@pytest.fixture(scope="module")
def gemm_median(daemon):
    tune(daemon, "gemm", "-p", GEMM_P)
    r = tlctl(daemon, "--json", "best", "gemm", "-p", GEMM_P, "-t", "a2")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["median_us"]


# (case, entries as (problem, factor of the best median or None for the untuned shape),
#  extra flags, exit code, failures, skipped)
JUNIT_CASES = [
    ("pass", [(GEMM_P, 1.0)], [], 0, 0, 0),
    ("regressed", [(GEMM_P, 1.5)], [], 1, 1, 0),
    ("missing", [(GEMM_P, 1.0), (UNTUNED_P, None)], [], 0, 0, 1),
    # with --fail-on-missing the check fails: the report must say which testcase failed
    ("missing fails", [(GEMM_P, 1.0), (UNTUNED_P, None)], ["--fail-on-missing"], 1, 1, 0),
    ("both", [(GEMM_P, 1.5), (UNTUNED_P, None)], ["--fail-on-missing"], 1, 2, 0),
]


@pytest.mark.parametrize("case,entries,flags,code,failures,skipped", JUNIT_CASES,
                         ids=[c[0] for c in JUNIT_CASES])
def test_junit_counts_agree_with_exit_code(daemon, gemm_median, tmp_path, case, entries, flags,
                                           code, failures, skipped):
    measured = [{"problem": p, "samples_us": [gemm_median * (f or 1.0)]} for p, f in entries]
    (tmp_path / "measured.json").write_text(json.dumps(measured))
    xml = tmp_path / "perf.xml"
    r = tlctl(daemon, "check", "-T", "gemm", "-t", "a2", "--measured",
              str(tmp_path / "measured.json"), "--format", "junit", "-o", str(xml), *flags)
    assert r.returncode == code, r.stderr
    root = ET.parse(xml).getroot()
    suites = root.findall("testsuite")
    assert root.tag == "testsuites" and len(suites) == 1
    cases = suites[0].findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    skip = [c for c in cases if c.find("skipped") is not None]
    for node in (root, suites[0]):
        assert int(node.get("tests")) == len(cases) == len(entries)
        assert int(node.get("failures")) == len(failed) == failures
    assert int(suites[0].get("skipped")) == len(skip) == skipped
    assert (len(failed) > 0) == (code == 1)      # what CI shows matches what it does
    if code:
        assert r.stderr.count("\n") == 1 and str(xml) in r.stderr


# a directory given as a file opens and then fails to read: the message gave no reason
@pytest.mark.parametrize("args", [["check", "-T", "gemm", "-t", "a2", "--measured"],
                                  ["import", "-t", "a2"]], ids=["check", "import"])
def test_directory_as_input_file_says_why(daemon, tmp_path, args):
    r = tlctl(daemon, *args, str(tmp_path))
    assert r.returncode == 2, r.stderr
    assert f"cannot read {tmp_path}: Is a directory" in r.stderr, r.stderr


# an entry's "name" (docs/ci.md) names its testcase: the report named every testcase by its
# problem key, so two named entries of one shape (a kernel measured two ways) were two testcases
# of the same name, which CI dashboards merge into one
def test_junit_testcase_named_by_entry_name(daemon, gemm_median, tmp_path):
    measured = [{"problem": GEMM_P, "samples_us": [gemm_median], "name": "gemm-eager"},
                {"problem": GEMM_P, "samples_us": [gemm_median], "name": "gemm-graph"},
                {"problem": GEMM_P, "samples_us": [gemm_median]}]
    (tmp_path / "measured.json").write_text(json.dumps(measured))
    xml = tmp_path / "perf.xml"
    r = tlctl(daemon, "check", "-T", "gemm", "-t", "a2", "--measured",
              str(tmp_path / "measured.json"), "--format", "junit", "-o", str(xml))
    assert r.returncode == 0, r.stderr
    names = [c.get("name") for c in ET.parse(xml).getroot().iter("testcase")]
    assert names[:2] == ["gemm-eager", "gemm-graph"], names
    assert names[2].startswith(GEMM_P.split(",")[0]), names     # no name: the problem key


# result lines of a cmd: toolchain that the server quotes in a re-measurement's error: XML 1.0
# cannot hold a control character (but tab, newline, CR), U+FFFE or U+FFFF, and the report
# had them raw, so a CI's JUnit parser rejected the whole file; a tab came out as a space
BAD_RESULT_LINES = [
    ('{"latency_us": [10], "correct": "a\x01b"}', "\\x01"),     # jansson: control character
    ('{"latency_us": [10], "correct": tr\x1bue}', "\\x1b"),      # jansson: invalid token
    ('{"latency_us": [10], "correct": "\\uffff\\ufffe"}', "\\uFFFF\\uFFFE"),  # quoted back raw
    ('{"latency_us": [10], "correct": "a\tb"}', "\t"),          # kept, not normalised
]


def flip_daemon(make_daemon, result):
    """A daemon with the toolchain `flip`, whose run prints the file `result` when it exists
    (else a good result line), and gemm at GEMM_P tuned on it once (the check's baseline)."""
    d = make_daemon(toolchains={"flip": {"run": f"if [ -e {result} ]; then cat {result}; else "
                                                "echo '{\"latency_us\": [10], \"correct\": true}'; fi"}})
    r = tlctl(d, "tune", "gemm", "-p", GEMM_P, "-t", "a2", "--backend", "cmd:flip",
              "--budget", "1", "--wait")
    assert r.returncode == 0, r.stderr
    return d


def test_junit_escapes_what_xml_cannot_hold(make_daemon, tmp_path):
    result = tmp_path / "result"
    d = flip_daemon(make_daemon, result)
    for line, shown in BAD_RESULT_LINES:
        result.write_text(line + "\n")
        xml = tmp_path / "perf.xml"
        r = tlctl(d, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P, "--remeasure",
                  "--backend", "cmd:flip", "--format", "junit", "-o", str(xml))
        assert r.returncode == 1, (line, r.stderr)
        root = ET.parse(xml).getroot()       # raises on what XML 1.0 forbids
        failure = root.find("testsuite/testcase/failure")
        assert failure.get("type") == "error" and shown in failure.get("message"), \
            (line, failure.get("message"))


# --tolerance values: refused (exit 2, one line naming the value) or taken; an empty value (an
# unset variable in a CI script) was read as 0 and failed checks within the default 5%
# 1e-400 underflows (strtod: 0, ERANGE) and was taken as a tolerance of 0
@pytest.mark.parametrize("value,code", [("", 2), ("abc", 2), ("0.05x", 2), ("-0.1", 2),
                                        ("nan", 2), ("11", 2), ("1e-400", 2), ("-1e-400", 2),
                                        ("1e400", 2), ("0", 1), ("0.06", 0), ("10", 0)])
def test_tolerance_values(daemon, gemm_median, tmp_path, value, code):
    (tmp_path / "m.json").write_text(json.dumps([{"problem": GEMM_P,
                                                  "samples_us": [gemm_median * 1.03]}]))
    r = tlctl(daemon, "check", "-T", "gemm", "-t", "a2", "--measured", str(tmp_path / "m.json"),
              "--tolerance", value)
    assert r.returncode == code, r.stdout + r.stderr
    if code == 2:
        assert r.stderr.count("\n") == 1 and "--tolerance" in r.stderr and f'"{value}"' in r.stderr


# a --measured file with a key twice (a harness that appends a second run's samples_us) was
# read with the last value winning, so the check judged samples the CI never meant alone; the
# server refuses such a body, tlctl now refuses the file (exit 2, one line naming it)
@pytest.mark.parametrize("text", [
    '[{"problem": "%s", "samples_us": [1e9], "samples_us": [%r]}]',
    '{"entries": [{"problem": "%s", "samples_us": [1e9]}], "entries": [{"samples_us": [%r]}]}',
], ids=["entry", "top"])
def test_measured_duplicate_keys(daemon, gemm_median, tmp_path, text):
    path = tmp_path / "dup.json"
    path.write_text(text % (GEMM_P, gemm_median))
    r = tlctl(daemon, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P, "--measured", str(path))
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and str(path) in r.stderr and "duplicate" in r.stderr


def test_xllm_exports_need_inputs(daemon):
    put_template(daemon, vector_template("ci_noinputs", {}))
    tune(daemon, "ci_noinputs")
    for fmt, code in (("json", 0), ("c-header", 0), ("specializations", 5),
                      ("registry-inc", 5)):
        r = tlctl(daemon, "export", "-T", "ci_noinputs", "-t", "a2", "--format", fmt)
        assert r.returncode == code, (fmt, r.stdout, r.stderr)
        if code:
            assert "no inputs" in r.stderr and "DISPATCH_SCHEMA" in r.stderr, r.stderr


def test_c_header_int64_ends_compile(daemon, tmp_path):
    lo, hi = -2**63, 2**63 - 1
    put_template(daemon, vector_template("ci_wide", {"off": {"type": "int", "min": lo,
                                                             "max": hi}}))
    tune(daemon, "ci_wide", "-p", f"off={lo}")
    tune(daemon, "ci_wide", "-p", f"off={hi}")
    header = tmp_path / "ci_wide.h"
    r = tlctl(daemon, "export", "-T", "ci_wide", "-t", "a2", "--format", "c-header", "-o",
              str(header))
    assert r.returncode == 0, r.stderr
    main = tmp_path / "main.c"
    main.write_text('#include "ci_wide.h"\nint main(void) {\n'
                    '    const ci_wide_entry *a = find_ci_wide_entry(INT64_MIN);\n'
                    '    const ci_wide_entry *b = find_ci_wide_entry(INT64_MAX);\n'
                    '    return !(a && b && a != b && a->off == INT64_MIN && b->off == INT64_MAX'
                    ' && find_ci_wide_entry(0) == NULL);\n}\n')
    exe = tmp_path / "main"
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-o",
                         str(exe), str(main)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr + header.read_text()
    assert subprocess.run([str(exe)]).returncode == 0


# the c-header printed median_us with "%.6g" (34.9812 for 34.981191487782688), so a consumer
# comparing it with the stored value (the JSON export, GET /v1/best) saw another time
def test_c_header_median_is_exact(daemon, gemm_median, tmp_path):
    header = tmp_path / "gemm.h"
    r = tlctl(daemon, "export", "-T", "gemm", "-t", "a2", "--format", "c-header", "-p", GEMM_P,
              "-o", str(header))
    assert r.returncode == 0, r.stderr
    main = tmp_path / "main.c"
    main.write_text('#include "gemm.h"\nint main(void) {\n'
                    '    const gemm_entry *e = find_gemm_entry(1536, 1536, 1536, "float16", '
                    '"float16");\n'
                    f'    return !(e && e->median_us == {gemm_median!r});\n}}\n')
    exe = tmp_path / "main"
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror",
                         "-Wno-float-equal", "-o", str(exe), str(main)],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr + header.read_text()
    assert subprocess.run([str(exe)]).returncode == 0, (gemm_median, header.read_text())


# --pin copies the stored best rows and checks nothing; an option of the check given with it
# was dropped without a word (exit 0, "pinned 1"): --measured did not pin the CI's samples,
# -f junit -o FILE wrote no report
@pytest.mark.parametrize("flags", [["--measured", "m.json"], ["--remeasure"],
                                   ["--baseline", "rel0"], ["--against", "best"],
                                   ["--tolerance", "0.1"], ["--fail-on-missing"],
                                   ["-f", "junit"], ["-o", "perf.xml"]],
                         ids=lambda f: f[0])
def test_pin_refuses_check_options(daemon, gemm_median, tmp_path, flags):
    (tmp_path / "m.json").write_text(json.dumps([{"problem": GEMM_P, "samples_us": [1.0]}]))
    flags = [str(tmp_path / f) if f.endswith((".json", ".xml")) else f for f in flags]
    r = tlctl(daemon, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P, "--pin", "relpin",
              *flags)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and "--pin" in r.stderr and flags[0] in r.stderr
    assert not (tmp_path / "perf.xml").exists()

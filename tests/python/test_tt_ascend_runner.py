# SPDX-License-Identifier: MIT
# test_tt_ascend_runner.py - templates/tt_ascend_runner.py against the fake `msprof op` of
# tests/data/fake-toolchain (same OPPROF_*/.../OpBasicInfo*.csv layout and columns as CANN's):
# the run command's result line, launch order, warm-up skipping, rated-clock filtering, and the
# error paths.  Run by ctest (test_python) with Debian's /usr/bin/python3 -m pytest.
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUNNER = os.path.join(ROOT, "templates", "tt_ascend_runner.py")
FAKE_MSPROF = os.path.join(ROOT, "tests", "data", "fake-toolchain", "msprof")
sys.path.insert(0, os.path.join(ROOT, "templates"))
import tt_ascend_runner as runner  # noqa: E402

CHECKED_APP = 'echo \'{"correct": %s, "max_abs_err": 0.0}\' > tt_correct.json'


def run(cwd, *args, **env):
    e = dict(os.environ, MSPROF=FAKE_MSPROF, **env)
    return subprocess.run([sys.executable, RUNNER, *args], cwd=cwd, env=e, text=True,
                          capture_output=True)


def last_json(stdout):
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    return json.loads(lines[-1])


def test_run_msprof_result_line(tmp_path):
    r = run(tmp_path, "run", "k.py", WARMUP="2", SAMPLES="4", FAKE_MSPROF_APP=CHECKED_APP % "true")
    assert r.returncode == 0, r.stderr
    res = last_json(r.stdout)
    # launches 0 (checked), 1-2 (warm-up) are skipped; launches 3..6 in launch order
    assert res["latency_us"] == [100.0, 100.5, 101.0, 100.0]
    assert res["correct"] is True
    assert res["timer"] == "msprof op Task Duration(us)"
    # what msprof was asked to collect: 1 + WARMUP + SAMPLES launches of main_kernel
    runs = list((tmp_path / "prof").glob("OPPROF_*"))
    assert len(runs) == 1
    assert sorted(int(p.name) for p in (runs[0] / "main_kernel").iterdir()) == list(range(7))


def test_run_msprof_wrong_result_is_reported(tmp_path):
    r = run(tmp_path, "run", "k.py", WARMUP="0", SAMPLES="3", FAKE_MSPROF_APP=CHECKED_APP % "false")
    assert r.returncode == 0
    assert last_json(r.stdout)["correct"] is False


def test_run_msprof_fails_without_the_checked_launch(tmp_path):
    r = run(tmp_path, "run", "k.py", FAKE_MSPROF_APP="exit 0")
    assert r.returncode == 1
    assert "before the checked launch" in r.stderr
    assert not [ln for ln in r.stdout.splitlines() if ln.startswith("{")]


def test_run_msprof_fails_when_msprof_fails(tmp_path):
    r = run(tmp_path, "run", "k.py", FAKE_MSPROF_APP=CHECKED_APP % "true", FAKE_MSPROF_MODE="fail")
    assert r.returncode == 1
    assert "msprof op exited 1" in r.stderr


def test_run_msprof_no_csv(tmp_path):
    r = run(tmp_path, "run", "k.py", FAKE_MSPROF_APP=CHECKED_APP % "true", FAKE_MSPROF_MODE="nocsv")
    assert r.returncode == 1
    assert "no OPPROF_* directory" in r.stderr


def test_rerun_never_reads_the_previous_collection(tmp_path):
    # a config runs again in its build directory (remeasure, repeats, a later job): when msprof
    # writes nothing this time, the previous run's OPPROF_* must not be read as new samples
    ok = run(tmp_path, "run", "k.py", WARMUP="0", SAMPLES="3", FAKE_MSPROF_APP=CHECKED_APP % "true")
    assert ok.returncode == 0, ok.stderr
    r = run(tmp_path, "run", "k.py", WARMUP="0", SAMPLES="3", FAKE_MSPROF_APP=CHECKED_APP % "true",
            FAKE_MSPROF_MODE="nocsv")
    assert r.returncode == 1, r.stdout
    assert "no OPPROF_* directory" in r.stderr
    assert not [ln for ln in r.stdout.splitlines() if ln.startswith("{")]


def test_launch_count_limit(tmp_path):
    r = run(tmp_path, "run", "k.py", WARMUP="50", SAMPLES="50", FAKE_MSPROF_APP=CHECKED_APP % "true")
    assert r.returncode == 1
    assert "= 101 > 100" in r.stderr


def test_two_kernels_per_call(tmp_path):
    # a source whose call() launches two kernels: samples are the sums of launch pairs
    (tmp_path / "k.py").write_text("KERNELS_PER_CALL = 2\n")
    r = run(tmp_path, "run", "k.py", WARMUP="1", SAMPLES="2", FAKE_MSPROF_COLD="0",
            FAKE_MSPROF_APP=CHECKED_APP % "true")
    assert r.returncode == 0, r.stderr
    # 8 launches: calls (0,1) checked, (2,3) warm-up, (4,5) and (6,7) timed
    # launch i takes 100 + (i % 3) * 0.5: 4 -> 100.5, 5 -> 101.0, 6 -> 100.0, 7 -> 100.5
    assert last_json(r.stdout)["latency_us"] == [201.5, 200.5]
    runs = list((tmp_path / "prof").glob("OPPROF_*"))
    assert len(list((runs[0] / "main_kernel").iterdir())) == 8


def test_parse_rated_clock_filter(tmp_path):
    # 5 launches, the first 3 below the rated clock (+40 us): only the rated ones count
    subprocess.run([FAKE_MSPROF, "op", "--kernel-name=main_kernel", "--launch-count=5",
                    "--output=prof", "true"], cwd=tmp_path, check=True, capture_output=True,
                   env=dict(os.environ, FAKE_MSPROF_COLD="3"))
    samples, slow = runner.parse_msprof(str(tmp_path / "prof"), "main_kernel", skip=0)
    assert samples == [100.0, 100.5]
    assert slow == 3
    # none at the rated clock: all rows are used
    samples, slow = runner.parse_msprof(str(tmp_path / "prof"), "main_kernel", skip=4)
    assert samples == [100.5] and slow == 0


def test_parse_single_launch_layout_and_kernel_filter(tmp_path):
    subprocess.run([FAKE_MSPROF, "op", "--kernel-name=main_kernel", "--launch-count=1",
                    "--output=prof", "true"], cwd=tmp_path, check=True, capture_output=True,
                   env=dict(os.environ, FAKE_MSPROF_COLD="0"))
    runs = list((tmp_path / "prof").glob("OPPROF_*/OpBasicInfo.csv"))
    assert len(runs) == 1
    header = runs[0].read_text().splitlines()[0].split(",")
    assert header[:3] == ["Op Name", "Op Type", "Task Duration(us)"]
    assert "Current Freq" in header and "Rated Freq" in header
    assert runner.parse_msprof(str(tmp_path / "prof"), "main_kernel")[0] == [100.0]
    with pytest.raises(ValueError, match="no rows of kernel"):
        runner.parse_msprof(str(tmp_path / "prof"), "other_kernel")


def test_parse_missing_duration_column(tmp_path):
    d = tmp_path / "prof" / "OPPROF_20260101000000_ABCDEF"
    d.mkdir(parents=True)
    (d / "OpBasicInfo.csv").write_text("Op Name,Op Type,Total Time(us)\nmain_kernel,mix,12.5\n")
    with pytest.raises(ValueError, match="Task Duration"):
        runner.parse_msprof(str(tmp_path / "prof"))


def test_timer_must_be_known(tmp_path):
    r = run(tmp_path, "run", "k.py", TIMER="wallclock")
    assert r.returncode == 2
    assert "msprof or events" in r.stderr

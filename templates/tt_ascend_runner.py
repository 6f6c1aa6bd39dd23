#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tt_ascend_runner.py - builds, checks and times one rendered TileLang-Ascend source for a
# tiletune cmd: toolchain, and prints the result line the cmd: backend reads.
#
# A rendered source (templates/<name>.py.in) is only the kernel.  It defines:
#   kernel()            -> the @tilelang.jit-compiled kernel for the rendered config
#   make_inputs()       -> tuple of NPU tensors passed to the kernel (seeded, deterministic)
#   reference(*inputs)  -> the expected output tensor (or tuple), computed with torch
#   call(k, *inputs)    -> optional: how to launch k (default k(*inputs)), returns the output(s)
#   TOLERANCE           -> optional (rtol, atol), default (1e-2, 1e-2)
#   KERNELS_PER_CALL    -> optional, default 1: kernel launches one call() makes (e.g. split-KV
#                          attention and its combine); msprof samples are their summed durations
#
# Commands (the sample toolchain in docs/toolchains.md uses build and run):
#   build SRC          compile (tilelang lowers to Ascend C and runs bisheng); exit 1 on failure
#   run SRC            check against the reference, time, print {"latency_us": [...], ...}
#   launch SRC         the application msprof profiles: one checked launch (writes
#                      tt_correct.json), WARMUP launches, SAMPLES launches, L2 flush before each
#   parse-msprof DIR   print the samples found under an msprof --output directory (for tests)
#
# Timers (TIMER, default msprof):
#   msprof   `msprof op --kernel-name=$KERNEL_NAME --launch-count=1+WARMUP+SAMPLES --output=prof
#            python3 tt_ascend_runner.py launch SRC`; the samples are "Task Duration(us)" of the
#            OpBasicInfo*.csv rows of the kernel (TileLang names it main_kernel) under the newest
#            prof/OPPROF_*/ directory (prof/ is deleted before each run: never an earlier run's),
#            in launch order, minus the checked launch and the warm-up.
#            Rows whose "Current Freq" is below "Rated Freq" are dropped when rows at the rated
#            clock exist (the clock ramps during the first launches).
#   events   torch_npu events around each launch after an L2 flush: LESS ACCURATE (includes
#            launch overhead and host jitter; upstream rejects these numbers for perf claims).
# Environment: WARMUP (default 10), SAMPLES (default 20), KERNEL_NAME (main_kernel), MSPROF
# (msprof), TIMER, L2_FLUSH_MB (256: bytes written before each timed launch).
# Standard library only at import time: torch and tilelang are imported by the commands
# that need an NPU, so parse-msprof runs anywhere.
import csv
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys

DEFAULT_KERNEL = "main_kernel"
DURATION_COL = "Task Duration(us)"
MSPROF_LAUNCH_MAX = 100   # msprof op collects at most this many launches per run


def _env_int(name, default, lo, hi):
    raw = os.environ.get(name, str(default))
    try:
        v = int(raw)
    except ValueError:
        raise SystemExit(f"tt_ascend_runner: {name}={raw!r} is not an integer")
    if not lo <= v <= hi:
        raise SystemExit(f"tt_ascend_runner: {name}={v} outside {lo}..{hi}")
    return v


def load_source(path):
    spec = importlib.util.spec_from_file_location("tt_kernel", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"tt_ascend_runner: cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for fn in ("kernel", "make_inputs", "reference"):
        if not callable(getattr(mod, fn, None)):
            raise SystemExit(f"tt_ascend_runner: {path} does not define {fn}()")
    return mod


def _launch(mod, k, inputs):
    call = getattr(mod, "call", None)
    return call(k, *inputs) if callable(call) else k(*inputs)


def check(mod, k, inputs):
    """Run once and compare with the reference; returns (correct, max_abs_err)."""
    import torch
    out = _launch(mod, k, inputs)
    torch.npu.synchronize()
    ref = mod.reference(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    rtol, atol = getattr(mod, "TOLERANCE", (1e-2, 1e-2))
    ok, err = len(outs) == len(refs), 0.0
    for o, r in zip(outs, refs):
        o, r = o.float().cpu(), r.float().cpu()
        if o.shape != r.shape:
            return False, float("inf")
        err = max(err, float((o - r).abs().max()) if o.numel() else 0.0)
        ok = ok and bool(torch.allclose(o, r, rtol=rtol, atol=atol))
    return ok, err


def _flush_buffer():
    import torch
    mb = _env_int("L2_FLUSH_MB", 256, 0, 4096)
    return torch.empty(mb * (1 << 20) // 4, dtype=torch.int32, device="npu") if mb else None


def cmd_build(path):
    mod = load_source(path)
    mod.kernel()   # lowers and compiles; raises on failure
    print("built")
    return 0


def _prepared(path):
    """Load, compile, make the inputs and run the checked launch: (mod, k, inputs, correct)."""
    import torch_npu  # noqa: F401  (registers the npu device)
    mod = load_source(path)
    k = mod.kernel()
    inputs = mod.make_inputs()
    correct, err = check(mod, k, inputs)
    with open("tt_correct.json", "w", encoding="utf-8") as f:
        json.dump({"correct": correct, "max_abs_err": err}, f)
    print("Kernel Output Match!" if correct else f"Kernel Output Mismatch! (max abs err {err})")
    return mod, k, inputs, correct


def cmd_launch(path):
    """The application msprof profiles (also usable alone)."""
    import torch
    mod, k, inputs, _ = _prepared(path)
    flush = _flush_buffer()
    for _ in range(_env_int("WARMUP", 10, 0, 1000) + _env_int("SAMPLES", 20, 1, 1000)):
        if flush is not None:
            flush.zero_()
        _launch(mod, k, inputs)
    torch.npu.synchronize()
    return 0


def _rows_of(csv_path):
    with open(csv_path, newline="", encoding="utf-8-sig") as f:
        return [{(k or "").strip(): (v or "").strip() for k, v in r.items()}
                for r in csv.DictReader(f)]


def _launch_order(path):
    """Sort key: the numeric directory components (launch indices) of a CSV path."""
    return [int(p) if p.isdigit() else -1 for p in path.split(os.sep)] + [path]


def _freq(v):
    try:
        return float(v)
    except ValueError:
        return None


def parse_msprof(out_dir, kernel=DEFAULT_KERNEL, skip=0, per_call=1):
    """Samples (us) of `kernel` under out_dir: newest OPPROF_*/**/OpBasicInfo*.csv, launch order.

    skip and the result count calls of per_call consecutive launches each; a call's sample is
    the sum of its launches' durations, and it is below the rated clock when any launch is.
    Raises ValueError with a one-line reason when nothing usable is found."""
    runs = sorted(glob.glob(os.path.join(out_dir, "OPPROF_*")), key=os.path.getmtime)
    runs = [r for r in runs if os.path.isdir(r)]
    if not runs:
        raise ValueError(f"no OPPROF_* directory under {out_dir} (did msprof op run?)")
    csvs = sorted(glob.glob(os.path.join(runs[-1], "**", "OpBasicInfo*.csv"), recursive=True),
                  key=_launch_order)
    if not csvs:
        raise ValueError(f"no OpBasicInfo*.csv under {runs[-1]}")
    rows = []
    for p in csvs:
        for r in _rows_of(p):
            name = r.get("Op Name", "")
            if DURATION_COL not in r:
                raise ValueError(f"{p}: no \"{DURATION_COL}\" column")
            if kernel and kernel not in name:
                continue
            rows.append(r)
    rows = rows[skip * per_call:]
    calls = [rows[i:i + per_call] for i in range(0, len(rows) - per_call + 1, per_call)]
    if not calls:
        raise ValueError(f"no rows of kernel {kernel!r} after skipping {skip} in {runs[-1]}")

    def at_rated(r):
        cur, rated = _freq(r.get("Current Freq", "")), _freq(r.get("Rated Freq", ""))
        return cur is not None and rated is not None and cur >= rated
    rated = [c for c in calls if all(at_rated(r) for r in c)]
    use = rated if rated else calls
    samples = []
    for c in use:
        total = 0.0
        for r in c:
            d = _freq(r[DURATION_COL])
            if d is None or not d > 0:
                raise ValueError(f"bad {DURATION_COL} value {r[DURATION_COL]!r}")
            total += d
        samples.append(total)
    return samples, len(calls) - len(use)


def kernels_per_call(path):
    """KERNELS_PER_CALL of a source, read without importing it (no NPU needed)."""
    import ast
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError):
        return 1
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and
                                                t.id == "KERNELS_PER_CALL" for t in node.targets):
            try:
                return max(1, int(ast.literal_eval(node.value)))
            except (ValueError, TypeError):
                return 1
    return 1


def cmd_run_msprof(path):
    warm = _env_int("WARMUP", 10, 0, 1000)
    n = _env_int("SAMPLES", 20, 1, 1000)
    per_call = kernels_per_call(path)
    count = (1 + warm + n) * per_call
    if count > MSPROF_LAUNCH_MAX:
        raise SystemExit(f"tt_ascend_runner: (1 + WARMUP + SAMPLES) x {per_call} kernel(s) = "
                         f"{count} > {MSPROF_LAUNCH_MAX} launches msprof op collects")
    kernel = os.environ.get("KERNEL_NAME", DEFAULT_KERNEL)
    for stale in ("tt_correct.json",):
        if os.path.exists(stale):
            os.remove(stale)
    # the previous run's collection (remeasure and repeats run a config again in this directory):
    # were it left, a run whose msprof writes nothing would read it as new samples; it also
    # keeps the build directory from growing by one OPPROF_* per run
    shutil.rmtree("prof", ignore_errors=True)
    cmd = [os.environ.get("MSPROF", "msprof"), "op", f"--kernel-name={kernel}",
           f"--launch-count={count}", "--output=prof",
           sys.executable, os.path.abspath(__file__), "launch", path]
    with open("msprof.log", "w", encoding="utf-8") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
    if rc != 0 or not os.path.exists("tt_correct.json"):
        with open("msprof.log", encoding="utf-8", errors="replace") as log:
            sys.stderr.write("".join(log.readlines()[-20:]))
        print(f"tt_ascend_runner: msprof op exited {rc}" +
              ("" if os.path.exists("tt_correct.json") else " before the checked launch"),
              file=sys.stderr)
        return 1
    with open("tt_correct.json", encoding="utf-8") as f:
        verdict = json.load(f)
    try:
        samples, slow = parse_msprof("prof", kernel, skip=1 + warm, per_call=per_call)
    except ValueError as e:
        print(f"tt_ascend_runner: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"latency_us": samples, "correct": bool(verdict["correct"]),
                      "timer": "msprof op Task Duration(us)", "below_rated_clock": slow}))
    return 0


def cmd_run_events(path):
    import torch
    mod, k, inputs, correct = _prepared(path)
    flush = _flush_buffer()
    for _ in range(_env_int("WARMUP", 10, 0, 1000)):
        _launch(mod, k, inputs)
    n = _env_int("SAMPLES", 20, 1, 1000)
    ev = [(torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True))
          for _ in range(n)]
    for s, e in ev:
        if flush is not None:
            flush.zero_()
        s.record()
        _launch(mod, k, inputs)
        e.record()
    torch.npu.synchronize()
    samples = [s.elapsed_time(e) * 1000.0 for s, e in ev]   # ms -> us
    print(json.dumps({"latency_us": samples, "correct": correct,
                      "timer": "torch_npu events (less accurate: includes launch overhead)"}))
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__ or "usage: tt_ascend_runner.py build|run|launch|parse-msprof ARG",
              file=sys.stderr)
        return 2
    what, arg = argv[1], argv[2]
    if what == "parse-msprof":
        kernel = os.environ.get("KERNEL_NAME", DEFAULT_KERNEL)
        skip = _env_int("SKIP", 0, 0, 1000)
        try:
            samples, slow = parse_msprof(arg, kernel, skip)
        except ValueError as e:
            print(f"tt_ascend_runner: {e}", file=sys.stderr)
            return 1
        print(json.dumps({"latency_us": samples, "below_rated_clock": slow}))
        return 0
    if what == "build":
        return cmd_build(arg)
    if what == "launch":
        return cmd_launch(arg)
    if what == "run":
        timer = os.environ.get("TIMER", "msprof")
        if timer == "msprof":
            return cmd_run_msprof(arg)
        if timer == "events":
            return cmd_run_events(arg)
        print(f"tt_ascend_runner: TIMER must be msprof or events, got {timer!r}",
              file=sys.stderr)
        return 2
    print(f"tt_ascend_runner: unknown command {what!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

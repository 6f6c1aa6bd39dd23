/* SPDX-License-Identifier: MIT
 * fidelity_timing.h - how a published point was timed, and what the compared prediction of
 * bench_fidelity charges for the launch under that method.
 *
 * The model and the simulator predict what tiletune's own measurement backend records: the
 * device task duration (msprof op_summary Task Duration, docs/toolchains.md), whose launch
 * floor is the target's launch_us.  A time taken by events over back-to-back calls
 * (torch.npu.Event over a loop, triton.testing.do_bench) overlaps most of a launch's fixed cost
 * with the previous call; there the compared prediction replaces launch_us by
 * TT_FIDT_PIPELINED_US.  The timing method is a term of the comparison, not of the model.
 * Pure functions; thread-safe.
 */
#ifndef TT_FIDELITY_TIMING_H
#define TT_FIDELITY_TIMING_H

/* [fit] per-call fixed cost of back-to-back event-timed calls: the value of the grid in
 * docs/cost-model.md section 5 that minimises the mean per-family model MAPE of
 * bench_fidelity over shared/ascend/published.json (no other data). */
#define TT_FIDT_PIPELINED_US 1.0

typedef enum tt_fidt {
    TT_FIDT_DEVICE = 0,   /* device task time: msprof Task Duration, mskpp on-device time */
    TT_FIDT_LOOP,         /* events over back-to-back calls: torch.npu.Event loop, do_bench */
    TT_FIDT_UNSTATED      /* not stated, or per-call host wall clock: the device value is kept */
} tt_fidt;

/* The class of a published `timing` text (NULL or "" = not stated). */
tt_fidt tt_fidt_of(const char *timing);

/* 1 when the method empties the L2 before every timed call, so the kernel's inputs come from
 * HBM: `triton.testing.do_bench` clears a cache buffer before each repetition, and
 * Triton-Ascend's NPU driver makes that buffer 192 MiB, the L2 of an A2/A3 die, and zeroes it
 * (third_party/ascend/backend/driver.py: get_empty_cache_for_benchmark, clear_cache) [O].
 * Other event loops (torch.npu.Event, a plain "do_bench" of another library) keep the L2 as
 * the previous call left it. */
int tt_fidt_flushes_l2(const char *timing);

/* Short name of a class for tables: "device", "loop", "n/s". */
const char *tt_fidt_name(tt_fidt k);

/* Fixed launch cost the compared prediction charges for class k: launch_us for device and
 * unstated rows, pipelined_us for loop rows. */
double tt_fidt_launch_us(tt_fidt k, double launch_us, double pipelined_us);

#endif

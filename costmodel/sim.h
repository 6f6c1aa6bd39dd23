/* SPDX-License-Identifier: MIT
 * sim.h - discrete-event pipeline simulator of a template's tile program (backend `sim`).
 *
 * One level below the analytic model: per core, ops are issued in program order into
 * per-unit in-order queues (MTE2, MTE1, M, V, FIX, MTE3, S); an op starts when its unit is
 * free and its inputs are ready; a buffer with copies = s is a ring of s slots, so a producer
 * waits for the consumer of the slot it overwrites; HBM/L2 bandwidth is shared by all cores
 * at each instant.  Mix kernels run the cube program and the two vector programs with
 * cross-core flags.  Identical waves are simulated once.  It is a model, not the chip.
 *
 * Deterministic: the same inputs give the same result.  Thread-safe: no global state.
 * Ownership: borrows template and target; trace_json in the result is owned by the caller
 * (free() it), NULL unless requested.
 */
#ifndef TT_SIM_H
#define TT_SIM_H

#include <stdint.h>

#include "model.h"
#include "target.h"
#include "template.h"

typedef enum tt_stall {
    TT_STALL_DATA,            /* waiting for an input produced by another unit */
    TT_STALL_SLOT,            /* waiting for a free ring slot */
    TT_STALL_BANDWIDTH,       /* transfer slowed by shared HBM/L2 bandwidth */
    TT_STALL_FLAG,            /* waiting for a cross-core flag */
    TT_STALL__COUNT
} tt_stall;
const char *tt_stall_name(tt_stall s);

typedef struct tt_sim_opts {
    int trace_core;           /* -1: no trace; else the core whose timelines are traced */
    int64_t max_events;       /* 0: TT_SIM_DEFAULT_MAX_EVENTS; exceeded -> TT_ELIMIT */
    /* Steady-state shortcut (docs/simulator.md): a wave's longest top-level loop is
     * simulated at a few short trip counts (anchors, shared by every wave of the same
     * shape) and the figures interpolated linearly once three anchors are collinear.  A
     * single wave of at most this many instructions is simulated in full unless its shape
     * recurs.  0: default (TT_SIM_SHORTCUT_OPS); < 0: never.  Never used while tracing. */
    int64_t shortcut_ops;
    /* Asked before every wave and every TT_SIM_CANCEL_EVENTS events; non-zero stops the run
     * with TT_ECANCELLED (the caller knows why).  NULL: never asked.  Called on the
     * simulating thread with cancel_ctx. */
    int (*cancel)(void *cancel_ctx);
    void *cancel_ctx;
} tt_sim_opts;

#define TT_SIM_DEFAULT_MAX_EVENTS 50000000
/* Instructions of one agent's program at most (a program is built in full before it is
 * simulated: ~60 bytes an instruction, so ~0.5 GB here); a longer one -> TT_ELIMIT, as does
 * one longer than the run's event budget (each instruction is at least one event). */
#define TT_SIM_MAX_PROGRAM_INSTS (1 << 23)
/* GM transfers of one unit that may be in their latency phase at once (a target may set
 * "overheads": {"dma_outstanding": n}, 1..8); their data phases stay serial. */
#define TT_SIM_DMA_DEPTH 4
#define TT_SIM_CANCEL_EVENTS 65536        /* events between two calls of opts->cancel */
#define TT_SIM_SHORTCUT_OPS 1024
#define TT_SIM_MAX_TRACE_EVENTS 200000    /* trace records kept (~30 MB of JSON); later ones are dropped */

typedef struct tt_sim_result {
    tt_rc rc;
    char reason[160];         /* infeasible / deadlock description */
    double cycles;
    double time_us;
    double busy_cycles[TT_UNIT__COUNT];   /* traced/representative core */
    double util[TT_UNIT__COUNT];
    double stall_cycles[TT_STALL__COUNT];
    int64_t blocks;
    double hbm_read_bytes;    /* GM reads that miss L2 and go to HBM, whole kernel (a MODEL
                                 figure: the simulator's L2 estimate, not a trace) */
    int64_t waves;
    int64_t waves_simulated;  /* waves - folded */
    int64_t events;           /* events actually simulated (after folding / shortcut) */
    int extrapolated;         /* 1: the steady-state shortcut was used for some wave */
    char *trace_json;         /* Chrome trace-event JSON, caller frees */
} tt_sim_result;

/* Simulate one config.  slots: problem + params (lets evaluated into it; t->nslots long;
 * the grid-dim slots are overwritten).  opts may be NULL (no trace, defaults).
 * Returns out->rc: TT_OK, TT_EINFEASIBLE (same reason as the model), TT_EDEADLOCK (reason
 * names the wait that never ends), TT_ELIMIT (max_events), TT_ECANCELLED (opts->cancel), TT_EUNSUPPORTED (no kernel, or a
 * path / vector class / cube dtype the target has no figure for), TT_EINVAL (bad
 * arguments, trace_core out of range), TT_ETARGET (no cores), an expression error
 * (TT_EOVERFLOW, ...), TT_ENOMEM.  On error out->reason says why, trace_json is NULL and the
 * figures are 0.  out is always initialised: tt_sim_result_close() is safe after any call. */
tt_rc tt_sim_run(const tt_template *t, const tt_target *tgt, int64_t *slots,
                 const tt_sim_opts *opts, tt_sim_result *out);
void tt_sim_result_close(tt_sim_result *r);   /* frees trace_json */

#endif

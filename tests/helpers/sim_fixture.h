/* SPDX-License-Identifier: MIT
 * sim_fixture.h - the simulator tests' fixture: a made-up round-number target, templates and
 * slots from text, one simulation from "k=v,..." strings, the hand "chain" template, and the
 * shipped FlashAttention template on the A3 target.
 *
 * Shared by test_sim_rules, test_sim_fast_path and test_sim_shipped.  Every time it gives is
 * the simulator's (a model, not the chip).  Not thread-safe: call from the test's main thread.
 */
#ifndef TT_SIM_FIXTURE_H
#define TT_SIM_FIXTURE_H

#include <stdint.h>

#include "sim.h"
#include "target.h"
#include "template.h"

/* Round-number target with `cores` cube cores: 1000 MHz, every path 64 B/cycle + 100 cycles,
 * no shared-memory limit (hbm_gbps = 0) unless a test sets one, no issue/flag/launch
 * overheads, one GM transfer per unit in its latency phase at a time (dma_outstanding 1:
 * keeps the arithmetic short).  Overwrites *t (nothing to free). */
void tt_sfx_mk_target(tt_target *t, int cores);
/* A template from JSON text (fatal CUnit assertion when it does not parse); the caller frees
 * it with tt_tmpl_free(). */
tt_template *tt_sfx_parse(const char *text);
/* slots from "k=v,..." problem and config strings (fatal CUnit assertions) */
void tt_sfx_mk_slots(const tt_template *t, const char *prob, const char *cfg, int64_t *slots);
/* Simulate one config (trace_core -1: no trace); the simulator's rc, *r as tt_sim_run. */
tt_rc tt_sfx_sim(const tt_template *t, const tt_target *tgt, const char *prob, const char *cfg,
                 int trace_core, tt_sim_result *r);

/* k loop of 4: A and B tiles GM->L0A/L0B (MTE2), mma into C (M), then C -> GM (FIX). */
extern const char *const tt_sfx_chain_tmpl;

/* The shipped targets and templates/flash_attn_fwd.json, with the A3 target Ascend910_9391;
 * tt_sfx_fa_load returns 0 when any is missing.  Free with tt_sfx_fa_free. */
typedef struct tt_sfx_fa {
    tt_targets *ts;
    tt_template *fa;
    const tt_target *tgt;
} tt_sfx_fa;

int tt_sfx_fa_load(tt_sfx_fa *f);
void tt_sfx_fa_free(tt_sfx_fa *f);

#endif

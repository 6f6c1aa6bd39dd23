/* SPDX-License-Identifier: MIT
 * strategy_fixture.h - the strategy tests' fixture: the toy space (a in 1..8, b in 1..8,
 * c in {0,1}; feasible iff a*b <= N and (a+b+c) % 3 != 0; N = 24), two deterministic synthetic
 * objectives, and a driver that runs a strategy to its end asserting the invariants of every
 * run.
 *
 * Shared by test_strategy_contract and test_strategy_bo.  Use tt_stfx_init / tt_stfx_cleanup
 * as the CUnit suite init/cleanup.  Objectives are synthetic functions of the params (not
 * measurements).  The toy globals are read-only after tt_stfx_init (threads may share them);
 * tt_stfx_run is as thread-safe as the strategy it drives.
 */
#ifndef TT_STRATEGY_FIXTURE_H
#define TT_STRATEGY_FIXTURE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "space.h"
#include "target.h"
#include "template.h"

extern tt_template *tt_stfx_toy;                  /* suite-owned */
extern tt_space *tt_stfx_toy_space;               /* suite-owned, at N = 24 */
extern int64_t tt_stfx_toy_problem[TT_MAX_SLOTS]; /* N = 24 */

/* 0 when the toy template and its space are built, else 1. */
int tt_stfx_init(void);
int tt_stfx_cleanup(void);

/* Whether (a, b, c) is feasible at N = n / how many configs are. */
int tt_stfx_toy_feasible(int64_t a, int64_t b, int64_t c, int64_t n);
int tt_stfx_toy_count(int64_t n);

/* Deterministic synthetic objectives of the params. */
double tt_stfx_obj_smooth(const int64_t *p);
double tt_stfx_obj_rough(const int64_t *p);

typedef struct tt_stfx_run_out {
    uint64_t keys[4096];
    size_t n;
    double best;
    tt_rc rc;
} tt_stfx_run_out;

/* Drive a strategy to its end with objective f; asserts the invariants of every run:
 * proposals are feasible, unique and within the budget.  Borrows everything; fills *out. */
void tt_stfx_run(const char *name, uint64_t seed, int64_t budget, size_t cap,
                 double (*f)(const int64_t *), const tt_template *t, tt_space *sp,
                 const int64_t *problem, const tt_model *model, const tt_target *tgt,
                 const json_t *opts, tt_stfx_run_out *out);
/* Whether two runs proposed the same sequence. */
int tt_stfx_same_seq(const tt_stfx_run_out *a, const tt_stfx_run_out *b);

#endif

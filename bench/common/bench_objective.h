/* SPDX-License-Identifier: MIT
 * bench_objective.h - a recorded objective (time per space index) and one strategy run against
 * it, shared by bench_strategies and bench_tuning.
 *
 * The table owns idx and us (malloc'd; the caller frees both).  Not thread-safe per object;
 * the functions neither print nor exit.
 */
#ifndef TT_BENCH_OBJECTIVE_H
#define TT_BENCH_OBJECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "strategy.h"

typedef struct tt_bobj {
    uint64_t *idx;   /* space indexes, ascending */
    double *us;      /* time of idx[i]; INFINITY = failed */
    size_t n;
    double best, worst, median;
} tt_bobj;

/* The time of space index idx, INFINITY when it is not in the table (binary search). */
double tt_bobj_lookup(const tt_bobj *o, uint64_t idx);

/* Run the strategy of c against o (c->problem fills the input slots of each config).
 * curve (may be NULL) gets budget entries: curve[b] = best after b+1 trials, o->worst before
 * the first success and held after an early stop; failures count as trials.  *ran (may be
 * NULL) names the strategy that ran.  Returns the trials run, or -1 when the strategy could
 * not be made (e filled). */
long tt_bobj_run(const tt_strategy_config *c, const tt_bobj *o, double *curve, const char **ran,
                 tt_errinfo *e);

#endif

/* SPDX-License-Identifier: MIT
 * bench_objective.c - recorded objective lookup and one strategy run (bench_objective.h).
 */
#include "bench_objective.h"

#include <math.h>
#include <string.h>

#include "space.h"

double tt_bobj_lookup(const tt_bobj *o, uint64_t idx)
{
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (o->idx[mid] < idx) lo = mid + 1;
        else hi = mid;
    }
    return lo < o->n && o->idx[lo] == idx ? o->us[lo] : INFINITY;
}

long tt_bobj_run(const tt_strategy_config *c, const tt_bobj *o, double *curve, const char **ran,
                 tt_errinfo *e)
{
    tt_strategy *st = NULL;
    if (tt_strategy_new(c, &st, e) != TT_OK) return -1;
    if (ran) *ran = tt_strategy_chosen(st)->name;
    size_t nin = c->t->ninputs, budget = c->budget > 0 ? (size_t)c->budget : 0;
    int64_t params[TT_MAX_SLOTS], slots[TT_MAX_SLOTS];
    if (nin) memcpy(slots, c->problem, nin * sizeof(int64_t));
    double best = o->worst;
    size_t n = 0;
    for (;;) {
        size_t k = 0;
        if (tt_strategy_next(st, 1, params, &k) != TT_OK || k == 0) break;
        memcpy(slots + nin, params, c->t->nparams * sizeof(int64_t));
        double v = tt_bobj_lookup(o, tt_space_encode(c->space, slots));
        tt_strategy_report(st, params, isfinite(v) ? TT_OK : TT_ERUN, v);
        if (v < best) best = v;
        if (curve && n < budget) curve[n] = best;
        n++;
    }
    for (size_t i = n; curve && i < budget; i++) curve[i] = best;   /* stopped early */
    tt_strategy_free(st);
    return (long)n;
}

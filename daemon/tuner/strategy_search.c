/* SPDX-License-Identifier: MIT
 * strategy_search.c - the search strategies: random, exhaustive, evolution and anneal.
 *
 * evolution and anneal use the model to seed (and evolution to screen children) when there
 * is one, and run model-free otherwise (a template without a kernel, e.g. replay datasets).
 * Without a model, model-topk and model-refine run anneal (strategy.c).
 */
#include "strategy_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- random ---------------------------------------------------------------------------- */
static tt_rc tt_random_start(tt_strategy *st) { return tt__st_random_round(st, 16); }
static tt_rc tt_random_refill(tt_strategy *st) { return tt__st_random_round(st, 16); }

const tt__strategy_ops tt__strategy_random = {
    .name = "random", .default_budget = 64, .uses_model = 0,
    .start = tt_random_start, .refill = tt_random_refill,
};

/* ---- exhaustive ------------------------------------------------------------------------ */
typedef struct tt_ex_ctx {
    tt_strategy *st;
    int oom;
} tt_ex_ctx;

static int tt_ex_visit(void *ud, const int64_t *slots)
{
    tt_ex_ctx *c = ud;
    if (tt__st_push(c->st, tt_space_encode(c->st->cfg.space, slots)) < 0) {
        c->oom = 1;
        return 1;
    }
    return tt__st_room(c->st) <= 0;
}

static tt_rc tt_ex_start(tt_strategy *st)
{
    /* stream the enumeration straight into the queue, up to the budget */
    tt_ex_ctx c = {.st = st};
    tt_space_counts counts;
    uint64_t limit = st->budget == INT64_MAX ? 0 : (uint64_t)st->budget;
    if (limit == 0 && tt_space_total(st->cfg.space) > st->max_enumerate) return TT_ELIMIT;
    tt_rc rc = tt_space_enumerate(st->cfg.space, tt_ex_visit, &c, limit, &counts);
    if (c.oom) return TT_ENOMEM;
    if (rc != TT_OK) return rc;
    st->planned = (int64_t)st->qlen;
    return TT_OK;
}

static tt_rc tt_ex_refill(tt_strategy *st) { (void)st; return TT_OK; }

const tt__strategy_ops tt__strategy_exhaustive = {
    .name = "exhaustive", .default_budget = 0, .uses_model = 0,
    .start = tt_ex_start, .refill = tt_ex_refill,
};

/* ---- evolution ---------------------------------------------------------------------- */
/* A steady-state genetic search on the positions of the param values in their domains.
 *
 * Generation 0: `population` configs (default budget/10 in [4, 16]); without a model they
 * are drawn at random, with one the better half by the model of `sample` random configs and
 * the rest at random from the sample.  Then one child per round (so every measurement is
 * used at once): parent A by a tournament of TT_EVO_TOUR among the TT_EVO_PARENTS best
 * measured configs; with probability TT_EVO_CROSS a second parent B the same way and a
 * uniform crossover; then each param with more than one value mutates with probability
 * 1/(such params): one step in its domain (half the time) or another random value.  A child
 * that equals a proposed config is mutated once more; children must be feasible and new
 * (else another try, up to 64; then a random immigrant).  With a model, 4 children are made
 * and the best by prediction is proposed.
 *
 * Why this shape (bench_tuning on the replay datasets, budget 100, 600 seeds): the earlier
 * generational version (populations of 12 for a 100 budget, parents = the 12 best, every
 * child a crossover) spent most of its budget recombining mediocre random configs and was no
 * better than random search on MI250X; a small elite pool (the 4 best) with mostly mutation
 * and one child per round exploits every good measurement at once. */
#ifndef TT_EVO_PARENTS
#define TT_EVO_PARENTS 4        /* parents: the best n measured configs */
#endif
#ifndef TT_EVO_TOUR
#define TT_EVO_TOUR 3           /* tournament size among the parents */
#endif
#ifndef TT_EVO_CROSS
#define TT_EVO_CROSS 0.3        /* probability of a crossover with a second parent */
#endif
#ifndef TT_EVO_STEP
#define TT_EVO_STEP 0.5         /* probability that a mutation is one step (else random) */
#endif

typedef struct tt_evo {
    uint64_t stride[TT_MAX_SLOTS];
    size_t nvar;                 /* params with more than one value */
    size_t var[TT_MAX_SLOTS];    /* those params, ascending */
    size_t nv[TT_MAX_SLOTS];     /* values of each param */
    /* the dividers of the ranges a refill draws from: nvar (the mutation rate and the
     * param of a forced mutation), 1..TT_EVO_PARENTS (the tournament), nv[p] - 1 (another
     * value of param p) */
    tt__udiv dvar, dpar[TT_EVO_PARENTS + 1], dother[TT_MAX_SLOTS];
    /* the parents, kept up to date: tt__st_best_n(TT_EVO_PARENTS) over the reports
     * st->obs_*[0..nfold) (folded in at each refill, not rescanned), with each parent's
     * positions in its param domains */
    size_t nfold, npar;
    uint64_t par[TT_EVO_PARENTS];
    double pus[TT_EVO_PARENTS];
    size_t ppos[TT_EVO_PARENTS][TT_MAX_SLOTS];
} tt_evo;

static void tt_evo_pos(const tt_strategy *st, const tt_evo *e, uint64_t idx, size_t *pos)
{
    for (size_t p = 0; p < st->np; p++)
        pos[p] = (size_t)((idx / e->stride[p]) % st->cfg.t->params[p].nvalues);
}

static tt_rc tt_evo_start(tt_strategy *st)
{
    tt_evo *e = calloc(1, sizeof *e);
    if (!e) return TT_ENOMEM;
    st->impl = e;
    uint64_t s = 1;
    for (size_t p = st->np; p-- > 0;) {
        e->stride[p] = s;
        s *= st->cfg.t->params[p].nvalues;
    }
    for (size_t p = 0; p < st->np; p++) {
        e->nv[p] = st->cfg.t->params[p].nvalues;
        if (e->nv[p] < 2) continue;
        e->var[e->nvar++] = p;
        tt__udiv_init(&e->dother[p], e->nv[p] - 1);
    }
    if (e->nvar) tt__udiv_init(&e->dvar, e->nvar);
    for (size_t n = 1; n <= TT_EVO_PARENTS; n++) tt__udiv_init(&e->dpar[n], n);
    int64_t P = st->opt_population < tt__st_room(st) ? st->opt_population : tt__st_room(st);
    if (!st->cfg.model) return tt__st_random_round(st, P);
    /* with a model: the better half of the first generation by the model, from a sample */
    size_t S = (size_t)st->opt_sample;
    if ((int64_t)S < P) S = (size_t)P;
    tt__ranked *cand = malloc(S * sizeof *cand);
    if (!cand) return TT_ENOMEM;
    size_t n = 0;
    tt__u64set tmp = {0};
    /* bounded: a sampled (not enumerated) space can draw the same config again */
    for (size_t tries = 0; n < S && tries < 8 * S; tries++) {
        uint64_t idx;
        if (!tt__st_draw(st, &idx)) break;
        if (tt__u64set_add(&tmp, idx) != 1) continue;
        cand[n].idx = idx;
        cand[n].pred_us = tt__st_predict(st, NULL, idx, NULL);
        n++;
    }
    tt__u64set_free(&tmp);
    int64_t pushed = 0;
    tt__ranked *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) {
        free(cand);
        return TT_ENOMEM;
    }
    memcpy(sorted, cand, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, tt__ranked_cmp);
    for (size_t i = 0; i < n && pushed < (P + 1) / 2; i++) {
        if (!isfinite(sorted[i].pred_us)) break;
        int r = tt__st_push(st, sorted[i].idx);
        if (r < 0) {
            free(sorted);
            free(cand);
            return TT_ENOMEM;
        }
        pushed += r;
    }
    free(sorted);
    for (size_t i = 0; i < n && pushed < P; i++) {
        int r = tt__st_push(st, cand[i].idx);
        if (r < 0) {
            free(cand);
            return TT_ENOMEM;
        }
        pushed += r;
    }
    free(cand);
    return TT_OK;
}

/* The draws of a refill: its PRNG state is a local copy of st->rng (registers, not memory;
 * stored back before anything else draws), and every range has its divider made once.  The
 * numbers, and their order, are those of tt__st_uniform / tt__st_unit / tt__st_rand on st:
 * test_strategy_seq pins the proposals. */

/* Tournament among the parents (sorted best first). */
static size_t tt_evo_pick(uint64_t *rs, const tt_evo *e, size_t nparents)
{
    const tt__udiv *d = &e->dpar[nparents];
    size_t best = (size_t)tt__rng_below(rs, d);
    for (int k = 1; k < TT_EVO_TOUR; k++) {
        size_t c = (size_t)tt__rng_below(rs, d);
        if (c < best) best = c;
    }
    return best;
}

/* Move param p of pos (and config index *idx with it): one step (prob TT_EVO_STEP) or
 * another random value.  Inlined, so that the PRNG state stays in registers. */
static inline __attribute__((always_inline)) void tt_evo_mutate1(uint64_t *rs, const tt_evo *e, size_t *pos, uint64_t *idx, size_t p)
{
    size_t nv = e->nv[p], v;
    if (nv < 2) return;
    if (tt__rng_unit(rs) < TT_EVO_STEP) {
        if (pos[p] == 0) v = 1;
        else if (pos[p] + 1 >= nv) v = nv - 2;
        else v = (tt__rng_next(rs) & 1) ? pos[p] + 1 : pos[p] - 1;
    } else {
        v = (size_t)tt__rng_below(rs, &e->dother[p]);
        if (v >= pos[p]) v++;
    }
    *idx += ((uint64_t)v - (uint64_t)pos[p]) * e->stride[p];   /* mod 2^64: exact */
    pos[p] = v;
}

/* Fold the reports since the last refill into the parents (and their positions). */
static void tt_evo_parents(tt_strategy *st, tt_evo *e)
{
    uint64_t old[TT_EVO_PARENTS];
    memcpy(old, e->par, sizeof old);
    size_t nold = e->npar;
    for (; e->nfold < st->nobs; e->nfold++)
        tt__st_best_add(e->par, e->pus, TT_EVO_PARENTS, &e->npar, st->obs_idx[e->nfold],
                        st->obs_us[e->nfold]);
    for (size_t i = 0; i < e->npar; i++)
        if (i >= nold || e->par[i] != old[i]) tt_evo_pos(st, e, e->par[i], e->ppos[i]);
}

/* 1 when idx is one of kids[0..n). */
static int tt_evo_has(const tt__ranked *kids, size_t n, uint64_t idx)
{
    for (size_t i = 0; i < n; i++)
        if (kids[i].idx == idx) return 1;
    return 0;
}

static tt_rc tt_evo_refill(tt_strategy *st)
{
    tt_evo *e = st->impl;
    size_t np = st->np;
    int64_t R = tt__st_room(st) > 0 ? 1 : 0;
    size_t want = (size_t)(st->cfg.model ? 4 * R : R);
    tt__ranked kids[4];
    tt_rc rc = TT_OK;
    tt_evo_parents(st, e);
    size_t npar = e->npar;
    size_t nk = 0;
    if (npar >= 1 && e->nvar > 0) {
        size_t c[TT_MAX_SLOTS];
        uint64_t rs[4];
        memcpy(rs, st->rng, sizeof rs);
        for (size_t tries = 0; nk < want && tries < 64 * want; tries++) {
            size_t a = tt_evo_pick(rs, e, npar);
            uint64_t idx = e->par[a];   /* the index of c: sum of c[p] * stride[p] */
            for (size_t p = 0; p < np; p++) c[p] = e->ppos[a][p];
            if (npar >= 2 && tt__rng_unit(rs) < TT_EVO_CROSS) {
                const size_t *b = e->ppos[tt_evo_pick(rs, e, npar)];
                for (size_t p = 0; p < np; p++)
                    if (tt__rng_next(rs) & 1) {
                        idx += ((uint64_t)b[p] - (uint64_t)c[p]) * e->stride[p];
                        c[p] = b[p];
                    }
            }
            int changed = 0;
            for (size_t k = 0; k < e->nvar; k++) {
                if (tt__rng_below(rs, &e->dvar) != 0) continue;   /* rate 1/nvar */
                tt_evo_mutate1(rs, e, c, &idx, e->var[k]);
                changed = 1;
            }
            if (!changed && (tt__u64set_has(&st->seen, idx) || tt_evo_has(kids, nk, idx)))
                tt_evo_mutate1(rs, e, c, &idx, e->var[tt__rng_below(rs, &e->dvar)]);
            if (tt__u64set_has(&st->seen, idx) || tt_evo_has(kids, nk, idx)) continue;
            if (!tt__st_feasible(st, idx)) continue;
            kids[nk].idx = idx;
            kids[nk].pred_us = st->cfg.model ? tt__st_predict(st, NULL, idx, NULL) : (double)nk;
            nk++;
        }
        memcpy(st->rng, rs, sizeof rs);
    }
    if (st->cfg.model) qsort(kids, nk, sizeof *kids, tt__ranked_cmp);
    int64_t pushed = 0;
    for (size_t i = 0; i < nk && pushed < R; i++) {
        int r = tt__st_push(st, kids[i].idx);
        if (r < 0) return TT_ENOMEM;
        pushed += r;
    }
    if (pushed < R) rc = tt__st_random_round(st, R - pushed);   /* immigrants */
    return rc;
}

static void tt_evo_free(tt_strategy *st)
{
    free(st->impl);
    st->impl = NULL;
}

const tt__strategy_ops tt__strategy_evolution = {
    .name = "evolution", .default_budget = 64, .uses_model = 0,
    .start = tt_evo_start, .refill = tt_evo_refill, .free = tt_evo_free,
};

/* ---- anneal ------------------------------------------------------------------------- */
/* Start at the model's best config, or without a model at the best of a few random ones
 * (budget/10, 2..16).  Then propose a move from the current config: one random param moved
 * one step (70 %) or set to a random value of its domain (30 %), feasible and unmeasured.
 * A slower config is accepted with probability exp(-log(t_new / t_cur) / T), T falling
 * geometrically from 0.1 to 0.01 over the budget; after 16 proposals without improving on
 * the best the walk restarts from the best.  When no move is left, a random config.
 * (Without a model, the earlier budget/16 <= 8 random starts and T0 = 0.3 left the walk
 * wandering in a poor region on MI250X: below random search until ~60 of 100 trials.) */
#ifndef TT_ANNEAL_T0
#define TT_ANNEAL_T0 0.1        /* initial temperature (on log time) */
#endif
#ifndef TT_ANNEAL_T1
#define TT_ANNEAL_T1 0.01       /* final temperature */
#endif
#ifndef TT_ANNEAL_STEP
#define TT_ANNEAL_STEP 0.7      /* probability of a one-step move (else a random value) */
#endif
#ifndef TT_ANNEAL_RESTART
#define TT_ANNEAL_RESTART 16    /* proposals without a new best before restarting at it */
#endif
#ifndef TT_ANNEAL_INIT_MAX
#define TT_ANNEAL_INIT_MAX 16   /* random starting configs without a model: budget/10, 2..16 */
#endif

typedef struct tt_anneal {
    int have_cur;
    uint64_t cur;
    double cur_us;
    int64_t init_left;        /* random starting configs still to propose */
    int64_t steps, since_best;
    double last_best;
} tt_anneal;

static tt_rc tt_anneal_start(tt_strategy *st)
{
    tt_anneal *a = calloc(1, sizeof *a);
    if (!a) return TT_ENOMEM;
    st->impl = a;
    a->last_best = INFINITY;
    if (st->cfg.model) {
        tt__ranked *r;
        size_t n;
        tt_rc rc = tt__st_rank(st, NULL, 1, &r, &n);
        if (rc != TT_OK) return rc;
        int pushed = n ? tt__st_push(st, r[0].idx) : 0;
        free(r);
        if (pushed < 0) return TT_ENOMEM;
        if (pushed) return TT_OK;
    }
    int64_t init = st->budget == INT64_MAX ? TT_ANNEAL_INIT_MAX : st->budget / 10;
    a->init_left = init < 2 ? 2 : init > TT_ANNEAL_INIT_MAX ? TT_ANNEAL_INIT_MAX : init;
    a->init_left--;
    return tt__st_random_round(st, 1);
}

static void tt_anneal_report(tt_strategy *st, uint64_t idx, tt_rc status, double us)
{
    tt_anneal *a = st->impl;
    if (!a) return;
    a->steps++;
    if (isfinite(us)) {
        if (!a->have_cur || us < a->cur_us) {
            a->have_cur = 1;
            a->cur = idx;
            a->cur_us = us;
        } else if (a->init_left <= 0) {
            double frac = st->budget == INT64_MAX ? 1 : (double)a->steps / (double)st->budget;
            double temp = TT_ANNEAL_T0 * pow(TT_ANNEAL_T1 / TT_ANNEAL_T0, frac > 1 ? 1 : frac);
            if (tt__st_unit(st) < exp(-log(us / a->cur_us) / temp)) {
                a->cur = idx;
                a->cur_us = us;
            }
        }
    }
    if (st->have_best && st->best_us < a->last_best) {
        a->last_best = st->best_us;
        a->since_best = 0;
    } else if (++a->since_best >= TT_ANNEAL_RESTART && st->have_best) {
        a->cur = st->best_idx;   /* restart from the best */
        a->cur_us = st->best_us;
        a->since_best = 0;
    }
}

/* A random feasible unmeasured move from idx, or 0 when none was found. */
static int tt_anneal_move(tt_strategy *st, uint64_t idx, uint64_t *out)
{
    const tt_template *t = st->cfg.t;
    size_t ni = t->ninputs;
    int64_t base[TT_MAX_SLOTS];
    memcpy(base, st->problem, ni * sizeof(int64_t));
    tt_space_decode(st->cfg.space, idx, base);
    for (int tries = 0; tries < 64; tries++) {
        size_t p = (size_t)tt__st_uniform(st, st->np);
        const tt_param *pp = &t->params[p];
        if (pp->nvalues < 2) continue;
        size_t pos = 0;
        while (pos < pp->nvalues && pp->values[pos] != base[ni + p]) pos++;
        size_t np;
        if (tt__st_unit(st) < TT_ANNEAL_STEP) {
            if (pos == 0) np = 1;
            else if (pos + 1 >= pp->nvalues) np = pos - 1;
            else np = (tt__st_rand(st) & 1) ? pos + 1 : pos - 1;
        } else {
            np = (size_t)tt__st_uniform(st, pp->nvalues);
            if (np == pos) continue;
        }
        memcpy(st->slots, base, (ni + st->np) * sizeof(int64_t));
        st->slots[ni + p] = pp->values[np];
        uint64_t v = tt_space_encode(st->cfg.space, st->slots);
        if (v == UINT64_MAX || tt__u64set_has(&st->seen, v)) continue;
        if (tt_space_check(st->cfg.space, st->slots, NULL) != TT_OK) continue;
        *out = v;
        return 1;
    }
    return 0;
}

static tt_rc tt_anneal_refill(tt_strategy *st)
{
    tt_anneal *a = st->impl;
    if (a->init_left > 0) {
        a->init_left--;
        return tt__st_random_round(st, 1);
    }
    uint64_t v;
    if ((a->have_cur && tt_anneal_move(st, a->cur, &v)) ||
        (st->have_best && tt_anneal_move(st, st->best_idx, &v)))
        return tt__st_push(st, v) < 0 ? TT_ENOMEM : TT_OK;
    return tt__st_random_round(st, 1);
}

static void tt_anneal_free(tt_strategy *st)
{
    free(st->impl);
    st->impl = NULL;
}

const tt__strategy_ops tt__strategy_anneal = {
    .name = "anneal", .default_budget = 64, .uses_model = 0,
    .start = tt_anneal_start, .refill = tt_anneal_refill, .on_report = tt_anneal_report,
    .free = tt_anneal_free,
};

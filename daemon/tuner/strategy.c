/* SPDX-License-Identifier: MIT
 * strategy.c - the strategy core: lifecycle, proposal queue, results, PRNG and the space
 * helpers (feasibility, prediction, ranking, random draws, neighbours) shared by strategy_*.c.
 */
#include "strategy_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tt__strategy_ops *const tt_strategy_table[] = {
    &tt__strategy_model_topk, &tt__strategy_model_refine, &tt__strategy_evolution,
    &tt__strategy_anneal,     &tt__strategy_random,       &tt__strategy_exhaustive,
    &tt__strategy_bo,         &tt__strategy_model_bo,
};
#define TT_NSTRATEGIES (sizeof tt_strategy_table / sizeof tt_strategy_table[0])

static const char *const tt_strategy_name_list[] = {
    "model-topk", "model-refine", "evolution", "anneal", "random", "exhaustive", "bo",
    "model-bo",   NULL,
};

const char *const *tt_strategy_names(void) { return tt_strategy_name_list; }

static const tt__strategy_ops *tt_strategy_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < TT_NSTRATEGIES; i++)
        if (strcmp(tt_strategy_table[i]->name, name) == 0) return tt_strategy_table[i];
    return NULL;
}

static int tt_strategy_is_auto(const char *name)
{
    return !name || !*name || strcmp(name, "auto") == 0;
}

/* "" is the default as for tt_strategy_resolve (docs/strategies.md); NULL is not a name. */
int tt_strategy_known(const char *name)
{
    return name && (tt_strategy_is_auto(name) || tt_strategy_find(name) != NULL);
}

tt_rc tt_strategy_resolve(const char *requested, int has_model, int64_t budget,
                          tt_strategy_choice *out)
{
    memset(out, 0, sizeof *out);
    if (tt_strategy_is_auto(requested)) {
        out->is_default = 1;
        if (has_model) {
            out->name = "model-bo";
            snprintf(out->reason, sizeof out->reason,
                     "default: the template has a kernel program, so the analytic model is "
                     "the prior of model-bo");
        } else if (budget == 0 || budget <= TT_STRATEGY_BO_MAX_BUDGET) {
            out->name = "bo";
            snprintf(out->reason, sizeof out->reason,
                     "default: no kernel program (no model) and a budget of at most %d trials",
                     TT_STRATEGY_BO_MAX_BUDGET);
        } else {
            out->name = "evolution";
            snprintf(out->reason, sizeof out->reason,
                     "default: no kernel program (no model) and a budget above %d trials",
                     TT_STRATEGY_BO_MAX_BUDGET);
        }
        return TT_OK;
    }
    const tt__strategy_ops *ops = tt_strategy_find(requested);
    if (!ops) return TT_EINVAL;
    out->name = ops->name;
    if (ops->uses_model && !has_model) {
        out->fallback = 1;
        out->name = ops->no_model;
        snprintf(out->reason, sizeof out->reason,
                 "fallback: %s needs the analytic model and the template has no kernel "
                 "program, so %s runs instead", ops->name, ops->no_model);
    } else {
        snprintf(out->reason, sizeof out->reason, "requested");
    }
    return TT_OK;
}

const tt_strategy_choice *tt_strategy_chosen(const tt_strategy *st) { return &st->choice; }

/* ---- u64 set ------------------------------------------------------------------------ */
static uint64_t tt_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

int tt__u64set_has(const tt__u64set *s, uint64_t key)
{
    if (!s->cap) return 0;
    uint64_t k = key + 1;
    for (size_t i = tt_mix64(k) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->keys[i] == 0) return 0;
        if (s->keys[i] == k) return 1;
    }
}

static int tt_u64set_grow(tt__u64set *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 64;
    uint64_t *nk = calloc(ncap, sizeof *nk);
    if (!nk) return -1;
    for (size_t j = 0; j < s->cap; j++) {
        uint64_t k = s->keys[j];
        if (!k) continue;
        size_t i = tt_mix64(k) & (ncap - 1);
        while (nk[i]) i = (i + 1) & (ncap - 1);
        nk[i] = k;
    }
    free(s->keys);
    s->keys = nk;
    s->cap = ncap;
    return 0;
}

int tt__u64set_add(tt__u64set *s, uint64_t key)
{
    if ((s->n + 1) * 2 > s->cap && tt_u64set_grow(s) != 0) return -1;
    uint64_t k = key + 1;
    size_t i = tt_mix64(k) & (s->cap - 1);
    while (s->keys[i]) {
        if (s->keys[i] == k) return 0;
        i = (i + 1) & (s->cap - 1);
    }
    s->keys[i] = k;
    s->n++;
    return 1;
}

void tt__u64set_free(tt__u64set *s)
{
    free(s->keys);
    memset(s, 0, sizeof *s);
}

int tt__ranked_cmp(const void *a, const void *b)
{
    const tt__ranked *x = a, *y = b;
    if (x->pred_us < y->pred_us) return -1;
    if (x->pred_us > y->pred_us) return 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* ---- PRNG: xoshiro256** seeded by splitmix64 (tt__st_rand and tt__st_uniform are inline in
 * strategy_int.h: the search strategies call them tens of thousands of times a run) ---- */
__extension__ typedef unsigned __int128 tt_u128;

void tt__udiv_init(tt__udiv *d, uint64_t n)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->lim = UINT64_MAX - UINT64_MAX % n;
    unsigned l = 63 - (unsigned)__builtin_clzll(n);   /* floor(log2 n) */
    d->shift = (unsigned char)l;
    if ((n & (n - 1)) == 0) return;                    /* a power of two: a shift */
    /* m = floor(2^(64+l) / n) fits in 64 bits since n > 2^l */
    tt_u128 num = (tt_u128)1 << (64 + l);
    uint64_t m = (uint64_t)(num / n), rem = (uint64_t)(num % n);
    if (n - rem < ((uint64_t)1 << l)) {
        d->magic = m + 1;                              /* q = mulhi(r, magic) >> l */
    } else {                                           /* 65-bit magic: the add variant */
        uint64_t twice = rem + rem;
        m += m;
        if (twice >= n || twice < rem) m += 1;
        d->magic = m + 1;
        d->add = 1;
    }
}

/* ---- options ---------------------------------------------------------------------------- */
static tt_rc tt_opt_int(const json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *v,
                        tt_errinfo *err)
{
    const json_t *x = o ? json_object_get(o, key) : NULL;
    if (!x) return TT_OK;
    if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
        return tt_errf(err, TT_EINVAL, "options", "option '%s' must be an integer in [%lld, %lld]",
                       key, (long long)lo, (long long)hi);
    *v = json_integer_value(x);
    return TT_OK;
}

/* ---- lifecycle ---------------------------------------------------------------------- */
tt_rc tt_strategy_new(const tt_strategy_config *cfg, tt_strategy **out, tt_errinfo *err)
{
    *out = NULL;
    tt_strategy_choice choice;
    if (tt_strategy_resolve(cfg->name, cfg->model != NULL, cfg->budget, &choice) != TT_OK)
        return tt_errf(err, TT_EINVAL, "strategy",
                       "unknown strategy '%s' (auto, bo, model-bo, model-topk, model-refine, "
                       "evolution, anneal, random, exhaustive)", cfg->name ? cfg->name : "");
    /* the budget and options of the one asked for; the code of the one that runs */
    const tt__strategy_ops *ops = tt_strategy_find(choice.is_default ? choice.name : cfg->name);
    if (!cfg->t || !cfg->space) return tt_errf(err, TT_EINVAL, "strategy", "no template or space");
    if (cfg->t->nparams == 0)
        return tt_errf(err, TT_EINVAL, "strategy", "template has no tunable params");
    if (!tt_space_indexed(cfg->space))   /* the API refuses it; a job queued before did not */
        return tt_errf(err, TT_EUNSUPPORTED, "template.params", "%s", TT_STRATEGY_HUGE_SPACE);
    if (cfg->budget < 0) return tt_errf(err, TT_EINVAL, "budget", "negative budget");
    if (cfg->options && !json_is_object(cfg->options))
        return tt_errf(err, TT_EINVAL, "options", "options must be an object");
    tt_strategy *st = calloc(1, sizeof *st);
    if (!st) return tt_errf(err, TT_ENOMEM, "strategy", "out of memory");
    st->ops = ops;
    st->cfg = *cfg;
    memcpy(st->problem, cfg->problem, cfg->t->ninputs * sizeof(int64_t));
    st->cfg.problem = st->problem;
    st->np = cfg->t->nparams;
    st->slots = calloc(cfg->t->nslots ? cfg->t->nslots : 1, sizeof(int64_t));
    if (!st->slots) {
        free(st);
        return tt_errf(err, TT_ENOMEM, "strategy", "out of memory");
    }
    st->budget = cfg->budget ? cfg->budget : ops->default_budget;
    if (st->budget == 0) st->budget = INT64_MAX;
    st->planned = st->budget;
    uint64_t x = cfg->seed;
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        st->rng[i] = tt_mix64(x);
    }
    st->max_enumerate = (uint64_t)1 << 22;
    int64_t me = (int64_t)st->max_enumerate;
    st->opt_topk = 0;
    st->opt_round = 0;
    st->opt_population = 0;   /* 0: budget / 10 in [4, 16] */
    st->opt_neighbours = 3;
    st->opt_sample = 4096;
    st->opt_patience = 3;
    tt_rc rc = TT_OK;
    if (!rc) rc = tt_opt_int(cfg->options, "topk", 1, 1 << 20, &st->opt_topk, err);
    if (!rc) rc = tt_opt_int(cfg->options, "round", 1, 1 << 16, &st->opt_round, err);
    if (!rc) rc = tt_opt_int(cfg->options, "population", 2, 1 << 16, &st->opt_population, err);
    if (!rc) rc = tt_opt_int(cfg->options, "neighbours", 0, 1 << 10, &st->opt_neighbours, err);
    if (!rc) rc = tt_opt_int(cfg->options, "sample", 1, 1 << 24, &st->opt_sample, err);
    if (!rc) rc = tt_opt_int(cfg->options, "patience", 1, 1 << 10, &st->opt_patience, err);
    if (!rc) rc = tt_opt_int(cfg->options, "init", 1, 1 << 10, &st->opt_init, err);
    if (!rc) rc = tt_opt_int(cfg->options, "max_enumerate", 1, INT64_MAX, &me, err);
    if (rc) {
        tt_strategy_free(st);
        return rc;
    }
    st->max_enumerate = (uint64_t)me;
    if (st->opt_population == 0) {
        int64_t pop = st->budget == INT64_MAX ? 16 : st->budget / 10;
        st->opt_population = pop < 4 ? 4 : pop > 16 ? 16 : pop;
    }
    if (st->opt_topk && strcmp(ops->name, "model-topk") == 0 && st->opt_topk < st->budget)
        st->budget = st->opt_topk;
    /* Without a model, a model strategy runs the best model-free one (same budget; see
     * docs/strategies.md for the numbers that chose it). */
    st->choice = choice;
    st->fallback = choice.fallback;
    st->ops = tt_strategy_find(choice.name);
    st->cfg.name = choice.name;
    *out = st;
    return TT_OK;
}

void tt_strategy_free(tt_strategy *st)
{
    if (!st) return;
    if (st->ops->free) st->ops->free(st);
    tt__u64set_free(&st->seen);
    tt__u64set_free(&st->reported_set);
    tt__u64set_free(&st->handed);
    free(st->queue);
    free(st->obs_idx);
    free(st->obs_us);
    free(st->all);
    free(st->feas);
    free(st->slots);
    free(st);
}

int64_t tt_strategy_planned(const tt_strategy *st) { return st->planned; }
int64_t tt_strategy_proposed(const tt_strategy *st) { return st->proposed; }
int tt_strategy_fallback(const tt_strategy *st) { return st->fallback; }
int64_t tt_strategy_budget(const tt_strategy *st) { return st->budget; }
int tt_strategy_enumerated(const tt_strategy *st) { return st->enumerated; }

int tt_strategy_best(const tt_strategy *st, int64_t *params_out, double *time_us)
{
    if (!st->have_best) return 0;
    if (params_out) {
        int64_t tmp[TT_MAX_SLOTS];
        tt_space_decode(st->cfg.space, st->best_idx, tmp);
        memcpy(params_out, tmp + st->cfg.t->ninputs, st->np * sizeof(int64_t));
    }
    if (time_us) *time_us = st->best_us;
    return 1;
}

/* ---- queue and proposals ------------------------------------------------------------ */
int64_t tt__st_room(const tt_strategy *st)
{
    return st->budget - st->proposed - (int64_t)st->qlen;
}

int tt__st_push(tt_strategy *st, uint64_t idx)
{
    if (tt__st_room(st) <= 0 || tt__u64set_has(&st->seen, idx)) return 0;
    if (st->qhead + st->qlen == st->qcap) {
        if (st->qhead) {
            memmove(st->queue, st->queue + st->qhead, st->qlen * sizeof *st->queue);
            st->qhead = 0;
        }
        if (st->qlen == st->qcap) {
            size_t ncap = st->qcap ? st->qcap * 2 : 64;
            uint64_t *nq = realloc(st->queue, ncap * sizeof *nq);
            if (!nq) return -1;
            st->queue = nq;
            st->qcap = ncap;
        }
    }
    if (tt__u64set_add(&st->seen, idx) < 0) return -1;
    st->queue[st->qhead + st->qlen++] = idx;
    return 1;
}

tt_rc tt_strategy_next(tt_strategy *st, size_t cap, int64_t *params_out, size_t *n)
{
    *n = 0;
    if (!st->started) {
        st->started = 1;
        tt_rc rc = st->ops->start(st);
        if (rc != TT_OK) {
            st->finished = 1;
            return rc;
        }
    }
    if (st->qlen == 0 && !st->finished) {
        if (st->reported < st->proposed) return TT_EINVAL;
        if (tt__st_room(st) > 0) {
            tt_rc rc = st->ops->refill(st);
            if (rc != TT_OK) {
                st->finished = 1;
                return rc;
            }
        }
        if (st->qlen == 0) st->finished = 1;
    }
    size_t ninputs = st->cfg.t->ninputs;
    while (*n < cap && st->qlen > 0) {
        uint64_t idx = st->queue[st->qhead++];
        st->qlen--;
        if (st->qlen == 0) st->qhead = 0;
        tt_space_decode(st->cfg.space, idx, st->slots);
        memcpy(params_out + *n * st->np, st->slots + ninputs, st->np * sizeof(int64_t));
        if (tt__u64set_add(&st->handed, idx) < 0) return TT_ENOMEM;
        st->proposed++;
        (*n)++;
    }
    return TT_OK;
}

tt_rc tt_strategy_report(tt_strategy *st, const int64_t *params, tt_rc status, double time_us)
{
    size_t ninputs = st->cfg.t->ninputs;
    memcpy(st->slots, st->problem, ninputs * sizeof(int64_t));
    memcpy(st->slots + ninputs, params, st->np * sizeof(int64_t));
    uint64_t idx = tt_space_encode(st->cfg.space, st->slots);
    if (idx == UINT64_MAX || !tt__u64set_has(&st->handed, idx) ||
        tt__u64set_has(&st->reported_set, idx))
        return TT_EINVAL;
    if (st->nobs == st->capobs) {
        size_t ncap = st->capobs ? st->capobs * 2 : 64;
        uint64_t *ni = realloc(st->obs_idx, ncap * sizeof *ni);
        if (!ni) return TT_ENOMEM;
        st->obs_idx = ni;
        double *nu = realloc(st->obs_us, ncap * sizeof *nu);
        if (!nu) return TT_ENOMEM;
        st->obs_us = nu;
        st->capobs = ncap;
    }
    if (tt__u64set_add(&st->reported_set, idx) < 0) return TT_ENOMEM;
    double us = (status == TT_OK && time_us > 0 && isfinite(time_us)) ? time_us : INFINITY;
    st->obs_idx[st->nobs] = idx;
    st->obs_us[st->nobs++] = us;
    st->reported++;
    if (isfinite(us) && (!st->have_best || us < st->best_us)) {
        st->have_best = 1;
        st->best_idx = idx;
        st->best_us = us;
    }
    if (st->ops->on_report) st->ops->on_report(st, idx, status, us);
    return TT_OK;
}

/* ---- space helpers ------------------------------------------------------------------ */
int tt__st_feasible(tt_strategy *st, uint64_t idx)
{
    if (st->feas) return (int)((st->feas[idx >> 6] >> (idx & 63)) & 1);
    memcpy(st->slots, st->problem, st->cfg.t->ninputs * sizeof(int64_t));
    tt_space_decode(st->cfg.space, idx, st->slots);
    return tt_space_check(st->cfg.space, st->slots, NULL) == TT_OK;
}

double tt__st_predict(tt_strategy *st, const tt_model *m, uint64_t idx, tt_model_result *res)
{
    tt_model_result tmp;
    if (!res) res = &tmp;
    if (!m) m = st->cfg.model;
    if (!m) return INFINITY;
    memcpy(st->slots, st->problem, st->cfg.t->ninputs * sizeof(int64_t));
    tt_space_decode(st->cfg.space, idx, st->slots);
    if (tt_model_eval(m, st->slots, res) != TT_OK || !(res->time_us > 0)) return INFINITY;
    return res->time_us;
}

typedef struct tt_enum_ctx {
    tt_strategy *st;
    uint64_t *v;
    size_t n, cap;
    int oom;
} tt_enum_ctx;

static int tt_enum_visit(void *ud, const int64_t *slots)
{
    tt_enum_ctx *c = ud;
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 1024;
        uint64_t *nv = realloc(c->v, ncap * sizeof *nv);
        if (!nv) {
            c->oom = 1;
            return 1;
        }
        c->v = nv;
        c->cap = ncap;
    }
    c->v[c->n++] = tt_space_encode(c->st->cfg.space, slots);
    return 0;
}

tt_rc tt__st_enumerate(tt_strategy *st)
{
    if (st->enumerated) return TT_OK;
    uint64_t total = tt_space_total(st->cfg.space);
    if (total > st->max_enumerate) return TT_ELIMIT;
    if (tt__st_enum_lookup(st)) {      /* enumerated by an earlier job of this process */
        st->enumerated = 1;
        if ((int64_t)st->nall < st->planned) st->planned = (int64_t)st->nall;
        return TT_OK;
    }
    tt_enum_ctx c = {.st = st};
    tt_space_counts counts;
    tt_rc rc = tt_space_enumerate(st->cfg.space, tt_enum_visit, &c, 0, &counts);
    if (c.oom) rc = TT_ENOMEM;
    if (rc != TT_OK) {
        free(c.v);
        return rc;
    }
    st->all = c.v;
    st->nall = c.n;
    st->enumerated = 1;
    /* feasibility by bit: the enumerated set is exactly what tt_space_check accepts */
    if (total <= TT_ST_FEAS_BITS_MAX && (st->feas = calloc((total + 63) / 64, sizeof *st->feas)))
        for (size_t i = 0; i < c.n; i++) st->feas[c.v[i] >> 6] |= (uint64_t)1 << (c.v[i] & 63);
    tt__st_enum_store(st, (size_t)((total + 63) / 64));   /* before any draw shuffles `all` */
    if ((int64_t)c.n < st->planned) st->planned = (int64_t)c.n;
    return TT_OK;
}

/* Keep the best k of a stream in a max-heap on (pred, idx). */
typedef struct tt_topk {
    tt__ranked *h;
    size_t n, k;
} tt_topk;

static void tt_topk_offer(tt_topk *tk, double pred, uint64_t idx)
{
    tt__ranked r = {pred, idx};
    if (tk->n < tk->k) {
        size_t i = tk->n++;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (tt__ranked_cmp(&tk->h[p], &r) >= 0) break;
            tk->h[i] = tk->h[p];
            i = p;
        }
        tk->h[i] = r;
        return;
    }
    if (tt__ranked_cmp(&r, &tk->h[0]) >= 0) return;
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, rr = l + 1, m = i;
        const tt__ranked *big = &r;
        if (l < tk->n && tt__ranked_cmp(&tk->h[l], big) > 0) { m = l; big = &tk->h[l]; }
        if (rr < tk->n && tt__ranked_cmp(&tk->h[rr], big) > 0) m = rr;
        if (m == i) break;
        tk->h[i] = tk->h[m];
        i = m;
    }
    tk->h[i] = r;
}

typedef struct tt_rank_ctx {
    tt_strategy *st;
    const tt_model *m;
    tt_topk tk;
} tt_rank_ctx;

static int tt_rank_visit(void *ud, const int64_t *slots)
{
    tt_rank_ctx *c = ud;
    tt_strategy *st = c->st;
    size_t ns = st->cfg.t->nslots;
    memcpy(st->slots, slots, ns * sizeof(int64_t));
    tt_model_result res;
    if (tt_model_eval(c->m, st->slots, &res) != TT_OK || !(res.time_us > 0)) return 0;
    tt_topk_offer(&c->tk, res.time_us, tt_space_encode(st->cfg.space, slots));
    return 0;
}

tt_rc tt__st_rank(tt_strategy *st, const tt_model *m, size_t k, tt__ranked **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!m) m = st->cfg.model;
    if (!m || k == 0) return TT_OK;
    tt_rank_ctx c = {.st = st, .m = m, .tk = {.k = k}};
    c.tk.h = malloc(k * sizeof *c.tk.h);
    if (!c.tk.h) return TT_ENOMEM;
    if (tt_space_total(st->cfg.space) <= st->max_enumerate) {
        tt_space_counts counts;
        tt_rc rc = tt_space_enumerate(st->cfg.space, tt_rank_visit, &c, 0, &counts);
        if (rc != TT_OK) {
            free(c.tk.h);
            return rc;
        }
        if ((int64_t)counts.feasible < st->planned) st->planned = (int64_t)counts.feasible;
    } else {
        /* too large to enumerate: rank a seeded sample of feasible configs */
        tt__u64set drawn = {0};
        int64_t tries = st->opt_sample * 64;
        uint64_t total = tt_space_total(st->cfg.space);
        for (int64_t got = 0; got < st->opt_sample && tries-- > 0;) {
            uint64_t idx = tt__st_uniform(st, total);
            if (tt__u64set_has(&drawn, idx) || !tt__st_feasible(st, idx)) continue;
            if (tt__u64set_add(&drawn, idx) < 0) break;
            got++;
            double p = tt__st_predict(st, m, idx, NULL);
            if (isfinite(p)) tt_topk_offer(&c.tk, p, idx);
        }
        tt__u64set_free(&drawn);
    }
    qsort(c.tk.h, c.tk.n, sizeof *c.tk.h, tt__ranked_cmp);
    *out = c.tk.h;
    *n = c.tk.n;
    return TT_OK;
}

int tt__st_draw(tt_strategy *st, uint64_t *idx)
{
    if (!st->enumerated && tt_space_total(st->cfg.space) <= st->max_enumerate)
        if (tt__st_enumerate(st) != TT_OK) return 0;
    if (st->enumerated) {
        /* lazy Fisher-Yates: all[0..shuffle_pos) are drawn; skip ones proposed otherwise */
        while (st->shuffle_pos < st->nall) {
            size_t i = st->shuffle_pos;
            size_t j = i + (size_t)tt__st_uniform(st, st->nall - i);
            uint64_t v = st->all[j];
            st->all[j] = st->all[i];
            st->all[i] = v;
            st->shuffle_pos++;
            if (!tt__u64set_has(&st->seen, v)) {
                *idx = v;
                return 1;
            }
        }
        return 0;
    }
    uint64_t total = tt_space_total(st->cfg.space);
    for (int tries = 0; tries < 100000; tries++) {
        uint64_t v = tt__st_uniform(st, total);
        if (tt__u64set_has(&st->seen, v) || !tt__st_feasible(st, v)) continue;
        *idx = v;
        return 1;
    }
    return 0;
}

size_t tt__st_neighbours(tt_strategy *st, uint64_t idx, uint64_t *out, size_t cap)
{
    const tt_template *t = st->cfg.t;
    size_t ninputs = t->ninputs, n = 0;
    int64_t base[TT_MAX_SLOTS];
    memcpy(base, st->problem, ninputs * sizeof(int64_t));
    tt_space_decode(st->cfg.space, idx, base);
    for (size_t p = 0; p < st->np && n < cap; p++) {
        const tt_param *par = &t->params[p];
        size_t pos = 0;
        while (pos < par->nvalues && par->values[pos] != base[ninputs + p]) pos++;
        if (pos == par->nvalues) continue;
        for (int d = -1; d <= 1 && n < cap; d += 2) {
            if ((d < 0 && pos == 0) || (d > 0 && pos + 1 >= par->nvalues)) continue;
            memcpy(st->slots, base, (ninputs + st->np) * sizeof(int64_t));
            st->slots[ninputs + p] = par->values[(size_t)((int64_t)pos + d)];
            uint64_t v = tt_space_encode(st->cfg.space, st->slots);
            if (v == UINT64_MAX || tt__u64set_has(&st->seen, v)) continue;
            if (tt_space_check(st->cfg.space, st->slots, NULL) != TT_OK) continue;
            out[n++] = v;
        }
    }
    return n;
}

void tt__st_best_add(uint64_t *out, double *us, size_t n, size_t *k, uint64_t idx, double v)
{
    if (n == 0 || !isfinite(v)) return;
    size_t j;
    if (*k < n) j = (*k)++;
    else if (v >= us[n - 1]) return;
    else j = n - 1;
    /* insertion into the sorted prefix (ties: earlier report first) */
    while (j > 0 && v < us[j - 1]) {
        out[j] = out[j - 1];
        us[j] = us[j - 1];
        j--;
    }
    out[j] = idx;
    us[j] = v;
}

size_t tt__st_best_n(const tt_strategy *st, uint64_t *out, double *us, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < st->nobs; i++) tt__st_best_add(out, us, n, &k, st->obs_idx[i], st->obs_us[i]);
    return k;
}

tt_rc tt__st_random_round(tt_strategy *st, int64_t round)
{
    for (int64_t i = 0; i < round && tt__st_room(st) > 0; i++) {
        uint64_t idx;
        if (!tt__st_draw(st, &idx)) break;
        if (tt__st_push(st, idx) < 0) return TT_ENOMEM;
    }
    return TT_OK;
}

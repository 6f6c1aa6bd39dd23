/* SPDX-License-Identifier: MIT
 * strategy_int.h - internals shared by the strategy files (strategy*.c); not public.
 *
 * A config is identified by its index in the space's cartesian product (tt_space_encode).
 * The common core (strategy.c) keeps the set of proposed configs, a queue of proposals
 * waiting to be handed out, the reported results and the PRNG; an implementation fills the
 * queue one "round" at a time through its refill hook.  Not thread-safe (see strategy.h).
 */
#ifndef TT_STRATEGY_INT_H
#define TT_STRATEGY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "strategy.h"

/* Open-addressing set of uint64 keys (stores key + 1; 0 marks an empty slot). */
typedef struct tt__u64set {
    uint64_t *keys;
    size_t cap, n;
} tt__u64set;
int tt__u64set_has(const tt__u64set *s, uint64_t key);
/* 1 inserted, 0 already present, -1 out of memory. */
int tt__u64set_add(tt__u64set *s, uint64_t key);
void tt__u64set_free(tt__u64set *s);

/* A config ranked by a prediction (ascending time, then ascending index). */
typedef struct tt__ranked {
    double pred_us;
    uint64_t idx;
} tt__ranked;
int tt__ranked_cmp(const void *a, const void *b);

typedef struct tt__strategy_ops {
    const char *name;
    int64_t default_budget;        /* 0: the whole space */
    int uses_model;                /* 1: needs a model; without one runs `no_model` */
    const char *no_model;          /* uses_model: the strategy run without a model */
    tt_rc (*start)(tt_strategy *st);          /* first next(): heavy set-up, may push */
    tt_rc (*refill)(tt_strategy *st);         /* queue empty, all reported: push a round;
                                                 pushing nothing ends the search */
    void (*on_report)(tt_strategy *st, uint64_t idx, tt_rc status, double us);
    void (*free)(tt_strategy *st);
} tt__strategy_ops;

/* Division by a fixed n without a divide instruction (the round-up multiply of Granlund and
 * Montgomery, as libdivide does it): tt__udiv_mod(d, r) == r % n for every 64-bit r.  Used by
 * tt__st_uniform for small n, whose values must not change (seeded runs are pinned). */
typedef struct tt__udiv {
    uint64_t n, magic, lim;        /* lim: UINT64_MAX - UINT64_MAX % n (the rejection bound) */
    unsigned char shift, add;      /* n a power of two: magic 0, r >> shift */
} tt__udiv;
void tt__udiv_init(tt__udiv *d, uint64_t n);   /* n > 0 */
static inline uint64_t tt__udiv_mod(const tt__udiv *d, uint64_t r)
{
    uint64_t q;
    if (!d->magic) {
        q = r >> d->shift;
    } else {
        __extension__ typedef unsigned __int128 u128;
        q = (uint64_t)(((u128)r * d->magic) >> 64);
        q = d->add ? (((r - q) >> 1) + q) >> d->shift : q >> d->shift;
    }
    return r - q * d->n;
}
#define TT__UDIV_SMALL 64          /* tt__st_uniform caches the dividers of n below this */

struct tt_strategy {
    const tt__strategy_ops *ops;
    tt_strategy_config cfg;        /* borrowed pointers; problem points at `problem` */
    int64_t problem[TT_MAX_SLOTS];
    int64_t *slots;                /* scratch, t->nslots */
    size_t np;                     /* params */
    int64_t budget;                /* resolved: max proposals */
    int64_t proposed, reported, planned;
    uint64_t rng[4];               /* xoshiro256** */
    tt__udiv udiv[TT__UDIV_SMALL]; /* tt__st_uniform's dividers, by n (n == 0: not made yet) */
    tt__u64set seen;               /* proposed (queued or handed out) */
    tt__u64set handed;             /* returned by tt_strategy_next() */
    tt__u64set reported_set;
    uint64_t *queue;               /* proposals not yet handed out */
    size_t qhead, qlen, qcap;
    uint64_t *obs_idx;             /* reported results, in report order */
    double *obs_us;                /* INFINITY for failures */
    size_t nobs, capobs;
    int have_best;
    uint64_t best_idx;
    double best_us;
    int started, finished, fallback;
    /* the feasible configs, when the space was enumerated (ascending index) */
    uint64_t *all;
    size_t nall;
    int enumerated;
    size_t shuffle_pos;            /* lazy Fisher-Yates position in `all` */
    uint64_t *feas;                /* enumerated: bit idx set when config idx is feasible
                                      (NULL above TT_ST_FEAS_BITS_MAX configs) */
    /* options */
    uint64_t max_enumerate;
    int64_t opt_topk, opt_round, opt_population, opt_neighbours, opt_sample, opt_patience;
    int64_t opt_init;              /* bo / model-bo: initial design size (0: default) */
    tt_strategy_choice choice;     /* what runs and why (tt_strategy_resolve) */
    void *impl;                    /* owned by the implementation */
};

extern const tt__strategy_ops tt__strategy_model_topk;
extern const tt__strategy_ops tt__strategy_model_refine;
extern const tt__strategy_ops tt__strategy_evolution;
extern const tt__strategy_ops tt__strategy_anneal;
extern const tt__strategy_ops tt__strategy_random;
extern const tt__strategy_ops tt__strategy_exhaustive;
extern const tt__strategy_ops tt__strategy_bo;
extern const tt__strategy_ops tt__strategy_model_bo;
/* What model-topk and model-refine run without a model (tt_strategy_fallback()). */
#define TT_STRATEGY_NO_MODEL "bo"

/* PRNG (xoshiro256**): next 64 bits; uniform in [0, n) (n > 0, unbiased: rejection below
 * the largest multiple of n); uniform double in [0, 1).  Inline: the search strategies call
 * them tens of thousands of times a run. */
static inline uint64_t tt__st_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
/* One xoshiro256** step on state s.  A hot loop may run it on a local copy of st->rng (which
 * the compiler keeps in registers) and store the copy back before anything else draws. */
static inline uint64_t tt__rng_next(uint64_t *s)
{
    uint64_t r = tt__st_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = tt__st_rotl(s[3], 45);
    return r;
}
/* Uniform in [0, d->n) from state s: rejection below d->lim, then the remainder. */
static inline uint64_t tt__rng_below(uint64_t *s, const tt__udiv *d)
{
    uint64_t r;
    do r = tt__rng_next(s);
    while (r >= d->lim);
    return tt__udiv_mod(d, r);
}
/* Uniform double in [0, 1) from state s. */
static inline double tt__rng_unit(uint64_t *s)
{
    return (double)(tt__rng_next(s) >> 11) * 0x1.0p-53;
}
static inline uint64_t tt__st_rand(tt_strategy *st) { return tt__rng_next(st->rng); }
static inline uint64_t tt__st_uniform(tt_strategy *st, uint64_t n)
{
    if (n < TT__UDIV_SMALL) {         /* the same numbers, without two divisions per call */
        tt__udiv *d = &st->udiv[n];
        if (d->n != n) tt__udiv_init(d, n);
        return tt__rng_below(st->rng, d);
    }
    uint64_t r, lim = UINT64_MAX - UINT64_MAX % n;
    do r = tt__st_rand(st);
    while (r >= lim);
    return r % n;
}
static inline double tt__st_unit(tt_strategy *st) { return tt__rng_unit(st->rng); }

/* Queue a proposal: 1 queued, 0 skipped (already proposed, or the budget is used up),
 * -1 out of memory. */
int tt__st_push(tt_strategy *st, uint64_t idx);
/* Room left in the budget for new proposals (queued ones count as used). */
int64_t tt__st_room(const tt_strategy *st);

/* 1 when config idx is feasible.  Once the space is enumerated, a bit test (st->feas);
 * else idx is decoded into st->slots (problem + params) and checked. */
int tt__st_feasible(tt_strategy *st, uint64_t idx);
/* The largest cartesian product that gets a feasibility bitset (4 MiB of bits). */
#define TT_ST_FEAS_BITS_MAX ((uint64_t)1 << 25)
/* Prediction of config idx by model m (NULL: st->cfg.model); INFINITY when the model calls
 * it infeasible or there is no model.  res (may be NULL) receives the full result. */
double tt__st_predict(tt_strategy *st, const tt_model *m, uint64_t idx, tt_model_result *res);
/* Enumerate the feasible configs into st->all (once).  TT_ELIMIT when the cartesian
 * product exceeds max_enumerate. */
tt_rc tt__st_enumerate(tt_strategy *st);
/* The enumeration cache (strategy_enum.c), by st->cfg.space_key: lookup fills st->all, nall
 * and feas with copies and returns 1 (0: no key, not cached, or out of memory); store keeps
 * copies of them (feas: nfeas words) in one of TT__ENUM_CACHE_N entries, within
 * TT__ENUM_CACHE_BYTES in all (least recently used ones go; a space over a quarter of it is
 * not kept).  hits: lookups answered so far (tests). */
#define TT__ENUM_CACHE_N 8
#define TT__ENUM_CACHE_BYTES ((size_t)64 << 20)
int tt__st_enum_lookup(tt_strategy *st);
void tt__st_enum_store(const tt_strategy *st, size_t nfeas);
size_t tt__st_enum_hits(void);
/* Rank by model m: the best k feasible configs (ascending prediction), from the whole space
 * when it can be enumerated, else from `opt_sample` random feasible configs.  Configs the
 * model calls infeasible are left out.  *out malloc'd (caller frees), *n entries. */
tt_rc tt__st_rank(tt_strategy *st, const tt_model *m, size_t k, tt__ranked **out, size_t *n);
/* A random feasible config not proposed yet: 1 and *idx, 0 when none could be found. */
int tt__st_draw(tt_strategy *st, uint64_t *idx);
/* Feasible neighbours of idx (one param moved one step in its domain), not yet proposed.
 * Writes up to cap indices, returns how many. */
size_t tt__st_neighbours(tt_strategy *st, uint64_t idx, uint64_t *out, size_t cap);
/* Indices of the best n successful reported configs (ascending time), returns count. */
size_t tt__st_best_n(const tt_strategy *st, uint64_t *out, double *us, size_t n);
/* One step of tt__st_best_n: fold report (idx, v) into the best *k <= n so far (out, us
 * ascending; failures, v not finite, are skipped).  Folding the reports in report order gives
 * tt__st_best_n's answer, so a strategy can keep it up to date instead of rescanning. */
void tt__st_best_add(uint64_t *out, double *us, size_t n, size_t *k, uint64_t idx, double v);
/* Seeded random round (random search, immigrants, random starts): push up to `round`. */
tt_rc tt__st_random_round(tt_strategy *st, int64_t round);

/* bo / model-bo internals for the unit tests (strategy_bo.c); st must be a started bo or
 * model-bo (after its first tt_strategy_next).  tt__bo_inputs: the GP's input coordinates of
 * config idx into x (at most TT_MAX_SLOTS), returns their number.  tt__bo_round: what the
 * round that produced the latest proposal was (TT__BO_* flags).  tt__bo_posterior: mean and
 * standard deviation, in the standardised target units, of config idx under the GP fitted for
 * that round: 1, or 0 when that round fitted none.  tt__bo_dim_big: the kernel group of GP
 * input j (1: a param of more than TT_BO_GROUP_SMALL values). */
enum { TT__BO_INIT = 1, TT__BO_GP = 2, TT__BO_EXPLOIT = 4, TT__BO_LOCAL = 8 };
size_t tt__bo_inputs(const tt_strategy *st, uint64_t idx, double *x);
int tt__bo_round(const tt_strategy *st);
int tt__bo_posterior(tt_strategy *st, uint64_t idx, double *mu, double *sd);
int tt__bo_dim_big(const tt_strategy *st, size_t j);

#endif

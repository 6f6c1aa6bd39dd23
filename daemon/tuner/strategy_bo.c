/* SPDX-License-Identifier: MIT
 * strategy_bo.c - Bayesian optimisation: `bo` (a Gaussian process on log time) and
 * `model-bo` (the same with the calibrated analytic cost model as the prior mean).
 *
 * Inputs: every param with more than one value is one dimension, its value's position in
 * the domain scaled to [0, 1] (ordinal params keep their order; a two-valued param, e.g. a
 * flag, is a 0/1 category); a param with at least TT_BO_TZ_MIN values also gets a second
 * dimension, the 2-adic valuation of its value (the power of two it is a multiple of: 32, 64,
 * 128 share alignment that 48 or 80 lack, which a smooth kernel on the position cannot see).
 * Kernel: Matern 5/2 with one length scale per dimension (ARD), signal variance 1 on the
 * standardised target, a noise term; for model-free bo with fewer than TT_BO_GROUP_NMAX
 * trials, mixed with the same kernel on each of two groups of params (at most
 * TT_BO_GROUP_SMALL values, more); length scales and noise by coordinate search on the log
 * marginal likelihood.  Target: log time (failures valued as
 * the slowest success).  Acquisition: expected improvement over candidates that are all
 * feasible (the enumerated feasible set, or a seeded sample of it, plus the one-step
 * neighbours of the best measured configs).  One proposal per round.  After TT_BO_STALE
 * rounds without a new best, every other round scores the configs within Hamming distance 2
 * of the best (any two params changed to any values) instead.  Linear algebra:
 * LAPACKE dpotrf / dpotrs / dtrtrs (OpenBLAS).  Design notes and numbers:
 * docs/strategies.md "Bayesian optimisation".
 */
#include "strategy_int.h"

#include <cblas.h>
#include <lapacke.h>
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef TT_BO_NMAX
#define TT_BO_NMAX 64           /* training points of the GP at most */
#endif
#ifndef TT_BO_CAND
#define TT_BO_CAND 512          /* candidates scored per round at most (plus neighbours) */
#endif
#ifndef TT_BO_INIT
#define TT_BO_INIT 8            /* initial space-filling design (model-free bo) */
#endif
#ifndef TT_BO_XI
#define TT_BO_XI 0.01           /* EI margin, in standard deviations of the target */
#endif
#ifndef TT_BO_EXPLOIT
#define TT_BO_EXPLOIT 3         /* model-free bo: every 3rd round takes the lowest predicted mean */
#endif
#ifndef TT_BO_POOL_MAX
#define TT_BO_POOL_MAX ((size_t)1 << 19)   /* larger feasible sets are sampled */
#endif
#define TT_BO_NEIGH 4           /* neighbours of the best n measured configs join */
#ifndef TT_BO_STALE
#define TT_BO_STALE 8           /* rounds without a new best before local rounds mix in */
#endif
#ifndef TT_BO_TZ_MIN
#define TT_BO_TZ_MIN 8          /* params with this many values get the 2-adic dimension */
#endif
#define TT_BO_LOCAL_HAM 2       /* local rounds: configs within this Hamming distance */
#ifndef TT_BO_GROUP_W
#define TT_BO_GROUP_W 0.8       /* model-free bo: weight of the two group products in the kernel */
#endif
#ifndef TT_BO_GROUP_SMALL
#define TT_BO_GROUP_SMALL 4     /* params with at most this many values: the "small" group */
#endif
#ifndef TT_BO_GROUP_NMAX
#define TT_BO_GROUP_NMAX 128    /* the group terms are used while fewer trials are reported */
#endif

/* OpenBLAS on one thread: the matrices are small (<= 64), and its own thread pool would only
 * add spinning and nondeterministic reduction orders to the workers' threads. */
static pthread_once_t tt_bo_blas_once = PTHREAD_ONCE_INIT;
static void tt_bo_blas_init(void) { openblas_set_num_threads(1); }

typedef struct tt_bo {
    size_t d;                    /* dimensions: params with more than one value */
    size_t dk;                   /* kernel dimensions: d, then the 2-adic features */
    size_t xparam[TT_MAX_SLOTS]; /* param of each 2-adic feature */
    double xlo[TT_MAX_SLOTS], xspan[TT_MAX_SLOTS];
    size_t dparam[TT_MAX_SLOTS];
    uint64_t stride[TT_MAX_SLOTS];
    double ls[TT_MAX_SLOTS], noise;
    unsigned char big[TT_MAX_SLOTS]; /* group of each dimension: 1 = param of > SMALL values */
    int groups;                  /* both groups have dimensions */
    double gw;                   /* this round's weight of the group terms (0: product only) */
    int use_prior;               /* model-bo */
    int64_t init_left;
    uint64_t *pool;              /* feasible candidates (ascending, or by prior for model-bo) */
    double *lpred;               /* model-bo: log raw prediction per pool entry (NAN: none) */
    size_t npool;
    int pool_sorted_idx;         /* pool ascending by index (binary search possible) */
    double pa, pb;               /* prior: a + b * log(pred) */
    int64_t rounds;
    int64_t stale;               /* rounds since the best improved */
    int local;                   /* this round: EI over the Hamming ball of the best */
    int kind;                    /* the latest round: TT__BO_* flags (strategy_int.h) */
    double last_best;
    /* scratch */
    size_t n, cap_n, nc, cap_c;
    double *X, *y, *L, *alpha, *Kc, *Xc, *cmean;
    int *ok;                     /* training point succeeded */
    uint64_t *tidx, *cidx;
    double worst_y, sd;          /* slowest training log time; target scale */
} tt_bo;

/* ---- coordinates and kernel --------------------------------------------------------- */
/* The 2-adic valuation of v (trailing zero bits; 0 for v <= 0). */
static int tt_bo_ctz(int64_t v)
{
    int k = 0;
    if (v <= 0) return 0;
    while (!(v & 1) && k < 62) {
        v >>= 1;
        k++;
    }
    return k;
}

static void tt_bo_coords(const tt_strategy *st, const tt_bo *b, uint64_t idx, double *x)
{
    for (size_t j = 0; j < b->d; j++) {
        size_t p = b->dparam[j], nv = st->cfg.t->params[p].nvalues;
        x[j] = (double)((idx / b->stride[p]) % nv) / (double)(nv - 1);
    }
    for (size_t k = 0; k + b->d < b->dk; k++) {
        const tt_param *par = &st->cfg.t->params[b->xparam[k]];
        int64_t v = par->values[(idx / b->stride[b->xparam[k]]) % par->nvalues];
        x[b->d + k] = ((double)tt_bo_ctz(v) - b->xlo[k]) / b->xspan[k];
    }
}

/* The 2-adic dimensions: one per param with >= TT_BO_TZ_MIN values whose values differ in
 * their valuation, scaled to [0, 1] over the domain. */
static void tt_bo_tz_dims(const tt_strategy *st, tt_bo *b)
{
    b->dk = b->d;
    for (size_t j = 0; j < b->d && b->dk < TT_MAX_SLOTS; j++) {
        const tt_param *par = &st->cfg.t->params[b->dparam[j]];
        if (par->nvalues < TT_BO_TZ_MIN) continue;
        int lo = 63, hi = 0;
        for (size_t i = 0; i < par->nvalues; i++) {
            int c = tt_bo_ctz(par->values[i]);
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
        if (hi <= lo) continue;
        b->xparam[b->dk - b->d] = b->dparam[j];
        b->xlo[b->dk - b->d] = lo;
        b->xspan[b->dk - b->d] = hi - lo;
        b->dk++;
    }
}

static double tt_bo_m52(double r2)
{
    double r = sqrt(5.0 * r2);
    return (1 + r + r * r / 3) * exp(-r);
}

/* (1 - gw) k(all dimensions) + gw (k(small group) + k(big group)) / 2, k Matern 5/2 with the
 * ARD length scales: the product term models interactions across all params, the group
 * terms let what is learnt about the params of one group (e.g. a slow block size) carry
 * over configs that differ in the other (the flags and small tile factors). */
static double tt_bo_kern(const tt_bo *b, const double *x, const double *z)
{
    double r2[2] = {0, 0};
    for (size_t j = 0; j < b->dk; j++) {
        double t = (x[j] - z[j]) / b->ls[j];
        r2[b->big[j]] += t * t;
    }
    double k = tt_bo_m52(r2[0] + r2[1]);
    if (b->gw <= 0) return k;
    return (1 - b->gw) * k + 0.5 * b->gw * (tt_bo_m52(r2[0]) + tt_bo_m52(r2[1]));
}

/* The group of every dimension (a 2-adic one goes with its param); groups when both exist. */
static void tt_bo_group_dims(const tt_strategy *st, tt_bo *b)
{
    int have[2] = {0, 0};
    for (size_t j = 0; j < b->dk; j++) {
        size_t p = j < b->d ? b->dparam[j] : b->xparam[j - b->d];
        b->big[j] = st->cfg.t->params[p].nvalues > TT_BO_GROUP_SMALL;
        have[b->big[j]] = 1;
    }
    b->groups = have[0] && have[1];
}

static int tt_bo_grow(double **p, size_t n)
{
    double *q = realloc(*p, (n ? n : 1) * sizeof *q);
    if (!q) return -1;
    *p = q;
    return 0;
}

/* ---- the prior (model-bo) ------------------------------------------------------------ */
/* log raw model prediction of idx (NAN when the model has none for it). */
static double tt_bo_lpred(tt_strategy *st, const tt_bo *b, uint64_t idx)
{
    if (!b->use_prior) return NAN;
    if (b->pool_sorted_idx) {
        size_t lo = 0, hi = b->npool;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (b->pool[mid] < idx) lo = mid + 1;
            else hi = mid;
        }
        if (lo < b->npool && b->pool[lo] == idx) return b->lpred[lo];
    }
    double p = tt__st_predict(st, NULL, idx, NULL);
    return isfinite(p) ? log(p) : NAN;
}

/* Fit y ~ a + b log(pred) on the successes that have a prediction (b kept in [0.2, 5],
 * else b = 1 and a the mean offset); with none, a = mean y. */
static void tt_bo_fit_prior(tt_bo *b, const double *lp, const double *y, const int *ok, size_t n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0, ysum = 0, yn = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ok[i]) continue;
        ysum += y[i];
        yn++;
        if (isnan(lp[i])) continue;
        sx += lp[i];
        sy += y[i];
        sxx += lp[i] * lp[i];
        sxy += lp[i] * y[i];
        m++;
    }
    b->pb = 1;
    b->pa = m > 0 ? (sy - sx) / m : (yn > 0 ? ysum / yn : 0);
    if (m >= 4) {
        double den = m * sxx - sx * sx;
        double slope = den > 1e-12 ? (m * sxy - sx * sy) / den : 0;
        if (slope >= 0.2 && slope <= 5) {
            b->pb = slope;
            b->pa = (sy - slope * sx) / m;
        }
    }
}

/* ---- set-up --------------------------------------------------------------------------- */
typedef struct tt_bo_sortent {
    double key;
    uint64_t idx;
} tt_bo_sortent;
static int tt_bo_sortent_cmp(const void *a, const void *c)
{
    const tt_bo_sortent *x = a, *y = c;
    if (x->key < y->key) return -1;
    if (x->key > y->key) return 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static tt_rc tt_bo_make_pool(tt_strategy *st, tt_bo *b)
{
    tt_rc rc = tt__st_enumerate(st);
    if (rc != TT_OK && rc != TT_ELIMIT) return rc;
    if (rc == TT_OK && st->nall <= TT_BO_POOL_MAX) {
        b->npool = st->nall;
        b->pool = malloc((b->npool ? b->npool : 1) * sizeof *b->pool);
        if (!b->pool) return TT_ENOMEM;
        memcpy(b->pool, st->all, b->npool * sizeof *b->pool);   /* ascending */
    } else {
        /* too large: a seeded sample of `sample` feasible configs */
        size_t S = (size_t)st->opt_sample;
        b->pool = malloc(S * sizeof *b->pool);
        if (!b->pool) return TT_ENOMEM;
        tt__u64set got = {0};
        uint64_t total = tt_space_total(st->cfg.space);
        for (size_t tries = 0; b->npool < S && tries < 64 * S; tries++) {
            uint64_t v = st->enumerated ? st->all[tt__st_uniform(st, st->nall)]
                                        : tt__st_uniform(st, total);
            if (tt__u64set_has(&got, v) || (!st->enumerated && !tt__st_feasible(st, v))) continue;
            if (tt__u64set_add(&got, v) < 0) break;
            b->pool[b->npool++] = v;
        }
        tt__u64set_free(&got);
        tt_bo_sortent *tmp = malloc((b->npool ? b->npool : 1) * sizeof *tmp);
        if (!tmp) return TT_ENOMEM;
        for (size_t i = 0; i < b->npool; i++) tmp[i] = (tt_bo_sortent){0, b->pool[i]};
        qsort(tmp, b->npool, sizeof *tmp, tt_bo_sortent_cmp);
        for (size_t i = 0; i < b->npool; i++) b->pool[i] = tmp[i].idx;
        free(tmp);
    }
    b->pool_sorted_idx = 1;
    if (!b->use_prior) return TT_OK;
    b->lpred = malloc((b->npool ? b->npool : 1) * sizeof *b->lpred);
    if (!b->lpred) return TT_ENOMEM;
    for (size_t i = 0; i < b->npool; i++) {
        double p = tt__st_predict(st, NULL, b->pool[i], NULL);
        b->lpred[i] = isfinite(p) ? log(p) : NAN;
    }
    return TT_OK;
}

static tt_rc tt_bo_start_common(tt_strategy *st, int use_prior)
{
    tt_bo *b = calloc(1, sizeof *b);
    if (!b) return TT_ENOMEM;
    st->impl = b;
    b->use_prior = use_prior && st->cfg.model;
    uint64_t s = 1;
    for (size_t p = st->np; p-- > 0;) {
        b->stride[p] = s;
        s *= st->cfg.t->params[p].nvalues;
    }
    for (size_t p = 0; p < st->np; p++)
        if (st->cfg.t->params[p].nvalues > 1) b->dparam[b->d++] = p;
    tt_bo_tz_dims(st, b);
    tt_bo_group_dims(st, b);
    for (size_t j = 0; j < b->dk; j++) b->ls[j] = 0.5;
    b->noise = 1e-3;
    b->last_best = INFINITY;
    pthread_once(&tt_bo_blas_once, tt_bo_blas_init);
    tt_rc rc = tt_bo_make_pool(st, b);
    if (rc != TT_OK) return rc;
    if ((int64_t)b->npool < st->planned && st->enumerated && st->nall <= TT_BO_POOL_MAX)
        st->planned = (int64_t)b->npool;
    int64_t init = st->opt_init ? st->opt_init : (b->use_prior ? 1 : TT_BO_INIT);
    b->init_left = init;
    return TT_OK;
}

static tt_rc tt_bo_start(tt_strategy *st) { return tt_bo_start_common(st, 0); }
static tt_rc tt_mbo_start(tt_strategy *st) { return tt_bo_start_common(st, 1); }

/* ---- the initial design ------------------------------------------------------------- */
/* model-bo: the model's best unproposed config.  bo: maximin among 32 random unproposed
 * pool entries (the first one at random). */
static int tt_bo_initial(tt_strategy *st, tt_bo *b, uint64_t *out)
{
    if (b->npool == 0) return 0;
    if (b->use_prior) {
        double best = INFINITY;
        int found = 0;
        for (size_t i = 0; i < b->npool; i++)
            if (!isnan(b->lpred[i]) && b->lpred[i] < best && !tt__u64set_has(&st->seen, b->pool[i])) {
                best = b->lpred[i];
                *out = b->pool[i];
                found = 1;
            }
        if (found) return 1;
    }
    double xc[TT_MAX_SLOTS], xo[TT_MAX_SLOTS], bestd = -1;
    int found = 0;
    for (int k = 0; k < 32 * 8 && found < 32; k++) {
        uint64_t v = b->pool[tt__st_uniform(st, b->npool)];
        if (tt__u64set_has(&st->seen, v)) continue;
        tt_bo_coords(st, b, v, xc);
        double mind = INFINITY;
        for (size_t i = 0; i < st->nobs; i++) {
            tt_bo_coords(st, b, st->obs_idx[i], xo);
            double d2 = 0;
            for (size_t j = 0; j < b->dk; j++) d2 += (xc[j] - xo[j]) * (xc[j] - xo[j]);
            if (d2 < mind) mind = d2;
        }
        if (mind > bestd) {
            bestd = mind;
            *out = v;
        }
        found++;
        if (st->nobs == 0) break;
    }
    return found > 0;
}

/* ---- the GP ------------------------------------------------------------------------- */
/* The training set: everything when it fits, else the best 3/4 of TT_BO_NMAX successes and
 * the most recent others.  Fills b->tidx / b->y (log time, failures = slowest success). */
static tt_rc tt_bo_training(tt_strategy *st, tt_bo *b, int *have_ok)
{
    size_t N = st->nobs < TT_BO_NMAX ? st->nobs : TT_BO_NMAX;
    if (N > b->cap_n) {
        b->cap_n = TT_BO_NMAX;
        size_t c = b->cap_n;
        if (tt_bo_grow(&b->X, c * (b->dk ? b->dk : 1)) || tt_bo_grow(&b->y, c) ||
            tt_bo_grow(&b->L, c * c) || tt_bo_grow(&b->alpha, c))
            return TT_ENOMEM;
        int *ok = realloc(b->ok, c * sizeof *ok);
        if (!ok) return TT_ENOMEM;
        b->ok = ok;
        uint64_t *t = realloc(b->tidx, c * sizeof *t);
        if (!t) return TT_ENOMEM;
        b->tidx = t;
    }
    b->n = 0;
    tt__u64set in = {0};
    if (st->nobs <= TT_BO_NMAX) {
        for (size_t i = 0; i < st->nobs; i++) b->tidx[b->n++] = st->obs_idx[i];
    } else {
        size_t nb = TT_BO_NMAX * 3 / 4;
        double us[TT_BO_NMAX];
        b->n = tt__st_best_n(st, b->tidx, us, nb);
        for (size_t i = 0; i < b->n; i++)
            if (tt__u64set_add(&in, b->tidx[i]) < 0) goto oom;
        for (size_t i = st->nobs; i-- > 0 && b->n < TT_BO_NMAX;) {
            int r = tt__u64set_add(&in, st->obs_idx[i]);
            if (r < 0) goto oom;
            if (r) b->tidx[b->n++] = st->obs_idx[i];
        }
    }
    tt__u64set_free(&in);
    /* y: look the times up (obs in report order; small n, so a linear pass per point is
     * avoided by a reverse map through a set of the training indices) */
    double worst = -INFINITY;
    *have_ok = 0;
    for (size_t i = 0; i < b->n; i++) {
        double us = INFINITY;
        for (size_t k = 0; k < st->nobs; k++)
            if (st->obs_idx[k] == b->tidx[i]) {
                us = st->obs_us[k];
                break;
            }
        b->y[i] = isfinite(us) ? log(us) : INFINITY;
        b->ok[i] = isfinite(us);
        if (isfinite(us)) {
            *have_ok = 1;
            if (b->y[i] > worst) worst = b->y[i];
        }
    }
    for (size_t i = 0; i < b->n; i++)
        if (!isfinite(b->y[i])) b->y[i] = worst;
    for (size_t i = 0; i < b->n; i++) tt_bo_coords(st, b, b->tidx[i], b->X + i * b->dk);
    return TT_OK;
oom:
    tt__u64set_free(&in);
    return TT_ENOMEM;
}

/* Factorise K + noise I (column-major, lower) and solve for alpha = K^-1 r; returns the log
 * marginal likelihood, or -INFINITY when the matrix is not positive definite. */
static double tt_bo_factor(tt_bo *b, const double *r)
{
    size_t n = b->n;
    for (size_t j = 0; j < n; j++)
        for (size_t i = j; i < n; i++) {
            double k = tt_bo_kern(b, b->X + i * b->dk, b->X + j * b->dk);
            if (i == j) k += b->noise;
            b->L[i + j * n] = k;
        }
    lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, b->L, (lapack_int)n);
    if (info != 0) return -INFINITY;
    memcpy(b->alpha, r, n * sizeof *r);
    info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, b->L, (lapack_int)n, b->alpha,
                          (lapack_int)n);
    if (info != 0) return -INFINITY;
    double lml = 0;
    for (size_t i = 0; i < n; i++) lml += -0.5 * r[i] * b->alpha[i] - log(b->L[i + i * n]);
    return lml;
}

/* Coordinate search on the log marginal likelihood: each length scale x2 / /2 (in [0.05,
 * 20]), then the noise x10 / /10 (in [1e-6, 0.5]); ends with the factor of the best. */
static double tt_bo_tune(tt_bo *b, const double *r)
{
    double best = tt_bo_factor(b, r);
    for (size_t j = 0; j <= b->dk; j++) {
        double *h = j < b->dk ? &b->ls[j] : &b->noise;
        double lo = j < b->dk ? 0.05 : 1e-6, hi = j < b->dk ? 20 : 0.5;
        double f = j < b->dk ? 2 : 10, orig = *h;
        double tries[2] = {orig * f, orig / f};
        for (int k = 0; k < 2; k++) {
            if (tries[k] < lo || tries[k] > hi) continue;
            *h = tries[k];
            double l = tt_bo_factor(b, r);
            if (l > best + 1e-9) {
                best = l;
                orig = tries[k];
            }
        }
        *h = orig;
    }
    return tt_bo_factor(b, r);
}

/* ---- candidates ---------------------------------------------------------------------- */
static int tt_bo_add_cand(tt_bo *b, tt__u64set *in, uint64_t v)
{
    int r = tt__u64set_add(in, v);
    if (r <= 0) return r;
    if (b->nc == b->cap_c) {
        size_t c = b->cap_c ? 2 * b->cap_c : 1024;
        uint64_t *ci = realloc(b->cidx, c * sizeof *ci);
        if (!ci) return -1;
        b->cidx = ci;
        b->cap_c = c;
    }
    b->cidx[b->nc++] = v;
    return 1;
}

/* Local rounds: the unproposed pool entries within Hamming distance TT_BO_LOCAL_HAM of the
 * best measured config (any params changed to any values). */
static int tt_bo_local_cands(tt_strategy *st, tt_bo *b, tt__u64set *in)
{
    int rc = 0;
    for (size_t i = 0; i < b->npool && rc >= 0; i++) {
        uint64_t v = b->pool[i];
        if (tt__u64set_has(&st->seen, v)) continue;
        int h = 0;
        for (size_t j = 0; j < b->d && h <= TT_BO_LOCAL_HAM; j++) {
            size_t p = b->dparam[j];
            uint64_t nv = st->cfg.t->params[p].nvalues;
            h += (v / b->stride[p]) % nv != (st->best_idx / b->stride[p]) % nv;
        }
        if (h <= TT_BO_LOCAL_HAM) rc = tt_bo_add_cand(b, in, v);
    }
    return rc;
}

/* Unproposed pool entries (all when few, else TT_BO_CAND at random; for model-bo also the
 * best TT_BO_CAND/2 by the prior) and the unproposed neighbours of the best measured; in a
 * local round only the Hamming ball of the best. */
static tt_rc tt_bo_candidates(tt_strategy *st, tt_bo *b)
{
    tt__u64set in = {0};
    b->nc = 0;
    if (b->local && st->have_best) {
        int r = tt_bo_local_cands(st, b, &in);
        tt__u64set_free(&in);
        return r < 0 ? TT_ENOMEM : TT_OK;
    }
    size_t left = b->npool > st->seen.n ? b->npool - st->seen.n : 0;
    int rc = 0;
    if (left <= TT_BO_CAND) {
        for (size_t i = 0; i < b->npool && rc >= 0; i++)
            if (!tt__u64set_has(&st->seen, b->pool[i])) rc = tt_bo_add_cand(b, &in, b->pool[i]);
    } else {
        for (size_t k = 0; k < 4 * TT_BO_CAND && b->nc < TT_BO_CAND && rc >= 0; k++) {
            uint64_t v = b->pool[tt__st_uniform(st, b->npool)];
            if (!tt__u64set_has(&st->seen, v)) rc = tt_bo_add_cand(b, &in, v);
        }
        if (b->use_prior) {
            /* the best unproposed by the raw model: a partial selection over the pool */
            tt_bo_sortent top[TT_BO_CAND / 2];
            size_t nt = 0;
            for (size_t i = 0; i < b->npool; i++) {
                if (isnan(b->lpred[i]) || tt__u64set_has(&st->seen, b->pool[i])) continue;
                tt_bo_sortent e = {b->lpred[i], b->pool[i]};
                if (nt == TT_BO_CAND / 2 && tt_bo_sortent_cmp(&e, &top[nt - 1]) >= 0) continue;
                size_t j = nt < TT_BO_CAND / 2 ? nt++ : nt - 1;
                while (j > 0 && tt_bo_sortent_cmp(&e, &top[j - 1]) < 0) {
                    top[j] = top[j - 1];
                    j--;
                }
                top[j] = e;
            }
            for (size_t i = 0; i < nt && rc >= 0; i++) rc = tt_bo_add_cand(b, &in, top[i].idx);
        }
    }
    uint64_t best[TT_BO_NEIGH], nb[2 * TT_MAX_SLOTS];
    double bus[TT_BO_NEIGH];
    size_t nbest = tt__st_best_n(st, best, bus, TT_BO_NEIGH);
    for (size_t i = 0; i < nbest && rc >= 0; i++) {
        size_t k = tt__st_neighbours(st, best[i], nb, 2 * TT_MAX_SLOTS);
        for (size_t j = 0; j < k && rc >= 0; j++) rc = tt_bo_add_cand(b, &in, nb[j]);
    }
    tt__u64set_free(&in);
    return rc < 0 ? TT_ENOMEM : TT_OK;
}

/* ---- a round ------------------------------------------------------------------------- */
static double tt_bo_ei(double mu, double sd, double best)
{
    if (!(sd > 1e-12)) return 0;
    double g = best - mu - TT_BO_XI, z = g / sd;
    return g * 0.5 * erfc(-z / sqrt(2.0)) + sd * exp(-0.5 * z * z) / sqrt(2 * M_PI);
}

/* The prior mean of a config in log time (model-bo). */
static double tt_bo_prior(const tt_bo *b, double lp)
{
    return isnan(lp) ? b->worst_y : b->pa + b->pb * lp;
}

/* Score the candidates by EI under the fitted GP and push the best (ties: the smaller
 * index).  Units: the standardised target; model-bo adds prior / sd to the GP mean. */
static tt_rc tt_bo_pick(tt_strategy *st, tt_bo *b, double rbest)
{
    size_t n = b->n, nc = b->nc, d = b->dk ? b->dk : 1;
    if (tt_bo_grow(&b->Kc, n * nc) || tt_bo_grow(&b->Xc, nc * d) || tt_bo_grow(&b->cmean, nc))
        return TT_ENOMEM;
    for (size_t c = 0; c < nc; c++) {
        double *xc = b->Xc + c * d, m = 0;
        tt_bo_coords(st, b, b->cidx[c], xc);
        for (size_t i = 0; i < n; i++) {
            double k = tt_bo_kern(b, b->X + i * b->dk, xc);
            b->Kc[i + c * n] = k;
            m += k * b->alpha[i];
        }
        b->cmean[c] = m;
    }
    /* V = L^-1 Kc: var_c = 1 - |V[:,c]|^2 */
    lapack_int info = LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'L', 'N', 'N', (lapack_int)n,
                                     (lapack_int)nc, b->L, (lapack_int)n, b->Kc, (lapack_int)n);
    if (info != 0) return tt__st_random_round(st, 1);
    /* EI, except that every TT_BO_EXPLOIT-th round of model-free bo takes the candidate with
     * the lowest predicted mean (scores may then be negative, hence -INFINITY) */
    int exploit = !b->use_prior && TT_BO_EXPLOIT > 0 && b->rounds % TT_BO_EXPLOIT == 0;
    b->kind = TT__BO_GP | (exploit ? TT__BO_EXPLOIT : 0) | (b->local ? TT__BO_LOCAL : 0);
    double best_ei = -INFINITY;
    uint64_t pick = 0;
    for (size_t c = 0; c < nc; c++) {
        double v = 1;
        for (size_t i = 0; i < n; i++) v -= b->Kc[i + c * n] * b->Kc[i + c * n];
        double mu = b->cmean[c];
        if (b->use_prior) mu += tt_bo_prior(b, tt_bo_lpred(st, b, b->cidx[c])) / b->sd;
        double ei = exploit ? -mu : tt_bo_ei(mu, sqrt(v > 1e-12 ? v : 1e-12), rbest);
        if (ei > best_ei || (ei == best_ei && b->cidx[c] < pick)) {
            best_ei = ei;
            pick = b->cidx[c];
        }
    }
    return tt__st_push(st, pick) < 0 ? TT_ENOMEM : TT_OK;
}

/* Standardise the training targets into r (bo: around their mean; model-bo: residuals from
 * the fitted prior, which is the mean) and return the incumbent in the same units. */
static double tt_bo_standardise(tt_strategy *st, tt_bo *b, double *r)
{
    size_t n = b->n;
    double lp[TT_BO_NMAX], mean = 0, var = 0;
    b->worst_y = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (b->y[i] > b->worst_y) b->worst_y = b->y[i];
    if (b->use_prior) {
        for (size_t i = 0; i < n; i++) lp[i] = tt_bo_lpred(st, b, b->tidx[i]);
        tt_bo_fit_prior(b, lp, b->y, b->ok, n);
    }
    for (size_t i = 0; i < n; i++) {
        r[i] = b->y[i] - (b->use_prior ? tt_bo_prior(b, lp[i]) : 0);
        mean += r[i] / (double)n;
    }
    if (b->use_prior) mean = 0;
    for (size_t i = 0; i < n; i++) var += (r[i] - mean) * (r[i] - mean) / (double)n;
    b->sd = sqrt(var) > 1e-3 ? sqrt(var) : (b->use_prior ? 0.1 : 1);
    double best = INFINITY;
    for (size_t i = 0; i < n; i++) {
        r[i] = (r[i] - mean) / b->sd;
        double full = b->use_prior ? b->y[i] / b->sd : r[i];
        if (b->ok[i] && full < best) best = full;
    }
    return best;
}

/* A random feasible unproposed config at one or two random param moves from one of the
 * best 4 measured: 1 and *out, or 0. */
static int tt_bo_mutant(tt_strategy *st, const tt_bo *b, uint64_t *out)
{
    uint64_t best[TT_BO_NEIGH];
    double bus[TT_BO_NEIGH];
    size_t nb = tt__st_best_n(st, best, bus, TT_BO_NEIGH);
    if (nb == 0 || b->d == 0) return 0;
    for (int tries = 0; tries < 64; tries++) {
        uint64_t v = best[tt__st_uniform(st, nb)];
        int moves = 1 + (int)(tt__st_rand(st) & 1);
        for (int m = 0; m < moves; m++) {
            size_t p = b->dparam[tt__st_uniform(st, b->d)];
            uint64_t nv = st->cfg.t->params[p].nvalues, pos = (v / b->stride[p]) % nv;
            uint64_t np = tt__st_uniform(st, nv - 1);
            if (np >= pos) np++;
            v = v - pos * b->stride[p] + np * b->stride[p];
        }
        if (!tt__u64set_has(&st->seen, v) && tt__st_feasible(st, v)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

static tt_rc tt_bo_refill(tt_strategy *st)
{
    tt_bo *b = st->impl;
    b->rounds++;
    b->kind = 0;
    uint64_t v = 0;
    if (st->have_best && st->best_us < b->last_best) {
        b->last_best = st->best_us;
        b->stale = 0;
    } else {
        b->stale++;
    }
    /* stuck (the GP sees no improvement worth taking): every other round EI over the
     * configs within Hamming distance 2 of the best (the step one-param neighbours and a
     * smooth kernel miss: two params changed at once, to any values); when that ball is
     * used up, a random mutation of one of the best, as annealing would */
    b->local = b->init_left <= 0 && b->stale >= TT_BO_STALE && (b->rounds & 1);
    if (b->init_left > 0) {
        b->init_left--;
        b->kind = TT__BO_INIT;
        if (tt_bo_initial(st, b, &v)) return tt__st_push(st, v) < 0 ? TT_ENOMEM : TT_OK;
        return tt__st_random_round(st, 1);
    }
    /* the group terms: model-free bo, small budgets (they triple the kernel's cost) */
    b->gw = !b->use_prior && b->groups && st->nobs < TT_BO_GROUP_NMAX ? TT_BO_GROUP_W : 0;
    int have_ok;
    tt_rc rc = tt_bo_training(st, b, &have_ok);
    if (rc != TT_OK) return rc;
    if (!have_ok || b->n == 0) return tt__st_random_round(st, 1);
    double r[TT_BO_NMAX];
    double rbest = tt_bo_standardise(st, b, r);
    double lml = (b->n <= 32 || b->rounds % 4 == 0) ? tt_bo_tune(b, r) : tt_bo_factor(b, r);
    while (!isfinite(lml) && b->noise < 0.5) {   /* not positive definite: more noise */
        b->noise = b->noise * 10 > 0.5 ? 0.5 : b->noise * 10;
        lml = tt_bo_factor(b, r);
    }
    if (!isfinite(lml)) return tt__st_random_round(st, 1);
    rc = tt_bo_candidates(st, b);
    if (rc != TT_OK) return rc;
    if (b->nc == 0 && b->local) {
        b->local = 0;
        b->kind = TT__BO_LOCAL;
        if (tt_bo_mutant(st, b, &v)) return tt__st_push(st, v) < 0 ? TT_ENOMEM : TT_OK;
        rc = tt_bo_candidates(st, b);
        if (rc != TT_OK) return rc;
    }
    if (b->nc == 0) return tt__st_random_round(st, 1);
    return tt_bo_pick(st, b, rbest);
}

/* ---- test hooks (strategy_int.h) ----------------------------------------------------- */
size_t tt__bo_inputs(const tt_strategy *st, uint64_t idx, double *x)
{
    const tt_bo *b = st->impl;
    tt_bo_coords(st, b, idx, x);
    return b->dk;
}

int tt__bo_round(const tt_strategy *st) { return ((const tt_bo *)st->impl)->kind; }

int tt__bo_dim_big(const tt_strategy *st, size_t j) { return ((const tt_bo *)st->impl)->big[j]; }

int tt__bo_posterior(tt_strategy *st, uint64_t idx, double *mu, double *sd)
{
    const tt_bo *b = st->impl;
    if (!(b->kind & TT__BO_GP)) return 0;
    double x[TT_MAX_SLOTS], k[TT_BO_NMAX], m = 0, v = 1;
    tt_bo_coords(st, b, idx, x);
    for (size_t i = 0; i < b->n; i++) {
        k[i] = tt_bo_kern(b, b->X + i * b->dk, x);
        m += k[i] * b->alpha[i];
    }
    if (LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'L', 'N', 'N', (lapack_int)b->n, 1, b->L,
                       (lapack_int)b->n, k, (lapack_int)b->n) != 0)
        return 0;
    for (size_t i = 0; i < b->n; i++) v -= k[i] * k[i];
    if (b->use_prior) m += tt_bo_prior(b, tt_bo_lpred(st, b, idx)) / b->sd;
    *mu = m;
    *sd = sqrt(v > 1e-12 ? v : 1e-12);
    return 1;
}

static void tt_bo_free(tt_strategy *st)
{
    tt_bo *b = st->impl;
    if (!b) return;
    free(b->pool);
    free(b->lpred);
    free(b->X);
    free(b->y);
    free(b->L);
    free(b->alpha);
    free(b->Kc);
    free(b->Xc);
    free(b->ok);
    free(b->tidx);
    free(b->cidx);
    free(b->cmean);
    free(b);
    st->impl = NULL;
}

const tt__strategy_ops tt__strategy_bo = {
    .name = "bo", .default_budget = 64, .uses_model = 0,
    .start = tt_bo_start, .refill = tt_bo_refill, .free = tt_bo_free,
};

const tt__strategy_ops tt__strategy_model_bo = {
    .name = "model-bo", .default_budget = 32, .uses_model = 1, .no_model = "bo",
    .start = tt_mbo_start, .refill = tt_bo_refill, .free = tt_bo_free,
};

/* SPDX-License-Identifier: MIT
 * strategy_model.c - the model-driven strategies: model-topk and model-refine.
 *
 * Both rank the space by the analytic cost model (costmodel/model.h) and fall back to seeded
 * random sampling (strategy.c) when there is no model.
 */
#include "strategy_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- model-topk --------------------------------------------------------------------- */
static tt_rc tt_topk_start(tt_strategy *st)
{
    int64_t k = tt__st_room(st);
    if (k > (1 << 20)) k = 1 << 20;
    tt__ranked *r;
    size_t n;
    tt_rc rc = tt__st_rank(st, NULL, (size_t)k, &r, &n);
    if (rc != TT_OK) return rc;
    for (size_t i = 0; i < n; i++)
        if (tt__st_push(st, r[i].idx) < 0) {
            free(r);
            return TT_ENOMEM;
        }
    free(r);
    if ((int64_t)n < st->planned) st->planned = (int64_t)n;
    return TT_OK;
}

static tt_rc tt_topk_refill(tt_strategy *st) { (void)st; return TT_OK; }

const tt__strategy_ops tt__strategy_model_topk = {
    .name = "model-topk", .default_budget = 16, .uses_model = 1, .no_model = TT_STRATEGY_NO_MODEL,
    .start = tt_topk_start, .refill = tt_topk_refill,
};

/* ---- model-refine ------------------------------------------------------------------- */
/* Rounds of R configs.  Round 1: the model's best R.  After each round the model is
 * corrected from the measurements: a global calibration (tt_calib_fit, log-linear; used
 * only when monotone) and a local one: the log residual log(measured / calibrated
 * prediction) of the nearest measured configs (L1 distance in domain steps, 1/(1+d)^2
 * weights, 4 nearest), so regions where the model is off move up or down the ranking.
 * Later rounds: up to R/4 unmeasured neighbours of the best `neighbours` measured configs,
 * then half of the rest from the raw model ranking (a hedge against misleading corrections)
 * and the other half from the corrected ranking of the candidates (the whole space when it
 * can be enumerated, else the model's best 4*budget of a seeded sample).  Stops when the budget is
 * used or `patience` rounds in a row bring no improvement of the best measured time, but
 * never while an unmeasured candidate's low bound (corrected prediction x the model's band
 * low factor, costmodel/band.h) beats the incumbent's high bound (its corrected prediction x
 * the band's high factor): such a config may still be faster, so it is not discarded. */
typedef struct tt_refine {
    tt__ranked *cand;         /* candidates with their raw model prediction */
    size_t ncand;
    double *score;            /* scratch: corrected prediction per candidate */
    int64_t round_size;
    int rounds, stale, have_prev;
    double prev_best;
    tt_calib cal;
    int have_cal;
    uint64_t stride[TT_MAX_SLOTS];
    /* measured points for the local correction */
    uint64_t *m_idx;
    uint16_t *m_pos;          /* nm x np: each measured config's value positions */
    double *m_res;
    size_t nm;
    double band_lo, band_hi;  /* the model's error band factors (low_us / time_us, ...) */
} tt_refine;

static tt_rc tt_refine_start(tt_strategy *st)
{
    tt_refine *r = calloc(1, sizeof *r);
    if (!r) return TT_ENOMEM;
    st->impl = r;
    tt_calib_identity(&r->cal);
    uint64_t s = 1;
    for (size_t p = st->np; p-- > 0;) {
        r->stride[p] = s;
        s *= st->cfg.t->params[p].nvalues;
    }
    int64_t room = tt__st_room(st);
    r->round_size = st->opt_round ? st->opt_round : (room / 4 > 4 ? room / 4 : 4);
    if (r->round_size > 64) r->round_size = 64;
    size_t depth;
    if (tt_space_total(st->cfg.space) <= st->max_enumerate) {
        depth = (size_t)tt_space_total(st->cfg.space);   /* every feasible config ... */
        if (depth > ((size_t)1 << 20)) depth = (size_t)1 << 20;   /* ... up to 1 M best */
    } else {
        int64_t d = room < (1 << 14) ? 4 * room : (1 << 16);
        depth = (size_t)(d < 256 ? 256 : d);
    }
    tt_rc rc = tt__st_rank(st, NULL, depth ? depth : 1, &r->cand, &r->ncand);
    if (rc != TT_OK) return rc;
    r->band_lo = r->band_hi = 1;
    tt_model_result br;
    if (r->ncand > 0 && isfinite(tt__st_predict(st, NULL, r->cand[0].idx, &br)) && br.time_us > 0) {
        r->band_lo = br.low_us / br.time_us;
        r->band_hi = br.high_us / br.time_us;
    }
    r->score = malloc((r->ncand ? r->ncand : 1) * sizeof *r->score);
    if (!r->score) return TT_ENOMEM;
    int64_t pushed = 0;
    for (size_t i = 0; i < r->ncand && pushed < r->round_size; i++) {
        int x = tt__st_push(st, r->cand[i].idx);
        if (x < 0) return TT_ENOMEM;
        pushed += x;
    }
    return TT_OK;
}

#ifndef TT_REFINE_PRIOR
#define TT_REFINE_PRIOR 0.0    /* weight of "no correction" against 1/(1+d)^2 per point */
#endif

_Static_assert(TT_MAX_PARAM_VALUES <= 65536, "positions are stored as uint16_t");
/* Value positions of idx in the param domains (at most TT_MAX_PARAM_VALUES values). */
static void tt_refine_pos(const tt_strategy *st, const tt_refine *r, uint64_t idx, uint16_t *pos)
{
    for (size_t p = 0; p < st->np; p++)
        pos[p] = (uint16_t)((idx / r->stride[p]) % st->cfg.t->params[p].nvalues);
}

/* Local log correction at config idx from the 4 nearest measured points (L1 distance in
 * domain steps; the positions are decoded once per config, not once per pair: this runs
 * for every candidate of the space against every measured config). */
static double tt_refine_local(const tt_strategy *st, const tt_refine *r, uint64_t idx)
{
    enum { K = 4 };
    uint64_t bd[K];
    double br[K];
    size_t k = 0, np = st->np;
    uint16_t x[TT_MAX_SLOTS];
    tt_refine_pos(st, r, idx, x);
    for (size_t i = 0; i < r->nm; i++) {
        const uint16_t *y = r->m_pos + i * np;
        uint64_t d = 0;
        for (size_t p = 0; p < np; p++) d += (uint64_t)(x[p] > y[p] ? x[p] - y[p] : y[p] - x[p]);
        size_t j;
        if (k < K) j = k++;
        else if (d >= bd[K - 1]) continue;
        else j = K - 1;
        while (j > 0 && d < bd[j - 1]) {
            bd[j] = bd[j - 1];
            br[j] = br[j - 1];
            j--;
        }
        bd[j] = d;
        br[j] = r->m_res[i];
    }
    double sw = 0, sr = 0;
    for (size_t i = 0; i < k; i++) {
        double w = 1.0 / ((1.0 + (double)bd[i]) * (1.0 + (double)bd[i]));
        sw += w;
        sr += w * br[i];
    }
    /* shrunk towards no correction: far measured points say little about idx */
    return sw + TT_REFINE_PRIOR > 0 ? sr / (sw + TT_REFINE_PRIOR) : 0;
}

static double tt_refine_global(const tt_refine *r, double pred)
{
    return r->have_cal ? tt_calib_apply(&r->cal, pred) : pred;
}

/* Refit the global calibration and the local residuals on every successful measurement. */
static tt_rc tt_refine_recalibrate(tt_strategy *st)
{
    tt_refine *r = st->impl;
    size_t n = 0;
    tt_model_result *pred = malloc((st->nobs ? st->nobs : 1) * sizeof *pred);
    double *meas = malloc((st->nobs ? st->nobs : 1) * sizeof *meas);
    uint64_t *mi = realloc(r->m_idx, (st->nobs ? st->nobs : 1) * sizeof *mi);
    if (mi) r->m_idx = mi;
    double *mr = realloc(r->m_res, (st->nobs ? st->nobs : 1) * sizeof *mr);
    if (mr) r->m_res = mr;
    uint16_t *mp = realloc(r->m_pos, (st->nobs ? st->nobs : 1) * st->np * sizeof *mp);
    if (mp) r->m_pos = mp;
    tt_rc rc = TT_OK;
    if (!pred || !meas || !mi || !mr || !mp) {
        rc = TT_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < st->nobs; i++) {
        if (!isfinite(st->obs_us[i])) continue;
        if (!isfinite(tt__st_predict(st, NULL, st->obs_idx[i], &pred[n]))) continue;
        r->m_idx[n] = st->obs_idx[i];
        tt_refine_pos(st, r, st->obs_idx[i], r->m_pos + n * st->np);
        meas[n++] = st->obs_us[i];
    }
    tt_calib c;
    r->have_cal = n >= 2 && tt_calib_fit(pred, meas, (int)n, &c) == TT_OK && c.log_b > 0;
    if (r->have_cal) r->cal = c;
    for (size_t i = 0; i < n; i++)
        r->m_res[i] = log(meas[i]) - log(tt_refine_global(r, pred[i].time_us));
    r->nm = n;
out:
    free(pred);
    free(meas);
    return rc;
}

static double tt_refine_score(const tt_strategy *st, const tt_refine *r, uint64_t idx,
                              double pred)
{
    if (!isfinite(pred)) return INFINITY;
    return tt_refine_global(r, pred) * exp(tt_refine_local(st, r, idx));
}

/* 1 when some unmeasured candidate's low bound beats the incumbent's high bound.  The local
 * correction is a weighted mean of measured residuals, so a candidate's corrected prediction
 * is at least global(raw) x exp(smallest residual); candidates are in raw model order and the
 * global calibration is monotone, so the first unmeasured one has the smallest such bound:
 * one check decides (a looser low bound keeps more configs, never fewer). */
static int tt_refine_any_open(tt_strategy *st, const tt_refine *r)
{
    if (!st->have_best) return 1;
    double inc = tt_refine_score(st, r, st->best_idx, tt__st_predict(st, NULL, st->best_idx, NULL));
    if (!isfinite(inc)) return 0;
    double minres = 0;
    for (size_t i = 0; i < r->nm; i++)
        if (r->m_res[i] < minres) minres = r->m_res[i];
    for (size_t i = 0; i < r->ncand; i++) {
        if (tt__u64set_has(&st->seen, r->cand[i].idx)) continue;
        if (!isfinite(r->cand[i].pred_us)) return 0;
        double low = tt_refine_global(r, r->cand[i].pred_us) * exp(minres) * r->band_lo;
        return low < inc * r->band_hi;
    }
    return 0;
}

static tt_rc tt_refine_refill(tt_strategy *st)
{
    tt_refine *r = st->impl;
    r->rounds++;
    if (r->have_prev && !(st->have_best && st->best_us < r->prev_best)) {
        /* no improvement for `patience` rounds: done, unless a candidate may still win */
        if (++r->stale >= st->opt_patience) {
            tt_rc rc = tt_refine_recalibrate(st);
            if (rc != TT_OK) return rc;
            if (!tt_refine_any_open(st, r)) return TT_OK;
        }
    } else {
        r->stale = 0;
    }
    if (st->have_best) {
        r->have_prev = 1;
        r->prev_best = st->best_us;
    }
    tt_rc rc = tt_refine_recalibrate(st);
    if (rc != TT_OK) return rc;
    int64_t want = r->round_size < tt__st_room(st) ? r->round_size : tt__st_room(st);
    int64_t pushed = 0;
    /* neighbourhood of the best measured configs, ranked by the corrected model */
    size_t nb_best = (size_t)st->opt_neighbours;
    if (nb_best > 0) {
        uint64_t *best = malloc(nb_best * sizeof *best);
        double *bus = malloc(nb_best * sizeof *bus);
        size_t cap = nb_best * 2 * st->np;
        tt__ranked *cand = malloc((cap ? cap : 1) * sizeof *cand);
        uint64_t *nb = malloc(2 * st->np * sizeof *nb);
        if (!best || !bus || !cand || !nb) rc = TT_ENOMEM;
        size_t nc = 0;
        tt__u64set local = {0};
        size_t k = rc ? 0 : tt__st_best_n(st, best, bus, nb_best);
        for (size_t i = 0; i < k && rc == TT_OK; i++) {
            size_t n = tt__st_neighbours(st, best[i], nb, 2 * st->np);
            for (size_t j = 0; j < n && nc < cap; j++) {
                int added = tt__u64set_add(&local, nb[j]);
                if (added < 0) rc = TT_ENOMEM;
                if (added != 1) continue;
                cand[nc].idx = nb[j];
                cand[nc].pred_us = tt_refine_score(st, r, nb[j], tt__st_predict(st, NULL, nb[j], NULL));
                nc++;
            }
        }
        tt__u64set_free(&local);
        if (rc == TT_OK) {
            qsort(cand, nc, sizeof *cand, tt__ranked_cmp);
            int64_t half = (want + 3) / 4;
            for (size_t i = 0; i < nc && pushed < half; i++) {
                if (!isfinite(cand[i].pred_us)) break;
                int x = tt__st_push(st, cand[i].idx);
                if (x < 0) rc = TT_ENOMEM;
                pushed += x > 0;
            }
        }
        free(best);
        free(bus);
        free(cand);
        free(nb);
        if (rc != TT_OK) return rc;
    }
    /* the rest: half the next unmeasured configs of the raw model ranking (in case the
     * corrections mislead), then the best unmeasured candidates by corrected prediction */
    int64_t raw = (want - pushed) / 2, got = 0;
    for (size_t i = 0; i < r->ncand && got < raw; i++) {
        int x = tt__st_push(st, r->cand[i].idx);
        if (x < 0) return TT_ENOMEM;
        got += x;
    }
    int64_t rest = want - pushed - got;
    if (rest <= 0) return TT_OK;
    tt__ranked *top = malloc((size_t)rest * sizeof *top);
    if (!top) return TT_ENOMEM;
    size_t nt = 0;
    for (size_t i = 0; i < r->ncand; i++) {
        uint64_t idx = r->cand[i].idx;
        if (tt__u64set_has(&st->seen, idx)) continue;
        tt__ranked x = {tt_refine_score(st, r, idx, r->cand[i].pred_us), idx};
        if (!isfinite(x.pred_us)) continue;
        /* insertion into the sorted top list */
        size_t j;
        if (nt < (size_t)rest) j = nt++;
        else if (tt__ranked_cmp(&x, &top[nt - 1]) >= 0) continue;
        else j = nt - 1;
        while (j > 0 && tt__ranked_cmp(&x, &top[j - 1]) < 0) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = x;
    }
    for (size_t i = 0; i < nt && rc == TT_OK; i++)
        if (tt__st_push(st, top[i].idx) < 0) rc = TT_ENOMEM;
    free(top);
    return rc;
}

static void tt_refine_free(tt_strategy *st)
{
    tt_refine *r = st->impl;
    if (!r) return;
    free(r->cand);
    free(r->score);
    free(r->m_idx);
    free(r->m_pos);
    free(r->m_res);
    free(r);
    st->impl = NULL;
}

const tt__strategy_ops tt__strategy_model_refine = {
    .name = "model-refine", .default_budget = 32, .uses_model = 1,
    .no_model = TT_STRATEGY_NO_MODEL,
    .start = tt_refine_start, .refill = tt_refine_refill, .free = tt_refine_free,
};

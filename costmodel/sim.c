/* SPDX-License-Identifier: MIT
 * sim.c - tt_sim_run(): feasibility check, blocks -> waves, folding of identical cores and
 * identical waves, the steady-state shortcut for long loops, and the result.
 *
 * Blocks (grid points, or launched blocks of a persistent kernel) go to the AI cores in
 * waves of `cube_cores`; a wave starts when the previous one has finished.  Within a wave,
 * cores that run identical blocks form a group simulated once with a weight in the shared
 * bandwidth (they run in lockstep).  A wave whose groups equal an earlier wave's is not
 * simulated again.  See docs/simulator.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "space.h"

static const char *const stall_names[TT_STALL__COUNT] = {"data", "slot", "bandwidth", "flag"};

const char *tt_stall_name(tt_stall s)
{
    return ((int)s >= 0 && s < TT_STALL__COUNT) ? stall_names[s] : "?";
}

void tt_sim_result_close(tt_sim_result *r)
{
    if (!r) return;
    free(r->trace_json);
    r->trace_json = NULL;
}

/* ---- block signatures ------------------------------------------------------------- */

typedef struct sigtab {       /* interned value vectors */
    int64_t *vals;            /* nuniq * width */
    size_t width, nuniq, capuniq;
    int32_t *slot;            /* open addressing: index+1, 0 empty */
    uint64_t *hash;
    size_t cap;               /* power of 2 */
} sigtab;

static uint64_t fnv(const int64_t *v, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)v[i];
        for (int b = 0; b < 8; b++) {
            h ^= (x >> (8 * b)) & 0xff;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

static void sigtab_free(sigtab *t)
{
    free(t->vals);
    free(t->slot);
    free(t->hash);
    memset(t, 0, sizeof *t);
}

/* Intern v[0..width): returns its id, or -1 on OOM. */
static int64_t sigtab_intern(sigtab *t, const int64_t *v)
{
    if (2 * (t->nuniq + 1) > t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        int32_t *ns = calloc(nc, sizeof *ns);
        uint64_t *nh = calloc(nc, sizeof *nh);
        if (!ns || !nh) { free(ns); free(nh); return -1; }
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slot[i]) continue;
            size_t j = t->hash[i] & (nc - 1);
            while (ns[j]) j = (j + 1) & (nc - 1);
            ns[j] = t->slot[i];
            nh[j] = t->hash[i];
        }
        free(t->slot);
        free(t->hash);
        t->slot = ns;
        t->hash = nh;
        t->cap = nc;
    }
    uint64_t h = fnv(v, t->width);
    size_t j = h & (t->cap - 1);
    while (t->slot[j]) {
        int64_t id = t->slot[j] - 1;
        if (t->hash[j] == h &&
            memcmp(&t->vals[(size_t)id * t->width], v, t->width * sizeof *v) == 0)
            return id;
        j = (j + 1) & (t->cap - 1);
    }
    if (t->nuniq == t->capuniq) {
        size_t nc = t->capuniq ? t->capuniq * 2 : 16;
        int64_t *nv = realloc(t->vals, nc * (t->width ? t->width : 1) * sizeof *nv);
        if (!nv) return -1;
        t->vals = nv;
        t->capuniq = nc;
    }
    if (t->width) memcpy(&t->vals[t->nuniq * t->width], v, t->width * sizeof *v);
    t->slot[j] = (int32_t)(t->nuniq + 1);
    t->hash[j] = h;
    return (int64_t)t->nuniq++;
}

/* ---- run state ---------------------------------------------------------------------- */

typedef struct memo {
    uint64_t hash;
    int64_t *key;             /* (id, count) pairs, then rep group, traced */
    size_t nkey;
    tt__swave w;
} memo;

typedef struct shape {        /* truncated simulations of a wave shape (shortcut) */
    uint64_t hash;
    int64_t *key;
    size_t nkey;
    tt__swave w1, w2;
} shape;

typedef struct run {
    tt__sim s;
    const tt_sim_opts *o;
    int64_t cores;            /* AI cores per wave */
    int64_t persistent;       /* launched blocks, 0 when not persistent */
    int64_t nlog;             /* logical blocks */
    int64_t *lsig;            /* per logical block id (NULL: computed on the fly) */
    memo *memo;
    size_t nmemo, capmemo;
    shape *shapes;
    size_t nshapes, capshapes;
    int64_t events, max_events;
    int extrapolated;
    size_t trace_n;
    tt__sbuf tb;
    char *reason;
    size_t rcap;
} run;

/* Grid points of logical block L (allocates *gp). */
static int64_t lblock_points(const run *R, int64_t L, int64_t **gp)
{
    int64_t n = 1;
    if (R->persistent) n = (R->s.nblocks - L + R->persistent - 1) / R->persistent;
    *gp = malloc((size_t)(n > 0 ? n : 1) * sizeof **gp);
    if (!*gp) return -1;
    for (int64_t j = 0; j < n; j++) (*gp)[j] = L + j * (R->persistent ? R->persistent : 1);
    return n;
}

static int64_t lsig_of(const run *R, int64_t L)
{
    if (R->lsig) return R->lsig[L];
    if (!R->persistent) return 0;
    return (R->s.nblocks - L + R->persistent - 1) / R->persistent;  /* length of its walk */
}

static tt_rc compute_sigs(run *R)
{
    tt__sim *s = &R->s;
    if (!s->grid_dep) return TT_OK;
    if (s->nblocks > (1 << 22)) {
        snprintf(R->reason, R->rcap, "%lld blocks with different trip counts: too many to simulate",
                 (long long)s->nblocks);
        return TT_ELIMIT;
    }
    size_t width = tt__sim_block_sig(s, 0, NULL, 0);
    int64_t *v = malloc((width + 1) * sizeof *v);
    int64_t *gsig = malloc((size_t)s->nblocks * sizeof *gsig);
    R->lsig = malloc((size_t)R->nlog * sizeof *R->lsig);
    sigtab gt = {0}, lt = {0};
    gt.width = width;
    tt_rc rc = TT_OK;
    if (!v || !gsig || !R->lsig) { rc = TT_ENOMEM; goto out; }
    for (int64_t g = 0; g < s->nblocks; g++) {
        tt__sim_block_sig(s, g, v, width);
        if ((gsig[g] = sigtab_intern(&gt, v)) < 0) { rc = TT_ENOMEM; goto out; }
    }
    if (!R->persistent) {
        memcpy(R->lsig, gsig, (size_t)R->nlog * sizeof *gsig);
    } else {
        int64_t maxlen = (s->nblocks + R->persistent - 1) / R->persistent;
        lt.width = (size_t)maxlen + 1;
        int64_t *seq = malloc(lt.width * sizeof *seq);
        if (!seq) { rc = TT_ENOMEM; goto out; }
        for (int64_t L = 0; L < R->nlog; L++) {
            size_t k = 0;
            for (int64_t g = L; g < s->nblocks; g += R->persistent) seq[k++] = gsig[g];
            while (k < lt.width) seq[k++] = -1;
            if ((R->lsig[L] = sigtab_intern(&lt, seq)) < 0) { rc = TT_ENOMEM; break; }
        }
        free(seq);
    }
out:
    if (rc == TT_ENOMEM) snprintf(R->reason, R->rcap, "out of memory");
    sigtab_free(&gt);
    sigtab_free(&lt);
    free(v);
    free(gsig);
    return rc;
}

/* ---- one wave ----------------------------------------------------------------------- */

typedef struct wgroup {
    int64_t id, count, first;  /* signature, cores, first logical block */
} wgroup;

static void groups_free(tt__sgroup *g, size_t n)
{
    if (!g) return;
    for (size_t i = 0; i < n; i++)
        for (int r = 0; r < TT__AG__COUNT; r++) tt__sprog_free(&g[i].prog[r]);
    free(g);
}

/* Build and simulate the groups of a wave once with the truncation in force. */
static tt_rc sim_groups(run *R, const wgroup *wg, size_t ng, size_t rep, int traced,
                        tt__swave *out)
{
    tt__sgroup *g = calloc(ng + 1, sizeof *g);
    if (!g) return TT_ENOMEM;
    tt_rc rc = TT_OK;
    for (size_t i = 0; i < ng; i++) {
        int64_t *gp = NULL;
        int64_t n = lblock_points(R, wg[i].first, &gp);
        if (n < 0) { rc = TT_ENOMEM; break; }
        rc = tt__sim_build(&R->s, gp, (size_t)n, g[i].prog, R->reason, R->rcap);
        free(gp);
        if (rc) break;
        g[i].weight = (double)wg[i].count;
        g[i].traced = traced && i == rep;
    }
    if (!rc) {
        int64_t left = R->max_events - R->events;
        rc = tt__sim_wave(&R->s, g, ng, rep, left > 0 ? left : 1, out, R->reason, R->rcap);
        if (rc == TT_ELIMIT)
            snprintf(R->reason, R->rcap, "more than %lld simulation events (max_events)",
                     (long long)R->max_events);
        if (!rc) R->events += out->events;
    }
    groups_free(g, ng);
    if (rc == TT_ENOMEM) snprintf(R->reason, R->rcap, "out of memory");
    return rc;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) { int64_t t = a % b; a = b; b = t; }
    return a;
}

/* Simulate a wave, with the steady-state shortcut when it is long. */
static tt_rc sim_wave(run *R, const wgroup *wg, size_t ng, size_t rep, int traced,
                      tt__swave *out)
{
    tt__sim *s = &R->s;
    int64_t limit = R->o->shortcut_ops ? R->o->shortcut_ops : TT_SIM_SHORTCUT_OPS;
    s->trunc_loop = -1;
    if (limit > 0 && !traced) {
        /* The longest top-level loop, if every group has it: shorten it in every group by
         * the same number of iterations so that the shortest group keeps t1, then t2, and
         * extrapolate linearly to the full trip counts.  In a steady state whose period
         * divides t1 - t2, every figure is affine in the number of iterations removed. */
        double total = 0;
        int loop = -1, same = 1;
        int64_t tmin = 0;
        for (size_t i = 0; i < ng; i++) {
            int lid;
            int64_t tr, npts = 1;
            if (R->persistent) npts = (s->nblocks - wg[i].first + R->persistent - 1) / R->persistent;
            total += tt__sim_count(s, wg[i].first, &lid, &tr) * (double)npts;
            if (i == 0) { loop = lid; tmin = tr; }
            else if (lid != loop) same = 0;
            if (tr < tmin) tmin = tr;
        }
        /* period of the ring-slot pattern: lcm of the ring sizes */
        int64_t period = 1;
        for (size_t b = 0; b < s->t->nbuffers && period <= 64; b++)
            period = period / gcd64(period, s->copies[b]) * s->copies[b];
        int64_t warm = loop >= 0 ? tt__sim_warmup(s, loop) : 4;
        int64_t t2 = period * ((warm + period - 1) / period), t1 = 2 * t2;
        if (total > (double)limit && same && loop >= 0 && period <= 64 && tmin > t1 + t2) {
            /* Waves that differ only by a common shift of that loop's trip count share the
             * two truncated simulations (e.g. the waves of a causal attention). */
            s->trunc_loop = loop;
            s->trunc_delta = tmin - t1;
            size_t width = tt__sim_block_sig(s, wg[0].first, NULL, 0);
            size_t nk = ng * (width + 2) + 1;
            int64_t *key = malloc(nk * sizeof *key);
            if (!key) { s->trunc_loop = -1; return TT_ENOMEM; }
            size_t kk = 0;
            for (size_t i = 0; i < ng; i++) {
                tt__sim_block_sig(s, wg[i].first, &key[kk], width);
                kk += width;
                key[kk++] = wg[i].count;
                /* a persistent block walks several grid points: the first one's values do
                 * not describe it, so only identical blocks share */
                if (R->persistent) key[kk++] = wg[i].id;
            }
            key[kk++] = (int64_t)rep;
            uint64_t h = fnv(key, kk);
            shape *sh = NULL;
            for (size_t i = 0; i < R->nshapes && !sh; i++)
                if (R->shapes[i].hash == h && R->shapes[i].nkey == kk &&
                    memcmp(R->shapes[i].key, key, kk * sizeof *key) == 0)
                    sh = &R->shapes[i];
            if (!sh) {
                if (R->nshapes == R->capshapes) {
                    size_t nc = R->capshapes ? R->capshapes * 2 : 8;
                    shape *ns = realloc(R->shapes, nc * sizeof *ns);
                    if (!ns) { free(key); s->trunc_loop = -1; return TT_ENOMEM; }
                    R->shapes = ns;
                    R->capshapes = nc;
                }
                sh = &R->shapes[R->nshapes];
                memset(sh, 0, sizeof *sh);
                tt_rc rc = sim_groups(R, wg, ng, rep, 0, &sh->w1);
                if (!rc) {
                    s->trunc_delta = tmin - t2;
                    rc = sim_groups(R, wg, ng, rep, 0, &sh->w2);
                    if (rc) tt__swave_free(&sh->w1);
                }
                if (rc) { free(key); s->trunc_loop = -1; return rc; }
                sh->key = key;
                sh->nkey = kk;
                sh->hash = h;
                key = NULL;
                R->nshapes++;
            }
            free(key);
            s->trunc_loop = -1;
            const tt__swave w1 = sh->w1, w2 = sh->w2;
            double f = (double)(tmin - t1) / (double)(t1 - t2);
            memset(out, 0, sizeof *out);
            out->cycles = w1.cycles + f * (w1.cycles - w2.cycles);
            for (int a = 0; a < TT__AG__COUNT; a++)
                for (int u = 0; u < TT_UNIT__COUNT; u++)
                    out->busy[a][u] = w1.busy[a][u] + f * (w1.busy[a][u] - w2.busy[a][u]);
            for (int k = 0; k < TT_STALL__COUNT; k++) {
                out->stall[k] = w1.stall[k] + f * (w1.stall[k] - w2.stall[k]);
                if (out->stall[k] < 0) out->stall[k] = 0;
            }
            out->events = 0;
            R->extrapolated = 1;
            return TT_OK;
        }
    }
    return sim_groups(R, wg, ng, rep, traced, out);
}

static void add_trace(run *R, const tt__swave *w, double t0)
{
    if (!w->ntrace || R->trace_n >= TT_SIM_MAX_TRACE_EVENTS) return;
    size_t n = w->ntrace;
    if (R->trace_n + n > TT_SIM_MAX_TRACE_EVENTS) n = TT_SIM_MAX_TRACE_EVENTS - R->trace_n;
    tt__sim_trace_add(&R->tb, &R->s, R->o->trace_core, w->trace, n, t0);
    R->trace_n += n;
}

static tt_rc run_waves(run *R, tt_sim_result *res)
{
    int64_t C = R->cores;
    int64_t nw = (R->nlog + C - 1) / C;
    int64_t repcore = R->o->trace_core >= 0 ? R->o->trace_core : 0;
    int tracing = R->o->trace_core >= 0;
    wgroup *wg = malloc((size_t)C * sizeof *wg);
    int64_t *key = malloc(((size_t)C * 2 + 2) * sizeof *key);
    if (!wg || !key) {
        free(wg);
        free(key);
        return TT_ENOMEM;
    }
    tt_rc rc = TT_OK;
    double t = 0;
    double busy[TT__AG__COUNT][TT_UNIT__COUNT] = {{0}};
    int64_t full = R->nlog / C;
    for (int64_t w = 0; w < nw; w++) {
        int64_t b0 = w * C, nb = R->nlog - b0 < C ? R->nlog - b0 : C;
        /* identical blocks: the remaining full waves are all alike, account for them at once */
        int64_t mult = (!R->lsig && !R->persistent && w < full) ? full - w : 1;
        size_t ng = 0, rep = (size_t)-1;
        for (int64_t c = 0; c < nb; c++) {
            int64_t id = lsig_of(R, b0 + c);
            size_t gi = 0;
            while (gi < ng && wg[gi].id != id) gi++;
            if (gi == ng) wg[ng++] = (wgroup){id, 0, b0 + c};
            wg[gi].count++;
            if (c == repcore) rep = gi;
        }
        size_t nk = 0;
        for (size_t i = 0; i < ng; i++) {
            key[nk++] = wg[i].id;
            key[nk++] = wg[i].count;
        }
        key[nk++] = (int64_t)rep;
        key[nk++] = tracing;
        uint64_t h = fnv(key, nk);
        memo *m = NULL;
        for (size_t i = 0; i < R->nmemo && !m; i++)
            if (R->memo[i].hash == h && R->memo[i].nkey == nk &&
                memcmp(R->memo[i].key, key, nk * sizeof *key) == 0)
                m = &R->memo[i];
        if (!m) {
            if (R->nmemo == R->capmemo) {
                size_t nc = R->capmemo ? R->capmemo * 2 : 8;
                memo *nm = realloc(R->memo, nc * sizeof *nm);
                if (!nm) { rc = TT_ENOMEM; break; }
                R->memo = nm;
                R->capmemo = nc;
            }
            m = &R->memo[R->nmemo];
            memset(m, 0, sizeof *m);
            m->key = malloc(nk * sizeof *key);
            if (!m->key) { rc = TT_ENOMEM; break; }
            memcpy(m->key, key, nk * sizeof *key);
            m->nkey = nk;
            m->hash = h;
            rc = sim_wave(R, wg, ng, rep == (size_t)-1 ? (size_t)-1 : rep, tracing && rep != (size_t)-1, &m->w);
            if (rc) { free(m->key); break; }
            R->nmemo++;
            res->waves_simulated++;
        }
        double dm = (double)mult;
        if (rep != (size_t)-1) {
            for (int a = 0; a < TT__AG__COUNT; a++)
                for (int u = 0; u < TT_UNIT__COUNT; u++) busy[a][u] += dm * m->w.busy[a][u];
            for (int k = 0; k < TT_STALL__COUNT; k++) res->stall_cycles[k] += dm * m->w.stall[k];
            for (int64_t j = 0; tracing && j < mult && R->trace_n < TT_SIM_MAX_TRACE_EVENTS; j++)
                add_trace(R, &m->w, t + (double)j * m->w.cycles);
        }
        t += dm * m->w.cycles;
        w += mult - 1;
    }
    free(wg);
    free(key);
    res->waves = nw;
    res->cycles = t;
    for (int u = 0; u < TT_UNIT__COUNT; u++) {
        double b = busy[TT__AG_CUBE][u] > busy[TT__AG_VEC][u] ? busy[TT__AG_CUBE][u] : busy[TT__AG_VEC][u];
        res->busy_cycles[u] = b;
        res->util[u] = t > 0 ? b / t : 0;
    }
    return rc;
}

static tt_rc finish(tt_sim_result *out, tt_rc rc)
{
    out->rc = rc;
    return rc;
}

tt_rc tt_sim_run(const tt_template *t, const tt_target *tgt, int64_t *slots,
                 const tt_sim_opts *opts, tt_sim_result *out)
{
    if (!out) return TT_EINVAL;
    memset(out, 0, sizeof *out);
    if (!t || !tgt || !slots) {
        snprintf(out->reason, sizeof out->reason, "missing template, target or slots");
        return finish(out, TT_EINVAL);
    }
    if (!t->kernel) {
        snprintf(out->reason, sizeof out->reason,
                 "template \"%s\" has no kernel: only replay and cmd backends apply", t->name);
        return finish(out, TT_EUNSUPPORTED);
    }
    tt_sim_opts defo = {.trace_core = -1};
    if (!opts) opts = &defo;
    /* Refuse what the space refuses, with its reason. */
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_space_new(t, slots, &caps, &sp, &err);
    if (!rc) rc = tt_space_check(sp, slots, &err);
    tt_space_free(sp);
    if (rc) {
        const char *why = err.msg[0] ? err.msg : tt_strerror(rc);
        size_t len = strlen(why);
        if (len >= sizeof out->reason) len = sizeof out->reason - 1;
        memcpy(out->reason, why, len);
        out->reason[len] = '\0';
        return finish(out, rc);
    }
    run R;
    memset(&R, 0, sizeof R);
    R.o = opts;
    R.reason = out->reason;
    R.rcap = sizeof out->reason;
    R.max_events = opts->max_events > 0 ? opts->max_events : TT_SIM_DEFAULT_MAX_EVENTS;
    R.s.t = t;
    R.s.tgt = tgt;
    R.s.slots = slots;
    if ((rc = tt__sim_prepare(&R.s, out->reason, sizeof out->reason))) goto done;
    R.cores = tgt->cube_cores > 0 ? tgt->cube_cores : tgt->vector_cores / 2;
    if (R.cores < 1) {
        snprintf(out->reason, sizeof out->reason, "target %s has no cores", tgt->name);
        rc = TT_ETARGET;
        goto done;
    }
    if (opts->trace_core >= R.cores) {
        snprintf(out->reason, sizeof out->reason, "trace_core %d is not a core of %s (0..%lld)",
                 opts->trace_core, tgt->name, (long long)R.cores - 1);
        rc = TT_EINVAL;
        goto done;
    }
    R.nlog = R.s.nblocks;
    if (t->kernel->persistent) {
        int64_t p = 0;
        if ((rc = tt_expr_eval(t->kernel->persistent, slots, &p))) {
            snprintf(out->reason, sizeof out->reason, "kernel.persistent: %s", tt_strerror(rc));
            goto done;
        }
        if (p < 1) p = 1;
        R.persistent = p;
        R.nlog = p < R.s.nblocks ? p : R.s.nblocks;
    }
    if ((rc = compute_sigs(&R))) goto done;
    int tracing = opts->trace_core >= 0;
    if (tracing) {
        tt__sim_trace_meta(&R.tb, opts->trace_core, R.s.has_side[TT__AG_CUBE],
                           R.s.has_side[TT__AG_VEC]);
    }
    out->blocks = R.s.nblocks;
    rc = run_waves(&R, out);
    if (rc) goto done;
    if (tracing) {
        tt__sbuf_printf(&R.tb, "\n]\n");
        if (R.tb.oom) { rc = TT_ENOMEM; snprintf(out->reason, sizeof out->reason, "out of memory"); goto done; }
        out->trace_json = R.tb.p;
        R.tb.p = NULL;
    }
    out->events = R.events;
    out->extrapolated = R.extrapolated;
    out->time_us = tt_target_us(tgt, out->cycles) + tgt->launch_us +
                   (t->kernel->cores == TT_CORES_MIX ? tgt->mix_launch_extra_us : 0);
done:
    for (size_t i = 0; i < R.nmemo; i++) {
        free(R.memo[i].key);
        tt__swave_free(&R.memo[i].w);
    }
    free(R.memo);
    for (size_t i = 0; i < R.nshapes; i++) {
        free(R.shapes[i].key);
        tt__swave_free(&R.shapes[i].w1);
        tt__swave_free(&R.shapes[i].w2);
    }
    free(R.shapes);
    free(R.lsig);
    free(R.tb.p);
    tt__sim_close(&R.s);
    if (rc) {   /* no partial figures: only the reason survives */
        char why[sizeof out->reason];
        memcpy(why, out->reason, sizeof why);
        free(out->trace_json);
        memset(out, 0, sizeof *out);
        memcpy(out->reason, why, sizeof why);
    }
    return finish(out, rc);
}

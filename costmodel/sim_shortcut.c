/* SPDX-License-Identifier: MIT
 * sim_shortcut.c - the simulator's shortcuts (docs/simulator.md, "Waves"): walk marks and
 * anchor walks of persistent kernels, and the steady-state shortcut of long loops (wave
 * shapes, anchors, least-squares fits, loop marks).  Each simulates a wave a few times
 * shortened and extrapolates, with its own check against what it extrapolates from.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

#define SHAPE_LONG 4            /* a wave this many times the first anchor makes anchors */
#define SHAPE_MIN_WAVES 16      /* ... and so does a new shape in a run with this many waves */
#define SHAPE_FIT 5             /* anchors after the first that a straight-line fit needs */
#define SHAPE_JTOL 1e-2         /* largest residual of that fit, relative to the cycles */
#define SHAPE_RTOL 1e-5         /* linearity check of three anchors, relative to the cycles */
#define WALK_T0 4               /* persistent walks: the shortest anchor walk (grid points) */
#define WALK_STEP 2             /* ... the spacing of the three anchor walks */
#define WALK_MIN 12             /* ... walks longer than this are extrapolated */
#define WALK_RTOL 1e-3          /* ... linearity check of the three anchors */
#define WALK_LOOP_MIN 96        /* walk marks: a point's loop this long is cut (anchors) */
#define LOOP_J0 1               /* loop marks: the window starts after this many warm-ups */
#define LOOP_VTOL 2e-3          /* ... an earlier anchor on the line to the run within this */

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) { int64_t t = a % b; a = b; b = t; }
    return a;
}

/* Spacing of the anchors: t0 / 2 rounded up to the ring-slot period. */
static int64_t shape_step(int64_t t0, int64_t period)
{
    return period * ((t0 / 2 + period - 1) / period);
}

/* Figure f of a wave: 0 cycles, then busy[agent][unit], then stall[k]. */
#define SHAPE_NFIG TT__NFIG
static double *shape_fig(tt__swave *w, size_t f)
{
    if (f == 0) return &w->cycles;
    if (f <= (size_t)TT__AG__COUNT * TT_UNIT__COUNT) return &w->busy[0][0] + (f - 1);
    return &w->stall[f - 1 - (size_t)TT__AG__COUNT * TT_UNIT__COUNT];
}

/* A least-squares line through anchors [k0, k1) of every figure of a wave, for a mix
 * pipeline whose two sides run free and settle into a long period (the bandwidth shares
 * of their transfers differ from iteration to iteration): accepted when the cycles rise and
 * no anchor's cycles are off the line by more than SHAPE_JTOL of them; the line at t[k0]
 * and t[k1 - 1] goes to sh->lo and sh->hi.  Returns 1 when accepted. */
static int shape_fit(tt__sshape *sh, int k0, int k1)
{
    double n = k1 - k0, st = 0, stt = 0;
    for (int a = k0; a < k1; a++) {
        st += (double)sh->t[a];
        stt += (double)sh->t[a] * (double)sh->t[a];
    }
    double den = n * stt - st * st;
    if (!(den > 0)) return 0;
    for (size_t f = 0; f < SHAPE_NFIG; f++) {
        double sy = 0, sty = 0;
        for (int a = k0; a < k1; a++) {
            double y = *shape_fig(&sh->w[a], f);
            sy += y;
            sty += (double)sh->t[a] * y;
        }
        double slope = (n * sty - st * sy) / den, c = (sy - slope * st) / n;
        if (f == 0) {
            if (!(slope > 0)) return 0;
            for (int a = k0; a < k1; a++) {
                double y = sh->w[a].cycles;
                if (fabs(y - (c + slope * (double)sh->t[a])) > SHAPE_JTOL * y) return 0;
            }
        }
        *shape_fig(&sh->lo, f) = c + slope * (double)sh->t[k0];
        *shape_fig(&sh->hi, f) = c + slope * (double)sh->t[k1 - 1];
    }
    sh->fit = 1;
    return 1;
}

/* Least-squares slope of figure f (0: completion time) of the marks of group g over
 * iterations j0..j1 of w; *maxres (when not NULL): the largest |residual|. */
static double marks_slope(const tt__swave *w, size_t g, size_t f, int64_t j0, int64_t j1,
                          double *maxres)
{
    double n = (double)(j1 - j0 + 1), sj = 0, sjj = 0, sy = 0, sjy = 0;
    for (int64_t j = j0; j <= j1; j++) {
        double y = tt__swave_mark(w, g, (size_t)j)[f];
        sj += (double)j;
        sjj += (double)j * (double)j;
        sy += y;
        sjy += (double)j * y;
    }
    double b = (n * sjy - sj * sy) / (n * sjj - sj * sj), c = (sy - b * sj) / n;
    if (maxres) {
        *maxres = 0;
        for (int64_t j = j0; j <= j1; j++) {
            double y = tt__swave_mark(w, g, (size_t)j)[f], r = fabs(y - (c + b * (double)j));
            if (r > *maxres) *maxres = r;
        }
    }
    return b;
}

/* The window of steady iterations of group g of the marked run: after the warm-up t0, before
 * the last 1.25 t0 (the drain: a deep pipeline's last ~stages + 4 iterations complete
 * faster, the producer side having stopped).  Returns its last iteration. */
static int64_t marks_window(const tt__swave *w, size_t g, int64_t t0)
{
    return (int64_t)w->mcount[g] - 1 - (t0 + t0 / 4);
}

static void wave_extrapolate(const tt__swave *a, const tt__swave *b, double f, tt__swave *out);

/* Loop marks: the wave of shape sh at shortest trip tmin from the marked run sh->lw (trip
 * sh->ltb): every group's loop runs tmin - ltb iterations more (or fewer), each at the
 * group's steady rate (the least-squares slope of its iterations' completions over the
 * window lj0..), so it ends that many iterations' time after its end in the run; the
 * reported group's busy and stall figures likewise from the figures attributed to its
 * iterations.  No trace. */
static void marks_line(const tt__sshape *sh, int64_t tmin, size_t rep, tt__swave *out)
{
    const tt__swave *w = &sh->lw;
    double dt = (double)(tmin - sh->ltb);
    memset(out, 0, sizeof *out);
    for (size_t g = 0; g < w->ngroups; g++) {
        int64_t j1 = marks_window(w, g, sh->lt0);
        double end = w->gend[g] + dt * marks_slope(w, g, 0, sh->lj0, j1, NULL);
        if (end > out->cycles) out->cycles = end;
        if (g != rep) continue;
        for (size_t f = 1; f < TT__NFIG; f++) {
            double v = *shape_fig((tt__swave *)w, f) + dt * marks_slope(w, g, f, sh->lj0, j1, NULL);
            *shape_fig(out, f) = v > 0 ? v : 0;
        }
    }
}

/* The wave of a shape served by loop marks at shortest trip tmin >= sh->lmin: from ltb on
 * the marks' line; below, the straight line between anchor sh->w[sh->la] and the marked run
 * (the pipeline may still be bending there: both ends are simulated waves). */
static void loop_marks_wave(const tt__sshape *sh, int64_t tmin, size_t rep, tt__swave *out)
{
    if (tmin >= sh->ltb) {
        marks_line(sh, tmin, rep, out);
        return;
    }
    const tt__swave *a = &sh->w[sh->la];
    wave_extrapolate(a, &sh->lw, (double)(tmin - sh->ltb) / (double)(sh->ltb - sh->t[sh->la]), out);
}

/* Loop marks, for a shape whose first three anchors (t[0..2]) are not collinear (a mix
 * pipeline whose two sides run free and settle into a long period, or none), in a kernel
 * whose longest trip of the loop goes well beyond the run: one more run, at tb = 4.25
 * warm-ups, records when each iteration of the loop completes in every group, and the
 * figures of each iteration.  Accepted (sh->lm = 1, sh->ok = 1: loop_marks_wave serves the
 * shape from sh->lmin on) when every group's completions in the window (after LOOP_J0
 * warm-ups, before the drain) lie on a line within SHAPE_JTOL of the run's cycles, and that
 * line extended down to t[2] meets the anchor there within SHAPE_JTOL (the rule of the
 * least-squares fit of anchors); the line from t[2] (or from t[1], t[0] when they lie on it
 * within LOOP_VTOL) to the run serves the waves below tb.  Else sh->lm = -1 and more anchors
 * follow.  Returns TT_OK or the run's error. */
static tt_rc loop_marks(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, int loop, int64_t tmin,
                        int64_t t0, int64_t period, tt__sshape *sh)
{
    tt__sim *s = &R->s;
    int64_t j0 = LOOP_J0 * t0;   /* the window: from j0, two warm-ups long, then the drain */
    int64_t tb = period * ((j0 + 2 * t0 + (t0 + t0 / 4) + period - 1) / period);
    sh->lm = -1;
    /* worth it when the kernel's longest trip of the loop (its last block's: causal
     * attention) is well beyond the run */
    int lid;
    int64_t tmax = 0;
    tt__sim_count(s, s->nblocks - 1, &lid, &tmax);
    if (sh->n < 3 || tb <= sh->t[2] || lid != loop || tb + t0 > tmax) return TT_OK;
    s->trunc_loop = loop;
    s->trunc_delta = tmin - tb;
    s->mark_mode = TT__MK_LOOP;
    s->mark_loop = loop;
    R->mark_group = TT__MARK_ALL;
    tt_rc rc = tt__sim_groups(R, wg, ng, rep, 0, &sh->lw);
    R->mark_group = (size_t)-1;
    s->mark_mode = TT__MK_NONE;
    s->trunc_loop = -1;
    if (rc || !sh->lw.mark) return rc;
    sh->ltb = tb;
    sh->lt0 = t0;
    sh->lj0 = j0;
    for (size_t g = 0; g < sh->lw.ngroups; g++) {
        double res = 0;
        int64_t j1 = marks_window(&sh->lw, g, t0);
        if (j1 - j0 < t0 || !(marks_slope(&sh->lw, g, 0, j0, j1, &res) > 0) ||
            res > SHAPE_JTOL * sh->lw.gend[g])
            return TT_OK;
    }
    /* the marks' line must meet the last anchor (within SHAPE_JTOL, as a fit of anchors
     * must); the line from that anchor to the run may start at an earlier anchor that lies
     * on it within LOOP_VTOL */
    sh->la = 2;
    tt__swave p;
    marks_line(sh, sh->t[2], rep, &p);
    if (fabs(p.cycles - sh->w[2].cycles) > SHAPE_JTOL * sh->w[2].cycles) return TT_OK;
    sh->lmin = sh->t[2];
    for (int a = 1; a >= 0; a--) {
        loop_marks_wave(sh, sh->t[a], rep, &p);
        if (fabs(p.cycles - sh->w[a].cycles) > LOOP_VTOL * sh->w[a].cycles) break;
        sh->lmin = sh->t[a];
        sh->la = a;
    }
    sh->lm = 1;
    sh->ok = 1;
    return TT_OK;
}

/* Simulate the anchors of a wave shape: the groups of wg with the top-level loop `loop`
 * shortened (or lengthened) by a common shift so that the shortest group (trip tmin) runs
 * t0, t0 + d, t0 + 2d, ... iterations (d = t0 / 2 rounded up to the period), until three
 * consecutive results are collinear (the steady state has set in by the first of them):
 * sets sh->ok and sh->k then.  Continues from the anchors already simulated; stops at trip
 * tcap (sh->capped: may continue later) and gives up (sh->ok = 0: simulate in full) after
 * SHAPE_MAX_ANCHORS. */
static tt_rc shape_anchors(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, int loop,
                           int64_t tmin, int64_t t0, int64_t period, int64_t tcap, tt__sshape *sh)
{
    tt__sim *s = &R->s;
    int64_t d = shape_step(t0, period);
    for (int a = sh->n; a < SHAPE_MAX_ANCHORS && !sh->ok; a++) {
        if (t0 + d * a > tcap) {   /* more would cost more than the waves they serve */
            sh->capped = 1;
            return TT_OK;
        }
        sh->capped = 0;
        sh->t[a] = t0 + d * a;
        s->trunc_loop = loop;
        s->trunc_delta = tmin - sh->t[a];   /* may be negative: the loop is lengthened */
        tt_rc rc = tt__sim_groups(R, wg, ng, rep, 0, &sh->w[a]);
        s->trunc_loop = -1;
        if (rc) return rc;   /* the run fails; its shapes are freed with it */
        sh->n = a + 1;
        if (a < 2) continue;
        const tt__swave *w = &sh->w[a - 2];
        double d1 = w[1].cycles - w[0].cycles, d2 = w[2].cycles - w[1].cycles;
        if (fabs(d2 - d1) <= SHAPE_RTOL * w[2].cycles && d1 >= 0) {
            sh->ok = 1;
            sh->k = a - 2;
            return TT_OK;
        }
        if (a == 2 && !sh->lm && !R->persistent) {   /* not collinear: try the marks */
            tt_rc mrc = loop_marks(R, wg, ng, rep, loop, tmin, t0, period, sh);
            if (mrc || sh->lm > 0) return mrc;
        }
        /* the line through the latest SHAPE_FIT or more anchors: the first ones may still
         * be in the fill regime (a deep cross-core ring settles late) */
        for (int k0 = 1; k0 + SHAPE_FIT <= a + 1; k0++)
            if (shape_fit(sh, k0, a + 1)) {
                sh->ok = 1;
                sh->k = k0;
                return TT_OK;
            }
    }
    return TT_OK;
}

/* cycles, busy and stalls of wave b extrapolated by f times (b - a), clamped at 0 */
static void wave_extrapolate(const tt__swave *a, const tt__swave *b, double f, tt__swave *out)
{
    memset(out, 0, sizeof *out);
    out->cycles = b->cycles + f * (b->cycles - a->cycles);
    for (int g = 0; g < TT__AG__COUNT; g++)
        for (int u = 0; u < TT_UNIT__COUNT; u++) {
            out->busy[g][u] = b->busy[g][u] + f * (b->busy[g][u] - a->busy[g][u]);
            if (out->busy[g][u] < 0) out->busy[g][u] = 0;
        }
    for (int k = 0; k < TT_STALL__COUNT; k++) {
        out->stall[k] = b->stall[k] + f * (b->stall[k] - a->stall[k]);
        if (out->stall[k] < 0) out->stall[k] = 0;
    }
}

static tt_rc sim_wave_loops(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, tt__swave *out);

/* The walk shortcut with marks, for kernels whose grid points all run the same program (no
 * trip count reads the grid): one simulation with the shortest walk cut to m points (and
 * the others by as many) records the wave's figures whenever a grid point of that walk has
 * completed.  Once the walk is in its steady state, P points further on costs the same
 * every time (P = 2 covers pipelines that alternate, 3 a 3-stage ring whose K loop is not a
 * multiple of 3), so when points m-2-2P, m-2-P and m-2 of the marked walk (the reported
 * group's, whose figures are extrapolated; it walks m or m + 1 points) are collinear within
 * WALK_RTOL of the period (point m-1 is left out: no point of the shortest walk follows it),
 * the wave of the full walks (shortest nmin) is the cut wave plus (nmin - m) / P such
 * periods, every figure alike.  Tries the cuts of walk_mark_m[] in turn: 7 (points 1, 3, 5:
 * past the fill of point 0), 9 (3 points on, past a late fill; P = 3 fits), 16.  Returns 1
 * (out set), 0 (not steady: use the anchor walks) or -1 (error, rc set). */
static const size_t walk_mark_m[] = {7, 9, 16};

/* One marked walk: every walk cut so that the shortest runs m points, group mg marked.
 * Returns 1 (steady: out is the full walks' wave), 0 (not steady) or -1 (rc set). */
static int walk_marks_cut(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, size_t mg,
                          int64_t nmin, int64_t m, tt__swave *out, tt_rc *rc)
{
    tt__swave w;
    R->walk_cut = nmin - m;
    R->mark_group = mg;
    R->s.mark_mode = TT__MK_POINTS;
    *rc = tt__sim_groups(R, wg, ng, rep, 0, &w);
    R->walk_cut = 0;
    R->mark_group = (size_t)-1;
    R->s.mark_mode = TT__MK_NONE;
    if (*rc) return -1;
    int ok = 0;
    /* the marked walk runs m or m + 1 points; periods of 2 points, then 3, 4 and 6 (a ring of
     * 3 L1 stages over a K loop of 22 slices comes back to the same slot every 3 points) */
    static const int64_t periods[] = {2, 3, 4, 6};
    for (size_t k = 0; !ok && w.mark && w.mcount[mg] >= m && k < sizeof periods / sizeof *periods;
         k++) {
        int64_t P = periods[k];
        if (m - 2 - 2 * P < 0) break;
        const double *a = tt__swave_mark(&w, mg, (size_t)(m - 2 - 2 * P));
        const double *b = tt__swave_mark(&w, mg, (size_t)(m - 2 - P));
        const double *c = tt__swave_mark(&w, mg, (size_t)m - 2);
        double d1 = b[0] - a[0], d2 = c[0] - b[0];
        if (!(d1 > 0 && fabs(d2 - d1) <= WALK_RTOL * d2)) continue;
        double f = (double)(nmin - m) / (double)P;
        memset(out, 0, sizeof *out);
        for (size_t j = 0; j < TT__NFIG; j++) {
            double v = *shape_fig(&w, j) + f * (c[j] - b[j]);
            *shape_fig(out, j) = v > 0 ? v : 0;
        }
        ok = 1;
    }
    tt__swave_free(&w);
    return ok;
}

/* Walk marks with the points' long loop shortened: when the top-level loop of a grid point
 * runs T >= WALK_LOOP_MIN iterations, the marked walk is simulated with that loop cut to
 * t0, t0 + d and t0 + 2d iterations (every point alike, the steady-state anchors of a wave)
 * and the full walks' wave, affine in the loop's trip once its pipeline is steady, is
 * extrapolated to T when the three are collinear within SHAPE_RTOL.  Returns 1 (out set), 0
 * (not applicable, not steady or not collinear) or -1 (rc set). */
static int walk_marks_loop(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, size_t mg,
                           int64_t nmin, int64_t m, tt__swave *out, tt_rc *rc)
{
    tt__sim *s = &R->s;
    int loop;
    int64_t T = 0;
    tt__sim_count(s, wg[0].first, &loop, &T);
    if (loop < 0 || T < WALK_LOOP_MIN) return 0;
    int64_t period = 1;
    for (size_t b = 0; b < s->t->nbuffers && period <= 64; b++)
        period = period / gcd64(period, s->copies[b]) * s->copies[b];
    int64_t warm = tt__sim_warmup(s, loop);
    int64_t t0 = period * ((warm + period - 1) / period), d = shape_step(t0, period);
    if (period > 64 || 3 * (t0 + d) > T) return 0;   /* three anchors must cost less than T */
    tt__swave a[3];
    for (int k = 0; k < 3; k++) {
        s->trunc_loop = loop;
        s->trunc_delta = T - (t0 + k * d);
        int r = walk_marks_cut(R, wg, ng, rep, mg, nmin, m, &a[k], rc);
        s->trunc_loop = -1;
        if (r <= 0) return r;
    }
    double d1 = a[1].cycles - a[0].cycles, d2 = a[2].cycles - a[1].cycles;
    if (!(d1 > 0) || fabs(d2 - d1) > SHAPE_RTOL * a[2].cycles) return 0;
    wave_extrapolate(&a[1], &a[2], (double)(T - t0 - 2 * d) / (double)d, out);
    return 1;
}

static int walk_marks(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, int64_t nmin,
                      tt__swave *out, tt_rc *rc)
{
    size_t imin = 0;
    for (size_t i = 0; i < ng; i++)
        if ((R->s.nblocks - wg[i].first + R->persistent - 1) / R->persistent == nmin) imin = i;
    size_t mg = rep < ng ? rep : imin;   /* its busy and stall figures are reported */
    for (size_t k = 0; k < sizeof walk_mark_m / sizeof *walk_mark_m; k++) {
        int64_t m = (int64_t)walk_mark_m[k];
        if (2 * m > nmin) break;
        int r = walk_marks_loop(R, wg, ng, rep, mg, nmin, m, out, rc);
        if (r == 0) r = walk_marks_cut(R, wg, ng, rep, mg, nmin, m, out, rc);
        if (r < 0) return -1;
        if (r > 0) {
            R->extrapolated = 1;
            return 1;
        }
    }
    return 0;
}

/* The walk shortcut of a persistent kernel: a block that walks n grid points costs, once
 * its pipeline runs across grid points, the same for every further point, so a wave whose
 * shortest walk is longer than WALK_MIN is simulated with every walk cut to WALK_T0,
 * WALK_T0 + WALK_STEP, WALK_T0 + 2 WALK_STEP points and extrapolated when the three are
 * collinear.  Returns 1 (out set), 0 (simulate in full) or -1 (error, rc set). */
static int walk_shortcut(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, tt__swave *out,
                         tt_rc *rc)
{
    int64_t nmin = INT64_MAX;
    for (size_t i = 0; i < ng; i++) {
        int64_t n = (R->s.nblocks - wg[i].first + R->persistent - 1) / R->persistent;
        if (n < nmin) nmin = n;
    }
    if (nmin <= WALK_MIN) return 0;
    if (!R->s.grid_dep) {
        int done = walk_marks(R, wg, ng, rep, nmin, out, rc);
        if (done) return done;
    }
    tt__swave a[3];
    for (int k = 0; k < 3; k++) {
        R->walk_cut = nmin - (WALK_T0 + k * WALK_STEP);
        *rc = sim_wave_loops(R, wg, ng, rep, &a[k]);   /* long loops: their own shortcut */
        R->walk_cut = 0;
        if (*rc) return -1;
    }
    double d1 = a[1].cycles - a[0].cycles, d2 = a[2].cycles - a[1].cycles;
    if (!(d1 >= 0) || fabs(d2 - d1) > WALK_RTOL * a[2].cycles) return 0;
    wave_extrapolate(&a[1], &a[2], (double)(nmin - WALK_T0 - 2 * WALK_STEP) / WALK_STEP, out);
    R->extrapolated = 1;
    return 1;
}

/* Simulate a wave, with the steady-state shortcut when it is long: every figure of a wave
 * is affine in the trip count of its longest top-level loop once that loop's pipeline is in
 * its steady state, so a wave shape (the groups' trips relative to the shortest one, and
 * their core counts) is simulated at three trip counts (anchors) and every wave of that
 * shape whose shortest trip is at least the first anchor is interpolated from them. */
tt_rc tt__sim_wave_short(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, int traced,
                      tt__swave *out)
{
    tt__sim *s = &R->s;
    int64_t limit = R->o->shortcut_ops ? R->o->shortcut_ops : TT_SIM_SHORTCUT_OPS;
    s->trunc_loop = -1;
    if (limit <= 0 || traced) return tt__sim_groups(R, wg, ng, rep, traced, out);
    if (R->persistent) {
        tt_rc wrc = TT_OK;
        int done = walk_shortcut(R, wg, ng, rep, out, &wrc);
        if (done) return done < 0 ? wrc : TT_OK;
    }
    return sim_wave_loops(R, wg, ng, rep, out);
}

/* The shortest trip a settled shape serves without a simulation: from the loop-marks run's
 * line, or from the first of its collinear (or fitted) anchors. */
static int64_t shape_first(const tt__sshape *sh)
{
    return sh->lm > 0 ? sh->lmin : sh->t[sh->k];
}

/* A wave of a settled shape whose tmin lies strictly between two simulated anchors below
 * the first trip the shape serves (its fill regime: the first anchors of a deep ring, or
 * the anchors below a loop-marks run): the straight line between those two anchors, d
 * iterations apart, instead of a simulation in full.  Returns 1 when it served the wave. */
static int fill_wave(const tt__sshape *sh, int64_t tmin, tt__swave *out)
{
    int64_t first = shape_first(sh);
    for (int a = 0; a + 1 < sh->n && sh->t[a + 1] <= first; a++)
        if (sh->t[a] < tmin && tmin < sh->t[a + 1]) {
            double f = (double)(tmin - sh->t[a + 1]) / (double)(sh->t[a + 1] - sh->t[a]);
            wave_extrapolate(&sh->w[a], &sh->w[a + 1], f, out);
            return 1;
        }
    return 0;
}

/* sim_wave without the walk shortcut (the steady-state shortcut of long loops only). */
static tt_rc sim_wave_loops(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, tt__swave *out)
{
    tt__sim *s = &R->s;
    int64_t limit = R->o->shortcut_ops ? R->o->shortcut_ops : TT_SIM_SHORTCUT_OPS;
    int traced = 0;
    s->trunc_loop = -1;
    /* the longest top-level loop, if every group has it */
    double total = 0;
    int loop = -1, same = 1;
    int64_t tmin = 0;
    for (size_t i = 0; i < ng; i++) {
        int lid;
        int64_t tr, npts = 1;
        if (R->persistent) npts = (s->nblocks - wg[i].first + R->persistent - 1) / R->persistent - R->walk_cut;
        if (npts < 1) npts = 1;
        total += tt__sim_count(s, wg[i].first, &lid, &tr) * (double)npts;
        if (i == 0) { loop = lid; tmin = tr; }
        else if (lid != loop) same = 0;
        if (tr < tmin) tmin = tr;
    }
    /* period of the ring-slot pattern: lcm of the ring sizes */
    int64_t period = 1;
    for (size_t b = 0; b < s->t->nbuffers && period <= 64; b++)
        period = period / gcd64(period, s->copies[b]) * s->copies[b];
    for (size_t i = 0; i < s->nops && period <= 64; i++)   /* batched hand-offs (every) */
        if (s->ops[i].every > 1) period = period / gcd64(period, s->ops[i].every) * s->ops[i].every;
    int64_t warm = loop >= 0 ? tt__sim_warmup(s, loop) : 4;
    int64_t t0 = period * ((warm + period - 1) / period);
    if (!(same && loop >= 0 && period <= 64 && tmin >= t0)) {
        return tt__sim_groups(R, wg, ng, rep, traced, out);
    }
    /* The shape's key: the groups' block signatures with the loop shortened so that the
     * shortest group runs t0 iterations (waves that differ only by a common shift of that
     * trip share it, e.g. the waves of a causal attention), their counts, the reported
     * group. */
    s->trunc_loop = loop;
    s->trunc_delta = tmin - t0;
    size_t width = tt__sim_block_sig(s, wg[0].first, NULL, 0);
    size_t nk = ng * (width + 2) + 2;
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
    key[kk++] = R->walk_cut;   /* an anchor walk of the walk shortcut is its own shape */
    s->trunc_loop = -1;
    uint64_t h = tt__sim_fnv(key, kk);
    tt__sshape *sh = NULL;
    for (size_t i = 0; i < R->nshapes && !sh; i++)
        if (R->shapes[i].hash == h && R->shapes[i].nkey == kk &&
            memcmp(R->shapes[i].key, key, kk * sizeof *key) == 0)
            sh = &R->shapes[i];
    if (!sh) {   /* first wave of this shape: remember it */
        if (R->nshapes == R->capshapes) {
            size_t nc = R->capshapes ? R->capshapes * 2 : 8;
            tt__sshape *ns = realloc(R->shapes, nc * sizeof *ns);
            if (!ns) { free(key); return TT_ENOMEM; }
            R->shapes = ns;
            R->capshapes = nc;
        }
        sh = &R->shapes[R->nshapes++];
        memset(sh, 0, sizeof *sh);
        sh->key = key;
        sh->nkey = kk;
        sh->hash = h;
        key = NULL;
    }
    free(key);
    /* Anchors pay off when the shape recurs (a causal kernel's waves: when the blocks'
     * trip counts differ and there are many waves, a shape is likely to recur, so its
     * first three anchors are made at once), or when this wave alone is long: then only
     * anchors up to half its trip count are worth simulating. */
    sh->seen++;
    int64_t nwaves = (R->nlog + R->cores - 1) / R->cores;
    int64_t tcap = 0;
    if (sh->seen > 1) tcap = INT64_MAX;
    else if (R->lsig && nwaves >= SHAPE_MIN_WAVES) tcap = t0 + 2 * shape_step(t0, period);
    if (total > (double)limit && tmin >= SHAPE_LONG * t0 && tmin / 2 > tcap) tcap = tmin / 2;
    if (!sh->ok && (sh->n == 0 || sh->capped) && tcap > 0) {
        tt_rc rc = shape_anchors(R, wg, ng, rep, loop, tmin, t0, period, tcap, sh);
        if (rc) return rc;
    }
    if (sh->lm > 0 && tmin >= sh->lmin) {
        loop_marks_wave(sh, tmin, rep, out);
        R->extrapolated = 1;
        return TT_OK;
    }
    if (sh->ok && fill_wave(sh, tmin, out)) {
        R->extrapolated = 1;
        return TT_OK;
    }
    if (!sh->ok || tmin < shape_first(sh)) {
        for (int a = 0; a < sh->n; a++)   /* an anchor is this very wave */
            if (sh->t[a] == tmin) {
                memset(out, 0, sizeof *out);
                out->cycles = sh->w[a].cycles;
                memcpy(out->busy, sh->w[a].busy, sizeof out->busy);
                memcpy(out->stall, sh->w[a].stall, sizeof out->stall);
                return TT_OK;
            }
        return tt__sim_groups(R, wg, ng, rep, traced, out);
    }
    /* interpolate between the two nearest of the collinear anchors (extrapolate beyond) */
    int i0 = tmin >= sh->t[sh->k + 1] ? sh->k + 1 : sh->k;
    const tt__swave *wa = &sh->w[i0], *wb = &sh->w[i0 + 1];
    int64_t ta = sh->t[i0], tb = sh->t[i0 + 1];
    if (sh->fit) { wa = &sh->lo; wb = &sh->hi; ta = sh->t[sh->k]; tb = sh->t[sh->n - 1]; }
    double f = (double)(tmin - tb) / (double)(tb - ta);
    wave_extrapolate(wa, wb, f, out);
    R->extrapolated = 1;
    return TT_OK;
}

/* SPDX-License-Identifier: MIT
 * model.c - the analytic cost model's evaluation: predict one config of a prepared model
 * (per-unit costs, overlap by stages, waves, chip bandwidth, overheads).
 *
 * The equations and their sources are in docs/cost-model.md; this file follows its section
 * numbers.  The preparation (tt_model_new) is in model_build.c, GM traffic and the L2
 * estimate in model_traffic.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cube_ring.h"
#include "model_int.h"
#include "roofline.h"

static const char *const tt_bound_names[TT_BOUND__COUNT] = {
    "MTE2", "MTE1", "M", "V", "FIX", "MTE3", "S", "HBM", "L2", "latency", "launch", "sync"};

const char *tt_bound_name(tt_bound b)
{
    return ((int)b >= 0 && b < TT_BOUND__COUNT) ? tt_bound_names[b] : "?";
}

/* ---- evaluation: geometry and per-op costs (section 1) --------------------------------- */

static tt_rc fail(tt_model_result *out, tt_rc rc, const char *path, const char *what)
{
    out->rc = rc;
    snprintf(out->reason, sizeof out->reason, "%s: %s", path, what);
    return rc;
}

static const char *rc_word(tt_rc rc)
{
    return rc == TT_EOVERFLOW ? "overflow" : rc == TT_EDIVZERO ? "division by zero" : "domain error";
}

static tt_rc eval_geometry(const tt_model *m, const int64_t *slots, tt__mscratch *sc,
                           int have_buffers, tt_model_result *out)
{
    const tt_template *t = m->t;
    for (size_t b = 0; !have_buffers && b < t->nbuffers; b++) {
        const tt__mbuf *mb = &m->bufs[b];
        int64_t e = 1, v;
        for (int d = 0; d < mb->rank; d++) {
            tt_rc rc = tt__mx_eval(&mb->dims[d], slots, &v);
            if (rc) return fail(out, rc, t->buffers[b].name, rc_word(rc));
            sc->bdims[b][d] = v;
            if (v > 0 && e > INT64_MAX / v) return fail(out, TT_EOVERFLOW, t->buffers[b].name, "overflow");
            e *= v;
        }
        sc->belems[b] = e;
        sc->besize[b] = tt_dtype_size(tt_dtref_eval(mb->dtype, slots));
        tt_rc rc = tt__mx_eval(&mb->copies, slots, &sc->bcopies[b]);
        if (rc) return fail(out, rc, t->buffers[b].name, rc_word(rc));
    }
    for (size_t i = 0; !m->tconst && i < t->ntensors; i++) {
        double e = tt_dtype_size(tt_dtref_eval(t->tensors[i].dtype, slots));
        for (int d = 0; d < t->tensors[i].rank; d++) {
            int64_t v;
            tt_rc rc = tt__mx_eval(&m->tshape[i][d], slots, &v);
            if (rc) return fail(out, rc, t->tensors[i].name, rc_word(rc));
            e *= (double)v;
        }
        sc->tbytes[i] = e;
    }
    sc->blocks = 1;
    for (int g = 0; g < m->ngrid; g++) {
        tt_rc rc = tt__mx_eval(&m->grid[g], slots, &sc->gext[g]);
        if (rc) return fail(out, rc, "kernel.grid", rc_word(rc));
        if (sc->gext[g] < 1) sc->gext[g] = 1;
        if (sc->blocks > INT64_MAX / sc->gext[g]) return fail(out, TT_EOVERFLOW, "kernel.grid", "overflow");
        sc->blocks *= sc->gext[g];
    }
    return TT_OK;
}

static inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* Pass A: trips, executions per block, bytes of copies, cycles of compute ops. */
static tt_rc eval_ops(const tt_model *m, const int64_t *slots, tt__mscratch *sc,
                      tt_model_result *out)
{
    const tt_target *tg = m->tgt;
    int end_st[TT_TMPL_MAX_DEPTH + 2];
    double mult_st[TT_TMPL_MAX_DEPTH + 2];
    int64_t trip_at[TT_TMPL_MAX_DEPTH + 2];
    int sp = 0;
    double mult = 1;
    sc->flops = 0;
    for (int i = 0; i < m->nops; i++) {
        const tt__mop *o = &m->ops[i];
        while (sp > 0 && i >= end_st[sp - 1]) mult = mult_st[--sp];
        sc->execs[i] = mult;
        int64_t v;
        tt_rc rc;
        switch (o->kind) {
        case TT_OP_FOR:
            if ((rc = tt__mx_eval(&o->trip, slots, &v))) return fail(out, rc, o->src->path, rc_word(rc));
            sc->trip[i] = v > 0 ? v : 0;
            if ((rc = tt__mx_eval(&o->stages, slots, &v))) return fail(out, rc, o->src->path, rc_word(rc));
            sc->stages[i] = v > 0 ? v : 1;
            if (sp <= TT_TMPL_MAX_DEPTH) {
                trip_at[o->depth] = sc->trip[i];
                end_st[sp] = o->end;
                mult_st[sp++] = mult;
                mult *= (double)sc->trip[i];
            }
            break;
        case TT_OP_COPY: {
            int es = o->tensor < 0 ? sc->besize[o->buf]
                     : m->tesize[o->tensor] ? m->tesize[o->tensor]
                                            : tt_dtype_size(tt_dtref_eval(m->t->tensors[o->tensor].dtype, slots));
            sc->bytes[i] = (double)sc->belems[o->buf] * es;
            if ((rc = tt__model_copy_variant(m, i, slots, sc))) return fail(out, rc, o->src->path, rc_word(rc));
            if (o->tensor >= 0) {
                double d = 1;
                sc->shared[i] = 0;
                for (int a = 0; a < o->ngrid_along; a++) {
                    int64_t ext = sc->gext[o->along_grid[a]], n = ext;
                    /* an index map: the blocks whose index maps to one value share a tile */
                    if (o->along_map[a] &&
                        (rc = tt_tmpl_along_count(m->t, o->along_map[a], slots, ext, &n)))
                        return fail(out, rc, o->src->path, rc_word(rc));
                    if (n < ext) sc->shared[i] |= 1u << o->along_grid[a];
                    d *= (double)n;
                }
                for (int a = 0; a < o->nloop_along; a++) {
                    int dp = o->along_loop_depth[a];
                    if (dp >= 0 && dp < o->depth) d *= (double)trip_at[dp];
                }
                sc->distinct[i] = d;
            }
            break;
        }
        case TT_OP_MMA: {
            tt_dtype dt = tt_dtref_eval(m->bufs[o->a].dtype, slots);
            double c = ((int)dt >= 0 && dt < TT_DT__COUNT) ? tg->cube_c[dt] : 0;
            if (!(c > 0)) return fail(out, TT_EINFEASIBLE, o->src->path, "dtype not supported by the cube");
            /* A is [m, k], B is [k, n] (leading dims of a higher rank are batch dims) */
            int ra = m->bufs[o->a].rank, rb = m->bufs[o->b].rank;
            int64_t mm = ra >= 2 ? sc->bdims[o->a][ra - 2] : 1, kk = ra >= 1 ? sc->bdims[o->a][ra - 1] : 1;
            int64_t nn = rb >= 1 ? sc->bdims[o->b][rb - 1] : 1;
            double batch = 1;
            for (int d = 0; d + 2 < ra; d++) batch *= (double)sc->bdims[o->a][d];
            int64_t k0 = 32 / (sc->besize[o->a] > 0 ? sc->besize[o->a] : 2);
            if (k0 < 1) k0 = 1;
            sc->bytes[i] = batch * (tg->cube_fixed_cycles + c * (double)cdiv(mm, 16) *
                                                                (double)cdiv(kk, k0) * (double)cdiv(nn, 16));
            sc->flops += 2.0 * batch * (double)mm * (double)kk * (double)nn * mult;
            break;
        }
        case TT_OP_VEC: {
            int64_t n = sc->belems[o->out];
            if (o->has_elems && (rc = tt__mx_eval(&o->elems, slots, &n)))
                return fail(out, rc, o->src->path, rc_word(rc));
            int es = sc->besize[o->out];
            sc->bytes[i] = tt__vec_cycles(tg, o->cls, (double)(n > 0 ? n : 0), es, (double)sc->belems[o->out]);
            break;
        }
        case TT_OP_SYNC:
            if (o->src->u.sync.kind != TT_SYNC_CROSS) {
                sc->bytes[i] = tg->flag_cycles;
                break;
            }
            /* a hand-off batched over `every` iterations (cross_interval) costs its flag once
             * per batch: on the chain of one iteration, 1 / every of it */
            if ((rc = tt__mx_eval(&o->every, slots, &v))) return fail(out, rc, o->src->path, rc_word(rc));
            sc->trip[i] = v > 1 ? v : 1;
            sc->bytes[i] = tg->cross_sync_cycles / (double)sc->trip[i];
            break;
        }
    }
    return TT_OK;
}

/* ---- evaluation: overlap (section 2) --------------------------------------------------- */

typedef struct lt {
    double T;                                  /* standalone time (with fill/drain) */
    double S;                                  /* steady time when repeated back to back */
    double busy[2][TT_UNIT__COUNT];            /* [side][unit] occupancy, all iterations */
    double busy_pipe[2][TT_UNIT__COUNT];       /* the part inside pipelined loops */
    double sync;                               /* cross-core hand-off time on the chain */
    double gmc;                                /* cycles of the core's share of the chip
                                                  memory its GM transfers take (section 4) */
    double fill;                               /* fill/drain of the loops of this level:
                                                  T minus the time when repeated */
    int lim;                                   /* what limits it (a tt_bound) */
} lt;

/* The busiest unit of an occupancy table. */
static int busiest(const tt_model *m, const double busy[2][TT_UNIT__COUNT], double *val)
{
    /* over the occupancies ops add to, in [side][unit] order: the others are 0 and win only
     * when all are 0, which the caller ignores (it needs one above its period, >= 0) */
    int bu = TT_UNIT_M;
    double bm = -1;
    const double *b = &busy[0][0];
    for (int k = 0; k < m->nact; k++) {
        int a = m->act[k], u = a % TT_UNIT__COUNT;
        if (u != TT_UNIT_S && b[a] > bm) { bm = b[a]; bu = u; }
    }
    *val = bm;
    return bu;
}

/* Round trip of one iteration of a loop body [i0, i1) whose cube and vector parts hand data
 * to each other with cross-core syncs (docs/cost-model.md, section 2): the two sides run on
 * different cores, each in its own program order, and a sync from side f to side t makes t
 * wait until f's clock plus the hand-off.  For each side x, starting at x's first op (what
 * x waits for from the other side is ready: it was produced an iteration earlier), the chain
 * ends at x's last op; the round trip is the longer of the two.  A nested loop that runs on
 * both sides synchronises the two clocks. */
static double cross_round_trip(const tt_model *m, const tt__mscratch *sc, int i0, int i1)
{
    double rt = 0;
    for (int x = 0; x < 2; x++) {
        double clk[2] = {0, 0};
        int started = 0;
        for (int c = i0; c < i1; c = m->ops[c].end) {
            const tt__mop *co = &m->ops[c];
            double d = sc->dur[c];
            if (co->kind == TT_OP_SYNC && co->src->u.sync.kind == TT_SYNC_CROSS) {
                int f = co->src->u.sync.from == TT_SIDE_VECTOR, t = co->src->u.sync.to == TT_SIDE_VECTOR;
                if (started && clk[f] + d > clk[t]) clk[t] = clk[f] + d;
            } else if (co->kind == TT_OP_FOR && co->mixed) {
                double mx = (clk[0] > clk[1] ? clk[0] : clk[1]) + d;
                clk[0] = clk[1] = mx;
                started = 1;
            } else {
                int sd = co->side == TT_SIDE_VECTOR;
                if (!started && sd != x) continue;
                started = 1;
                clk[sd] += d;
            }
        }
        if (started && clk[x] > rt) rt = clk[x];
    }
    return rt;
}

/* Chain time and occupancy of one execution of the children [i0, i1). */
static void seq_time(const tt_model *m, tt__mscratch *sc, int i0, int i1, lt *r, double *maxS)
{
    const tt_target *tg = m->tgt;
    const double *us = m->calib.unit_scale;
    memset(r, 0, sizeof *r);
    *maxS = 0;
    double off = 0, longest = -1;
    int prev = -1;
    r->lim = TT_BOUND_LATENCY;
    for (int i = i0; i < i1; i = m->ops[i].end) {
        const tt__mop *o = &m->ops[i];
        double d = 0;
        sc->off[i] = off;
        if (o->kind == TT_OP_FOR) {
            lt in;
            double inS;
            /* the bandwidth caps of this top-level loop's transfers (section 4) */
            int tk = o->depth == 0 ? sc->tl_idx++ : -1;
            if (tk >= 0) {
                if (sc->pass == 2 && tk < sc->ntl && sc->tl[tk].changed) {
                    memcpy(sc->share, sc->tl[tk].share, sizeof sc->share);
                } else {
                    for (int sd = 0; sd < 2; sd++)
                        for (int u = 0; u < TT_UNIT__COUNT; u++)
                            sc->share[sd][u] = sc->base_bpc[sd][u] / sc->agents[sd];
                }
            }
            seq_time(m, sc, i + 1, o->end, &in, &inS);
            int lim = in.lim;
            double n = (double)sc->trip[i], s = (double)sc->stages[i];
            double C = in.T;
            /* a body whose cube and vector parts hand off to each other: the two sides
             * overlap across iterations except along the round trip (section 2) */
            double R = o->xsync ? cross_round_trip(m, sc, i + 1, o->end) : C;
            if (R > C) R = C;
            /* a top-level loop of one iteration with stages > 1 still gets its period:
             * a persistent walk repeats it once per grid point and its ring buffers
             * pipeline across the points (section 3), so its steady part is n x P, not
             * its whole chain; the standalone time stays C */
            if (n <= 0) {
                d = 0;
            } else if (s <= 1 || (n <= 1 && o->depth > 0)) {
                d = n <= 1 ? n * C : (n - 1) * R + C;
                in.S = n * R;
            } else {
                double B = inS, ub;
                int u = busiest(m, in.busy, &ub);
                if (ub > B) { B = ub; lim = u; }
                for (int sd = 0; sd < 2; sd++)   /* the scalar unit issues every instruction */
                    if (in.busy[sd][TT_UNIT_S] > B) { B = in.busy[sd][TT_UNIT_S]; lim = TT_UNIT_S; }
                if (o->nring > 0) B += tg->flag_cycles;   /* a hand-off per iteration */
                /* cross-core software pipelining: the round trip of iteration i must end
                 * before the same side starts iteration i + s; with hand-offs batched over e
                 * iterations (every, cross_interval) the ring of s slots holds s / e batches,
                 * and the round trip is per batch: P >= R / (s / e) */
                if (o->xsync) {
                    int64_t e = 1;
                    for (int c = i + 1; c < o->end; c = m->ops[c].end)
                        if (m->ops[c].kind == TT_OP_SYNC && sc->trip[c] > e) e = sc->trip[c];
                    double se = s / (double)e >= 1 ? s / (double)e : 1;
                    if (R / se > B) { B = R / se; lim = TT_BOUND_SYNC; }
                }
                /* the core's share of the chip memory: all of its GM transfers of one
                 * iteration (cube and both vector cores) pass through it (section 4) */
                if (in.gmc > B) { B = in.gmc; lim = sc->l2_hit >= 0.5 ? TT_BOUND_L2 : TT_BOUND_HBM; }
                for (int k = 0; k < o->nring; k++) {
                    const tt__ring *rg = &m->rings[o->ring0 + k];
                    double end = sc->off[rg->consumer] + sc->dur[rg->consumer];
                    if (rg->trail_from >= 0) {
                        const tt__mop *co = &m->ops[rg->consumer];
                        for (int c = rg->trail_from; c < co->end; c = m->ops[c].end) end -= sc->dur[c];
                    }
                    int64_t cp = tt__ring_slots(m->t->buffers[rg->buf].scope, sc->besize[rg->buf],
                                                sc->bcopies[rg->buf]);
                    double slots = (double)(cp < sc->stages[i] ? cp : sc->stages[i]);
                    if (slots < 1) slots = 1;
                    double per = (end - sc->off[rg->producer]) / slots;
                    if (per > B) { B = per; lim = TT_BOUND_LATENCY; }
                }
                d = (n - 1) * B + C;
                in.S = n * B;
            }
            int piped = s > 1 && n > 1;
            {
                double *rb = &r->busy[0][0], *rp = &r->busy_pipe[0][0];
                const double *ib = &in.busy[0][0], *ip = piped ? ib : &in.busy_pipe[0][0];
                for (int k = 0; k < m->nact; k++) {
                    int a = m->act[k];
                    rb[a] += n * ib[a];
                    rp[a] += n * ip[a];
                }
            }
            r->sync += n * in.sync;
            r->gmc += n * in.gmc;
            if (tk >= 0 && sc->pass == 1 && m->share_pass && tk < TT__MODEL_MAX_TOPLOOPS) {
                for (int sd = 0; sd < 2; sd++)
                    for (int u = 0; u < TT_UNIT__COUNT; u++) {
                        sc->tl[tk].busy_in[sd][u] = n * in.busy[sd][u];
                        sc->tl[tk].busy_pipe[sd][u] = n * (piped ? in.busy[sd][u] : in.busy_pipe[sd][u]);
                    }
                sc->tl[tk].T = d;
                sc->ntl = tk + 1;
            }
            if (in.S > *maxS) *maxS = in.S;
            if (d > in.S) r->fill += d - in.S;
            if (d > longest) { longest = d; r->lim = lim; }
            prev = -1;
        } else if (o->kind == TT_OP_COPY) {
            double rate = o->pc->bytes_per_cycle;
            /* a prologue / epilogue transfer competes only with its own copies */
            int vs = o->side == TT_SIDE_VECTOR;
            double sh = o->depth > 0 ? sc->share[vs][o->unit] : sc->base_bpc[vs][o->unit] / sc->agents[vs];
            if ((o->gm_read || o->gm_write) && sh < rate) {
                rate = sh;
                sc->share_limited = 1;
            }
            double occ = (sc->bytes[i] / rate + sc->xcyc[i]) * us[o->unit];
            /* back-to-back transfers on one queue overlap their latency */
            int same = prev >= 0 && m->ops[prev].kind == TT_OP_COPY && m->ops[prev].unit == o->unit &&
                       m->ops[prev].side == o->side;
            d = occ + (same ? 0 : o->pc->latency_cycles);
            r->busy[o->side][o->unit] += occ;
            r->busy[o->side][TT_UNIT_S] += tg->issue_cycles;
            if (o->gm_read || o->gm_write) r->gmc += sc->bytes[i] * sc->agents[vs] / sc->base_bpc[vs][o->unit];
            if (d > longest) { longest = d; r->lim = occ >= o->pc->latency_cycles ? (int)o->unit : TT_BOUND_LATENCY; }
            prev = i;
        } else {
            d = sc->bytes[i] * (o->kind == TT_OP_SYNC ? 1 : us[o->unit]);
            if (o->kind == TT_OP_SYNC) r->sync += d;
            else r->busy[o->side][o->unit] += d;
            if (d > longest) { longest = d; r->lim = o->kind == TT_OP_SYNC ? TT_BOUND_SYNC : (int)o->unit; }
            r->busy[o->side][TT_UNIT_S] += tg->issue_cycles;
            prev = -1;
        }
        sc->dur[i] = d;
        off += d;
    }
    r->T = off;
}

/* ---- evaluation: waves, bandwidth, overheads (sections 3-5) ---------------------------- */

/* One block's pipeline at the current bandwidth caps, in two passes: the first gives each
 * GM mover's duty cycle, the second shares the chip bandwidth by it (section 4). */
static void block_time(const tt_model *m, tt__mscratch *sc, lt *top)
{
    double topS;
    sc->share_limited = 0;
    sc->pass = 1;
    sc->tl_idx = sc->ntl = 0;
    seq_time(m, sc, 0, m->nops, top, &topS);
    int again = 0;
    for (int k = 0; m->share_pass && k < sc->ntl; k++) again |= tt__model_share(sc, k);
    if (again) {
        sc->pass = 2;
        sc->tl_idx = 0;
        sc->share_limited = 0;
        seq_time(m, sc, 0, m->nops, top, &topS);
    }
}

tt_rc tt_model_eval(const tt_model *m, int64_t *slots, tt_model_result *out)
{
    memset(out, 0, sizeof *out);
    const tt_template *t = m->t;
    const tt_target *tg = m->tgt;
    if (!t->kernel) {
        out->rc = TT_EUNSUPPORTED;
        snprintf(out->reason, sizeof out->reason, "template %s has no kernel", t->name);
        return out->rc;
    }
    memcpy(slots, m->problem, t->ninputs * sizeof *slots);
    tt__mscratch sc;
    sc.share_limited = 0;
    tt_errinfo e;
    int fast = tt__model_fast_feasible(m, slots, &sc);
    tt_rc rc = fast ? TT_OK : tt_space_check(m->space, slots, &e);
    if (rc) {
        out->rc = rc;
        size_t n = strnlen(e.msg, sizeof out->reason - 1);
        memcpy(out->reason, e.msg, n);
        out->reason[n] = 0;
        return rc;
    }
    if ((rc = eval_geometry(m, slots, &sc, fast, out))) return rc;
    /* the representative block: every grid index at the middle of its extent, so a trip
     * count that grows linearly with a block index (causal attention) gets its mean */
    for (int g = 0; g < m->ngrid; g++) slots[t->kernel->grid[g].slot] = (sc.gext[g] - 1) / 2;
    if ((rc = eval_ops(m, slots, &sc, out))) return rc;

    /* 3. waves over the cores of the kernel's kind */
    /* a block runs on one AI core (one cube core and its two vector cores) for every kind
     * of kernel: the vector-side program runs on both vector cores, each on its own rows */
    int64_t cores = tg->cube_cores > 0 ? tg->cube_cores : tg->vector_cores / 2;
    if (cores < 1) cores = 1;
    int64_t launched = sc.blocks, per_block = 1;
    if (m->has_persistent) {
        int64_t p;
        if ((rc = tt__mx_eval(&m->persistent, slots, &p))) return fail(out, rc, "kernel.persistent", rc_word(rc));
        /* < 1: one block per grid point (a core_num param whose 0 means "the grid") */
        if (p >= 1 && p < sc.blocks) { launched = p; per_block = cdiv(sc.blocks, p); }
    }
    sc.swizzle = 0;
    if (m->has_swizzle && (rc = tt__mx_eval(&m->swizzle, slots, &sc.swizzle)))
        return fail(out, rc, "kernel.swizzle", rc_word(rc));
    int64_t used = launched < cores ? launched : cores;
    int64_t lwaves = cdiv(launched, cores), waves = lwaves * per_block;

    /* 4. chip bandwidth and the per-core share of it */
    tt__model_traffic(m, &sc, used);

    /* two passes: the first gives each GM mover's duty cycle, the second shares the
     * chip bandwidth by it (section 4) */
    lt top;
    block_time(m, &sc, &top);
    int limited = sc.share_limited;
    double block = top.T + m->block_cycles;
    /* a persistent block pays block_cycles and its loops' fill/drain once; every further
     * grid point it walks costs the steady part (top.T - top.fill), which still holds the
     * epilogue a single-copy buffer forces (GEMM's L0C -> GM write) */
    double core_cycles = (block + (double)(per_block - 1) * (top.T - top.fill)) * (double)lwaves;
    /* the last step (tail wave, or the last grid point of a persistent walk) runs on the
     * `tail` cores that still have work: they share the chip bandwidth among themselves */
    int64_t tail = lwaves == 1 ? sc.blocks - (per_block - 1) * launched : sc.blocks - (lwaves - 1) * cores;
    if (limited && tail > 0 && tail < used && (per_block > 1 || lwaves > 1)) {
        double f = (double)used / (double)tail;
        sc.core_bpc *= f;
        for (int sd = 0; sd < 2; sd++)
            for (int u = 0; u < TT_UNIT__COUNT; u++) sc.base_bpc[sd][u] *= f;
        lt last;
        block_time(m, &sc, &last);
        if (per_block > 1) core_cycles += (last.T - last.fill) - (top.T - top.fill);
        else core_cycles += last.T - top.T;
    }
    double core_us = tt_target_us(tg, core_cycles);
    double bws = m->calib.bw_scale > 0 ? m->calib.bw_scale : 1;
    double hbm_us = (sc.hbm_bytes / (tg->hbm_bypass_gbps * bws) + sc.hbm_write_bytes / (tg->hbm_write_gbps * bws)) / 1e3;
    /* the L2 bound charges each byte at its mover's rate, as the per-core share does and as
     * the simulator does (one roofline, roofline.h): the cube cores' loads hit at the loaded
     * rate l2_load_gbps, every other transfer at l2_gbps */
    double l2_us = (sc.cube_read_bytes / tt__roof_gbps(tg, tt__roof_l2(tg, 1), sc.l2_hit) +
                    (sc.read_bytes + sc.write_bytes - sc.cube_read_bytes) /
                        tt__roof_gbps(tg, tg->l2_gbps, sc.l2_hit)) / bws / 1e3;
    /* 5. fixed overheads */
    double fixed = tg->launch_us + (m->launch_mix ? tg->mix_launch_extra_us : 0);
    double body = core_us;
    tt_bound bound = TT_BOUND__COUNT;
    if (hbm_us > body) { body = hbm_us; bound = TT_BOUND_HBM; }
    if (l2_us > body) { body = l2_us; bound = TT_BOUND_L2; }
    double time = body + fixed;

    for (int u = 0; u < TT_UNIT__COUNT; u++) {
        double b = top.busy[0][u] > top.busy[1][u] ? top.busy[0][u] : top.busy[1][u];
        out->busy_us[u] = tt_target_us(tg, b * (double)waves);
    }
    if (fixed > 0.5 * time) {
        bound = TT_BOUND_LAUNCH;
    } else if (bound == TT_BOUND__COUNT) {
        int bu = top.lim;
        if ((bu == TT_BOUND_MTE2 || bu == TT_BOUND_MTE3 || bu == TT_BOUND_FIX) && limited)
            bound = sc.l2_hit >= 0.5 ? TT_BOUND_L2 : TT_BOUND_HBM;
        else bound = (tt_bound)bu;
    }
    if (m->has_calib) {
        time = tt_calib_apply(&m->calib, time);
        /* a fit on a narrow range (slope far from 1) or on absurd measurements overflows
         * here for a larger problem: no prediction rather than an infinite one */
        if (!isfinite(time) || !(time > 0))
            return fail(out, TT_EDOMAIN, "calibration",
                        "the calibrated time is not a finite positive number");
    }
    out->rc = TT_OK;
    out->time_us = time;
    out->low_us = time * m->band_lo;
    out->high_us = time * m->band_hi;
    out->bound = bound;
    for (int u = 0; u < TT_UNIT__COUNT; u++) out->util[u] = time > 0 ? out->busy_us[u] / time : 0;
    out->blocks = sc.blocks;
    out->cores_used = used;
    out->waves = (double)launched / (double)cores * (double)per_block;
    out->gm_bytes = sc.hbm_bytes + sc.hbm_write_bytes;
    out->l2_hit = sc.l2_hit;
    out->flops = sc.flops * (double)sc.blocks;
    return TT_OK;
}

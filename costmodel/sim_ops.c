/* SPDX-License-Identifier: MIT
 * sim_ops.c - per-op costs of the simulator: buffer geometry, copy paths and rates, cube and
 * vector cycles, and the L2 hit estimate of GM reads (re-use of a tile across blocks).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cube_ring.h"
#include "reuse.h"
#include "roofline.h"
#include "sim_int.h"

static size_t count_leaves(tt__sim *s, const tt_op *body, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        if (body[i].kind == TT_OP_FOR) {
            size_t k = count_leaves(s, body[i].u.loop.body, body[i].u.loop.nbody);
            s->loop_leaves[body[i].u.loop.id] = k;
            c += k;
        } else {
            c++;
        }
    }
    return c;
}

static void collect(tt__sim *s, const tt_op *body, size_t n, size_t *k)
{
    for (size_t i = 0; i < n; i++) {
        if (body[i].kind == TT_OP_FOR) collect(s, body[i].u.loop.body, body[i].u.loop.nbody, k);
        else s->ops[(*k)++].op = &body[i];
    }
}

/* Grid dims (bit d for dim d; dims past 63 share bit 63) that expression e reads. */
static uint64_t grid_mask(const tt__sim *s, const tt_expr *e)
{
    if (!e) return 0;
    int sl[TT_MAX_SLOTS];
    size_t n = tt_expr_slots(e, sl, TT_MAX_SLOTS);
    if (n > TT_MAX_SLOTS) n = TT_MAX_SLOTS;
    const tt_kernel *k = s->t->kernel;
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t d = 0; d < k->ngrid; d++)
            if (sl[i] == k->grid[d].slot) m |= 1ULL << (d < 63 ? d : 63);
    return m;
}

static int reads_grid(const tt__sim *s, const tt_expr *e)
{
    return grid_mask(s, e) != 0;
}

/* Bytes per cycle of the chip's shared memory for a figure in GB/s. */
static double bpc(const tt_target *tgt, double gbps)
{
    return gbps > 0 && tgt->clock_mhz > 0 ? gbps * 1e3 / tgt->clock_mhz : 0;
}

/* Executions of each leaf op in one block (trip counts at grid point 0). */
static void count_execs(tt__sim *s, const tt_op *body, size_t n, double mult, size_t *li,
                        double *execs)
{
    for (size_t i = 0; i < n; i++) {
        const tt_op *o = &body[i];
        if (o->kind == TT_OP_FOR) {
            int64_t trip = 0;
            if (tt_expr_eval(o->u.loop.trip, s->slots, &trip) != TT_OK || trip < 0) trip = 0;
            count_execs(s, o->u.loop.body, o->u.loop.nbody, mult * (double)trip, li, execs);
        } else {
            execs[(*li)++] = mult;
        }
    }
}

/* L2 hit rate of a GM read, the analytic model's estimate (docs/cost-model.md, 4): a tile
 * is read by R blocks (the grid dims it does not depend on, and along an index map such as
 * `bh // group` the blocks that map to one value); the R - 1 re-reads hit with
 * h_c = min(1, L2 / W), W = GM bytes per block x blocks between two reads of the tile (the
 * nearest such grid dim, last dim fastest, at least the cores in use); the first read hits
 * with h_w = min(1, resident / footprint of all tensors). */
static double read_hit(const tt__sim *s, const tt_op *o, double per_block, double cores_used,
                       double hw)
{
    const tt_kernel *k = s->t->kernel;
    const tt_tensor *tn = &s->t->tensors[o->u.copy.src.index];
    if (tn->workspace) return 1.0;   /* written by the other side just before */
    double readers = 1, dist = 0;
    for (size_t d = 0; d < k->ngrid; d++) {
        int64_t ext = s->grid_ext[d], n = 1;   /* distinct tiles along d */
        for (size_t j = 0; j < o->u.copy.nalong; j++) {
            const tt_along *a = &o->u.copy.along[j];
            /* an index map (`bh // group`): the blocks mapping to one value share the tile
             * (an evaluation error counts the dim as not shared) */
            if (!a->is_loop && a->index == (int)d && tt_tmpl_along_count(s->t, a, s->slots, ext, &n))
                n = ext;
        }
        if (n >= ext || ext <= 1) continue;
        readers *= (double)ext / (double)n;
        double dd = tt__reuse_distance((int)k->ngrid, s->grid_ext, (int)d, s->swizzle);
        if (dist == 0 || dd < dist) dist = dd;
    }
    /* one rule with the model (roofline.h): a block of the same wave re-reads it at once */
    double hc = tt__roof_reread(dist, cores_used, per_block * dist, s->tgt->l2_bytes);
    return (readers - 1) / readers * hc + hw / readers;
}

/* Shared-memory cycles per byte of a GM read with hit rate h: the inverse of the model's
 * effective bandwidth (roofline.h: msKPP's L2 model, the miss path capped by the cached HBM
 * stream, the cube cores' loads hitting at the loaded rate), so that model and simulator
 * share one memory roofline. */
static double gm_cost(const tt__sim *s, double h, int cube_load)
{
    double b = bpc(s->tgt, tt__roof_gbps(s->tgt, tt__roof_l2(s->tgt, cube_load), h));
    return b > 0 ? 1.0 / b : 0;
}

/* Grid dims read by the trip counts of the loops in body and by vector `elems`. */
static uint64_t body_grid_mask(const tt__sim *s, const tt_op *body, size_t n)
{
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (body[i].kind == TT_OP_FOR)
            m |= grid_mask(s, body[i].u.loop.trip) |
                 body_grid_mask(s, body[i].u.loop.body, body[i].u.loop.nbody);
        else if (body[i].kind == TT_OP_VEC)
            m |= grid_mask(s, body[i].u.vec.elems);
    }
    return m;
}

void tt__sim_close(tt__sim *s)
{
    if (!s) return;
    tt__sim_scratch_free(s->scratch);
    s->scratch = NULL;
    free(s->ops);
    free(s->copies);
    free(s->grid_ext);
    free(s->loop_leaves);
    free(s->loop_trip);
    free(s->loop_stages);
    free(s->loop_gen);
    s->loop_trip = s->loop_stages = NULL;
    s->loop_gen = NULL;
    free(s->bufbytes);
    s->ops = NULL;
    s->copies = s->grid_ext = s->bufbytes = NULL;
    s->loop_leaves = NULL;
}

static tt_rc fail(char *reason, size_t cap, tt_rc rc, const char *path, const char *msg)
{
    snprintf(reason, cap, "%s: %s", path, msg);
    return rc;
}

/* Evaluating op o's field `field` failed with rc: "<path>.<field>: <error>" into reason. */
static tt_rc fail_field(char *reason, size_t cap, tt_rc rc, const tt_op *o, const char *field)
{
    snprintf(reason, cap, "%s.%s: %s", o->path, field, tt_strerror(rc));
    return rc;
}

/* The copy variants of a GM transfer (costmodel/model_ops.c charges the same): a gather
 * of `rows` rows stretches the serial data phase by the per-row transfers; an atomic-add
 * write moves its bytes twice through the shared memory (read-modify-write in L2). */
static tt_rc copy_variant(const tt__sim *s, const tt_op *o, const tt_pathcost *pc, tt__sop *so,
                          char *reason, size_t cap)
{
    int64_t v = 0;
    tt_rc rc;
    if (o->u.copy.rows) {
        if ((rc = tt_expr_eval(o->u.copy.rows, s->slots, &v)))
            return fail_field(reason, cap, rc, o, "rows");
        double x = tt__gather_cycles(pc, v, s->dma_depth);
        if (x > 0 && so->bytes > 0) so->cap = so->bytes / (so->bytes / pc->bytes_per_cycle + x);
    }
    if (o->u.copy.atomic) {
        if ((rc = tt_expr_eval(o->u.copy.atomic, s->slots, &v)))
            return fail_field(reason, cap, rc, o, "atomic");
        if (v) so->bytes *= 2;
    }
    return TT_OK;
}

/* The geometry of the template's buffers under the config: elements, element size and
 * dimensions of one copy (a ring's slot count goes to s->copies). */
typedef struct bufgeom {
    int64_t *elems;
    int *esz;
    int64_t (*dims)[TT_MAX_RANK];
} bufgeom;

static void geom_free(bufgeom *g)
{
    free(g->elems);
    free(g->esz);
    free(g->dims);
}

/* s's per-buffer, per-grid-dim and per-loop arrays, and the target's optional fields. */
static tt_rc prepare_alloc(tt__sim *s, char *reason, size_t cap)
{
    const tt_template *t = s->t;
    const tt_target *tgt = s->tgt;
    const tt_kernel *k = t->kernel;
    s->trunc_loop = -1;
    s->vec_split = 1;         /* UB buffers are per vector core: no halving (docs) */
    s->vec_cores = 2;
    s->pipeline_mix = 1;
    /* optional target fields: 0 means absent (a struct built by hand), use the default */
    s->dma_depth = tgt->dma_outstanding > 0 ? tgt->dma_outstanding : TT_SIM_DMA_DEPTH;
    s->block_cycles = tgt->block_cycles > 0 ? tgt->block_cycles : 0;
    s->copies = calloc(t->nbuffers + 1, sizeof *s->copies);
    s->bufbytes = calloc(t->nbuffers + 1, sizeof *s->bufbytes);
    s->grid_ext = calloc(k->ngrid + 1, sizeof *s->grid_ext);
    s->swizzle = 0;
    if (k->swizzle) {
        tt_rc src = tt_expr_eval(k->swizzle, s->slots, &s->swizzle);
        if (src) return fail(reason, cap, src, "kernel.swizzle", tt_strerror(src));
    }
    s->loop_leaves = calloc(k->nloops + 1, sizeof *s->loop_leaves);
    s->loop_trip = calloc(k->nloops + 1, sizeof *s->loop_trip);
    s->loop_stages = calloc(k->nloops + 1, sizeof *s->loop_stages);
    s->loop_gen = calloc(k->nloops + 1, sizeof *s->loop_gen);
    s->gen = 1;
    if (!s->copies || !s->bufbytes || !s->grid_ext || !s->loop_leaves || !s->loop_trip ||
        !s->loop_stages || !s->loop_gen)
        return fail(reason, cap, TT_ENOMEM, "sim", "out of memory");
    return TT_OK;
}

/* Every buffer's geometry (g, allocated here) and ring slots; the grid's extents and block
 * count. */
static tt_rc prepare_geometry(tt__sim *s, bufgeom *g, char *reason, size_t cap)
{
    const tt_template *t = s->t;
    const tt_kernel *k = t->kernel;
    g->elems = calloc(t->nbuffers + 1, sizeof *g->elems);
    g->esz = calloc(t->nbuffers + 1, sizeof *g->esz);
    g->dims = calloc(t->nbuffers + 1, sizeof *g->dims);
    if (!g->elems || !g->esz || !g->dims) return fail(reason, cap, TT_ENOMEM, "sim", "out of memory");
    for (size_t b = 0; b < t->nbuffers; b++) {
        tt_rc rc = tt_tmpl_buffer_geom(t, b, s->slots, g->dims[b], &g->elems[b], &g->esz[b],
                                       &s->copies[b]);
        if (rc) {
            snprintf(reason, cap, "buffers.%s: %s", t->buffers[b].name, tt_strerror(rc));
            return rc;
        }
        if (s->copies[b] < 1) s->copies[b] = 1;
        if (s->copies[b] > 1024) s->copies[b] = 1024;
        s->copies[b] = tt__ring_slots(t->buffers[b].scope, g->esz[b], s->copies[b]);
        s->bufbytes[b] = g->elems[b] * g->esz[b];
    }
    s->nblocks = 1;
    for (size_t d = 0; d < k->ngrid; d++) {
        int64_t e = 0;
        tt_rc rc = tt_expr_eval(k->grid[d].extent, s->slots, &e);
        if (rc) {
            snprintf(reason, cap, "kernel.grid.%s: %s", k->grid[d].name, tt_strerror(rc));
            return rc;
        }
        s->grid_ext[d] = e < 1 ? 1 : e;
        if (s->nblocks > INT64_MAX / s->grid_ext[d])
            return fail(reason, cap, TT_EOVERFLOW, "kernel.grid", "too many blocks");
        s->nblocks *= s->grid_ext[d];
    }
    return TT_OK;
}

/* Bytes of all the kernel's GM tensors (the footprint the L2 estimate compares with). */
static double tensor_footprint(const tt__sim *s)
{
    const tt_template *t = s->t;
    double footprint = 0;
    for (size_t i = 0; i < t->ntensors; i++) {
        int64_t td[TT_MAX_RANK], te = 0;
        int es = 0;
        if (tt_tmpl_tensor_geom(t, i, s->slots, td, &te, &es) == TT_OK) footprint += (double)te * es;
    }
    return footprint;
}

static tt_rc prep_copy(tt__sim *s, const bufgeom *g, double split, tt__sop *so, char *reason, size_t cap)
{
    const tt_template *t = s->t;
    const tt_target *tgt = s->tgt;
    const tt_op *o = so->op;
    const tt_ref *src = &o->u.copy.src, *dst = &o->u.copy.dst;
    tt_path p = o->u.copy.path;
    so->unit = tt_path_unit(p);
    int64_t el = INT64_MAX;
    int es = 0;
    if (!src->is_gm) {
        el = g->elems[src->index];
        so->rbuf[so->nr++] = src->index;
    }
    if (!dst->is_gm) {
        if (g->elems[dst->index] < el) el = g->elems[dst->index];
        so->wbuf = dst->index;
        es = g->esz[dst->index];
    } else {
        es = tt_dtype_size(tt_dtref_eval(t->tensors[dst->index].dtype, s->slots));
    }
    if (el == INT64_MAX) el = 0;
    double bytes = (double)el * es / split;
    tt_pathcost pc = tgt->path[p];
    if (p == TT_PATH_GM_L1 && tt_copy_nd2nz(o, s->slots) && tgt->gm_l1_nd2nz.bytes_per_cycle > 0)
        pc = tgt->gm_l1_nd2nz;
    if (pc.bytes_per_cycle <= 0)
        return fail(reason, cap, TT_EUNSUPPORTED, o->path, "the target has no rate for this copy path");
    snprintf(so->name, sizeof so->name, "copy %s %s", tt_path_name(p),
             src->is_gm ? t->tensors[src->index].name : t->buffers[src->index].name);
    if (!src->is_gm && !dst->is_gm) {
        so->kind = TT__SI_FIXED;
        so->dur = pc.latency_cycles + bytes / pc.bytes_per_cycle;
        return TT_OK;
    }
    so->kind = TT__SI_GM;
    so->dur = pc.latency_cycles;
    so->bytes = bytes;
    so->cap = pc.bytes_per_cycle;
    return copy_variant(s, o, &pc, so, reason, cap);
}

static tt_rc prep_mma(tt__sim *s, const bufgeom *g, tt__sop *so, char *reason, size_t cap)
{
    const tt_template *t = s->t;
    const tt_target *tgt = s->tgt;
    const tt_op *o = so->op;
    int a = o->u.mma.a, b = o->u.mma.b, c = o->u.mma.c;
    so->unit = TT_UNIT_M;
    so->kind = TT__SI_FIXED;
    tt_dtype dt = tt_dtref_eval(t->buffers[a].dtype, s->slots);
    double cc = (int)dt >= 0 && dt < TT_DT__COUNT ? tgt->cube_c[dt] : 0;
    if (cc <= 0) return fail(reason, cap, TT_EUNSUPPORTED, o->path, "the cube does not support this dtype");
    int64_t m = g->dims[a][0], kd = t->buffers[a].rank > 1 ? g->dims[a][1] : 1;
    int64_t nn = t->buffers[b].rank > 1 ? g->dims[b][1] : g->dims[b][0];
    int64_t k0 = g->esz[a] > 0 ? 32 / g->esz[a] : 16;
    if (k0 < 1) k0 = 1;
    so->dur = tgt->cube_fixed_cycles +
              cc * (double)((m + 15) / 16) * (double)((kd + k0 - 1) / k0) * (double)((nn + 15) / 16);
    so->rbuf[so->nr++] = a;
    so->rbuf[so->nr++] = b;
    so->wbuf = c;
    so->accum = !o->u.mma.init;
    if (so->accum) so->rbuf[so->nr++] = c;
    snprintf(so->name, sizeof so->name, "mma");
    return TT_OK;
}

static tt_rc prep_vec(tt__sim *s, const bufgeom *g, double split, tt__sop *so, char *reason, size_t cap)
{
    const tt_target *tgt = s->tgt;
    const tt_op *o = so->op;
    so->unit = TT_UNIT_V;
    so->kind = TT__SI_FIXED;
    int out = o->u.vec.out;
    so->wbuf = out;
    for (int j = 0; j < o->u.vec.nin && so->nr < 5; j++) so->rbuf[so->nr++] = o->u.vec.in[j];
    int es = g->esz[out];
    int col = es >= 4 ? 1 : 0;
    so->vec_esize = es;
    so->vec_bpc = tgt->vec_bytes_per_cycle[o->u.vec.cls][col];
    so->vec_head = tgt->vec_head_cycles[o->u.vec.cls];
    if (so->vec_bpc <= 0)
        return fail(reason, cap, TT_EUNSUPPORTED, o->path, "the target has no rate for this vector op class");
    int64_t el = g->elems[out];
    if (o->u.vec.elems) {
        so->dyn_elems = reads_grid(s, o->u.vec.elems);
        tt_rc rc = tt_expr_eval(o->u.vec.elems, s->slots, &el);
        if (rc && !so->dyn_elems) return fail_field(reason, cap, rc, o, "elems");
        if (rc) el = 0;   /* evaluated per block (dyn_elems) */
    }
    so->vec_cls = o->u.vec.cls;
    so->vec_rows = (double)g->elems[out] / split;
    so->dur = tt__vec_cycles(tgt, so->vec_cls, (double)el / split, es, so->vec_rows);
    snprintf(so->name, sizeof so->name, "%s", o->u.vec.op ? o->u.vec.op : "vec");
    return TT_OK;
}

static tt_rc prep_sync(tt__sim *s, tt__sop *so, char *reason, size_t cap)
{
    const tt_op *o = so->op;
    so->unit = TT_UNIT_S;
    so->kind = o->u.sync.kind == TT_SYNC_CROSS ? TT__SI_SET : TT__SI_BAR;
    so->every = 1;
    if (o->u.sync.every) {
        int64_t ev = 1;
        tt_rc rc = tt_expr_eval(o->u.sync.every, s->slots, &ev);
        if (rc) return fail_field(reason, cap, rc, o, "every");
        so->every = ev > 1 ? ev : 1;
    }
    snprintf(so->name, sizeof so->name, "%s flag %d",
             o->u.sync.kind == TT_SYNC_CROSS ? "cross" : "barrier", o->u.sync.flag);
    return TT_OK;
}

/* Op i's unit, kind, duration, bytes and buffers; the sides it runs on. */
static tt_rc prepare_op(tt__sim *s, const bufgeom *g, size_t i, char *reason, size_t cap)
{
    tt__sop *so = &s->ops[i];
    const tt_op *o = so->op;
    so->wbuf = -1;
    so->side = o->side;
    double split = o->side == TT_SIDE_VECTOR ? s->vec_split : 1;
    tt_rc rc = TT_OK;
    switch (o->kind) {
    case TT_OP_COPY: rc = prep_copy(s, g, split, so, reason, cap); break;
    case TT_OP_MMA: rc = prep_mma(s, g, so, reason, cap); break;
    case TT_OP_VEC: rc = prep_vec(s, g, split, so, reason, cap); break;
    case TT_OP_SYNC: rc = prep_sync(s, so, reason, cap); break;
    case TT_OP_FOR: break;
    }
    if (rc) return rc;
    if (o->kind == TT_OP_SYNC && o->u.sync.kind == TT_SYNC_CROSS) {
        s->has_side[o->u.sync.from == TT_SIDE_CUBE ? TT__AG_CUBE : TT__AG_VEC] = 1;
        s->has_side[o->u.sync.to == TT_SIDE_CUBE ? TT__AG_CUBE : TT__AG_VEC] = 1;
    } else {
        s->has_side[o->side == TT_SIDE_CUBE ? TT__AG_CUBE : TT__AG_VEC] = 1;
    }
    return TT_OK;
}

/* L2 estimate of each GM copy (needs every op's bytes): the cost per byte of its share of
 * the chip's memory, and the HBM bytes the reads miss. */
static tt_rc prepare_l2(tt__sim *s, double footprint, char *reason, size_t cap)
{
    const tt_target *tgt = s->tgt;
    const tt_kernel *k = s->t->kernel;
    size_t n = s->nops;
    double *execs = calloc(n + 1, sizeof *execs);
    if (!execs) return fail(reason, cap, TT_ENOMEM, "sim", "out of memory");
    size_t li = 0;
    tt__sim_set_grid(s, 0);
    count_execs(s, k->body, k->nbody, 1, &li, execs);
    double per_block = 0;
    for (size_t i = 0; i < n; i++)
        if (s->ops[i].kind == TT__SI_GM)
            per_block += s->ops[i].bytes * execs[i] *
                         (s->ops[i].side == TT_SIDE_VECTOR ? s->vec_cores : 1);
    double cores = tgt->cube_cores > 0 ? tgt->cube_cores : tgt->vector_cores / 2;
    double used = (double)s->nblocks < cores ? (double)s->nblocks : cores;
    double resident = tgt->l2_resident_bytes > 0 ? tgt->l2_resident_bytes : tgt->l2_bytes;
    double hw = tt__roof_warm(footprint, resident);
    for (size_t i = 0; i < n; i++) {
        tt__sop *so = &s->ops[i];
        if (so->kind != TT__SI_GM) continue;
        const tt_op *o = so->op;
        if (o->u.copy.dst.is_gm) {
            /* writes land in L2 (write-back) at the L2 rate, as in the model (roofline.h);
             * the L2 writes them back to HBM behind the kernel */
            double l2 = bpc(tgt, tt__roof_write_gbps(tgt));
            so->cost = l2 > 0 ? 1.0 / l2 : 0;
        } else {
            double h = read_hit(s, o, per_block, used, hw);
            so->cost = gm_cost(s, h, so->side == TT_SIDE_CUBE);
            s->hbm_read += so->bytes * execs[i] * (1 - h) * (double)s->nblocks *
                           (so->side == TT_SIDE_VECTOR ? s->vec_cores : 1);
        }
    }
    free(execs);
    return TT_OK;
}

tt_rc tt__sim_prepare(tt__sim *s, char *reason, size_t cap)
{
    const tt_kernel *k = s->t->kernel;
    tt_rc rc = prepare_alloc(s, reason, cap);
    if (rc) return rc;
    bufgeom g = {0};
    if ((rc = prepare_geometry(s, &g, reason, cap))) goto out;
    double footprint = tensor_footprint(s);
    size_t n = count_leaves(s, k->body, k->nbody);
    s->ops = calloc(n + 1, sizeof *s->ops);
    if (!s->ops) {
        rc = fail(reason, cap, TT_ENOMEM, "sim", "out of memory");
        goto out;
    }
    s->nops = n;
    size_t kk = 0;
    collect(s, k->body, k->nbody, &kk);
    for (size_t i = 0; i < n; i++)
        if ((rc = prepare_op(s, &g, i, reason, cap))) goto out;
    if (s->dma_depth < 1) s->dma_depth = 1;
    if (s->dma_depth > TT__DMA_MAX) s->dma_depth = TT__DMA_MAX;
    if ((rc = prepare_l2(s, footprint, reason, cap))) goto out;
    s->grid_mask = body_grid_mask(s, k->body, k->nbody);
    s->grid_dep = s->grid_mask != 0;
out:
    geom_free(&g);
    return rc;
}

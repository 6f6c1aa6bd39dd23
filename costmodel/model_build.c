/* SPDX-License-Identifier: MIT
 * model_build.c - the analytic cost model's preparation: a template's tile program flattened
 * for one problem and target (ops, loop trips, rings, the per-config expressions), once per
 * (template, problem, target); tt_model_new and tt_model_free.  Evaluation of a config is in
 * model.c, GM traffic and the L2 estimate in model_traffic.c.
 */
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "model_int.h"

/* ---- preparation ---------------------------------------------------------------------- */

static void mx_init(const tt_template *t, const tt_expr *e, int64_t def, tt__mx *x)
{
    memset(x, 0, sizeof *x);
    x->kind = 2;
    x->c = def;
    if (!e) return;
    int64_t v;
    if (tt_expr_const(e, &v)) { x->c = v; return; }
    int s[2];
    const char *src = tt_expr_source(e);
    if (tt_expr_slots(e, s, 2) == 1) {
        const char *nm = tt_tmpl_slot_name(t, (size_t)s[0]);
        while (src && (*src == ' ' || *src == '(')) src++;
        size_t n = nm ? strlen(nm) : 0;
        if (nm && src && strncmp(src, nm, n) == 0) {
            const char *r = src + n;
            while (*r == ' ' || *r == ')') r++;
            if (!*r) { x->kind = 1; x->slot = s[0]; return; }
        }
    }
    x->kind = 0;
    x->e = e;
}

static int op_reads(const tt_op *o, int buf)
{
    switch (o->kind) {
    case TT_OP_COPY: return !o->u.copy.src.is_gm && o->u.copy.src.index == buf;
    case TT_OP_MMA: return o->u.mma.a == buf || o->u.mma.b == buf || o->u.mma.c == buf;
    case TT_OP_VEC:
        for (int i = 0; i < o->u.vec.nin; i++)
            if (o->u.vec.in[i] == buf) return 1;
        return 0;
    default: return 0;
    }
}

static int subtree_reads(const tt_op *o, int buf)
{
    if (o->kind != TT_OP_FOR) return op_reads(o, buf);
    for (size_t i = 0; i < o->u.loop.nbody; i++)
        if (subtree_reads(&o->u.loop.body[i], buf)) return 1;
    return 0;
}

typedef struct flat_ctx {
    tt_model *m;
    int loop_depth_of_id[TT__MODEL_MAX_OPS];
    tt_errinfo *err;
} flat_ctx;

static tt_rc flatten(flat_ctx *fc, const tt_op *body, size_t n, int depth)
{
    tt_model *m = fc->m;
    const tt_template *t = m->t;
    for (size_t i = 0; i < n; i++) {
        const tt_op *o = &body[i];
        if (m->nops >= TT__MODEL_MAX_OPS)
            return tt_errf(fc->err, TT_EUNSUPPORTED, o->path, "more than %d ops",
                           TT__MODEL_MAX_OPS);
        int idx = m->nops++;
        tt__mop *mo = &m->ops[idx];
        memset(mo, 0, sizeof *mo);
        mo->kind = o->kind;
        mo->side = o->side;
        mo->depth = depth;
        mo->src = o;
        mo->end = idx + 1;
        mo->buf = mo->dst_buf = mo->src_buf = mo->tensor = -1;
        switch (o->kind) {
        case TT_OP_FOR: {
            mx_init(t, o->u.loop.trip, 1, &mo->trip);
            mx_init(t, o->u.loop.stages, 1, &mo->stages);
            if (o->u.loop.id >= 0 && o->u.loop.id < TT__MODEL_MAX_OPS)
                fc->loop_depth_of_id[o->u.loop.id] = depth;
            tt_rc rc = flatten(fc, o->u.loop.body, o->u.loop.nbody, depth + 1);
            if (rc) return rc;
            m->ops[idx].end = m->nops;
            break;
        }
        case TT_OP_COPY: {
            const tt_ref *s = &o->u.copy.src, *d = &o->u.copy.dst;
            mo->unit = tt_path_unit(o->u.copy.path);
            mo->pc = &m->tgt->path[o->u.copy.path];
            if (o->u.copy.path == TT_PATH_GM_L1 && tt_copy_nd2nz(o, m->problem))
                mo->pc = &m->tgt->gm_l1_nd2nz;
            mo->src_buf = s->is_gm ? -1 : s->index;
            mo->dst_buf = d->is_gm ? -1 : d->index;
            mo->buf = d->is_gm ? s->index : d->index;
            mo->gm_read = s->is_gm;
            mo->gm_write = d->is_gm;
            mx_init(t, o->u.copy.rows, 1, &mo->rows);
            mx_init(t, o->u.copy.atomic, 0, &mo->atomic);
            if (s->is_gm) mo->tensor = s->index;
            if (d->is_gm) mo->tensor = d->index;
            for (size_t a = 0; a < o->u.copy.nalong; a++) {
                const tt_along *al = &o->u.copy.along[a];
                if (al->is_loop) {
                    if (mo->nloop_along <= TT_TMPL_MAX_DEPTH && al->index >= 0 &&
                        al->index < TT__MODEL_MAX_OPS)
                        mo->along_loop_depth[mo->nloop_along++] = fc->loop_depth_of_id[al->index];
                } else if (mo->ngrid_along < TT__MODEL_MAX_GRID) {
                    mo->along_map[mo->ngrid_along] = al->map ? al : NULL;
                    mo->along_grid[mo->ngrid_along++] = al->index;
                }
            }
            mo->nalong = (int)o->u.copy.nalong;
            break;
        }
        case TT_OP_MMA:
            mo->unit = TT_UNIT_M;
            mo->a = o->u.mma.a;
            mo->b = o->u.mma.b;
            mo->c = o->u.mma.c;
            break;
        case TT_OP_VEC:
            mo->unit = TT_UNIT_V;
            mo->cls = o->u.vec.cls;
            mo->out = o->u.vec.out;
            mo->has_elems = o->u.vec.elems != NULL;
            if (mo->has_elems) mx_init(t, o->u.vec.elems, 0, &mo->elems);
            break;
        case TT_OP_SYNC:
            mo->unit = TT_UNIT_S;
            mx_init(t, o->u.sync.every, 1, &mo->every);
            break;
        }
    }
    return TT_OK;
}

/* Ring hand-offs of each pipelined loop: a copy into an on-chip buffer and the last direct
 * child of the same loop body that reads it (docs/cost-model.md, section 2). */
static tt_rc find_rings(tt_model *m, tt_errinfo *err)
{
    int cap = 16;
    m->rings = malloc((size_t)cap * sizeof *m->rings);
    if (!m->rings) return tt_errf(err, TT_ENOMEM, "", "out of memory");
    for (int L = 0; L < m->nops; L++) {
        tt__mop *lo = &m->ops[L];
        if (lo->kind != TT_OP_FOR) continue;
        lo->ring0 = m->nrings;
        for (int p = L + 1; p < lo->end; p = m->ops[p].end) {
            const tt__mop *po = &m->ops[p];
            if (po->kind != TT_OP_COPY || po->dst_buf < 0) continue;
            int last = -1;
            for (int c = po->end; c < lo->end; c = m->ops[c].end)
                if (subtree_reads(m->ops[c].src, po->dst_buf)) last = c;
            if (last < 0) continue;
            int trail = -1;
            const tt__mop *co = &m->ops[last];
            if (co->kind == TT_OP_FOR) {
                int lr = -1;
                for (int c = last + 1; c < co->end; c = m->ops[c].end)
                    if (m->ops[c].kind != TT_OP_FOR && op_reads(m->ops[c].src, po->dst_buf)) lr = c;
                if (lr >= 0 && m->ops[lr].end < co->end) trail = m->ops[lr].end;
            }
            if (m->nrings == TT__MODEL_MAX_RINGS)
                return tt_errf(err, TT_EUNSUPPORTED, po->src->path, "too many ring buffers");
            if (m->nrings == cap) {
                cap *= 2;
                tt__ring *nr = realloc(m->rings, (size_t)cap * sizeof *nr);
                if (!nr) return tt_errf(err, TT_ENOMEM, "", "out of memory");
                m->rings = nr;
            }
            m->rings[m->nrings++] = (tt__ring){p, last, po->dst_buf, trail};
        }
        lo->nring = m->nrings - lo->ring0;
    }
    return TT_OK;
}


tt_rc tt_model_new(const tt_template *t, const tt_target *tgt, const int64_t *problem_slots,
                   const tt_calib *calib, tt_model **out, tt_errinfo *err)
{
    if (!out) return tt_errf(err, TT_EINVAL, "", "no output");
    *out = NULL;
    if (!t || !tgt || !problem_slots) return tt_errf(err, TT_EINVAL, "", "missing argument");
    if (t->nslots > TT_MAX_SLOTS) return tt_errf(err, TT_EINVAL, "", "too many slots");
    if (t->nbuffers > TT_TMPL_MAX_BUFFERS || t->ntensors > TT_TMPL_MAX_TENSORS)
        return tt_errf(err, TT_EUNSUPPORTED, "", "too many buffers or tensors");
    tt_model *m = calloc(1, sizeof *m);
    if (!m) return tt_errf(err, TT_ENOMEM, "", "out of memory");
    m->t = t;
    m->tgt = tgt;
    memcpy(m->problem, problem_slots, t->ninputs * sizeof *problem_slots);
    tt_calib_identity(&m->calib);
    if (calib) { m->calib = *calib; m->has_calib = 1; }
    tt_band_get(t->name, calib, &m->band_lo, &m->band_hi);
    /* optional target fields: 0 in a hand-built struct means the default (target.h) */
    m->l2_resident_bytes = tgt->l2_resident_bytes > 0 ? tgt->l2_resident_bytes : tgt->l2_bytes;
    m->block_cycles = tgt->block_cycles > 0 ? tgt->block_cycles : 0;
    m->dma_outstanding = tgt->dma_outstanding > 0 ? tgt->dma_outstanding : TT_TARGET_DMA_OUTSTANDING;
    tt_target_caps(tgt, &m->caps);
    tt_rc rc = tt_space_new(t, problem_slots, &m->caps, &m->space, err);
    if (rc) { tt_model_free(m); return rc; }
    for (size_t i = 0; i < t->nparams && i < TT_MAX_SLOTS; i++) {
        const tt_param *p = &t->params[i];
        tt__mdom *d = &m->dom[i];
        d->n = p->nvalues;
        d->ap = p->nvalues >= 1;
        d->start = p->nvalues ? p->values[0] : 0;
        d->step = p->nvalues >= 2 ? p->values[1] - p->values[0] : 1;
        if (d->step <= 0) d->ap = 0;
        for (size_t j = 1; d->ap && j < p->nvalues; j++)
            if (p->values[j] - p->values[j - 1] != d->step) d->ap = 0;
    }
    for (size_t b = 0; b < t->nbuffers; b++) {
        const tt_buffer *bf = &t->buffers[b];
        m->bufs[b].rank = bf->rank;
        for (int d = 0; d < bf->rank; d++) mx_init(t, bf->shape[d], 1, &m->bufs[b].dims[d]);
        mx_init(t, bf->copies, 1, &m->bufs[b].copies);
        m->bufs[b].dtype = bf->dtype;
    }
    for (size_t i = 0; i < t->ntensors; i++)
        for (int d = 0; d < t->tensors[i].rank; d++)
            mx_init(t, t->tensors[i].shape[d], 1, &m->tshape[i][d]);
    const tt_kernel *k = t->kernel;
    if (k) {
        if (k->ngrid > TT__MODEL_MAX_GRID) {
            tt_model_free(m);
            return tt_errf(err, TT_EUNSUPPORTED, "kernel.grid", "more than %d grid dims",
                           TT__MODEL_MAX_GRID);
        }
        m->cores = k->cores;
        m->launch_mix = tt_kernel_launch_mix(k, problem_slots);
        m->ngrid = (int)k->ngrid;
        for (size_t g = 0; g < k->ngrid; g++) mx_init(t, k->grid[g].extent, 1, &m->grid[g]);
        m->has_persistent = k->persistent != NULL;
        if (k->persistent) mx_init(t, k->persistent, 1, &m->persistent);
        m->has_swizzle = k->swizzle != NULL;
        if (k->swizzle) mx_init(t, k->swizzle, 1, &m->swizzle);
        m->ops = calloc(TT__MODEL_MAX_OPS, sizeof *m->ops);
        flat_ctx *fc = calloc(1, sizeof *fc);
        if (!m->ops || !fc) {
            free(fc);
            tt_model_free(m);
            return tt_errf(err, TT_ENOMEM, "", "out of memory");
        }
        fc->m = m;
        fc->err = err;
        rc = flatten(fc, k->body, k->nbody, 0);
        free(fc);
        if (!rc) rc = find_rings(m, err);
        for (int i = 0; !rc && i < m->nops; i++)
            if (m->ops[i].kind == TT_OP_COPY && m->ops[i].gm_write) m->written[m->ops[i].tensor] = 1;
        for (int L = 0; !rc && L < m->nops; L++) {
            tt__mop *lo = &m->ops[L];
            if (lo->kind != TT_OP_FOR) continue;
            for (int c = L + 1; c < lo->end; c++) {
                const tt__mop *co = &m->ops[c];
                int cross = co->kind == TT_OP_SYNC && co->src->u.sync.kind == TT_SYNC_CROSS;
                if (cross) lo->mixed = 1;
                if (cross && co->depth == lo->depth + 1) lo->xsync = 1;
                if (co->kind != TT_OP_FOR && co->kind != TT_OP_SYNC && co->side != lo->side) lo->mixed = 1;
            }
        }
        if (rc) { tt_model_free(m); return rc; }
    }
    if ((rc = tt__model_prepare_fast(m, err))) { tt_model_free(m); return rc; }
    *out = m;
    return TT_OK;
}

void tt_model_free(tt_model *m)
{
    if (!m) return;
    for (int i = 0; m->tab && i < m->ntab; i++) {
        free(m->tab[i].val);
        free(m->tab[i].ok);
    }
    free(m->tab);
    free(m->con_tab);
    for (size_t b = 0; m->btab && b < m->t->nbuffers; b++) {
        free(m->btab[b].val);
        free(m->btab[b].ok);
    }
    free(m->btab);
    tt_space_free(m->space);
    free(m->ops);
    free(m->rings);
    free(m);
}

/* SPDX-License-Identifier: MIT
 * sim_program.c - flatten a template's tile program for one block into per-agent instruction
 * lists whose dependencies follow the ring slots of the buffers (RAW, WAR) and the syncs.
 *
 * Rules (docs/simulator.md):
 * - a buffer with copies = s is a ring of s slots; the i-th new version goes to slot i mod s;
 *   a reader reads the newest version; a writer of a slot waits for every reader of the
 *   version it overwrites (WAR) and for its previous writer;
 * - an op that reads and writes the same buffer (in-place vector op, accumulating mma)
 *   updates the current version in place; an accumulating mma starts a new version only
 *   when the current one was already read by another op (e.g. copied out to GM);
 * - a cross sync becomes a SET on the producer side (after all of its preceding ops) and a
 *   WAIT on the consumer side (before all of its following ops); a barrier orders all ops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

typedef struct slotst {
    int32_t writer;
    int32_t reader[TT_UNIT__COUNT];
    uint8_t consumed;
} slotst;

typedef struct bufst {
    int64_t writes;
    slotst *slot;             /* copies entries */
} bufst;

typedef struct agst {         /* flatten state of one agent */
    tt__sprog *p;
    bufst *buf;               /* per buffer */
    int32_t last_unit[TT_UNIT__COUNT];
    int32_t bar;              /* last wait / barrier, -1 */
    int bar_kind;
    int role;
    int64_t it, trip;         /* iteration and trip of the innermost loop being walked */
    int32_t mk;               /* mark unit of the instructions emitted now (-1 none) */
} agst;

void tt__sprog_free(tt__sprog *p)
{
    if (!p) return;
    free(p->ins);
    free(p->deps);
    free(p->mk);
    memset(p, 0, sizeof *p);
}

/* Add a dependency of the instruction being built (p->ins[p->n], its unit set) on idx.
 * A producer earlier on the same unit that is not a GM transfer is left out: the unit's
 * queue is in order and holds the unit busy until that op is done, so whenever the new
 * instruction heads a free unit the producer has finished, no later than the unit became
 * free, and can neither delay it nor be the reason of a stall (sim_engine.c try_issue). */
static inline int add_dep(tt__sprog *p, int32_t idx, int kind)
{
    if (idx < 0) return 0;
    if (p->ins[idx].unit == p->ins[p->n].unit && p->ins[idx].kind != TT__SI_GM) return 0;
    if (p->ndeps == p->capdeps) {
        size_t nc = p->capdeps ? p->capdeps * 2 : 256;
        uint32_t *nd = realloc(p->deps, nc * sizeof *nd);
        if (!nd) return -1;
        p->deps = nd;
        p->capdeps = nc;
    }
    p->deps[p->ndeps++] = TT__DEP_WORD(idx, kind, p->ins[idx].unit != p->ins[p->n].unit);
    p->ins[p->n].ndeps++;
    return 0;
}

/* Start a new instruction of agent a (not yet counted in p->n), tagged with a->mk when
 * the run marks. */
static tt__sinst *begin_inst(const tt__sim *s, agst *a)
{
    tt__sprog *p = a->p;
    if (s->max_insts > 0 && (int64_t)p->n >= s->max_insts) return NULL;   /* tt__sim_build says */
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 256;
        tt__sinst *ni = realloc(p->ins, nc * sizeof *ni);
        if (!ni) return NULL;
        p->ins = ni;
        p->cap = nc;
    }
    if (s->mark_mode) {
        if (p->n >= p->capmk) {
            int32_t *nm = realloc(p->mk, p->cap * sizeof *nm);
            if (!nm) return NULL;
            p->mk = nm;
            p->capmk = p->cap;
        }
        p->mk[p->n] = a->mk;
        if (a->mk >= p->nmk) p->nmk = a->mk + 1;
    }
    tt__sinst *in = &p->ins[p->n];
    memset(in, 0, sizeof *in);
    in->dep_off = (uint32_t)p->ndeps;
    in->slot = -1;
    in->op = -1;
    return in;
}

void tt__sim_set_grid(tt__sim *s, int64_t gp)
{
    const tt_kernel *k = s->t->kernel;
    s->gen++;   /* cached trip counts are stale */
    for (size_t d = k->ngrid; d-- > 0;) {
        int64_t e = s->grid_ext[d] > 0 ? s->grid_ext[d] : 1;
        s->slots[k->grid[d].slot] = gp % e;
        gp /= e;
    }
}

/* Evaluate (or take from the cache) the trip count and stages of loop o at the current grid
 * point.  Returns -1 when the trip count can not be evaluated. */
static int64_t loop_eval(tt__sim *s, const tt_op *o, int64_t *stages)
{
    int id = o->u.loop.id;
    if (s->loop_gen[id] != s->gen) {
        int64_t v = 0, st = 1;
        if (tt_expr_eval(o->u.loop.trip, s->slots, &v) != TT_OK) v = -1;
        else if (v < 0) v = 0;
        if (o->u.loop.stages && tt_expr_eval(o->u.loop.stages, s->slots, &st) != TT_OK) st = 1;
        s->loop_trip[id] = v;
        s->loop_stages[id] = st;
        s->loop_gen[id] = s->gen;
    }
    if (stages) *stages = s->loop_stages[id];
    return s->loop_trip[id];
}

static int64_t eval_trip(tt__sim *s, const tt_op *o)
{
    int64_t v = loop_eval(s, o, NULL);
    if (v < 0) return -1;
    if (o->u.loop.id == s->trunc_loop) v = v > s->trunc_delta ? v - s->trunc_delta : 0;
    return v;
}

/* Find loop `id` in a body. */
static const tt_op *find_loop(const tt_op *body, size_t n, int id)
{
    for (size_t i = 0; i < n; i++) {
        if (body[i].kind != TT_OP_FOR) continue;
        if (body[i].u.loop.id == id) return &body[i];
        const tt_op *r = find_loop(body[i].u.loop.body, body[i].u.loop.nbody, id);
        if (r) return r;
    }
    return NULL;
}

int64_t tt__sim_warmup(tt__sim *s, int loop_id)
{
    const tt_kernel *k = s->t->kernel;
    const tt_op *o = find_loop(k->body, k->nbody, loop_id);
    /* Measured on FlashAttention / GEMM waves (docs/simulator.md): the bandwidth shares and
     * DMA queues settle within ~16 iterations, a stages-deep pipeline within ~stages + 2;
     * the shortcut checks linearity on top of this estimate. */
    int64_t w = 16, st = 1, maxc = 1;
    if (!o) return w;
    if (o->u.loop.stages && tt_expr_eval(o->u.loop.stages, s->slots, &st) != TT_OK) st = 1;
    for (size_t b = 0; b < s->t->nbuffers; b++)
        if (s->copies[b] > maxc) maxc = s->copies[b];
    if (st > 1 && st + 2 > w) w = st + 2;
    if (maxc + 2 > w) w = maxc + 2;
    return w;
}

static void sig_walk(tt__sim *s, const tt_op *body, size_t n, size_t *li, int64_t *vals,
                     size_t cap, size_t *nv)
{
    for (size_t i = 0; i < n; i++) {
        const tt_op *o = &body[i];
        if (o->kind == TT_OP_FOR) {
            int64_t v = eval_trip(s, o);   /* with the truncation in force */
            if (*nv < cap) vals[*nv] = v;
            (*nv)++;
            sig_walk(s, o->u.loop.body, o->u.loop.nbody, li, vals, cap, nv);
            continue;
        }
        const tt__sop *so = &s->ops[(*li)++];
        if (o->kind == TT_OP_VEC && so->dyn_elems) {
            int64_t v = 0;
            if (tt_expr_eval(o->u.vec.elems, s->slots, &v) != TT_OK) v = -1;
            if (*nv < cap) vals[*nv] = v;
            (*nv)++;
        }
    }
}

size_t tt__sim_block_sig(tt__sim *s, int64_t gp, int64_t *vals, size_t cap)
{
    const tt_kernel *k = s->t->kernel;
    tt__sim_set_grid(s, gp);
    size_t li = 0, nv = 0;
    sig_walk(s, k->body, k->nbody, &li, vals, cap, &nv);
    return nv;
}

/* Slot of the current version of buffer b (-1 when never written). */
static int cur_slot(const tt__sim *s, const agst *a, int b)
{
    const bufst *bs = &a->buf[b];
    if (bs->writes == 0) return -1;
    return (int)((bs->writes - 1) % s->copies[b]);
}

static int emit_leaf(tt__sim *s, agst *a, size_t li, const tt_op *o)
{
    const tt__sop *so = &s->ops[li];
    tt__sprog *p = a->p;
    int kind = so->kind;
    int dir = 0;
    if (o->kind == TT_OP_SYNC && o->u.sync.kind == TT_SYNC_CROSS) {
        int is_from = (int)o->u.sync.from == (a->role == TT__AG_CUBE ? TT_SIDE_CUBE : TT_SIDE_VECTOR);
        kind = is_from ? TT__SI_SET : TT__SI_WAIT;
        dir = o->u.sync.from == TT_SIDE_CUBE ? TT__DIR_C2V : TT__DIR_V2C;
    }
    /* a batched hand-off (sync "every" e, TileLang's cross_interval): the producer sets after
     * iterations e-1, 2e-1, ... and the last; the consumer waits before 0, e, 2e, ... (as many) */
    if ((kind == TT__SI_SET || kind == TT__SI_WAIT) && so->every > 1) {
        int last = a->it + 1 >= a->trip;
        if (kind == TT__SI_SET ? ((a->it + 1) % so->every != 0 && !last) : a->it % so->every != 0)
            return 0;
    }
    tt__sinst *in = begin_inst(s, a);
    if (!in) return -1;
    int32_t me = (int32_t)p->n;
    in->op = (int32_t)li;
    in->unit = (uint8_t)so->unit;
    /* a cross SET is queued on the pipe of the op that produced the hand-off (as AscendC's
     * CrossCoreSetFlag<mode, pipe> after a FIXPIPE or MTE3 write), not on the scalar queue:
     * it must not hold the agent's next WAIT (and everything behind it) until the write is
     * done (docs/simulator.md, "Cross-core hand-off") */
    if (kind == TT__SI_SET && p->n > 0) in->unit = p->ins[p->n - 1].unit;
    in->kind = (uint8_t)kind;
    in->dur = so->dur;
    in->bytes = so->bytes;
    in->cap = so->cap;
    in->cost = so->cost;
    in->dir = (uint8_t)dir;
    if (o->kind == TT_OP_SYNC) in->flag = (uint8_t)(o->u.sync.flag & (TT__NFLAGS - 1));
    if (o->kind == TT_OP_VEC && so->dyn_elems) {
        int64_t el = 0;
        if (tt_expr_eval(o->u.vec.elems, s->slots, &el) != TT_OK || el < 0) el = 0;
        in->dur = tt__vec_cycles(s->tgt, so->vec_cls, (double)el / s->vec_split, (int)so->vec_esize, so->vec_rows);
    }
    if (a->bar >= 0 && add_dep(p, a->bar, a->bar_kind)) return -1;
    if (kind == TT__SI_SET || kind == TT__SI_BAR) {
        for (int u = 0; u < TT_UNIT__COUNT; u++)
            if (add_dep(p, a->last_unit[u], TT__DEP_RAW)) return -1;
    }
    /* reads */
    for (int r = 0; r < so->nr; r++) {
        int b = so->rbuf[r];
        int sl = cur_slot(s, a, b);
        if (sl < 0) continue;
        slotst *st = &a->buf[b].slot[sl];
        if (add_dep(p, st->writer, TT__DEP_RAW)) return -1;
        st->reader[so->unit] = me;
        if (b != so->wbuf) st->consumed = 1;
        in->slot = sl;
    }
    /* write */
    if (so->wbuf >= 0) {
        int b = so->wbuf;
        bufst *bs = &a->buf[b];
        int sl = cur_slot(s, a, b);
        int inplace = 0;
        for (int r = 0; r < so->nr; r++)
            if (so->rbuf[r] == b) inplace = 1;
        if (so->accum) inplace = sl >= 0 && !bs->slot[sl].consumed;
        if (!inplace || sl < 0) {
            sl = (int)(bs->writes % s->copies[b]);
            bs->writes++;
        }
        slotst *st = &bs->slot[sl];
        if (st->writer != me && add_dep(p, st->writer, TT__DEP_WAR)) return -1;
        for (int u = 0; u < TT_UNIT__COUNT; u++) {
            if (st->reader[u] >= 0 && st->reader[u] != me &&
                add_dep(p, st->reader[u], TT__DEP_WAR))
                return -1;
            st->reader[u] = -1;
        }
        st->writer = me;
        st->consumed = 0;
        in->slot = sl;
    }
    if (kind == TT__SI_WAIT || kind == TT__SI_BAR) {
        a->bar = me;
        a->bar_kind = kind == TT__SI_WAIT ? TT__DEP_FLAG : TT__DEP_RAW;
    }
    a->last_unit[so->unit] = me;
    p->n++;
    return 0;
}

static int walk(tt__sim *s, agst *a, const tt_op *body, size_t n, size_t li0);

static size_t leaves_of(const tt__sim *s, const tt_op *o)
{
    return o->kind == TT_OP_FOR ? s->loop_leaves[o->u.loop.id] : 1;
}

/* A loop with stages >= 2 whose body waits for the other side: software-pipeline it as
 * TileLang's T.Pipelined does for mix kernels.  The body (for this side) is cut before each
 * cross WAIT into segments 0..K-1; segment k of iteration i is issued in slot
 * i + k * (stages - 1), and within a slot the segments go in order k = 0, 1, ...  So the
 * producer part of iteration i + stages - 1 is issued before the consumer part of
 * iteration i, and the two sides overlap through the GM workspace ring. */
static int walk_pipelined(tt__sim *s, agst *a, const tt_op *o, int64_t trip, int64_t stages,
                          size_t li0, int side, int marks)
{
    const tt_op *body = o->u.loop.body;
    size_t n = o->u.loop.nbody;
    size_t cut[TT_TMPL_MAX_OPS / 8 + 2], lic[TT_TMPL_MAX_OPS / 8 + 2];
    size_t ncut = 0, li = li0;
    cut[ncut] = 0;
    lic[ncut++] = li0;
    for (size_t j = 0; j < n; j++) {
        const tt_op *c = &body[j];
        if (j > 0 && c->kind == TT_OP_SYNC && c->u.sync.kind == TT_SYNC_CROSS &&
            (int)c->u.sync.to == side && ncut < sizeof cut / sizeof cut[0] - 1) {
            cut[ncut] = j;
            lic[ncut++] = li;
        }
        li += leaves_of(s, c);
    }
    cut[ncut] = n;
    lic[ncut] = li;
    int64_t lag = stages - 1;
    int64_t slots = trip + (int64_t)(ncut - 1) * lag;
    int64_t it0 = a->it, trip0 = a->trip;
    a->trip = trip;
    for (int64_t t = 0; t < slots; t++)
        for (size_t k = 0; k < ncut; k++) {
            int64_t i = t - (int64_t)k * lag;
            if (i < 0 || i >= trip) continue;
            a->it = i;
            if (marks) a->mk = (int32_t)i;
            int rc = walk(s, a, body + cut[k], cut[k + 1] - cut[k], lic[k]);
            if (rc) return rc;
        }
    a->it = it0;
    a->trip = trip0;
    return 0;
}

/* 1 when the loop body (directly) has a cross sync that this side waits on. */
static int waits_in(const tt_op *o, int side)
{
    for (size_t j = 0; j < o->u.loop.nbody; j++) {
        const tt_op *c = &o->u.loop.body[j];
        if (c->kind == TT_OP_SYNC && c->u.sync.kind == TT_SYNC_CROSS && (int)c->u.sync.to == side)
            return 1;
    }
    return 0;
}

static int walk(tt__sim *s, agst *a, const tt_op *body, size_t n, size_t li0)
{
    size_t li = li0;
    int side = a->role == TT__AG_CUBE ? TT_SIDE_CUBE : TT_SIDE_VECTOR;
    for (size_t i = 0; i < n; i++) {
        const tt_op *o = &body[i];
        if (o->kind == TT_OP_FOR) {
            int64_t trip = eval_trip(s, o);
            if (trip < 0) return -2;
            int64_t stages = 1;
            loop_eval(s, o, &stages);
            int marks = s->mark_mode == TT__MK_LOOP && o->u.loop.id == s->mark_loop;
            if (stages >= 2 && s->pipeline_mix && waits_in(o, side)) {
                int rc = walk_pipelined(s, a, o, trip, stages, li, side, marks);
                if (rc) return rc;
            } else {
                int64_t it0 = a->it, trip0 = a->trip;
                a->trip = trip;
                for (int64_t it = 0; it < trip; it++) {
                    a->it = it;
                    if (marks) a->mk = (int32_t)it;
                    int rc = walk(s, a, o->u.loop.body, o->u.loop.nbody, li);
                    if (rc) return rc;
                }
                a->it = it0;
                a->trip = trip0;
            }
            if (marks) a->mk = -1;
            li += s->loop_leaves[o->u.loop.id];
            continue;
        }
        int mine;
        if (o->kind == TT_OP_SYNC && o->u.sync.kind == TT_SYNC_CROSS)
            mine = (int)o->u.sync.from == side || (int)o->u.sync.to == side;
        else
            mine = (int)o->side == side;
        if (mine && emit_leaf(s, a, li, o)) return -1;
        li++;
    }
    return 0;
}

/* Why begin_inst() gave no instruction: the program reached s->max_insts (TT_ELIMIT, with
 * the reason) or memory ran out. */
static tt_rc build_failed(const tt__sim *s, const tt__sprog *p, char *reason, size_t cap)
{
    if (s->max_insts > 0 && (int64_t)p->n >= s->max_insts) {
        snprintf(reason, cap, "more than %lld instructions in one core's program (a program "
                 "is built whole before it runs: max_events, at most %d)",
                 (long long)s->max_insts, TT_SIM_MAX_PROGRAM_INSTS);
        return TT_ELIMIT;
    }
    return TT_ENOMEM;
}

tt_rc tt__sim_build(tt__sim *s, const int64_t *gp, size_t ngp, tt__sprog progs[TT__AG__COUNT],
                    char *reason, size_t cap)
{
    const tt_template *t = s->t;
    tt_rc rc = TT_OK;
    agst ag[TT__AG__COUNT];
    memset(ag, 0, sizeof ag);
    for (int r = 0; r < TT__AG__COUNT; r++) {
        ag[r].role = r;
        ag[r].p = &progs[r];
        ag[r].bar = -1;
        ag[r].mk = -1;
        for (int u = 0; u < TT_UNIT__COUNT; u++) ag[r].last_unit[u] = -1;
        if (!s->has_side[r]) continue;
        ag[r].buf = calloc(t->nbuffers ? t->nbuffers : 1, sizeof *ag[r].buf);
        if (!ag[r].buf) { rc = TT_ENOMEM; goto out; }
        for (size_t b = 0; b < t->nbuffers; b++) {
            ag[r].buf[b].slot = malloc((size_t)s->copies[b] * sizeof(slotst));
            if (!ag[r].buf[b].slot) { rc = TT_ENOMEM; goto out; }
            for (int64_t c = 0; c < s->copies[b]; c++) {
                slotst *st = &ag[r].buf[b].slot[c];
                st->writer = -1;
                st->consumed = 0;
                for (int u = 0; u < TT_UNIT__COUNT; u++) st->reader[u] = -1;
            }
        }
    }
    for (size_t g = 0; g < ngp; g++) {
        tt__sim_set_grid(s, gp[g]);
        for (int r = 0; r < TT__AG__COUNT; r++) {
            if (!s->has_side[r]) continue;
            ag[r].mk = s->mark_mode == TT__MK_POINTS ? (int32_t)g : -1;
            if (s->block_cycles > 0) {   /* dispatch + scalar prologue: the block waits for it */
                tt__sinst *in = begin_inst(s, &ag[r]);
                if (!in) { rc = build_failed(s, ag[r].p, reason, cap); goto out; }
                in->unit = TT_UNIT_S;
                in->kind = TT__SI_FIXED;
                in->dur = s->block_cycles;
                ag[r].bar = (int32_t)ag[r].p->n;
                ag[r].bar_kind = TT__DEP_RAW;
                ag[r].last_unit[TT_UNIT_S] = ag[r].bar;
                ag[r].p->n++;
            }
            int w = walk(s, &ag[r], t->kernel->body, t->kernel->nbody, 0);
            if (w == -1) { rc = build_failed(s, ag[r].p, reason, cap); goto out; }
            if (w == -2) {
                snprintf(reason, cap, "a loop trip count cannot be evaluated at block %lld",
                         (long long)gp[g]);
                rc = TT_EDOMAIN;
                goto out;
            }
        }
    }
out:
    for (int r = 0; r < TT__AG__COUNT; r++) {
        if (ag[r].buf)
            for (size_t b = 0; b < t->nbuffers; b++) free(ag[r].buf[b].slot);
        free(ag[r].buf);
    }
    if (rc == TT_ENOMEM) snprintf(reason, cap, "out of memory");
    return rc;
}

static double count_body(tt__sim *s, const tt_op *body, size_t n)
{
    double c = 0;
    for (size_t i = 0; i < n; i++) {
        const tt_op *o = &body[i];
        if (o->kind == TT_OP_FOR) {
            int64_t trip = eval_trip(s, o);
            if (trip > 0) c += (double)trip * count_body(s, o->u.loop.body, o->u.loop.nbody);
        } else {
            c += o->kind == TT_OP_SYNC ? 2 : 1;
        }
    }
    return c;
}

double tt__sim_count(tt__sim *s, int64_t gp, int *loop_id, int64_t *trip)
{
    const tt_kernel *k = s->t->kernel;
    tt__sim_set_grid(s, gp);
    double c = 0, best = -1;
    *loop_id = -1;
    *trip = 0;
    for (size_t i = 0; i < k->nbody; i++) {
        const tt_op *o = &k->body[i];
        if (o->kind != TT_OP_FOR) {
            c += o->kind == TT_OP_SYNC ? 2 : 1;
            continue;
        }
        int64_t tr = eval_trip(s, o);
        double inner = count_body(s, o->u.loop.body, o->u.loop.nbody);
        double cl = tr > 0 ? (double)tr * inner : 0;
        c += cl;
        if (cl > best) {
            best = cl;
            *loop_id = o->u.loop.id;
            *trip = tr;
        }
    }
    return c;
}

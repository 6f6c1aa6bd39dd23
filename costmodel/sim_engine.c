/* SPDX-License-Identifier: MIT
 * sim_engine.c - event loop of one wave: per-unit in-order queues, dependencies, cross-core
 * flags, and a progress-based fluid model of the chip's shared GM bandwidth.
 *
 * Time is in cycles (double).  An instruction starts when its unit is free, its issue time
 * (issue_cycles per instruction, in program order) has come, its dependencies are done
 * (+ flag_cycles when the producer is another unit of the same core) and, for a WAIT, when
 * the matching SET of the other side is visible (+ cross_sync_cycles).  A GM transfer
 * first waits its path latency, then moves its bytes at a rate recomputed whenever a
 * transfer starts or ends: max-min fair shares of the shared memory (capacity 1 per cycle,
 * each byte costing `cost` of it), each capped by the core's path rate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

enum { EV_DONE, EV_DATA };

typedef struct ev {          /* ordered by (t, seq): seq is unique, so the order is total */
    double t;
    uint64_t seq;
    int32_t agent;
    uint32_t it;              /* instruction << 1 | EV_* */
} ev;

typedef struct xfer {
    int32_t agent, inst;
    double rem, rate, cap, cost, w, t0;
    double d;                 /* demanded fraction of the shared memory: cap * cost */
    double rate_d;            /* the rate when it gets d: d / cost (one division per transfer) */
} xfer;

typedef struct agent {
    const tt__sprog *p;
    int group, role;
    int32_t partner;          /* the other agent of its group, -1 none */
    int is_rep, traced;       /* its group is the reported / the traced one */
    double weight;            /* physical cores this agent stands for (bandwidth share) */
    double *done;             /* completion time per instruction, -1 when not done */
    double *start;            /* start time per instruction */
    int32_t *q;               /* per-unit queues, concatenated */
    size_t qoff[TT_UNIT__COUNT + 1];
    size_t head[TT_UNIT__COUNT];    /* next entry of each queue (an index into q) */
    int busy[TT_UNIT__COUNT];       /* a fixed-duration op runs */
    int dat[TT_UNIT__COUNT];        /* a GM transfer is moving data */
    /* GM transfers issued but not yet moving data (in their latency, or waiting for the
     * data channel), in issue order: at most s->dma_depth of them */
    int32_t fifo[TT_UNIT__COUNT][TT__DMA_MAX];
    int fhead[TT_UNIT__COUNT], fn[TT_UNIT__COUNT];
    uint8_t *latdone;               /* per instruction: its latency phase is over */
    int32_t wait_on[TT_UNIT__COUNT];    /* the unfinished dependency that blocked the head */
    /* per instruction: the units whose head is blocked on it (bit u set with wait_on[u]; a
     * unit re-blocks only after that dependency is done, so the bits are exact until then) */
    uint8_t *waiters;
    /* dependencies of the head already found done (they stay done): where the scan resumes,
     * the latest ready time among them and its reason */
    uint16_t dcur[TT_UNIT__COUNT];
    int8_t dwhy[TT_UNIT__COUNT];
    double dready[TT_UNIT__COUNT];
    double unit_free[TT_UNIT__COUNT];   /* when the unit last became able to accept an op */
    double busy_end[TT_UNIT__COUNT];    /* end of the union of its busy intervals */
    double last_end;
    int64_t waits[2][TT__NFLAGS];   /* waits consumed per direction and flag */
    size_t remaining;
    int marked;                     /* its group is marked (tt__sgroup.marked) */
} agent;

/* An agent's per-instruction arrays (see agent), with room for cap instructions. */
typedef struct abuf {
    double *done, *start;
    int32_t *q;
    uint8_t *latdone, *waiters;
    size_t cap;
} abuf;

/* tt__sim.scratch: the agents' arrays, kept from wave to wave of a run.  A run simulates
 * dozens of waves of programs of similar size (anchors, marked runs, fill waves);
 * allocating and faulting in fresh arrays for each took ~4 % of a causal FlashAttention
 * config's time. */
struct tt__sscratch {
    abuf *ab;
    size_t nab;
};

struct tt__sscratch *tt__sim_scratch_new(void)
{
    return calloc(1, sizeof(struct tt__sscratch));
}

static void scratch_clear(struct tt__sscratch *sc)
{
    for (size_t k = 0; k < sc->nab; k++) {
        abuf *b = &sc->ab[k];
        free(b->done);
        free(b->start);
        free(b->q);
        free(b->latdone);
        free(b->waiters);
    }
    free(sc->ab);
    sc->ab = NULL;
    sc->nab = 0;
}

void tt__sim_scratch_free(struct tt__sscratch *sc)
{
    if (!sc) return;
    scratch_clear(sc);
    free(sc);
}

/* Room for the arrays of n agents (their contents are set by agent_init). */
static int scratch_agents(struct tt__sscratch *sc, size_t n)
{
    if (n <= sc->nab) return 0;
    abuf *nb = realloc(sc->ab, n * sizeof *nb);
    if (!nb) return -1;
    memset(nb + sc->nab, 0, (n - sc->nab) * sizeof *nb);
    sc->ab = nb;
    sc->nab = n;
    return 0;
}

/* Room for n + 1 instructions in b. */
static int abuf_reserve(abuf *b, size_t n)
{
    if (n + 1 <= b->cap) return 0;
    size_t nc = n + 1 > 2 * b->cap ? n + 1 : 2 * b->cap;
    double *d = realloc(b->done, nc * sizeof *d);
    if (d) b->done = d;
    double *st = realloc(b->start, nc * sizeof *st);
    if (st) b->start = st;
    int32_t *q = realloc(b->q, nc * sizeof *q);
    if (q) b->q = q;
    uint8_t *l = realloc(b->latdone, nc);
    if (l) b->latdone = l;
    uint8_t *w = realloc(b->waiters, nc);
    if (w) b->waiters = w;
    if (!d || !st || !q || !l || !w) return -1;
    b->cap = nc;
    return 0;
}

typedef struct flagq {        /* visible times of the sets of one group, direction, flag */
    double *t;
    size_t n, cap;
} flagq;

typedef struct eng {
    const tt__sim *s;
    tt__sgroup *g;
    size_t ng, rep;
    agent *ag;
    size_t nag;
    flagq *fl;                /* [group][dir][flag] */
    ev *heap;
    size_t nheap, capheap;
    uint64_t seq;
    xfer *x;
    size_t nx, capx;
    int32_t *order;
    double now;
    tt__swave *out;
    int64_t *pleft;           /* marked groups: instructions of each mark unit not yet done */
    double *pfig;             /* ... and the figures of each unit ([group][unit][TT__NFIG]) */
    int oom;
    int dma_depth;            /* s->dma_depth, and the target's overheads, at hand */
    double flag_cycles, issue_cycles;
} eng;

static int heap_less(const ev *a, const ev *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int heap_push(eng *e, double t, int32_t agent_i, int32_t inst, unsigned type)
{
    if (e->nheap == e->capheap) {
        size_t nc = e->capheap ? e->capheap * 2 : 256;
        ev *nh = realloc(e->heap, nc * sizeof *nh);
        if (!nh) return -1;
        e->heap = nh;
        e->capheap = nc;
    }
    size_t i = e->nheap++;
    ev v = {t, e->seq++, agent_i, (uint32_t)inst << 1 | type};
    while (i > 0) {
        size_t par = (i - 1) / 2;
        if (!heap_less(&v, &e->heap[par])) break;
        e->heap[i] = e->heap[par];
        i = par;
    }
    e->heap[i] = v;
    return 0;
}

static ev heap_pop(eng *e)
{
    ev top = e->heap[0];
    ev last = e->heap[--e->nheap];
    size_t i = 0, n = e->nheap;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const ev *mv = &last;
        if (l < n && heap_less(&e->heap[l], mv)) { m = l; mv = &e->heap[l]; }
        if (r < n && heap_less(&e->heap[r], mv)) { m = r; }
        if (m == i) break;
        e->heap[i] = e->heap[m];
        i = m;
    }
    if (n) e->heap[i] = last;
    return top;
}

/* Max-min fair shares of the shared memory among the transfers in flight. */
static void recompute_rates(eng *e)
{
    size_t n = e->nx, m = 0;
    double W = 0;
    for (size_t i = 0; i < n; i++) {
        xfer *x = &e->x[i];
        if (x->cost <= 0) {
            x->rate = x->cap;
            continue;
        }
        e->order[m++] = (int32_t)i;
        W += x->w;
    }
    /* insertion sort by demanded fraction cap * cost (ties by index: deterministic) */
    for (size_t i = 1; i < m; i++) {
        int32_t v = e->order[i];
        double dv = e->x[v].d;
        size_t j = i;
        while (j > 0) {
            int32_t u = e->order[j - 1];
            double du = e->x[u].d;
            if (du < dv || (du == dv && u < v)) break;
            e->order[j] = u;
            j--;
        }
        e->order[j] = v;
    }
    double R = 1.0;
    for (size_t i = 0; i < m; i++) {
        xfer *x = &e->x[e->order[i]];
        double share = W > 0 ? R / W : 0;
        double d = x->d;
        double f = d <= share ? d : share;
        x->rate = d <= share ? x->rate_d : f / x->cost;
        R -= x->w * f;
        if (R < 0) R = 0;
        W -= x->w;
    }
}

static void advance(eng *e, double t)
{
    double dt = t - e->now;
    if (dt > 0)
        for (size_t i = 0; i < e->nx; i++) {
            e->x[i].rem -= e->x[i].rate * dt;
            if (e->x[i].rem < 0) e->x[i].rem = 0;
        }
    if (t > e->now) e->now = t;
}

static flagq *flag_of(eng *e, int group, int dir, int flag)
{
    return &e->fl[((size_t)group * 2 + (size_t)dir) * TT__NFLAGS + (size_t)flag];
}

/* Marks: the figures of the mark unit (grid point or loop iteration) of instruction i of a
 * marked agent (e->pfig; figure 0 is when the unit's last instruction completed), NULL when
 * the instruction has none. */
static double *unit_figs(eng *e, const agent *a, int32_t i, size_t *pj)
{
    int32_t j = a->p->mk[i];
    if (j < 0) return NULL;
    size_t r = (size_t)a->group * e->out->nmark + (size_t)j;
    if (pj) *pj = r;
    return &e->pfig[r * TT__NFIG];
}

/* Instruction i of a marked agent is done: the time of its unit when it was the last one
 * (over both agents of the group). */
static void mark_done(eng *e, const agent *a, int32_t i, double t)
{
    size_t r;
    double *f = unit_figs(e, a, i, &r);
    if (f && --e->pleft[r] == 0) f[0] = t;
}

/* Add v to figure k (TT__NFIG order) of the unit of instruction i of a marked agent. */
static void mark_add(eng *e, const agent *a, int32_t i, size_t k, double v)
{
    double *f = unit_figs(e, a, i, NULL);
    if (f) f[k] += v;
}

#define FIG_BUSY(role, unit) (1 + (size_t)(role) * TT_UNIT__COUNT + (size_t)(unit))
#define FIG_STALL(k) (1 + (size_t)TT__AG__COUNT * TT_UNIT__COUNT + (size_t)(k))

static void record(eng *e, agent *a, int32_t i, double end)
{
    const tt__sinst *in = &a->p->ins[i];
    double st = a->start[i];
    /* busy = union of the unit's intervals (a transfer's latency may overlap the previous
     * transfer's data phase); the trace shows the same non-overlapping occupancy */
    if (st < a->busy_end[in->unit]) st = a->busy_end[in->unit];
    if (st > end) st = end;
    if (end > a->busy_end[in->unit]) a->busy_end[in->unit] = end;
    if (a->is_rep) e->out->busy[a->role][in->unit] += end - st;
    if (a->marked) mark_add(e, a, i, FIG_BUSY(a->role, in->unit), end - st);
    if (!a->traced) return;
    tt__swave *w = e->out;
    if (w->ntrace == w->captrace) {
        size_t nc = w->captrace ? w->captrace * 2 : 256;
        tt__trec *nt = realloc(w->trace, nc * sizeof *nt);
        if (!nt) { e->oom = 1; return; }
        w->trace = nt;
        w->captrace = nc;
    }
    tt__trec *r = &w->trace[w->ntrace++];
    r->start = st;
    r->end = end;
    r->op = in->op;
    r->slot = in->slot;
    r->unit = in->unit;
    r->agent = (uint8_t)a->role;
    r->kind = in->kind;
}

#define ALL_UNITS ((1u << TT_UNIT__COUNT) - 1)
_Static_assert(TT_UNIT__COUNT <= 8, "agent.waiters holds one bit per unit");

/* Try to start the head instruction of the units in `mask` of agent ai (the units whose
 * head may have become ready: see on_done), lowest unit first. */
static int try_issue(eng *e, int32_t ai, unsigned mask)
{
    agent *a = &e->ag[ai];
    const tt__sinst *ins = a->p->ins;
    const uint32_t *deps = a->p->deps;
    const double *done = a->done;
    const double flag_cycles = e->flag_cycles;
    while (mask) {
        int u = __builtin_ctz(mask);
        mask &= mask - 1;
        if (a->busy[u] || a->head[u] >= a->qoff[u + 1]) continue;
        int32_t i = a->q[a->head[u]];
        const tt__sinst *in = &ins[i];
        int gm = in->kind == TT__SI_GM;
        if (gm ? a->fn[u] >= e->dma_depth : (a->fn[u] || a->dat[u]))
            continue;                       /* no free transfer slot / the unit is moving data */
        if (a->wait_on[u] >= 0 && done[a->wait_on[u]] < 0) continue;
        double ready = a->dready[u];
        int why = a->dwhy[u];
        const uint32_t *dw = in->ndeps ? deps + in->dep_off : NULL;   /* deps may be NULL */
        unsigned d = a->dcur[u], nd = in->ndeps;
        for (; d < nd; d++) {
            uint32_t w = dw[d];
            double dt = done[TT__DEP_IDX(w)];
            if (dt < 0) break;
            if (TT__DEP_CROSS(w)) dt += flag_cycles;
            if (dt > ready || why < 0) {
                if (dt > ready) ready = dt;
                why = TT__DEP_KIND(w);
            }
        }
        if (d < nd) {                       /* blocked on an unfinished dependency */
            int32_t j = TT__DEP_IDX(dw[d]);
            a->wait_on[u] = j;
            a->waiters[j] |= (uint8_t)(1u << u);
            a->dcur[u] = (uint16_t)d;
            a->dready[u] = ready;
            a->dwhy[u] = (int8_t)why;
            continue;
        }
        if (in->kind == TT__SI_WAIT) {
            flagq *f = flag_of(e, a->group, in->dir, in->flag);
            int64_t k = a->waits[in->dir][in->flag];
            if ((size_t)k >= f->n) {   /* the matching set has not happened yet */
                a->dcur[u] = in->ndeps;
                a->dready[u] = ready;
                a->dwhy[u] = (int8_t)why;
                continue;
            }
            double ft = f->t[k];
            if (ft > ready) { ready = ft; why = TT__DEP_FLAG; }
            a->waits[in->dir][in->flag]++;
        }
        double base = a->unit_free[u];
        double issue = (double)(i + 1) * e->issue_cycles;
        if (issue > base) base = issue;
        double st = base;
        if (ready > st) st = ready;
        if (e->now > st) st = e->now;
        if (a->is_rep && st > base && why >= 0) {
            int stall = why == TT__DEP_RAW ? TT_STALL_DATA
                      : why == TT__DEP_WAR ? TT_STALL_SLOT : TT_STALL_FLAG;
            e->out->stall[stall] += st - base;
            if (a->marked) mark_add(e, a, i, FIG_STALL(stall), st - base);
        }
        if (gm) {
            a->fifo[u][(a->fhead[u] + a->fn[u]) % TT__DMA_MAX] = i;
            a->fn[u]++;
            a->latdone[i] = 0;
            mask |= 1u << u;                /* the unit may take another transfer now */
        } else {
            a->busy[u] = 1;
        }
        a->head[u]++;
        a->dcur[u] = 0;
        a->dready[u] = 0;
        a->dwhy[u] = -1;
        a->start[i] = st;
        if (heap_push(e, st + in->dur, ai, i, gm ? EV_DATA : EV_DONE)) return -1;
    }
    return 0;
}

static int on_done(eng *e, int32_t ai, int32_t i, double t)
{
    agent *a = &e->ag[ai];
    const tt__sinst *in = &a->p->ins[i];
    a->done[i] = t;
    if (in->kind != TT__SI_GM) {
        a->busy[in->unit] = 0;
        a->unit_free[in->unit] = t;
    }
    if (t > a->last_end) a->last_end = t;
    a->remaining--;
    record(e, a, i, t);
    if (a->marked) mark_done(e, a, i, t);
    if (in->kind == TT__SI_SET) {
        flagq *f = flag_of(e, a->group, in->dir, in->flag);
        if (f->n == f->cap) {
            size_t nc = f->cap ? f->cap * 2 : 64;
            double *nt = realloc(f->t, nc * sizeof *nt);
            if (!nt) return -1;
            f->t = nt;
            f->cap = nc;
        }
        f->t[f->n++] = t + e->s->tgt->cross_sync_cycles;
        if (a->partner >= 0 && try_issue(e, a->partner, ALL_UNITS)) return -1;
        return try_issue(e, ai, ALL_UNITS);
    }
    /* A head can become ready only when its unit frees up or the dependency it was blocked
     * on finishes (a WAIT's flag is handled above, a free transfer slot in start_data). */
    return try_issue(e, ai, 1u << in->unit | a->waiters[i]);
}

/* Latency of GM transfer i is over: it takes the unit's data channel, or waits for it. */
static int latency_done(eng *e, int32_t ai, int32_t i);

static int start_data(eng *e, int32_t ai, int32_t i)
{
    agent *a = &e->ag[ai];
    const tt__sinst *in = &a->p->ins[i];
    a->dat[in->unit] = 1;
    a->unit_free[in->unit] = e->now;      /* the next transfer may start its latency */
    if (in->bytes <= 0) {
        a->dat[in->unit] = 0;
        return on_done(e, ai, i, e->now);
    }
    if (e->nx == e->capx) {
        size_t nc = e->capx ? e->capx * 2 : 64;
        xfer *nx = realloc(e->x, nc * sizeof *nx);
        int32_t *no = realloc(e->order, nc * sizeof *no);
        if (nx) e->x = nx;
        if (no) e->order = no;
        if (!nx || !no) return -1;
        e->capx = nc;
    }
    xfer *x = &e->x[e->nx++];
    x->agent = ai;
    x->inst = i;
    x->rem = in->bytes;
    x->cap = in->cap;
    x->cost = in->cost;
    x->w = a->weight;
    x->t0 = e->now;
    x->rate = in->cap;
    x->d = in->cap * in->cost;
    x->rate_d = in->cost > 0 ? x->d / in->cost : in->cap;
    recompute_rates(e);
    return try_issue(e, ai, 1u << in->unit);   /* a transfer slot of the unit is free */
}

/* Give the data channel of unit u to the oldest issued transfer if its latency is over. */
static int pump(eng *e, int32_t ai, int u)
{
    agent *a = &e->ag[ai];
    if (a->dat[u] || !a->fn[u]) return 0;
    int32_t j = a->fifo[u][a->fhead[u]];
    if (!a->latdone[j]) return 0;
    a->fhead[u] = (a->fhead[u] + 1) % TT__DMA_MAX;
    a->fn[u]--;
    return start_data(e, ai, j);
}

static int latency_done(eng *e, int32_t ai, int32_t i)
{
    agent *a = &e->ag[ai];
    a->latdone[i] = 1;
    return pump(e, ai, a->p->ins[i].unit);
}

/* GM transfer i has moved its last byte. */
static int data_done(eng *e, int32_t ai, int32_t i, double t)
{
    agent *a = &e->ag[ai];
    int u = a->p->ins[i].unit;
    a->dat[u] = 0;
    if (on_done(e, ai, i, t)) return -1;
    return pump(e, ai, u);
}

static void describe_deadlock(eng *e, char *reason, size_t cap)
{
    for (size_t k = 0; k < e->nag; k++) {
        agent *a = &e->ag[k];
        if (!a->remaining) continue;
        for (int u = 0; u < TT_UNIT__COUNT; u++) {
            if (a->busy[u] || a->head[u] >= a->qoff[u + 1]) continue;
            int32_t i = a->q[a->head[u]];
            const tt__sinst *in = &a->p->ins[i];
            if (in->kind != TT__SI_WAIT) continue;
            const tt__sop *so = in->op >= 0 ? &e->s->ops[in->op] : NULL;
            snprintf(reason, cap,
                     "%s side waits at %s for cross flag %d from the %s side (wait #%lld), "
                     "which is never set",
                     a->role == TT__AG_CUBE ? "cube" : "vector", so ? so->op->path : "?",
                     in->flag, in->dir == TT__DIR_C2V ? "cube" : "vector",
                     (long long)a->waits[in->dir][in->flag] + 1);
            return;
        }
    }
    snprintf(reason, cap, "the program stops with instructions left that can never start");
}

void tt__swave_free(tt__swave *w)
{
    if (!w) return;
    free(w->trace);
    w->trace = NULL;
    w->ntrace = w->captrace = 0;
    free(w->mark);
    free(w->mcount);
    free(w->gend);
    w->mark = NULL;
    w->mcount = NULL;
    w->gend = NULL;
    w->nmark = w->ngroups = 0;
}

/* The agents' arrays belong to the scratch (tt__sim_wave). */
static void eng_free(eng *e)
{
    free(e->ag);
    if (e->fl)
        for (size_t i = 0; i < e->ng * 2 * TT__NFLAGS; i++) free(e->fl[i].t);
    free(e->fl);
    free(e->heap);
    free(e->x);
    free(e->order);
    free(e->pleft);
    free(e->pfig);
}

/* Set up the marks of the marked groups (tt__sgroup.marked): per group and mark unit, the
 * instructions left and the figures.  Returns 0, or -1 when out of memory. */
static int marks_init(eng *e)
{
    size_t nmk = 0;
    for (size_t k = 0; k < e->nag; k++) {
        agent *a = &e->ag[k];
        if (!e->g[a->group].marked || !a->p->mk) continue;
        a->marked = 1;
        if ((size_t)a->p->nmk > nmk) nmk = (size_t)a->p->nmk;
    }
    if (!nmk) return 0;
    tt__swave *w = e->out;
    size_t rows = e->ng * nmk;
    e->pleft = calloc(rows, sizeof *e->pleft);
    e->pfig = calloc(rows * TT__NFIG, sizeof *e->pfig);
    w->mark = calloc(rows * TT__NFIG, sizeof *w->mark);
    w->mcount = calloc(e->ng, sizeof *w->mcount);
    w->gend = calloc(e->ng, sizeof *w->gend);
    if (!e->pleft || !e->pfig || !w->mark || !w->mcount || !w->gend) return -1;
    w->nmark = nmk;
    w->ngroups = e->ng;
    for (size_t k = 0; k < e->nag; k++) {
        const agent *a = &e->ag[k];
        if (!a->marked) continue;
        for (size_t i = 0; i < a->p->n; i++)
            if (a->p->mk[i] >= 0) e->pleft[(size_t)a->group * nmk + (size_t)a->p->mk[i]]++;
        if (a->p->nmk > w->mcount[a->group]) w->mcount[a->group] = a->p->nmk;
    }
    return 0;
}

/* The marks' figures of units 0..j (cumulative) and the groups' ends, after the run. */
static void marks_finish(eng *e)
{
    tt__swave *w = e->out;
    for (size_t g = 0; g < w->ngroups; g++)
        for (size_t j = 0; j < w->nmark; j++) {
            double *m = &w->mark[(g * w->nmark + j) * TT__NFIG];
            const double *prev = j ? m - TT__NFIG : NULL;   /* the mark before, same group */
            const double *f = &e->pfig[(g * w->nmark + j) * TT__NFIG];
            m[0] = f[0] > 0 || !prev ? f[0] : prev[0];   /* a unit without instructions */
            for (size_t k = 1; k < TT__NFIG; k++) m[k] = f[k] + (prev ? prev[k] : 0);
        }
    for (size_t k = 0; k < e->nag; k++) {
        const agent *a = &e->ag[k];
        if (a->marked && a->last_end > w->gend[a->group]) w->gend[a->group] = a->last_end;
    }
}

static int agent_init(agent *a, const tt__sprog *p, abuf *b)
{
    a->p = p;
    a->remaining = p->n;
    if (abuf_reserve(b, p->n)) return -1;
    a->done = b->done;
    a->start = b->start;
    a->q = b->q;
    a->latdone = b->latdone;
    a->waiters = b->waiters;
    memset(a->latdone, 0, p->n + 1);
    memset(a->waiters, 0, p->n + 1);
    for (size_t i = 0; i < p->n; i++) a->done[i] = -1;
    for (int u = 0; u < TT_UNIT__COUNT; u++) {
        a->wait_on[u] = -1;
        a->dwhy[u] = -1;
    }
    size_t cnt[TT_UNIT__COUNT] = {0};
    for (size_t i = 0; i < p->n; i++) cnt[p->ins[i].unit]++;
    a->qoff[0] = 0;
    for (int u = 0; u < TT_UNIT__COUNT; u++) a->qoff[u + 1] = a->qoff[u] + cnt[u];
    for (int u = 0; u < TT_UNIT__COUNT; u++) a->head[u] = a->qoff[u];
    size_t fill[TT_UNIT__COUNT];
    for (int u = 0; u < TT_UNIT__COUNT; u++) fill[u] = a->qoff[u];
    for (size_t i = 0; i < p->n; i++) a->q[fill[p->ins[i].unit]++] = (int32_t)i;
    return 0;
}

tt_rc tt__sim_wave(const tt__sim *s, tt__sgroup *g, size_t ngroups, size_t rep,
                   int64_t max_events, tt__swave *out, char *reason, size_t cap)
{
    eng e;
    memset(&e, 0, sizeof e);
    memset(out, 0, sizeof *out);
    e.s = s;
    e.g = g;
    e.ng = ngroups;
    e.rep = rep;
    e.out = out;
    e.dma_depth = s->dma_depth;
    e.flag_cycles = s->tgt->flag_cycles;
    e.issue_cycles = s->tgt->issue_cycles;
    tt_rc rc = TT_OK;
    struct tt__sscratch local = {0}, *sc = s->scratch ? s->scratch : &local;
    e.ag = calloc(ngroups * TT__AG__COUNT + 1, sizeof *e.ag);
    e.fl = calloc(ngroups * 2 * TT__NFLAGS + 1, sizeof *e.fl);
    if (!e.ag || !e.fl || scratch_agents(sc, ngroups * TT__AG__COUNT)) { rc = TT_ENOMEM; goto out; }
    for (size_t gi = 0; gi < ngroups; gi++)
        for (int r = 0; r < TT__AG__COUNT; r++) {
            if (!g[gi].prog[r].n) continue;
            agent *a = &e.ag[e.nag++];
            a->group = (int)gi;
            a->role = r;
            a->partner = -1;
            a->is_rep = gi == rep;
            a->traced = g[gi].traced;
            if (e.nag > 1 && a[-1].group == a->group) {
                a->partner = (int32_t)e.nag - 2;
                a[-1].partner = (int32_t)e.nag - 1;
            }
            a->weight = g[gi].weight * (r == TT__AG_VEC ? s->vec_cores : 1);
            if (agent_init(a, &g[gi].prog[r], &sc->ab[e.nag - 1])) { rc = TT_ENOMEM; goto out; }
        }
    if (marks_init(&e)) { rc = TT_ENOMEM; goto out; }
    for (size_t k = 0; k < e.nag; k++)
        if (try_issue(&e, (int32_t)k, ALL_UNITS)) { rc = TT_ENOMEM; goto out; }
    int64_t events = 0;
    for (;;) {
        double th = e.nheap ? e.heap[0].t : INFINITY;
        double tg = INFINITY;
        size_t xj = 0;
        for (size_t i = 0; i < e.nx; i++) {
            double tc = e.x[i].rate > 0 ? e.now + e.x[i].rem / e.x[i].rate : INFINITY;
            if (tc < tg) { tg = tc; xj = i; }
        }
        if (th == INFINITY && tg == INFINITY) break;
        if (++events > max_events) {
            snprintf(reason, cap, "more than %lld simulation events (max_events)", (long long)max_events);
            rc = TT_ELIMIT;
            goto out;
        }
        if (s->cancel && events % TT_SIM_CANCEL_EVENTS == 0 && s->cancel(s->cancel_ctx)) {
            snprintf(reason, cap, "cancelled");
            rc = TT_ECANCELLED;
            goto out;
        }
        int r;
        if (tg < th) {
            advance(&e, tg);
            xfer x = e.x[xj];
            e.x[xj] = e.x[--e.nx];
            recompute_rates(&e);
            agent *a = &e.ag[x.agent];
            if (a->is_rep) {
                double ideal = a->p->ins[x.inst].bytes / x.cap;
                double real = tg - x.t0;
                if (real > ideal) out->stall[TT_STALL_BANDWIDTH] += real - ideal;
                if (real > ideal && a->marked)
                    mark_add(&e, a, x.inst, FIG_STALL(TT_STALL_BANDWIDTH), real - ideal);
            }
            r = data_done(&e, x.agent, x.inst, tg);
        } else {
            ev v = heap_pop(&e);
            advance(&e, v.t);
            int32_t inst = (int32_t)(v.it >> 1);
            r = (v.it & 1) == EV_DATA ? latency_done(&e, v.agent, inst) : on_done(&e, v.agent, inst, v.t);
        }
        if (r || e.oom) { rc = TT_ENOMEM; goto out; }
    }
    out->events = events;
    double end = 0;
    for (size_t k = 0; k < e.nag; k++) {
        agent *a = &e.ag[k];
        if (a->remaining) {
            describe_deadlock(&e, reason, cap);
            rc = TT_EDEADLOCK;
            goto out;
        }
        if (a->last_end > end) end = a->last_end;
    }
    out->cycles = end;
    if (out->mark) marks_finish(&e);
out:
    if (rc == TT_ENOMEM) snprintf(reason, cap, "out of memory");
    if (rc) tt__swave_free(out);
    eng_free(&e);
    scratch_clear(&local);
    return rc;
}

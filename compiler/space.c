/* SPDX-License-Identifier: MIT
 * space.c - search-space enumeration of a template with early rejection by level, counts by
 * reason, single-config checks, and mixed-radix decode/encode.
 *
 * Every check (let, constraint, buffer geometry, scope capacity) is attached to a "level":
 * the number of params that must be bound before it can be evaluated (0: inputs only).
 * Binding param i completes level i+1, whose checks then run in the order lets, constraints,
 * buffer sizes, capacities.  tt_space_check() walks the same levels in the same order, so a
 * config gets the same reason from both.
 */
#include "space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_int.h"

/* A fast path for the common trivial expressions: a constant or a bare name. */
enum { FX_EXPR, FX_SLOT, FX_CONST };
typedef struct fx {
    int kind;
    int slot;
    int64_t c;
    const tt_expr *e;
} fx;

static inline tt_rc fx_eval(const fx *f, const int64_t *slots, int64_t *out)
{
    if (f->kind == FX_SLOT) {
        *out = slots[f->slot];
        return TT_OK;
    }
    if (f->kind == FX_CONST) {
        *out = f->c;
        return TT_OK;
    }
    return tt_expr_eval(f->e, slots, out);
}

/* Reasons found by a check, packed: kind << 24 | rc << 16 | index; 0 = feasible. */
enum { R_OK, R_LET, R_CONS, R_BUF, R_SCOPE };
#define R_PACK(kind, rc, idx) (((uint32_t)(kind) << 24) | ((uint32_t)(rc) << 16) | (uint32_t)(idx))

typedef struct level {
    uint16_t *lets, *cons, *bshape, *btotal;
    size_t nlets, ncons, nbshape, nbtotal;
    unsigned scopes;          /* bit per scope that gets a buffer total at this level */
} level;

typedef struct sbuf {
    fx dims[TT_MAX_RANK];
    int rank;
    fx copies;                /* FX_CONST 1 when absent */
    tt_scope scope;
    int64_t align;
    tt_dtref dtype;
} sbuf;

struct tt_space {
    const tt_template *t;
    int has_caps;
    tt_caps caps;
    size_t np;
    level *lv;                /* np + 1 levels */
    uint16_t *pool;           /* storage of the level lists */
    uint64_t *rem;            /* rem[L]: configs below a partial config of level L */
    uint64_t total;
    sbuf *bufs;
    int64_t *slots;           /* enumeration scratch (nslots) */
    int64_t *psum;            /* (np + 1) x TT_SCOPE__COUNT partial capacity sums */
    int64_t bbytes[TT_TMPL_MAX_BUFFERS];
    /* enumeration state */
    tt_space_counts *counts;
    int reason_idx_cons[TT_TMPL_MAX_CONSTRAINTS];
    int reason_idx_scope[TT_SCOPE__COUNT];
    tt_space_visit_fn visit;
    void *ud;
    uint64_t limit;
    int stopped;
};

static fx fx_of(const tt_template *t, const tt_expr *e)
{
    fx f = {FX_EXPR, -1, 0, e};
    int64_t c;
    int s;
    if (tt_expr_const(e, &c)) {
        f.kind = FX_CONST;
        f.c = c;
        return f;
    }
    if (tt_expr_slots(e, &s, 1) == 1) {
        const char *src = tt_expr_source(e), *name = tt_tmpl_slot_name(t, (size_t)s);
        while (*src == ' ' || *src == '\t') src++;
        size_t n = name ? strlen(name) : 0;
        if (name && strncmp(src, name, n) == 0) {
            const char *r = src + n;
            while (*r == ' ' || *r == '\t') r++;
            if (*r == '\0') {
                f.kind = FX_SLOT;
                f.slot = s;
            }
        }
    }
    return f;
}

/* Level of an expression: the deepest param it needs, through lets. */
static size_t expr_level(const tt_template *t, const size_t *letlv, const tt_expr *e)
{
    int sl[TT_MAX_SLOTS];
    size_t n = tt_expr_slots(e, sl, TT_MAX_SLOTS), lv = 0;
    if (n > TT_MAX_SLOTS) n = TT_MAX_SLOTS;
    for (size_t i = 0; i < n; i++) {
        size_t s = (size_t)sl[i], l;
        if (s < t->ninputs) l = 0;
        else if (s < t->ninputs + t->nparams) l = s - t->ninputs + 1;
        else if (s < t->ninputs + t->nparams + t->nlets) l = letlv[s - t->ninputs - t->nparams];
        else l = t->nparams;
        if (l > lv) lv = l;
    }
    return lv;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

void tt_space_free(tt_space *s)
{
    if (!s) return;
    free(s->lv);
    free(s->pool);
    free(s->rem);
    free(s->bufs);
    free(s->slots);
    free(s->psum);
    free(s);
}

static tt_rc check_problem(const tt_template *t, const int64_t *ps, tt_errinfo *err)
{
    for (size_t i = 0; i < t->ninputs; i++) {
        const tt_input *in = &t->inputs[i];
        char path[160];
        tt__path(path, sizeof path, "problem.%s", in->name);
        if (in->kind == TT_INPUT_INT) {
            if (ps[i] < in->min || ps[i] > in->max)
                return tt_errf(err, TT_EPROBLEM, path, "%lld is outside [%lld, %lld]",
                               (long long)ps[i], (long long)in->min, (long long)in->max);
            continue;
        }
        size_t j = 0;
        while (j < in->ndtypes && (int64_t)in->dtypes[j] != ps[i]) j++;
        if (j == in->ndtypes)
            return tt_errf(err, TT_EPROBLEM, path, "dtype %s is not accepted",
                           tt_dtype_name(ps[i]));
    }
    return TT_OK;
}

tt_rc tt_space_new(const tt_template *t, const int64_t *problem_slots, const tt_caps *caps,
                   tt_space **out, tt_errinfo *err)
{
    *out = NULL;
    if (!t || (!problem_slots && t->ninputs))
        return tt_errf(err, TT_EINVAL, "", "no template or problem");
    tt_rc rc = check_problem(t, problem_slots, err);
    if (rc) return rc;
    tt_space *s = calloc(1, sizeof *s);
    if (!s) return tt_errf(err, TT_ENOMEM, "", "out of memory");
    s->t = t;
    s->np = t->nparams;
    if (caps) {
        s->has_caps = 1;
        s->caps = *caps;
    }
    size_t np = s->np, nb = s->has_caps ? t->nbuffers : 0;
    size_t nslots = t->nslots ? t->nslots : 1;
    s->lv = calloc(np + 1, sizeof *s->lv);
    s->pool = calloc(t->nlets + t->nconstraints + 2 * nb + 1, sizeof *s->pool);
    s->rem = calloc(np + 1, sizeof *s->rem);
    s->bufs = calloc(nb ? nb : 1, sizeof *s->bufs);
    s->slots = calloc(nslots, sizeof *s->slots);
    s->psum = calloc((np + 1) * TT_SCOPE__COUNT, sizeof *s->psum);
    size_t *letlv = calloc(t->nlets + 1, sizeof *letlv);
    size_t *cl = calloc(t->nconstraints + 1, sizeof *cl);
    size_t *bl = calloc(2 * nb + 1, sizeof *bl);
    if (!s->lv || !s->pool || !s->rem || !s->bufs || !s->slots || !s->psum || !letlv || !cl ||
        !bl) {
        free(letlv);
        free(cl);
        free(bl);
        tt_space_free(s);
        return tt_errf(err, TT_ENOMEM, "", "out of memory");
    }
    if (t->ninputs) memcpy(s->slots, problem_slots, t->ninputs * sizeof *s->slots);

    /* levels of every check */
    for (size_t i = 0; i < t->nlets; i++) letlv[i] = expr_level(t, letlv, t->lets[i].expr);
    for (size_t i = 0; i < t->nconstraints; i++)
        cl[i] = expr_level(t, letlv, t->constraints[i].expr);
    for (size_t b = 0; b < nb; b++) {
        const tt_buffer *bu = &t->buffers[b];
        sbuf *sb = &s->bufs[b];
        size_t ls = 0, lt;
        sb->rank = bu->rank;
        for (int d = 0; d < bu->rank; d++) {
            size_t l = expr_level(t, letlv, bu->shape[d]);
            if (l > ls) ls = l;
            sb->dims[d] = fx_of(t, bu->shape[d]);
        }
        lt = ls;
        if (bu->copies) {
            size_t l = expr_level(t, letlv, bu->copies);
            if (l > lt) lt = l;
            sb->copies = fx_of(t, bu->copies);
        } else {
            sb->copies = (fx){FX_CONST, -1, 1, NULL};
        }
        sb->scope = bu->scope;
        sb->align = s->caps.align[bu->scope] > 0 ? s->caps.align[bu->scope] : 1;
        sb->dtype = bu->dtype;
        bl[2 * b] = ls;
        bl[2 * b + 1] = lt;
    }
    /* distribute into per-level lists (pool is carved in level order per kind) */
    uint16_t *pp = s->pool;
    for (size_t L = 0; L <= np; L++) {
        level *lv = &s->lv[L];
        lv->lets = pp;
        for (size_t i = 0; i < t->nlets; i++)
            if (letlv[i] == L) lv->lets[lv->nlets++] = (uint16_t)i;
        pp += lv->nlets;
        lv->cons = pp;
        for (size_t i = 0; i < t->nconstraints; i++)
            if (cl[i] == L) lv->cons[lv->ncons++] = (uint16_t)i;
        pp += lv->ncons;
        lv->bshape = pp;
        for (size_t b = 0; b < nb; b++)
            if (bl[2 * b] == L) lv->bshape[lv->nbshape++] = (uint16_t)b;
        pp += lv->nbshape;
        lv->btotal = pp;
        for (size_t b = 0; b < nb; b++)
            if (bl[2 * b + 1] == L) {
                lv->btotal[lv->nbtotal++] = (uint16_t)b;
                lv->scopes |= 1u << s->bufs[b].scope;
            }
        pp += lv->nbtotal;
    }
    free(letlv);
    free(cl);
    free(bl);
    s->rem[np] = 1;
    for (size_t L = np; L-- > 0;) s->rem[L] = sat_mul(s->rem[L + 1], t->params[L].nvalues);
    s->total = s->rem[0];
    *out = s;
    return TT_OK;
}

uint64_t tt_space_total(const tt_space *s)
{
    return s->total;
}

int tt_space_indexed(const tt_space *s)
{
    return s->total != UINT64_MAX;   /* sat_mul saturates only on overflow: no domain product
                                        of values <= 4096 each is 2^64 - 1 exactly */
}

/* Run the checks of level L on slots.  psum_prev/psum_cur: the capacity sums of the levels
 * below and of this level; bbytes: per-copy buffer bytes (filled here for this level). */
static uint32_t check_level(const tt_space *s, size_t L, int64_t *slots, int64_t *bbytes,
                            const int64_t *psum_prev, int64_t *psum_cur)
{
    const tt_template *t = s->t;
    const level *lv = &s->lv[L];
    tt_rc rc;
    for (size_t i = 0; i < lv->nlets; i++) {
        size_t k = lv->lets[i];
        rc = tt_expr_eval(t->lets[k].expr, slots, &slots[t->ninputs + t->nparams + k]);
        if (rc != TT_OK) return R_PACK(R_LET, rc, k);
    }
    for (size_t i = 0; i < lv->ncons; i++) {
        size_t k = lv->cons[i];
        int64_t v;
        rc = tt_expr_eval(t->constraints[k].expr, slots, &v);
        if (rc != TT_OK) return R_PACK(R_CONS, rc, k);
        if (v == 0) return R_PACK(R_CONS, 0, k);
    }
    if (!s->has_caps) return 0;
    for (size_t i = 0; i < lv->nbshape; i++) {
        size_t b = lv->bshape[i];
        const sbuf *sb = &s->bufs[b];
        int64_t n = tt_dtype_size(tt_dtref_eval(sb->dtype, slots)), d;
        for (int r = 0; r < sb->rank; r++) {
            if ((rc = fx_eval(&sb->dims[r], slots, &d)) != TT_OK) return R_PACK(R_BUF, rc, b);
            if (d < 0) return R_PACK(R_BUF, TT_EDOMAIN, b);
            if (__builtin_mul_overflow(n, d, &n)) return R_PACK(R_BUF, TT_EOVERFLOW, b);
        }
        int64_t a = sb->align, up;
        if (__builtin_add_overflow(n, a - 1, &up)) return R_PACK(R_BUF, TT_EOVERFLOW, b);
        bbytes[b] = up / a * a;
    }
    memcpy(psum_cur, psum_prev, TT_SCOPE__COUNT * sizeof *psum_cur);
    if (!lv->nbtotal) return 0;
    for (size_t i = 0; i < lv->nbtotal; i++) {
        size_t b = lv->btotal[i];
        const sbuf *sb = &s->bufs[b];
        int64_t c, tot;
        if ((rc = fx_eval(&sb->copies, slots, &c)) != TT_OK) return R_PACK(R_BUF, rc, b);
        if (c < 1) return R_PACK(R_BUF, TT_EDOMAIN, b);
        if (__builtin_mul_overflow(c, bbytes[b], &tot) ||
            __builtin_add_overflow(psum_cur[sb->scope], tot, &psum_cur[sb->scope]))
            return R_PACK(R_SCOPE, 0, sb->scope);
    }
    for (int sc = 0; sc < TT_SCOPE__COUNT; sc++)
        if ((lv->scopes >> sc & 1u) && psum_cur[sc] > s->caps.cap[sc])
            return R_PACK(R_SCOPE, 0, sc);
    return 0;
}

static void reason_text(const tt_space *s, uint32_t r, char *buf, size_t cap, char *path,
                        size_t pcap)
{
    const tt_template *t = s->t;
    int kind = (int)(r >> 24), idx = (int)(r & 0xffff);
    tt_rc rc = (tt_rc)((r >> 16) & 0xff);
    switch (kind) {
    case R_LET:
        tt__path(buf, cap, "let %s: %s", t->lets[idx].name,
                 tt__expr_rc_word(t->lets[idx].expr, rc));
        tt__path(path, pcap, "let.%s", t->lets[idx].name);
        break;
    case R_CONS:
        if (rc == TT_OK)
            tt__path(buf, cap, "constraints[%d]: %s", idx, tt_expr_source(t->constraints[idx].expr));
        else
            tt__path(buf, cap, "constraints[%d]: %s", idx, tt__rc_word(rc));
        tt__path(path, pcap, "constraints[%d]", idx);
        break;
    case R_BUF:
        tt__path(buf, cap, "buffer %s: %s", t->buffers[idx].name, tt__rc_word(rc));
        tt__path(path, pcap, "buffers.%s", t->buffers[idx].name);
        break;
    default:
        tt__path(buf, cap, "%s capacity", tt_scope_name((tt_scope)idx));
        tt__path(path, pcap, "buffers");
        break;
    }
}

/* Index of the reason in counts, registering it on first use (the last slot collects the
 * overflow as "other" when the table is full). */
static size_t reason_slot(tt_space *s, uint32_t r)
{
    tt_space_counts *c = s->counts;
    int kind = (int)(r >> 24), idx = (int)(r & 0xffff);
    int *cache = NULL;
    if (kind == R_CONS && ((r >> 16) & 0xff) == 0) cache = &s->reason_idx_cons[idx];
    if (kind == R_SCOPE) cache = &s->reason_idx_scope[idx];
    if (cache && *cache >= 0) return (size_t)*cache;
    char text[96], path[160];
    reason_text(s, r, text, sizeof text, path, sizeof path);
    size_t i = 0;
    while (i < c->nreasons && strcmp(c->reason[i], text) != 0) i++;
    if (i == c->nreasons) {
        if (c->nreasons == TT_SPACE_MAX_REASONS) {
            i = TT_SPACE_MAX_REASONS - 1;
            snprintf(c->reason[i], sizeof c->reason[i], "other");
        } else {
            snprintf(c->reason[i], sizeof c->reason[i], "%s", text);
            c->rejected[i] = 0;
            c->nreasons++;
        }
    }
    if (cache) *cache = (int)i;
    return i;
}

static void reject(tt_space *s, uint32_t r, uint64_t n)
{
    size_t i = reason_slot(s, r);
    uint64_t *x = &s->counts->rejected[i];
    *x = (UINT64_MAX - *x < n) ? UINT64_MAX : *x + n;
}

/* Bind param p (level p + 1) to each value of its domain, recursing. */
static void walk(tt_space *s, size_t p)
{
    const tt_template *t = s->t;
    const tt_param *pr = &t->params[p];
    int64_t *slot = &s->slots[t->ninputs + p];
    size_t L = p + 1;
    int64_t *psum_prev = &s->psum[p * TT_SCOPE__COUNT], *psum_cur = psum_prev + TT_SCOPE__COUNT;
    tt_space_counts *c = s->counts;
    uint64_t below = s->rem[L];
    int last = L == s->np;
    for (size_t v = 0; v < pr->nvalues; v++) {
        *slot = pr->values[v];
        c->visited_partial++;
        uint32_t r = check_level(s, L, s->slots, s->bbytes, psum_prev, psum_cur);
        if (r) {
            reject(s, r, below);
            continue;
        }
        if (!last) {
            walk(s, p + 1);
        } else {
            c->feasible++;
            if ((s->visit && s->visit(s->ud, s->slots)) || (s->limit && c->feasible >= s->limit))
                s->stopped = 1;
        }
        if (s->stopped) return;
    }
}

tt_rc tt_space_enumerate(tt_space *s, tt_space_visit_fn visit, void *ud, uint64_t limit,
                         tt_space_counts *counts)
{
    tt_space_counts local;
    if (!counts) counts = &local;
    memset(counts, 0, sizeof *counts);
    counts->total = s->total;
    s->counts = counts;
    s->visit = visit;
    s->ud = ud;
    s->limit = limit;
    s->stopped = 0;
    for (size_t i = 0; i < TT_TMPL_MAX_CONSTRAINTS; i++) s->reason_idx_cons[i] = -1;
    for (size_t i = 0; i < TT_SCOPE__COUNT; i++) s->reason_idx_scope[i] = -1;
    const tt_template *t = s->t;
    for (size_t i = t->ninputs; i < t->nslots; i++) s->slots[i] = 0;
    memset(s->psum, 0, TT_SCOPE__COUNT * sizeof *s->psum);
    int64_t zero[TT_SCOPE__COUNT] = {0};
    counts->visited_partial = 1;
    uint32_t r = check_level(s, 0, s->slots, s->bbytes, zero, s->psum);
    if (r) {
        reject(s, r, s->total);
    } else if (s->np == 0) {
        counts->feasible = 1;
        if (visit) visit(ud, s->slots);
    } else {
        walk(s, 0);
    }
    counts->complete = !s->stopped;
    s->counts = NULL;
    return TT_OK;
}

tt_rc tt_space_check(const tt_space *s, int64_t *slots, tt_errinfo *err)
{
    const tt_template *t = s->t;
    for (size_t i = 0; i < t->nparams; i++) {
        const tt_param *p = &t->params[i];
        int64_t v = slots[t->ninputs + i];
        size_t j = 0;
        while (j < p->nvalues && p->values[j] != v) j++;
        if (j == p->nvalues)
            return tt_errf(err, TT_ECONFIG, "", "%s=%lld is not in the domain", p->name,
                           (long long)v);
    }
    int64_t psum[2][TT_SCOPE__COUNT] = {{0}};
    int64_t bbytes[TT_TMPL_MAX_BUFFERS];
    for (size_t L = 0; L <= s->np; L++) {
        int64_t *prev = psum[L & 1], *cur = psum[(L + 1) & 1];
        if (L == 0) memset(prev, 0, sizeof psum[0]);
        uint32_t r = check_level(s, L, slots, bbytes, prev, cur);
        if (r) {
            char text[96], path[160];
            reason_text(s, r, text, sizeof text, path, sizeof path);
            int sc = (int)(r & 0xffff);
            /* a capacity refusal of one config says by how much (a config that misses by
             * 256 B is a different fix from one that needs twice the buffer) */
            if ((r >> 24) == R_SCOPE && cur[sc] > s->caps.cap[sc])
                return tt_errf(err, TT_EINFEASIBLE, path, "%s: buffers need %lld B, the target has %lld B",
                               text, (long long)cur[sc], (long long)s->caps.cap[sc]);
            return tt_errf(err, TT_EINFEASIBLE, path, "%s", text);
        }
    }
    return TT_OK;
}

void tt_space_decode(const tt_space *s, uint64_t idx, int64_t *slots)
{
    const tt_template *t = s->t;
    for (size_t i = s->np; i-- > 0;) {
        const tt_param *p = &t->params[i];
        slots[t->ninputs + i] = p->values[idx % p->nvalues];
        idx /= p->nvalues;
    }
}

uint64_t tt_space_encode(const tt_space *s, const int64_t *slots)
{
    const tt_template *t = s->t;
    uint64_t idx = 0;
    for (size_t i = 0; i < s->np; i++) {
        const tt_param *p = &t->params[i];
        size_t j = 0;
        while (j < p->nvalues && p->values[j] != slots[t->ninputs + i]) j++;
        if (j == p->nvalues) return UINT64_MAX;
        idx = idx * p->nvalues + j;
    }
    return idx;
}

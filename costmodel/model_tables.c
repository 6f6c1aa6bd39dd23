/* SPDX-License-Identifier: MIT
 * model_tables.c - the model's fast feasibility path: lookup tables, built once per problem,
 * for lets, constraints and buffer sizes that read at most two params, and the per-config
 * check that uses them (falling back to tt_space_check() whenever a table cannot decide).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"
#include "roofline.h"

/* Params an expression reads, through lets: deps[0..n) (n <= 2), or n = -1 when it reads
 * more params, a grid slot or anything else that is not an input. */
typedef struct mdeps {
    int n;
    int p[2];
} mdeps;

static void deps_add(mdeps *d, int p)
{
    if (d->n < 0) return;
    for (int i = 0; i < d->n; i++)
        if (d->p[i] == p) return;
    if (d->n == 2) { d->n = -1; return; }
    d->p[d->n++] = p;
}

static mdeps expr_deps(const tt_template *t, const tt_expr *e, const mdeps *let_deps, size_t nlet_done)
{
    mdeps d = {0, {0, 0}};
    int sl[TT_MAX_SLOTS];
    size_t ns = tt_expr_slots(e, sl, TT_MAX_SLOTS);
    if (ns > TT_MAX_SLOTS) { d.n = -1; return d; }
    for (size_t i = 0; i < ns && d.n >= 0; i++) {
        size_t s = (size_t)sl[i];
        if (s < t->ninputs) continue;
        if (s < t->ninputs + t->nparams) { deps_add(&d, (int)(s - t->ninputs)); continue; }
        size_t l = s - t->ninputs - t->nparams;
        if (l < nlet_done && let_deps[l].n >= 0) {
            for (int k = 0; k < let_deps[l].n; k++) deps_add(&d, let_deps[l].p[k]);
            continue;
        }
        d.n = -1;
    }
    if (d.n == 2 && d.p[0] > d.p[1]) { int x = d.p[0]; d.p[0] = d.p[1]; d.p[1] = x; }
    return d;
}

#define MODEL_TAB_MAX 4096       /* entries of one table */
#define MODEL_TAB_BUDGET 32768   /* entries of all tables of a model (keeps tt_model_new cheap) */

/* The slots of one combination of the params d (values i0, i1 of their domains): inputs,
 * those params, and the lets that read a subset of them, in order; 0 when one fails. */
static int fill_slots(const tt_model *m, const mdeps *d, const mdeps *let_deps, size_t i0,
                      size_t i1, int64_t *sl)
{
    const tt_template *t = m->t;
    memset(sl, 0, TT_MAX_SLOTS * sizeof *sl);
    memcpy(sl, m->problem, t->ninputs * sizeof *sl);
    if (d->n >= 1) sl[t->ninputs + d->p[0]] = t->params[d->p[0]].values[i0];
    if (d->n >= 2) sl[t->ninputs + d->p[1]] = t->params[d->p[1]].values[i1];
    for (size_t l = 0; l < t->nlets; l++) {
        const mdeps *ld = &let_deps[l];
        int sub = ld->n >= 0;
        for (int k = 0; sub && k < ld->n; k++)
            sub = (d->n >= 1 && ld->p[k] == d->p[0]) || (d->n >= 2 && ld->p[k] == d->p[1]);
        if (!sub) continue;
        if (tt_expr_eval(t->lets[l].expr, sl, &sl[tt_tmpl_let_slot(t, l)]) != TT_OK) return 0;
    }
    return 1;
}

/* Tabulate buffer b's geometry (tt__mbgeo) over the params its shape reads; computed as
 * fast_feasible does.  Returns 1 (built), 0 (not tabulable) or -1 (out of memory). */
static int build_btab(tt_model *m, size_t b, const mdeps *let_deps, size_t *budget)
{
    const tt_template *t = m->t;
    const tt_buffer *bf = &t->buffers[b];
    const tt__mbuf *mb = &m->bufs[b];
    tt__mbtab *tb = &m->btab[b];
    if (!m->besize[b]) return 0;
    mdeps d = {0, {0, 0}};
    for (int r = 0; r < mb->rank && d.n >= 0; r++) {
        if (!bf->shape[r]) continue;
        mdeps x = expr_deps(t, bf->shape[r], let_deps, t->nlets);
        if (x.n < 0) { d.n = -1; break; }
        for (int k = 0; k < x.n; k++) deps_add(&d, x.p[k]);
    }
    if (d.n < 0) return 0;
    if (d.n == 2 && d.p[0] > d.p[1]) { int x = d.p[0]; d.p[0] = d.p[1]; d.p[1] = x; }
    size_t n0 = d.n >= 1 ? t->params[d.p[0]].nvalues : 1;
    size_t n1 = d.n >= 2 ? t->params[d.p[1]].nvalues : 1;
    if (n0 == 0 || n1 == 0 || n0 * n1 > MODEL_TAB_MAX || n0 * n1 > *budget) return 0;
    *budget -= n0 * n1;
    tb->np = d.n;
    tb->p[0] = d.p[0];
    tb->p[1] = d.p[1];
    tb->n1 = n1;
    tb->val = calloc(n0 * n1, sizeof *tb->val);
    tb->ok = malloc(n0 * n1);
    int64_t *sl = malloc(TT_MAX_SLOTS * sizeof *sl);
    if (!tb->val || !tb->ok || !sl) {
        free(sl);
        free(tb->val);
        free(tb->ok);
        tb->val = NULL;
        tb->ok = NULL;
        return -1;
    }
    int64_t a = m->caps.align[bf->scope] > 0 ? m->caps.align[bf->scope] : 1;
    for (size_t i0 = 0; i0 < n0; i0++)
        for (size_t i1 = 0; i1 < n1; i1++) {
            size_t at = i0 * n1 + i1;
            tt__mbgeo *g = &tb->val[at];
            int ok = fill_slots(m, &d, let_deps, i0, i1, sl);
            int64_t n = m->besize[b], e = 1, v;
            for (int r = 0; ok && r < mb->rank; r++) {
                if (tt__mx_eval(&mb->dims[r], sl, &v) != TT_OK || v < 0 ||
                    __builtin_mul_overflow(n, v, &n) || __builtin_mul_overflow(e, v, &e))
                    ok = 0;
                else
                    g->dims[r] = v;
            }
            if (ok && __builtin_add_overflow(n, a - 1, &g->up)) ok = 0;
            if (ok) g->up = g->up / a * a;
            g->elems = e;
            tb->ok[at] = (unsigned char)ok;
        }
    free(sl);
    return 1;
}

/* Tabulate e over the domains of its params d (lets that read a subset of them are
 * evaluated first, in order, as tt_tmpl_eval_lets does; an entry is not ok when e or one of
 * those lets fails, and the fast path then defers to tt_space_check). */
static int build_tab(tt_model *m, const tt_expr *e, const mdeps *d, const mdeps *let_deps,
                     tt__mtab *tb, size_t *budget)
{
    const tt_template *t = m->t;
    size_t n0 = d->n >= 1 ? t->params[d->p[0]].nvalues : 1;
    size_t n1 = d->n >= 2 ? t->params[d->p[1]].nvalues : 1;
    if (n0 == 0 || n1 == 0 || n0 * n1 > MODEL_TAB_MAX || n0 * n1 > *budget) return 0;
    *budget -= n0 * n1;
    memset(tb, 0, sizeof *tb);
    tb->np = d->n;
    tb->p[0] = d->p[0];
    tb->p[1] = d->p[1];
    tb->n1 = n1;
    tb->val = malloc(n0 * n1 * sizeof *tb->val);
    tb->ok = malloc(n0 * n1);
    if (!tb->val || !tb->ok) { free(tb->val); free(tb->ok); tb->val = NULL; tb->ok = NULL; return -1; }
    int64_t *sl = malloc(TT_MAX_SLOTS * sizeof *sl);
    if (!sl) { free(tb->val); free(tb->ok); tb->val = NULL; tb->ok = NULL; return -1; }
    for (size_t i0 = 0; i0 < n0; i0++)
        for (size_t i1 = 0; i1 < n1; i1++) {
            int ok = fill_slots(m, d, let_deps, i0, i1, sl);
            size_t at = i0 * n1 + i1;
            tb->val[at] = 0;
            if (ok && tt_expr_eval(e, sl, &tb->val[at]) != TT_OK) ok = 0;
            tb->ok[at] = (unsigned char)ok;
        }
    free(sl);
    return 1;
}

/* Values that read no param, computed once per problem, and the lookup tables of the
 * lets and constraints (docs/cost-model.md, "Speed"). */
tt_rc tt__model_prepare_fast(tt_model *m, tt_errinfo *err)
{
    const tt_template *t = m->t;
    for (size_t b = 0; b < t->nbuffers; b++) {
        tt_dtref r = t->buffers[b].dtype;
        m->besize[b] = r.slot < 0 || (size_t)r.slot < t->ninputs ? tt_dtype_size(tt_dtref_eval(r, m->problem)) : 0;
    }
    m->tconst = 1;
    for (size_t i = 0; i < t->ntensors; i++) {
        tt_dtref r = t->tensors[i].dtype;
        int dc = r.slot < 0 || (size_t)r.slot < t->ninputs;
        m->tesize[i] = dc ? tt_dtype_size(tt_dtref_eval(r, m->problem)) : 0;
        if (t->tensors[i].workspace) m->has_ws = 1;
        double e = dc ? m->tesize[i] : 0;
        for (int d = 0; d < t->tensors[i].rank; d++) {
            const tt__mx *x = &m->tshape[i][d];
            if (x->kind == 2) e *= (double)x->c;
            else if (x->kind == 1 && (size_t)x->slot < t->ninputs) e *= (double)m->problem[x->slot];
            else dc = 0;
        }
        if (!dc) m->tconst = 0;
        m->tbytes[i] = e;
    }
    if (m->tconst && !m->has_ws) {
        double footprint = 0;
        for (size_t k = 0; k < t->ntensors; k++) footprint += m->tbytes[k];
        m->hw_const = tt__roof_warm(footprint, m->l2_resident_bytes);
    }
    /* GM movers, and whether a top-level loop has two of them (section 4: else the
     * demand-based shares equal the first pass's and the second pass is skipped) */
    for (int i = 0; i < m->nops; i++) {
        const tt__mop *o = &m->ops[i];
        if (o->kind == TT_OP_COPY && (o->gm_read || o->gm_write)) m->moves[o->side == TT_SIDE_VECTOR][o->unit] = 1;
    }
    int used[2][TT_UNIT__COUNT] = {{0}};
    for (int i = 0; i < m->nops; i++) {
        const tt__mop *o = &m->ops[i];
        if (o->kind == TT_OP_FOR) continue;
        used[o->side][TT_UNIT_S] = 1;
        if (o->kind != TT_OP_SYNC) used[o->side][o->unit] = 1;
    }
    for (int sd = 0; sd < 2; sd++)
        for (int u = 0; u < TT_UNIT__COUNT; u++)
            if (used[sd][u]) m->act[m->nact++] = sd * TT_UNIT__COUNT + u;
    int ntop = 0;
    for (int L = 0; L < m->nops && ntop < TT__MODEL_MAX_TOPLOOPS; L = m->ops[L].end) {
        if (m->ops[L].kind != TT_OP_FOR) continue;
        ntop++;
        int seen[2][TT_UNIT__COUNT] = {{0}}, nmov = 0;
        for (int c = L + 1; c < m->ops[L].end; c++) {
            const tt__mop *o = &m->ops[c];
            if (o->kind == TT_OP_FOR || o->kind == TT_OP_SYNC) continue;
            int sd = o->side == TT_SIDE_VECTOR;
            if (o->unit != TT_UNIT_S && m->moves[sd][o->unit] && !seen[sd][o->unit]) { seen[sd][o->unit] = 1; nmov++; }
        }
        if (nmov >= 2) m->share_pass = 1;
    }
    /* tables */
    size_t nexpr = t->nlets + t->nconstraints;
    m->con_tab = malloc((t->nconstraints ? t->nconstraints : 1) * sizeof *m->con_tab);
    m->tab = calloc(nexpr ? nexpr : 1, sizeof *m->tab);
    mdeps *ld = malloc((t->nlets ? t->nlets : 1) * sizeof *ld);
    if (!m->con_tab || !m->tab || !ld) { free(ld); return tt_errf(err, TT_ENOMEM, "", "out of memory"); }
    size_t budget = MODEL_TAB_BUDGET;
    for (size_t l = 0; l < t->nlets; l++) ld[l] = expr_deps(t, t->lets[l].expr, ld, l);
    for (size_t l = 0; l < t->nlets; l++) {
        m->let_tab[l] = -1;
        if (ld[l].n < 0) continue;
        int r = build_tab(m, t->lets[l].expr, &ld[l], ld, &m->tab[m->ntab], &budget);
        if (r < 0) { free(ld); return tt_errf(err, TT_ENOMEM, "", "out of memory"); }
        if (r) m->let_tab[l] = m->ntab++;
    }
    for (size_t c = 0; c < t->nconstraints; c++) {
        mdeps d = expr_deps(t, t->constraints[c].expr, ld, t->nlets);
        m->con_tab[c] = -1;
        if (d.n < 0) continue;
        int r = build_tab(m, t->constraints[c].expr, &d, ld, &m->tab[m->ntab], &budget);
        if (r < 0) { free(ld); return tt_errf(err, TT_ENOMEM, "", "out of memory"); }
        if (r) m->con_tab[c] = m->ntab++;
    }
    m->btab = calloc(t->nbuffers ? t->nbuffers : 1, sizeof *m->btab);
    if (!m->btab) { free(ld); return tt_errf(err, TT_ENOMEM, "", "out of memory"); }
    for (size_t b = 0; b < t->nbuffers; b++)
        if (build_btab(m, b, ld, &budget) < 0) { free(ld); return tt_errf(err, TT_ENOMEM, "", "out of memory"); }
    free(ld);
    return TT_OK;
}


/* Feasibility without formatting a reason: 1 when the config certainly passes what
 * tt_space_check() checks (domains, lets, constraints, capacity per scope, the same
 * arithmetic); 0 when it may not, and then tt_space_check() decides and gives the reason.
 * Fills sc's buffer geometry on success. */
int tt__model_fast_feasible(const tt_model *m, int64_t *slots, tt__mscratch *sc)
{
    const tt_template *t = m->t;
    size_t pidx[TT_MAX_SLOTS];
    for (size_t i = 0; i < t->nparams; i++) {
        const tt__mdom *d = &m->dom[i];
        int64_t v = slots[t->ninputs + i];
        if (d->ap) {
            if (v < d->start || (v - d->start) % d->step || (uint64_t)((v - d->start) / d->step) >= d->n)
                return 0;
            pidx[i] = (size_t)((v - d->start) / d->step);
        } else {
            size_t j = 0;
            while (j < d->n && t->params[i].values[j] != v) j++;
            if (j == d->n) return 0;
            pidx[i] = j;
        }
    }
    /* lets and constraints: a table lookup when they read at most two params */
    for (size_t i = 0; i < t->nlets; i++) {
        int64_t *dst = &slots[tt_tmpl_let_slot(t, i)];
        if (m->let_tab[i] >= 0) {
            const tt__mtab *tb = &m->tab[m->let_tab[i]];
            size_t at = tb->np == 0 ? 0 : tb->np == 1 ? pidx[tb->p[0]] : pidx[tb->p[0]] * tb->n1 + pidx[tb->p[1]];
            if (!tb->ok[at]) return 0;
            *dst = tb->val[at];
        } else if (tt_expr_eval(t->lets[i].expr, slots, dst) != TT_OK) {
            return 0;
        }
    }
    for (size_t i = 0; i < t->nconstraints; i++) {
        int64_t v;
        if (m->con_tab[i] >= 0) {
            const tt__mtab *tb = &m->tab[m->con_tab[i]];
            size_t at = tb->np == 0 ? 0 : tb->np == 1 ? pidx[tb->p[0]] : pidx[tb->p[0]] * tb->n1 + pidx[tb->p[1]];
            if (!tb->ok[at] || tb->val[at] == 0) return 0;
        } else if (tt_expr_eval(t->constraints[i].expr, slots, &v) != TT_OK || v == 0) {
            return 0;
        }
    }
    int64_t sum[TT_SCOPE__COUNT] = {0};
    for (size_t b = 0; b < t->nbuffers; b++) {
        const tt__mbuf *mb = &m->bufs[b];
        const tt__mbtab *bt = &m->btab[b];
        if (bt->val) {   /* tabulated geometry */
            size_t at = bt->np == 0 ? 0 : bt->np == 1 ? pidx[bt->p[0]] : pidx[bt->p[0]] * bt->n1 + pidx[bt->p[1]];
            if (!bt->ok[at]) return 0;
            const tt__mbgeo *g = &bt->val[at];
            int64_t c, tot;
            if (tt__mx_eval(&mb->copies, slots, &c) != TT_OK || c < 1) return 0;
            tt_scope s = t->buffers[b].scope;
            if (__builtin_mul_overflow(c, g->up, &tot) || __builtin_add_overflow(sum[s], tot, &sum[s]))
                return 0;
            for (int r = 0; r < mb->rank; r++) sc->bdims[b][r] = g->dims[r];
            sc->belems[b] = g->elems;
            sc->besize[b] = m->besize[b];
            sc->bcopies[b] = c;
            continue;
        }
        int64_t es = m->besize[b] ? m->besize[b] : tt_dtype_size(tt_dtref_eval(mb->dtype, slots)), n = es, d, e = 1, c, tot;
        for (int r = 0; r < mb->rank; r++) {
            if (tt__mx_eval(&mb->dims[r], slots, &d) != TT_OK || d < 0) return 0;
            if (__builtin_mul_overflow(n, d, &n)) return 0;
            sc->bdims[b][r] = d;
            e *= d;
        }
        if (tt__mx_eval(&mb->copies, slots, &c) != TT_OK || c < 1) return 0;
        tt_scope s = t->buffers[b].scope;
        int64_t a = m->caps.align[s] > 0 ? m->caps.align[s] : 1, up;
        if (__builtin_add_overflow(n, a - 1, &up)) return 0;
        up = up / a * a;
        if (__builtin_mul_overflow(c, up, &tot) || __builtin_add_overflow(sum[s], tot, &sum[s]))
            return 0;
        sc->belems[b] = e;
        sc->besize[b] = (int)es;
        sc->bcopies[b] = c;
    }
    for (int s = 0; s < TT_SCOPE__COUNT; s++)
        if (s != TT_SCOPE_GM && sum[s] > m->caps.cap[s]) return 0;
    return 1;
}

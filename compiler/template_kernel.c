/* SPDX-License-Identifier: MIT
 * template_kernel.c - parse and validate a template's tile program ("kernel": grid, cores,
 * persistent, body of for/copy/mma/vec/sync ops).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_int.h"

static tt_rc kp_side(tt__tp *p, const json_t *v, const char *path, tt_side *out)
{
    if (!json_is_string(v))
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected \"cube\" or \"vector\", got %s",
                       v ? tt__json_type(v) : "nothing");
    const char *s = json_string_value(v);
    if (strcmp(s, "cube") == 0) *out = TT_SIDE_CUBE;
    else if (strcmp(s, "vector") == 0) *out = TT_SIDE_VECTOR;
    else return tt_errf(p->err, TT_ETEMPLATE, path, "unknown side \"%s\" (cube, vector)", s);
    return TT_OK;
}

/* A memory reference: "gm:T" names a tensor, anything else a buffer. */
static tt_rc kp_ref(tt__tp *p, const json_t *v, const char *path, tt_ref *r, tt_scope *scope)
{
    const tt_template *t = p->t;
    if (!json_is_string(v))
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected a buffer or \"gm:<tensor>\", got %s",
                       tt__json_type(v));
    const char *s = json_string_value(v);
    if (strncmp(s, "gm:", 3) == 0) {
        int i = tt__tmpl_tensor(t, s + 3);
        if (i < 0) return tt_errf(p->err, TT_ETEMPLATE, path, "unknown tensor \"%s\"", s + 3);
        r->is_gm = 1;
        r->index = i;
        *scope = TT_SCOPE_GM;
        return TT_OK;
    }
    int b = tt__tmpl_buffer(t, s);
    if (b < 0) {
        if (tt__tmpl_tensor(t, s) >= 0)
            return tt_errf(p->err, TT_ETEMPLATE, path,
                           "\"%s\" is a tensor: write \"gm:%s\"", s, s);
        return tt_errf(p->err, TT_ETEMPLATE, path, "unknown buffer \"%s\"", s);
    }
    r->is_gm = 0;
    r->index = b;
    *scope = t->buffers[b].scope;
    return TT_OK;
}

static tt_rc kp_buffer_in(tt__tp *p, const json_t *v, const char *path, tt_scope want, int *out)
{
    tt_ref r = {0};
    tt_scope sc = want;
    tt_rc rc = kp_ref(p, v, path, &r, &sc);
    if (rc) return rc;
    if (sc != want)
        return tt_errf(p->err, TT_ETEMPLATE, path, "\"%s\" is in %s, expected a %s buffer",
                       json_string_value(v), tt_scope_name(sc), tt_scope_name(want));
    *out = r.index;
    return TT_OK;
}

static tt_rc kp_body(tt__tp *p, const json_t *arr, const char *path, tt_op **ops, size_t *nops);

static tt_rc kp_for(tt__tp *p, tt_op *o, const json_t *v, const char *path)
{
    char ep[192];
    tt_rc rc;
    static const char *const keys[] = {"for", "trip", "stages", "body", NULL};
    if ((rc = tt__tp_keys(p, v, path, keys))) return rc;
    tt__path(ep, sizeof ep, "%s.for", path);
    const json_t *var = json_object_get(v, "for");
    if (!json_is_string(var))
        return tt_errf(p->err, TT_ETEMPLATE, ep, "expected a loop variable name, got %s",
                       tt__json_type(var));
    if ((rc = tt__tp_name(p, json_string_value(var), ep))) return rc;
    if (!(o->u.loop.var = strdup(json_string_value(var)))) return tt__tp_oom(p, ep);
    if (p->nallloops == p->capallloops) {
        size_t cap = p->capallloops ? 2 * p->capallloops : 16;
        const char **n = realloc(p->allloops, cap * sizeof *n);
        if (!n) return tt__tp_oom(p, ep);
        p->allloops = n;
        p->capallloops = cap;
    }
    p->allloops[p->nallloops++] = o->u.loop.var;
    o->u.loop.id = (int)p->nloops++;
    tt__path(ep, sizeof ep, "%s.trip", path);
    const json_t *trip = json_object_get(v, "trip");
    if (!trip) return tt_errf(p->err, TT_ETEMPLATE, ep, "missing (the trip count)");
    if ((rc = tt__tp_expr(p, trip, ep, &o->u.loop.trip))) return rc;
    const json_t *st = json_object_get(v, "stages");
    tt__path(ep, sizeof ep, "%s.stages", path);
    if (st && (rc = tt__tp_expr(p, st, ep, &o->u.loop.stages))) return rc;
    if (p->depth >= TT_TMPL_MAX_DEPTH)
        return tt_errf(p->err, TT_ETEMPLATE, path, "loops nested deeper than %d",
                       TT_TMPL_MAX_DEPTH);
    p->loopvars[p->depth] = o->u.loop.var;
    p->loopids[p->depth] = o->u.loop.id;
    p->depth++;
    tt__path(ep, sizeof ep, "%s.body", path);
    rc = kp_body(p, json_object_get(v, "body"), ep, &o->u.loop.body, &o->u.loop.nbody);
    p->depth--;
    if (rc) return rc;
    o->side = o->u.loop.body[0].side;
    return TT_OK;
}

/* "rows" (a gather: GM reads only) and "atomic" (an atomic-add write: GM writes only),
 * both expressions of the config. */
static tt_rc kp_copy_gather_atomic(tt__tp *p, tt_op *o, const json_t *v, const char *path,
                                   tt_scope ss, tt_scope ds)
{
    char ep[192];
    tt_rc rc;
    const json_t *rows = json_object_get(v, "rows");
    if (rows) {
        tt__path(ep, sizeof ep, "%s.rows", path);
        if (ss != TT_SCOPE_GM)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "only copies from GM gather rows");
        if ((rc = tt__tp_expr(p, rows, ep, &o->u.copy.rows))) return rc;
    }
    const json_t *at = json_object_get(v, "atomic");
    if (at) {
        tt__path(ep, sizeof ep, "%s.atomic", path);
        if (ds != TT_SCOPE_GM)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "only copies to GM add atomically");
        if (json_is_boolean(at)) {
            /* true / false: the constant 1 / 0 */
            json_t *c = json_integer(json_is_true(at) ? 1 : 0);
            if (!c) return tt__tp_oom(p, ep);
            rc = tt__tp_expr(p, c, ep, &o->u.copy.atomic);
            json_decref(c);
            if (rc) return rc;
        } else if ((rc = tt__tp_expr(p, at, ep, &o->u.copy.atomic))) {
            return rc;
        }
    }
    return TT_OK;
}

/* "nd2nz": true / false, or an expression of the problem inputs (a layout input: the
 * tensor is stored ND or already in NZ fractals), converting when it is non-zero. */
static tt_rc kp_copy_nd2nz(tt__tp *p, tt_op *o, const json_t *nz, const char *ep)
{
    if (json_is_boolean(nz)) {
        o->u.copy.nd2nz = json_is_true(nz) ? 1 : 0;
        return TT_OK;
    }
    if (!json_is_string(nz))
        return tt_errf(p->err, TT_ETEMPLATE, ep, "expected true, false or an expression, got %s",
                       tt__json_type(nz));
    tt_rc rc = tt__tp_expr(p, nz, ep, &o->u.copy.nd2nz_if);
    if (rc) return rc;
    if (tt_expr_max_slot(o->u.copy.nd2nz_if) >= (int)p->t->ninputs)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "may read only the problem inputs");
    o->u.copy.nd2nz = 2;
    return TT_OK;
}

/* An `along` entry that is not a name: an index map, an expression of exactly one grid dim
 * (and of inputs, params and lets), e.g. "bh // group". */
static tt_rc kp_along_map(tt__tp *p, const json_t *e, const char *ip, tt_along *a)
{
    const tt_kernel *k = p->t->kernel;
    tt_expr *x = NULL;
    tt_rc rc = tt__tp_expr(p, e, ip, &x);
    if (rc) return rc;
    int sl[TT_MAX_SLOTS], dim = -1, ndims = 0;
    size_t n = tt_expr_slots(x, sl, TT_MAX_SLOTS);
    for (size_t i = 0; i < n && i < TT_MAX_SLOTS; i++)
        for (size_t g = 0; g < k->ngrid; g++)
            if (k->grid[g].slot == sl[i]) {
                dim = (int)g;
                ndims++;
            }
    if (ndims != 1) {
        tt_expr_free(x);
        return tt_errf(p->err, TT_ETEMPLATE, ip,
                       "index map \"%s\" must read exactly one grid dim (it reads %d)",
                       json_string_value(e), ndims);
    }
    *a = (tt_along){0, dim, x};
    return TT_OK;
}

static tt_rc kp_copy(tt__tp *p, tt_op *o, const json_t *v, const char *path)
{
    const tt_template *t = p->t;
    char ep[192];
    tt_rc rc;
    static const char *const keys[] = {"copy", "along", "nd2nz", "rows", "atomic", NULL};
    if ((rc = tt__tp_keys(p, v, path, keys))) return rc;
    const json_t *c = json_object_get(v, "copy");
    tt__path(ep, sizeof ep, "%s.copy", path);
    if (!json_is_array(c) || json_array_size(c) != 2)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "expected [source, destination]");
    tt_scope ss, ds;
    tt__path(ep, sizeof ep, "%s.copy[0]", path);
    if ((rc = kp_ref(p, json_array_get(c, 0), ep, &o->u.copy.src, &ss))) return rc;
    tt__path(ep, sizeof ep, "%s.copy[1]", path);
    if ((rc = kp_ref(p, json_array_get(c, 1), ep, &o->u.copy.dst, &ds))) return rc;
    tt__path(ep, sizeof ep, "%s.copy", path);
    int pa = tt_path_of(ss, ds);
    if (pa < 0)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "no path from %s to %s", tt_scope_name(ss),
                       tt_scope_name(ds));
    if (ds == TT_SCOPE_GM && !t->tensors[o->u.copy.dst.index].output &&
        !t->tensors[o->u.copy.dst.index].workspace)
        return tt_errf(p->err, TT_ETEMPLATE, ep,
                       "tensor \"%s\" is written but is neither an output nor a workspace",
                       t->tensors[o->u.copy.dst.index].name);
    o->u.copy.path = (tt_path)pa;
    o->side = (ss == TT_SCOPE_UB || ds == TT_SCOPE_UB) ? TT_SIDE_VECTOR : TT_SIDE_CUBE;
    o->u.copy.nd2nz = -1;
    const json_t *nz = json_object_get(v, "nd2nz");
    if (nz) {
        tt__path(ep, sizeof ep, "%s.nd2nz", path);
        if (pa != TT_PATH_GM_L1)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "only GM->L1 copies convert ND to NZ");
        if ((rc = kp_copy_nd2nz(p, o, nz, ep))) return rc;
    }
    if ((rc = kp_copy_gather_atomic(p, o, v, path, ss, ds))) return rc;
    const json_t *al = json_object_get(v, "along");
    if (!al) return TT_OK;
    tt__path(ep, sizeof ep, "%s.along", path);
    if (!json_is_array(al))
        return tt_errf(p->err, TT_ETEMPLATE, ep, "expected an array of grid dims and loop "
                                                 "variables, got %s", tt__json_type(al));
    if (ss != TT_SCOPE_GM && ds != TT_SCOPE_GM)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "only copies from or to GM have \"along\"");
    size_t n = json_array_size(al);
    if (n > TT_TMPL_MAX_DEPTH + TT_MAX_SLOTS)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "too many entries");
    o->u.copy.along = calloc(n ? n : 1, sizeof *o->u.copy.along);
    if (!o->u.copy.along) return tt__tp_oom(p, ep);
    for (size_t i = 0; i < n; i++) {
        char ip[200];
        tt__path(ip, sizeof ip, "%s[%zu]", ep, i);
        const json_t *e = json_array_get(al, i);
        if (!json_is_string(e))
            return tt_errf(p->err, TT_ETEMPLATE, ip, "expected a name, got %s", tt__json_type(e));
        const char *s = json_string_value(e);
        tt_along a = {-1, -1, NULL};
        for (size_t g = 0; g < t->kernel->ngrid; g++)
            if (strcmp(t->kernel->grid[g].name, s) == 0) a = (tt_along){0, (int)g, NULL};
        for (size_t d = 0; d < p->depth; d++)
            if (strcmp(p->loopvars[d], s) == 0) a = (tt_along){1, p->loopids[d], NULL};
        if (a.index < 0 && s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_")] == '\0')
            return tt_errf(p->err, TT_ETEMPLATE, ip,
                           "\"%s\" is neither a grid dim nor an enclosing loop variable", s);
        if (a.index < 0 && (rc = kp_along_map(p, e, ip, &a))) return rc;
        for (size_t j = 0; j < o->u.copy.nalong; j++)
            if (o->u.copy.along[j].is_loop == a.is_loop && o->u.copy.along[j].index == a.index) {
                tt_expr_free(a.map);
                return tt_errf(p->err, TT_ETEMPLATE, ip, "\"%s\" listed twice", s);
            }
        o->u.copy.along[o->u.copy.nalong++] = a;
    }
    return TT_OK;
}

static tt_rc kp_mma(tt__tp *p, tt_op *o, const json_t *v, const char *path)
{
    char ep[192];
    tt_rc rc;
    static const char *const keys[] = {"mma", "init", NULL};
    if ((rc = tt__tp_keys(p, v, path, keys))) return rc;
    const json_t *m = json_object_get(v, "mma");
    tt__path(ep, sizeof ep, "%s.mma", path);
    if (!json_is_array(m) || json_array_size(m) != 3)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "expected [L0A buffer, L0B buffer, L0C buffer]");
    static const tt_scope want[3] = {TT_SCOPE_L0A, TT_SCOPE_L0B, TT_SCOPE_L0C};
    int *dst[3] = {&o->u.mma.a, &o->u.mma.b, &o->u.mma.c};
    for (int i = 0; i < 3; i++) {
        tt__path(ep, sizeof ep, "%s.mma[%d]", path, i);
        if ((rc = kp_buffer_in(p, json_array_get(m, (size_t)i), ep, want[i], dst[i]))) return rc;
    }
    const json_t *in = json_object_get(v, "init");
    if (in) {
        tt__path(ep, sizeof ep, "%s.init", path);
        if (!json_is_boolean(in))
            return tt_errf(p->err, TT_ETEMPLATE, ep, "expected true or false, got %s",
                           tt__json_type(in));
        o->u.mma.init = json_is_true(in) ? 1 : 0;
    }
    o->side = TT_SIDE_CUBE;
    return TT_OK;
}

static tt_rc kp_vec(tt__tp *p, tt_op *o, const json_t *v, const char *path)
{
    char ep[192];
    tt_rc rc;
    static const char *const keys[] = {"vec", "out", "in", "elems", NULL};
    if ((rc = tt__tp_keys(p, v, path, keys))) return rc;
    const json_t *name = json_object_get(v, "vec");
    tt__path(ep, sizeof ep, "%s.vec", path);
    if (!json_is_string(name))
        return tt_errf(p->err, TT_ETEMPLATE, ep, "expected a vector op name, got %s",
                       tt__json_type(name));
    int cls = tt_vop_class(json_string_value(name));
    if (cls < 0)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "unknown vector op \"%s\"",
                       json_string_value(name));
    o->u.vec.cls = (tt_vclass)cls;
    if (!(o->u.vec.op = strdup(json_string_value(name)))) return tt__tp_oom(p, ep);
    tt__path(ep, sizeof ep, "%s.out", path);
    const json_t *out = json_object_get(v, "out");
    if (!out) return tt_errf(p->err, TT_ETEMPLATE, ep, "missing (the UB buffer written)");
    if ((rc = kp_buffer_in(p, out, ep, TT_SCOPE_UB, &o->u.vec.out))) return rc;
    const json_t *in = json_object_get(v, "in");
    if (in) {
        tt__path(ep, sizeof ep, "%s.in", path);
        if (!json_is_array(in) || json_array_size(in) > 4)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "expected an array of at most 4 UB buffers");
        for (size_t i = 0; i < json_array_size(in); i++) {
            tt__path(ep, sizeof ep, "%s.in[%zu]", path, i);
            if ((rc = kp_buffer_in(p, json_array_get(in, i), ep, TT_SCOPE_UB,
                                   &o->u.vec.in[o->u.vec.nin])))
                return rc;
            o->u.vec.nin++;
        }
    }
    const json_t *el = json_object_get(v, "elems");
    tt__path(ep, sizeof ep, "%s.elems", path);
    if (el && (rc = tt__tp_expr(p, el, ep, &o->u.vec.elems))) return rc;
    o->side = TT_SIDE_VECTOR;
    return TT_OK;
}

static tt_rc kp_sync(tt__tp *p, tt_op *o, const json_t *v, const char *path, tt_side prev)
{
    char ep[192];
    tt_rc rc;
    const json_t *k = json_object_get(v, "sync");
    tt__path(ep, sizeof ep, "%s.sync", path);
    if (!json_is_string(k))
        return tt_errf(p->err, TT_ETEMPLATE, ep, "expected \"cross\" or \"barrier\", got %s",
                       tt__json_type(k));
    const char *s = json_string_value(k);
    tt_cores cores = p->t->kernel->cores;
    if (strcmp(s, "barrier") == 0) {
        static const char *const keys[] = {"sync", "side", NULL};
        if ((rc = tt__tp_keys(p, v, path, keys))) return rc;
        o->u.sync.kind = TT_SYNC_BARRIER;
        o->side = cores == TT_CORES_VECTOR ? TT_SIDE_VECTOR
                  : cores == TT_CORES_CUBE ? TT_SIDE_CUBE : prev;
        const json_t *sd = json_object_get(v, "side");
        tt__path(ep, sizeof ep, "%s.side", path);
        if (sd && (rc = kp_side(p, sd, ep, &o->side))) return rc;
        o->u.sync.from = o->u.sync.to = o->side;
        return TT_OK;
    }
    if (strcmp(s, "cross") != 0)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "unknown sync \"%s\" (cross, barrier)", s);
    static const char *const keys[] = {"sync", "from", "to", "flag", "every", NULL};
    if ((rc = tt__tp_keys(p, v, path, keys))) return rc;
    o->u.sync.kind = TT_SYNC_CROSS;
    if (cores != TT_CORES_MIX)
        return tt_errf(p->err, TT_ETEMPLATE, path, "cross-core sync needs \"cores\": \"mix\"");
    tt__path(ep, sizeof ep, "%s.from", path);
    if ((rc = kp_side(p, json_object_get(v, "from"), ep, &o->u.sync.from))) return rc;
    tt__path(ep, sizeof ep, "%s.to", path);
    if ((rc = kp_side(p, json_object_get(v, "to"), ep, &o->u.sync.to))) return rc;
    if (o->u.sync.from == o->u.sync.to)
        return tt_errf(p->err, TT_ETEMPLATE, ep, "a cross-core sync goes between cube and vector");
    const json_t *fl = json_object_get(v, "flag");
    if (fl) {
        tt__path(ep, sizeof ep, "%s.flag", path);
        if (!json_is_integer(fl) || json_integer_value(fl) < 0 || json_integer_value(fl) > 10)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "expected a flag id 0..10");
        o->u.sync.flag = (int)json_integer_value(fl);
    }
    const json_t *ev = json_object_get(v, "every");
    if (ev) {
        tt__path(ep, sizeof ep, "%s.every", path);
        if ((rc = tt__tp_expr(p, ev, ep, &o->u.sync.every))) return rc;
    }
    o->side = o->u.sync.from;
    return TT_OK;
}

static tt_rc kp_op(tt__tp *p, tt_op *o, const json_t *v, const char *path, tt_side prev)
{
    tt_rc rc;
    tt__path(o->path, sizeof o->path, "%s", path);
    if (!json_is_object(v))
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected an op object, got %s",
                       tt__json_type(v));
    if (++p->nops > TT_TMPL_MAX_OPS)
        return tt_errf(p->err, TT_ETEMPLATE, path, "more than %d ops", TT_TMPL_MAX_OPS);
    static const char *const kinds[] = {"for", "copy", "mma", "vec", "sync"};
    int kind = -1;
    for (int i = 0; i < 5; i++) {
        if (!json_object_get(v, kinds[i])) continue;
        if (kind >= 0)
            return tt_errf(p->err, TT_ETEMPLATE, path, "an op has one of \"%s\" and \"%s\"",
                           kinds[kind], kinds[i]);
        kind = i;
    }
    if (kind < 0)
        return tt_errf(p->err, TT_ETEMPLATE, path,
                       "unknown op (expected one of for, copy, mma, vec, sync)");
    o->kind = (tt_op_kind)kind;  /* the table order is the enum order */
    switch (o->kind) {
    case TT_OP_FOR: rc = kp_for(p, o, v, path); break;
    case TT_OP_COPY: rc = kp_copy(p, o, v, path); break;
    case TT_OP_MMA: rc = kp_mma(p, o, v, path); break;
    case TT_OP_VEC: rc = kp_vec(p, o, v, path); break;
    default: rc = kp_sync(p, o, v, path, prev); break;
    }
    if (rc) return rc;
    tt_cores cores = p->t->kernel->cores;
    if (o->kind != TT_OP_FOR) {
        if (cores == TT_CORES_CUBE && o->side == TT_SIDE_VECTOR)
            return tt_errf(p->err, TT_ETEMPLATE, path,
                           "vector-side op in a \"cube\" kernel (use \"cores\": \"mix\")");
        if (cores == TT_CORES_VECTOR && o->side == TT_SIDE_CUBE)
            return tt_errf(p->err, TT_ETEMPLATE, path,
                           "cube-side op in a \"vector\" kernel (use \"cores\": \"mix\")");
    }
    return TT_OK;
}

static tt_rc kp_body(tt__tp *p, const json_t *arr, const char *path, tt_op **ops, size_t *nops)
{
    tt_rc rc;
    if (!arr) return tt_errf(p->err, TT_ETEMPLATE, path, "missing");
    if (!json_is_array(arr))
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected an array of ops, got %s",
                       tt__json_type(arr));
    size_t n = json_array_size(arr);
    if (n == 0) return tt_errf(p->err, TT_ETEMPLATE, path, "empty body");
    if (n > TT_TMPL_MAX_OPS)
        return tt_errf(p->err, TT_ETEMPLATE, path, "more than %d ops", TT_TMPL_MAX_OPS);
    *ops = calloc(n, sizeof **ops);
    if (!*ops) return tt__tp_oom(p, path);
    tt_side prev = p->t->kernel->cores == TT_CORES_VECTOR ? TT_SIDE_VECTOR : TT_SIDE_CUBE;
    for (size_t i = 0; i < n; i++) {
        char ep[192];
        tt__path(ep, sizeof ep, "%s[%zu]", path, i);
        (*nops)++;
        if ((rc = kp_op(p, &(*ops)[i], json_array_get(arr, i), ep, prev))) return rc;
        prev = (*ops)[i].side;
    }
    return TT_OK;
}

tt_rc tt__tmpl_parse_kernel(tt__tp *p, const json_t *k)
{
    tt_template *t = p->t;
    tt_rc rc;
    if (!json_is_object(k))
        return tt_errf(p->err, TT_ETEMPLATE, "kernel", "expected an object, got %s",
                       tt__json_type(k));
    static const char *const keys[] = {"grid", "cores", "launch", "persistent", "swizzle", "body", NULL};
    if ((rc = tt__tp_keys(p, k, "kernel", keys))) return rc;
    tt_kernel *kn = calloc(1, sizeof *kn);
    if (!kn) return tt__tp_oom(p, "kernel");
    t->kernel = kn;
    const json_t *cores = json_object_get(k, "cores");
    if (!cores) return tt_errf(p->err, TT_ETEMPLATE, "kernel.cores", "missing (cube, vector, mix)");
    if (!json_is_string(cores))
        return tt_errf(p->err, TT_ETEMPLATE, "kernel.cores", "expected a string, got %s",
                       tt__json_type(cores));
    const char *cs = json_string_value(cores);
    if (strcmp(cs, "cube") == 0) kn->cores = TT_CORES_CUBE;
    else if (strcmp(cs, "vector") == 0) kn->cores = TT_CORES_VECTOR;
    else if (strcmp(cs, "mix") == 0) kn->cores = TT_CORES_MIX;
    else
        return tt_errf(p->err, TT_ETEMPLATE, "kernel.cores",
                       "unknown core kind \"%s\" (cube, vector, mix)", cs);
    const json_t *launch = json_object_get(k, "launch");
    const char *ls = launch ? json_string_value(launch) : NULL;
    if (launch && !ls)
        return tt_errf(p->err, TT_ETEMPLATE, "kernel.launch",
                       "expected \"mix\", \"cores\" (launch as the cores say) or an expression");
    if (ls && strcmp(ls, "mix") != 0 && strcmp(ls, "cores") != 0 && kn->cores != TT_CORES_MIX) {
        /* an expression of the problem inputs: MIX when non-zero (the toolchain's choice) */
        if ((rc = tt__tp_expr(p, launch, "kernel.launch", &kn->launch_if))) return rc;
        if (tt_expr_max_slot(kn->launch_if) >= (int)t->ninputs)
            return tt_errf(p->err, TT_ETEMPLATE, "kernel.launch", "may read only the problem inputs");
        kn->launch_mix = 2;
    } else {
        kn->launch_mix = (ls && strcmp(ls, "mix") == 0) || kn->cores == TT_CORES_MIX;
    }

    /* grid: extents see inputs, params and lets; each dim then gets a slot. */
    const json_t *grid = json_object_get(k, "grid");
    if (!grid) return tt_errf(p->err, TT_ETEMPLATE, "kernel.grid", "missing");
    if (!json_is_object(grid))
        return tt_errf(p->err, TT_ETEMPLATE, "kernel.grid", "expected an object, got %s",
                       tt__json_type(grid));
    size_t ng = json_object_size(grid);
    if (t->ninputs + t->nparams + t->nlets + ng > TT_MAX_SLOTS)
        return tt_errf(p->err, TT_ETEMPLATE, "kernel.grid", "more than %d names", TT_MAX_SLOTS);
    kn->grid = calloc(ng ? ng : 1, sizeof *kn->grid);
    if (!kn->grid) return tt__tp_oom(p, "kernel.grid");
    p->nvisible = t->ninputs + t->nparams + t->nlets;
    const json_t *pers = json_object_get(k, "persistent");
    if (pers && (rc = tt__tp_expr(p, pers, "kernel.persistent", &kn->persistent))) return rc;
    const json_t *swz = json_object_get(k, "swizzle");
    if (swz && (rc = tt__tp_expr(p, swz, "kernel.swizzle", &kn->swizzle))) return rc;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)grid, name, v) {
        char ep[192];
        tt__path(ep, sizeof ep, "kernel.grid.%s", name);
        if ((rc = tt__tp_name(p, name, ep))) return rc;
        tt_grid_dim *g = &kn->grid[kn->ngrid];
        if ((rc = tt__tp_expr(p, v, ep, &g->extent))) return rc;
        g->slot = (int)(t->ninputs + t->nparams + t->nlets + kn->ngrid);
        kn->ngrid++;  /* counted first: the kernel's free then frees extent when strdup fails */
        if (!(g->name = strdup(name))) return tt__tp_oom(p, ep);
    }
    t->nslots = t->ninputs + t->nparams + t->nlets + kn->ngrid;
    p->nvisible = t->nslots;    /* trips, stages and elems may read the block index */
    rc = kp_body(p, json_object_get(k, "body"), "kernel.body", &kn->body, &kn->nbody);
    kn->nloops = p->nloops;
    return rc;
}

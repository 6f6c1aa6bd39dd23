/* SPDX-License-Identifier: MIT
 * template_common.c - the bottom of the template parser: freeing a template (and its kernel),
 * slot names, and the helpers every parser file shares (paths, names, keys, expressions).
 * Calls nothing of template.c, template_parse.c or template_kernel.c (they call down here).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"
#include "template_int.h"

char *tt__strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

void tt__path(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
}

const char *tt__json_type(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

const char *tt__rc_word(tt_rc rc)
{
    switch (rc) {
    case TT_EOVERFLOW: return "overflow";
    case TT_EDIVZERO: return "division by zero";
    case TT_EDOMAIN: return "domain error";
    case TT_ENOMEM: return "out of memory";
    default: return tt_strerror(rc);
    }
}

/* 1 when src has a `/` that is not part of `//` (Python's true division). */
static int has_true_div(const char *src)
{
    for (const char *p = src ? strchr(src, '/') : NULL; p; p = strchr(p + 1, '/')) {
        if (p[1] == '/') {
            p++;
            continue;
        }
        return 1;
    }
    return 0;
}

const char *tt__expr_rc_word(const tt_expr *e, tt_rc rc)
{
    if (rc == TT_EDOMAIN && has_true_div(tt_expr_source(e)))
        return "domain error (a fraction? `/` is true division, `//` floors)";
    return tt__rc_word(rc);
}

tt_rc tt__tp_oom(tt__tp *p, const char *path)
{
    return tt_errf(p->err, TT_ENOMEM, path, "out of memory");
}

/* ---- names ---------------------------------------------------------------------------- */

static int tp_resolve(void *ud, const char *name, size_t len)
{
    const tt__tp *p = ud;
    for (size_t i = 0; i < p->nvisible; i++) {
        const char *n = tt_tmpl_slot_name(p->t, i);
        if (n && strlen(n) == len && memcmp(n, name, len) == 0) return (int)i;
    }
    return -1;
}

static const char *const tt_reserved[] = {
    "and", "or", "not", "if", "else", "in", "is", "True", "False", "None", "lambda",
    "min", "max", "ceildiv", "floordiv", "align_up", "log2", "sizeof", "abs", NULL};

tt_rc tt__tp_name(tt__tp *p, const char *name, const char *path)
{
    const tt_template *t = p->t;
    size_t n = strlen(name);
    if (n == 0 || n > TT_TMPL_MAX_NAME)
        return tt_errf(p->err, TT_ETEMPLATE, path, "name must have 1..%d characters",
                       TT_TMPL_MAX_NAME);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return tt_errf(p->err, TT_ETEMPLATE, path,
                           "\"%s\" is not an identifier ([A-Za-z_][A-Za-z0-9_]*)", name);
    }
    for (size_t i = 0; tt_reserved[i]; i++)
        if (strcmp(tt_reserved[i], name) == 0)
            return tt_errf(p->err, TT_ETEMPLATE, path, "\"%s\" is a reserved word", name);
    const char *what = NULL;
    for (size_t i = 0; i < t->ninputs && !what; i++)
        if (t->inputs[i].name && strcmp(t->inputs[i].name, name) == 0) what = "an input";
    for (size_t i = 0; i < t->nparams && !what; i++)
        if (t->params[i].name && strcmp(t->params[i].name, name) == 0) what = "a param";
    for (size_t i = 0; i < t->nlets && !what; i++)
        if (t->lets[i].name && strcmp(t->lets[i].name, name) == 0) what = "a let";
    for (size_t i = 0; i < t->ntensors && !what; i++)
        if (t->tensors[i].name && strcmp(t->tensors[i].name, name) == 0) what = "a tensor";
    for (size_t i = 0; i < t->nbuffers && !what; i++)
        if (t->buffers[i].name && strcmp(t->buffers[i].name, name) == 0) what = "a buffer";
    if (t->kernel)
        for (size_t i = 0; i < t->kernel->ngrid && !what; i++)
            if (t->kernel->grid[i].name && strcmp(t->kernel->grid[i].name, name) == 0)
                what = "a grid dim";
    for (size_t i = 0; i < p->nallloops && !what; i++)
        if (strcmp(p->allloops[i], name) == 0) what = "a loop variable";
    if (what)
        return tt_errf(p->err, TT_ETEMPLATE, path, "name \"%s\" is already used by %s", name,
                       what);
    return TT_OK;
}

int tt__tmpl_buffer(const tt_template *t, const char *name)
{
    for (size_t i = 0; i < t->nbuffers; i++)
        if (t->buffers[i].name && strcmp(t->buffers[i].name, name) == 0) return (int)i;
    return -1;
}

int tt__tmpl_tensor(const tt_template *t, const char *name)
{
    for (size_t i = 0; i < t->ntensors; i++)
        if (t->tensors[i].name && strcmp(t->tensors[i].name, name) == 0) return (int)i;
    return -1;
}

tt_rc tt__tp_keys(tt__tp *p, const json_t *obj, const char *path, const char *const *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k) != 0) i++;
        if (!keys[i]) {
            char ph[96];
            const char *hint = tt_suggest(k, strlen(k), keys, i);
            return tt_errf(p->err, TT_ETEMPLATE, path, "unknown key \"%s\"%s", k,
                           tt_suggest_phrase(ph, sizeof ph, hint, NULL));
        }
    }
    return TT_OK;
}

tt_rc tt__tp_expr(tt__tp *p, const json_t *v, const char *path, tt_expr **out)
{
    char num[32];
    const char *src;
    *out = NULL;
    if (json_is_string(v)) {
        src = json_string_value(v);
    } else if (json_is_integer(v)) {
        snprintf(num, sizeof num, "%" PRId64, (int64_t)json_integer_value(v));
        src = num;
    } else {
        return tt_errf(p->err, TT_ETEMPLATE, path,
                       "expected an expression (string or integer), got %s", tt__json_type(v));
    }
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_expr_compile(src, tp_resolve, p, out, &e);
    if (rc == TT_OK) return TT_OK;
    if (rc == TT_ENOMEM) return tt__tp_oom(p, path);
    /* the offset is in the message, with the source: err->pos stays -1, or the API's
     * tt_resp_errinfo would say it a second time */
    return tt_errf(p->err, rc, path, "%s (at offset %d of \"%.120s\")",
                   e.msg[0] ? e.msg : tt_strerror(rc), e.pos, src);
}

/* ---- freeing -------------------------------------------------------------------------- */

static void free_ops(tt_op *ops, size_t n)
{
    if (!ops) return;
    for (size_t i = 0; i < n; i++) {
        tt_op *o = &ops[i];
        switch (o->kind) {
        case TT_OP_FOR:
            free(o->u.loop.var);
            tt_expr_free(o->u.loop.trip);
            tt_expr_free(o->u.loop.stages);
            free_ops(o->u.loop.body, o->u.loop.nbody);
            break;
        case TT_OP_COPY:
            for (size_t a = 0; a < o->u.copy.nalong; a++) tt_expr_free(o->u.copy.along[a].map);
            free(o->u.copy.along);
            tt_expr_free(o->u.copy.rows);
            tt_expr_free(o->u.copy.nd2nz_if);
            tt_expr_free(o->u.copy.atomic);
            break;
        case TT_OP_VEC:
            free(o->u.vec.op);
            tt_expr_free(o->u.vec.elems);
            break;
        case TT_OP_SYNC: tt_expr_free(o->u.sync.every); break;
        case TT_OP_MMA: break;
        }
    }
    free(ops);
}

void tt__tmpl_free_kernel(tt_kernel *k)
{
    if (!k) return;
    for (size_t i = 0; i < k->ngrid; i++) {
        free(k->grid[i].name);
        tt_expr_free(k->grid[i].extent);
    }
    free(k->grid);
    tt_expr_free(k->persistent);
    tt_expr_free(k->launch_if);
    tt_expr_free(k->swizzle);
    free_ops(k->body, k->nbody);
    free(k);
}

void tt_tmpl_free(tt_template *t)
{
    if (!t) return;
    free(t->name);
    free(t->version);
    free(t->description);
    for (size_t i = 0; i < t->ninputs; i++) {
        free(t->inputs[i].name);
        free(t->inputs[i].dtypes);
    }
    free(t->inputs);
    for (size_t i = 0; i < t->nparams; i++) {
        free(t->params[i].name);
        free(t->params[i].values);
    }
    free(t->params);
    for (size_t i = 0; i < t->nlets; i++) {
        free(t->lets[i].name);
        tt_expr_free(t->lets[i].expr);
    }
    free(t->lets);
    for (size_t i = 0; i < t->nconstraints; i++) tt_expr_free(t->constraints[i].expr);
    free(t->constraints);
    for (size_t i = 0; i < t->ntensors; i++) {
        free(t->tensors[i].name);
        for (int d = 0; d < TT_MAX_RANK; d++) tt_expr_free(t->tensors[i].shape[d]);
    }
    free(t->tensors);
    for (size_t i = 0; i < t->nbuffers; i++) {
        free(t->buffers[i].name);
        for (int d = 0; d < TT_MAX_RANK; d++) tt_expr_free(t->buffers[i].shape[d]);
        tt_expr_free(t->buffers[i].copies);
    }
    free(t->buffers);
    tt__tmpl_free_kernel(t->kernel);
    free(t->source_file);
    free(t->source_text);
    free(t->source_script);
    json_decref(t->doc);
    free(t);
}

/* ---- slots ---------------------------------------------------------------------------- */

tt_rc tt_tmpl_along_count(const tt_template *t, const tt_along *a, const int64_t *slots,
                          int64_t ext, int64_t *out)
{
    if (ext < 1) ext = 1;
    *out = ext;
    if (!a->map || a->is_loop) return TT_OK;
    int64_t v[TT_MAX_SLOTS], lo, hi;
    size_t n = t->nslots < TT_MAX_SLOTS ? t->nslots : TT_MAX_SLOTS;
    memcpy(v, slots, n * sizeof *v);
    int s = t->kernel->grid[a->index].slot;
    tt_rc rc;
    v[s] = 0;
    if ((rc = tt_expr_eval(a->map, v, &lo))) return rc;
    v[s] = ext - 1;
    if ((rc = tt_expr_eval(a->map, v, &hi))) return rc;
    /* a non-decreasing map takes hi - lo + 1 values at most */
    int64_t d = hi - lo;
    *out = d < 0 ? 1 : d >= ext - 1 ? ext : d + 1;
    return TT_OK;
}

int tt_tmpl_slot_of(const tt_template *t, const char *name)
{
    if (!t || !name) return -1;
    for (size_t i = 0; i < t->nslots; i++) {
        const char *n = tt_tmpl_slot_name(t, i);
        if (n && strcmp(n, name) == 0) return (int)i;
    }
    return -1;
}

int tt_copy_nd2nz(const tt_op *o, const int64_t *slots)
{
    if (o->kind != TT_OP_COPY) return 0;
    if (o->u.copy.nd2nz != 2) return o->u.copy.nd2nz == 1;
    int64_t v = 0;
    return tt_expr_eval(o->u.copy.nd2nz_if, slots, &v) == TT_OK && v != 0;
}

const char *tt_tmpl_slot_name(const tt_template *t, size_t slot)
{
    if (slot < t->ninputs) return t->inputs[slot].name;
    slot -= t->ninputs;
    if (slot < t->nparams) return t->params[slot].name;
    slot -= t->nparams;
    if (slot < t->nlets) return t->lets[slot].name;
    slot -= t->nlets;
    if (t->kernel && slot < t->kernel->ngrid) return t->kernel->grid[slot].name;
    return NULL;
}

int tt_kernel_launch_mix(const tt_kernel *k, const int64_t *slots)
{
    int64_t v = 0;
    if (k->launch_mix != 2) return k->launch_mix;
    return tt_expr_eval(k->launch_if, slots, &v) == TT_OK && v != 0;
}


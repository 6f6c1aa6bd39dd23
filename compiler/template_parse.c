/* SPDX-License-Identifier: MIT
 * template_parse.c - the document walk of a template: top level, inputs, params, lets,
 * constraints, tensors, buffers and source (the kernel is in template_kernel.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_int.h"
#include "render.h"
#include "suggest.h"

#define TT_INPUT_MAX_DEFAULT ((int64_t)1 << 40)

/* ---- small JSON helpers ----------------------------------------------------------------- */

static tt_rc tp_object(tt__tp *p, const json_t *v, const char *path)
{
    if (!json_is_object(v))
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected an object, got %s", tt__json_type(v));
    return TT_OK;
}

static tt_rc tp_int(tt__tp *p, const json_t *v, const char *path, int64_t *out)
{
    if (!json_is_integer(v))
        return tt_errf(p->err, TT_ETEMPLATE, path, "not an integer (got %s)", tt__json_type(v));
    *out = (int64_t)json_integer_value(v);
    return TT_OK;
}

static tt_rc tp_bool(tt__tp *p, const json_t *v, const char *path, int *out)
{
    if (!json_is_boolean(v))
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected true or false, got %s",
                       tt__json_type(v));
    *out = json_is_true(v) ? 1 : 0;
    return TT_OK;
}

static tt_rc tp_string(tt__tp *p, const json_t *v, const char *path, char **out)
{
    if (!json_is_string(v))
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected a string, got %s", tt__json_type(v));
    *out = strdup(json_string_value(v));
    return *out ? TT_OK : tt__tp_oom(p, path);
}

/* ---- inputs ------------------------------------------------------------------------------ */

static tt_rc tp_dtype_list(tt__tp *p, tt_input *in, const json_t *arr, const char *path)
{
    char ep[160];
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected a non-empty array of dtype names");
    size_t n = json_array_size(arr);
    if (n > TT_DT__COUNT)
        return tt_errf(p->err, TT_ETEMPLATE, path, "more dtypes than exist (%d)", TT_DT__COUNT);
    in->dtypes = calloc(n, sizeof *in->dtypes);
    if (!in->dtypes) return tt__tp_oom(p, path);
    for (size_t i = 0; i < n; i++) {
        const json_t *d = json_array_get(arr, i);
        tt__path(ep, sizeof ep, "%s[%zu]", path, i);
        if (!json_is_string(d))
            return tt_errf(p->err, TT_ETEMPLATE, ep, "expected a dtype name, got %s",
                           tt__json_type(d));
        int dt = tt_dtype_parse(json_string_value(d), json_string_length(d));
        if (dt < 0)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "unknown dtype \"%s\"", json_string_value(d));
        for (size_t j = 0; j < in->ndtypes; j++)
            if ((int)in->dtypes[j] == dt)
                return tt_errf(p->err, TT_ETEMPLATE, ep, "duplicate dtype \"%s\"",
                               tt_dtype_name(dt));
        in->dtypes[in->ndtypes++] = (tt_dtype)dt;
    }
    return TT_OK;
}

static tt_rc tp_input(tt__tp *p, tt_input *in, const json_t *v, const char *path)
{
    char ep[160];
    in->min = 1;
    in->max = TT_INPUT_MAX_DEFAULT;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcmp(s, "int") == 0) {
            in->kind = TT_INPUT_INT;
            return TT_OK;
        }
        if (strcmp(s, "dtype") == 0) {
            in->kind = TT_INPUT_DTYPE;
            in->dtypes = calloc(TT_DT__COUNT, sizeof *in->dtypes);
            if (!in->dtypes) return tt__tp_oom(p, path);
            for (int i = 0; i < TT_DT__COUNT; i++) in->dtypes[in->ndtypes++] = (tt_dtype)i;
            return TT_OK;
        }
        return tt_errf(p->err, TT_ETEMPLATE, path,
                       "unknown input type \"%s\" (int, dtype, a dtype list or an object)", s);
    }
    if (json_is_array(v)) {
        in->kind = TT_INPUT_DTYPE;
        return tp_dtype_list(p, in, v, path);
    }
    if (!json_is_object(v))
        return tt_errf(p->err, TT_ETEMPLATE, path,
                       "expected \"int\", a dtype list or an object, got %s", tt__json_type(v));
    static const char *const keys[] = {"type", "min", "max", "default", "values", NULL};
    tt_rc rc = tt__tp_keys(p, v, path, keys);
    if (rc) return rc;
    const json_t *type = json_object_get(v, "type");
    tt__path(ep, sizeof ep, "%s.type", path);
    if (!type) return tt_errf(p->err, TT_ETEMPLATE, ep, "missing (\"int\" or \"dtype\")");
    if (!json_is_string(type))
        return tt_errf(p->err, TT_ETEMPLATE, ep, "expected a string, got %s", tt__json_type(type));
    const json_t *def = json_object_get(v, "default");
    if (strcmp(json_string_value(type), "int") == 0) {
        in->kind = TT_INPUT_INT;
        if (json_object_get(v, "values")) {
            tt__path(ep, sizeof ep, "%s.values", path);
            return tt_errf(p->err, TT_ETEMPLATE, ep, "only dtype inputs take values");
        }
        const json_t *mn = json_object_get(v, "min"), *mx = json_object_get(v, "max");
        tt__path(ep, sizeof ep, "%s.min", path);
        if (mn && (rc = tp_int(p, mn, ep, &in->min))) return rc;
        tt__path(ep, sizeof ep, "%s.max", path);
        if (mx && (rc = tp_int(p, mx, ep, &in->max))) return rc;
        if (in->min > in->max)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "max %" PRId64 " is below min %" PRId64,
                           in->max, in->min);
        if (def) {
            tt__path(ep, sizeof ep, "%s.default", path);
            if ((rc = tp_int(p, def, ep, &in->def))) return rc;
            if (in->def < in->min || in->def > in->max)
                return tt_errf(p->err, TT_ETEMPLATE, ep,
                               "%" PRId64 " is outside [%" PRId64 ", %" PRId64 "]", in->def,
                               in->min, in->max);
            in->has_default = 1;
        }
        return TT_OK;
    }
    if (strcmp(json_string_value(type), "dtype") == 0) {
        in->kind = TT_INPUT_DTYPE;
        if (json_object_get(v, "min") || json_object_get(v, "max")) {
            tt__path(ep, sizeof ep, "%s", path);
            return tt_errf(p->err, TT_ETEMPLATE, ep, "dtype inputs take no min/max");
        }
        tt__path(ep, sizeof ep, "%s.values", path);
        const json_t *vals = json_object_get(v, "values");
        if (!vals) return tt_errf(p->err, TT_ETEMPLATE, ep, "missing (the accepted dtypes)");
        if ((rc = tp_dtype_list(p, in, vals, ep))) return rc;
        if (def) {
            tt__path(ep, sizeof ep, "%s.default", path);
            if (!json_is_string(def))
                return tt_errf(p->err, TT_ETEMPLATE, ep, "expected a dtype name, got %s",
                               tt__json_type(def));
            int dt = tt_dtype_parse(json_string_value(def), json_string_length(def));
            size_t j = 0;
            while (j < in->ndtypes && (int)in->dtypes[j] != dt) j++;
            if (dt < 0 || j == in->ndtypes)
                return tt_errf(p->err, TT_ETEMPLATE, ep, "\"%s\" is not one of the values",
                               json_string_value(def));
            in->def = dt;
            in->has_default = 1;
        }
        return TT_OK;
    }
    return tt_errf(p->err, TT_ETEMPLATE, ep, "unknown input type \"%s\" (int or dtype)",
                   json_string_value(type));
}

/* The longest text of one input's value: its widest dtype name, or the wider of its bounds. */
static size_t tp_value_width(const tt_input *in)
{
    size_t w = 0;
    char num[24];
    if (in->kind == TT_INPUT_DTYPE) {
        for (size_t d = 0; d < in->ndtypes; d++) {
            size_t l = strlen(tt_dtype_name(in->dtypes[d]));
            if (l > w) w = l;
        }
        return w;
    }
    size_t lo = (size_t)snprintf(num, sizeof num, "%" PRId64, in->min);
    size_t hi = (size_t)snprintf(num, sizeof num, "%" PRId64, in->max);
    return lo > hi ? lo : hi;
}

/* Refuse inputs whose longest problem key (name=value joined by ',') or export variant key
 * (template name, then _name<value> or _<dtype> per input) would not fit: a key cut short
 * could make two problems one. */
static tt_rc tp_key_lengths(tt__tp *p)
{
    const tt_template *t = p->t;
    size_t pk = 0, vk = strlen(t->name);
    for (size_t i = 0; i < t->ninputs; i++) {
        const tt_input *in = &t->inputs[i];
        size_t nl = strlen(in->name), w = tp_value_width(in);
        pk += (i ? 1 : 0) + nl + 1 + w;
        vk += 1 + (in->kind == TT_INPUT_DTYPE ? 0 : nl) + w;
    }
    if (pk > TT_TMPL_MAX_PROBLEM_KEY)
        return tt_errf(p->err, TT_ETEMPLATE, "inputs", "a problem key could take %zu bytes "
                       "(names and widest values), more than %d: use shorter input names or "
                       "fewer inputs", pk, TT_TMPL_MAX_PROBLEM_KEY);
    if (vk > TT_TMPL_MAX_VARIANT_KEY)
        return tt_errf(p->err, TT_ETEMPLATE, "inputs", "an export variant key could take %zu "
                       "bytes (the template name, input names and widest values), more than "
                       "%d: use shorter input names or fewer inputs", vk,
                       TT_TMPL_MAX_VARIANT_KEY);
    return TT_OK;
}

static tt_rc tp_inputs(tt__tp *p, const json_t *obj)
{
    tt_template *t = p->t;
    char path[160];
    tt_rc rc;
    if (!obj) return TT_OK;
    if ((rc = tp_object(p, obj, "inputs"))) return rc;
    size_t n = json_object_size(obj);
    if (n > TT_MAX_SLOTS) return tt_errf(p->err, TT_ETEMPLATE, "inputs", "too many inputs");
    t->inputs = calloc(n ? n : 1, sizeof *t->inputs);
    if (!t->inputs) return tt__tp_oom(p, "inputs");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        tt__path(path, sizeof path, "inputs.%s", k);
        if ((rc = tt__tp_name(p, k, path))) return rc;
        tt_input *in = &t->inputs[t->ninputs++];
        if (!(in->name = strdup(k))) return tt__tp_oom(p, path);
        if ((rc = tp_input(p, in, v, path))) return rc;
    }
    return tp_key_lengths(p);
}

/* ---- params ------------------------------------------------------------------------------ */

static tt_rc tp_param_add(tt__tp *p, tt_param *pr, int64_t v, const char *path)
{
    for (size_t i = 0; i < pr->nvalues; i++)
        if (pr->values[i] == v)
            return tt_errf(p->err, TT_ETEMPLATE, path, "duplicate value %" PRId64, v);
    if (pr->nvalues >= TT_MAX_PARAM_VALUES)
        return tt_errf(p->err, TT_ETEMPLATE, path, "more than %d values", TT_MAX_PARAM_VALUES);
    pr->values[pr->nvalues++] = v;
    return TT_OK;
}

static tt_rc tp_param_list(tt__tp *p, tt_param *pr, const json_t *arr, const char *path)
{
    char ep[160];
    tt_rc rc;
    if (json_array_size(arr) == 0)
        return tt_errf(p->err, TT_ETEMPLATE, path, "empty domain");
    if (json_array_size(arr) > TT_MAX_PARAM_VALUES)
        return tt_errf(p->err, TT_ETEMPLATE, path, "more than %d values", TT_MAX_PARAM_VALUES);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        int64_t v = 0;
        tt__path(ep, sizeof ep, "%s[%zu]", path, i);
        if ((rc = tp_int(p, e, ep, &v))) return rc;
        if ((rc = tp_param_add(p, pr, v, ep))) return rc;
    }
    return TT_OK;
}

static tt_rc tp_param(tt__tp *p, tt_param *pr, const json_t *v, const char *path)
{
    char ep[160];
    tt_rc rc;
    pr->values = calloc(TT_MAX_PARAM_VALUES, sizeof *pr->values);
    if (!pr->values) return tt__tp_oom(p, path);
    if (json_is_array(v)) return tp_param_list(p, pr, v, path);
    if (!json_is_object(v))
        return tt_errf(p->err, TT_ETEMPLATE, path,
                       "expected a list of integers or an object (range, pow2, values), got %s",
                       tt__json_type(v));
    const json_t *dv = json_object_get(v, "default");
    if (json_object_size(v) != 1 + (dv != NULL))
        return tt_errf(p->err, TT_ETEMPLATE, path,
                       "expected exactly one of \"range\", \"pow2\", \"values\" (and an optional \"default\")");
    if (dv) {
        tt__path(ep, sizeof ep, "%s.default", path);
        if ((rc = tp_int(p, dv, ep, &pr->def))) return rc;
        pr->has_default = 1;
    }
    const json_t *r;
    if ((r = json_object_get(v, "values"))) {
        tt__path(ep, sizeof ep, "%s.values", path);
        if (!json_is_array(r))
            return tt_errf(p->err, TT_ETEMPLATE, ep, "expected an array, got %s", tt__json_type(r));
        return tp_param_list(p, pr, r, ep);
    }
    int64_t a[3] = {0, 0, 1};
    int isrange = 0;
    if ((r = json_object_get(v, "range"))) {
        tt__path(ep, sizeof ep, "%s.range", path);
        isrange = 1;
        if (!json_is_array(r) || json_array_size(r) < 2 || json_array_size(r) > 3)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "expected [lo, hi] or [lo, hi, step]");
    } else if ((r = json_object_get(v, "pow2"))) {
        tt__path(ep, sizeof ep, "%s.pow2", path);
        if (!json_is_array(r) || json_array_size(r) != 2)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "expected [lo, hi]");
    } else {
        return tt_errf(p->err, TT_ETEMPLATE, path,
                       "expected one of \"range\", \"pow2\", \"values\"");
    }
    for (size_t i = 0; i < json_array_size(r); i++) {
        char ip[160];
        tt__path(ip, sizeof ip, "%s[%zu]", ep, i);
        if ((rc = tp_int(p, json_array_get(r, i), ip, &a[i]))) return rc;
    }
    if (a[0] > a[1]) return tt_errf(p->err, TT_ETEMPLATE, ep, "lo is above hi");
    if (isrange) {
        if (a[2] <= 0) return tt_errf(p->err, TT_ETEMPLATE, ep, "step must be positive");
        uint64_t span = (uint64_t)a[1] - (uint64_t)a[0];
        if (span / (uint64_t)a[2] >= TT_MAX_PARAM_VALUES)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "more than %d values", TT_MAX_PARAM_VALUES);
        for (uint64_t i = 0; i <= span / (uint64_t)a[2]; i++)
            pr->values[pr->nvalues++] = (int64_t)((uint64_t)a[0] + i * (uint64_t)a[2]);
        return TT_OK;
    }
    if (a[0] < 1 || (a[0] & (a[0] - 1)) || (a[1] & (a[1] - 1)))
        return tt_errf(p->err, TT_ETEMPLATE, ep, "bounds must be positive powers of two");
    for (int64_t x = a[0];; x *= 2) {
        pr->values[pr->nvalues++] = x;
        if (x >= a[1]) break;
    }
    return TT_OK;
}

static tt_rc tp_params(tt__tp *p, const json_t *obj)
{
    tt_template *t = p->t;
    char path[160];
    tt_rc rc;
    if (!obj) return TT_OK;
    if ((rc = tp_object(p, obj, "params"))) return rc;
    size_t n = json_object_size(obj);
    if (t->ninputs + n > TT_MAX_SLOTS)
        return tt_errf(p->err, TT_ETEMPLATE, "params", "more than %d names", TT_MAX_SLOTS);
    t->params = calloc(n ? n : 1, sizeof *t->params);
    if (!t->params) return tt__tp_oom(p, "params");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        tt__path(path, sizeof path, "params.%s", k);
        if ((rc = tt__tp_name(p, k, path))) return rc;
        tt_param *pr = &t->params[t->nparams++];
        if (!(pr->name = strdup(k))) return tt__tp_oom(p, path);
        if ((rc = tp_param(p, pr, v, path))) return rc;
        int in_dom = !pr->has_default;
        for (size_t i = 0; i < pr->nvalues && !in_dom; i++) in_dom = pr->values[i] == pr->def;
        if (!in_dom) {
            char ep[176];
            tt__path(ep, sizeof ep, "%s.default", path);
            return tt_errf(p->err, TT_ETEMPLATE, ep, "%lld is not in the domain", (long long)pr->def);
        }
        int64_t *shrunk = realloc(pr->values, pr->nvalues * sizeof *pr->values);
        if (shrunk) pr->values = shrunk;
    }
    return TT_OK;
}

/* ---- lets and constraints ----------------------------------------------------------------- */

static tt_rc tp_lets(tt__tp *p, const json_t *obj)
{
    tt_template *t = p->t;
    char path[160];
    tt_rc rc;
    if (!obj) return TT_OK;
    if ((rc = tp_object(p, obj, "let"))) return rc;
    size_t n = json_object_size(obj);
    if (t->ninputs + t->nparams + n > TT_MAX_SLOTS)
        return tt_errf(p->err, TT_ETEMPLATE, "let", "more than %d names", TT_MAX_SLOTS);
    t->lets = calloc(n ? n : 1, sizeof *t->lets);
    if (!t->lets) return tt__tp_oom(p, "let");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        tt__path(path, sizeof path, "let.%s", k);
        if ((rc = tt__tp_name(p, k, path))) return rc;
        /* visible: inputs, params, earlier lets */
        p->nvisible = t->ninputs + t->nparams + t->nlets;
        tt_let *l = &t->lets[t->nlets];
        if ((rc = tt__tp_expr(p, v, path, &l->expr))) return rc;
        t->nlets++;   /* counted first: tt_tmpl_free() then frees expr when strdup fails */
        if (!(l->name = strdup(k))) return tt__tp_oom(p, path);
    }
    p->nvisible = t->ninputs + t->nparams + t->nlets;
    return TT_OK;
}

static tt_rc tp_constraints(tt__tp *p, const json_t *arr)
{
    tt_template *t = p->t;
    tt_rc rc;
    if (!arr) return TT_OK;
    if (!json_is_array(arr))
        return tt_errf(p->err, TT_ETEMPLATE, "constraints", "expected an array, got %s",
                       tt__json_type(arr));
    size_t n = json_array_size(arr);
    if (n > TT_TMPL_MAX_CONSTRAINTS)
        return tt_errf(p->err, TT_ETEMPLATE, "constraints", "more than %d constraints",
                       TT_TMPL_MAX_CONSTRAINTS);
    t->constraints = calloc(n ? n : 1, sizeof *t->constraints);
    if (!t->constraints) return tt__tp_oom(p, "constraints");
    for (size_t i = 0; i < n; i++) {
        tt_constraint *c = &t->constraints[t->nconstraints];
        tt__path(c->path, sizeof c->path, "constraints[%zu]", i);
        if ((rc = tt__tp_expr(p, json_array_get(arr, i), c->path, &c->expr))) return rc;
        t->nconstraints++;
    }
    return TT_OK;
}

/* ---- tensors and buffers ------------------------------------------------------------------ */

static tt_rc tp_dtref(tt__tp *p, const json_t *v, const char *path, tt_dtref *out)
{
    const tt_template *t = p->t;
    if (!v) return tt_errf(p->err, TT_ETEMPLATE, path, "missing");
    if (!json_is_string(v))
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected a dtype or a dtype input, got %s",
                       tt__json_type(v));
    const char *s = json_string_value(v);
    for (size_t i = 0; i < t->ninputs; i++) {
        if (strcmp(t->inputs[i].name, s) != 0) continue;
        if (t->inputs[i].kind != TT_INPUT_DTYPE)
            return tt_errf(p->err, TT_ETEMPLATE, path, "input \"%s\" is not a dtype", s);
        out->slot = (int)i;
        out->lit = TT_DT_FLOAT16;
        return TT_OK;
    }
    int dt = tt_dtype_parse(s, strlen(s));
    if (dt < 0)
        return tt_errf(p->err, TT_ETEMPLATE, path, "unknown dtype or dtype input \"%s\"", s);
    out->slot = -1;
    out->lit = (tt_dtype)dt;
    return TT_OK;
}

static tt_rc tp_shape(tt__tp *p, const json_t *v, const char *path, tt_expr **shape, int *rank)
{
    char ep[160];
    tt_rc rc;
    if (!v) return tt_errf(p->err, TT_ETEMPLATE, path, "missing");
    if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > TT_MAX_RANK)
        return tt_errf(p->err, TT_ETEMPLATE, path, "expected an array of 1..%d extents",
                       TT_MAX_RANK);
    for (size_t i = 0; i < json_array_size(v); i++) {
        tt__path(ep, sizeof ep, "%s[%zu]", path, i);
        if ((rc = tt__tp_expr(p, json_array_get(v, i), ep, &shape[i]))) return rc;
        *rank = (int)i + 1;
    }
    return TT_OK;
}

static tt_rc tp_tensors(tt__tp *p, const json_t *obj)
{
    tt_template *t = p->t;
    char path[160], ep[160];
    tt_rc rc;
    if (!obj) return TT_OK;
    if ((rc = tp_object(p, obj, "tensors"))) return rc;
    size_t n = json_object_size(obj);
    if (n > TT_TMPL_MAX_TENSORS)
        return tt_errf(p->err, TT_ETEMPLATE, "tensors", "more than %d tensors",
                       TT_TMPL_MAX_TENSORS);
    t->tensors = calloc(n ? n : 1, sizeof *t->tensors);
    if (!t->tensors) return tt__tp_oom(p, "tensors");
    static const char *const keys[] = {"shape", "dtype", "output", "workspace", NULL};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        tt__path(path, sizeof path, "tensors.%s", k);
        if ((rc = tt__tp_name(p, k, path))) return rc;
        if ((rc = tp_object(p, v, path))) return rc;
        if ((rc = tt__tp_keys(p, v, path, keys))) return rc;
        tt_tensor *te = &t->tensors[t->ntensors++];
        if (!(te->name = strdup(k))) return tt__tp_oom(p, path);
        tt__path(ep, sizeof ep, "%s.shape", path);
        if ((rc = tp_shape(p, json_object_get(v, "shape"), ep, te->shape, &te->rank))) return rc;
        tt__path(ep, sizeof ep, "%s.dtype", path);
        if ((rc = tp_dtref(p, json_object_get(v, "dtype"), ep, &te->dtype))) return rc;
        const json_t *b;
        tt__path(ep, sizeof ep, "%s.output", path);
        if ((b = json_object_get(v, "output")) && (rc = tp_bool(p, b, ep, &te->output))) return rc;
        tt__path(ep, sizeof ep, "%s.workspace", path);
        if ((b = json_object_get(v, "workspace")) && (rc = tp_bool(p, b, ep, &te->workspace)))
            return rc;
        if (te->output && te->workspace)
            return tt_errf(p->err, TT_ETEMPLATE, path, "a tensor is an output or a workspace, "
                                                       "not both");
    }
    return TT_OK;
}

static tt_rc tp_buffers(tt__tp *p, const json_t *obj)
{
    tt_template *t = p->t;
    char path[160], ep[160];
    tt_rc rc;
    if (!obj) return TT_OK;
    if ((rc = tp_object(p, obj, "buffers"))) return rc;
    size_t n = json_object_size(obj);
    if (n > TT_TMPL_MAX_BUFFERS)
        return tt_errf(p->err, TT_ETEMPLATE, "buffers", "more than %d buffers",
                       TT_TMPL_MAX_BUFFERS);
    t->buffers = calloc(n ? n : 1, sizeof *t->buffers);
    if (!t->buffers) return tt__tp_oom(p, "buffers");
    static const char *const keys[] = {"scope", "shape", "dtype", "copies", NULL};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        tt__path(path, sizeof path, "buffers.%s", k);
        if ((rc = tt__tp_name(p, k, path))) return rc;
        if ((rc = tp_object(p, v, path))) return rc;
        if ((rc = tt__tp_keys(p, v, path, keys))) return rc;
        tt_buffer *b = &t->buffers[t->nbuffers++];
        if (!(b->name = strdup(k))) return tt__tp_oom(p, path);
        tt__path(ep, sizeof ep, "%s.scope", path);
        const json_t *sc = json_object_get(v, "scope");
        if (!sc) return tt_errf(p->err, TT_ETEMPLATE, ep, "missing (L1, L0A, L0B, L0C or UB)");
        if (!json_is_string(sc))
            return tt_errf(p->err, TT_ETEMPLATE, ep, "expected a string, got %s", tt__json_type(sc));
        int s = tt_scope_parse(json_string_value(sc));
        if (s < 0)
            return tt_errf(p->err, TT_ETEMPLATE, ep, "unknown scope \"%s\" (L1, L0A, L0B, L0C, UB)",
                           json_string_value(sc));
        if (s == TT_SCOPE_GM)
            return tt_errf(p->err, TT_ETEMPLATE, ep,
                           "buffers are on chip; global memory is declared under \"tensors\"");
        b->scope = (tt_scope)s;
        b->side = s == TT_SCOPE_UB ? TT_SIDE_VECTOR : TT_SIDE_CUBE;
        tt__path(ep, sizeof ep, "%s.shape", path);
        if ((rc = tp_shape(p, json_object_get(v, "shape"), ep, b->shape, &b->rank))) return rc;
        tt__path(ep, sizeof ep, "%s.dtype", path);
        if ((rc = tp_dtref(p, json_object_get(v, "dtype"), ep, &b->dtype))) return rc;
        const json_t *c = json_object_get(v, "copies");
        tt__path(ep, sizeof ep, "%s.copies", path);
        if (c && (rc = tt__tp_expr(p, c, ep, &b->copies))) return rc;
    }
    return TT_OK;
}

/* ---- source ------------------------------------------------------------------------------- */

static tt_rc tp_read_source(tt__tp *p, const char *base_dir, const char *file)
{
    char full[4096];
    if ((size_t)snprintf(full, sizeof full, "%s/%s", base_dir, file) >= sizeof full)
        return tt_errf(p->err, TT_ETEMPLATE, "source.file", "path too long");
    FILE *f = fopen(full, "rb");
    if (!f)   /* fopen() allocates: ENOMEM is out of memory, not an I/O error */
        return tt_errf(p->err, errno == ENOMEM ? TT_ENOMEM : TT_EIO, "source.file",
                       "cannot read %s: %s", full, strerror(errno));
    char *buf = malloc(TT_TMPL_MAX_SOURCE + 1);
    if (!buf) {
        fclose(f);
        return tt__tp_oom(p, "source.file");
    }
    size_t n = fread(buf, 1, TT_TMPL_MAX_SOURCE + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return tt_errf(p->err, TT_EIO, "source.file", "cannot read %s", full);
    }
    if (n > TT_TMPL_MAX_SOURCE) {
        free(buf);
        return tt_errf(p->err, TT_ETOOBIG, "source.file", "larger than %d bytes",
                       TT_TMPL_MAX_SOURCE);
    }
    buf[n] = '\0';
    char *shrunk = realloc(buf, n + 1);
    p->t->source_text = shrunk ? shrunk : buf;
    return TT_OK;
}

static tt_rc tp_source(tt__tp *p, const json_t *v, const char *base_dir)
{
    tt_rc rc;
    if (!v) return TT_OK;
    if ((rc = tp_object(p, v, "source"))) return rc;
    static const char *const keys[] = {"file", "script", NULL};
    if ((rc = tt__tp_keys(p, v, "source", keys))) return rc;
    const json_t *f = json_object_get(v, "file"), *s = json_object_get(v, "script");
    if ((f != NULL) == (s != NULL))
        return tt_errf(p->err, TT_ETEMPLATE, "source", "expected exactly one of \"file\", \"script\"");
    if (s) {
        if ((rc = tp_string(p, s, "source.script", &p->t->source_script))) return rc;
        if (strlen(p->t->source_script) > TT_TMPL_MAX_SOURCE)
            return tt_errf(p->err, TT_ETOOBIG, "source.script", "too long");
        return tt_render_check(p->t, p->t->source_script, strlen(p->t->source_script),
                               "source.script", NULL, p->err);
    }
    if ((rc = tp_string(p, f, "source.file", &p->t->source_file))) return rc;
    const char *fn = p->t->source_file;
    if (!fn[0] || fn[0] == '/' || strstr(fn, "..") || strchr(fn, '\\'))
        return tt_errf(p->err, TT_ETEMPLATE, "source.file",
                       "must be a relative path without \"..\" (got \"%s\")", fn);
    if (!base_dir) return TT_OK;
    if ((rc = tp_read_source(p, base_dir, fn))) return rc;
    return tt_render_check(p->t, p->t->source_text, strlen(p->t->source_text), "source.file",
                           fn, p->err);
}

/* ---- top level ---------------------------------------------------------------------------- */

static tt_rc tp_name_field(tt__tp *p, const json_t *v)
{
    tt_rc rc;
    if (!v) return tt_errf(p->err, TT_ETEMPLATE, "name", "missing");
    if ((rc = tp_string(p, v, "name", &p->t->name))) return rc;
    const char *s = p->t->name;
    size_t n = strlen(s);
    if (n == 0 || n > TT_TMPL_MAX_NAME)
        return tt_errf(p->err, TT_ETEMPLATE, "name", "must have 1..%d characters", TT_TMPL_MAX_NAME);
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
              s[i] == '-'))
            return tt_errf(p->err, TT_ETEMPLATE, "name", "\"%s\" is not [a-z0-9_-]{1,%d}", s,
                           TT_TMPL_MAX_NAME);
    return TT_OK;
}

tt_rc tt__tmpl_parse_doc(tt__tp *p, const json_t *doc, const char *base_dir)
{
    tt_template *t = p->t;
    tt_rc rc;
    if (!json_is_object(doc))
        return tt_errf(p->err, TT_ETEMPLATE, "", "a template is a JSON object, got %s",
                       tt__json_type(doc));
    static const char *const keys[] = {"tiletune", "name", "version", "description", "inputs",
                                       "params", "let", "constraints", "tensors", "buffers",
                                       "kernel", "source", NULL};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)doc, k, v) {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k) != 0) i++;
        if (!keys[i]) {
            char ph[96];
            return tt_errf(p->err, TT_ETEMPLATE, k, "unknown top-level key%s",
                           tt_suggest_phrase(ph, sizeof ph, tt_suggest(k, strlen(k), keys, i),
                                             NULL));
        }
    }
    const json_t *fmt = json_object_get(doc, "tiletune");
    if (!fmt)
        return tt_errf(p->err, TT_ETEMPLATE, "tiletune", "missing (the format version, %d)",
                       TT_TMPL_FORMAT);
    if (!json_is_integer(fmt) || json_integer_value(fmt) != TT_TMPL_FORMAT)
        return tt_errf(p->err, TT_ETEMPLATE, "tiletune", "unsupported format version (this "
                       "build reads %d)", TT_TMPL_FORMAT);
    if ((rc = tp_name_field(p, json_object_get(doc, "name")))) return rc;
    const json_t *ver = json_object_get(doc, "version");
    if (ver) {
        if ((rc = tp_string(p, ver, "version", &t->version))) return rc;
    } else if (!(t->version = strdup("0"))) {
        return tt__tp_oom(p, "version");
    }
    const json_t *desc = json_object_get(doc, "description");
    if (desc) {
        if ((rc = tp_string(p, desc, "description", &t->description))) return rc;
    } else if (!(t->description = strdup(""))) {
        return tt__tp_oom(p, "description");
    }
    if ((rc = tp_inputs(p, json_object_get(doc, "inputs")))) return rc;
    if ((rc = tp_params(p, json_object_get(doc, "params")))) return rc;
    p->nvisible = t->ninputs + t->nparams;
    if ((rc = tp_lets(p, json_object_get(doc, "let")))) return rc;
    p->nvisible = t->ninputs + t->nparams + t->nlets;
    t->nslots = p->nvisible;
    if ((rc = tp_constraints(p, json_object_get(doc, "constraints")))) return rc;
    if ((rc = tp_tensors(p, json_object_get(doc, "tensors")))) return rc;
    if ((rc = tp_buffers(p, json_object_get(doc, "buffers")))) return rc;
    const json_t *kern = json_object_get(doc, "kernel");
    if (kern && (rc = tt__tmpl_parse_kernel(p, kern))) return rc;
    return tp_source(p, json_object_get(doc, "source"), base_dir);
}

/* SPDX-License-Identifier: MIT
 * template_values.c - problems and configs of a template: parse from "k=v,..." text and
 * from JSON, canonical keys, JSON objects and the config hash.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_int.h"

/* Problems bind inputs (slots 0..ninputs), configs bind params (slots ninputs..). */
typedef struct vside {
    int is_config;
    tt_rc rc;            /* TT_EPROBLEM or TT_ECONFIG */
    const char *what;    /* "problem" / "config" */
    size_t n, base;      /* number of names, first slot */
} vside;

static vside side_of(const tt_template *t, int is_config)
{
    if (is_config) return (vside){1, TT_ECONFIG, "config", t->nparams, t->ninputs};
    return (vside){0, TT_EPROBLEM, "problem", t->ninputs, 0};
}

static const char *vname(const tt_template *t, const vside *s, size_t i)
{
    return s->is_config ? t->params[i].name : t->inputs[i].name;
}

static int vfind(const tt_template *t, const vside *s, const char *name, size_t len)
{
    for (size_t i = 0; i < s->n; i++) {
        const char *n = vname(t, s, i);
        if (strlen(n) == len && memcmp(n, name, len) == 0) return (int)i;
    }
    return -1;
}

static int is_dtype_input(const tt_template *t, const vside *s, size_t i)
{
    return !s->is_config && t->inputs[i].kind == TT_INPUT_DTYPE;
}

/* Check an integer value against the input's range or the param's domain. */
static tt_rc vcheck_int(const tt_template *t, const vside *s, size_t i, int64_t v,
                        const char *path, tt_errinfo *err)
{
    if (s->is_config) {
        const tt_param *p = &t->params[i];
        for (size_t j = 0; j < p->nvalues; j++)
            if (p->values[j] == v) return TT_OK;
        return tt_errf(err, s->rc, path, "%" PRId64 " is not in the domain of %s", v, p->name);
    }
    const tt_input *in = &t->inputs[i];
    if (v < in->min || v > in->max)
        return tt_errf(err, s->rc, path, "%" PRId64 " is outside [%" PRId64 ", %" PRId64 "]", v,
                       in->min, in->max);
    return TT_OK;
}

static tt_rc vcheck_dtype(const tt_template *t, const vside *s, size_t i, const char *name,
                          size_t len, int64_t *out, const char *path, tt_errinfo *err)
{
    const tt_input *in = &t->inputs[i];
    int dt = tt_dtype_parse(name, len);
    if (dt < 0) return tt_errf(err, s->rc, path, "unknown dtype \"%.*s\"", (int)len, name);
    for (size_t j = 0; j < in->ndtypes; j++)
        if ((int)in->dtypes[j] == dt) {
            *out = dt;
            return TT_OK;
        }
    return tt_errf(err, s->rc, path, "dtype %s is not accepted by %s", tt_dtype_name(dt), in->name);
}

/* After all given values: fill defaults into vals[i] (indexed by input / param number, not
 * by slot), report the first missing name. */
static tt_rc vfinish(const tt_template *t, const vside *s, const unsigned char *seen,
                     int64_t *vals, tt_errinfo *err)
{
    for (size_t i = 0; i < s->n; i++) {
        if (seen[i]) continue;
        if (!s->is_config && t->inputs[i].has_default) {
            vals[i] = t->inputs[i].def;
            continue;
        }
        if (s->is_config && t->params[i].has_default) {
            vals[i] = t->params[i].def;
            continue;
        }
        char path[160];
        snprintf(path, sizeof path, "%s.%s", s->what, vname(t, s, i));
        return tt_errf(err, s->rc, path, "missing");
    }
    return TT_OK;
}

static tt_rc vparse_kv(const tt_template *t, int is_config, const char *kv, int64_t *slots,
                       tt_errinfo *err)
{
    vside s = side_of(t, is_config);
    unsigned char seen[TT_MAX_SLOTS] = {0};
    char path[160];
    if (!kv) return tt_errf(err, s.rc, s.what, "no text");
    int64_t vals[TT_MAX_SLOTS];
    const char *p = kv;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        const char *key = p;
        while (*p && *p != '=' && *p != ',' && *p != ' ') p++;
        size_t klen = (size_t)(p - key);
        while (*p == ' ') p++;
        snprintf(path, sizeof path, "%s.%.*s", s.what, (int)(klen > 64 ? 64 : klen), key);
        if (*p != '=')
            return tt_errf(err, s.rc, path, "expected name=value");
        p++;
        while (*p == ' ') p++;
        const char *val = p;
        while (*p && *p != ',') p++;
        const char *vend = p;
        while (vend > val && (vend[-1] == ' ' || vend[-1] == '\t')) vend--;
        if (*p == ',') p++;
        int i = vfind(t, &s, key, klen);
        if (i < 0) return tt_errf(err, s.rc, path, "unknown %s", is_config ? "param" : "input");
        if (seen[i]) return tt_errf(err, s.rc, path, "given twice");
        seen[i] = 1;
        size_t vlen = (size_t)(vend - val);
        if (vlen == 0) return tt_errf(err, s.rc, path, "empty value");
        tt_rc rc;
        if (is_dtype_input(t, &s, (size_t)i)) {
            if ((rc = vcheck_dtype(t, &s, (size_t)i, val, vlen, &vals[i], path, err))) return rc;
            continue;
        }
        char buf[32];
        if (vlen >= sizeof buf) return tt_errf(err, s.rc, path, "not an integer");
        memcpy(buf, val, vlen);
        buf[vlen] = '\0';
        char *end;
        errno = 0;
        long long x = strtoll(buf, &end, 10);
        if (*end || end == buf || (buf[0] != '-' && (buf[0] < '0' || buf[0] > '9')))
            return tt_errf(err, s.rc, path, "\"%s\" is not an integer", buf);
        if (errno == ERANGE) return tt_errf(err, s.rc, path, "\"%s\" is out of range", buf);
        vals[i] = (int64_t)x;
        if ((rc = vcheck_int(t, &s, (size_t)i, vals[i], path, err))) return rc;
    }
    tt_rc rc = vfinish(t, &s, seen, vals, err);
    if (rc) return rc;
    for (size_t i = 0; i < s.n; i++) slots[s.base + i] = vals[i];
    return TT_OK;
}

/* "what.key" into path (cut to fit): built for every member, so no printf (a process with
 * registered printf handlers, as libquadmath installs, formats slowly). */
static void vpath(char *path, size_t cap, const char *what, const char *k, size_t kl)
{
    size_t wl = strlen(what);
    if (wl > cap - 2) wl = cap - 2;
    memcpy(path, what, wl);
    path[wl++] = '.';
    if (kl > cap - 1 - wl) kl = cap - 1 - wl;
    memcpy(path + wl, k, kl);
    path[wl + kl] = '\0';
}

static tt_rc vparse_json(const tt_template *t, int is_config, const json_t *obj, int64_t *slots,
                         tt_errinfo *err)
{
    vside s = side_of(t, is_config);
    unsigned char seen[TT_MAX_SLOTS] = {0};
    char path[160];
    int64_t vals[TT_MAX_SLOTS];
    if (!json_is_object(obj))
        return tt_errf(err, s.rc, s.what, "expected an object, got %s",
                       obj ? tt__json_type(obj) : "nothing");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        size_t kl = strlen(k);
        vpath(path, sizeof path, s.what, k, kl);
        int i = vfind(t, &s, k, kl);
        if (i < 0) return tt_errf(err, s.rc, path, "unknown %s", is_config ? "param" : "input");
        seen[i] = 1;
        tt_rc rc;
        if (is_dtype_input(t, &s, (size_t)i)) {
            if (!json_is_string(v))
                return tt_errf(err, s.rc, path, "expected a dtype name, got %s", tt__json_type(v));
            if ((rc = vcheck_dtype(t, &s, (size_t)i, json_string_value(v), json_string_length(v),
                                   &vals[i], path, err)))
                return rc;
            continue;
        }
        if (!json_is_integer(v))
            return tt_errf(err, s.rc, path, "not an integer (got %s)", tt__json_type(v));
        vals[i] = (int64_t)json_integer_value(v);
        if ((rc = vcheck_int(t, &s, (size_t)i, vals[i], path, err))) return rc;
    }
    tt_rc rc = vfinish(t, &s, seen, vals, err);
    if (rc) return rc;
    for (size_t i = 0; i < s.n; i++) slots[s.base + i] = vals[i];
    return TT_OK;
}

tt_rc tt_tmpl_problem_parse(const tt_template *t, const char *kv, int64_t *slots, tt_errinfo *err)
{
    return vparse_kv(t, 0, kv, slots, err);
}

tt_rc tt_tmpl_problem_from_json(const tt_template *t, const json_t *obj, int64_t *slots,
                                tt_errinfo *err)
{
    return vparse_json(t, 0, obj, slots, err);
}

tt_rc tt_tmpl_config_parse(const tt_template *t, const char *kv, int64_t *slots, tt_errinfo *err)
{
    return vparse_kv(t, 1, kv, slots, err);
}

tt_rc tt_tmpl_config_from_json(const tt_template *t, const json_t *obj, int64_t *slots,
                               tt_errinfo *err)
{
    return vparse_json(t, 1, obj, slots, err);
}

/* The canonical order of a side: problems in declared order, configs by param name in byte
 * order (strcmp), so that a config's key, JSON and hash do not depend on the order the
 * params were declared in (a stored template is reloaded with its keys sorted): the order
 * the parse put in t->cfg_order.  Fills idx[0..n) with indices into the side; returns n. */
static size_t vorder(const tt_template *t, const vside *s, size_t *idx)
{
    if (s->is_config) {
        for (size_t i = 0; i < s->n; i++) idx[i] = t->cfg_order[i];
        return s->n;
    }
    for (size_t i = 0; i < s->n; i++) idx[i] = i;
    return s->n;
}

void tt__tmpl_order_params(tt_template *t)
{
    vside sv = side_of(t, 1), *s = &sv;
    size_t idx[TT_MAX_SLOTS];
    for (size_t i = 0; i < s->n; i++) {   /* insertion sort: a few dozen names at most */
        size_t j = i;
        while (j > 0 && strcmp(vname(t, s, idx[j - 1]), vname(t, s, i)) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    for (size_t i = 0; i < s->n; i++) t->cfg_order[i] = (uint16_t)idx[i];
}

/* v in decimal into num (at least 21 bytes); returns num.  The key is built on every
 * GET /v1/best, so no printf (see vpath). */
static const char *vint(int64_t v, char *num)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do tmp[n++] = (char)('0' + u % 10); while ((u /= 10) != 0);
    size_t j = 0;
    if (v < 0) num[j++] = '-';
    while (n) num[j++] = tmp[--n];
    num[j] = '\0';
    return num;
}

static size_t vkey(const tt_template *t, int is_config, const int64_t *slots, char *buf,
                   size_t cap)
{
    vside s = side_of(t, is_config);
    size_t idx[TT_MAX_SLOTS];
    vorder(t, &s, idx);
    size_t len = 0;
    if (cap) buf[0] = '\0';
    for (size_t k = 0; k < s.n; k++) {
        size_t i = idx[k];
        int64_t v = slots[s.base + i];
        const char *name = vname(t, &s, i);
        char num[24];
        const char *val = is_dtype_input(t, &s, i) ? tt_dtype_name(v) : vint(v, num);
        size_t nl = strlen(name), vl = strlen(val), n = (k ? 1 : 0) + nl + 1 + vl;
        if (len + n < cap) {
            char *p = buf + len;
            if (k) *p++ = ',';
            memcpy(p, name, nl);
            p[nl] = '=';
            memcpy(p + nl + 1, val, vl + 1);
        } else if (cap && len < cap) {
            buf[len] = '\0';
        }
        len += n;
    }
    return len;
}

/* The compact JSON text of vjson (names are identifiers: nothing to escape), like vkey. */
static size_t vjson_text(const tt_template *t, int is_config, const int64_t *slots, char *buf,
                         size_t cap)
{
    vside s = side_of(t, is_config);
    size_t idx[TT_MAX_SLOTS];
    vorder(t, &s, idx);
    size_t len = 0;
    char part[TT_TMPL_MAX_NAME + 48];
    for (size_t k = 0; k <= s.n; k++) {
        size_t n = 0;
        if (k == s.n) {
            if (s.n == 0) part[n++] = '{';
            part[n++] = '}';
        } else {
            size_t i = idx[k];
            int64_t v = slots[s.base + i];
            const char *name = vname(t, &s, i);
            char num[24];
            int str = is_dtype_input(t, &s, i);
            const char *val = str ? tt_dtype_name(v) : vint(v, num);
            size_t nl = strlen(name), vl = strlen(val);
            if (nl > TT_TMPL_MAX_NAME || vl > 40) return (size_t)-1;   /* never: validated */
            part[n++] = k ? ',' : '{';
            part[n++] = '"';
            memcpy(part + n, name, nl);
            n += nl;
            part[n++] = '"';
            part[n++] = ':';
            if (str) part[n++] = '"';
            memcpy(part + n, val, vl);
            n += vl;
            if (str) part[n++] = '"';
        }
        if (len + 1 < cap) memcpy(buf + len, part, len + n < cap ? n : cap - 1 - len);
        len += n;
    }
    if (cap) buf[len < cap ? len : cap - 1] = '\0';
    return len;
}

static json_t *vjson(const tt_template *t, int is_config, const int64_t *slots)
{
    vside s = side_of(t, is_config);
    size_t idx[TT_MAX_SLOTS];
    vorder(t, &s, idx);
    json_t *o = json_object();
    if (!o) return NULL;
    for (size_t k = 0; k < s.n; k++) {
        size_t i = idx[k];
        int64_t v = slots[s.base + i];
        json_t *j = is_dtype_input(t, &s, i) ? json_string(tt_dtype_name(v))
                                             : json_integer((json_int_t)v);
        if (!j || json_object_set_new(o, vname(t, &s, i), j) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

size_t tt_tmpl_problem_key(const tt_template *t, const int64_t *slots, char *buf, size_t cap)
{
    return vkey(t, 0, slots, buf, cap);
}

json_t *tt_tmpl_problem_json(const tt_template *t, const int64_t *slots)
{
    return vjson(t, 0, slots);
}

size_t tt_tmpl_config_key(const tt_template *t, const int64_t *slots, char *buf, size_t cap)
{
    return vkey(t, 1, slots, buf, cap);
}

json_t *tt_tmpl_config_json(const tt_template *t, const int64_t *slots)
{
    return vjson(t, 1, slots);
}

size_t tt_tmpl_config_json_text(const tt_template *t, const int64_t *slots, char *buf,
                                size_t cap)
{
    return vjson_text(t, 1, slots, buf, cap);
}

uint64_t tt_tmpl_config_hash(const tt_template *t, const int64_t *slots)
{
    vside s = side_of(t, 1);
    size_t idx[TT_MAX_SLOTS];
    vorder(t, &s, idx);
    uint64_t h = 14695981039346656037ULL;
    for (size_t k = 0; k < s.n; k++) {
        uint64_t v = (uint64_t)slots[t->ninputs + idx[k]];
        for (int b = 0; b < 8; b++) {   /* little-endian bytes: the same on every host */
            h ^= (v >> (8 * b)) & 0xff;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

/* SPDX-License-Identifier: MIT
 * render.c - `{{name}}` substitution of template sources, sized first and allocated once.
 */
#include "render.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing-by-nothing writer: counts every byte, stores those that fit. */
typedef struct tt_sink {
    char *buf;
    size_t cap, len;
} tt_sink;

static void tt_sink_put(tt_sink *s, const char *p, size_t n)
{
    if (s->buf && s->len < s->cap) {
        size_t k = s->cap - s->len < n ? s->cap - s->len : n;
        memcpy(s->buf + s->len, p, k);
    }
    s->len += n;
}

static void tt_sink_str(tt_sink *s, const char *p) { tt_sink_put(s, p, strlen(p)); }

static void tt_sink_int(tt_sink *s, int64_t v)
{
    char tmp[24];
    int k = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    tt_sink_put(s, tmp, (size_t)k);
}

/* JSON string of a name (identifiers never need escapes, but stay safe for any bytes). */
static void tt_sink_json_str(tt_sink *s, const char *p)
{
    tt_sink_put(s, "\"", 1);
    for (; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            tt_sink_put(s, e, 2);
        } else if (c < 0x20) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", c);
            tt_sink_put(s, e, 6);
        } else {
            tt_sink_put(s, (const char *)p, 1);
        }
    }
    tt_sink_put(s, "\"", 1);
}

static void tt_sink_config(tt_sink *s, const tt_template *t, const int64_t *slots)
{
    tt_sink_put(s, "{", 1);
    for (size_t i = 0; i < t->nparams; i++) {
        if (i) tt_sink_put(s, ",", 1);
        tt_sink_json_str(s, t->params[i].name);
        tt_sink_put(s, ":", 1);
        tt_sink_int(s, slots[tt_tmpl_param_slot(t, i)]);
    }
    tt_sink_put(s, "}", 1);
}

static void tt_sink_problem(tt_sink *s, const tt_template *t, const int64_t *slots)
{
    tt_sink_put(s, "{", 1);
    for (size_t i = 0; i < t->ninputs; i++) {
        if (i) tt_sink_put(s, ",", 1);
        tt_sink_json_str(s, t->inputs[i].name);
        tt_sink_put(s, ":", 1);
        if (t->inputs[i].kind == TT_INPUT_DTYPE)
            tt_sink_json_str(s, tt_dtype_name(slots[i]));
        else
            tt_sink_int(s, slots[i]);
    }
    tt_sink_put(s, "}", 1);
}

size_t tt_render_config_json(const tt_template *t, const int64_t *slots, char *buf, size_t cap)
{
    tt_sink s = {buf, cap ? cap - 1 : 0, 0};
    if (cap == 0) s.buf = NULL;
    tt_sink_config(&s, t, slots);
    if (buf && cap) buf[s.len < cap - 1 ? s.len : cap - 1] = '\0';
    return s.len;
}

size_t tt_render_problem_json(const tt_template *t, const int64_t *slots, char *buf, size_t cap)
{
    tt_sink s = {buf, cap ? cap - 1 : 0, 0};
    if (cap == 0) s.buf = NULL;
    tt_sink_problem(&s, t, slots);
    if (buf && cap) buf[s.len < cap - 1 ? s.len : cap - 1] = '\0';
    return s.len;
}

static int tt_name_is(const char *name, const char *p, size_t n)
{
    return strlen(name) == n && memcmp(name, p, n) == 0;
}

/* Emit the value of placeholder p[0..n); returns 0, or -1 if unknown (-2: a grid dim). */
static int tt_emit(tt_sink *s, const tt_template *t, const int64_t *slots, const char *p,
                   size_t n)
{
    if (n == 11 && memcmp(p, "config_json", 11) == 0) {
        tt_sink_config(s, t, slots);
        return 0;
    }
    if (n == 12 && memcmp(p, "problem_json", 12) == 0) {
        tt_sink_problem(s, t, slots);
        return 0;
    }
    for (size_t i = 0; i < t->ninputs; i++)
        if (tt_name_is(t->inputs[i].name, p, n)) {
            if (t->inputs[i].kind == TT_INPUT_DTYPE)
                tt_sink_str(s, tt_dtype_name(slots[i]));
            else
                tt_sink_int(s, slots[i]);
            return 0;
        }
    for (size_t i = 0; i < t->nparams; i++)
        if (tt_name_is(t->params[i].name, p, n)) {
            tt_sink_int(s, slots[tt_tmpl_param_slot(t, i)]);
            return 0;
        }
    for (size_t i = 0; i < t->nlets; i++)
        if (tt_name_is(t->lets[i].name, p, n)) {
            tt_sink_int(s, slots[tt_tmpl_let_slot(t, i)]);
            return 0;
        }
    if (t->kernel)
        for (size_t i = 0; i < t->kernel->ngrid; i++)
            if (tt_name_is(t->kernel->grid[i].name, p, n)) return -2;
    return -1;
}

/* If src[i..) starts a placeholder, set [*ns, *ne) to the name and *end past the `}}`. */
static int tt_placeholder(const char *src, size_t len, size_t i, size_t *ns, size_t *ne,
                          size_t *end)
{
    if (i + 1 >= len || src[i] != '{' || src[i + 1] != '{') return 0;
    size_t j = i + 2;
    while (j < len && (src[j] == ' ' || src[j] == '\t')) j++;
    if (j >= len || !(isalpha((unsigned char)src[j]) || src[j] == '_')) return 0;
    *ns = j;
    while (j < len && (isalnum((unsigned char)src[j]) || src[j] == '_')) j++;
    *ne = j;
    while (j < len && (src[j] == ' ' || src[j] == '\t')) j++;
    if (j + 1 >= len || src[j] != '}' || src[j + 1] != '}') return 0;
    *end = j + 2;
    return 1;
}

/* One pass over src; on an unknown name returns its offset + 1 in *bad. */
static int tt_pass(tt_sink *s, const tt_template *t, const int64_t *slots, const char *src,
                   size_t len, size_t *bad_s, size_t *bad_e, int *bad_kind)
{
    size_t i = 0, run = 0;
    while (i < len) {
        size_t ns, ne, end;
        if (src[i] == '{' && tt_placeholder(src, len, i, &ns, &ne, &end)) {
            tt_sink_put(s, src + run, i - run);
            int r = tt_emit(s, t, slots, src + ns, ne - ns);
            if (r < 0) {
                *bad_s = ns;
                *bad_e = ne;
                *bad_kind = r;
                return -1;
            }
            i = run = end;
        } else {
            i++;
        }
    }
    tt_sink_put(s, src + run, len - run);
    return 0;
}

/* The error of a placeholder [bs, be) of src that names nothing (kind -1) or a grid dim
 * (kind -2), at `path`; `where` (may be NULL) names the file in the message. */
static tt_rc tt_bad_placeholder(tt_errinfo *err, const char *path, const char *where,
                                const char *src, size_t bs, size_t be, int kind)
{
    int line = 1;
    for (size_t i = 0; i < bs; i++) line += src[i] == '\n';
    int n = (int)(be - bs > 64 ? 64 : be - bs);
    const char *of = where ? " of " : "";
    if (!where) where = "";
    if (kind == -2)
        return tt_errf(err, TT_ETEMPLATE, path,
                       "placeholder {{%.*s}} at line %d%s%s is a grid dim: it has no value "
                       "at render time", n, src + bs, line, of, where);
    return tt_errf(err, TT_ETEMPLATE, path,
                   "unknown placeholder {{%.*s}} at line %d%s%s (not an input, param or let)",
                   n, src + bs, line, of, where);
}

tt_rc tt_render_check(const tt_template *t, const char *src, size_t len, const char *path,
                      const char *where, tt_errinfo *err)
{
    static const int64_t zero[TT_MAX_SLOTS];   /* values are counted, never looked at */
    tt_sink count = {NULL, 0, 0};
    size_t bs = 0, be = 0;
    int kind = 0;
    if (src && tt_pass(&count, t, zero, src, len, &bs, &be, &kind) != 0)
        return tt_bad_placeholder(err, path, where, src, bs, be, kind);
    return TT_OK;
}

tt_rc tt_render(const tt_template *t, const int64_t *slots, const char *src, size_t len,
                char **out, size_t *out_len, tt_errinfo *err)
{
    *out = NULL;
    if (out_len) *out_len = 0;
    if (!src) return tt_errf(err, TT_ETEMPLATE, "source", "the template has no source text");
    tt_sink count = {NULL, 0, 0};
    size_t bs = 0, be = 0;
    int kind = 0;
    if (tt_pass(&count, t, slots, src, len, &bs, &be, &kind) != 0)
        return tt_bad_placeholder(err, "source", NULL, src, bs, be, kind);
    char *buf = malloc(count.len + 1);
    if (!buf) return tt_errf(err, TT_ENOMEM, "source", "out of memory");
    tt_sink w = {buf, count.len, 0};
    tt_pass(&w, t, slots, src, len, &bs, &be, &kind);
    buf[w.len] = '\0';
    *out = buf;
    if (out_len) *out_len = w.len;
    return TT_OK;
}

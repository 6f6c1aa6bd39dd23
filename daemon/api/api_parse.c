/* SPDX-License-Identifier: MIT
 * api_parse.c - request members checked by table (api_parse.h): types, ranges, required and
 * unknown members, with one message style and one JSON path rule.
 */
#include "api_parse.h"
#include "suggest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tt__path_join(char *out, size_t cap, const char *prefix, const char *name)
{
    if (!cap) return;
    int hp = prefix && *prefix, hn = name && *name;
    int n; /* a path cut at cap only shortens an error message's field name */
    if (hp && hn) n = snprintf(out, cap, "%s%s%s", prefix, name[0] == '[' ? "" : ".", name);
    else n = snprintf(out, cap, "%s", hp ? prefix : hn ? name : "");
    if (n < 0) out[0] = '\0';
}

void tt__err_prefix(tt_errinfo *err, const char *prefix)
{
    if (!err || !prefix || !*prefix) return;
    char p[sizeof err->path];
    tt__path_join(p, sizeof p, prefix, err->path);
    memcpy(err->path, p, sizeof p);
}

void tt__err_rebase(tt_errinfo *err, const char *root, const char *at)
{
    if (!err) return;
    size_t n = strlen(root);
    if (!strncmp(err->path, root, n) && (err->path[n] == '\0' || err->path[n] == '.' ||
                                         err->path[n] == '[')) {
        char rest[sizeof err->path];
        snprintf(rest, sizeof rest, "%s", err->path + n + (err->path[n] == '.'));
        snprintf(err->path, sizeof err->path, "%s", rest);
    }
    tt__err_prefix(err, at);
}

static const char *tt_type_word(tt__ptype t)
{
    switch (t) {
    case TT__P_STRING: return "a string";
    case TT__P_INT: return "an integer";
    case TT__P_NUMBER: return "a number";
    case TT__P_BOOL: return "true or false";
    case TT__P_OBJECT: return "an object";
    case TT__P_ARRAY: return "an array";
    default: return "a value";
    }
}

/* An integer bound given as a double, clamped to the int64 range. */
static long long tt_bound(double x)
{
    if (x >= 9223372036854775807.0) return INT64_MAX;
    if (x <= -9223372036854775807.0) return INT64_MIN;
    return (long long)x;
}

/* The error of member m: its hint, else "must be <type>[ in lo..hi]". */
static tt_rc tt_member_err(const tt__member *m, const char *prefix, tt_errinfo *err)
{
    char path[sizeof err->path];
    tt__path_join(path, sizeof path, prefix, m->name);
    if (m->hint) return tt_errf(err, TT_EINVAL, path, "%s", m->hint);
    if (m->type == TT__P_RESERVED) return tt_errf(err, TT_EINVAL, path, "is reserved");
    if (!(m->flags & TT__M_RANGE))
        return tt_errf(err, TT_EINVAL, path, "must be %s", tt_type_word(m->type));
    const char *unit = m->type == TT__P_ARRAY ? " elements" : m->type == TT__P_STRING ? " bytes"
                                                                                        : "";
    const char *of = m->type == TT__P_ARRAY || m->type == TT__P_STRING ? "of" : "in";
    if (m->type == TT__P_NUMBER)
        return tt_errf(err, TT_EINVAL, path, "must be %s in %.15g..%.15g", tt_type_word(m->type),
                       m->lo, m->hi);
    /* integers in full: (double)INT64_MAX is 2^63, one above the largest int64 */
    return tt_errf(err, TT_EINVAL, path, "must be %s %s %lld..%lld%s", tt_type_word(m->type), of,
                   tt_bound(m->lo), tt_bound(m->hi), unit);
}

static int tt_in_range(const tt__member *m, double x)
{
    return !(m->flags & TT__M_RANGE) || (x >= m->lo && x <= m->hi);
}

int tt__parse_int(const char *s, long long *out)
{
    const char *d = s[0] == '-' ? s + 1 : s;
    if (*d < '0' || *d > '9') return -1;     /* strtoll would skip blanks and take '+' */
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = x;
    return 0;
}

/* A query-string value as the member's type: 0 on success. */
static int tt_query_value(const tt__member *m, const char *s, void *dst)
{
    char *end;
    switch (m->type) {
    case TT__P_STRING:
        if (!tt_in_range(m, (double)strlen(s))) return -1;
        *(const char **)dst = s;
        return 0;
    case TT__P_INT: {
        long long x;
        if (tt__parse_int(s, &x) || !tt_in_range(m, (double)x)) return -1;
        *(int64_t *)dst = x;
        return 0;
    }
    case TT__P_NUMBER: {
        errno = 0;
        double x = strtod(s, &end);
        if (errno || end == s || *end || !tt_in_range(m, x)) return -1;
        *(double *)dst = x;
        return 0;
    }
    case TT__P_BOOL:
        if (!*s || !strcmp(s, "1") || !strcmp(s, "true")) *(int *)dst = 1;
        else if (!strcmp(s, "0") || !strcmp(s, "false")) *(int *)dst = 0;
        else return -1;
        return 0;
    default:
        return -1;
    }
}

/* A JSON value as the member's type: 0 on success. */
static int tt_json_value(const tt__member *m, const json_t *v, void *dst)
{
    switch (m->type) {
    case TT__P_STRING:
        if (!json_is_string(v) || !tt_in_range(m, (double)json_string_length(v))) return -1;
        *(const char **)dst = json_string_value(v);
        return 0;
    case TT__P_INT:
        if (!json_is_integer(v) || !tt_in_range(m, (double)json_integer_value(v))) return -1;
        *(int64_t *)dst = json_integer_value(v);
        return 0;
    case TT__P_NUMBER:
        if (!json_is_number(v) || !tt_in_range(m, json_number_value(v))) return -1;
        *(double *)dst = json_number_value(v);
        return 0;
    case TT__P_BOOL:
        if (!json_is_boolean(v)) return -1;
        *(int *)dst = json_is_true(v);
        return 0;
    case TT__P_OBJECT:
    case TT__P_ARRAY:
        if (m->type == TT__P_OBJECT ? !json_is_object(v) : !json_is_array(v)) return -1;
        if (m->type == TT__P_ARRAY && !tt_in_range(m, (double)json_array_size(v))) return -1;
        *(const json_t **)dst = v;
        return 0;
    case TT__P_ANY:
        *(const json_t **)dst = v;
        return 0;
    default:
        return -1;
    }
}

tt_rc tt__parse(const json_t *obj, const tt__member *tab, size_t n, int flags,
                const char *prefix, void *dst, tt_errinfo *err)
{
    if (obj && !json_is_object(obj))
        return tt_errf(err, TT_EINVAL, prefix, "must be an object");
    if (obj && !(flags & TT__PARSE_OPEN)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)obj, k, v) {
            size_t i = 0;
            while (i < n && strcmp(tab[i].name, k)) i++;
            if (i < n) continue;
            char path[sizeof err->path];
            tt__path_join(path, sizeof path, prefix, k);
            const char *hint = tt_suggest_in(k, strlen(k), tab, sizeof *tab, n);
            char ph[96];
            return tt_errf(err, TT_EINVAL, path, "unknown member \"%s\"%s", k,
                           tt_suggest_phrase(ph, sizeof ph, hint, NULL));
        }
    }
    for (size_t i = 0; i < n; i++) {
        const tt__member *m = &tab[i];
        const json_t *v = obj ? json_object_get(obj, m->name) : NULL;
        if (!v) {
            if (!(m->flags & TT__M_REQUIRED)) continue;
            char path[sizeof err->path];
            tt__path_join(path, sizeof path, prefix, m->name);
            if (m->hint) return tt_errf(err, TT_EINVAL, path, "%s", m->hint);
            return tt_errf(err, TT_EINVAL, path, "missing %s \"%s\"",
                           flags & TT__PARSE_QUERY ? "query argument" : "member", m->name);
        }
        if (m->type == TT__P_RESERVED) return tt_member_err(m, prefix, err);
        void *d = (char *)dst + m->off;
        int bad = (flags & TT__PARSE_QUERY) && m->type <= TT__P_BOOL
                      ? tt_query_value(m, json_string_value(v) ? json_string_value(v) : "", d)
                      : tt_json_value(m, v, d);
        if (bad) return tt_member_err(m, prefix, err);
    }
    return TT_OK;
}


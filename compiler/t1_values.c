/* SPDX-License-Identifier: MIT
 * t1_values.c - the "Values" string of a T1 tuning parameter: the Python list expressions T1
 * files write, evaluated here without Python.
 *
 * Accepted (the forms the community's T1 files use), joined by `+` (list concatenation):
 *   [16, 32, 2**6]                     a list literal; elements are integer expressions
 *   range(a, b, step), list(range(..)) Python's range (1 to 3 arguments, step != 0)
 *   [EXPR for x in ITER]               a comprehension over a range or a list (one `for`),
 *   [EXPR for x in ITER if COND]       with an optional filter
 * Elements, bounds, EXPR and COND are tiletune expressions (compiler/expr.h: integers,
 * Python's operators, `**`, min/max, ...); EXPR and COND may name the loop variable.  A
 * value repeated in the result is kept once, at its first place (a search space is a set).
 * Anything else -- floats, strings, other functions, two `for` in one comprehension -- is
 * TT_EUNSUPPORTED naming what was not understood; so are more than TT_T1_MAX_VALUES values
 * and nesting (a comprehension over a comprehension, list(list(..))) deeper than 8.
 */
#include "t1_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

#define TT_T1_MAX_NEST 8        /* comprehensions over comprehensions, list(list(..)) */

typedef struct vctx {
    const char *path;
    tt_errinfo *err;
    int64_t *v;                /* the values so far */
    size_t n;
    int depth;                 /* nesting of values() */
} vctx;

static tt_rc bad(vctx *c, const char *b, const char *e, const char *what)
{
    char q[40 * 4 + 8];
    return tt_errf(c->err, TT_EUNSUPPORTED, c->path, "%s: \"%s\"", what,
                   tt_err_quote(q, sizeof q, b, (size_t)(e - b), 40));
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && isspace((unsigned char)**b)) (*b)++;
    while (*e > *b && isspace((unsigned char)(*e)[-1])) (*e)--;
}

static int word_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

/* The first top-level (bracket depth 0) occurrence in [b, e) of the keyword kw (a whole
 * word) or, when kw is one character that is not a letter, of that character; NULL if none
 * or if the brackets do not balance. */
static const char *top_find(const char *b, const char *e, const char *kw)
{
    size_t k = strlen(kw);
    int depth = 0, word = word_char(kw[0]);
    for (const char *p = b; p < e; p++) {
        if (*p == '(' || *p == '[' || *p == '{') depth++;
        else if (*p == ')' || *p == ']' || *p == '}') {
            if (--depth < 0) return NULL;
        } else if (depth == 0 && (size_t)(e - p) >= k && memcmp(p, kw, k) == 0 &&
                   (!word || ((p == b || !word_char(p[-1])) &&
                              (p + k == e || !word_char(p[k])))))
            return p;
    }
    return NULL;
}

/* The bracket closing the one at *open (same kind), or NULL. */
static const char *closing(const char *open, const char *e)
{
    int depth = 0;
    for (const char *p = open; p < e; p++) {
        if (*p == '(' || *p == '[' || *p == '{') depth++;
        else if (*p == ')' || *p == ']' || *p == '}') {
            if (--depth == 0) return p;
        }
    }
    return NULL;
}

typedef struct var {
    const char *name;
    size_t len;
} var;

static int resolve_var(void *ud, const char *name, size_t len)
{
    const var *x = ud;
    return x && x->name && len == x->len && memcmp(name, x->name, len) == 0 ? 0 : -1;
}

/* Evaluate the integer expression [b, e), with the loop variable x (may be NULL) = xv. */
static tt_rc eval_int(vctx *c, const char *b, const char *e, const var *x, int64_t xv,
                      int64_t *out)
{
    trim(&b, &e);
    char buf[512];
    if (b == e) return bad(c, b, e, "an empty element");
    if ((size_t)(e - b) >= sizeof buf) return bad(c, b, e, "an element longer than 511 bytes");
    memcpy(buf, b, (size_t)(e - b));
    buf[e - b] = '\0';
    tt_expr *ex = NULL;
    tt_errinfo ee;
    tt_errinfo_clear(&ee);
    tt_rc rc = tt_expr_compile(buf, resolve_var, (void *)x, &ex, &ee);
    if (rc == TT_ENOMEM) return tt_errf(c->err, TT_ENOMEM, c->path, "out of memory");
    if (rc != TT_OK) {
        char what[300];
        snprintf(what, sizeof what, "not an integer expression (%s)", ee.msg);
        return bad(c, b, e, what);
    }
    int64_t slot[1] = {xv};
    rc = tt_expr_eval(ex, slot, out);
    tt_expr_free(ex);
    if (rc != TT_OK) return bad(c, b, e, "cannot be evaluated (overflow, division by zero)");
    return TT_OK;
}

static tt_rc push(vctx *c, int64_t v)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i] == v) return TT_OK;   /* a set: the first place counts */
    if (c->n >= TT_T1_MAX_VALUES)
        return tt_errf(c->err, TT_EUNSUPPORTED, c->path, "more than %d values",
                       TT_T1_MAX_VALUES);
    c->v[c->n++] = v;
    return TT_OK;
}

static tt_rc values(vctx *c, const char *b, const char *e);

/* range(args) with args = [b, e): into c, Python's semantics. */
static tt_rc range_of(vctx *c, const char *b, const char *e)
{
    int64_t a[3];
    int na = 0;
    const char *p = b;
    for (;;) {
        const char *comma = top_find(p, e, ",");
        const char *end = comma ? comma : e;
        if (na == 3) return bad(c, b, e, "range() takes 1 to 3 arguments");
        tt_rc rc = eval_int(c, p, end, NULL, 0, &a[na++]);
        if (rc) return rc;
        if (!comma) break;
        p = comma + 1;
    }
    int64_t start = na == 1 ? 0 : a[0], stop = na == 1 ? a[0] : a[1], step = na == 3 ? a[2] : 1;
    if (step == 0) return bad(c, b, e, "range() with step 0");
    __int128 span = (__int128)stop - start, n = 0;
    if (step > 0 && span > 0) n = (span - 1) / step + 1;
    if (step < 0 && span < 0) n = (-span - 1) / -(__int128)step + 1;
    if (n > TT_T1_MAX_VALUES)
        return tt_errf(c->err, TT_EUNSUPPORTED, c->path, "range of more than %d values",
                       TT_T1_MAX_VALUES);
    for (__int128 i = 0; i < n; i++) {
        tt_rc rc = push(c, (int64_t)(start + i * step));
        if (rc) return rc;
    }
    return TT_OK;
}

/* [EXPR for NAME in ITER (if COND)] with [b, e) the text inside the brackets and f its `for`. */
static tt_rc comprehension(vctx *c, const char *b, const char *e, const char *f)
{
    const char *p = f + 3;
    while (p < e && isspace((unsigned char)*p)) p++;
    const char *nb = p;
    while (p < e && word_char(*p)) p++;
    var x = {nb, (size_t)(p - nb)};
    if (x.len == 0 || isdigit((unsigned char)*nb)) return bad(c, f, e, "expected a name after for");
    const char *in = top_find(p, e, "in");
    if (!in) return bad(c, f, e, "expected 'in'");
    for (const char *q = p; q < in; q++)
        if (!isspace((unsigned char)*q)) return bad(c, f, e, "one loop variable only");
    const char *ib = in + 2, *cond = top_find(ib, e, "if"), *ie = cond ? cond : e;
    if (top_find(ib, ie, "for")) return bad(c, f, e, "one 'for' only");
    vctx it = {c->path, c->err, malloc(TT_T1_MAX_VALUES * sizeof(int64_t)), 0, c->depth};
    if (!it.v) return tt_errf(c->err, TT_ENOMEM, c->path, "out of memory");
    tt_rc rc = values(&it, ib, ie);
    for (size_t i = 0; !rc && i < it.n; i++) {
        int64_t keep = 1, v;
        if (cond) rc = eval_int(c, cond + 2, e, &x, it.v[i], &keep);
        if (!rc && keep) rc = eval_int(c, b, f, &x, it.v[i], &v);
        if (!rc && keep) rc = push(c, v);
    }
    free(it.v);
    return rc;
}

/* One operand of `+`: a list, a comprehension, range(..) or list(..). */
static tt_rc term(vctx *c, const char *b, const char *e)
{
    trim(&b, &e);
    if (b == e) return bad(c, b, e, "an empty operand");
    if (*b == '[') {
        if (closing(b, e) != e - 1) return bad(c, b, e, "an unterminated list or text after it");
        const char *ib = b + 1, *ie = e - 1, *f = top_find(ib, ie, "for");
        if (f) return comprehension(c, ib, ie, f);
        trim(&ib, &ie);
        while (ib < ie) {
            const char *comma = top_find(ib, ie, ",");
            const char *end = comma ? comma : ie;
            int64_t v;
            tt_rc rc = eval_int(c, ib, end, NULL, 0, &v);
            if (!rc) rc = push(c, v);
            if (rc) return rc;
            if (!comma) break;
            ib = comma + 1;
            trim(&ib, &ie);   /* a trailing comma ends the list */
        }
        return TT_OK;
    }
    static const struct { const char *fn; int range; } fns[] = {{"range", 1}, {"list", 0}};
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
        size_t k = strlen(fns[i].fn);
        const char *o = b + k;
        if ((size_t)(e - b) <= k || memcmp(b, fns[i].fn, k) != 0) continue;
        while (o < e && isspace((unsigned char)*o)) o++;
        if (o == e || *o != '(') continue;
        if (closing(o, e) != e - 1) return bad(c, b, e, "an unterminated call or text after it");
        return fns[i].range ? range_of(c, o + 1, e - 1) : values(c, o + 1, e - 1);
    }
    return bad(c, b, e, "expected a list such as \"[16, 32]\", range(..), list(range(..)) or "
                        "a list comprehension");
}

static tt_rc values(vctx *c, const char *b, const char *e)
{
    if (++c->depth > TT_T1_MAX_NEST) return bad(c, b, e, "nested more than 8 deep");
    for (;;) {
        const char *plus = top_find(b, e, "+");
        tt_rc rc = term(c, b, plus ? plus : e);
        if (rc || !plus) {
            c->depth--;
            return rc;
        }
        b = plus + 1;
    }
}

tt_rc tt__t1_values(const char *src, const char *path, json_t **out, tt_errinfo *err)
{
    *out = NULL;
    vctx c = {path, err, malloc(TT_T1_MAX_VALUES * sizeof(int64_t)), 0, 0};
    if (!c.v) return tt_errf(err, TT_ENOMEM, path, "out of memory");
    tt_rc rc = values(&c, src, src + strlen(src));
    json_t *arr = rc ? NULL : json_array();
    if (!rc && !arr) rc = tt_errf(err, TT_ENOMEM, path, "out of memory");
    for (size_t i = 0; !rc && i < c.n; i++)
        if (json_array_append_new(arr, json_integer((json_int_t)c.v[i])) != 0)
            rc = tt_errf(err, TT_ENOMEM, path, "out of memory");
    free(c.v);
    if (rc) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return TT_OK;
}

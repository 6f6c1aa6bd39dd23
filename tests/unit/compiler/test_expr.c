/* SPDX-License-Identifier: MIT
 * test_expr.c - the expression compiler: the case table of tests/data/expr/cases.txt, limits,
 * slot queries, constant folding against unfolded evaluation, and evaluation from 2 threads.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "tt_test.h"

/* Report a failure with a message that names the case (CU_ASSERT only shows the condition). */
static void check(int ok, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(int ok, int line, const char *fmt, ...)
{
    static char msg[1024];
    if (ok) {
        CU_assertImplementation(CU_TRUE, (unsigned)line, "ok", "cases.txt", "", CU_FALSE);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    CU_assertImplementation(CU_FALSE, (unsigned)line, msg, "cases.txt", "", CU_FALSE);
}

/* ------------------------------------------------------------ variable table */

#define MAXVARS 64

typedef struct vars {
    char name[MAXVARS][48];
    int64_t val[MAXVARS];
    int n;
} vars;

static int vars_resolve(void *ud, const char *name, size_t len)
{
    const vars *v = ud;
    for (int i = 0; i < v->n; i++)
        if (strlen(v->name[i]) == len && memcmp(v->name[i], name, len) == 0) return i;
    return -1;
}

/* "@set a=1 b=2": returns 0, or -1 on a malformed line. */
static int vars_set(vars *v, char *line)
{
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || (size_t)(eq - tok) >= sizeof v->name[0]) return -1;
        *eq = '\0';
        char *end;
        long long val = strtoll(eq + 1, &end, 10);
        if (*end) return -1;
        int i = vars_resolve(v, tok, strlen(tok));
        if (i < 0) {
            if (v->n == MAXVARS) return -1;
            i = v->n++;
            snprintf(v->name[i], sizeof v->name[i], "%s", tok);
        }
        v->val[i] = val;
    }
    return 0;
}

/* Decode \xNN and \\ in place. */
static void decode(char *s)
{
    char *o = s;
    while (*s) {
        if (s[0] == '\\' && s[1] == '\\') {
            *o++ = '\\';
            s += 2;
        } else if (s[0] == '\\' && s[1] == 'x' && s[2] && s[3]) {
            char hex[3] = {s[2], s[3], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            s += 4;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
}

static const char *rc_word(tt_rc rc)
{
    switch (rc) {
    case TT_EOVERFLOW: return "overflow";
    case TT_EDIVZERO: return "divzero";
    case TT_EDOMAIN: return "domain";
    default: return tt_rc_code(rc);
    }
}

/* ------------------------------------------------------------- the table */

static void run_case(const vars *v, int line, const char *src, const char *want)
{
    tt_expr *e = (tt_expr *)(uintptr_t)1; /* must be reset to NULL on failure */
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_expr_compile(src, vars_resolve, (void *)v, &e, &err);
    if (want[0] == '?') {
        char *end;
        long pos = strtol(want + 1, &end, 10);
        while (*end == ' ') end++;
        check(rc == TT_EEXPR && e == NULL, line, "%s: want compile error, got rc %d", src, rc);
        check(err.rc == TT_EEXPR && err.pos == pos, line, "%s: want error at %ld, got %d (%s)",
              src, pos, err.pos, err.msg);
        check(strstr(err.msg, end) != NULL, line, "%s: message '%s' lacks '%s'", src, err.msg, end);
        if (rc == TT_OK) tt_expr_free(e);
        return;
    }
    check(rc == TT_OK && e, line, "%s: compile failed at %d: %s", src, err.pos, err.msg);
    if (rc != TT_OK) return;
    check(strcmp(tt_expr_source(e), src) == 0, line, "%s: source not kept", src);
    /* slots: sorted, distinct, max_slot is the last one */
    int sl[MAXVARS];
    size_t ns = tt_expr_slots(e, sl, MAXVARS);
    int okslots = ns <= MAXVARS && tt_expr_max_slot(e) == (ns ? sl[ns - 1] : -1);
    for (size_t i = 1; i < ns && i < MAXVARS; i++) okslots &= sl[i - 1] < sl[i];
    check(okslots, line, "%s: inconsistent slots", src);

    int64_t got = 777, konst = 0;
    rc = tt_expr_eval(e, v->val, &got);
    int isconst = tt_expr_const(e, &konst);
    check(isconst == (ns == 0 && rc == TT_OK) && (!isconst || konst == got), line,
          "%s: tt_expr_const disagrees", src);
    if (want[0] == '=') {
        long long n = strtoll(want + 1, NULL, 10);
        check(rc == TT_OK && got == n, line, "%s: want %lld, got %s %lld", src, n,
              rc ? rc_word(rc) : "", (long long)got);
    } else if (want[0] == '!') {
        const char *w = want + 1;
        while (*w == ' ') w++;
        check(rc != TT_OK && strcmp(rc_word(rc), w) == 0 && got == 777, line,
              "%s: want %s, got %s (%lld)", src, w, rc ? rc_word(rc) : "ok", (long long)got);
    } else {
        check(0, line, "bad expectation '%s'", want);
    }
    tt_expr_free(e);
}

static void test_table(void)
{
    char *path = tt_test_src("tests/data/expr/cases.txt");
    char *text = path ? tt_test_read_file(path, NULL) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    vars v = {.n = 0};
    int lineno = 0, ncases = 0, nerr = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        lineno++;
        if (line[0] == '@') {
            int bad = strncmp(line, "@set ", 5) != 0 || vars_set(&v, line + 5) != 0;
            check(!bad, lineno, "bad directive");
        } else if (line[0] != '#' && line[0] != '\0') {
            char *tab = strrchr(line, '\t');
            check(tab != NULL, lineno, "no TAB in case line");
            if (tab) {
                *tab = '\0';
                decode(line);
                run_case(&v, lineno, line, tab + 1);
                ncases++;
                nerr += tab[1] == '?';
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    CU_ASSERT(ncases >= 170);
    CU_ASSERT(nerr >= 40);
    free(text);
    free(path);
}

/* ------------------------------------------------------------- limits */

static int abc_resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    if (len == 1 && name[0] >= 'a' && name[0] <= 'z') return name[0] - 'a';
    return -1;
}

static void test_limits(void)
{
    static char buf[TT_EXPR_MAX_LEN + 2];
    tt_expr *e = NULL;
    tt_errinfo err;
    int64_t v = 0, slots[26] = {1, 2, 3};

    /* exactly TT_EXPR_MAX_LEN bytes: "a+a+...+a" (a left-deep chain needs 2 stack slots) */
    for (size_t i = 0; i < TT_EXPR_MAX_LEN; i++) buf[i] = (i % 2) ? '+' : 'a';
    buf[TT_EXPR_MAX_LEN - 1] = ' ';
    buf[TT_EXPR_MAX_LEN] = '\0';
    CU_ASSERT_EQUAL_FATAL(tt_expr_compile(buf, abc_resolve, NULL, &e, &err), TT_OK);
    CU_ASSERT_EQUAL(tt_expr_eval(e, slots, &v), TT_OK);
    CU_ASSERT_EQUAL(v, TT_EXPR_MAX_LEN / 2);
    CU_ASSERT_EQUAL(tt_expr_max_slot(e), 0);
    tt_expr_free(e);

    /* one byte more */
    buf[TT_EXPR_MAX_LEN] = ' ';
    buf[TT_EXPR_MAX_LEN + 1] = '\0';
    e = (tt_expr *)(uintptr_t)1;
    CU_ASSERT_EQUAL(tt_expr_compile(buf, abc_resolve, NULL, &e, &err), TT_EEXPR);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_EQUAL(err.pos, TT_EXPR_MAX_LEN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too long"));

    /* a long unknown name: the message is truncated, still names it */
    memset(buf, 'q', 3000);
    buf[3000] = '\0';
    CU_ASSERT_EQUAL(tt_expr_compile(buf, abc_resolve, NULL, &e, &err), TT_EEXPR);
    CU_ASSERT_EQUAL(err.pos, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown name 'qqqq"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "..."));

    /* nesting: each kind at exactly the limit compiles, one more does not */
    static const char *const open[] = {"(", "-", "~", "not ", "min(", "1 if 0 else "};
    static const char *const close[] = {")", "", "", "", ")", ""};
    static const size_t optok[] = {0, 0, 0, 0, 3, 7}; /* offset of the nesting token */
    for (size_t k = 0; k < sizeof open / sizeof open[0]; k++) {
        for (int depth = TT_EXPR_MAX_DEPTH; depth <= TT_EXPR_MAX_DEPTH + 1; depth++) {
            size_t o = 0;
            for (int i = 0; i < depth; i++) o += (size_t)sprintf(buf + o, "%s", open[k]);
            size_t where = o - strlen(open[k]) + optok[k]; /* the token one level too deep */
            o += (size_t)sprintf(buf + o, "1");
            for (int i = 0; i < depth; i++) o += (size_t)sprintf(buf + o, "%s", close[k]);
            tt_rc rc = tt_expr_compile(buf, NULL, NULL, &e, &err);
            if (depth <= TT_EXPR_MAX_DEPTH) {
                CU_ASSERT_EQUAL(rc, TT_OK);
                tt_expr_free(e);
            } else {
                CU_ASSERT_EQUAL(rc, TT_EEXPR);
                CU_ASSERT_EQUAL(err.pos, (int)where);
                CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too deep"));
            }
        }
    }

    /* a**a**a...: each ** holds one value, so the stack limit comes before the depth limit */
    size_t o = 0;
    for (int i = 0; i < TT_EXPR_MAX_STACK - 1; i++) o += (size_t)sprintf(buf + o, "2**");
    sprintf(buf + o, "1");
    CU_ASSERT_EQUAL(tt_expr_compile(buf, NULL, NULL, &e, &err), TT_OK);
    CU_ASSERT_EQUAL(tt_expr_eval(e, NULL, &v), TT_EOVERFLOW);
    tt_expr_free(e);
    sprintf(buf + o, "2**1");
    CU_ASSERT_EQUAL(tt_expr_compile(buf, NULL, NULL, &e, &err), TT_EEXPR);
    CU_ASSERT_EQUAL(err.pos, (int)o + 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too complex"));

    /* the stack limit: a+(a+(a+...)) holds one value per level */
    o = 0;
    for (int i = 0; i < TT_EXPR_MAX_STACK - 1; i++) o += (size_t)sprintf(buf + o, "a+(");
    o += (size_t)sprintf(buf + o, "a");
    for (int i = 0; i < TT_EXPR_MAX_STACK - 1; i++) buf[o++] = ')';
    buf[o] = '\0';
    CU_ASSERT_EQUAL_FATAL(tt_expr_compile(buf, abc_resolve, NULL, &e, &err), TT_OK);
    CU_ASSERT_EQUAL(tt_expr_eval(e, slots, &v), TT_OK);
    CU_ASSERT_EQUAL(v, TT_EXPR_MAX_STACK);
    tt_expr_free(e);
    o = 0;
    for (int i = 0; i < TT_EXPR_MAX_STACK; i++) o += (size_t)sprintf(buf + o, "a+(");
    size_t inner = o;
    o += (size_t)sprintf(buf + o, "a");
    for (int i = 0; i < TT_EXPR_MAX_STACK; i++) buf[o++] = ')';
    buf[o] = '\0';
    CU_ASSERT_EQUAL(tt_expr_compile(buf, abc_resolve, NULL, &e, &err), TT_EEXPR);
    CU_ASSERT_EQUAL(err.pos, (int)inner);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "too complex"));

    /* a long chained comparison and a long and/or chain */
    o = 0;
    for (int i = 0; i < 500; i++) o += (size_t)sprintf(buf + o, "a<=b<");
    sprintf(buf + o, "c");
    CU_ASSERT_EQUAL_FATAL(tt_expr_compile(buf, abc_resolve, NULL, &e, &err), TT_OK);
    CU_ASSERT_EQUAL(tt_expr_eval(e, slots, &v), TT_OK);
    CU_ASSERT_EQUAL(v, 0); /* b < a fails at the second link */
    tt_expr_free(e);
    o = 0;
    for (int i = 0; i < 300; i++) o += (size_t)sprintf(buf + o, "a and b or ");
    sprintf(buf + o, "c");
    CU_ASSERT_EQUAL_FATAL(tt_expr_compile(buf, abc_resolve, NULL, &e, &err), TT_OK);
    CU_ASSERT_EQUAL(tt_expr_eval(e, slots, &v), TT_OK);
    CU_ASSERT_EQUAL(v, 1);
    tt_expr_free(e);
}

/* ------------------------------------------------------------- API */

static int map_resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    static const struct { const char *n; int slot; } tab[] = {{"M", 7}, {"N", 2}, {"K", 40}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strlen(tab[i].n) == len && memcmp(tab[i].n, name, len) == 0) return tab[i].slot;
    return -1;
}

static void test_api(void)
{
    tt_expr *e = NULL;
    tt_errinfo err;
    int sl[4] = {-9, -9, -9, -9};
    int64_t v = 0;

    CU_ASSERT_EQUAL_FATAL(tt_expr_compile("K + M*M + K - N", map_resolve, NULL, &e, &err), TT_OK);
    CU_ASSERT_EQUAL(tt_expr_max_slot(e), 40);
    CU_ASSERT_EQUAL(tt_expr_slots(e, sl, 4), 3);
    CU_ASSERT(sl[0] == 2 && sl[1] == 7 && sl[2] == 40 && sl[3] == -9);
    sl[0] = sl[1] = -9;
    CU_ASSERT_EQUAL(tt_expr_slots(e, sl, 1), 3); /* count beyond cap, writes only cap */
    CU_ASSERT(sl[0] == 2 && sl[1] == -9);
    CU_ASSERT_EQUAL(tt_expr_slots(e, NULL, 0), 3);
    CU_ASSERT_FALSE(tt_expr_const(e, &v));
    int64_t slots[41] = {0};
    slots[2] = 5, slots[7] = 3, slots[40] = 100;
    CU_ASSERT_EQUAL(tt_expr_eval(e, slots, &v), TT_OK);
    CU_ASSERT_EQUAL(v, 100 + 9 + 100 - 5);
    CU_ASSERT_STRING_EQUAL(tt_expr_source(e), "K + M*M + K - N");
    tt_expr_free(e);

    /* constants */
    static const struct { const char *src; int isconst; int64_t val; } consts[] = {
        {"12*1024", 1, 12288}, {"max(1, 2) if 1 < 2 else 0", 1, 2}, {"sizeof('float32')", 1, 4},
        {"1 // 0", 0, 0}, {"2 ** 64", 0, 0}, {"M", 0, 0}, {"0 * M", 0, 0}, {"True", 1, 1}};
    for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(tt_expr_compile(consts[i].src, map_resolve, NULL, &e, &err), TT_OK);
        v = -1;
        CU_ASSERT_EQUAL(tt_expr_const(e, &v), consts[i].isconst);
        if (consts[i].isconst) CU_ASSERT_EQUAL(v, consts[i].val);
        CU_ASSERT_EQUAL(tt_expr_max_slot(e), consts[i].isconst || i < 5 ? -1 : 7);
        CU_ASSERT_EQUAL(tt_expr_const(e, NULL), consts[i].isconst);
        tt_expr_free(e);
    }

    /* arguments and NULLs */
    tt_expr_free(NULL);
    CU_ASSERT_EQUAL(tt_expr_max_slot(NULL), -1);
    CU_ASSERT_EQUAL(tt_expr_slots(NULL, sl, 4), 0);
    CU_ASSERT_EQUAL(tt_expr_const(NULL, &v), 0);
    CU_ASSERT_PTR_NULL(tt_expr_source(NULL));
    CU_ASSERT_EQUAL(tt_expr_compile(NULL, map_resolve, NULL, &e, &err), TT_EINVAL);
    CU_ASSERT_PTR_NULL(e);
    CU_ASSERT_EQUAL(tt_expr_compile("1", map_resolve, NULL, NULL, &err), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_expr_compile("M", NULL, NULL, &e, &err), TT_EEXPR); /* no resolver */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown name 'M'"));
    CU_ASSERT_EQUAL(tt_expr_compile("(", NULL, NULL, &e, NULL), TT_EEXPR); /* err NULL ok */

    /* errinfo is left untouched on success */
    tt_errinfo_clear(&err);
    err.pos = 1234;
    CU_ASSERT_EQUAL(tt_expr_compile("1", NULL, NULL, &e, &err), TT_OK);
    CU_ASSERT_EQUAL(err.pos, 1234);
    tt_expr_free(e);
}

/* ------------------------------------------- folding vs unfolded evaluation */

/* Random expressions written twice: with literals (folded at compile time) and with names
 * bound to the same values (evaluated at run time).  Both must give the same rc and value. */
static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static const int64_t tt_vals[] = {0, 1, 2, 3, 7, 63, -1, -2, -7, 1024, INT64_MAX, -INT64_MAX};
#define NVALS (sizeof tt_vals / sizeof tt_vals[0])

static void gen(char *lit, size_t *lo, char *var, size_t *vo, int depth)
{
    static const char *const bin[] = {"+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|",
                                      "^", "<", "<=", "==", "!=", ">", ">=", "and", "or", "/"};
    static const char *const fn2[] = {"min", "max", "ceildiv", "floordiv", "align_up"};
    static const char *const fn1[] = {"abs", "log2", "-", "~", "not ", "sizeof"};
    unsigned r = (unsigned)(rnd() % 10);
    if (depth > 4 || r < 3) {
        size_t i = rnd() % NVALS;
        *lo += (size_t)sprintf(lit + *lo, "(%lld)", (long long)tt_vals[i]);
        *vo += (size_t)sprintf(var + *vo, "%c", (char)('a' + i));
        return;
    }
    const char *pre = "(", *mid = "", *post = ")";
    if (r < 6) {
        mid = bin[rnd() % (sizeof bin / sizeof bin[0])];
    } else if (r < 7) {
        const char *f = fn2[rnd() % 5];
        *lo += (size_t)sprintf(lit + *lo, "%s(", f);
        *vo += (size_t)sprintf(var + *vo, "%s(", f);
        mid = ",";
        pre = "";
    } else if (r < 8) {
        const char *f = fn1[rnd() % 6];
        *lo += (size_t)sprintf(lit + *lo, "(%s(", f); /* "1 + not 2" is a syntax error */
        *vo += (size_t)sprintf(var + *vo, "(%s(", f);
        gen(lit, lo, var, vo, depth + 1);
        *lo += (size_t)sprintf(lit + *lo, "))");
        *vo += (size_t)sprintf(var + *vo, "))");
        return;
    } else if (r < 9) {
        *lo += (size_t)sprintf(lit + *lo, "(");
        *vo += (size_t)sprintf(var + *vo, "(");
        gen(lit, lo, var, vo, depth + 1);
        *lo += (size_t)sprintf(lit + *lo, " if ");
        *vo += (size_t)sprintf(var + *vo, " if ");
        gen(lit, lo, var, vo, depth + 1);
        *lo += (size_t)sprintf(lit + *lo, " else ");
        *vo += (size_t)sprintf(var + *vo, " else ");
        gen(lit, lo, var, vo, depth + 1);
        *lo += (size_t)sprintf(lit + *lo, ")");
        *vo += (size_t)sprintf(var + *vo, ")");
        return;
    } else { /* a chained comparison of three operands */
        *lo += (size_t)sprintf(lit + *lo, "(");
        *vo += (size_t)sprintf(var + *vo, "(");
        for (int i = 0; i < 3; i++) {
            if (i) {
                mid = i == 1 ? (rnd() % 2 ? "<" : ">=") : (rnd() % 2 ? "<=" : "!=");
                *lo += (size_t)sprintf(lit + *lo, " %s ", mid);
                *vo += (size_t)sprintf(var + *vo, " %s ", mid);
            }
            gen(lit, lo, var, vo, depth + 1);
        }
        *lo += (size_t)sprintf(lit + *lo, ")");
        *vo += (size_t)sprintf(var + *vo, ")");
        return;
    }
    *lo += (size_t)sprintf(lit + *lo, "%s", pre);
    *vo += (size_t)sprintf(var + *vo, "%s", pre);
    gen(lit, lo, var, vo, depth + 1);
    *lo += (size_t)sprintf(lit + *lo, " %s ", mid);
    *vo += (size_t)sprintf(var + *vo, " %s ", mid);
    gen(lit, lo, var, vo, depth + 1);
    *lo += (size_t)sprintf(lit + *lo, "%s", post);
    *vo += (size_t)sprintf(var + *vo, "%s", post);
}

static void test_fold_equivalence(void)
{
    static char lit[16384], var[16384];
    int64_t slots[26];
    for (size_t i = 0; i < NVALS; i++) slots[i] = tt_vals[i];
    int compared = 0, okvals = 0;
    for (int n = 0; n < 4000; n++) {
        size_t lo = 0, vo = 0;
        gen(lit, &lo, var, &vo, 0);
        tt_expr *el = NULL, *ev = NULL;
        tt_errinfo err;
        tt_rc rl = tt_expr_compile(lit, NULL, NULL, &el, &err);
        tt_rc rv = tt_expr_compile(var, abc_resolve, NULL, &ev, &err);
        if (rl != TT_OK || rv != TT_OK) {
            /* only the stack limit can differ: literals of unary ops are folded early */
            if (!(rl == TT_OK || strstr(err.msg, "too") != NULL)) fprintf(stderr, "\n%s: %s\n", lit, err.msg);
            CU_ASSERT(rl == TT_OK || strstr(err.msg, "too") != NULL);
            tt_expr_free(el);
            tt_expr_free(ev);
            continue;
        }
        int64_t a = 11, b = 22;
        tt_rc ra = tt_expr_eval(el, NULL, &a), rb = tt_expr_eval(ev, slots, &b);
        int same = ra == rb && (ra != TT_OK || a == b);
        if (!same) fprintf(stderr, "\nfold mismatch: %s -> %d %lld vs %s -> %d %lld\n", lit, ra,
                           (long long)a, var, rb, (long long)b);
        CU_ASSERT(same);
        compared++;
        okvals += ra == TT_OK;
        tt_expr_free(el);
        tt_expr_free(ev);
    }
    CU_ASSERT(compared > 3000);
    CU_ASSERT(okvals > 500); /* not all errors */
}

/* ------------------------------------------------------------- threads */

#define NVEC 20000
static const char *const conv4 =
    "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*"
    "((block_size_y*tile_size_y+(filter_height-1)))) < 12*1024 and 262144 % block_size_x == 0";
static const char *const kt_names[] = {"use_shmem", "block_size_x", "tile_size_x", "filter_width",
                                       "block_size_y", "tile_size_y", "filter_height"};

static int kt_resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    for (int i = 0; i < 7; i++)
        if (strlen(kt_names[i]) == len && memcmp(kt_names[i], name, len) == 0) return i;
    return -1;
}

typedef struct job {
    const tt_expr *e;
    const int64_t (*vec)[7];
    int64_t *res;
} job;

static void *eval_all(void *arg)
{
    job *j = arg;
    for (int rep = 0; rep < 5; rep++)
        for (int i = 0; i < NVEC; i++) {
            int64_t v = -5;
            tt_rc rc = tt_expr_eval(j->e, j->vec[i], &v);
            j->res[i] = rc ? -100 - (int64_t)rc : v;
        }
    return NULL;
}

static void test_threads(void)
{
    tt_expr *e = NULL;
    tt_errinfo err;
    CU_ASSERT_EQUAL_FATAL(tt_expr_compile(conv4, kt_resolve, NULL, &e, &err), TT_OK);
    int64_t (*vec)[7] = calloc(NVEC, sizeof *vec);
    int64_t *r0 = calloc(NVEC, sizeof *r0), *r1 = calloc(NVEC, sizeof *r1),
            *r2 = calloc(NVEC, sizeof *r2);
    CU_ASSERT_FATAL(vec && r0 && r1 && r2);
    int ones = 0, zeros = 0, errs = 0;
    for (int i = 0; i < NVEC; i++) {
        vec[i][0] = (int64_t)(rnd() % 2);
        vec[i][1] = 16 * (int64_t)(rnd() % 17); /* 0 gives a division by zero */
        vec[i][2] = 1 + (int64_t)(rnd() % 4);
        vec[i][3] = 15;
        vec[i][4] = (int64_t)1 << (rnd() % 5);
        vec[i][5] = 1 + (int64_t)(rnd() % 4);
        vec[i][6] = 15;
        /* reference, straight C with Python's short circuit */
        int64_t bx = vec[i][1];
        int64_t want;
        if (vec[i][0] == 0) want = 1;
        else if ((bx * vec[i][2] + 14) * (vec[i][4] * vec[i][5] + 14) >= 12 * 1024) want = 0;
        else if (bx == 0) want = -100 - TT_EDIVZERO;
        else want = 262144 % bx == 0;
        r0[i] = want;
        ones += want == 1, zeros += want == 0, errs += want < 0;
    }
    CU_ASSERT(ones > 0 && zeros > 0 && errs > 0);
    job j1 = {e, (const int64_t (*)[7])vec, r1}, j2 = {e, (const int64_t (*)[7])vec, r2};
    pthread_t t1, t2;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t1, NULL, eval_all, &j1), 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t2, NULL, eval_all, &j2), 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CU_ASSERT(memcmp(r0, r1, NVEC * sizeof *r0) == 0);
    CU_ASSERT(memcmp(r0, r2, NVEC * sizeof *r0) == 0);
    free(vec);
    free(r0);
    free(r1);
    free(r2);
    tt_expr_free(e);
}

static const tt_test_case expr_cases[] = {{"table", test_table},
                                          {"limits", test_limits},
                                          {"api", test_api},
                                          {"fold_equivalence", test_fold_equivalence},
                                          {"threads", test_threads},
                                          {NULL, NULL}};
static const tt_test_suite suites[] = {{"expr", NULL, NULL, expr_cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

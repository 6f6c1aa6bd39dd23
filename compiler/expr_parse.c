/* SPDX-License-Identifier: MIT
 * expr_parse.c - compiles Python-style integer expressions to stack bytecode (tt_expr_compile).
 *
 * Pipeline: a one-token-lookahead lexer feeds a recursive-descent parser that emits bytecode
 * directly (no AST), folding constant operands with a peephole as it goes.  `x if c else y`
 * is emitted in source order and then rotated into `c JZ x JMP y`; all jumps are relative and
 * forward, so rotating a finished segment keeps them valid.  After parsing, a verification
 * pass (tt__expr_verify, expr_vm.c) walks the code once, checks the stack effect of every path
 * and computes the maximum stack depth, so that tt_expr_eval() can run on a fixed local array
 * without bounds checks.  The bytecode is defined in expr_int.h; evaluation is in expr_vm.c.
 * Design notes and the grammar are in docs/expressions.md.
 */
#include "expr.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_int.h"

/* ---------------------------------------------------------- constant folding */
/* Through the integer semantics of expr_int.h, shared with evaluation. */

/* Binary op for constant folding. */
static tt_rc ex_binop(int op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case OP_ADD: return __builtin_add_overflow(a, b, r) ? TT_EOVERFLOW : TT_OK;
    case OP_SUB: return __builtin_sub_overflow(a, b, r) ? TT_EOVERFLOW : TT_OK;
    case OP_MUL: return __builtin_mul_overflow(a, b, r) ? TT_EOVERFLOW : TT_OK;
    case OP_FDIV: return ex_fdiv(a, b, r);
    case OP_TDIV: return ex_tdiv(a, b, r);   /* inexact: not folded */
    case OP_MOD: return ex_mod(a, b, r);
    case OP_POW: return ex_pow(a, b, r);
    case OP_SHL: return ex_shl(a, b, r);
    case OP_SHR: return ex_shr(a, b, r);
    case OP_BAND: *r = a & b; return TT_OK;
    case OP_BOR: *r = a | b; return TT_OK;
    case OP_BXOR: *r = a ^ b; return TT_OK;
    case OP_MIN: *r = a < b ? a : b; return TT_OK;
    case OP_MAX: *r = a > b ? a : b; return TT_OK;
    case OP_CEILDIV: return ex_ceildiv(a, b, r);
    case OP_ALIGN: return ex_align(a, b, r);
    case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
        *r = ex_cmp(op, a, b);
        return TT_OK;
    default: return TT_EINTERNAL;
    }
}

/* Unary op for constant folding. */
static tt_rc ex_unop(int op, int64_t a, int64_t *r)
{
    switch (op) {
    case OP_NEG:
        if (a == INT64_MIN) return TT_EOVERFLOW;
        *r = -a;
        return TT_OK;
    case OP_NOT: *r = a == 0; return TT_OK;
    case OP_BNOT: *r = ~a; return TT_OK;
    case OP_BOOL: *r = a != 0; return TT_OK;
    case OP_ABS:
        if (a == INT64_MIN) return TT_EOVERFLOW;
        *r = a < 0 ? -a : a;
        return TT_OK;
    case OP_LOG2: return ex_log2(a, r);
    case OP_SIZEOF: return ex_sizeof(a, r);
    default: return TT_EINTERNAL;
    }
}

/* ------------------------------------------------------------------- lexer */

enum {
    TK_EOF, TK_NUM, TK_NAME, TK_STR, TK_LP, TK_RP, TK_COMMA,
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_DSLASH, TK_PCT, TK_POW, TK_TILDE,
    TK_AMP, TK_PIPE, TK_CARET, TK_SHL, TK_SHR,
    TK_LT, TK_LE, TK_GT, TK_GE, TK_EQ, TK_NE,
    TK_AND, TK_OR, TK_NOT, TK_IF, TK_ELSE
};

typedef struct tok {
    int kind;
    size_t pos, len;  /* bytes of the token in the source */
    int64_t val;      /* TK_NUM */
} tok;

typedef struct parser {
    const char *src;
    size_t len, pos;     /* lexer position */
    tok t;               /* current token */
    tt_expr_resolve_fn resolve;
    void *ud;
    int64_t *code;
    size_t ncode, ccap;
    size_t *ins;         /* start of each emitted instruction (for the peephole) */
    size_t nins, icap;
    size_t barrier;      /* no folding across this code offset (a jump target) */
    int depth, sd, maxsd;
    size_t atom;         /* position of the atom being parsed: only atoms grow the stack */
    int *slots;
    size_t nslots, scap;
    tt_errinfo *err;
    tt_rc rc;            /* first error */
} parser;

/* Quote up to 32 bytes of s for a message, escaping what is not printable ASCII. */
static const char *quote(char *buf, size_t cap, const char *s, size_t len)
{
    return tt_err_quote(buf, cap, s, len, 32);
}

static int fail(parser *p, tt_rc rc, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(parser *p, tt_rc rc, size_t pos, const char *fmt, ...)
{
    if (p->rc) return -1;
    p->rc = rc;
    if (p->err) {
        char msg[sizeof p->err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        tt_errf(p->err, rc, NULL, "%s", msg);
        p->err->pos = (int)pos;
    }
    return -1;
}

/* "<what> '<quoted s>'": kept out of line so that the recursive parser frames stay small. */
static __attribute__((noinline)) int fail_quoted(parser *p, size_t pos, const char *what,
                                                 const char *s, size_t len)
{
    char q[160];
    return fail(p, TT_EEXPR, pos, "%s '%s'", what, quote(q, sizeof q, s, len));
}

static int oom(parser *p) { return fail(p, TT_ENOMEM, p->t.pos, "out of memory"); }

/* Describe the current token for "unexpected ..." messages. */
static const char *tokdesc(const parser *p, char *buf, size_t cap)
{
    if (p->t.kind == TK_EOF) return "end of input";
    char q[160];
    quote(q, sizeof q, p->src + p->t.pos, p->t.len);
    snprintf(buf, cap, "'%s'", q);
    return buf;
}

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }

static int digit_val(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

static int lex_number(parser *p, size_t start)
{
    const char *s = p->src;
    size_t i = start;
    int base = 10;
    if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) base = 16, i += 2;
    else if (s[i] == '0' && (s[i + 1] == 'b' || s[i + 1] == 'B')) base = 2, i += 2;
    else if (s[i] == '0' && (s[i + 1] == 'o' || s[i + 1] == 'O')) base = 8, i += 2;
    int64_t v = 0;
    bool big = false, any = false, nonzero = false, lead0 = base == 10 && s[i] == '0';
    for (;;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '_' && any && digit_val((unsigned char)s[i + 1]) < base) {
            i++;
            continue;
        }
        int d = digit_val(c);
        if (d >= base) break;
        any = true;
        if (d) nonzero = true;
        if (!big && (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v)))
            big = true;
        i++;
    }
    unsigned char c = (unsigned char)s[i];
    if (c == '.' || ((c == 'e' || c == 'E') && base == 10))
        return fail(p, TT_EEXPR, start, "floating-point literals are not supported");
    if (!any || is_alnum(c))
        return fail(p, TT_EEXPR, start, "invalid integer literal");
    if (lead0 && nonzero)
        return fail(p, TT_EEXPR, start, "leading zeros in decimal integer literal (use 0o for octal)");
    if (big) return fail(p, TT_EEXPR, start, "integer literal too large");
    p->t.kind = TK_NUM;
    p->t.val = v;
    p->t.len = i - start;
    p->pos = i;
    return 0;
}

static const struct { const char *text; int kind; } tt_ops[] = {
    {"**", TK_POW}, {"//", TK_DSLASH}, {"<<", TK_SHL}, {">>", TK_SHR}, {"<=", TK_LE},
    {">=", TK_GE},  {"==", TK_EQ},     {"!=", TK_NE},  {"&&", TK_AND}, {"||", TK_OR},
    {"(", TK_LP},   {")", TK_RP},      {",", TK_COMMA}, {"+", TK_PLUS}, {"-", TK_MINUS},
    {"*", TK_STAR}, {"/", TK_SLASH},   {"%", TK_PCT},  {"~", TK_TILDE}, {"&", TK_AMP},
    {"|", TK_PIPE}, {"^", TK_CARET},   {"<", TK_LT},   {">", TK_GT},   {"!", TK_NOT},
};

/* Advance to the next token. */
static int next(parser *p)
{
    const char *s = p->src;
    size_t i = p->pos;
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' ||
           s[i] == '\v')
        i++;
    p->t.pos = i;
    p->t.len = 0;
    unsigned char c = (unsigned char)s[i];
    if (c == '\0') {
        p->t.kind = TK_EOF;
        p->pos = i;
        return 0;
    }
    if (is_digit(c)) return lex_number(p, i);
    if (is_alpha(c)) {
        size_t j = i;
        while (is_alnum((unsigned char)s[j])) j++;
        size_t n = j - i;
        p->t.len = n;
        p->pos = j;
        p->t.kind = TK_NAME;
        if (n == 3 && memcmp(s + i, "and", 3) == 0) p->t.kind = TK_AND;
        else if (n == 2 && memcmp(s + i, "or", 2) == 0) p->t.kind = TK_OR;
        else if (n == 3 && memcmp(s + i, "not", 3) == 0) p->t.kind = TK_NOT;
        else if (n == 2 && memcmp(s + i, "if", 2) == 0) p->t.kind = TK_IF;
        else if (n == 4 && memcmp(s + i, "else", 4) == 0) p->t.kind = TK_ELSE;
        else if (n == 4 && memcmp(s + i, "True", 4) == 0) p->t.kind = TK_NUM, p->t.val = 1;
        else if (n == 5 && memcmp(s + i, "False", 5) == 0) p->t.kind = TK_NUM, p->t.val = 0;
        return 0;
    }
    if (c == '\'' || c == '"') {
        size_t j = i + 1;
        while (s[j] && s[j] != (char)c && s[j] != '\n') j++;
        if (s[j] != (char)c) return fail(p, TT_EEXPR, i, "unterminated string");
        p->t.kind = TK_STR;
        p->t.len = j + 1 - i;
        p->pos = j + 1;
        return 0;
    }
    for (size_t k = 0; k < sizeof tt_ops / sizeof tt_ops[0]; k++) {
        size_t n = strlen(tt_ops[k].text);
        if (strncmp(s + i, tt_ops[k].text, n) == 0) {
            p->t.kind = tt_ops[k].kind;
            p->t.len = n;
            p->pos = i + n;
            return 0;
        }
    }
    char q[16];
    if (c == '=') return fail(p, TT_EEXPR, i, "unexpected '=' (use '==' to compare)");
    return fail(p, TT_EEXPR, i, "unexpected character '%s'", quote(q, sizeof q, s + i, 1));
}

/* ---------------------------------------------------------------- emitting */

static int grow_code(parser *p, size_t need)
{
    if (p->ncode + need <= p->ccap) return 0;
    size_t cap = p->ccap ? p->ccap * 2 : 64;
    while (cap < p->ncode + need) cap *= 2;
    int64_t *c = realloc(p->code, cap * sizeof *c);
    if (!c) return oom(p);
    p->code = c;
    p->ccap = cap;
    return 0;
}

/* Emit one instruction with up to one operand; returns its offset or -1. */
static long emit(parser *p, int op, int64_t arg)
{
    if (grow_code(p, 2)) return -1;
    if (p->nins == p->icap) {
        size_t cap = p->icap ? p->icap * 2 : 64;
        size_t *n = realloc(p->ins, cap * sizeof *n);
        if (!n) return oom(p);
        p->ins = n;
        p->icap = cap;
    }
    size_t at = p->ncode;
    p->ins[p->nins++] = at;
    p->code[p->ncode++] = op;
    if (tt__expr_op_info[op].words == 2) p->code[p->ncode++] = arg;
    p->sd += tt__expr_op_info[op].delta;
    if (p->sd > p->maxsd) p->maxsd = p->sd;
    if (p->sd > TT_EXPR_MAX_STACK)
        return fail(p, TT_EEXPR, p->atom, "expression too complex (needs more than %d stack slots)",
                    TT_EXPR_MAX_STACK);
    return (long)at;
}

/* Offset of the n-th last instruction when it is a constant that may be folded, else -1. */
static long const_at(const parser *p, size_t n)
{
    if (p->nins < n) return -1;
    size_t at = p->ins[p->nins - n];
    if (at < p->barrier || p->code[at] != OP_K) return -1;
    return (long)at;
}

static int emit_unop(parser *p, int op)
{
    long a = const_at(p, 1);
    int64_t r;
    if (a >= 0 && ex_unop(op, p->code[a + 1], &r) == TT_OK) {
        p->code[a + 1] = r;
        return 0;
    }
    return emit(p, op, 0) < 0 ? -1 : 0;
}

/* The superinstruction of a binary op with a constant right operand, or -1. */
static int op_with_k(int op)
{
    switch (op) {
    case OP_ADD: return OP_ADDK;
    case OP_SUB: return OP_SUBK;
    case OP_MUL: return OP_MULK;
    case OP_FDIV: return OP_FDIVK;
    case OP_MOD: return OP_MODK;
    case OP_BAND: return OP_BANDK;
    case OP_EQ: return OP_EQK;
    case OP_NE: return OP_NEK;
    case OP_LT: return OP_LTK;
    case OP_LE: return OP_LEK;
    case OP_GT: return OP_GTK;
    case OP_GE: return OP_GEK;
    default: return -1;
    }
}

static int emit_binop(parser *p, int op)
{
    long a = const_at(p, 2), b = const_at(p, 1);
    int64_t r;
    if (a >= 0 && b >= 0 && ex_binop(op, p->code[a + 1], p->code[b + 1], &r) == TT_OK) {
        p->code[a + 1] = r;
        p->ncode = (size_t)b;
        p->nins--;
        p->sd--;
        return 0;
    }
    int kop = op_with_k(op);
    if (b >= 0 && kop >= 0) { /* [x] K k op  ->  [x] opK k */
        int64_t k = p->code[b + 1];
        p->ncode = (size_t)b;
        p->nins--;
        p->sd--;
        return emit(p, kop, k) < 0 ? -1 : 0;
    }
    return emit(p, op, 0) < 0 ? -1 : 0;
}

/* Point the jump at `at` to the current end of code and make that a folding barrier. */
static void patch(parser *p, size_t at)
{
    p->code[at + 1] = (int64_t)(p->ncode - (at + 2));
    p->barrier = p->ncode;
}

static int add_slot(parser *p, int slot)
{
    size_t i = 0;
    while (i < p->nslots && p->slots[i] < slot) i++;
    if (i < p->nslots && p->slots[i] == slot) return 0;
    if (p->nslots == p->scap) {
        size_t cap = p->scap ? p->scap * 2 : 8;
        int *n = realloc(p->slots, cap * sizeof *n);
        if (!n) return oom(p);
        p->slots = n;
        p->scap = cap;
    }
    memmove(p->slots + i + 1, p->slots + i, (p->nslots - i) * sizeof *p->slots);
    p->slots[i] = slot;
    p->nslots++;
    return 0;
}

/* ------------------------------------------------------------------ parser */

static int parse_test(parser *p);

static int enter(parser *p)
{
    if (++p->depth > TT_EXPR_MAX_DEPTH)
        return fail(p, TT_EEXPR, p->t.pos, "expression too deep (more than %d levels)",
                    TT_EXPR_MAX_DEPTH);
    return 0;
}

static __attribute__((noinline)) int unexpected(parser *p)
{
    char b[200];
    return fail(p, TT_EEXPR, p->t.pos, "unexpected %s", tokdesc(p, b, sizeof b));
}

static const struct { const char *name; int min, max, op; } tt_funcs[] = {
    {"min", 1, -1, OP_MIN},          {"max", 1, -1, OP_MAX},      {"ceildiv", 2, 2, OP_CEILDIV},
    {"floordiv", 2, 2, OP_FDIV},     {"align_up", 2, 2, OP_ALIGN}, {"log2", 1, 1, OP_LOG2},
    {"sizeof", 1, 1, OP_SIZEOF},     {"abs", 1, 1, OP_ABS},
};

static int parse_call(parser *p, tok name)
{
    int f = -1;
    for (size_t i = 0; i < sizeof tt_funcs / sizeof tt_funcs[0]; i++)
        if (strlen(tt_funcs[i].name) == name.len &&
            memcmp(tt_funcs[i].name, p->src + name.pos, name.len) == 0)
            f = (int)i;
    if (f < 0)
        return fail_quoted(p, name.pos, "unknown function", p->src + name.pos, name.len);
    size_t lp = p->t.pos;
    if (enter(p) || next(p)) return -1;
    int n = 0;
    while (p->t.kind != TK_RP) {
        if (parse_test(p)) return -1;
        n++;
        if (n >= 2 && tt_funcs[f].max < 0 && emit_binop(p, tt_funcs[f].op)) return -1;
        if (p->t.kind == TK_COMMA) {
            if (next(p)) return -1;
            continue;
        }
        if (p->t.kind != TK_RP)
            return fail(p, TT_EEXPR, p->t.pos, "expected ')' to close '(' at %zu", lp);
    }
    if (n < tt_funcs[f].min || (tt_funcs[f].max >= 0 && n > tt_funcs[f].max)) {
        if (tt_funcs[f].min == tt_funcs[f].max)
            return fail(p, TT_EEXPR, name.pos, "%s() takes %d argument%s (%d given)",
                        tt_funcs[f].name, tt_funcs[f].min, tt_funcs[f].min == 1 ? "" : "s", n);
        return fail(p, TT_EEXPR, name.pos, "%s() takes at least %d argument (%d given)",
                    tt_funcs[f].name, tt_funcs[f].min, n);
    }
    if (tt_funcs[f].max == 1 && emit_unop(p, tt_funcs[f].op)) return -1;
    if (tt_funcs[f].max == 2 && emit_binop(p, tt_funcs[f].op)) return -1;
    p->depth--;
    return next(p);
}

static int parse_primary(parser *p)
{
    tok t = p->t;
    p->atom = t.pos;
    switch (t.kind) {
    case TK_NUM:
        if (emit(p, OP_K, t.val) < 0) return -1;
        return next(p);
    case TK_STR: {
        int dt = tt_dtype_parse(p->src + t.pos + 1, t.len - 2);
        if (dt < 0)
            return fail_quoted(p, t.pos, "unknown dtype", p->src + t.pos + 1, t.len - 2);
        if (emit(p, OP_K, dt) < 0) return -1;
        return next(p);
    }
    case TK_NAME: {
        if (next(p)) return -1;
        if (p->t.kind == TK_LP) return parse_call(p, t);
        static const char *const reserved[] = {"in", "is", "None", "lambda", "for", "yield"};
        for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
            if (strlen(reserved[i]) == t.len && memcmp(reserved[i], p->src + t.pos, t.len) == 0)
                return fail(p, TT_EEXPR, t.pos, "unsupported keyword '%s'", reserved[i]);
        int slot = p->resolve ? p->resolve(p->ud, p->src + t.pos, t.len) : -1;
        if (slot < 0)
            return fail_quoted(p, t.pos, "unknown name", p->src + t.pos, t.len);
        if (add_slot(p, slot) || emit(p, OP_LOAD, slot) < 0) return -1;
        return 0;
    }
    case TK_LP:
        if (enter(p) || next(p) || parse_test(p)) return -1;
        if (p->t.kind != TK_RP)
            return fail(p, TT_EEXPR, p->t.pos, "expected ')' to close '(' at %zu", t.pos);
        p->depth--;
        return next(p);
    default:
        return unexpected(p);
    }
}

static int parse_unary(parser *p);

static int parse_power(parser *p)
{
    if (parse_primary(p)) return -1;
    if (p->t.kind != TK_POW) return 0;
    if (enter(p) || next(p) || parse_unary(p) || emit_binop(p, OP_POW)) return -1;
    p->depth--;
    return 0;
}

static int parse_unary(parser *p)
{
    int k = p->t.kind;
    if (k != TK_MINUS && k != TK_PLUS && k != TK_TILDE) return parse_power(p);
    if (enter(p) || next(p) || parse_unary(p)) return -1;
    if (k == TK_MINUS && emit_unop(p, OP_NEG)) return -1;
    if (k == TK_TILDE && emit_unop(p, OP_BNOT)) return -1;
    p->depth--;
    return 0;
}

/* One level of left-associative binary operators: tokens[i] maps to ops[i]. */
static int parse_left(parser *p, int (*sub)(parser *), const int *tokens, const int *ops, int n)
{
    if (sub(p)) return -1;
    for (;;) {
        int i = 0;
        while (i < n && tokens[i] != p->t.kind) i++;
        if (i == n) return 0;
        if (next(p) || sub(p) || emit_binop(p, ops[i])) return -1;
    }
}

static int parse_term(parser *p)
{
    static const int t[] = {TK_STAR, TK_SLASH, TK_DSLASH, TK_PCT};
    static const int o[] = {OP_MUL, OP_TDIV, OP_FDIV, OP_MOD};
    return parse_left(p, parse_unary, t, o, 4);
}

static int parse_arith(parser *p)
{
    static const int t[] = {TK_PLUS, TK_MINUS}, o[] = {OP_ADD, OP_SUB};
    return parse_left(p, parse_term, t, o, 2);
}

static int parse_shift(parser *p)
{
    static const int t[] = {TK_SHL, TK_SHR}, o[] = {OP_SHL, OP_SHR};
    return parse_left(p, parse_arith, t, o, 2);
}

static int parse_band(parser *p)
{
    static const int t[] = {TK_AMP}, o[] = {OP_BAND};
    return parse_left(p, parse_shift, t, o, 1);
}

static int parse_bxor(parser *p)
{
    static const int t[] = {TK_CARET}, o[] = {OP_BXOR};
    return parse_left(p, parse_band, t, o, 1);
}

static int parse_bor(parser *p)
{
    static const int t[] = {TK_PIPE}, o[] = {OP_BOR};
    return parse_left(p, parse_bxor, t, o, 1);
}

static int cmp_op(int kind)
{
    switch (kind) {
    case TK_EQ: return OP_EQ;
    case TK_NE: return OP_NE;
    case TK_LT: return OP_LT;
    case TK_LE: return OP_LE;
    case TK_GT: return OP_GT;
    case TK_GE: return OP_GE;
    default: return -1;
    }
}

/* a < b <= c: [a b] CHAIN< JFCHAIN L [c] LE L:  (b is evaluated once) */
static int parse_cmp(parser *p)
{
    if (parse_bor(p)) return -1;
    int op = cmp_op(p->t.kind);
    if (op < 0) return 0;
    long link = -1; /* JFCHAIN instructions to patch, linked through their operands */
    for (;;) {
        if (next(p) || parse_bor(p)) return -1;
        int op2 = cmp_op(p->t.kind);
        if (op2 < 0) {
            if (emit_binop(p, op)) return -1;
            break;
        }
        if (emit(p, OP_CHAIN, op) < 0) return -1;
        long j = emit(p, OP_JFCHAIN, link);
        if (j < 0) return -1;
        link = j;
        op = op2;
    }
    while (link >= 0) {
        long prev = (long)p->code[link + 1];
        patch(p, (size_t)link);
        link = prev;
    }
    return 0;
}

static int parse_not(parser *p)
{
    if (p->t.kind != TK_NOT) return parse_cmp(p);
    if (enter(p) || next(p) || parse_not(p) || emit_unop(p, OP_NOT)) return -1;
    p->depth--;
    return 0;
}

/* Whether the value on top is already 0/1 (its last instruction is not a jump target). */
static int top_is_bool(const parser *p)
{
    if (!p->nins) return 0;
    size_t at = p->ins[p->nins - 1];
    if (at < p->barrier) return 0;
    int op = (int)p->code[at];
    if (op == OP_K) return p->code[at + 1] == 0 || p->code[at + 1] == 1;
    return op == OP_NOT || op == OP_BOOL || (op >= OP_EQ && op <= OP_GE) ||
           (op >= OP_EQK && op <= OP_GEK);
}

static int parse_logic(parser *p, int tk, int jop, int (*sub)(parser *))
{
    if (sub(p)) return -1;
    while (p->t.kind == tk) {
        long j = emit(p, jop, 0); /* the jump path leaves 0 (and) or 1 (or) */
        if (j < 0 || next(p) || sub(p)) return -1;
        if (!top_is_bool(p) && emit(p, OP_BOOL, 0) < 0) return -1;
        patch(p, (size_t)j);
    }
    return 0;
}

static int parse_and(parser *p) { return parse_logic(p, TK_AND, OP_ANDJ, parse_not); }
static int parse_or(parser *p) { return parse_logic(p, TK_OR, OP_ORJ, parse_and); }

/* x if c else y  ->  [c] JZ L1 [x] JMP L2 L1: [y] L2: */
static int parse_test(parser *p)
{
    size_t s = p->ncode;
    int sd0 = p->sd;
    if (parse_or(p)) return -1;
    if (p->t.kind == TK_IF) {
        size_t ifpos = p->t.pos, e = p->ncode;
        p->sd = sd0; /* x's value will be computed after c */
        if (next(p) || parse_or(p)) return -1;
        if (p->t.kind != TK_ELSE)
            return fail(p, TT_EEXPR, p->t.pos, "expected 'else' for 'if' at %zu", ifpos);
        size_t lx = e - s, lc = p->ncode - e;
        if (grow_code(p, lx + 4)) return -1;
        int64_t *c = p->code;
        memcpy(c + p->ncode, c + s, lx * sizeof *c); /* scratch copy of x */
        memmove(c + s, c + e, lc * sizeof *c);
        c[s + lc] = OP_JZ;
        c[s + lc + 1] = (int64_t)(lx + 2);
        memmove(c + s + lc + 2, c + p->ncode, lx * sizeof *c);
        p->ncode = s + lc + 2 + lx;
        p->barrier = p->ncode;
        p->sd = sd0 + 1;
        long j = emit(p, OP_JMP, 0);
        if (j < 0 || enter(p) || next(p)) return -1;
        p->sd = sd0;
        p->barrier = p->ncode;
        if (parse_test(p)) return -1;
        patch(p, (size_t)j);
        p->depth--;
    }
    return 0;
}

tt_rc tt_expr_compile(const char *src, tt_expr_resolve_fn resolve, void *ud, tt_expr **out,
                      tt_errinfo *err)
{
    if (out) *out = NULL;
    if (!src || !out) {
        tt_errf(err, TT_EINVAL, NULL, "tt_expr_compile: NULL argument");
        return TT_EINVAL;
    }
    size_t len = strnlen(src, TT_EXPR_MAX_LEN + 1);
    if (len > TT_EXPR_MAX_LEN) {
        tt_errf(err, TT_EEXPR, NULL, "expression too long (more than %d bytes)", TT_EXPR_MAX_LEN);
        if (err) err->pos = TT_EXPR_MAX_LEN;
        return TT_EEXPR;
    }
    parser p = {.src = src, .len = len, .resolve = resolve, .ud = ud, .err = err};
    int *depth_at = NULL;
    tt_expr *e = NULL;
    if (next(&p)) goto done;
    if (p.t.kind == TK_EOF) {
        fail(&p, TT_EEXPR, p.t.pos, "empty expression");
        goto done;
    }
    if (parse_test(&p)) goto done;
    if (p.t.kind != TK_EOF) {
        char b[200];
        fail(&p, TT_EEXPR, p.t.pos, "trailing input: unexpected %s", tokdesc(&p, b, sizeof b));
        goto done;
    }
    if (emit(&p, OP_END, 0) < 0) goto done;
    depth_at = malloc((p.ncode + 1) * sizeof *depth_at);
    if (!depth_at) {
        oom(&p);
        goto done;
    }
    int maxd = tt__expr_verify(p.code, p.ncode, depth_at);
    if (maxd < 0 || maxd > p.maxsd || maxd > TT_EXPR_MAX_STACK) {
        fail(&p, TT_EINTERNAL, 0, "internal error: inconsistent bytecode");
        goto done;
    }
    size_t sz = sizeof *e + p.ncode * sizeof(int64_t) + p.nslots * sizeof(int) + len + 1;
    e = malloc(sz);
    if (!e) {
        oom(&p);
        goto done;
    }
    char *m = (char *)(e + 1);
    e->code = (int64_t *)(void *)m;
    memcpy(e->code, p.code, p.ncode * sizeof(int64_t));
    m += p.ncode * sizeof(int64_t);
    e->ncode = p.ncode;
    e->slots = (int *)(void *)m;
    if (p.nslots) memcpy(e->slots, p.slots, p.nslots * sizeof(int));
    m += p.nslots * sizeof(int);
    e->nslots = p.nslots;
    e->max_stack = maxd;
    e->src = m;
    memcpy(e->src, src, len + 1);
    *out = e;
done:
    free(depth_at);
    free(p.code);
    free(p.ins);
    free(p.slots);
    return *out ? TT_OK : (p.rc ? p.rc : TT_EINTERNAL);
}

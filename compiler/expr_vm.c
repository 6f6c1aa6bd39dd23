/* SPDX-License-Identifier: MIT
 * expr_vm.c - the expression bytecode: stack effects and verification, evaluation
 * (tt_expr_eval) and introspection of compiled expressions.  Compilation is in expr_parse.c;
 * the bytecode is defined in expr_int.h.
 */
#include "expr.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "expr_int.h"

/* ---------------------------------------------------------------- bytecode */

const struct tt__expr_op tt__expr_op_info[OP__COUNT] = {
    [OP_END] = {1, 1, 0},      [OP_K] = {2, 0, 1},        [OP_LOAD] = {2, 0, 1},
    [OP_NEG] = {1, 1, 0},      [OP_NOT] = {1, 1, 0},      [OP_BNOT] = {1, 1, 0},
    [OP_BOOL] = {1, 1, 0},     [OP_ABS] = {1, 1, 0},      [OP_LOG2] = {1, 1, 0},
    [OP_SIZEOF] = {1, 1, 0},   [OP_ADD] = {1, 2, -1},     [OP_SUB] = {1, 2, -1},
    [OP_MUL] = {1, 2, -1},     [OP_FDIV] = {1, 2, -1},    [OP_MOD] = {1, 2, -1},
    [OP_POW] = {1, 2, -1},     [OP_SHL] = {1, 2, -1},     [OP_SHR] = {1, 2, -1},
    [OP_BAND] = {1, 2, -1},    [OP_BOR] = {1, 2, -1},     [OP_BXOR] = {1, 2, -1},
    [OP_MIN] = {1, 2, -1},     [OP_MAX] = {1, 2, -1},     [OP_CEILDIV] = {1, 2, -1},
    [OP_ALIGN] = {1, 2, -1},   [OP_TDIV] = {1, 2, -1},    [OP_EQ] = {1, 2, -1},      [OP_NE] = {1, 2, -1},
    [OP_LT] = {1, 2, -1},      [OP_LE] = {1, 2, -1},      [OP_GT] = {1, 2, -1},
    [OP_GE] = {1, 2, -1},      [OP_ADDK] = {2, 1, 0},     [OP_SUBK] = {2, 1, 0},
    [OP_MULK] = {2, 1, 0},     [OP_FDIVK] = {2, 1, 0},    [OP_MODK] = {2, 1, 0},
    [OP_BANDK] = {2, 1, 0},    [OP_EQK] = {2, 1, 0},      [OP_NEK] = {2, 1, 0},
    [OP_LTK] = {2, 1, 0},      [OP_LEK] = {2, 1, 0},      [OP_GTK] = {2, 1, 0},
    [OP_GEK] = {2, 1, 0},      [OP_CHAIN] = {2, 2, 0},    [OP_JFCHAIN] = {2, 2, -1},
    [OP_ANDJ] = {2, 1, -1},    [OP_ORJ] = {2, 1, -1},     [OP_JZ] = {2, 1, -1},
    [OP_JMP] = {2, 0, 0},
};

/* Declared in expr_int.h. */
int tt__expr_verify(const int64_t *code, size_t n, int *depth_at)
{
    for (size_t i = 0; i <= n; i++) depth_at[i] = -1;
    int d = 0, maxd = 0;
    bool live = true;
    size_t pc = 0;
    while (pc < n) {
        if (depth_at[pc] >= 0) {
            if (live && depth_at[pc] != d) return -1;
            d = depth_at[pc];
            live = true;
        }
        if (!live) return -1;
        int64_t op = code[pc];
        if (op < 0 || op >= OP__COUNT) return -1;
        size_t w = (size_t)tt__expr_op_info[op].words;
        if (pc + w > n) return -1;
        if (op == OP_END) return (pc + 1 == n && d == 1) ? maxd : -1;
        if (d < tt__expr_op_info[op].need) return -1;
        if (op >= OP_JFCHAIN) {
            int64_t off = code[pc + 1];
            if (off < 0 || (size_t)off >= n - pc - 2) return -1; /* lands before END */
            size_t tgt = pc + 2 + (size_t)off;
            int td = op == OP_JFCHAIN ? d - 1 : op == OP_JZ ? d - 1 : d;
            if (depth_at[tgt] >= 0 && depth_at[tgt] != td) return -1;
            depth_at[tgt] = td;
            if (op == OP_JMP) live = false;
        }
        if (op == OP_CHAIN && (code[pc + 1] < OP_EQ || code[pc + 1] > OP_GE)) return -1;
        d += tt__expr_op_info[op].delta;
        if (d > maxd) maxd = d;
        pc += w;
    }
    return -1;
}

/* --------------------------------------------------------------- evaluation */

/* Dispatch: a jump table of label addresses with GCC/Clang (one indirect branch per op, which
 * predicts better than one shared switch), a plain switch otherwise or with -DTT_EXPR_SWITCH. */
#if defined(__GNUC__) && !defined(TT_EXPR_SWITCH)
#define VM_NEXT goto *vm_labels[*pc++]
#define VM_START VM_NEXT; {
#define VM_CASE(op) L_##op:
#define VM_END }
#else
#define VM_START for (;;) switch (*pc++) {
#define VM_CASE(op) case op:
#define VM_NEXT continue
#define VM_END default: return TT_EINTERNAL; }
#endif

/* Binary op through a checked helper: [a b] -> [r]. */
#define VM_BIN(fn)                                                                                 \
    do {                                                                                           \
        int64_t r_;                                                                                \
        tt_rc rc_ = fn(sp[-1], sp[0], &r_);                                                        \
        if (__builtin_expect(rc_ != TT_OK, 0)) return rc_;                                         \
        *--sp = r_;                                                                                \
    } while (0)
/* Same with the constant operand k: [a] -> [r]. */
#define VM_BINK(fn)                                                                                \
    do {                                                                                           \
        int64_t r_;                                                                                \
        tt_rc rc_ = fn(sp[0], *pc++, &r_);                                                         \
        if (__builtin_expect(rc_ != TT_OK, 0)) return rc_;                                         \
        *sp = r_;                                                                                  \
    } while (0)
#define VM_UN(fn)                                                                                  \
    do {                                                                                           \
        int64_t r_;                                                                                \
        tt_rc rc_ = fn(sp[0], &r_);                                                                \
        if (__builtin_expect(rc_ != TT_OK, 0)) return rc_;                                         \
        *sp = r_;                                                                                  \
    } while (0)
#define VM_JUMP() (pc += *pc + 1)

static tt_rc eval_mixed(const tt_expr *e, const int64_t *slots, int64_t *out);

/* The integer evaluation; at an inexact `/` the mixed mode (below) evaluates the whole
 * expression again. */
tt_rc tt_expr_eval(const tt_expr *e, const int64_t *slots, int64_t *out)
{
#if defined(__GNUC__) && !defined(TT_EXPR_SWITCH)
    static const void *const vm_labels[OP__COUNT] = {
        &&L_OP_END, &&L_OP_K, &&L_OP_LOAD, &&L_OP_NEG, &&L_OP_NOT, &&L_OP_BNOT, &&L_OP_BOOL,
        &&L_OP_ABS, &&L_OP_LOG2, &&L_OP_SIZEOF, &&L_OP_ADD, &&L_OP_SUB, &&L_OP_MUL,
        &&L_OP_FDIV, &&L_OP_MOD, &&L_OP_POW, &&L_OP_SHL, &&L_OP_SHR, &&L_OP_BAND, &&L_OP_BOR,
        &&L_OP_BXOR, &&L_OP_MIN, &&L_OP_MAX, &&L_OP_CEILDIV, &&L_OP_ALIGN, &&L_OP_TDIV, &&L_OP_EQ,
        &&L_OP_NE, &&L_OP_LT, &&L_OP_LE, &&L_OP_GT, &&L_OP_GE, &&L_OP_ADDK, &&L_OP_SUBK,
        &&L_OP_MULK, &&L_OP_FDIVK, &&L_OP_MODK, &&L_OP_BANDK, &&L_OP_EQK, &&L_OP_NEK,
        &&L_OP_LTK, &&L_OP_LEK, &&L_OP_GTK, &&L_OP_GEK, &&L_OP_CHAIN, &&L_OP_JFCHAIN,
        &&L_OP_ANDJ, &&L_OP_ORJ, &&L_OP_JZ, &&L_OP_JMP};
#endif
    /* st[0] is never used: sp points at the top value, at st when empty. */
    int64_t st[TT_EXPR_MAX_STACK + 1];
    int64_t *sp = st;
    const int64_t *pc = e->code;
    VM_START
        VM_CASE(OP_END) *out = *sp; return TT_OK;
        VM_CASE(OP_K) *++sp = *pc++; VM_NEXT;
        VM_CASE(OP_LOAD) *++sp = slots[*pc++]; VM_NEXT;
        VM_CASE(OP_NEG)
            if (*sp == INT64_MIN) return TT_EOVERFLOW;
            *sp = -*sp;
            VM_NEXT;
        VM_CASE(OP_NOT) *sp = *sp == 0; VM_NEXT;
        VM_CASE(OP_BNOT) *sp = ~*sp; VM_NEXT;
        VM_CASE(OP_BOOL) *sp = *sp != 0; VM_NEXT;
        VM_CASE(OP_ABS)
            if (*sp == INT64_MIN) return TT_EOVERFLOW;
            if (*sp < 0) *sp = -*sp;
            VM_NEXT;
        VM_CASE(OP_LOG2) VM_UN(ex_log2); VM_NEXT;
        VM_CASE(OP_SIZEOF) VM_UN(ex_sizeof); VM_NEXT;
        VM_CASE(OP_ADD)
            if (__builtin_add_overflow(sp[-1], sp[0], &sp[-1])) return TT_EOVERFLOW;
            sp--;
            VM_NEXT;
        VM_CASE(OP_SUB)
            if (__builtin_sub_overflow(sp[-1], sp[0], &sp[-1])) return TT_EOVERFLOW;
            sp--;
            VM_NEXT;
        VM_CASE(OP_MUL)
            if (__builtin_mul_overflow(sp[-1], sp[0], &sp[-1])) return TT_EOVERFLOW;
            sp--;
            VM_NEXT;
        VM_CASE(OP_FDIV) VM_BIN(ex_fdiv); VM_NEXT;
        VM_CASE(OP_MOD) VM_BIN(ex_mod); VM_NEXT;
        VM_CASE(OP_POW) VM_BIN(ex_pow); VM_NEXT;
        VM_CASE(OP_SHL) VM_BIN(ex_shl); VM_NEXT;
        VM_CASE(OP_SHR) VM_BIN(ex_shr); VM_NEXT;
        VM_CASE(OP_CEILDIV) VM_BIN(ex_ceildiv); VM_NEXT;
        VM_CASE(OP_ALIGN) VM_BIN(ex_align); VM_NEXT;
        VM_CASE(OP_TDIV) {
            int64_t r_;
            tt_rc rc_ = ex_tdiv(sp[-1], sp[0], &r_);
            if (__builtin_expect(rc_ == TT__EXPR_INEXACT, 0)) return eval_mixed(e, slots, out);
            if (__builtin_expect(rc_ != TT_OK, 0)) return rc_;
            *--sp = r_;
            VM_NEXT;
        }
        VM_CASE(OP_BAND) sp[-1] &= sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_BOR) sp[-1] |= sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_BXOR) sp[-1] ^= sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_MIN) if (sp[0] < sp[-1]) sp[-1] = sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_MAX) if (sp[0] > sp[-1]) sp[-1] = sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_EQ) sp[-1] = sp[-1] == sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_NE) sp[-1] = sp[-1] != sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_LT) sp[-1] = sp[-1] < sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_LE) sp[-1] = sp[-1] <= sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_GT) sp[-1] = sp[-1] > sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_GE) sp[-1] = sp[-1] >= sp[0]; sp--; VM_NEXT;
        VM_CASE(OP_ADDK) if (__builtin_add_overflow(*sp, *pc++, sp)) return TT_EOVERFLOW; VM_NEXT;
        VM_CASE(OP_SUBK) if (__builtin_sub_overflow(*sp, *pc++, sp)) return TT_EOVERFLOW; VM_NEXT;
        VM_CASE(OP_MULK) if (__builtin_mul_overflow(*sp, *pc++, sp)) return TT_EOVERFLOW; VM_NEXT;
        VM_CASE(OP_FDIVK) VM_BINK(ex_fdiv); VM_NEXT;
        VM_CASE(OP_MODK) VM_BINK(ex_mod); VM_NEXT;
        VM_CASE(OP_BANDK) *sp &= *pc++; VM_NEXT;
        VM_CASE(OP_EQK) *sp = *sp == *pc++; VM_NEXT;
        VM_CASE(OP_NEK) *sp = *sp != *pc++; VM_NEXT;
        VM_CASE(OP_LTK) *sp = *sp < *pc++; VM_NEXT;
        VM_CASE(OP_LEK) *sp = *sp <= *pc++; VM_NEXT;
        VM_CASE(OP_GTK) *sp = *sp > *pc++; VM_NEXT;
        VM_CASE(OP_GEK) *sp = *sp >= *pc++; VM_NEXT;
        VM_CASE(OP_CHAIN) {
            int64_t t = ex_cmp(*pc++, sp[-1], sp[0]);
            sp[-1] = sp[0];
            sp[0] = t;
            VM_NEXT;
        }
        VM_CASE(OP_JFCHAIN)
            if (*sp == 0) {
                *--sp = 0;
                VM_JUMP();
            } else {
                sp--;
                pc++;
            }
            VM_NEXT;
        VM_CASE(OP_ANDJ)
            if (*sp == 0) VM_JUMP();
            else sp--, pc++;
            VM_NEXT;
        VM_CASE(OP_ORJ)
            if (*sp != 0) *sp = 1, VM_JUMP();
            else sp--, pc++;
            VM_NEXT;
        VM_CASE(OP_JZ)
            if (*sp-- == 0) VM_JUMP();
            else pc++;
            VM_NEXT;
        VM_CASE(OP_JMP) VM_JUMP(); VM_NEXT;
    VM_END
}

/* ------------------------------------------------- mixed integer/float mode */
/* An expression whose `/` divides inexactly is evaluated again here, the way Python evaluates
 * it: a value is an integer (int64, the integer semantics above) until a `/` that does not
 * divide exactly makes it a float (double), and any operation with a float operand is a
 * float operation (Python's float `//`, `%` and comparisons).  Bitwise operators, shifts
 * and the integer functions (log2, ceildiv, align_up, sizeof) on a float are TT_EDOMAIN (a
 * TypeError in Python).  The result must be an integer value -- a comparison or a boolean
 * always is; a float that is integral (`7 / 2 * 2`) converts -- else TT_EDOMAIN.  A
 * non-finite float is TT_EOVERFLOW. */
typedef struct mval {
    bool f;          /* a float */
    int64_t i;
    double d;
} mval;

static double mv_d(mval v) { return v.f ? v.d : (double)v.i; }
static mval mv_int(int64_t i) { return (mval){false, i, 0}; }
static bool mv_true(mval v) { return v.f ? v.d != 0 : v.i != 0; }

static tt_rc mv_float(double d, mval *r)
{
    if (!isfinite(d)) return TT_EOVERFLOW;
    *r = (mval){true, 0, d};
    return TT_OK;
}

/* Python's float `%` (the sign of the divisor) and `//`. */
static double py_fmod(double a, double b)
{
    double m = fmod(a, b);
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

static tt_rc mv_bin(int64_t op, mval a, mval b, mval *r)
{
    tt_rc rc = TT_OK;
    int64_t i;
    if (op >= OP_EQ && op <= OP_GE) {   /* exact for integers, by value for floats */
        if (!a.f && !b.f) *r = mv_int(ex_cmp(op, a.i, b.i));
        else {
            double x = mv_d(a), y = mv_d(b);
            *r = mv_int(op == OP_EQ ? x == y : op == OP_NE ? x != y : op == OP_LT ? x < y
                        : op == OP_LE ? x <= y : op == OP_GT ? x > y : x >= y);
        }
        return TT_OK;
    }
    if (op == OP_MIN || op == OP_MAX) {   /* the first of equal values, as Python's */
        bool ints = !a.f && !b.f;
        bool take_b = op == OP_MIN ? (ints ? b.i < a.i : mv_d(b) < mv_d(a))
                                   : (ints ? b.i > a.i : mv_d(b) > mv_d(a));
        *r = take_b ? b : a;
        return TT_OK;
    }
    if (op == OP_TDIV) {
        if (!a.f && !b.f) {
            rc = ex_tdiv(a.i, b.i, &i);
            if (rc == TT_OK) *r = mv_int(i);
            if (rc != TT__EXPR_INEXACT) return rc;
        }
        if (mv_d(b) == 0) return TT_EDIVZERO;
        return mv_float(mv_d(a) / mv_d(b), r);
    }
    if (!a.f && !b.f) {   /* the integer semantics */
        switch (op) {
        case OP_ADD: rc = __builtin_add_overflow(a.i, b.i, &i) ? TT_EOVERFLOW : TT_OK; break;
        case OP_SUB: rc = __builtin_sub_overflow(a.i, b.i, &i) ? TT_EOVERFLOW : TT_OK; break;
        case OP_MUL: rc = __builtin_mul_overflow(a.i, b.i, &i) ? TT_EOVERFLOW : TT_OK; break;
        case OP_FDIV: rc = ex_fdiv(a.i, b.i, &i); break;
        case OP_MOD: rc = ex_mod(a.i, b.i, &i); break;
        case OP_POW: rc = ex_pow(a.i, b.i, &i); break;
        case OP_SHL: rc = ex_shl(a.i, b.i, &i); break;
        case OP_SHR: rc = ex_shr(a.i, b.i, &i); break;
        case OP_CEILDIV: rc = ex_ceildiv(a.i, b.i, &i); break;
        case OP_ALIGN: rc = ex_align(a.i, b.i, &i); break;
        case OP_BAND: i = a.i & b.i; break;
        case OP_BOR: i = a.i | b.i; break;
        case OP_BXOR: i = a.i ^ b.i; break;
        default: return TT_EINTERNAL;
        }
        if (rc == TT_OK) *r = mv_int(i);
        return rc;
    }
    double x = mv_d(a), y = mv_d(b);
    switch (op) {
    case OP_ADD: return mv_float(x + y, r);
    case OP_SUB: return mv_float(x - y, r);
    case OP_MUL: return mv_float(x * y, r);
    case OP_FDIV:
        if (y == 0) return TT_EDIVZERO;
        return mv_float((x - py_fmod(x, y)) / y, r);
    case OP_MOD:
        if (y == 0) return TT_EDIVZERO;
        return mv_float(py_fmod(x, y), r);
    case OP_POW:
        if (x == 0 && y < 0) return TT_EDIVZERO;
        if (x < 0 && y != floor(y)) return TT_EDOMAIN;   /* a complex number in Python */
        return mv_float(pow(x, y), r);
    default: return TT_EDOMAIN;   /* bitwise, shifts, integer functions of a float */
    }
}

static tt_rc mv_un(int64_t op, mval a, mval *r)
{
    if (op == OP_NOT || op == OP_BOOL) {
        *r = mv_int(mv_true(a) == (op == OP_BOOL));
        return TT_OK;
    }
    if (a.f) {
        if (op == OP_NEG) return mv_float(-a.d, r);
        if (op == OP_ABS) return mv_float(fabs(a.d), r);
        return TT_EDOMAIN;
    }
    int64_t i = a.i;
    tt_rc rc = TT_OK;
    switch (op) {
    case OP_NEG:
    case OP_ABS:
        if (i == INT64_MIN && (op == OP_NEG || i < 0)) return TT_EOVERFLOW;
        i = op == OP_NEG || i < 0 ? -i : i;
        break;
    case OP_BNOT: i = ~i; break;
    case OP_LOG2: rc = ex_log2(a.i, &i); break;
    case OP_SIZEOF: rc = ex_sizeof(a.i, &i); break;
    default: return TT_EINTERNAL;
    }
    if (rc == TT_OK) *r = mv_int(i);
    return rc;
}

/* The binary op of a superinstruction with a constant (OP_ADDK ..): its plain op. */
static int64_t op_of_k(int64_t op)
{
    static const int64_t plain[] = {OP_ADD, OP_SUB, OP_MUL, OP_FDIV, OP_MOD, OP_BAND,
                                    OP_EQ,  OP_NE,  OP_LT,  OP_LE,   OP_GT,  OP_GE};
    return plain[op - OP_ADDK];
}

static tt_rc eval_mixed(const tt_expr *e, const int64_t *slots, int64_t *out)
{
    mval st[TT_EXPR_MAX_STACK + 1];
    mval *sp = st;   /* st[0] unused, as in eval_int */
    const int64_t *pc = e->code;
    for (;;) {
        int64_t op = *pc++;
        tt_rc rc = TT_OK;
        switch (op) {
        case OP_END:
            if (!sp->f) *out = sp->i;
            else if (sp->d == floor(sp->d) && fabs(sp->d) < 9.2e18) *out = (int64_t)sp->d;
            else return TT_EDOMAIN;   /* a fraction where an integer is needed */
            return TT_OK;
        case OP_K: *++sp = mv_int(*pc++); break;
        case OP_LOAD: *++sp = mv_int(slots[*pc++]); break;
        case OP_NEG: case OP_NOT: case OP_BNOT: case OP_BOOL: case OP_ABS: case OP_LOG2:
        case OP_SIZEOF:
            rc = mv_un(op, *sp, sp);
            break;
        case OP_CHAIN: {
            mval t;
            rc = mv_bin(*pc++, sp[-1], sp[0], &t);
            sp[-1] = sp[0];
            sp[0] = t;
            break;
        }
        case OP_JFCHAIN:
            if (!mv_true(*sp)) {
                *--sp = mv_int(0);
                pc += *pc + 1;
            } else {
                sp--;
                pc++;
            }
            break;
        case OP_ANDJ:
            if (!mv_true(*sp)) *sp = mv_int(0), pc += *pc + 1;
            else sp--, pc++;
            break;
        case OP_ORJ:
            if (mv_true(*sp)) *sp = mv_int(1), pc += *pc + 1;
            else sp--, pc++;
            break;
        case OP_JZ:
            if (!mv_true(*sp--)) pc += *pc + 1;
            else pc++;
            break;
        case OP_JMP: pc += *pc + 1; break;
        default:
            if (op >= OP_ADDK && op <= OP_GEK) {
                rc = mv_bin(op_of_k(op), *sp, mv_int(*pc++), sp);
            } else if (op >= OP_ADD && op <= OP_GE) {
                rc = mv_bin(op, sp[-1], sp[0], &sp[-1]);
                sp--;
            } else {
                return TT_EINTERNAL;
            }
        }
        if (rc != TT_OK) return rc;
    }
}

int tt_expr_max_slot(const tt_expr *e)
{
    return (e && e->nslots) ? e->slots[e->nslots - 1] : -1;
}

size_t tt_expr_slots(const tt_expr *e, int *out, size_t cap)
{
    if (!e) return 0;
    for (size_t i = 0; i < e->nslots && i < cap; i++) out[i] = e->slots[i];
    return e->nslots;
}

int tt_expr_const(const tt_expr *e, int64_t *val)
{
    int64_t v;
    if (!e || e->nslots || tt_expr_eval(e, NULL, &v) != TT_OK) return 0;
    if (val) *val = v;
    return 1;
}

const char *tt_expr_source(const tt_expr *e) { return e ? e->src : NULL; }

void tt_expr_free(tt_expr *e) { free(e); }

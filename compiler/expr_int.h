/* SPDX-License-Identifier: MIT
 * expr_int.h - internals shared by expr_parse.c and expr_vm.c: the bytecode (opcodes, their
 * stack effects, the compiled expression) and the integer semantics used by both evaluation
 * and constant folding, so that the two agree by construction.  Not part of the API.
 */
#ifndef TT_EXPR_INT_H
#define TT_EXPR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "expr.h"

/* ---------------------------------------------------------------- bytecode */

/* Opcodes.  Operand words follow the opcode in the int64 code array. */
enum {
    OP_END,     /* stop; result on top */
    OP_K,       /* k: push constant k */
    OP_LOAD,    /* s: push slots[s] */
    OP_NEG, OP_NOT, OP_BNOT, OP_BOOL, OP_ABS, OP_LOG2, OP_SIZEOF,
    OP_ADD, OP_SUB, OP_MUL, OP_FDIV, OP_MOD, OP_POW, OP_SHL, OP_SHR,
    OP_BAND, OP_BOR, OP_BXOR, OP_MIN, OP_MAX, OP_CEILDIV, OP_ALIGN,
    OP_TDIV,    /* `/`: Python's true division (exact quotient, else expr_vm.c's mixed mode) */
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
    /* k: the binary op with the constant k as right operand (`x % 32`, `x <= 1024`) */
    OP_ADDK, OP_SUBK, OP_MULK, OP_FDIVK, OP_MODK, OP_BANDK,
    OP_EQK, OP_NEK, OP_LTK, OP_LEK, OP_GTK, OP_GEK,
    OP_CHAIN,   /* cmp: [a b] -> [b (a cmp b)], cmp is OP_EQ..OP_GE */
    OP_JFCHAIN, /* off: [b t]: t == 0 -> [0] and jump; else -> [b] */
    OP_ANDJ,    /* off: top == 0 -> keep it, jump; else pop */
    OP_ORJ,     /* off: top != 0 -> top = 1, jump; else pop */
    OP_JZ,      /* off: pop; jump when it was 0 */
    OP_JMP,     /* off: jump */
    OP__COUNT
};

/* Words per instruction, values it needs on the stack, and its stack effect on the
 * fall-through path (defined in expr_vm.c). */
struct tt__expr_op { signed char words, need, delta; };
extern const struct tt__expr_op tt__expr_op_info[OP__COUNT];

struct tt_expr {
    int64_t *code;   /* ends with OP_END */
    size_t ncode;
    int *slots;      /* distinct slots read, ascending */
    size_t nslots;
    int max_stack;
    char *src;
    /* code, slots and src live in the same allocation, after this header */
};

/* Walk the code (n words, ending with OP_END) once: every path must agree on the stack depth
 * at each jump target and end with exactly one value.  depth_at has room for n + 1 ints
 * (scratch, caller-owned).  Returns the maximum stack depth, or -1 if the code is
 * inconsistent. */
int tt__expr_verify(const int64_t *code, size_t n, int *depth_at);

/* ------------------------------------------------------- integer semantics */
/* Shared by evaluation and constant folding, so that both agree by construction. */

static inline tt_rc ex_fdiv(int64_t a, int64_t b, int64_t *r)
{
    if (b == 0) return TT_EDIVZERO;
    if (b == -1) {
        if (a == INT64_MIN) return TT_EOVERFLOW;
        *r = -a;
        return TT_OK;
    }
    int64_t q = a / b, m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) q--;
    *r = q;
    return TT_OK;
}

static inline tt_rc ex_mod(int64_t a, int64_t b, int64_t *r)
{
    if (b == 0) return TT_EDIVZERO;
    if (b == -1) {
        *r = 0;
        return TT_OK;
    }
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    *r = m;
    return TT_OK;
}

static inline tt_rc ex_ceildiv(int64_t a, int64_t b, int64_t *r)
{
    if (b == 0) return TT_EDIVZERO;
    if (b == -1) {
        if (a == INT64_MIN) return TT_EOVERFLOW;
        *r = -a;
        return TT_OK;
    }
    int64_t q = a / b, m = a % b;
    if (m != 0 && ((m < 0) == (b < 0))) q++;
    *r = q;
    return TT_OK;
}

static inline tt_rc ex_align(int64_t a, int64_t b, int64_t *r)
{
    if (b <= 0) return TT_EDOMAIN;
    int64_t q;
    tt_rc rc = ex_ceildiv(a, b, &q);
    if (rc) return rc;
    if (__builtin_mul_overflow(q, b, r)) return TT_EOVERFLOW;
    return TT_OK;
}

static inline tt_rc ex_pow(int64_t b, int64_t e, int64_t *r)
{
    if (e < 0) return TT_EDOMAIN;
    int64_t acc = 1;
    while (e) {
        if ((e & 1) && __builtin_mul_overflow(acc, b, &acc)) return TT_EOVERFLOW;
        e >>= 1;
        /* |b| >= 2 and more bits left: b*b overflowing means the result overflows too. */
        if (e && __builtin_mul_overflow(b, b, &b)) return TT_EOVERFLOW;
    }
    *r = acc;
    return TT_OK;
}

static inline tt_rc ex_shl(int64_t a, int64_t s, int64_t *r)
{
    if (s < 0 || s >= 63) return TT_EDOMAIN;
    int64_t v = (int64_t)((uint64_t)a << s);
    if ((v >> s) != a) return TT_EOVERFLOW;
    *r = v;
    return TT_OK;
}

static inline tt_rc ex_shr(int64_t a, int64_t s, int64_t *r)
{
    if (s < 0 || s >= 63) return TT_EDOMAIN;
    *r = a >> s; /* arithmetic shift = Python's floor semantics */
    return TT_OK;
}

static inline tt_rc ex_log2(int64_t a, int64_t *r)
{
    if (a <= 0) return TT_EDOMAIN;
    *r = 63 - __builtin_clzll((unsigned long long)a);
    return TT_OK;
}

static inline tt_rc ex_sizeof(int64_t a, int64_t *r)
{
    int sz = tt_dtype_size(a);
    if (sz <= 0) return TT_EDOMAIN;
    *r = sz;
    return TT_OK;
}

/* Not a tt_rc of the API: an inexact `/`, which evaluation finishes in the mixed
 * integer/float mode (expr_vm.c) and constant folding leaves to evaluation. */
#define TT__EXPR_INEXACT ((tt_rc)TT_RC__COUNT)

/* `/` while both operands are integers: the quotient when it is exact (Python gives a float
 * equal to it, and every use of it agrees), TT__EXPR_INEXACT otherwise. */
static inline tt_rc ex_tdiv(int64_t a, int64_t b, int64_t *r)
{
    if (b == 0) return TT_EDIVZERO;
    if (b == -1) {
        if (a == INT64_MIN) return TT_EOVERFLOW;
        *r = -a;
        return TT_OK;
    }
    if (a % b != 0) return TT__EXPR_INEXACT;
    *r = a / b;
    return TT_OK;
}

static inline int64_t ex_cmp(int64_t op, int64_t a, int64_t b)
{
    switch (op) {
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    default: return a >= b;
    }
}

#endif

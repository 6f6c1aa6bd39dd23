/* SPDX-License-Identifier: MIT
 * expr_vm.c - the expression bytecode: stack effects and verification, evaluation
 * (tt_expr_eval) and introspection of compiled expressions.  Compilation is in expr_parse.c;
 * the bytecode is defined in expr_int.h.
 */
#include "expr.h"

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
    [OP_ALIGN] = {1, 2, -1},   [OP_EQ] = {1, 2, -1},      [OP_NE] = {1, 2, -1},
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

tt_rc tt_expr_eval(const tt_expr *e, const int64_t *slots, int64_t *out)
{
#if defined(__GNUC__) && !defined(TT_EXPR_SWITCH)
    static const void *const vm_labels[OP__COUNT] = {
        &&L_OP_END, &&L_OP_K, &&L_OP_LOAD, &&L_OP_NEG, &&L_OP_NOT, &&L_OP_BNOT, &&L_OP_BOOL,
        &&L_OP_ABS, &&L_OP_LOG2, &&L_OP_SIZEOF, &&L_OP_ADD, &&L_OP_SUB, &&L_OP_MUL,
        &&L_OP_FDIV, &&L_OP_MOD, &&L_OP_POW, &&L_OP_SHL, &&L_OP_SHR, &&L_OP_BAND, &&L_OP_BOR,
        &&L_OP_BXOR, &&L_OP_MIN, &&L_OP_MAX, &&L_OP_CEILDIV, &&L_OP_ALIGN, &&L_OP_EQ,
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

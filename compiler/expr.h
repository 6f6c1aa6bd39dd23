/* SPDX-License-Identifier: MIT
 * expr.h - integer expressions of templates and search spaces, compiled once to bytecode.
 *
 * Syntax: Python-compatible on purpose, so that Kernel Tuner / T1 restriction strings import
 * unchanged.  Integer literals (decimal, 0x.., 0b.., 0o..; `True`/`False` are 1/0),
 * identifiers, string literals that name a dtype ("float16": evaluates to its tt_dtype code),
 * `+ - * / // % **`, unary `- + not ! ~`, comparisons `== != < <= > >=` (chainable as in
 * Python: `a < b <= c`), `and or` (also `&& ||`, short-circuit, the value is 0/1),
 * `x if c else y`, parentheses, and the functions min(a,b,...), max(a,b,...), ceildiv(a,b),
 * floordiv(a,b), align_up(a,b), log2(a) (floor; a > 0), sizeof(dtype) (bytes), abs(a).
 * Values are int64.  `//` is floor division and `%` is Python's modulo (sign of the divisor);
 * `/` is Python's true division: an exact quotient is an integer, an inexact one evaluates
 * the expression as Python would, with floats from there on (expr_vm.c), and its result must
 * be an integer value (comparisons and booleans are; `7 / 2 * 2` is 7; `7 / 2` alone is
 * TT_EDOMAIN); `**` needs a non-negative exponent.
 *
 * Evaluation never allocates and never invokes undefined behaviour: overflow gives
 * TT_EOVERFLOW, division or modulo by zero TT_EDIVZERO, log2 of a non-positive value or a
 * negative exponent TT_EDOMAIN.  A compiled expression is immutable: evaluating it from many
 * threads at once is safe.
 *
 * Ownership: tt_expr_compile() returns a new expression; the caller frees it with
 * tt_expr_free() (NULL accepted).
 */
#ifndef TT_EXPR_H
#define TT_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "tt_err.h"

typedef struct tt_expr tt_expr;

/* Additions to the summary above (details, grammar and error messages: docs/expressions.md):
 * the bitwise operators `& | ^ << >>` are accepted too (Python precedence); TT_EDOMAIN is
 * also returned for align_up(a, b) with b <= 0, a shift count < 0 or >= 63, and sizeof() of
 * a value that is not a dtype code.  `!` has the precedence of `not`. */

/* Limits, checked at compile time (TT_EEXPR with a position when exceeded). */
#define TT_EXPR_MAX_LEN 4096    /* source bytes */
#define TT_EXPR_MAX_DEPTH 64    /* nesting of parentheses / operators */
#define TT_EXPR_MAX_STACK 64    /* evaluation stack slots */

/* Name resolution: called for each identifier while compiling.  Returns the slot index
 * (>= 0) that holds the identifier's value at evaluation time, or -1 when the name is
 * unknown (compile then fails with TT_EEXPR "unknown name 'x'" at its position).
 * `name` is not NUL-terminated. */
typedef int (*tt_expr_resolve_fn)(void *ud, const char *name, size_t len);

/* Compile `src` (NUL-terminated).  On success *out is a new expression.  On failure
 * returns TT_EEXPR (or TT_ENOMEM), *out is NULL and err (if not NULL) holds the reason and
 * err->pos the 0-based byte offset of the offending token. */
tt_rc tt_expr_compile(const char *src, tt_expr_resolve_fn resolve, void *ud, tt_expr **out,
                      tt_errinfo *err);

/* Evaluate with `slots` holding the values of the resolved names.  Returns TT_OK and sets
 * *out, or TT_EOVERFLOW / TT_EDIVZERO / TT_EDOMAIN (then *out is untouched). */
tt_rc tt_expr_eval(const tt_expr *e, const int64_t *slots, int64_t *out);

/* Highest slot index the expression reads, or -1 when it reads none (a constant). */
int tt_expr_max_slot(const tt_expr *e);
/* Writes the distinct slot indices it reads (ascending) into out[0..cap) and returns their
 * count (which may exceed cap). */
size_t tt_expr_slots(const tt_expr *e, int *out, size_t cap);
/* 1 and *val set when the expression is a constant (reads no slot and evaluates). */
int tt_expr_const(const tt_expr *e, int64_t *val);
/* The source text it was compiled from (borrowed; lives as long as e). */
const char *tt_expr_source(const tt_expr *e);

void tt_expr_free(tt_expr *e);

#endif

/* SPDX-License-Identifier: MIT
 * dtype.h - element types known to templates, with their sizes.
 * In expressions a dtype is an integer: its tt_dtype code.  Pure, thread-safe.
 */
#ifndef TT_DTYPE_H
#define TT_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/*  X(enum,        name,       bytes) -- codes are stored: append only */
#define TT_DTYPE_TABLE(X)            \
    X(TT_DT_FLOAT16,  "float16",  2) \
    X(TT_DT_BFLOAT16, "bfloat16", 2) \
    X(TT_DT_FLOAT32,  "float32",  4) \
    X(TT_DT_INT8,     "int8",     1) \
    X(TT_DT_UINT8,    "uint8",    1) \
    X(TT_DT_INT16,    "int16",    2) \
    X(TT_DT_INT32,    "int32",    4) \
    X(TT_DT_INT64,    "int64",    8)

typedef enum tt_dtype {
#define TT_X_DT(e, n, b) e,
    TT_DTYPE_TABLE(TT_X_DT)
#undef TT_X_DT
    TT_DT__COUNT
} tt_dtype;

/* Name of a dtype ("?" when out of range). */
const char *tt_dtype_name(int64_t dt);
/* Size in bytes (0 when out of range). */
int tt_dtype_size(int64_t dt);
/* Parse a name ("float16", also the aliases "fp16", "half", "bf16", "fp32", "float")
 * of length len; returns the code or -1. */
int tt_dtype_parse(const char *name, size_t len);

#endif

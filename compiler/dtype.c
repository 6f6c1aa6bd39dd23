/* SPDX-License-Identifier: MIT
 * dtype.c - dtype names and sizes from the table in dtype.h.
 */
#include "dtype.h"

#include <string.h>

static const struct { const char *name; int bytes; } tt_dttab[] = {
#define TT_X_DT(e, n, b) {n, b},
    TT_DTYPE_TABLE(TT_X_DT)
#undef TT_X_DT
};

static const struct { const char *alias; tt_dtype dt; } tt_dtalias[] = {
    {"fp16", TT_DT_FLOAT16}, {"half", TT_DT_FLOAT16}, {"bf16", TT_DT_BFLOAT16},
    {"fp32", TT_DT_FLOAT32}, {"float", TT_DT_FLOAT32},
};

const char *tt_dtype_name(int64_t dt)
{
    return (dt >= 0 && dt < TT_DT__COUNT) ? tt_dttab[dt].name : "?";
}

int tt_dtype_size(int64_t dt)
{
    return (dt >= 0 && dt < TT_DT__COUNT) ? tt_dttab[dt].bytes : 0;
}

int tt_dtype_parse(const char *name, size_t len)
{
    for (int i = 0; i < TT_DT__COUNT; i++)
        if (strlen(tt_dttab[i].name) == len && memcmp(tt_dttab[i].name, name, len) == 0) return i;
    for (size_t i = 0; i < sizeof tt_dtalias / sizeof tt_dtalias[0]; i++)
        if (strlen(tt_dtalias[i].alias) == len && memcmp(tt_dtalias[i].alias, name, len) == 0)
            return (int)tt_dtalias[i].dt;
    return -1;
}

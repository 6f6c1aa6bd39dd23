/* SPDX-License-Identifier: MIT
 * names.c - names of memory scopes, units, copy paths and vector op classes (template.h).
 */
#include <string.h>

#include "template.h"

static const char *const tt_scope_names[TT_SCOPE__COUNT] = {"GM", "L1", "L0A", "L0B", "L0C", "UB"};

const char *tt_scope_name(tt_scope s)
{
    return ((int)s >= 0 && s < TT_SCOPE__COUNT) ? tt_scope_names[s] : "?";
}

int tt_scope_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < TT_SCOPE__COUNT; i++)
        if (strcmp(tt_scope_names[i], name) == 0) return i;
    return -1;
}

static const char *const tt_unit_names[TT_UNIT__COUNT] = {"MTE2", "MTE1", "M",  "V",
                                                          "FIX",  "MTE3", "S"};

const char *tt_unit_name(tt_unit u)
{
    return ((int)u >= 0 && u < TT_UNIT__COUNT) ? tt_unit_names[u] : "?";
}

/* One row per path: name, source scope, destination scope, unit. */
static const struct {
    const char *name;
    tt_scope from, to;
    tt_unit unit;
} tt_paths[TT_PATH__COUNT] = {
    [TT_PATH_GM_L1] = {"GM->L1", TT_SCOPE_GM, TT_SCOPE_L1, TT_UNIT_MTE2},
    [TT_PATH_GM_UB] = {"GM->UB", TT_SCOPE_GM, TT_SCOPE_UB, TT_UNIT_MTE2},
    [TT_PATH_GM_L0A] = {"GM->L0A", TT_SCOPE_GM, TT_SCOPE_L0A, TT_UNIT_MTE2},
    [TT_PATH_GM_L0B] = {"GM->L0B", TT_SCOPE_GM, TT_SCOPE_L0B, TT_UNIT_MTE2},
    [TT_PATH_L1_L0A] = {"L1->L0A", TT_SCOPE_L1, TT_SCOPE_L0A, TT_UNIT_MTE1},
    [TT_PATH_L1_L0B] = {"L1->L0B", TT_SCOPE_L1, TT_SCOPE_L0B, TT_UNIT_MTE1},
    [TT_PATH_L0C_GM] = {"L0C->GM", TT_SCOPE_L0C, TT_SCOPE_GM, TT_UNIT_FIX},
    [TT_PATH_L0C_L1] = {"L0C->L1", TT_SCOPE_L0C, TT_SCOPE_L1, TT_UNIT_FIX},
    [TT_PATH_UB_GM] = {"UB->GM", TT_SCOPE_UB, TT_SCOPE_GM, TT_UNIT_MTE3},
    [TT_PATH_L1_GM] = {"L1->GM", TT_SCOPE_L1, TT_SCOPE_GM, TT_UNIT_MTE3},
    [TT_PATH_UB_UB] = {"UB->UB", TT_SCOPE_UB, TT_SCOPE_UB, TT_UNIT_V},
};

const char *tt_path_name(tt_path p)
{
    return ((int)p >= 0 && p < TT_PATH__COUNT) ? tt_paths[p].name : "?";
}

tt_unit tt_path_unit(tt_path p)
{
    return ((int)p >= 0 && p < TT_PATH__COUNT) ? tt_paths[p].unit : TT_UNIT_S;
}

int tt_path_of(tt_scope from, tt_scope to)
{
    for (int i = 0; i < TT_PATH__COUNT; i++)
        if (tt_paths[i].from == from && tt_paths[i].to == to) return i;
    return -1;
}

static const char *const tt_vclass_names[TT_V__COUNT] = {
    [TT_V_UNARY] = "unary", [TT_V_BINARY] = "binary", [TT_V_EXP] = "exp",
    [TT_V_DIV] = "div",     [TT_V_SQRT] = "sqrt",     [TT_V_MADD] = "madd",
    [TT_V_REDUCE] = "reduce", [TT_V_GATHER] = "gather",
    [TT_V_SCALAR] = "scalar",
};

const char *tt_vclass_name(tt_vclass c)
{
    return ((int)c >= 0 && c < TT_V__COUNT) ? tt_vclass_names[c] : "?";
}

/* Vector op names as TileLang-Ascend / Ascend C spell them, with their class. */
static const struct {
    const char *op;
    tt_vclass cls;
} tt_vops[] = {
    {"adds", TT_V_UNARY},       {"muls", TT_V_UNARY},       {"subs", TT_V_UNARY},
    {"divs", TT_V_UNARY},       {"maxs", TT_V_UNARY},       {"mins", TT_V_UNARY},
    {"abs", TT_V_UNARY},        {"relu", TT_V_UNARY},       {"cast", TT_V_UNARY},
    {"conv", TT_V_UNARY},       {"dup", TT_V_UNARY},        {"copy", TT_V_UNARY},
    {"rec", TT_V_UNARY},        {"reciprocal", TT_V_UNARY}, {"rsqrt", TT_V_UNARY},
    {"fill", TT_V_UNARY},       {"neg", TT_V_UNARY},        {"not", TT_V_UNARY},
    {"scale", TT_V_UNARY},      {"broadcast", TT_V_UNARY},  {"add", TT_V_BINARY},
    {"sub", TT_V_BINARY},       {"mul", TT_V_BINARY},       {"max", TT_V_BINARY},
    {"min", TT_V_BINARY},       {"sel", TT_V_BINARY},       {"select", TT_V_BINARY},
    {"axpy", TT_V_BINARY},      {"cmp", TT_V_BINARY},       {"compare", TT_V_BINARY},
    {"and", TT_V_BINARY},       {"or", TT_V_BINARY},        {"exp", TT_V_EXP},
    {"ln", TT_V_EXP},           {"log", TT_V_EXP},          {"div", TT_V_DIV},
    {"sqrt", TT_V_SQRT},        {"mla", TT_V_MADD},         {"madd", TT_V_MADD},
    {"fma", TT_V_MADD},         {"reduce_sum", TT_V_REDUCE}, {"reduce_max", TT_V_REDUCE},
    {"reduce_min", TT_V_REDUCE}, {"cadd", TT_V_REDUCE},     {"cmax", TT_V_REDUCE},
    {"cmin", TT_V_REDUCE},      {"gather", TT_V_GATHER},    {"scatter", TT_V_GATHER},
};

int tt_vop_class(const char *op)
{
    if (!op) return -1;
    for (size_t i = 0; i < sizeof tt_vops / sizeof tt_vops[0]; i++)
        if (strcmp(tt_vops[i].op, op) == 0) return (int)tt_vops[i].cls;
    for (int c = 0; c < TT_V__COUNT; c++)
        if (strcmp(tt_vclass_names[c], op) == 0) return c;
    return -1;
}

/* SPDX-License-Identifier: MIT
 * test_names.c - names of scopes, units, copy paths and vector op classes; the hardware path
 * table (every ordered pair of scopes) and the unit of each path.
 */
#include <string.h>

#include "suggest.h"
#include "template.h"
#include "tt_test.h"

static void test_scopes(void)
{
    static const char *const names[TT_SCOPE__COUNT] = {"GM", "L1", "L0A", "L0B", "L0C", "UB"};
    for (int s = 0; s < TT_SCOPE__COUNT; s++) {
        CU_ASSERT_STRING_EQUAL(tt_scope_name((tt_scope)s), names[s]);
        CU_ASSERT_EQUAL(tt_scope_parse(names[s]), s);
    }
    static const char *const bad[] = {"ub", "L2", "", "L0", "GM ", "HBM"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CU_ASSERT_EQUAL(tt_scope_parse(bad[i]), -1);
    CU_ASSERT_EQUAL(tt_scope_parse(NULL), -1);
    CU_ASSERT_STRING_EQUAL(tt_scope_name((tt_scope)99), "?");
}

static void test_units(void)
{
    static const char *const names[TT_UNIT__COUNT] = {"MTE2", "MTE1", "M", "V", "FIX", "MTE3", "S"};
    for (int u = 0; u < TT_UNIT__COUNT; u++) CU_ASSERT_STRING_EQUAL(tt_unit_name((tt_unit)u), names[u]);
    CU_ASSERT_STRING_EQUAL(tt_unit_name((tt_unit)-1), "?");
}

/* Expected path table (HARDWARE.md, "Pipes"): from, to, path name, unit; every other ordered
 * pair of scopes has no path. */
static const struct {
    tt_scope from, to;
    const char *name;
    tt_unit unit;
} paths[] = {
    {TT_SCOPE_GM, TT_SCOPE_L1, "GM->L1", TT_UNIT_MTE2},
    {TT_SCOPE_GM, TT_SCOPE_UB, "GM->UB", TT_UNIT_MTE2},
    {TT_SCOPE_GM, TT_SCOPE_L0A, "GM->L0A", TT_UNIT_MTE2},
    {TT_SCOPE_GM, TT_SCOPE_L0B, "GM->L0B", TT_UNIT_MTE2},
    {TT_SCOPE_L1, TT_SCOPE_L0A, "L1->L0A", TT_UNIT_MTE1},
    {TT_SCOPE_L1, TT_SCOPE_L0B, "L1->L0B", TT_UNIT_MTE1},
    {TT_SCOPE_L0C, TT_SCOPE_GM, "L0C->GM", TT_UNIT_FIX},
    {TT_SCOPE_L0C, TT_SCOPE_L1, "L0C->L1", TT_UNIT_FIX},
    {TT_SCOPE_UB, TT_SCOPE_GM, "UB->GM", TT_UNIT_MTE3},
    {TT_SCOPE_L1, TT_SCOPE_GM, "L1->GM", TT_UNIT_MTE3},
    {TT_SCOPE_UB, TT_SCOPE_UB, "UB->UB", TT_UNIT_V},
};

static void test_paths(void)
{
    size_t npaths = sizeof paths / sizeof paths[0];
    CU_ASSERT_EQUAL(npaths, TT_PATH__COUNT);
    size_t found = 0;
    for (int a = 0; a < TT_SCOPE__COUNT; a++)
        for (int b = 0; b < TT_SCOPE__COUNT; b++) {
            int p = tt_path_of((tt_scope)a, (tt_scope)b);
            size_t i = 0;
            while (i < npaths && !(paths[i].from == (tt_scope)a && paths[i].to == (tt_scope)b)) i++;
            if (i == npaths) {
                CU_ASSERT_EQUAL(p, -1);
                continue;
            }
            found++;
            CU_ASSERT_FATAL(p >= 0 && p < TT_PATH__COUNT);
            CU_ASSERT_STRING_EQUAL(tt_path_name((tt_path)p), paths[i].name);
            CU_ASSERT_EQUAL(tt_path_unit((tt_path)p), paths[i].unit);
        }
    CU_ASSERT_EQUAL(found, npaths);
    /* the enum order is the documented one */
    CU_ASSERT_EQUAL(tt_path_of(TT_SCOPE_GM, TT_SCOPE_L1), TT_PATH_GM_L1);
    CU_ASSERT_EQUAL(tt_path_of(TT_SCOPE_UB, TT_SCOPE_UB), TT_PATH_UB_UB);
    CU_ASSERT_EQUAL(tt_path_of(TT_SCOPE_L0C, TT_SCOPE_L1), TT_PATH_L0C_L1);
    CU_ASSERT_STRING_EQUAL(tt_path_name((tt_path)TT_PATH__COUNT), "?");
}

static void test_vops(void)
{
    static const struct {
        const char *op;
        int cls;
    } cases[] = {
        {"exp", TT_V_EXP},         {"ln", TT_V_EXP},          {"add", TT_V_BINARY},
        {"sub", TT_V_BINARY},      {"mul", TT_V_BINARY},      {"max", TT_V_BINARY},
        {"sel", TT_V_BINARY},      {"cmp", TT_V_BINARY},      {"axpy", TT_V_BINARY},
        {"adds", TT_V_UNARY},      {"muls", TT_V_UNARY},      {"cast", TT_V_UNARY},
        {"relu", TT_V_UNARY},      {"rsqrt", TT_V_UNARY},     {"dup", TT_V_UNARY},
        {"fill", TT_V_UNARY},      {"copy", TT_V_UNARY},      {"div", TT_V_DIV},
        {"sqrt", TT_V_SQRT},       {"madd", TT_V_MADD},       {"mla", TT_V_MADD},
        {"reduce_sum", TT_V_REDUCE}, {"reduce_max", TT_V_REDUCE}, {"cadd", TT_V_REDUCE},
        {"cmax", TT_V_REDUCE},     {"gather", TT_V_GATHER},   {"unary", TT_V_UNARY},
        {"binary", TT_V_BINARY},   {"reduce", TT_V_REDUCE},   {"scalar", TT_V_SCALAR},   {"expo", -1},
        {"", -1},                  {"EXP", -1},               {"reduce_", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CU_ASSERT_EQUAL(tt_vop_class(cases[i].op), cases[i].cls);
    CU_ASSERT_EQUAL(tt_vop_class(NULL), -1);
    /* every class name parses back to its class */
    for (int c = 0; c < TT_V__COUNT; c++) {
        CU_ASSERT_STRING_NOT_EQUAL(tt_vclass_name((tt_vclass)c), "?");
        CU_ASSERT_EQUAL(tt_vop_class(tt_vclass_name((tt_vclass)c)), c);
    }
    CU_ASSERT_STRING_EQUAL(tt_vclass_name((tt_vclass)TT_V__COUNT), "?");
}

/* "did you mean": word -> the suggestion (NULL: none) among a fixed list of names */
static void test_suggest(void)
{
    static const char *const names[] = {"workers", "worker_name", "datasets_dir", "db",
                                        "listen", "log_level", "simulate", "serve", "tune"};
    static const struct {
        const char *word, *want;
    } cases[] = {
        {"worker", "workers"},       /* prefix of two names: the nearer */
        {"datasets", "datasets_dir"},/* the one name it starts */
        {"dataset_dir", "datasets_dir"},
        {"lsiten", "listen"},        /* a swap of neighbours is one edit */
        {"simlate", "simulate"},
        {"serv", "serve"},
        {"tnue", "tune"},
        {"tune", NULL},              /* a known name is not suggested to itself */
        {"db", NULL},
        {"d", NULL},                 /* too short to guess */
        {"dx", NULL},
        {"zzzzzz", NULL},
        {"log", "log_level"},
        {"", NULL},
    };
    size_t n = sizeof names / sizeof names[0];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = tt_suggest(cases[i].word, strlen(cases[i].word), names, n);
        if (cases[i].want) {
            CU_ASSERT_PTR_NOT_NULL(got);
            if (got) CU_ASSERT_STRING_EQUAL(got, cases[i].want);
        } else {
            CU_ASSERT_PTR_NULL(got);
        }
    }
    /* the word need not be NUL-terminated; NULLs and over-long words give NULL */
    CU_ASSERT_STRING_EQUAL(tt_suggest("tnue=5", 4, names, n), "tune");
    CU_ASSERT_PTR_NULL(tt_suggest(NULL, 3, names, n));
    CU_ASSERT_PTR_NULL(tt_suggest("tune", 4, NULL, 0));
    char longw[200];
    memset(longw, 'a', sizeof longw);
    CU_ASSERT_PTR_NULL(tt_suggest(longw, sizeof longw, names, n));
    /* over a table of records whose first member is the name, ended by a NULL name */
    static const struct { const char *name; int x; } recs[] = {{"target", 1}, {"budget", 2},
                                                              {NULL, 0}, {"hidden", 3}};
    CU_ASSERT_STRING_EQUAL(tt_suggest_in("budjet", 6, recs, sizeof recs[0], 4), "budget");
    CU_ASSERT_PTR_NULL(tt_suggest_in("hiden", 5, recs, sizeof recs[0], 4));
    /* the phrase a message appends: API style, command-line style, nothing */
    char ph[64];
    CU_ASSERT_STRING_EQUAL(tt_suggest_phrase(ph, sizeof ph, "budget", NULL),
                           " (did you mean \"budget\"?)");
    CU_ASSERT_STRING_EQUAL(tt_suggest_phrase(ph, sizeof ph, "budget", "--"),
                           "; did you mean --budget?");
    CU_ASSERT_STRING_EQUAL(tt_suggest_phrase(ph, sizeof ph, "tune", ""), "; did you mean tune?");
    CU_ASSERT_STRING_EQUAL(tt_suggest_phrase(ph, sizeof ph, NULL, "--"), "");
}

static const tt_test_case names_cases[] = {
    {"scopes", test_scopes}, {"units", test_units}, {"paths", test_paths}, {"vops", test_vops},
    {"suggest", test_suggest}, {NULL, NULL}};
static const tt_test_suite suites[] = {{"names", NULL, NULL, names_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

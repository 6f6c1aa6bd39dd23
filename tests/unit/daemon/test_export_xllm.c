/* SPDX-License-Identifier: MIT
 * test_export_xllm.c - the xLLM export rules that the integration tests cannot reach with the
 * built-in templates: dtype spelling (bfloat16 -> bf16 / kBF16), int32 overflow, dtypes xLLM
 * has no TilelangDType for, bad variant keys, names that collide with xLLM's reserved keys and a
 * template without inputs (an empty DISPATCH_SCHEMA), inputs whose field wrapper structs would
 * share a name (M and m, a_b and aB);
 * the C / C++ words no generated member may take (tt_xllm_c_reserved).
 */
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "export_xllm.h"
#include "tt_test.h"

static tt_template *parse(const char *input0)
{
    char doc[1024];
    snprintf(doc, sizeof doc,
             "{\"tiletune\": 1, \"name\": \"row_op\", \"version\": \"1\", \"inputs\": {"
             "\"%s\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000000},"
             "\"out_dtype\": {\"type\": \"dtype\", \"values\": [\"float16\", \"bfloat16\", \"int64\"]}},"
             "\"params\": {\"block\": [16, 32]}}", input0);
    tt_template *t = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, &e);
    if (rc) fprintf(stderr, "parse: %s %s\n", e.path, e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    return t;
}

static tt_rc both(const tt_template *t, int64_t rows, int64_t dt, const char *vk, char **py,
                  char **inc, tt_errinfo *e)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    slots[0] = rows;
    slots[1] = dt;
    slots[tt_tmpl_param_slot(t, 0)] = 32;
    tt_xllm_row r = {slots, vk, 12.5, 0.25, "cmd:ascend@0123abcd", 7, 3};
    tt_errinfo_clear(e);
    tt_rc a = tt_xllm_specializations(t, "Ascend910B2", &r, 1, py, e);
    tt_rc b = tt_xllm_registry_inc(t, "Ascend910B2", &r, 1, inc, e);
    CU_ASSERT_EQUAL(a, b);
    return a;
}

static void test_spelling(void)
{
    tt_template *t = parse("rows");
    char *py = NULL, *inc = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(both(t, 4096, TT_DT_BFLOAT16, "row_op_4096_bf16", &py, &inc, &e), TT_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "    DispatchField(\"rows\", \"int32\"),\n"
                                      "    DispatchField(\"out_dtype\", \"dtype\"),\n]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "    # median 12.5 us, spread 0.25 us, measured by "
                                      "cmd:ascend@0123abcd (trial 7, job 3)\n"
                                      "    {\"variant_key\": \"row_op_4096_bf16\", \"rows\": 4096, "
                                      "\"out_dtype\": \"bf16\", \"block\": 32},\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(inc, "struct RowOpSpecialization {\n  int32_t rows;\n"
                                       "  TilelangDType out_dtype;\n};"));
    CU_ASSERT_PTR_NOT_NULL(strstr(inc, "struct RowOpOutDType {\n  TilelangDType value;\n};"));
    CU_ASSERT_PTR_NOT_NULL(strstr(inc, "make_row_op_specialization(RowOpRows{4096}, "
                                       "RowOpOutDType{TilelangDType::kBF16}), \"row_op_4096_bf16\", "
                                       "&row_op__row_op_4096_bf16_call}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(inc, "using RowOpKernelFn = void (*)(aclrtStream stream);"));
    free(py);
    free(inc);
    /* float16 keeps its name (TilelangDType::kFloat16) */
    CU_ASSERT_EQUAL_FATAL(both(t, 1, TT_DT_FLOAT16, "k", &py, &inc, &e), TT_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(py, "\"out_dtype\": \"float16\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(inc, "TilelangDType::kFloat16"));
    free(py);
    free(inc);
    tt_tmpl_free(t);
}

static void test_refusals(void)
{
    tt_template *t = parse("rows");
    char *py = (char *)"x", *inc = (char *)"x";
    tt_errinfo e;
    CU_ASSERT_EQUAL(both(t, INT64_C(3000000000), TT_DT_FLOAT16, "k", &py, &inc, &e), TT_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "rows=3000000000"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "int32"));
    CU_ASSERT(py == NULL && inc == NULL);
    CU_ASSERT_EQUAL(both(t, INT64_C(2147483647), TT_DT_FLOAT16, "k", &py, &inc, &e), TT_OK);
    free(py);
    free(inc);
    CU_ASSERT_EQUAL(both(t, 8, TT_DT_INT64, "k", &py, &inc, &e), TT_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "out_dtype=int64"));
    CU_ASSERT_EQUAL(both(t, 8, TT_DT_FLOAT16, "bad-key", &py, &inc, &e), TT_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "bad-key"));
    tt_tmpl_free(t);
    /* an input xLLM would take for its own `target` key */
    t = parse("target");
    CU_ASSERT_EQUAL(both(t, 8, TT_DT_FLOAT16, "k", &py, &inc, &e), TT_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "\"target\""));
    tt_tmpl_free(t);
    /* no inputs: xLLM refuses an empty DISPATCH_SCHEMA (both formats) */
    static const char doc[] = "{\"tiletune\": 1, \"name\": \"fixed\", \"params\": "
                              "{\"block\": [16, 32]}}";
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, &e), TT_OK);
    int64_t slots[TT_MAX_SLOTS] = {0};
    slots[tt_tmpl_param_slot(t, 0)] = 16;
    tt_xllm_row r = {slots, "fixed", 3.0, 0, "sim", 1, 1};
    CU_ASSERT_EQUAL(tt_xllm_specializations(t, "Ascend910B2", &r, 1, &py, &e), TT_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "no inputs"));
    CU_ASSERT_EQUAL(tt_xllm_registry_inc(t, "Ascend910B2", &r, 1, &inc, &e), TT_EUNSUPPORTED);
    CU_ASSERT_STRING_EQUAL(e.path, "format");
    CU_ASSERT(py == NULL && inc == NULL);
    tt_tmpl_free(t);
}

/* The words generated C (cxx 0) and C++ (cxx 1) cannot use as a member or parameter name. */
static void test_c_reserved(void)
{
    static const struct {
        const char *name;
        int c, cxx;
    } words[] = {
        {"int", 1, 1}, {"restrict", 1, 0}, {"new", 0, 1}, {"class", 0, 1}, {"NULL", 1, 1},
        {"INT8_MAX", 1, 1}, {"UINT_FAST16_MIN", 1, 1}, {"SIZE_MAX", 1, 1}, {"__x", 1, 1},
        {"_Bool", 1, 1}, {"_x", 0, 0}, {"i", 0, 0}, {"e", 0, 0}, {"stride", 0, 0},
        {"INT8", 0, 0}, {"MAX_M", 0, 0}, {"block_MAX", 0, 0}, {"integer", 0, 0},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (tt_xllm_c_reserved(words[i].name, 0) != words[i].c ||
            tt_xllm_c_reserved(words[i].name, 1) != words[i].cxx)
            fprintf(stderr, "c_reserved %s\n", words[i].name);
        CU_ASSERT_EQUAL(tt_xllm_c_reserved(words[i].name, 0), words[i].c);
        CU_ASSERT_EQUAL(tt_xllm_c_reserved(words[i].name, 1), words[i].cxx);
    }
    /* registry-inc refuses an input that is a C++ keyword, or a type its specialization
     * struct spells (a member int32_t or TilelangDType changes that name's meaning in the
     * struct: g++ "declaration ... changes meaning of 'int32_t'"), naming it */
    static const char *const refused[] = {"new", "int32_t", "TilelangDType"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        tt_template *t = parse(refused[i]);
        char *py = NULL, *inc = NULL;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        int64_t slots[TT_MAX_SLOTS] = {8, TT_DT_FLOAT16};
        tt_xllm_row r = {slots, "k", 12.5, 0.25, "sim", 7, 3};
        CU_ASSERT_EQUAL(tt_xllm_specializations(t, "Ascend910B2", &r, 1, &py, &e), TT_OK);
        CU_ASSERT_EQUAL(tt_xllm_registry_inc(t, "Ascend910B2", &r, 1, &inc, &e), TT_EUNSUPPORTED);
        if (!inc) CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, refused[i]));
        CU_ASSERT_STRING_EQUAL(e.path, "format");
        CU_ASSERT_PTR_NULL(inc);
        free(py);
        free(inc);
        tt_tmpl_free(t);
    }
}

/* One field wrapper struct <Family><Suffix> per input (xLLM's PascalCase of the name): an
 * input whose suffix is out_dtype's (OutDType) or names the registry's own KernelFn type is
 * refused by both formats, naming it; other names pass. */
static void test_wrapper_names(void)
{
    static const struct {
        const char *input0, *named;   /* named NULL: the export goes through */
    } rows[] = {
        {"Out_dtype", "\"Out_dtype\" and \"out_dtype\""},
        {"outDType", "\"outDType\" and \"out_dtype\""},
        {"out__dtype", "<Family>OutDType"},
        {"out_d_type", "<Family>OutDType"},
        {"kernel_fn", "\"kernel_fn\""},
        {"Specialization", "<Family>Specialization"},
        {"outdtype", NULL}, {"kernel", NULL}, {"rows", NULL}, {"out_dtype2", NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        tt_template *t = parse(rows[i].input0);
        char *py = NULL, *inc = NULL;
        tt_errinfo e;
        tt_rc rc = both(t, 8, TT_DT_FLOAT16, "k", &py, &inc, &e);
        if ((rc == TT_OK) != !rows[i].named) fprintf(stderr, "wrapper_names %s\n", rows[i].input0);
        CU_ASSERT_EQUAL(rc, rows[i].named ? TT_EUNSUPPORTED : TT_OK);
        if (rows[i].named) {
            CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, rows[i].named));
            CU_ASSERT_STRING_EQUAL(e.path, "format");
            CU_ASSERT(py == NULL && inc == NULL);
        }
        free(py);
        free(inc);
        tt_tmpl_free(t);
    }
}

static const tt_test_case cases[] = {
    {"spelling", test_spelling},
    {"refusals", test_refusals},
    {"c_reserved", test_c_reserved},
    {"wrapper_names", test_wrapper_names},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"export_xllm", NULL, NULL, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

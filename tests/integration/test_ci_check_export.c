/* SPDX-License-Identifier: MIT
 * test_ci_check_export.c - POST /v1/check and GET /v1/export called directly on a hand-built
 * tt_server with a temporary SQLite store (tests/helpers/ci_fixture): verdicts (pass,
 * regressed, improved, missing, error), the spread-aware tolerance, pinned baselines,
 * re-measurement, export formats (the C header compiles and its lookup works, the
 * SPECIALIZATIONS literal parses in Python, the registry-inc compiles, T4 is valid), and the
 * error answers of each route.  The export suite reads the trials the check suite recorded
 * (one server for both: opened by the first suite, closed by the last).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ci_fixture.h"
#include "dataset.h"
#include "jsonutil.h"
#include "pg_cluster.h"
#include "tt_test.h"

#define PROBLEM "M=1024,N=1024,K=1024,dtype=float16"
#define PKEY "M=1024,N=1024,K=1024,dtype=float16,out_dtype=float16"

/* Record a trial of gemm/a2 for problem kv with a config from the model's top-1 (so that it
 * is feasible and the simulator can re-measure it).  Returns the sim time of that config. */
static double record_best(const char *kv, const char *fp, double median, double spread,
                          int64_t job, int64_t seq, int top_index)
{
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    tt_errinfo err;
    tt_errinfo_clear(&err);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(tt_cfx_gemm, kv, slots, &err), TT_OK);
    json_t *a = tt__model_predict(tt_cfx_gemm, tt_cfx_a2, slots, NULL, top_index + 1, 1e7, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    const json_t *cfg = json_object_get(json_array_get(json_object_get(a, "results"),
                                                       (size_t)top_index), "config");
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_from_json(tt_cfx_gemm, cfg, slots, &err), TT_OK);
    json_decref(a);
    json_t *sim = tt__sim_run(tt_cfx_gemm, tt_cfx_a2, slots, -1, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sim);
    double sim_us = json_number_value(json_object_get(sim, "time_us"));
    json_decref(sim);
    tt_cfx_record(tt_cfx_gemm, slots, fp, median, spread, job, seq);
    return sim_us;
}

/* One check of a single entry with samples (JSON array text); returns the verdict. */
static const char *check_one(const char *problem, const char *samples, double tol,
                             const char *baseline, char *overall, size_t cap)
{
    static char verdict[32];
    char body[1024];
    snprintf(body, sizeof body,
             "{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"%s\","
             "\"samples_us\":%s}],\"tolerance\":%g,\"baseline\":\"%s\"}",
             problem, samples, tol, baseline);
    tt_resp r;
    tt_cfx_call(tt_api_check, "POST", body, NULL, &r);
    CU_ASSERT_EQUAL(r.status, 200);
    const json_t *e = json_array_get(json_object_get(r.json, "entries"), 0);
    snprintf(verdict, sizeof verdict, "%s",
             json_string_value(json_object_get(e, "verdict")) ? json_string_value(json_object_get(e, "verdict")) : "?");
    if (overall) snprintf(overall, cap, "%s", json_string_value(json_object_get(r.json, "verdict")));
    tt_cfx_resp_clear(&r);
    return verdict;
}

static void test_verdicts(void)
{
    record_best("M=1024,N=1024,K=1024,dtype=float16", "sim", 100.0, 0.0, 0, 0, 0);
    record_best("M=2048,N=2048,K=2048,dtype=float16", "sim", 100.0, 5.0, 0, 0, 0);
    static const struct {
        const char *problem, *samples;
        double tol;
        const char *want;
    } cases[] = {
        {PROBLEM, "[100]", 0.05, "pass"},
        {PROBLEM, "[104.9]", 0.05, "pass"},
        {PROBLEM, "[105.5]", 0.05, "regressed"},
        {PROBLEM, "[105.5]", 0.10, "pass"},
        {PROBLEM, "[94.5]", 0.05, "improved"},
        {PROBLEM, "[96]", 0.05, "pass"},
        /* the median of the samples counts, not the mean */
        {PROBLEM, "[100, 101, 99, 500, 100]", 0.05, "pass"},
        /* new spread: IQR 20 -> slack 40: 120 <= 105 + 40 */
        {PROBLEM, "[100, 110, 120, 130, 140]", 0.05, "pass"},
        /* base spread 5 -> slack 10: limit 115 */
        {"M=2048,N=2048,K=2048,dtype=float16", "[114.5]", 0.05, "pass"},
        {"M=2048,N=2048,K=2048,dtype=float16", "[115.5]", 0.05, "regressed"},
        {"M=2048,N=2048,K=2048,dtype=float16", "[84]", 0.05, "improved"},
        {"M=4096,N=4096,K=4096,dtype=float16", "[1]", 0.05, "missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char overall[32] = "";
        const char *v = check_one(cases[i].problem, cases[i].samples, cases[i].tol, "best",
                                  overall, sizeof overall);
        if (strcmp(v, cases[i].want))
            fprintf(stderr, "case %zu: %s %s -> %s, want %s\n", i, cases[i].problem,
                    cases[i].samples, v, cases[i].want);
        CU_ASSERT_STRING_EQUAL(v, cases[i].want);
        CU_ASSERT_STRING_EQUAL(overall, !strcmp(cases[i].want, "regressed") ? "regressed" : "pass");
    }
}

static void test_check_numbers_and_missing(void)
{
    tt_resp r;
    tt_cfx_call(tt_api_check, "POST",
         "{\"entries\":[{\"template\":\"gemm\",\"target\":\"Ascend910B2\",\"problem\":{\"M\":1024,"
         "\"N\":1024,\"K\":1024},\"median_us\":110,\"spread_us\":1},{\"template\":\"gemm\","
         "\"target\":\"a2\",\"problem\":\"M=8,N=8,K=8\",\"samples_us\":[3]}]}",
         NULL, &r);
    CU_ASSERT_EQUAL(r.status, 200);
    const json_t *e0 = json_array_get(json_object_get(r.json, "entries"), 0);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e0, "verdict")), "regressed");
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e0, "base_median_us")), 100, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e0, "new_median_us")), 110, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e0, "delta_pct")), 10, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e0, "limit_us")), 107, 1e-9);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e0, "problem_key")), PKEY);
    CU_ASSERT_TRUE(json_is_object(json_object_get(e0, "config")));
    const json_t *cnt = json_object_get(r.json, "counts");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(cnt, "regressed")), 1);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(cnt, "missing")), 1);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "verdict")), "regressed");
    tt_cfx_resp_clear(&r);
    /* missing alone passes, unless fail_on_missing */
#define MISSING_BODY(extra) "{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\"," \
    "\"problem\":\"M=8,N=8,K=8\",\"samples_us\":[3]}]" extra "}"
    char body[512];
    snprintf(body, sizeof body, "%s", MISSING_BODY(""));
    tt_cfx_call(tt_api_check, "POST", body, NULL, &r);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "verdict")), "pass");
    tt_cfx_resp_clear(&r);
    snprintf(body, sizeof body, "%s", MISSING_BODY(",\"fail_on_missing\":true"));
    tt_cfx_call(tt_api_check, "POST", body, NULL, &r);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "verdict")), "regressed");
    tt_cfx_resp_clear(&r);
}

static void test_pinned_baseline(void)
{
    const char *p3 = "M=512,N=512,K=512,dtype=float16";
    record_best(p3, "sim", 200.0, 0.0, 0, 0, 0);
    tt_resp r;
    tt_cfx_call(tt_api_check, "POST",
         "{\"pin\":\"release-1\",\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\","
         "\"problem\":\"M=512,N=512,K=512,dtype=float16\"}]}", NULL, &r);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r.json, "pinned")), 1);
    tt_cfx_resp_clear(&r);
    /* a later tune finds a faster config: best moves, the pinned baseline does not */
    record_best(p3, "sim", 150.0, 0.0, 0, 0, 1);
    CU_ASSERT_STRING_EQUAL(check_one(p3, "[200]", 0.05, "best", NULL, 0), "regressed");
    CU_ASSERT_STRING_EQUAL(check_one(p3, "[200]", 0.05, "release-1", NULL, 0), "pass");
    CU_ASSERT_STRING_EQUAL(check_one(p3, "[150]", 0.05, "release-1", NULL, 0), "improved");
    /* an unknown baseline name: missing; pinning nothing: 404 */
    CU_ASSERT_STRING_EQUAL(check_one(p3, "[200]", 0.05, "no-such", NULL, 0), "missing");
    /* the answer says whether the name has any pinned row, so a misspelt one is told apart
     * from a shape not pinned yet: "best" has no such member */
    static const struct { const char *base; int want; } pins[] = {
        {"release-1", 1}, {"no-such", 0}, {"release-", 0}, {"best", -1}};
    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
        char body[512];
        snprintf(body, sizeof body, "{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\","
                 "\"problem\":\"M=64,N=64,K=64\",\"samples_us\":[1]}],\"baseline\":\"%s\"}",
                 pins[i].base);
        tt_cfx_call(tt_api_check, "POST", body, NULL, &r);
        CU_ASSERT_EQUAL(r.status, 200);
        const json_t *bp = json_object_get(r.json, "baseline_pinned");
        CU_ASSERT_EQUAL(bp ? json_is_true(bp) : -1, pins[i].want);
        if ((bp ? json_is_true(bp) : -1) != pins[i].want) fprintf(stderr, "pin %s\n", pins[i].base);
        tt_cfx_resp_clear(&r);
    }
    tt_cfx_call(tt_api_check, "POST",
         "{\"pin\":\"x\",\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\","
         "\"problem\":\"M=3,N=3,K=3\"}]}", NULL, &r);
    CU_ASSERT_EQUAL(r.status, 404);
    tt_cfx_resp_clear(&r);
    tt_cfx_call(tt_api_check, "POST", "{\"pin\":\"best\",\"entries\":[{}]}", NULL, &r);
    CU_ASSERT_EQUAL(r.status, 400);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), "pin");
    tt_cfx_resp_clear(&r);
}

static void test_remeasure(void)
{
    /* the stored median equals the simulator's time: pass; half of it: regressed */
    const char *p = "M=256,N=256,K=256,dtype=float16", *q = "M=384,N=384,K=384,dtype=float16";
    double sim_us = record_best(p, "sim", 1.0, 0.0, 0, 0, 0);
    CU_ASSERT(sim_us > 0);
    tt_resp r;
    /* re-record with the right time: the first record is kept (same key), so use another shape */
    double sim2 = record_best(q, "sim", 1.0, 0.0, 0, 0, 0);
    (void)sim2;
    char body[512];
    snprintf(body, sizeof body,
             "{\"remeasure\":true,\"backend\":\"sim\",\"entries\":[{\"template\":\"gemm\","
             "\"target\":\"a2\",\"problem\":\"%s\"},{\"template\":\"gemm\",\"target\":\"a2\","
             "\"problem\":\"M=4,N=4,K=4\"}]}", p);
    tt_cfx_call(tt_api_check, "POST", body, NULL, &r);
    CU_ASSERT_EQUAL(r.status, 200);
    const json_t *e0 = json_array_get(json_object_get(r.json, "entries"), 0);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e0, "verdict")), "regressed");
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e0, "new_median_us")), sim_us,
                           sim_us * 1e-6);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e0, "measured_by")), "sim");
    const json_t *e1 = json_array_get(json_object_get(r.json, "entries"), 1);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e1, "verdict")), "missing");
    tt_cfx_resp_clear(&r);
    /* a baseline measured at the simulator's own time passes on re-measurement */
    const char *p5 = "M=640,N=640,K=640,dtype=float16";
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    double t5 = record_best(p5, "model", 1.0, 0.0, 0, 0, 0);   /* probe the time */
    record_best(p5, "sim", t5, 0.0, 0, 0, 0);
    snprintf(body, sizeof body,
             "{\"remeasure\":true,\"backend\":\"sim\",\"entries\":[{\"template\":\"gemm\","
             "\"target\":\"a2\",\"problem\":\"%s\"}]}", p5);
    tt_cfx_call(tt_api_check, "POST", body, NULL, &r);
    e0 = json_array_get(json_object_get(r.json, "entries"), 0);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e0, "verdict")), "pass");
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "verdict")), "pass");
    tt_cfx_resp_clear(&r);
}

/* A template without inputs (a Kernel Tuner T1 search space) has one problem: an entry names
 * it with no "problem", {} or "", for samples and for re-measurement alike. */
static void test_check_no_inputs(void)
{
    static const char *const t1 =
        "{\"General\": {\"BenchmarkName\": \"vadd\", \"OutputFormat\": \"JSON\"}, "
        "\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"block\", \"Type\": \"int\", "
        "\"Values\": \"[64, 128, 256]\", \"Default\": 64}, {\"Name\": \"unroll\", \"Type\": "
        "\"int\", \"Values\": \"[1, 2]\", \"Default\": 1}], \"Conditions\": []}}";
    static const char *const kt =
        "{\"device_name\": \"Ascend910B2\", \"kernel_name\": \"vadd\", \"problem_size\": [1048576], "
        "\"tune_params_keys\": [\"block\", \"unroll\"], \"tune_params\": {\"block\": [64, 128, 256], "
        "\"unroll\": [1, 2]}, \"objective\": \"time\", \"cache\": {\"64,1\": {\"block\": 64, "
        "\"unroll\": 1, \"time\": 0.021, \"times\": [0.021, 0.022, 0.021]}, \"256,2\": {\"block\": "
        "256, \"unroll\": 2, \"time\": 0.015, \"times\": [0.015, 0.016, 0.015]}}}";
    tt_resp r;
    tt_cfx_call(tt_api_import, "POST", t1,
                json_pack("{s:s, s:s}", "format", "t1", "template", "vadd"), &r);
    CU_ASSERT_EQUAL_FATAL(r.status, 201);
    tt_cfx_resp_clear(&r);
    tt_cfx_call(tt_api_import, "POST", kt, json_pack("{s:s, s:s, s:s}", "format", "kt-cache",
                                                     "template", "vadd", "target", "a2"), &r);
    CU_ASSERT_EQUAL_FATAL(r.status, 201);
    tt_cfx_resp_clear(&r);
    static const char *const problems[] = {"", ",\"problem\":{}", ",\"problem\":\"\""};
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; i++) {
        char body[512];
        snprintf(body, sizeof body, "{\"entries\":[{\"template\":\"vadd\",\"target\":\"a2\"%s,"
                 "\"samples_us\":[15]},{\"template\":\"vadd\",\"target\":\"a2\"%s,"
                 "\"samples_us\":[40]}]}", problems[i], problems[i]);
        tt_cfx_call(tt_api_check, "POST", body, NULL, &r);
        if (r.status != 200)
            fprintf(stderr, "no-input case %zu: %d %s %s\n", i, r.status, tt_cfx_err_code(&r),
                    tt_cfx_err_path(&r));
        CU_ASSERT_EQUAL(r.status, 200);
        const json_t *e0 = json_array_get(json_object_get(r.json, "entries"), 0),
                     *e1 = json_array_get(json_object_get(r.json, "entries"), 1);
        CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e0, "verdict")), "pass");
        CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e1, "verdict")), "regressed");
        CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e0, "problem_key")), "");
        CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e0, "base_median_us")), 15, 1e-6);
        tt_cfx_resp_clear(&r);
    }
    /* the QA request: re-measurement is refused for the backend (vadd has no kernel program
     * for sim), never for the absent problem */
    tt_cfx_call(tt_api_check, "POST", "{\"entries\":[{\"template\":\"vadd\",\"target\":\"a2\"}],"
                "\"remeasure\":true}", NULL, &r);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), "entries[0].backend");
    tt_cfx_resp_clear(&r);
    /* a problem that names an input vadd does not have */
    tt_cfx_call(tt_api_check, "POST", "{\"entries\":[{\"template\":\"vadd\",\"target\":\"a2\","
                "\"problem\":{\"M\":1},\"samples_us\":[1]}]}", NULL, &r);
    CU_ASSERT_EQUAL(r.status, 422);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(&r), "invalid_problem");
    tt_cfx_resp_clear(&r);
}

static void test_check_errors(void)
{
    static const struct {
        const char *body;
        int status;
        const char *code, *path;
    } cases[] = {
        {"[]", 400, "invalid_argument", ""},
        {"{}", 400, "invalid_argument", "entries"},
        {"{\"entries\":[]}", 400, "invalid_argument", "entries"},
        {"{\"entries\":[1]}", 400, "invalid_argument", "entries[0]"},
        {"{\"entries\":[{}],\"bogus\":1}", 400, "invalid_argument", "bogus"},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"" PROBLEM "\"}]}",
         400, "invalid_argument", "entries[0].samples_us"},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"zz\",\"problem\":\"" PROBLEM
         "\",\"samples_us\":[1]}]}", 422, "invalid_target", "entries[0].target"},
        {"{\"entries\":[{\"template\":\"nope\",\"target\":\"a2\",\"problem\":\"" PROBLEM
         "\",\"samples_us\":[1]}]}", 404, "not_found", "entries[0].template"},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"M=1\","
         "\"samples_us\":[1]}]}", 422, "invalid_problem", NULL},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"" PROBLEM
         "\",\"samples_us\":[-1]}]}", 400, "invalid_argument", "entries[0].samples_us"},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"" PROBLEM
         "\",\"samples_us\":[1]}],\"tolerance\":-1}", 400, "invalid_argument", "tolerance"},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"" PROBLEM
         "\",\"samples_us\":[1]}],\"remeasure\":1}", 400, "invalid_argument", "remeasure"},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"" PROBLEM
         "\",\"samples_us\":[1]}],\"backend\":\"warp\"}", 400, "invalid_argument", NULL},
        /* both forms of the new latency: one would be ignored */
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"" PROBLEM
         "\",\"samples_us\":[1],\"median_us\":2}]}", 400, "invalid_argument",
         "entries[0].median_us"},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"" PROBLEM
         "\",\"samples_us\":[1],\"spread_us\":2}]}", 400, "invalid_argument",
         "entries[0].spread_us"},
        /* a template with inputs needs its problem */
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"samples_us\":[1]}]}",
         422, "invalid_problem", "entries[0].problem"},
        {"{\"entries\":[{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":{},"
         "\"samples_us\":[1]}]}", 422, "invalid_problem", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_resp r;
        tt_cfx_call(tt_api_check, "POST", cases[i].body, NULL, &r);
        if (r.status != cases[i].status || strcmp(tt_cfx_err_code(&r), cases[i].code))
            fprintf(stderr, "check error case %zu: %d %s %s\n", i, r.status, tt_cfx_err_code(&r), tt_cfx_err_path(&r));
        CU_ASSERT_EQUAL(r.status, cases[i].status);
        CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(&r), cases[i].code);
        if (cases[i].path) CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), cases[i].path);
        tt_cfx_resp_clear(&r);
    }
}

/* ---- export ---------------------------------------------------------------------- */
static json_t *q_export(const char *fmt, const char *tmpl)
{
    return json_pack("{s:s, s:s, s:s}", "template", tmpl, "target", "a2", "format", fmt);
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_export_json(void)
{
    tt_resp r;
    tt_cfx_call(tt_api_export, "GET", NULL, q_export("json", "gemm"), &r);
    if (r.status != 200) fprintf(stderr, "export: %s %s\n", tt_cfx_err_code(&r), tt_cfx_err_path(&r));
    CU_ASSERT_EQUAL(r.status, 200);
    const json_t *recs = json_object_get(r.json, "records");
    CU_ASSERT(json_array_size(recs) >= 5);
    CU_ASSERT_EQUAL((size_t)json_integer_value(json_object_get(r.json, "count")), json_array_size(recs));
    /* one row per problem: the fastest (M=512: 150 us after the later tune) */
    size_t i;
    json_t *e;
    int seen512 = 0;
    json_array_foreach((json_t *)recs, i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "problem_key")),
                    "M=512,N=512,K=512,dtype=float16,out_dtype=float16")) {
            seen512++;
            CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e, "median_us")), 150, 1e-9);
            CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(e, "variant_key")),
                                   "gemm_M512_N512_K512_float16_float16");
        }
    }
    CU_ASSERT_EQUAL(seen512, 1);
    tt_cfx_resp_clear(&r);
}

/* GET /v1/export?format=fmt of gemm on a2 into *r (status 200 required), its text written to path. */
static void export_to_file(const char *fmt, const char *path, tt_resp *r)
{
    tt_cfx_call(tt_api_export, "GET", NULL, q_export(fmt, "gemm"), r);
    if (r->status != 200) fprintf(stderr, "export %s: %d %s %s\n", fmt, r->status, tt_cfx_err_code(r), tt_cfx_err_path(r));
    CU_ASSERT_EQUAL_FATAL(r->status, 200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r->text);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(r->text, f);
    fclose(f);
}

/* format=specializations loads as an xLLM kernel module would (stand-in DispatchField, the
 * relative import resolved) and holds what xLLM's contract allows: tests/data/xllm/check_specializations.py. */
static void test_export_specializations_parse(void)
{
    tt_resp r;
    char path[600], cmd[1400];
    snprintf(path, sizeof path, "%s/spec.py", tt_cfx_dir);
    export_to_file("specializations", path, &r);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.text, "from ....common.spec import DispatchField\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.text, "    DispatchField(\"M\", \"int32\"),\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.text, "    DispatchField(\"out_dtype\", \"dtype\"),\n]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.text, "{\"variant_key\": \"gemm_M1024_N1024_K1024_float16_float16\""));
    CU_ASSERT_PTR_NULL(strstr(r.text, "\"median_us\""));
    char *checker = tt_test_src("tests/data/xllm/check_specializations.py");
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s M,N,K,dtype,out_dtype "
             "block_M,block_N,block_K,K_L1,S1,S2,core_num,swizzle 5", checker, path);
    CU_ASSERT_EQUAL(run(cmd), 0);
    /* the checker rejects what xLLM's loader rejects: an extra key in an entry */
    FILE *f = fopen(path, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("SPECIALIZATIONS[0][\"median_us\"] = 1.0\n", f);
    fclose(f);
    CU_ASSERT_NOT_EQUAL(run(cmd), 0);
    free(checker);
    tt_cfx_resp_clear(&r);
}

/* format=registry-inc compiles (g++ -fsyntax-only) inside xLLM's namespace after a stand-in of
 * dispatch_registry.h written from the contract, and declares what a wrapper calls. */
static void test_export_registry_inc_compiles(void)
{
    tt_resp r;
    char inc[600], cc[600], cmd[2400];
    snprintf(inc, sizeof inc, "%s/registry.inc", tt_cfx_dir);
    snprintf(cc, sizeof cc, "%s/use_registry.cc", tt_cfx_dir);
    export_to_file("registry-inc", inc, &r);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.text, "struct GemmSpecialization {\n  int32_t M;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.text, "extern \"C\" function_type_t<GemmKernelFn> "
                                          "gemm__gemm_M1024_N1024_K1024_float16_float16_call;"));
    size_t entries = 0;
    for (const char *p = r.text; (p = strstr(p, "KernelEntry<GemmSpecialization, GemmKernelFn>{")); p++)
        entries++;
    CU_ASSERT(entries >= 5);
    char *standin = tt_test_src("tests/data/xllm/dispatch_registry_standin.h");
    FILE *f = fopen(cc, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#include \"%s\"\nnamespace xllm::kernel::npu::tilelang {\nnamespace {\n"
               "#include \"%s\"\n}\n"
               "static_assert(kGemmRegistry.size() == %zu);\n"
               "const GemmSpecialization kProbe = make_gemm_specialization(GemmM{1024}, GemmN{1024},"
               " GemmK{1024}, GemmDType{TilelangDType::kFloat16}, GemmOutDType{TilelangDType::kFloat16});\n"
               "const auto* kHit = find_gemm_kernel_entry(kProbe);\n"
               "const std::string kKeys = available_gemm_variant_keys();\n}\n", standin, inc, entries);
    fclose(f);
    free(standin);
    snprintf(cmd, sizeof cmd, "g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only %s", cc);
    CU_ASSERT_EQUAL(run(cmd), 0);
    tt_cfx_resp_clear(&r);
}

/* Nothing tuned: 404, as for the other formats (the refusals are in test_export_xllm.c). */
static void test_export_registry_inc_nothing_tuned(void)
{
    tt_resp r;
    tt_cfx_call(tt_api_export, "GET", NULL, q_export("registry-inc", "softmax"), &r);
    CU_ASSERT_EQUAL(r.status, 404);
    tt_cfx_resp_clear(&r);
}

static void test_export_c_header_compiles(void)
{
    tt_resp r;
    tt_cfx_call(tt_api_export, "GET", NULL, q_export("c-header", "gemm"), &r);
    CU_ASSERT_EQUAL_FATAL(r.status, 200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.text);
    char h[600], c[600], o[600], cmd[4000];
    snprintf(h, sizeof h, "%s/gemm_tuned.h", tt_cfx_dir);
    snprintf(c, sizeof c, "%s/use.c", tt_cfx_dir);
    snprintf(o, sizeof o, "%s/use", tt_cfx_dir);
    FILE *f = fopen(h, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(r.text, f);
    fclose(f);
    f = fopen(c, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "#include \"gemm_tuned.h\"\n"
               "int main(void) {\n"
               "  const gemm_entry *e = find_gemm_entry(512, 512, 512, \"float16\", \"float16\");\n"
               "  if (!e || e->median_us != 150 || e->block_M <= 0) return 1;\n"
               "  if (find_gemm_entry(512, 512, 513, \"float16\", \"float16\")) return 2;\n"
               "  if (find_gemm_entry(512, 512, 512, \"bfloat16\", \"float16\")) return 3;\n"
               "  return 0;\n}\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -c -o %s.o %s && "
             "cc -std=c11 -Wall -Wextra -Werror -o %s %s && %s", o, c, o, c, o);
    CU_ASSERT_EQUAL(run(cmd), 0);
    tt_cfx_resp_clear(&r);
}

/* A template "name" with one int input and one param, and a Kernel Tuner cache of it
 * imported for input=4096 on a2 (so that an export has one row). */
static void store_named(const char *name, const char *input, const char *param)
{
    char doc[512], kt[768];
    snprintf(doc, sizeof doc, "{\"tiletune\": 1, \"name\": \"%s\", \"inputs\": {\"%s\": \"int\"}, "
             "\"params\": {\"%s\": [1, 2]}}", name, input, param);
    json_t *d = json_loads(doc, 0, NULL);
    const tt_template *t = NULL;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc prc = tt_catalog_put_as(tt_cfx_srv.catalog, tt_cfx_srv.store, NULL, d, "tester", 1,
                                  &t, &err);
    if (prc) fprintf(stderr, "store_named %s: %s: %s\n", name, err.path, err.msg);
    CU_ASSERT_EQUAL_FATAL(prc, TT_OK);
    json_decref(d);
    snprintf(kt, sizeof kt, "{\"device_name\": \"Ascend910B2\", \"kernel_name\": \"%s\", "
             "\"problem_size\": [4096], \"tune_params_keys\": [\"%s\"], \"tune_params\": "
             "{\"%s\": [1, 2]}, \"objective\": \"time\", \"cache\": {\"2\": {\"%s\": 2, "
             "\"time\": 0.015, \"times\": [0.015]}}}", name, param, param, param);
    char problem[96];
    snprintf(problem, sizeof problem, "%s=4096", input);
    tt_resp r;
    tt_cfx_call(tt_api_import, "POST", kt, json_pack("{s:s, s:s, s:s}", "template", name,
                                                     "target", "a2", "problem", problem), &r);
    CU_ASSERT_EQUAL(r.status, 201);
    tt_cfx_resp_clear(&r);
}

/* Write text to path (a test file). */
static void put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text ? text : "", f);
    fclose(f);
}

/* GET /v1/export in format fmt for template name into *r: 1 when it answered 200, else 0
 * after checking the refusal (422 unsupported, path format); the status must be want. */
static int export_named(const char *fmt, const char *name, int want, tt_resp *r)
{
    tt_cfx_call(tt_api_export, "GET", NULL, q_export(fmt, name), r);
    if (r->status != want)
        fprintf(stderr, "%s of %s: %d %s\n", fmt, name, r->status, tt_cfx_err_code(r));
    CU_ASSERT_EQUAL(r->status, want);
    if (r->status == 200) return 1;
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(r), "unsupported");
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(r), "format");
    return 0;
}

/* Input and param names the generated C / C++ cannot spell are refused (422 unsupported,
 * path format); every other name gives a header that compiles and whose lookup finds the
 * row: an input named like one of the old lookup's locals (i, e) used to compile and then
 * compare the loop index instead of the argument. */
static void test_export_c_names(void)
{
    static const struct {
        const char *input, *param;
        int cheader, inc;   /* status of format=c-header, registry-inc */
    } cases[] = {
        {"i", "e", 200, 200},            /* the old lookup's locals */
        {"stride", "tt_k", 200, 200},
        {"new", "this", 200, 422},       /* C++ keywords only */
        {"int", "block", 422, 422},      /* keywords of both */
        {"N", "double", 422, 200},       /* registry-inc has no param members */
        {"NULL", "block", 422, 422},     /* macros of the headers both include */
        {"INT8_MAX", "block", 422, 422},
        {"__x", "block", 422, 422},      /* reserved to the implementation */
        {"N", "median_us", 422, 200},    /* the entry's own members */
        {"N", "variant_key", 422, 422},
        {"tt_e", "block", 422, 200},     /* the lookup's locals now */
        {"int64_t", "block", 422, 200},
        {"cn12_entry", "block", 422, 200},
    };
    char *standin = tt_test_src("tests/data/xllm/dispatch_registry_standin.h");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32], h[600], c[600], src[1200], cmd[2400];
        snprintf(name, sizeof name, "cn%zu", i);
        store_named(name, cases[i].input, cases[i].param);
        tt_resp r;
        if (export_named("c-header", name, cases[i].cheader, &r) && cases[i].cheader == 200) {
            snprintf(h, sizeof h, "%s/%s.h", tt_cfx_dir, name);
            snprintf(c, sizeof c, "%s/%s.c", tt_cfx_dir, name);
            put_text(h, r.text);
            snprintf(src, sizeof src, "#include \"%s.h\"\nint main(void) {\n  const %s_entry "
                     "*hit = find_%s_entry(4096);\n  if (!hit || hit->%s != 4096 || hit->%s != "
                     "2) return 1;\n  return find_%s_entry(4095) != NULL;\n}\n", name, name,
                     name, cases[i].input, cases[i].param, name);
            put_text(c, src);
            snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -o %s/%s %s && %s/%s",
                     tt_cfx_dir, name, c, tt_cfx_dir, name);
            CU_ASSERT_EQUAL(run(cmd), 0);
        }
        tt_cfx_resp_clear(&r);
        if (export_named("registry-inc", name, cases[i].inc, &r) && cases[i].inc == 200) {
            snprintf(h, sizeof h, "%s/%s.inc", tt_cfx_dir, name);
            snprintf(c, sizeof c, "%s/%s_inc.cc", tt_cfx_dir, name);
            put_text(h, r.text);
            snprintf(src, sizeof src, "#include \"%s\"\nnamespace xllm::kernel::npu::tilelang "
                     "{\n#include \"%s\"\n}\n", standin, h);
            put_text(c, src);
            snprintf(cmd, sizeof cmd, "g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only %s", c);
            CU_ASSERT_EQUAL(run(cmd), 0);
        }
        tt_cfx_resp_clear(&r);
    }
    free(standin);
}

/* Templates "ka-b" and "ka_b" both spell the C identifiers ka_b_entry, find_ka_b_entry: their
 * headers in one file must fail to compile (the old guard, the upper-cased identifier alone,
 * skipped the second header, so find_ka_b_entry silently answered from the other template's
 * table), while one header included twice still compiles. */
static void test_export_c_header_guards(void)
{
    static const char *const names[] = {"ka-b", "ka_b"};
    char h[600], c[600], cmd[1600];
    for (size_t i = 0; i < 2; i++) {
        store_named(names[i], "N", "block");
        tt_resp r;
        if (export_named("c-header", names[i], 200, &r)) {
            snprintf(h, sizeof h, "%s/%s_guard.h", tt_cfx_dir, names[i]);
            put_text(h, r.text);
        }
        tt_cfx_resp_clear(&r);
    }
    static const struct { const char *includes; int ok; } cases[] = {
        {"#include \"ka_b_guard.h\"\n#include \"ka_b_guard.h\"\n", 1},   /* the same file */
        {"#include \"ka-b_guard.h\"\n#include \"ka_b_guard.h\"\n", 0},   /* two tables */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char src[400];
        snprintf(src, sizeof src, "%sint main(void) { return !find_ka_b_entry(4096); }\n",
                 cases[i].includes);
        snprintf(c, sizeof c, "%s/guards%zu.c", tt_cfx_dir, i);
        put_text(c, src);
        snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -o %s/guards %s "
                 "2>%s/guards.err && %s/guards", tt_cfx_dir, c, tt_cfx_dir, tt_cfx_dir);
        CU_ASSERT_EQUAL(run(cmd) == 0, cases[i].ok);
    }
    snprintf(c, sizeof c, "%s/guards.err", tt_cfx_dir);
    char *err = tt_test_read_file(c, NULL);
    CU_ASSERT(err && strstr(err, "redefinition") != NULL);
    free(err);
}

static void test_export_t4(void)
{
    /* a job with 3 trials */
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "gemm");
    snprintf(j.template_hash, sizeof j.template_hash, "%s", tt_cfx_gemm->hash);
    snprintf(j.target, sizeof j.target, "%s", tt_cfx_a2->name);
    snprintf(j.backend, sizeof j.backend, "sim");
    snprintf(j.backend_fp, sizeof j.backend_fp, "sim");
    snprintf(j.strategy, sizeof j.strategy, "random");
    j.problem_key = strdup("M=768,N=768,K=768,dtype=float16,out_dtype=float16");
    j.problem_json = strdup("{\"M\":768,\"N\":768,\"K\":768,\"dtype\":\"float16\",\"out_dtype\":\"float16\"}");
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create(tt_cfx_srv.store, &j), TT_OK);
    for (int i = 0; i < 3; i++)
        record_best("M=768,N=768,K=768,dtype=float16", "sim", 10.0 + i, 0.5, j.id, i + 1, i);
    tt_resp r;
    json_t *q = q_export("t4", "gemm");
    json_object_set_new(q, "problem", json_string("M=768,N=768,K=768,dtype=float16"));
    tt_cfx_call(tt_api_export, "GET", NULL, q, &r);
    CU_ASSERT_EQUAL_FATAL(r.status, 200);
    json_t *doc = json_loads(r.text, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "results")), 3);
    json_decref(doc);
    /* it reads back as a T4 dataset */
    tt_dataset *ds = NULL;
    CU_ASSERT_EQUAL(tt_dataset_load_buffer(r.text, strlen(r.text), &ds, NULL), TT_OK);
    if (ds) {
        CU_ASSERT_EQUAL(ds->nrecords, 3);
        CU_ASSERT_EQUAL(ds->format, TT_DS_FORMAT_T4);
        CU_ASSERT_DOUBLE_EQUAL(ds->records[0].median_us, 10.0, 1e-6);
    }
    tt_dataset_free(ds);
    tt_cfx_resp_clear(&r);
    /* job= must be a job of the template and target asked for; job=0 names the range */
    static const struct {
        const char *tmpl, *target, *job;
        int status;
        const char *msg;
    } jobs[] = {
        {"gemm", "a2", NULL, 200, NULL},
        {"gemm", "a3", NULL, 404, "was tuned on target Ascend910B2, not Ascend910_9382"},
        {"softmax", "a2", NULL, 404, "tuned template gemm, not softmax"},
        {"gemm", "a2", "999999", 404, "no job 999999"},
        {"gemm", "a2", "0", 400, "must be an integer in 1..9223372036854775807"},
    };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)j.id);
        tt_cfx_call(tt_api_export, "GET", NULL,
                    json_pack("{s:s, s:s, s:s, s:s}", "template", jobs[i].tmpl, "target",
                              jobs[i].target, "format", "t4", "job", jobs[i].job ? jobs[i].job : id),
                    &r);
        const char *msg = tt_cfx_js(json_object_get(json_object_get(r.json, "error"), "message"));
        if (r.status != jobs[i].status || (jobs[i].msg && !strstr(msg, jobs[i].msg)))
            fprintf(stderr, "t4 job case %zu: %d %s\n", i, r.status, msg);
        CU_ASSERT_EQUAL(r.status, jobs[i].status);
        if (jobs[i].msg) CU_ASSERT_PTR_NOT_NULL(strstr(msg, jobs[i].msg));
        if (jobs[i].status != 200) CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), "job");
        tt_cfx_resp_clear(&r);
    }
    /* many problems and no job: the request must choose */
    tt_cfx_call(tt_api_export, "GET", NULL, q_export("t4", "gemm"), &r);
    CU_ASSERT_EQUAL(r.status, 400);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), "job");
    tt_cfx_resp_clear(&r);
    tt_job_clear(&j);
}

static void test_export_errors(void)
{
    static const struct {
        const char *fmt, *tmpl, *target;
        int status;
        const char *code;
    } cases[] = {
        {"yaml", "gemm", "a2", 400, "invalid_argument"},
        {"json", "nope", "a2", 404, "not_found"},
        {"json", "gemm", "z/9", 422, "invalid_target"},
        {"json", "gemm", "z9", 404, "not_found"},   /* could be an imported device's name */
        {"json", "softmax", "a2", 404, "not_found"},          /* nothing tuned */
        {"c-header", "softmax", "a3", 404, "not_found"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_resp r;
        tt_cfx_call(tt_api_export, "GET", NULL,
             json_pack("{s:s, s:s, s:s}", "template", cases[i].tmpl, "target", cases[i].target,
                       "format", cases[i].fmt), &r);
        CU_ASSERT_EQUAL(r.status, cases[i].status);
        CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(&r), cases[i].code);
        tt_cfx_resp_clear(&r);
    }
    tt_resp r;
    tt_cfx_call(tt_api_export, "GET", NULL, json_pack("{s:s}", "target", "a2"), &r);
    CU_ASSERT_EQUAL(r.status, 400);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), "template");
    tt_cfx_resp_clear(&r);
    /* job= selects a T4 run; any other format used to ignore it and export every problem */
    static const char *const not_t4[] = {"json", "specializations", "c-header", "registry-inc"};
    for (size_t i = 0; i < sizeof not_t4 / sizeof not_t4[0]; i++) {
        json_t *q = q_export(not_t4[i], "gemm");
        json_object_set_new(q, "job", json_string("1"));
        tt_cfx_call(tt_api_export, "GET", NULL, q, &r);
        CU_ASSERT_EQUAL(r.status, 400);
        CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(&r), "invalid_argument");
        CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), "job");
        tt_cfx_resp_clear(&r);
    }
}

static const tt_test_case check_cases[] = {
    {"verdicts", test_verdicts},
    {"numbers_and_missing", test_check_numbers_and_missing},
    {"pinned_baseline", test_pinned_baseline},
    {"remeasure", test_remeasure},
    {"no_inputs", test_check_no_inputs},
    {"errors", test_check_errors},
    {NULL, NULL}};
static const tt_test_case export_cases[] = {
    {"json", test_export_json},
    {"specializations_parse", test_export_specializations_parse},
    {"c_header_compiles", test_export_c_header_compiles},
    {"registry_inc_compiles", test_export_registry_inc_compiles},
    {"registry_inc_nothing_tuned", test_export_registry_inc_nothing_tuned},
    {"c_names", test_export_c_names},
    {"c_header_guards", test_export_c_header_guards},
    {"t4", test_export_t4},
    {"errors", test_export_errors},
    {NULL, NULL}};
static const tt_test_suite suites[] = {
    /* one server for both suites: opened by the first, closed by the last */
    {"ci_api", tt_cfx_init, NULL, check_cases},
    {"ci_export", NULL, tt_cfx_cleanup, export_cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

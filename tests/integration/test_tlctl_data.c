/* SPDX-License-Identifier: MIT
 * test_tlctl_data.c - build/bin/tlctl's data-exchange commands as a subprocess against a live
 * tiletuned (helpers/tlctl_fixture): check (measured files, --remeasure, tolerance, JUnit and
 * JSON reports, pinned baselines), export (xLLM specializations, C header, JSON, T4), import
 * (T1, Kernel Tuner cache; replay tuning of the imported template) and a template document
 * file as TEMPLATE.  The command-line surface is test_tlctl.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlctl_fixture.h"
#include "tt_test.h"

#define GEMM_P "M=1024,N=1024,K=1024,dtype=float16"

/* The daemon, and a tuned gemm GEMM_P on a2 (check and export read its best, as they read
 * test_tlctl's tune_wait_best_jobs job when they were cases of that program): the same tune.
 * When it fails the daemon is stopped, its directory kept, and the suite fails. */
static int suite_init(void)
{
    if (tt_tlfx_init("tlctl-data-test")) return -1;
    tt_tlfx_res r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "tune", "gemm", "-p", GEMM_P, "-t", "a2",
                                      "--budget", "6", "--wait");
    int rc = r.code == 0 && strstr(r.out, "done") ? 0 : -1;
    if (rc) {
        fprintf(stderr, "suite init: tlctl tune --wait: exit %d, stderr [%s]; daemon log %s\n",
                r.code, r.err, tt_tlfx_d.log_path);
        tt_daemon_stop(&tt_tlfx_d);
    }
    tt_tlfx_free(&r);
    return rc;
}

/* ---- CI: check, export, import ----------------------------------------------------- */
/* The three CI routes are registered in daemon/api/api.c's table; say so plainly when they are not. */
static int ci_routes_present(void)
{
    static const char *const probes[][2] = {{"POST", "/v1/check"}, {"GET", "/v1/export"},
                                            {"POST", "/v1/import"}};
    int ok = 1;
    for (size_t i = 0; i < 3; i++) {
        tt_hres h;
        tt_daemon_req(&tt_tlfx_d, probes[i][0], probes[i][1], TT_TOKEN_TUNE, "{}", 2, &h);
        const char *msg = tt_tlfx_js(json_object_get(json_object_get(h.json, "error"), "message"));
        if (h.status == 404 && strstr(msg, "no route")) {
            fprintf(stderr, "\n%s %s is not in daemon/api/api.c's route table\n", probes[i][0],
                    probes[i][1]);
            ok = 0;
        }
        tt_hres_free(&h);
    }
    CU_ASSERT_TRUE(ok);
    return ok;
}
static double best_median(void)
{
    tt_tlfx_res r = TT_TLFX_RUN("--json", "best", "gemm", "-p", GEMM_P, "-t", "a2");
    json_t *j = json_loads(r.out, 0, NULL);
    double m = json_number_value(json_object_get(j, "median_us"));
    json_decref(j);
    tt_tlfx_free(&r);
    return m;
}


static void test_check(void)
{
    if (!ci_routes_present()) return;
    /* check needs a tune token */
    tt_tlfx_res r = TT_TLFX_RUN_TOKEN(TT_TOKEN_READ, "check", "-T", "gemm", "-t", "a2", "-p",
                                      GEMM_P, "--remeasure");
    CU_ASSERT_EQUAL(r.code, 4);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    tt_tlfx_free(&r);
    double m = best_median();
    CU_ASSERT_FATAL(m > 0);
    char ok[600], bad[600], body[512];
    snprintf(ok, sizeof ok, "%s/measured-ok.json", tt_tlfx_tmp);
    snprintf(bad, sizeof bad, "%s/measured-bad.json", tt_tlfx_tmp);
    snprintf(body, sizeof body, "[{\"samples_us\": [%.6f, %.6f, %.6f]}]", m, m * 1.01, m * 0.99);
    tt_tlfx_write_text(ok, body);
    snprintf(body, sizeof body, "{\"entries\": [{\"problem\": \"%s\", \"samples_us\": [%.6f]}]}",
             GEMM_P, m * 1.5);
    tt_tlfx_write_text(bad, body);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P,
                                  "--measured", ok);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "pass"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "VERDICT"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", bad);
    CU_ASSERT_EQUAL(r.code, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "regressed"));
    tt_tlfx_free(&r);
    /* a larger tolerance lets it pass */
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", bad,
                          "--tolerance", "0.6");
    CU_ASSERT_EQUAL(r.code, 0);
    tt_tlfx_free(&r);
    /* JUnit and JSON reports */
    char xml[600];
    snprintf(xml, sizeof xml, "%s/report.xml", tt_tlfx_tmp);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", bad,
                          "--format", "junit", "-o", xml);
    CU_ASSERT_EQUAL(r.code, 1);
    char *x = tt_test_read_file(xml, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL(strstr(x, "<testsuites name=\"tiletune check\" tests=\"1\" failures=\"1\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(x, "<failure type=\"regressed\""));
    free(x);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", ok, "-p",
                          GEMM_P, "--format", "json");
    CU_ASSERT_EQUAL(r.code, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(tt_tlfx_js(json_object_get(j, "verdict")), "pass");
    json_decref(j);
    tt_tlfx_free(&r);
    /* re-measure on the simulator: the stored best came from sim, so it passes */
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P, "-p",
                          "M=3000,N=3000,K=3000,dtype=float16", "--remeasure", "--backend", "sim");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "missing"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "-p",
                          "M=3000,N=3000,K=3000,dtype=float16", "--remeasure", "--fail-on-missing");
    CU_ASSERT_EQUAL(r.code, 1);
    tt_tlfx_free(&r);
    /* pin, then compare against the pin */
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P, "--pin",
                          "rel1");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "pinned 1"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", ok, "-p",
                          GEMM_P, "--baseline", "rel1", "--format", "json");
    CU_ASSERT_EQUAL(r.code, 0);
    j = json_loads(r.out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(tt_tlfx_js(json_object_get(j, "baseline")), "rel1");
    json_decref(j);
    CU_ASSERT_PTR_NULL(strstr(r.err, "no baseline is pinned"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", ok, "-p",
                          GEMM_P, "--baseline", "never-pinned", "--fail-on-missing");
    CU_ASSERT_EQUAL(r.code, 1);
    tt_tlfx_free(&r);
    /* a misspelt name still passes without --fail-on-missing (a first run has no pin yet),
     * but says on stderr that no baseline has that name */
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", ok, "-p",
                          GEMM_P, "--baseline", "rel-1");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no baseline is pinned as \"rel-1\""));
    tt_tlfx_free(&r);
}

static void test_export(void)
{
    if (!ci_routes_present()) return;
    char py[600], h[600], cmd[2000];
    snprintf(py, sizeof py, "%s/spec.py", tt_tlfx_tmp);
    snprintf(h, sizeof h, "%s/gemm_tuned.h", tt_tlfx_tmp);
    tt_tlfx_res r = TT_TLFX_RUN("export", "-T", "gemm", "-t", "a2", "--format", "specializations",
                                "-o", py);
    CU_ASSERT_EQUAL(r.code, 0);
    tt_tlfx_free(&r);
    char *checker = tt_test_src("tests/data/xllm/check_specializations.py");
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s M,N,K,dtype,out_dtype "
             "block_M,block_N,block_K,K_L1,S1,S2,core_num,swizzle 1 >/dev/null", checker, py);
    free(checker);
    CU_ASSERT_EQUAL(system(cmd), 0);
    r = TT_TLFX_RUN("export", "-T", "gemm", "-t", "a2", "--format", "c-header", "-o", h);
    CU_ASSERT_EQUAL(r.code, 0);
    tt_tlfx_free(&r);
    snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Werror -fsyntax-only -x c %s", h);
    CU_ASSERT_EQUAL(system(cmd), 0);
    r = TT_TLFX_RUN("export", "-T", "gemm", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT(json_array_size(json_object_get(j, "records")) >= 1);
    json_decref(j);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("export", "-T", "gemm", "-t", "a2", "--format", "t4", "-p", GEMM_P);
    CU_ASSERT_EQUAL(r.code, 0);
    j = json_loads(r.out, 0, NULL);
    CU_ASSERT(json_array_size(json_object_get(j, "results")) >= 1);
    json_decref(j);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("export", "-T", "softmax", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    tt_tlfx_free(&r);
}

static void test_import(void)
{
    if (!ci_routes_present()) return;
    char *t1 = tt_test_shared("datasets/convolution.t1.json");
    char *kt = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    tt_tlfx_res r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "import", t1, "--template", "conv");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "template conv"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "1 added"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "import", kt, "-T", "conv");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "kt-cache"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "0 skipped"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "--json", "import", kt, "-T", "conv", "--format",
                          "kt-cache");
    CU_ASSERT_EQUAL(r.code, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "added")), 0);
    CU_ASSERT(json_integer_value(json_object_get(j, "skipped")) > 4000);
    json_decref(j);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("jobs", "--template", "conv");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "import"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "done"));
    tt_tlfx_free(&r);
    /* a read token cannot import; a file of the wrong format is refused by the server */
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_READ, "import", kt, "-T", "conv");
    CU_ASSERT_EQUAL(r.code, 4);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "import", kt, "-T", "conv", "--format", "t4");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    tt_tlfx_free(&r);
    /* conv has no inputs: tune needs no -p; without a kernel program the default is bo, and
     * model-refine runs bo as a named fallback (tlctl job says which ran and why) */
    static const struct { const char *strategy, *ran; } tc[] = {
        {"auto", "bo (default: no kernel program (no model)"},
        {"model-refine", "bo (fallback: model-refine needs the analytic model"},
    };
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "--json", "tune", "conv", "-t", "a2", "-b",
                              "replay:convolution_A100", "-s", tc[i].strategy, "-n", "4");
        CU_ASSERT_EQUAL(r.code, 0);
        j = json_loads(r.out, 0, NULL);
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(j, "job")));
        json_decref(j);
        tt_tlfx_free(&r);
        r = TT_TLFX_RUN("job", id);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "strategy ran"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, tc[i].ran));
        tt_tlfx_free(&r);
    }
    free(t1);
    free(kt);
}


/* A TEMPLATE argument that is a document file: tune sends it inline (stored under its name),
 * predict and simulate use it, best asks for that version; a bad file is a usage error. */
#define SCALE_DOC "{\"tiletune\": 1, \"name\": \"%s\", \"version\": \"1\", \"inputs\": " \
    "{\"N\": \"int\"}, \"params\": {\"block\": [256, 512, 1024]}, \"let\": {\"n_num\": " \
    "\"ceildiv(N, block)\"}, \"buffers\": {\"X_UB\": {\"scope\": \"UB\", \"shape\": " \
    "[\"block\"], \"dtype\": \"float16\", \"copies\": 2}}, \"tensors\": {\"X\": {\"shape\": " \
    "[\"N\"], \"dtype\": \"float16\"}, \"Y\": {\"shape\": [\"N\"], \"dtype\": \"float16\", " \
    "\"output\": true}}, \"kernel\": {\"grid\": {\"bx\": \"n_num\"}, \"cores\": \"vector\", " \
    "\"body\": [{\"copy\": [\"gm:X\", \"X_UB\"], \"along\": [\"bx\"]}, {\"vec\": \"muls\", " \
    "\"out\": \"X_UB\", \"in\": [\"X_UB\"]}, {\"copy\": [\"X_UB\", \"gm:Y\"], \"along\": " \
    "[\"bx\"]}]}}"

static void test_template_file(void)
{
    char doc[2048], path[512], peek[512], bad[512];
    snprintf(path, sizeof path, "%s/fscale.json", tt_tlfx_tmp);
    snprintf(doc, sizeof doc, SCALE_DOC, "fscale");
    tt_tlfx_write_text(path, doc);
    snprintf(peek, sizeof peek, "%s/peek.json", tt_tlfx_tmp);      /* predicted, never stored */
    snprintf(doc, sizeof doc, SCALE_DOC, "fpeek");
    tt_tlfx_write_text(peek, doc);
    tt_tlfx_res r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "tune", path, "-p", "N=65536", "-t", "a2",
                                      "-n", "3", "--wait");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fscale"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("predict", peek, "-p", "N=65536", "-t", "a2", "-k", "2");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "{\"block\":1024}"));
    tt_tlfx_free(&r);
    /* a space without a feasible config says why instead of printing an empty table */
    char *v1 = strstr(doc, "\"version\": \"1\", ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v1);
    char tight[2200];
    snprintf(tight, sizeof tight, "%.*s\"constraints\": [\"block <= N\"], %s",
             (int)(v1 - doc), doc, v1);
    tt_tlfx_write_text(peek, tight);
    r = TT_TLFX_RUN("predict", peek, "-p", "N=100", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "no feasible config (3 configs); rejected: "
                                         "constraints[0]: block <= N (3)\n"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "PREDICTED"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("simulate", peek, "-p", "N=65536", "-t", "a2", "--config", "block=512");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "simulated time"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("templates");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fscale"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "fpeek"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("best", path, "-p", "N=65536", "-t", "a2");         /* that version's best */
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fscale"));
    tt_tlfx_free(&r);
    /* export and check take the file's name (old code: 404 unknown template) */
    r = TT_TLFX_RUN("export", "-T", path, "-t", "a2", "--format", "json");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"fscale\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "N=65536"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", path, "-t", "a2", "-p", "N=65536",
                          "--remeasure");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fscale"));
    tt_tlfx_free(&r);
    snprintf(bad, sizeof bad, "%s/noname.json", tt_tlfx_tmp);
    tt_tlfx_write_text(bad, "{\"tiletune\": 1}");
    r = TT_TLFX_RUN("export", "-T", bad, "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "has no \"name\""));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("best", path, "-t", "a2");                           /* N has no default */
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--problem is required"));
    tt_tlfx_free(&r);
    /* another version of the file has no result yet */
    snprintf(doc, sizeof doc, SCALE_DOC, "fscale");
    char *v2 = strstr(doc, "[256, 512, 1024]");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v2);
    memcpy(v2, "[256, 512, 2048]", 16);
    tt_tlfx_write_text(path, doc);
    r = TT_TLFX_RUN("best", path, "-p", "N=65536", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "not_found"));
    tt_tlfx_free(&r);
    static const struct { const char *text, *want; } bads[] = {
        {NULL, "No such file"},                                   /* no file at all */
        {"{\"name\": ", "cannot read the template file"},
        {"{\"name\": \"a\", \"name\": \"b\"}", "duplicate object key"},
        {"[1, 2]", "does not hold a JSON object"},
    };
    for (size_t i = 0; i < sizeof bads / sizeof *bads; i++) {
        snprintf(bad, sizeof bad, "%s/bad%zu.json", tt_tlfx_tmp, i);
        if (bads[i].text) tt_tlfx_write_text(bad, bads[i].text);
        r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "tune", bad, "-p", "N=1", "-t", "a2");
        CU_ASSERT_EQUAL(r.code, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bads[i].want));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bad));
        tt_tlfx_free(&r);
    }
}

static const tt_test_case cases[] = {
    {"check", test_check},
    {"export", test_export},
    {"import", test_import},
    {"template_file", test_template_file},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"tlctl_data", suite_init, tt_tlfx_cleanup, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

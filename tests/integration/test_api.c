/* SPDX-License-Identifier: MIT
 * test_api.c - every route of API v1 against a live tiletuned (SQLite, one worker):
 * happy paths and error paths, with libcurl.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "jsonutil.h"
#include "store.h"
#include "tt_daemon.h"
#include "tt_rawhttp.h"
#include "tt_test.h"

static tt_daemon D;
static long long g_job;            /* a finished sim job (tuned by suite init) */

static const char *TUNE_BODY =
    "{\"template\":\"gemm\",\"problem\":{\"M\":1024,\"N\":1024,\"K\":1024,\"dtype\":\"float16\"},"
    "\"target\":\"a2\",\"backend\":\"sim\",\"strategy\":\"model-refine\",\"budget\":{\"trials\":8},"
    "\"seed\":3}";

static int suite_init(void)
{
    if (tt_daemon_start(&D, NULL)) return 1;
    tt_hres r;
    if (tt_daemon_req(&D, "POST", "/v1/tune", TT_TOKEN_TUNE, TUNE_BODY, strlen(TUNE_BODY), &r) ||
        r.status != 202) {
        fprintf(stderr, "tune failed: %ld %s\n", r.status, r.body);
        tt_hres_free(&r);
        return 1;
    }
    g_job = (long long)json_integer_value(json_object_get(r.json, "job"));
    tt_hres_free(&r);
    const char *st = tt_daemon_wait_job(&D, g_job, 60);
    return st && !strcmp(st, "done") ? 0 : 1;
}

static int suite_clean(void)
{
    int st = tt_daemon_stop(&D);                /* SIGTERM -> exit 0 */
    if (st != 0) fprintf(stderr, "tiletuned exited with %d after SIGTERM\n", st);
    tt_daemon_cleanup(&D);
    return st != 0;
}

/* Request and check the status (and error code when given). Returns the response. */
static tt_hres req(const char *method, const char *path, const char *token, const char *body,
                   long status, const char *code)
{
    tt_hres r;
    int rc = tt_daemon_req(&D, method, path, token, body, body ? strlen(body) : 0, &r);
    CU_ASSERT_EQUAL(rc, 0);
    if (r.status != status)
        fprintf(stderr, "\n%s %s: got %ld, want %ld: %s\n", method, path, r.status, status, r.body);
    CU_ASSERT_EQUAL(r.status, status);
    if (code) {
        CU_ASSERT_STRING_EQUAL(tt_hres_code(&r), code);
    }
    if (status >= 400) {   /* every error is a JSON error document */
        CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(r.json, "error"), "message"));
    }
    return r;
}

static void test_health(void)
{
    tt_hres r = req("GET", "/healthz", NULL, NULL, 200, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "status")), "ok");
    tt_hres_free(&r);
    r = req("GET", "/readyz", NULL, NULL, 200, NULL);
    CU_ASSERT(json_is_true(json_object_get(r.json, "ready")));
    tt_hres_free(&r);
    r = req("POST", "/healthz", NULL, "{}", 405, "method_not_allowed");
    tt_hres_free(&r);
}

static void test_metrics(void)
{
    tt_hres r = req("GET", "/metrics", NULL, NULL, 200, NULL);
    CU_ASSERT(strstr(r.content_type, "text/plain") != NULL);
    CU_ASSERT(strstr(r.body, "tiletune_http_requests_total{route=\"POST /v1/tune\",status=\"202\"} 3") != NULL);
    CU_ASSERT(strstr(r.body, "tiletune_jobs{state=\"done\"}") != NULL);
    CU_ASSERT(strstr(r.body, "tiletune_queue_depth") != NULL);
    CU_ASSERT(strstr(r.body, "tiletune_trials_total{backend=\"sim\"") != NULL);
    CU_ASSERT(strstr(r.body, "tiletune_http_request_duration_seconds_bucket") != NULL);
    tt_hres_free(&r);
}

static void test_targets(void)
{
    tt_hres r = req("GET", "/v1/targets", NULL, NULL, 200, NULL);
    CU_ASSERT(json_array_size(json_object_get(r.json, "targets")) >= 10);
    tt_hres_free(&r);
    r = req("GET", "/v1/targets/a3", NULL, NULL, 200, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "name")), "Ascend910_9382");
    CU_ASSERT(json_is_object(json_object_get(r.json, "document")));
    tt_hres_free(&r);
    r = req("GET", "/v1/targets/nosuchchip", NULL, NULL, 404, "not_found");
    tt_hres_free(&r);
}

static void test_templates(void)
{
    tt_hres r = req("GET", "/v1/templates", NULL, NULL, 200, NULL);
    json_t *arr = json_object_get(r.json, "templates");
    int found = 0;
    size_t i;
    json_t *t;
    json_array_foreach(arr, i, t)
        if (!strcmp(json_string_value(json_object_get(t, "name")) ?: "", "gemm")) found = 1;
    CU_ASSERT(found);
    tt_hres_free(&r);
    r = req("GET", "/v1/templates/gemm", NULL, NULL, 200, NULL);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "params")), 8);
    json_t *doc = json_incref(json_object_get(r.json, "document"));
    tt_hres_free(&r);
    r = req("GET", "/v1/templates/nope", NULL, NULL, 404, "not_found");
    tt_hres_free(&r);
    /* validate: the document itself is valid; a broken one names the path */
    char *text = tt_json_dumps(doc, JSON_COMPACT);
    r = req("POST", "/v1/templates/gemm/validate?target=a2&problem=M=512,N=512,K=512", NULL,
            text, 200, NULL);
    CU_ASSERT(json_is_true(json_object_get(r.json, "valid")));
    CU_ASSERT(json_integer_value(json_object_get(json_object_get(r.json, "space"), "total")) ==
              1228800);
    tt_hres_free(&r);
    json_t *bad = json_deep_copy(doc);
    json_array_set_new(json_object_get(json_object_get(json_object_get(bad, "params"), "block_M"),
                                       "values"), 2, json_string("x"));
    char *btext = tt_json_dumps(bad, JSON_COMPACT);
    r = req("POST", "/v1/templates/gemm/validate", NULL, btext, 422, NULL);
    const char *path = json_string_value(json_object_get(json_object_get(r.json, "error"), "path"));
    CU_ASSERT(path && strstr(path, "params.block_M") != NULL);
    tt_hres_free(&r);
    /* an expression's error says its offset once, as docs/template-format.md shows it (it
     * was "... of \"ceildiv(M, q)\") (at offset 11)") */
    r = req("POST", "/v1/templates/n/validate", NULL, "{\"tiletune\":1,\"name\":\"n\",\"inputs\":"
            "{\"M\":\"int\"},\"let\":{\"n\":\"ceildiv(M, q)\"}}", 422, "invalid_expression");
    json_t *e = json_object_get(r.json, "error");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "path")), "let.n");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "message")),
                           "unknown name 'q' (at offset 11 of \"ceildiv(M, q)\")");
    tt_hres_free(&r);
    /* PUT: needs tune; the URL name must match */
    json_t *mine = json_deep_copy(doc);
    json_object_set_new(mine, "name", json_string("gemm_mine"));
    char *mtext = tt_json_dumps(mine, JSON_COMPACT);
    r = req("PUT", "/v1/templates/gemm_mine", NULL, mtext, 401, "unauthorized");
    tt_hres_free(&r);
    r = req("PUT", "/v1/templates/gemm_mine", TT_TOKEN_READ, mtext, 403, "forbidden");
    tt_hres_free(&r);
    r = req("PUT", "/v1/templates/other_name", TT_TOKEN_TUNE, mtext, 400, "invalid_argument");
    tt_hres_free(&r);
    r = req("PUT", "/v1/templates/gemm_mine", TT_TOKEN_TUNE, mtext, 201, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "name")), "gemm_mine");
    tt_hres_free(&r);
    r = req("GET", "/v1/templates/gemm_mine", NULL, NULL, 200, NULL);
    tt_hres_free(&r);
    r = req("PUT", "/v1/templates/gemm_mine", TT_TOKEN_TUNE, btext, 400, NULL); /* name gemm */
    tt_hres_free(&r);
    free(text);
    free(btext);
    free(mtext);
    json_decref(bad);
    json_decref(mine);
    json_decref(doc);
}

static void test_predict(void)
{
    const char *body = "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":{\"M\":4096,"
                       "\"N\":4096,\"K\":4096,\"dtype\":\"float16\"},\"top\":5}";
    tt_hres r = req("POST", "/v1/predict", NULL, body, 200, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "source")), "model");
    json_t *sp = json_object_get(r.json, "space");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(sp, "total")), 1228800);
    json_int_t feas = json_integer_value(json_object_get(sp, "feasible"));
    CU_ASSERT(feas > 0 && feas < 1228800);
    json_t *res = json_object_get(r.json, "results");
    CU_ASSERT_EQUAL(json_array_size(res), 5);
    double prev = 0;
    size_t i;
    json_t *x;
    json_array_foreach(res, i, x) {
        double t = json_number_value(json_object_get(x, "time_us"));
        CU_ASSERT(t > 0 && t >= prev);
        CU_ASSERT(json_is_string(json_object_get(x, "bound")));
        prev = t;
    }
    tt_hres_free(&r);
    /* explicit configs: one feasible, one breaking K_L1 % block_K == 0 */
    const char *b2 = "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"M=4096,N=4096,K=4096\","
                     "\"configs\":[{\"block_M\":128,\"block_N\":256,\"block_K\":64,\"K_L1\":256,"
                     "\"S1\":2,\"S2\":2},{\"block_M\":128,\"block_N\":256,\"block_K\":256,"
                     "\"K_L1\":96,\"S1\":2,\"S2\":2}]}";
    r = req("POST", "/v1/predict", NULL, b2, 200, NULL);
    res = json_object_get(r.json, "results");
    CU_ASSERT_EQUAL(json_array_size(res), 2);
    CU_ASSERT(json_is_true(json_object_get(json_array_get(res, 0), "feasible")));
    CU_ASSERT(json_is_false(json_object_get(json_array_get(res, 1), "feasible")));
    CU_ASSERT(strstr(json_string_value(json_object_get(json_array_get(res, 1), "reason")) ?: "",
                     "constraints[0]") != NULL);
    tt_hres_free(&r);
    r = req("POST", "/v1/predict", NULL,
            "{\"template\":\"gemm\",\"target\":\"z9\",\"problem\":\"M=1,N=1,K=1\"}", 422,
            "invalid_target");
    tt_hres_free(&r);
    r = req("POST", "/v1/predict", NULL,
            "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":{\"M\":64}}", 422,
            "invalid_problem");
    const char *path = json_string_value(json_object_get(json_object_get(r.json, "error"), "path"));
    CU_ASSERT(path && !strncmp(path, "problem", 7));
    tt_hres_free(&r);
    r = req("POST", "/v1/predict", NULL,
            "{\"template\":\"nope\",\"target\":\"a2\",\"problem\":{\"M\":64}}", 404, "not_found");
    tt_hres_free(&r);
    r = req("POST", "/v1/predict", NULL,
            "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"M=64,N=64,K=64\","
            "\"configs\":[{\"block_M\":7}]}", 422, "invalid_config");
    tt_hres_free(&r);
}

static void test_simulate(void)
{
    const char *base = "{\"template\":\"gemm\",\"target\":\"a3\",\"problem\":{\"M\":1024,"
                       "\"N\":1024,\"K\":1024},\"config\":{\"block_M\":128,\"block_N\":256,"
                       "\"block_K\":64,\"K_L1\":256,\"S1\":2,\"S2\":2}";
    char body[1024];
    snprintf(body, sizeof body, "%s}", base);
    tt_hres r = req("POST", "/v1/simulate", NULL, body, 200, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "source")), "sim");
    CU_ASSERT(json_number_value(json_object_get(r.json, "time_us")) > 0);
    CU_ASSERT_PTR_NULL(json_object_get(r.json, "trace"));
    double t1 = json_number_value(json_object_get(r.json, "time_us"));
    tt_hres_free(&r);
    snprintf(body, sizeof body, "%s,\"trace\":true}", base);
    r = req("POST", "/v1/simulate", NULL, body, 200, NULL);
    json_t *tr = json_object_get(r.json, "trace");
    CU_ASSERT(json_is_object(tr) || json_is_array(tr));
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(r.json, "time_us")), t1, 1e-9);
    tt_hres_free(&r);
    snprintf(body, sizeof body, "%s,\"trace\":\"yes\"}", base);
    r = req("POST", "/v1/simulate", NULL, body, 400, "invalid_argument");
    tt_hres_free(&r);
    r = req("POST", "/v1/simulate", NULL,
            "{\"template\":\"gemm\",\"target\":\"a3\",\"problem\":\"M=1024,N=1024,K=1024\"}",
            400, "invalid_argument");
    tt_hres_free(&r);
}

static void test_jobs(void)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%lld", g_job);
    tt_hres r = req("GET", path, NULL, NULL, 200, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "state")), "done");
    json_t *best = json_object_get(r.json, "best");
    CU_ASSERT(json_number_value(json_object_get(best, "measured_us")) > 0);
    CU_ASSERT(json_number_value(json_object_get(best, "predicted_us")) > 0);
    json_int_t done = json_integer_value(json_object_get(json_object_get(r.json, "progress"), "done"));
    CU_ASSERT(done >= 2 && done <= 8);
    tt_hres_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld/trials?limit=2&offset=1", g_job);
    r = req("GET", path, NULL, NULL, 200, NULL);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "trials")), 2);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r.json, "total")), done);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(json_object_get(r.json, "trials"), 0), "seq")), 2);
    tt_hres_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld/trials?limit=0", g_job);
    r = req("GET", path, NULL, NULL, 400, "invalid_argument");
    tt_hres_free(&r);
    r = req("GET", "/v1/jobs?state=done&template=gemm&target=a2", NULL, NULL, 200, NULL);
    CU_ASSERT(json_array_size(json_object_get(r.json, "jobs")) >= 1);
    tt_hres_free(&r);
    r = req("GET", "/v1/jobs?state=queued&template=nosuch", NULL, NULL, 200, NULL);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "jobs")), 0);
    tt_hres_free(&r);
    r = req("GET", "/v1/jobs?state=sleeping", NULL, NULL, 400, "invalid_argument");
    tt_hres_free(&r);
    r = req("GET", "/v1/jobs/999999", NULL, NULL, 404, "not_found");
    tt_hres_free(&r);
    r = req("GET", "/v1/jobs/abc", NULL, NULL, 404, "not_found");
    tt_hres_free(&r);
    /* SSE: a finished job streams its progress and the end event, then closes */
    snprintf(path, sizeof path, "/v1/jobs/%lld/events", g_job);
    r = req("GET", path, NULL, NULL, 200, NULL);
    CU_ASSERT(strstr(r.content_type, "text/event-stream") != NULL);
    CU_ASSERT(strstr(r.body, "event: progress\ndata: {\"job\":") != NULL);
    CU_ASSERT(strstr(r.body, "\"state\":\"done\"") != NULL);
    CU_ASSERT(strstr(r.body, "event: end") != NULL);
    tt_hres_free(&r);
    r = req("GET", "/v1/jobs/424242/events", NULL, NULL, 404, "not_found");
    tt_hres_free(&r);
    /* cancel: finished -> 409; other owner -> 403 */
    snprintf(path, sizeof path, "/v1/jobs/%lld", g_job);
    r = req("DELETE", path, TT_TOKEN_TUNE2, NULL, 403, "forbidden");
    tt_hres_free(&r);
    r = req("DELETE", path, TT_TOKEN_TUNE, NULL, 409, "conflict");
    tt_hres_free(&r);
    r = req("DELETE", path, NULL, NULL, 401, "unauthorized");
    tt_hres_free(&r);
}

static void test_cancel_running(void)
{
    const char *body = "{\"template\":\"gemm\",\"problem\":\"M=8192,N=8192,K=8192\",\"target\":\"a2\","
                       "\"strategy\":\"random\",\"budget\":{\"trials\":100000},\"seed\":1}";
    tt_hres r = req("POST", "/v1/tune", TT_TOKEN_TUNE, body, 202, NULL);
    long long id = (long long)json_integer_value(json_object_get(r.json, "job"));
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "state")), "queued");
    tt_hres_free(&r);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    r = req("DELETE", path, TT_TOKEN_ADMIN, NULL, 200, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "state")), "cancelled");
    tt_hres_free(&r);
    const char *st = tt_daemon_wait_job(&D, id, 20);
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st) CU_ASSERT_STRING_EQUAL(st, "cancelled");
}

static void test_events_live(void)
{
    /* a running job: progress events with growing "done", then the end event */
    const char *body = "{\"template\":\"gemm\",\"problem\":\"M=2048,N=2048,K=2048\",\"target\":\"a2\","
                       "\"strategy\":\"random\",\"budget\":{\"trials\":150},\"seed\":5}";
    tt_hres r = req("POST", "/v1/tune", TT_TOKEN_TUNE, body, 202, NULL);
    long long id = (long long)json_integer_value(json_object_get(r.json, "job"));
    tt_hres_free(&r);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/events", id);
    r = req("GET", path, NULL, NULL, 200, NULL);
    int nprog = 0, monotone = 1;
    long long last = -1;
    const char *p = r.body;
    while ((p = strstr(p, "event: progress\ndata: ")) != NULL) {
        p += strlen("event: progress\ndata: ");
        json_t *d = json_loadb(p, strcspn(p, "\n"), 0, NULL);
        long long done = (long long)json_integer_value(json_object_get(d, "done"));
        if (done < last) monotone = 0;
        last = done;
        nprog++;
        json_decref(d);
    }
    CU_ASSERT(nprog >= 2);
    CU_ASSERT(monotone);
    CU_ASSERT_EQUAL(last, 150);
    CU_ASSERT(strstr(r.body, "event: end\ndata: {\"job\":") != NULL);
    tt_hres_free(&r);
}

static void test_best(void)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%lld", g_job);
    tt_hres j = req("GET", path, NULL, NULL, 200, NULL);
    json_t *jbest = json_object_get(json_object_get(j.json, "best"), "config");
    tt_hres r = req("GET", "/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024&dtype=float16",
                    NULL, NULL, 200, NULL);
    CU_ASSERT(json_equal(json_object_get(r.json, "config"), jbest));
    CU_ASSERT(json_is_true(json_object_get(r.json, "exact")));
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "time_kind")), "simulated");
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(r.json, "median_us")),
                           json_number_value(json_object_get(json_object_get(j.json, "best"), "measured_us")), 1e-9);
    tt_hres_free(&r);
    r = req("GET", "/v1/best?template=gemm&target=Ascend910B2&M=1024&N=1024&K=1024&backend=sim",
            NULL, NULL, 200, NULL);
    tt_hres_free(&r);
    /* another shape: 404 exact, nearest gives distance |log2(4096/1024)| + |log2(512/1024)| = 3 */
    r = req("GET", "/v1/best?template=gemm&target=a2&M=4096&N=512&K=1024", NULL, NULL, 404,
            "not_found");
    {   /* the message says how to ask for the nearest shape, in the API and in tlctl */
        const char *m = json_string_value(json_object_get(json_object_get(r.json, "error"),
                                                          "message"));
        CU_ASSERT(m && strstr(m, "nearest=1") && strstr(m, "tlctl best --nearest"));
    }
    tt_hres_free(&r);
    r = req("GET", "/v1/best?template=gemm&target=a2&M=4096&N=512&K=1024&nearest=1", NULL, NULL,
            200, NULL);
    CU_ASSERT(json_is_false(json_object_get(r.json, "exact")));
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(r.json, "distance")), 3.0, 1e-9);
    CU_ASSERT(json_equal(json_object_get(r.json, "config"), jbest));
    tt_hres_free(&r);
    /* dtype must match */
    r = req("GET", "/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024&dtype=bfloat16&nearest=1",
            NULL, NULL, 404, "not_found");
    tt_hres_free(&r);
    r = req("GET", "/v1/best?template=gemm&M=1024", NULL, NULL, 400, "invalid_argument");
    tt_hres_free(&r);
    r = req("GET", "/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024&Q=1", NULL, NULL, 422,
            "invalid_problem");
    tt_hres_free(&r);
    r = req("GET", "/v1/best?template=gemm&target=a2&M=big&N=1024&K=1024", NULL, NULL, 422,
            "invalid_problem");
    tt_hres_free(&r);
    tt_hres_free(&j);
}

static void test_config_route(void)
{
    tt_hres r = req("GET", "/v1/config", TT_TOKEN_ADMIN, NULL, 200, NULL);
    json_t *c = json_object_get(r.json, "config");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(c, "workers"), "source")), "file");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(c, "max_space"), "source")), "default");
    CU_ASSERT(strstr(r.body, "\"***\"") != NULL);        /* token hashes redacted */
    tt_hres_free(&r);
    r = req("GET", "/v1/config", TT_TOKEN_TUNE, NULL, 403, "forbidden");
    tt_hres_free(&r);
    r = req("GET", "/v1/config", NULL, NULL, 401, "unauthorized");
    tt_hres_free(&r);
    r = req("GET", "/v1/config", "wrong-secret", NULL, 401, "unauthorized");
    tt_hres_free(&r);
}

/* A write without a token: 401.  A server that has no tokens at all refuses every write, so
 * its answer also says how to give it one; one that has tokens does not. */
static void test_no_tokens_hint(void)
{
    tt_hres r = req("POST", "/v1/tune", NULL, TUNE_BODY, 401, "unauthorized");
    const char *m = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT(m && strstr(m, "scope tune") && !strstr(m, "no tokens"));
    tt_hres_free(&r);
    tt_daemon bare;
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&bare, "{\"tokens\": [], \"workers\": 0}"), 0);
    CU_ASSERT_EQUAL(tt_daemon_req(&bare, "POST", "/v1/tune", NULL, TUNE_BODY, strlen(TUNE_BODY),
                                  &r), 0);
    CU_ASSERT_EQUAL(r.status, 401);
    m = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT(m && strstr(m, "scope tune") && strstr(m, "no tokens") && strstr(m, "--tokens"));
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(tt_daemon_req(&bare, "GET", "/v1/templates", NULL, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);          /* reads stay open */
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(tt_daemon_stop(&bare), 0);
    tt_daemon_cleanup(&bare);
}

/* An unknown member of a request names the nearest known one. */
static void test_unknown_member_hint(void)
{
    static const char *const bodies[][2] = {
        {"{\"template\":\"gemm\",\"target\":\"a2\",\"budjet\":5}", "did you mean \"budget\"?"},
        {"{\"template\":\"gemm\",\"target\":\"a2\",\"stratgy\":\"bo\"}", "did you mean \"strategy\"?"},
        {"{\"template\":\"gemm\",\"target\":\"a2\",\"colour\":1}", NULL},
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        tt_hres r = req("POST", "/v1/tune", TT_TOKEN_TUNE, bodies[i][0], 400, "invalid_argument");
        const char *m =
            json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_PTR_NOT_NULL(strstr(m, "unknown member"));
        if (bodies[i][1]) {
            CU_ASSERT_PTR_NOT_NULL(strstr(m, bodies[i][1]));
        } else {
            CU_ASSERT_PTR_NULL(strstr(m, "did you mean"));
        }
        tt_hres_free(&r);
    }
    /* and an unknown template the nearest template's name */
    tt_hres r = req("GET", "/v1/templates/gemn", NULL, NULL, 404, "not_found");
    tt_hres_free(&r);
    static const char *const tb = "{\"template\":\"gemn\",\"target\":\"a2\","
                                  "\"problem\":{\"M\":64,\"N\":64,\"K\":64}}";
    r = req("POST", "/v1/predict", NULL, tb, 404, "not_found");
    const char *m = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT_PTR_NOT_NULL(m ? strstr(m, "did you mean \"gemm\"?") : NULL);
    tt_hres_free(&r);
}

/* GET /v1/best answers from a cache (daemon/api/bestcache.h): it must never serve a stale best,
 * neither after a tune through the API nor after a write by another process (this test
 * program writes the daemon's SQLite file through its own tt_store). */

/* The config recorded under name (a valid gemm config at M=N=K=512, block_M telling them
 * apart: GET /v1/best answers only configs the template's current version runs). */
static void fake_config(const char *name, char *js, size_t cap)
{
    int bm = !strcmp(name, "slow") ? 16 : !strcmp(name, "fast") ? 48 : 80;
    snprintf(js, cap, "{\"K_L1\":64,\"S1\":1,\"S2\":1,\"block_K\":32,\"block_M\":%d,"
             "\"block_N\":16,\"core_num\":0,\"swizzle\":4}", bm);
}

static double best_median(const char *path, const char *want_cfg)
{
    tt_hres r = req("GET", path, NULL, NULL, 200, NULL);
    double us = json_number_value(json_object_get(r.json, "median_us"));
    if (want_cfg) {
        char js[160];
        fake_config(want_cfg, js, sizeof js);
        json_t *want = json_loads(js, 0, NULL);
        int same = json_equal(json_object_get(r.json, "config"), want);
        if (!same) fprintf(stderr, "best_median %s: not the config recorded as %s\n", path,
                           want_cfg);
        CU_ASSERT(same);
        json_decref(want);
    }
    tt_hres_free(&r);
    return us;
}

static void record_outside(const char *hash, const char *pkey, const char *target,
                           const char *fp, const char *cfg, uint64_t chash, double us)
{
    tt_store *s = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(D.db_url, &s, &e), TT_OK);
    tt_trial_key k = {hash, pkey, target, fp};
    tt_trial t;
    memset(&t, 0, sizeof t);
    t.config_key = strdup(cfg);
    char js[160];
    fake_config(cfg, js, sizeof js);
    t.config_json = strdup(js);
    t.config_hash = chash;
    t.status = TT_OK;
    t.median_us = us;
    CU_ASSERT_EQUAL(tt_store_trial_record(s, &k, "gemm", 0, 0, &t), TT_OK);
    tt_trial_clear(&t);
    tt_store_close(s);
    /* the daemon reuses its data_version read for TT_STORE_STAMP_REFRESH_MS (store.h): a
     * commit by another process shows in every answer begun after that bound */
    usleep((TT_STORE_STAMP_REFRESH_MS + 1) * 1000);
}

static void test_best_never_stale(void)
{
    tt_hres r = req("GET", "/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024", NULL, NULL,
                    200, NULL);
    char hash[32], target[64], fp[80], pkey[256];
    snprintf(hash, sizeof hash, "%s", json_string_value(json_object_get(r.json, "template_hash")));
    snprintf(target, sizeof target, "%s", json_string_value(json_object_get(r.json, "target")));
    snprintf(fp, sizeof fp, "%s", json_string_value(json_object_get(r.json, "measured_by")));
    const char *k1024 = json_string_value(json_object_get(r.json, "problem_key"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(k1024);
    CU_ASSERT_FATAL(!strncmp(k1024, "M=1024,N=1024,K=1024,", 21));
    snprintf(pkey, sizeof pkey, "M=512,N=512,K=512,%s", k1024 + 21);
    tt_hres_free(&r);
    const char *path = "/v1/best?template=gemm&target=a2&M=512&N=512&K=512";
    r = req("GET", path, NULL, NULL, 404, "not_found");
    tt_hres_free(&r);

    /* 1. another process records a slow row; read it twice (the second read is cached) */
    record_outside(hash, pkey, target, fp, "slow", 0x5105ull, 1e7);
    CU_ASSERT_DOUBLE_EQUAL(best_median(path, "slow"), 1e7, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(best_median(path, "slow"), 1e7, 1e-6);

    /* 2. a tune through the API finds faster configs: the next read shows them */
    const char *tune = "{\"template\":\"gemm\",\"problem\":{\"M\":512,\"N\":512,\"K\":512},"
                       "\"target\":\"a2\",\"backend\":\"sim\",\"budget\":{\"trials\":4},"
                       "\"seed\":5}";
    r = req("POST", "/v1/tune", TT_TOKEN_TUNE, tune, 202, NULL);
    long long job = (long long)json_integer_value(json_object_get(r.json, "job"));
    tt_hres_free(&r);
    const char *st = tt_daemon_wait_job(&D, job, 60);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(st, "done");
    char jpath[64];
    snprintf(jpath, sizeof jpath, "/v1/jobs/%lld", job);
    r = req("GET", jpath, NULL, NULL, 200, NULL);
    double tuned = json_number_value(json_object_get(json_object_get(r.json, "best"),
                                                     "measured_us"));
    tt_hres_free(&r);
    CU_ASSERT_FATAL(tuned > 0 && tuned < 1e7);
    CU_ASSERT_DOUBLE_EQUAL(best_median(path, NULL), tuned, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(best_median(path, NULL), tuned, 1e-9);

    /* 3. another process records a faster row: the next read past the refresh bound shows
     *    it, also with nearest=1 and backend= (other cache keys) */
    record_outside(hash, pkey, target, fp, "fast", 0xfa57ull, tuned / 2);
    CU_ASSERT_DOUBLE_EQUAL(best_median(path, "fast"), tuned / 2, 1e-9);
    char p2[160];
    snprintf(p2, sizeof p2, "%s&nearest=1", path);
    CU_ASSERT_DOUBLE_EQUAL(best_median(p2, "fast"), tuned / 2, 1e-9);
    record_outside(hash, pkey, target, fp, "faster", 0xfa58ull, tuned / 4);
    CU_ASSERT_DOUBLE_EQUAL(best_median(p2, "faster"), tuned / 4, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(best_median(path, "faster"), tuned / 4, 1e-9);
}

/* Query arguments: one given twice is refused (never the last value answered: the first
 * two rows were answered for M=2048 and for target a3), as is any argument on a /v1/ route
 * that takes none; free-form inputs (best) and probes keep working.  "{job}" is g_job. */
static const struct {
    const char *method, *path, *token, *body;
    long status;
    const char *errpath;                /* error path (the argument), NULL for 2xx */
} query_cases[] = {
    {"GET", "/v1/best?template=gemm&target=a2&M=1024&M=2048&N=2048&K=2048", NULL, NULL, 400,
     "M"},
    {"GET", "/v1/best?template=gemm&M=1024&N=1024&K=1024&target=a2&target=a3", NULL, NULL,
     400, "target"},
    {"GET", "/v1/jobs?state=done&state=failed", NULL, NULL, 400, "state"},
    {"GET", "/v1/jobs/{job}/trials?limit=1&limit=2", NULL, NULL, 400, "limit"},
    {"GET", "/v1/templates/gemm?hash=a&hash=a", NULL, NULL, 400, "hash"},
    {"GET", "/v1/templates?x=1&x=1", NULL, NULL, 400, "x"},
    {"GET", "/v1/jobs/{job}?verbose=1", NULL, NULL, 400, "verbose"},
    {"GET", "/v1/jobs/{job}/events?x", NULL, NULL, 400, "x"},
    {"GET", "/v1/templates?name=gemm", NULL, NULL, 400, "name"},
    {"GET", "/v1/targets?x=1", NULL, NULL, 400, "x"},
    {"GET", "/v1/targets/a2?details=1", NULL, NULL, 400, "details"},
    {"GET", "/v1/config?x=1", TT_TOKEN_ADMIN, NULL, 400, "x"},
    {"POST", "/v1/predict?top=3", NULL, "{}", 400, "top"},
    {"DELETE", "/v1/jobs/{job}?force=1", TT_TOKEN_TUNE, NULL, 400, "force"},
    {"GET", "/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024", NULL, NULL, 200, NULL},
    {"GET", "/v1/jobs?state=done&template=gemm", NULL, NULL, 200, NULL},
    {"GET", "/v1/jobs/{job}", NULL, NULL, 200, NULL},
    {"GET", "/v1/targets/a2", NULL, NULL, 200, NULL},
    {"GET", "/v1/config", TT_TOKEN_ADMIN, NULL, 200, NULL},
    {"GET", "/healthz?probe=1", NULL, NULL, 200, NULL},
};

/* in with "{job}" replaced by g_job, into out. */
static void with_job(const char *in, char *out, size_t cap)
{
    const char *at = strstr(in, "{job}");
    if (at)
        snprintf(out, cap, "%.*s%lld%s", (int)(at - in), in, g_job, at + 5);
    else
        snprintf(out, cap, "%s", in);
}

static void test_query_args(void)
{
    for (size_t i = 0; i < sizeof query_cases / sizeof query_cases[0]; i++) {
        char path[256];
        with_job(query_cases[i].path, path, sizeof path);
        tt_hres r = req(query_cases[i].method, path, query_cases[i].token, query_cases[i].body,
                        query_cases[i].status, query_cases[i].errpath ? "invalid_argument" : NULL);
        if (query_cases[i].errpath) {
            json_t *e = json_object_get(r.json, "error");
            const char *ep = json_string_value(json_object_get(e, "path"));
            const char *msg = json_string_value(json_object_get(e, "message"));
            CU_ASSERT_STRING_EQUAL(ep ? ep : "", query_cases[i].errpath);
            CU_ASSERT(msg && strstr(msg, query_cases[i].errpath) != NULL);
        }
        tt_hres_free(&r);
    }
}

/* One raw request "LINE HTTP/1.1" (libcurl would wait for a HEAD's body); the answer into
 * buf.  Returns its status. */
static int raw_req(const char *line, char *buf, size_t cap)
{
    char rq[512];
    int n = snprintf(rq, sizeof rq, "%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Content-Length: 0\r\n\r\n", line);
    int fd = tt_raw_connect(D.port, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(tt_raw_send(fd, rq, (size_t)n), 0);
    int closed;
    buf[0] = '\0';
    tt_raw_read(fd, buf, cap - 1, tt_daemon_slow(5), &closed);
    close(fd);
    return tt_raw_status(buf);
}

/* The value of header `name` in a raw answer ("" when absent). */
static const char *raw_header(const char *resp, const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    const char *end = strstr(resp, "\r\n\r\n");
    for (const char *p = strstr(resp, "\r\n"); p && (!end || p < end);
         p = strstr(p + 2, "\r\n")) {
        if (!strncasecmp(p + 2, name, nl) && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            while (*v == ' ') v++;
            size_t vl = strcspn(v, "\r");
            snprintf(out, cap, "%.*s", (int)vl, v);
            break;
        }
    }
    return out;
}

/* HEAD wherever GET is (same status and headers, no body); every 405 says Allow. */
static const struct {
    const char *line;
    int status;
    const char *allow;          /* the Allow header of a 405 */
    int same_as_get;            /* 1: Content-Type and Content-Length as the GET's */
} method_cases[] = {
    {"HEAD /healthz", 200, NULL, 1},
    {"HEAD /v1/targets/a2", 200, NULL, 1},
    {"HEAD /v1/jobs/{job}", 200, NULL, 1},
    {"HEAD /v1/jobs/999", 404, NULL, 1},
    {"HEAD /metrics", 200, NULL, 0},            /* counts itself: the length moves */
    {"HEAD /v1/jobs/{job}/events", 200, NULL, 0},
    {"POST /healthz", 405, "GET, HEAD", 0},
    {"PUT /v1/jobs/{job}", 405, "GET, HEAD, DELETE", 0},
    {"DELETE /v1/templates", 405, "GET, HEAD", 0},
    {"GET /v1/templates/gemm/validate", 405, "POST", 0},
    {"HEAD /v1/tune", 405, "POST", 0},
    {"OPTIONS /v1/templates/gemm", 405, "GET, HEAD, PUT", 0},
};

static void test_methods(void)
{
    static char buf[65536], gbuf[65536];
    for (size_t i = 0; i < sizeof method_cases / sizeof method_cases[0]; i++) {
        char line[128];
        with_job(method_cases[i].line, line, sizeof line);
        int st = raw_req(line, buf, sizeof buf);
        if (st != method_cases[i].status) fprintf(stderr, "\n%s: got %d\n%s\n", line, st, buf);
        CU_ASSERT_EQUAL(st, method_cases[i].status);
        char allow[128], ct[128], cl[32], gct[128], gcl[32];
        raw_header(buf, "Allow", allow, sizeof allow);
        CU_ASSERT_STRING_EQUAL(allow, method_cases[i].allow ? method_cases[i].allow : "");
        if (!strncmp(line, "HEAD ", 5)) {
            CU_ASSERT_STRING_EQUAL(tt_raw_body(buf), "");   /* headers only */
            CU_ASSERT_EQUAL(tt_raw_status_lines(buf), 1);
        }
        if (method_cases[i].same_as_get) {
            char gline[128];
            snprintf(gline, sizeof gline, "GET %s", line + 5);
            CU_ASSERT_EQUAL(raw_req(gline, gbuf, sizeof gbuf), st);
            raw_header(buf, "Content-Type", ct, sizeof ct);
            raw_header(gbuf, "Content-Type", gct, sizeof gct);
            CU_ASSERT_STRING_EQUAL(ct, gct);
            raw_header(buf, "Content-Length", cl, sizeof cl);
            raw_header(gbuf, "Content-Length", gcl, sizeof gcl);
            CU_ASSERT_STRING_EQUAL(cl, gcl);
            CU_ASSERT_EQUAL((size_t)strtoul(gcl, NULL, 10), strlen(tt_raw_body(gbuf)));
        }
    }
}

static const tt_test_case cases[] = {
    {"health", test_health},         {"targets", test_targets},
    {"templates", test_templates},   {"predict", test_predict},
    {"simulate", test_simulate},     {"jobs", test_jobs},
    {"cancel_running", test_cancel_running}, {"events_live", test_events_live},
    {"best", test_best},
    {"config_route", test_config_route},     {"metrics", test_metrics},
    {"no_tokens_hint", test_no_tokens_hint}, {"unknown_member_hint", test_unknown_member_hint},
    {"query_args", test_query_args},         {"methods", test_methods},
    {"best_never_stale", test_best_never_stale},   /* after metrics: it tunes once more */
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"api", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_api_handlers.c - the API handlers called directly (no sockets, as api.h promises):
 * tune -> get -> list -> cancel on a real SQLite store, and database fault injection: with
 * the jobs table gone (renamed behind the store's back) every job route answers
 * 503 database_error, the compute routes and /metrics keep working, and after the table
 * comes back the same store serves again.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_int.h"
#include "space.h"
#include "store_fixture.h"
#include "strategy.h"
#include "tt_test.h"

static char *g_tmp;
static char g_path[512];
static tt_store *g_store;
static tt_catalog *g_cat;
static tt_server g_srv;
static const tt_budget *g_budget;   /* the budget call() hands to the handler (NULL: none) */

static int suite_init(void)
{
    g_tmp = tt_test_tmpdir("tt-handlers");
    if (!g_tmp) return 1;
    snprintf(g_path, sizeof g_path, "%s/t.db", g_tmp);
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", g_path);
    tt_errinfo e;
    tt_errinfo_clear(&e);
    char *td = tt_test_src("templates"), *gd = tt_test_src("costmodel/targets");
    int bad = tt_store_open(url, &g_store, &e) || tt_catalog_new(td, gd, &g_cat, &e) ||
              tt_catalog_sync(g_cat, g_store);
    free(td);
    free(gd);
    if (bad) { fprintf(stderr, "setup: %s: %s\n", e.path, e.msg); return 1; }
    memset(&g_srv, 0, sizeof g_srv);
    g_srv.store = g_store;
    g_srv.catalog = g_cat;
    g_srv.runner_cfg.catalog = g_cat;
    g_srv.runner_cfg.db_url = "unused";
    g_srv.runner_cfg.workers = 1;
    g_srv.max_body_bytes = 1 << 20;
    g_srv.max_json_depth = 64;
    g_srv.max_space = 1e7;
    g_srv.max_jobs_per_token = 3;
    g_srv.open_reads = 1;
    tt__api_set_runner_state(1);
    return 0;
}

static int suite_clean(void)
{
    tt_store_close(g_store);
    tt_catalog_free(g_cat);
    tt__api_set_runner_state(0);
    tt_test_rmrf(g_tmp);
    free(g_tmp);
    return 0;
}

/* Call a handler with a JSON body / query / path param; returns the response. */
static tt_resp call(tt_handler_fn fn, const char *body, const char *query, const char *param,
                    const char *token, int scopes)
{
    tt_req req;
    memset(&req, 0, sizeof req);
    json_t *b = body ? json_loads(body, 0, NULL) : NULL;
    json_t *q = query ? json_loads(query, 0, NULL) : json_object();
    req.body = b;
    req.query = q;
    if (param) { req.params[0] = param; req.nparams = 1; }
    req.token_name = token ? token : "";
    req.scopes = scopes;
    req.budget = g_budget;
    tt_resp r = {0};
    r.status = 200;
    fn(&g_srv, &req, &r);
    json_decref(b);
    json_decref(q);
    return r;
}

static const char *code_of(const tt_resp *r)
{
    const char *c = json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
    return c ? c : "";
}

static const char *TUNE = "{\"template\":\"gemm\",\"problem\":\"M=512,N=512,K=512\","
                          "\"target\":\"a2\",\"budget\":4,\"seed\":9}";

static void test_job_cycle(void)
{
    tt_resp r = call(tt__api_tune, TUNE, NULL, NULL, "alice", TT_SCOPE_TUNE | TT_SCOPE_READ);
    CU_ASSERT_EQUAL(r.status, 202);
    json_int_t id = json_integer_value(json_object_get(r.json, "job"));
    CU_ASSERT(id > 0);
    json_decref(r.json);
    char ids[32];
    snprintf(ids, sizeof ids, "%lld", (long long)id);
    r = call(tt__api_job_get, NULL, NULL, ids, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "state")), "queued");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "owner")), "alice");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(r.json, "budget"), "trials")), 4);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r.json, "seed")), 9);
    json_decref(r.json);
    r = call(tt__api_jobs_list, NULL, "{\"owner\":\"alice\",\"state\":\"queued\"}", NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "jobs")), 1);
    json_decref(r.json);
    /* SSE frames: the first poll reports, an unchanged job gives nothing, final flag */
    char buf[512];
    int64_t last_done = -1;
    int last_state = -1, fin = 0;
    int n = tt__job_event(g_store, id, buf, sizeof buf, &last_done, &last_state, &fin);
    CU_ASSERT(n > 0 && strstr(buf, "event: progress") && strstr(buf, "\"state\":\"queued\""));
    CU_ASSERT_EQUAL(fin, 0);
    CU_ASSERT_EQUAL(tt__job_event(g_store, id, buf, sizeof buf, &last_done, &last_state, &fin), 0);
    r = call(tt__api_job_cancel, NULL, NULL, ids, "bob", TT_SCOPE_TUNE | TT_SCOPE_READ);
    CU_ASSERT_EQUAL(r.status, 403);
    json_decref(r.json);
    r = call(tt__api_job_cancel, NULL, NULL, ids, "alice", TT_SCOPE_TUNE | TT_SCOPE_READ);
    CU_ASSERT_EQUAL(r.status, 200);
    json_decref(r.json);
    n = tt__job_event(g_store, id, buf, sizeof buf, &last_done, &last_state, &fin);
    CU_ASSERT(n > 0 && strstr(buf, "cancelled") != NULL);
    CU_ASSERT_EQUAL(fin, 1);
    CU_ASSERT_EQUAL(tt__job_event(g_store, 999999, buf, sizeof buf, &last_done, &last_state, &fin), -1);
    r = call(tt__api_job_cancel, NULL, NULL, ids, "root", TT_SCOPE_ADMIN | TT_SCOPE_TUNE | TT_SCOPE_READ);
    CU_ASSERT_EQUAL(r.status, 409);
    json_decref(r.json);
}

static void test_job_limit(void)
{
    int accepted = 0, refused = 0;
    for (int i = 0; i < 5; i++) {
        tt_resp r = call(tt__api_tune, TUNE, NULL, NULL, "carol", TT_SCOPE_TUNE | TT_SCOPE_READ);
        if (r.status == 202) accepted++;
        if (r.status == 429 && !strcmp(code_of(&r), "limit_exceeded")) refused++;
        json_decref(r.json);
    }
    CU_ASSERT_EQUAL(accepted, 3);
    CU_ASSERT_EQUAL(refused, 2);
}

static int exec_sql(const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(g_path, &db);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, 5000);
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK) fprintf(stderr, "\n%s: %s\n", sql, sqlite3_errmsg(db));
    }
    sqlite3_close(db);
    return rc;
}

static void test_database_fault(void)
{
    CU_ASSERT_EQUAL_FATAL(exec_sql("PRAGMA foreign_keys=OFF; PRAGMA legacy_alter_table=ON; "
                                   "ALTER TABLE jobs RENAME TO jobs_gone"), SQLITE_OK);
    tt_resp r = call(tt__api_tune, TUNE, NULL, NULL, "dave", TT_SCOPE_TUNE | TT_SCOPE_READ);
    CU_ASSERT_EQUAL(r.status, 503);
    CU_ASSERT_STRING_EQUAL(code_of(&r), "database_error");
    json_decref(r.json);
    r = call(tt__api_job_get, NULL, NULL, "1", NULL, 0);
    CU_ASSERT_EQUAL(r.status, 503);
    CU_ASSERT_STRING_EQUAL(code_of(&r), "database_error");
    json_decref(r.json);
    r = call(tt__api_jobs_list, NULL, NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 503);
    json_decref(r.json);
    /* the model does not need the database; /metrics degrades instead of failing */
    r = call(tt__api_predict, "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":\"M=256,N=256,K=256\",\"top\":2}",
             NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_decref(r.json);
    r = call(tt__api_metrics, NULL, NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT(r.text && strstr(r.text, "tiletune_build_info") != NULL);
    CU_ASSERT(r.text && strstr(r.text, "tiletune_jobs{") == NULL);
    free(r.text);
    /* the table comes back: the same store serves again */
    CU_ASSERT_EQUAL_FATAL(exec_sql("PRAGMA legacy_alter_table=ON; ALTER TABLE jobs_gone RENAME TO jobs"),
                          SQLITE_OK);
    r = call(tt__api_job_get, NULL, NULL, "1", NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_decref(r.json);
    r = call(tt__api_readyz, NULL, NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_decref(r.json);
    tt__api_set_runner_state(0);
    r = call(tt__api_readyz, NULL, NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 503);
    CU_ASSERT_STRING_EQUAL(code_of(&r), "unavailable");
    json_decref(r.json);
    tt__api_set_runner_state(1);
}

/* A running job shows who holds its lease; its trials show which worker measured them. */
static void test_lease_and_worker(void)
{
    tt_job j;
    tt_fx_job(&j, "gemm", "Ascend910B2", "sim", "random", NULL, "K=64,M=64,N=64,dtype=float16");
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create_running(g_store, &j, "h:1/w0", 60), TT_OK);
    tt_trial_key k = {"0123456789abcdef", j.problem_key, j.target, "sim"};
    tt_trial t;
    memset(&t, 0, sizeof t);
    t.config_key = strdup("block_M=64");
    t.config_json = strdup("{\"K_L1\":64,\"S1\":1,\"S2\":1,\"block_K\":32,\"block_M\":64,"
                           "\"block_N\":16,\"core_num\":0,\"swizzle\":4}");   /* gemm runs it */
    t.config_hash = 42;
    t.median_us = 5;
    snprintf(t.measured_by, sizeof t.measured_by, "h:1/w0");
    CU_ASSERT_EQUAL(tt_store_trial_record(g_store, &k, "gemm", j.id, 1, &t), TT_OK);
    tt_trial_clear(&t);
    char ids[32];
    snprintf(ids, sizeof ids, "%lld", (long long)j.id);
    tt_resp r = call(tt__api_job_get, NULL, NULL, ids, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "lease_owner")), "h:1/w0");
    CU_ASSERT(json_number_value(json_object_get(r.json, "lease_expires")) > j.started_at + 50);
    json_decref(r.json);
    r = call(tt__api_job_trials, NULL, NULL, ids, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_t *t0 = json_array_get(json_object_get(r.json, "trials"), 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t0, "worker")), "h:1/w0");
    json_decref(r.json);
    CU_ASSERT_EQUAL(tt_store_job_finish(g_store, j.id, "h:1/w0", TT_JOB_DONE, NULL), TT_OK);
    r = call(tt__api_job_get, NULL, NULL, ids, NULL, 0);
    CU_ASSERT_PTR_NULL(json_object_get(r.json, "lease_owner"));   /* only while running */
    json_decref(r.json);
}

/* A prediction stored as an infinity (an older daemon recorded a calibrated prediction that
 * overflowed) is answered as null: json_real refuses it, and the job, its trials and the
 * best row used to fail whole (503 out_of_memory; GET /v1/jobs left the job out). */
static void test_infinite_prediction(void)
{
    const tt_template *gt = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_template(g_cat, g_store, "gemm", NULL, &gt, NULL), TT_OK);
    const char *pk = "M=96,N=96,K=96,dtype=float16,out_dtype=float16";
    tt_job j;
    tt_fx_job(&j, "gemm", "Ascend910B2", "sim", "random", "inf", pk);
    /* the problem as a job records it: GET /v1/best reads a row's problem from it */
    j.problem_json = "{\"M\":96,\"N\":96,\"K\":96,\"dtype\":\"float16\",\"out_dtype\":\"float16\"}";
    snprintf(j.template_hash, sizeof j.template_hash, "%s", gt->hash);
    snprintf(j.backend_fp, sizeof j.backend_fp, "sim");
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create_running(g_store, &j, "h:1/w0", 60), TT_OK);
    tt_trial_key k = {gt->hash, pk, "Ascend910B2", "sim"};
    tt_trial t;
    memset(&t, 0, sizeof t);
    t.config_key = strdup("block_M=64");
    t.config_json = strdup("{\"K_L1\":64,\"S1\":1,\"S2\":1,\"block_K\":32,\"block_M\":64,"
                           "\"block_N\":16,\"core_num\":0,\"swizzle\":4}");   /* gemm runs it */
    t.config_hash = 43;
    t.median_us = 5;
    t.predicted_us = INFINITY;
    snprintf(t.measured_by, sizeof t.measured_by, "h:1/w0");
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_record(g_store, &k, "gemm", j.id, 1, &t), TT_OK);
    CU_ASSERT_EQUAL(tt_store_job_best_set(g_store, j.id, t.id, 5, INFINITY, t.config_json), TT_OK);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_job_finish(g_store, j.id, "h:1/w0", TT_JOB_DONE, NULL), TT_OK);
    char ids[32];
    snprintf(ids, sizeof ids, "%lld", (long long)j.id);
    tt_resp r = call(tt__api_job_get, NULL, NULL, ids, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_t *best = json_object_get(r.json, "best");
    CU_ASSERT(json_is_null(json_object_get(best, "predicted_us")));
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(best, "measured_us")), 5, 1e-9);
    json_decref(r.json);
    r = call(tt__api_job_trials, NULL, NULL, ids, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_t *t0 = json_array_get(json_object_get(r.json, "trials"), 0);
    CU_ASSERT(json_is_null(json_object_get(t0, "predicted_us")));
    json_decref(r.json);
    r = call(tt__api_jobs_list, NULL, "{\"owner\":\"inf\"}", NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "jobs")), 1);
    json_decref(r.json);
    r = call(tt__api_best, NULL,
             "{\"template\":\"gemm\",\"target\":\"a2\",\"backend\":\"sim\",\"M\":\"96\","
             "\"N\":\"96\",\"K\":\"96\"}", NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);   /* the best row is answered as text (bestcache.h) */
    json_t *b = r.text ? json_loads(r.text, 0, NULL) : json_incref(r.json);
    CU_ASSERT(json_is_null(json_object_get(b, "predicted_us")));
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(b, "median_us")), 5, 1e-9);
    json_decref(b);
    json_decref(r.json);
    free(r.text);
}

/* /readyz follows the runner: ready while its workers run, 503 once one has ended. */
static void test_readyz_runner(void)
{
    tt_runner_config c = {.db_url = g_path, .workers = 1, .lease_seconds = 5,
                          .poll_seconds = 0.02, .worker_name = "ready", .catalog = g_cat,
                          .max_trials = 1};
    tt_job j;
    tt_fx_job(&j, "gemm", "Ascend910B2", "model", "random", NULL,
              "K=512,M=512,N=512,dtype=float16");
    j.problem_json = (char *)"{\"M\":512,\"N\":512,\"K\":512,\"dtype\":\"float16\"}";
    j.budget_trials = 4;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create(g_store, &j), TT_OK);
    tt_runner *rn = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &rn, NULL), TT_OK);
    tt__api_set_runner(rn);
    tt_resp r = call(tt__api_readyz, NULL, NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_decref(r.json);
    for (int i = 0; i < 1000 && tt_runner_alive(rn); i++) usleep(10000);
    r = call(tt__api_readyz, NULL, NULL, NULL, NULL, 0);   /* the worker stopped (max_trials) */
    CU_ASSERT_EQUAL(r.status, 503);
    CU_ASSERT_STRING_EQUAL(code_of(&r), "unavailable");
    const char *msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT(msg && strstr(msg, "workers stopped"));
    json_decref(r.json);
    tt__api_set_runner(NULL);
    tt_runner_stop(rn);
    r = call(tt__api_readyz, NULL, NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_decref(r.json);
}

/* A simulate of ~650 000 events with a trace (no steady-state shortcut): about a second of
 * CPU, so a request that is not stopped answers 200 long after its budget ran out. */
static const char *LONG_SIM = "{\"template\":\"gemm\",\"target\":\"a2\",\"trace\":true,"
                              "\"problem\":{\"M\":4096,\"N\":4096,\"K\":1048576},"
                              "\"config\":{\"block_M\":128,\"block_N\":256,\"block_K\":16,"
                              "\"K_L1\":32,\"S1\":1,\"S2\":1}}";

typedef struct stop_after {
    int calls, after;
    tt_rc why;
} stop_after;

static int stop_after_n(void *ctx, tt_rc *why)
{
    stop_after *st = ctx;
    if (++st->calls < st->after) return 0;
    *why = st->why;
    return 1;
}

/* Issue 9 item 5: the simulator's event loop asks the request's budget, so a simulate
 * stops when its wall time is spent (422), its client left (409) or the server stops (503). */
static void test_simulate_stops(void)
{
    tt_budget b;
    memset(&b, 0, sizeof b);
    b.sim_events = (int64_t)1e12;
    b.tier = "token";
    b.deadline = tt_budget_now() + 0.05;
    g_budget = &b;
    tt_resp r = call(tt__api_simulate, LONG_SIM, NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 422);                  /* not 200 a second later */
    CU_ASSERT_STRING_EQUAL(code_of(&r), "over_budget");
    json_decref(r.json);
    static const struct { tt_rc why; int status; const char *code; } stops[] = {
        {TT_ECANCELLED, 409, "cancelled"}, {TT_EUNAVAILABLE, 503, "unavailable"}};
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++) {
        stop_after st = {0, 3, stops[i].why};   /* the first calls come before the loop */
        b.deadline = 0;
        b.cancelled = stop_after_n;
        b.ctx = &st;
        r = call(tt__api_simulate, LONG_SIM, NULL, NULL, NULL, 0);
        CU_ASSERT_EQUAL(r.status, stops[i].status);
        CU_ASSERT_STRING_EQUAL(code_of(&r), stops[i].code);
        CU_ASSERT_EQUAL(st.calls, 3);            /* asked again until it said stop, no more */
        json_decref(r.json);
    }
    g_budget = NULL;
}

/* POST /v1/tune validates everything before the job is queued: options (unknown members with
 * the nearest name, each option's type and range, the objective), the budget's form, and the
 * strategy ("" is the default, like omitted or "auto").  The same for POST /v1/predict's
 * config/configs.  Each accepted request is a job of its own token (the per-token limit). */
#define TUNE_WITH(extra) "{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\"" \
                         extra "}"
static void test_tune_refusals(void)
{
    static const struct {
        const char *body;
        int status;
        const char *path, *msg;   /* msg: a part of the message; NULL: not checked */
    } cases[] = {
        {TUNE_WITH(",\"options\":{\"topK\":4}"), 400, "options.topK",
         "unknown member \"topK\" (did you mean \"topk\"?)"},
        {TUNE_WITH(",\"options\":{\"colour\":1}"), 400, "options.colour", "unknown member"},
        {TUNE_WITH(",\"options\":{\"objective\":\"best\"}"), 400, "options.objective",
         "\"median\", \"mean\", \"min\""},
        {TUNE_WITH(",\"options\":{\"objective\":5}"), 400, "options.objective", "\"median\""},
        {TUNE_WITH(",\"options\":{\"objective\":\"recorded\"}"), 400, "options.objective",
         "only on a replay: backend"},
        {TUNE_WITH(",\"options\":{\"topk\":-5}"), 400, "options.topk",
         "must be an integer in 1..1048576"},
        {TUNE_WITH(",\"options\":{\"population\":1}"), 400, "options.population", "2..65536"},
        {TUNE_WITH(",\"options\":{\"sample\":1.5}"), 400, "options.sample", "an integer"},
        {TUNE_WITH(",\"options\":{\"max_enumerate\":0}"), 400, "options.max_enumerate",
         "1..9223372036854775807"},
        {TUNE_WITH(",\"options\":{\"remeasure\":1025}"), 400, "options.remeasure", "0..1024"},
        {TUNE_WITH(",\"options\":{\"remeasured\":[1]}"), 400, "options.remeasured", "reserved"},
        {TUNE_WITH(",\"options\":[]"), 400, "options", NULL},
        {TUNE_WITH(",\"budget\":1e18"), 400, "budget", "an integer number of trials in 1..1000000"},
        {TUNE_WITH(",\"budget\":32.0"), 400, "budget", "an integer number of trials in 1..1000000"},
        {TUNE_WITH(",\"budget\":\"many\""), 400, "budget", "an integer number of trials"},
        {TUNE_WITH(",\"budget\":0"), 400, "budget", "must be an integer in 1..1000000"},
        {TUNE_WITH(",\"budget\":{\"trials\":2000000}"), 400, "budget.trials", "1..1000000"},
        {TUNE_WITH(",\"strategy\":\"guess\""), 400, "strategy", "unknown strategy"},
        /* no problem: every input's default applies, so a missing input is named (it was
         * "missing member problem" even for a template whose inputs all have defaults) */
        {"{\"template\":\"gemm\",\"target\":\"a2\"}", 422, "problem.M", "missing"},
        /* accepted: the documented options, "" as the default strategy */
        {TUNE_WITH(",\"options\":{\"topk\":4,\"objective\":\"mean\",\"remeasure\":0,\"init\":3,"
                   "\"round\":8,\"population\":4,\"neighbours\":0,\"sample\":64,\"patience\":2,"
                   "\"max_enumerate\":9223372036854775807}"), 202, NULL, NULL},
        {TUNE_WITH(",\"strategy\":\"\""), 202, NULL, NULL},
        {TUNE_WITH(",\"budget\":{\"trials\":4,\"seconds\":1.5}"), 202, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char token[32];
        snprintf(token, sizeof token, "refusal%zu", i);
        tt_resp r = call(tt__api_tune, cases[i].body, NULL, NULL, token, TT_SCOPE_TUNE);
        const json_t *e = json_object_get(r.json, "error");
        const char *path = json_string_value(json_object_get(e, "path"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        if (r.status != cases[i].status)
            fprintf(stderr, "\ntune case %zu: %d %s: %s\n", i, r.status, path ? path : "-",
                    msg ? msg : "-");
        CU_ASSERT_EQUAL(r.status, cases[i].status);
        if (cases[i].path) CU_ASSERT_STRING_EQUAL(path ? path : "", cases[i].path);
        if (cases[i].msg) CU_ASSERT_PTR_NOT_NULL(msg ? strstr(msg, cases[i].msg) : NULL);
        if (r.status == 202 && strstr(cases[i].body, "\"strategy\":\"\"")) {   /* shown as auto */
            char ids[32];
            snprintf(ids, sizeof ids, "%lld", (long long)json_integer_value(json_object_get(r.json, "job")));
            tt_resp g = call(tt__api_job_get, NULL, NULL, ids, NULL, 0);
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g.json, "strategy")), "auto");
            CU_ASSERT_EQUAL(json_object_get(json_object_get(g.json, "strategy_ran"), "default"),
                            json_true());
            json_decref(g.json);
        }
        json_decref(r.json);
    }
    /* predict without a problem: the defaults, so the first input without one is named */
    tt_resp np = call(tt__api_predict, "{\"template\":\"gemm\",\"target\":\"a2\"}", NULL,
                      NULL, NULL, 0);
    CU_ASSERT_EQUAL(np.status, 422);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(np.json, "error"),
                                                             "path")), "problem.M");
    json_decref(np.json);
    /* predict: config and configs together would drop one of them */
    tt_resp r = call(tt__api_predict, "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":"
                     "\"M=256,N=256,K=256\",\"config\":{},\"configs\":[]}", NULL, NULL, NULL, 0);
    CU_ASSERT_EQUAL(r.status, 400);
    CU_ASSERT_STRING_EQUAL(code_of(&r), "invalid_argument");
    const char *msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT_PTR_NOT_NULL(msg ? strstr(msg, "\"config\" or \"configs\", not both") : NULL);
    json_decref(r.json);
}

/* The API's option ranges (api_jobs.c, read back from its refusal of a far too small value)
 * are the ones tt_strategy_new() applies when the job starts: at each bound both accept, one
 * step outside both refuse, so a job accepted at submission never fails on its options. */
static void test_tune_options_agree(void)
{
    static const char *const names[] = {"topk", "round", "population", "neighbours", "sample",
                                        "patience", "init", "max_enumerate"};
    const tt_template *t = NULL;
    const tt_target *tgt = tt_catalog_target(g_cat, "a2");
    CU_ASSERT_EQUAL_FATAL(tt_catalog_template(g_cat, g_store, "gemm", NULL, &t, NULL), TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, "M=64,N=64,K=64", slots, NULL), TT_OK);
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, slots, &caps, &sp, NULL), TT_OK);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char body[256];
        snprintf(body, sizeof body, TUNE_WITH(",\"options\":{\"%s\":-9223372036854775807}"), names[i]);
        tt_resp r = call(tt__api_tune, body, NULL, NULL, "agree", TT_SCOPE_TUNE);
        const char *msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
        long long lo = 0, hi = 0;
        CU_ASSERT_EQUAL(r.status, 400);
        CU_ASSERT_EQUAL_FATAL(msg ? sscanf(msg, "must be an integer in %lld..%lld", &lo, &hi) : 0, 2);
        json_decref(r.json);
        const long long probe[4] = {lo - 1, lo, hi, hi == INT64_MAX ? hi : hi + 1};
        for (int k = 0; k < 4; k++) {
            json_t *o = json_pack("{s:I}", names[i], (json_int_t)probe[k]);
            tt_strategy_config cfg = {.name = "random", .t = t, .tgt = tgt, .space = sp,
                                      .problem = slots, .seed = 1, .budget = 4, .options = o};
            tt_strategy *st = NULL;
            tt_errinfo e;
            tt_errinfo_clear(&e);
            int strategy_ok = tt_strategy_new(&cfg, &st, &e) == TT_OK;
            tt_strategy_free(st);
            json_decref(o);
            int api_ok = probe[k] >= lo && probe[k] <= hi;
            if (strategy_ok != api_ok)
                fprintf(stderr, "\noption %s=%lld: api %d, strategy %d (%s)\n", names[i],
                        probe[k], api_ok, strategy_ok, e.msg);
            CU_ASSERT_EQUAL(strategy_ok, api_ok);
        }
    }
    tt_space_free(sp);
}

static const tt_test_case cases[] = {{"job_cycle", test_job_cycle},
                                     {"job_limit", test_job_limit},
                                     {"database_fault", test_database_fault},
                                     {"lease_and_worker", test_lease_and_worker},
                                     {"infinite_prediction", test_infinite_prediction},
                                     {"readyz_runner", test_readyz_runner},
                                     {"simulate_stops", test_simulate_stops},
                                     {"tune_refusals", test_tune_refusals},
                                     {"tune_options_agree", test_tune_options_agree},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"api_handlers", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_integrity.c - no lost or duplicated data, no template takeover (issue 9 items 1-4),
 * against the real daemon:
 *   - a template whose params are declared in non-alphabetical order (the T1 convolution
 *     space) keeps its config keys across a restart: re-importing the same T4 file adds 0
 *     rows, re-running the same replay job reuses every trial (before and after a restart);
 *   - kill -9 during a 4362-row import leaves all of it or nothing, and no import job is ever
 *     handed to a worker ("unknown backend 'import:...'");
 *   - 20 concurrent submissions against a per-token limit of 8: exactly 8 accepted, the rest
 *     429, on SQLite and on PostgreSQL (a throwaway cluster);
 *   - a `tune` token cannot replace a built-in template (403, also inline in a tune request
 *     and after a restart); user templates belong to their token (another tune token: 403,
 *     admin: allowed); a new version's jobs never reuse the old version's trials;
 *   - the SQLite file renamed or deleted under a running daemon: /readyz 503 naming the file,
 *     a submission refused (503 database_error, no job), one error line in the log; renamed
 *     back: ready again and a job runs to its end.
 */
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pg_cluster.h"
#include "tt_daemon.h"
#include "tt_test.h"

static tt_daemon D;
static tt_pg_cluster PG;

static int suite_clean(void)
{
    tt_daemon_cleanup(&D);
    return 0;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One integer from SQL on the daemon's SQLite database (-1 on error). */
static long long sql_int(const tt_daemon *d, const char *sql)
{
    sqlite3 *db = NULL;
    long long v = -1;
    if (sqlite3_open(d->db_url + strlen("sqlite:"), &db) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 10000);
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

/* POST a file of the shared datasets to /v1/import?query; the answer in *r. */
static int import_file(const tt_daemon *d, const char *name, const char *query, tt_hres *r)
{
    char *path = tt_test_shared(name);
    size_t len = 0;
    char *body = tt_test_read_file(path, &len);
    free(path);
    if (!body) return -1;
    char url[256];
    snprintf(url, sizeof url, "/v1/import%s%s", query ? "?" : "", query ? query : "");
    int rc = tt_daemon_req(d, "POST", url, TT_TOKEN_TUNE, body, len, r);
    free(body);
    return rc;
}

static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }
static long long jint(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* The T1 convolution space as template "convolution" (params not in alphabetical order). */
static void import_t1(const tt_daemon *d)
{
    tt_hres r;
    CU_ASSERT_EQUAL_FATAL(import_file(d, "datasets/convolution.t1.json", "template=convolution", &r), 0);
    CU_ASSERT(r.status == 201 || r.status == 200);
    tt_hres_free(&r);
}

/* ---- 1. one canonical config key across restarts ------------------------------------ */
static void test_reimport_after_restart(void)
{
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&D, "{\"workers\": 0}"), 0);
    import_t1(&D);
    tt_hres r;
    CU_ASSERT_EQUAL_FATAL(import_file(&D, "datasets/convolution_A100.t4.json.gz",
                                      "template=convolution&target=a100", &r), 0);
    CU_ASSERT_EQUAL(r.status, 201);
    CU_ASSERT_EQUAL(jint(r.json, "added"), 4362);
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    CU_ASSERT_EQUAL_FATAL(tt_daemon_restart(&D), 0);
    CU_ASSERT_EQUAL_FATAL(import_file(&D, "datasets/convolution_A100.t4.json.gz",
                                      "template=convolution&target=a100", &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(jint(r.json, "added"), 0);
    CU_ASSERT_EQUAL(jint(r.json, "skipped"), 4362);
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(sql_int(&D, "SELECT COUNT(*) FROM trials"), 4362);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    tt_daemon_cleanup(&D);
}

static const char *REPLAY_JOB =
    "{\"template\":\"convolution\",\"problem\":{},\"target\":\"a2\",\"backend\":"
    "\"replay:convolution_A100\",\"strategy\":\"random\",\"budget\":{\"trials\":8},\"seed\":3}";

/* Run REPLAY_JOB to the end; the number of its trials that were reused. */
static long long run_replay(const tt_daemon *d)
{
    long long id = tt_daemon_submit(d, REPLAY_JOB);
    CU_ASSERT_FATAL(id > 0);
    const char *st = tt_daemon_wait_job(d, id, tt_daemon_slow(60));
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(st, "done");
    static const char *const f[] = {"reused", NULL};
    json_t *tr = tt_daemon_trials(d, id, f);
    CU_ASSERT_FATAL(tr != NULL);
    CU_ASSERT_EQUAL(json_array_size(tr), 8);
    long long reused = 0;
    size_t i;
    json_t *t;
    json_array_foreach(tr, i, t) reused += json_is_true(json_object_get(t, "reused"));
    json_decref(tr);
    return reused;
}

static void test_rerun_reuses_after_restart(void)
{
    char *ds = tt_test_shared("datasets");
    char extra[1024];
    snprintf(extra, sizeof extra, "{\"workers\": 1, \"datasets_dir\": \"%s\"}", ds);
    free(ds);
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&D, extra), 0);
    import_t1(&D);
    CU_ASSERT_EQUAL(run_replay(&D), 0);
    CU_ASSERT_EQUAL(run_replay(&D), 8);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    CU_ASSERT_EQUAL_FATAL(tt_daemon_restart(&D), 0);
    CU_ASSERT_EQUAL(run_replay(&D), 8);
    CU_ASSERT_EQUAL(sql_int(&D, "SELECT COUNT(*) FROM trials"), 8);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    tt_daemon_cleanup(&D);
}

/* ---- 2. imports are atomic and never handed to workers -------------------------------- */
/* Start the MI250X import in a child process; returns its pid. */
static pid_t import_async(const tt_daemon *d)
{
    pid_t pid = fork();
    if (pid == 0) {
        tt_hres r;
        int rc = import_file(d, "datasets/convolution_MI250X.t4.json.gz", "template=convolution&target=mi250x", &r);
        tt_hres_free(&r);
        _exit(rc == 0 ? 0 : 1);
    }
    return pid;
}

static void test_import_kill9_atomic(void)
{
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&D, "{\"workers\": 1, \"poll_seconds\": 0.05, \"max_body_bytes\": 4194304}"), 0);
    import_t1(&D);
    /* how long a whole 4362-row import takes here */
    tt_hres r;
    double t0 = mono();
    CU_ASSERT_EQUAL_FATAL(import_file(&D, "datasets/convolution_A100.t4.json.gz",
                                      "template=convolution&target=a100", &r), 0);
    double full = mono() - t0;
    CU_ASSERT_EQUAL(r.status, 201);
    tt_hres_free(&r);
    const double at[] = {0.25, 0.5, 0.75, 0.9};
    int cut = 0;
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        pid_t child = import_async(&D);
        CU_ASSERT_FATAL(child > 0);
        usleep((useconds_t)(at[k] * full * 1e6));
        CU_ASSERT_EQUAL(tt_daemon_signal(&D, SIGKILL), 128 + SIGKILL);
        waitpid(child, NULL, 0);
        long long n = sql_int(&D, "SELECT COUNT(*) FROM trials t JOIN trial_keys k ON "
                                  "k.id = t.key_id WHERE k.backend_fp <> "
                                  "(SELECT backend_fp FROM jobs WHERE id = 1)");
        CU_ASSERT(n == 0 || n == 4362);
        if (n == 0) cut++;
        CU_ASSERT_EQUAL_FATAL(tt_daemon_restart(&D), 0);
        usleep(300 * 1000);   /* a worker would have claimed a stranded import by now */
        CU_ASSERT_EQUAL(sql_int(&D, "SELECT COUNT(*) FROM jobs WHERE strategy = 'import' "
                                    "AND state <> 'done'"), 0);
        if (n == 4362) break;
    }
    fprintf(stderr, "\n  import (%.0f ms whole) cut by kill -9 %d time(s), never half-stored\n",
            full * 1e3, cut);
    /* and a complete import afterwards stores every record exactly once */
    CU_ASSERT_EQUAL_FATAL(import_file(&D, "datasets/convolution_MI250X.t4.json.gz",
                                      "template=convolution&target=mi250x", &r), 0);
    CU_ASSERT(r.status == 200 || r.status == 201);
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(sql_int(&D, "SELECT COUNT(*) FROM trials"), 2 * 4362);
    CU_ASSERT_EQUAL(sql_int(&D, "SELECT COUNT(*) FROM jobs WHERE state = 'failed'"), 0);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    tt_daemon_cleanup(&D);
}

/* ---- 3. the per-token job limit under concurrent submissions ------------------------ */
#define NSUBMIT 20
typedef struct sub {
    const tt_daemon *d;
    pthread_barrier_t *go;
    long status;
} sub;

static void *sub_main(void *arg)
{
    sub *x = arg;
    static const char *job =
        "{\"template\":\"gemm\",\"problem\":{\"M\":256,\"N\":256,\"K\":256},\"target\":\"a2\","
        "\"backend\":\"sim\",\"strategy\":\"random\",\"budget\":{\"trials\":4}}";
    pthread_barrier_wait(x->go);
    tt_hres r;
    x->status = tt_daemon_req(x->d, "POST", "/v1/tune", TT_TOKEN_TUNE, job, strlen(job), &r) == 0
                    ? r.status : 0;
    tt_hres_free(&r);
    return NULL;
}

static void limit_round(const char *extra)
{
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&D, extra), 0);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, NSUBMIT);
    sub x[NSUBMIT];
    pthread_t th[NSUBMIT];
    for (int i = 0; i < NSUBMIT; i++) {
        x[i] = (sub){&D, &go, 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, sub_main, &x[i]), 0);
    }
    int ok = 0, limited = 0;
    for (int i = 0; i < NSUBMIT; i++) {
        pthread_join(th[i], NULL);
        ok += x[i].status == 202;
        limited += x[i].status == 429;
    }
    pthread_barrier_destroy(&go);
    CU_ASSERT_EQUAL(ok, 8);
    CU_ASSERT_EQUAL(limited, NSUBMIT - 8);
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", "/v1/jobs?state=queued", TT_TOKEN_TUNE, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "jobs")), 8);
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    tt_daemon_cleanup(&D);
}

static void test_job_limit_sqlite(void)
{
    limit_round("{\"workers\": 0, \"max_jobs_per_token\": 8}");
}

static void test_job_limit_postgres(void)
{
    char err[512], url[600];
    CU_ASSERT_EQUAL_FATAL(tt_pg_cluster_createdb(&PG, "tt_limit", url, sizeof url, err, sizeof err), 0);
    char extra[900];
    snprintf(extra, sizeof extra, "{\"workers\": 0, \"max_jobs_per_token\": 8, \"db\": \"%s\"}",
             url);
    limit_round(extra);
}

static int pg_init(void)
{
    char err[512];
    if (tt_pg_cluster_start(&PG, err, sizeof err) != 0) {
        fprintf(stderr, "\nPostgreSQL suite: %s\n", err);
        return -1;
    }
    return 0;
}
static int pg_clean(void)
{
    tt_daemon_cleanup(&D);
    tt_pg_cluster_stop(&PG);
    return 0;
}

/* ---- 4. built-ins are read-only; user templates belong to their token ---------------- */
static long put_template(const tt_daemon *d, const char *name, const char *token, json_t *doc)
{
    char *body = json_dumps(doc, JSON_COMPACT);
    char path[128];
    snprintf(path, sizeof path, "/v1/templates/%s", name);
    tt_hres r;
    long st = tt_daemon_req(d, "PUT", path, token, body, strlen(body), &r) == 0 ? r.status : 0;
    if (st == 403) CU_ASSERT_STRING_EQUAL(tt_hres_code(&r), "forbidden");
    tt_hres_free(&r);
    free(body);
    return st;
}

static char *template_hash(const tt_daemon *d, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/templates/%s", name);
    tt_hres r;
    char *h = NULL;
    if (tt_daemon_req(d, "GET", path, NULL, NULL, 0, &r) == 0 && r.status == 200)
        h = strdup(jstr(r.json, "hash"));
    tt_hres_free(&r);
    return h;
}

/* A sim job of template `tname` (small space); returns the count of reused trials. */
static long long run_sim(const tt_daemon *d, const char *tname)
{
    char job[512];
    snprintf(job, sizeof job, "{\"template\":\"%s\",\"problem\":{\"M\":128,\"N\":128,\"K\":128},"
             "\"target\":\"a2\",\"backend\":\"sim\",\"strategy\":\"random\",\"budget\":"
             "{\"trials\":4},\"seed\":5}", tname);
    long long id = tt_daemon_submit(d, job);
    CU_ASSERT_FATAL(id > 0);
    const char *st = tt_daemon_wait_job(d, id, tt_daemon_slow(60));
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(st, "done");
    static const char *const f[] = {"reused", NULL};
    json_t *tr = tt_daemon_trials(d, id, f);
    long long reused = 0;
    size_t i;
    json_t *t;
    json_array_foreach(tr, i, t) reused += json_is_true(json_object_get(t, "reused"));
    CU_ASSERT_EQUAL(json_array_size(tr), 4);
    json_decref(tr);
    return reused;
}

static void test_templates_owned(void)
{
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&D, "{\"workers\": 1}"), 0);
    char *builtin = template_hash(&D, "gemm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(builtin);
    json_t *gemm = tt_test_load_json("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gemm);
    json_t *evil = json_deep_copy(gemm);
    json_object_set_new(evil, "description", json_string("not the real gemm"));
    json_array_append_new(json_object_get(evil, "constraints"), json_string("block_M == 16"));
    CU_ASSERT_EQUAL(put_template(&D, "gemm", TT_TOKEN_TUNE, evil), 403);
    CU_ASSERT_EQUAL(put_template(&D, "gemm", TT_TOKEN_ADMIN, evil), 403);   /* read-only */
    /* nor inline in a tune request */
    json_t *req = json_pack("{s:O, s:{s:i, s:i, s:i}, s:s, s:s}", "template", evil, "problem",
                            "M", 128, "N", 128, "K", 128, "target", "a2", "backend", "sim");
    char *body = json_dumps(req, JSON_COMPACT);
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/tune", TT_TOKEN_TUNE, body, strlen(body), &r), 0);
    CU_ASSERT_EQUAL(r.status, 403);
    tt_hres_free(&r);
    free(body);
    json_decref(req);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    CU_ASSERT_EQUAL_FATAL(tt_daemon_restart(&D), 0);
    char *after = template_hash(&D, "gemm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(after);
    CU_ASSERT_STRING_EQUAL(after, builtin);
    free(after);

    /* a user template: its owner and admins may store new versions, other tokens may not */
    json_t *v1 = json_deep_copy(gemm);
    json_object_set_new(v1, "name", json_string("mine"));
    json_t *v2 = json_deep_copy(v1);
    json_object_set_new(v2, "version", json_string("2"));
    json_array_append_new(json_object_get(v2, "constraints"), json_string("S1 <= 3"));
    json_t *v3 = json_deep_copy(v2);
    json_object_set_new(v3, "version", json_string("3"));
    CU_ASSERT_EQUAL(put_template(&D, "mine", TT_TOKEN_TUNE, v1), 201);
    char *h1 = template_hash(&D, "mine");
    CU_ASSERT_EQUAL(run_sim(&D, "mine"), 0);
    CU_ASSERT_EQUAL(run_sim(&D, "mine"), 4);
    CU_ASSERT_EQUAL(put_template(&D, "mine", TT_TOKEN_TUNE2, v2), 403);
    char *still = template_hash(&D, "mine");
    CU_ASSERT_STRING_EQUAL(still, h1);
    CU_ASSERT_EQUAL(put_template(&D, "mine", TT_TOKEN_TUNE, v2), 201);
    char *h2 = template_hash(&D, "mine");
    CU_ASSERT_STRING_NOT_EQUAL(h2, h1);
    /* the new version's trials are its own: nothing of version 1 is reused */
    CU_ASSERT_EQUAL(run_sim(&D, "mine"), 0);
    CU_ASSERT_EQUAL(sql_int(&D, "SELECT COUNT(DISTINCT k.template_hash) FROM trials t "
                                  "JOIN trial_keys k ON k.id = t.key_id"), 2);
    CU_ASSERT_EQUAL(put_template(&D, "mine", TT_TOKEN_ADMIN, v3), 201);
    CU_ASSERT_EQUAL(put_template(&D, "mine", TT_TOKEN_TUNE2, v1), 403);
    free(h1);
    free(h2);
    free(still);
    free(builtin);
    json_decref(v1);
    json_decref(v2);
    json_decref(v3);
    json_decref(evil);
    json_decref(gemm);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    tt_daemon_cleanup(&D);
}

/* ---- 5. the database file deleted or moved under the daemon -------------------------- */
/* Lines of the daemon's log holding both needles. */
static int log_count(const tt_daemon *d, const char *a, const char *b)
{
    char *log = tt_test_read_file(d->log_path, NULL);
    int n = 0;
    for (char *line = log ? strtok(log, "\n") : NULL; line; line = strtok(NULL, "\n"))
        n += strstr(line, a) && strstr(line, b);
    free(log);
    return n;
}

/* Wait until the log has n lines holding a and b (the workers poll every 0.5 s). */
static int log_wait(const tt_daemon *d, const char *a, const char *b, int n)
{
    double end = mono() + tt_daemon_slow(20);
    while (log_count(d, a, b) < n && mono() < end) usleep(50 * 1000);
    return log_count(d, a, b);
}

static const char *SIM_JOB = "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":{\"M\":512,"
                             "\"N\":512,\"K\":512,\"dtype\":\"float16\"},\"backend\":\"sim\","
                             "\"strategy\":\"random\",\"budget\":{\"trials\":4}}";

/* The file gone from its path: not ready, naming it; a submission refused, no job made. */
static void check_db_gone(const tt_daemon *d, const char *path)
{
    tt_hres r;
    CU_ASSERT_EQUAL_FATAL(tt_daemon_req(d, "GET", "/readyz", NULL, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.status, 503);
    char want[700];
    snprintf(want, sizeof want, "the database file %s was deleted or moved", path);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, want));
    tt_hres_free(&r);
    CU_ASSERT_EQUAL_FATAL(tt_daemon_req(d, "POST", "/v1/tune", TT_TOKEN_TUNE, SIM_JOB,
                                        strlen(SIM_JOB), &r), 0);
    CU_ASSERT_EQUAL(r.status, 503);
    CU_ASSERT_STRING_EQUAL(tt_hres_code(&r), "database_error");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.body, "was deleted or moved"));
    tt_hres_free(&r);
    /* a template that cannot be stored: the inline one's path is "template" (it was
     * "template.template"), PUT's has none (it was "template", not a member of the body) */
    static const char *doc = "{\"tiletune\":1,\"name\":\"gone\",\"params\":{\"a\":[1,2]}}";
    char body[256];
    snprintf(body, sizeof body, "{\"template\":%s,\"target\":\"a2\",\"backend\":\"sim\"}", doc);
    CU_ASSERT_EQUAL_FATAL(tt_daemon_req(d, "POST", "/v1/tune", TT_TOKEN_TUNE, body,
                                        strlen(body), &r), 0);
    CU_ASSERT_EQUAL(r.status, 503);
    CU_ASSERT_STRING_EQUAL(tt_hres_code(&r), "database_error");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(r.json, "error"),
                                                             "path")), "template");
    tt_hres_free(&r);
    CU_ASSERT_EQUAL_FATAL(tt_daemon_req(d, "PUT", "/v1/templates/gone", TT_TOKEN_TUNE, doc,
                                        strlen(doc), &r), 0);
    CU_ASSERT_EQUAL(r.status, 503);
    CU_ASSERT_PTR_NULL(json_object_get(json_object_get(r.json, "error"), "path"));
    tt_hres_free(&r);
}

static void test_db_file_moved(void)
{
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&D, NULL), 0);
    const char *path = D.db_url + strlen("sqlite:");
    char moved[600];
    snprintf(moved, sizeof moved, "%s.moved", path);
    long long id = tt_daemon_submit(&D, SIM_JOB);
    CU_ASSERT_STRING_EQUAL(tt_daemon_wait_job(&D, id, tt_daemon_slow(60)), "done");
    const char *needle = "was deleted or moved";

    CU_ASSERT_EQUAL_FATAL(rename(path, moved), 0);   /* mv */
    check_db_gone(&D, path);
    CU_ASSERT_EQUAL(log_wait(&D, " error ", needle, 1), 1);
    CU_ASSERT_EQUAL_FATAL(rename(moved, path), 0);   /* and back: ready again */
    CU_ASSERT_EQUAL(log_wait(&D, " notice ", "the file is back", 1), 1);
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", "/readyz", NULL, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_hres_free(&r);
    id = tt_daemon_submit(&D, SIM_JOB);
    CU_ASSERT_STRING_EQUAL(tt_daemon_wait_job(&D, id, tt_daemon_slow(60)), "done");

    CU_ASSERT_EQUAL_FATAL(unlink(path), 0);   /* rm */
    check_db_gone(&D, path);
    CU_ASSERT_EQUAL(log_wait(&D, " error ", needle, 2), 2);
    usleep(1500 * 1000);   /* more claims of the workers: still the one line */
    check_db_gone(&D, path);
    CU_ASSERT_EQUAL(log_count(&D, " error ", needle), 2);
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);   /* nothing made at the path */
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", "/v1/jobs", TT_TOKEN_READ, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "jobs")), 2);
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(tt_daemon_stop(&D), 0);
    tt_daemon_cleanup(&D);
}

static const tt_test_case cases[] = {
    {"reimport_after_restart", test_reimport_after_restart},
    {"rerun_reuses_after_restart", test_rerun_reuses_after_restart},
    {"import_kill9_atomic", test_import_kill9_atomic},
    {"job_limit_sqlite", test_job_limit_sqlite},
    {"templates_owned", test_templates_owned},
    {"db_file_moved", test_db_file_moved},
    {NULL, NULL}};
static const tt_test_case pg_cases[] = {{"job_limit_postgres", test_job_limit_postgres},
                                        {NULL, NULL}};
static const tt_test_suite suites[] = {{"integrity", NULL, suite_clean, cases},
                                       {"integrity_postgres", pg_init, pg_clean, pg_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_store.c - the store (daemon/store/store.h): one table of cases run against both engines,
 * SQLite in temp files and PostgreSQL in a throwaway cluster (tests/helpers/pg_cluster.h).
 *
 * Every case opens a fresh database (SQLite: a new file; PostgreSQL: CREATE DATABASE).  The
 * PostgreSQL suite fails (does not skip) when the server binaries are missing.
 */
#include <jansson.h>
#include <libpq-fe.h>
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
#include "store.h"
#include "store_fixture.h"
#include "tt_test.h"

static void job_init(tt_job *j, const char *tpl, const char *target, const char *owner,
                     const char *pkey)
{
    tt_fx_job(j, tpl, target, "sim", "model-topk", owner, pkey);
    snprintf(j->template_hash, sizeof j->template_hash, "0123456789abcdef");
    snprintf(j->backend_fp, sizeof j->backend_fp, "sim");
    j->problem_json = (char *)"{\"M\":64}";
    j->budget_trials = 8;
    j->seed = 7;
}

static int64_t new_job(tt_store *s, const char *tpl, const char *target, const char *owner,
                       const char *pkey)
{
    tt_job j;
    job_init(&j, tpl, target, owner, pkey);
    CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_OK);
    CU_ASSERT(j.id > 0);
    return j.id;
}

/* A trial with malloc'd fields (the store may replace them). */
static void trial_init(tt_trial *t, const char *cfg, uint64_t hash, tt_rc status, double us)
{
    memset(t, 0, sizeof *t);
    t->config_key = strdup(cfg);
    char json[160];
    snprintf(json, sizeof json, "{\"cfg\":\"%s\"}", cfg);
    t->config_json = strdup(json);
    t->config_hash = hash;
    t->status = status;
    t->median_us = status == TT_OK ? us : 0;
    t->spread_us = us / 100;
    t->min_us = us * 0.99;
    t->samples_json = status == TT_OK ? strdup("[1.5,2.5]") : NULL;
    t->error = status == TT_OK ? NULL : strdup("compiler said no");
    t->predicted_us = us * 1.1;
    t->compile_s = 0.5;
    t->measure_s = 0.25;
}

static tt_rc record(tt_store *s, const tt_trial_key *k, int64_t job, int64_t seq,
                    const char *cfg, uint64_t hash, tt_rc status, double us, tt_trial *out)
{
    tt_trial t;
    trial_init(&t, cfg, hash, status, us);
    tt_rc rc = tt_store_trial_record(s, k, "gemm", job, seq, &t);
    if (out) *out = t;
    else tt_trial_clear(&t);
    return rc;
}

static const tt_trial_key KEY = {"0123456789abcdef", "M=64", "a2", "sim"};

/* ---- cases -------------------------------------------------------------------------- */
static void test_open_twice(void)
{
    tt_store *s = tt_fx_open_fresh();
    int v = tt_store_schema_version(s);
    CU_ASSERT(v >= 1);
    CU_ASSERT_EQUAL(tt_store_ping(s), TT_OK);
    CU_ASSERT_EQUAL(tt_store_template_put(s, "keep", "1111222233334444", "1", "{}"), TT_OK);
    tt_store_close(s);
    tt_errinfo e;
    for (int i = 0; i < 2; i++) {   /* migrations are applied once; data survives */
        CU_ASSERT_EQUAL_FATAL(tt_store_open(tt_fx_url, &s, &e), TT_OK);
        CU_ASSERT_EQUAL(tt_store_schema_version(s), v);
        char *doc = NULL;
        CU_ASSERT_EQUAL(tt_store_template_get(s, "keep", NULL, &doc, NULL), TT_OK);
        free(doc);
        tt_store_close(s);
    }
    tt_store_close(NULL);
    if (tt_fx_engine == TT_STORE_SQLITE) {   /* the other spellings of the same file */
        const char *path = tt_fx_url + strlen("sqlite:");
        char u[800];
        static const char *const forms[][2] = {
            {"sqlite://", "?synchronous=full"}, {"", ""}, {"sqlite:", "?synchronous=normal"}};
        for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
            snprintf(u, sizeof u, "%s%s%s", forms[i][0], path, forms[i][1]);
            s = NULL;
            CU_ASSERT_EQUAL_FATAL(tt_store_open(u, &s, &e), TT_OK);
            char *doc = NULL;
            CU_ASSERT_EQUAL(tt_store_template_get(s, "keep", NULL, &doc, NULL), TT_OK);
            free(doc);
            tt_store_close(s);
        }
    }
    /* a database migrated by a newer build is refused, not damaged */
    CU_ASSERT_FATAL(tt_fx_raw_exec("INSERT INTO schema_migrations (version, name, applied_at) "
                             "VALUES (999, '999_future', 0)"));
    s = (tt_store *)&e;
    CU_ASSERT_EQUAL(tt_store_open(tt_fx_url, &s, &e), TT_EDB);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "newer"));
}

static void test_bad_urls(void)
{
    static const char *const urls[] = {
        "",
        "mysql://root@localhost/tt",
        "sqlite:/nonexistent-dir/deeper/tt.db",
        "sqlite:",
        "sqlite:/tmp/tt-never.db?synchronous=bogus",
        "postgresql://postgres@/postgres?host=/nonexistent-dir&port=1&connect_timeout=2",
        "postgres://nobody@127.0.0.1:1/tt?connect_timeout=2",
    };
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        tt_store *s = (tt_store *)&s;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        CU_ASSERT_EQUAL(tt_store_open(urls[i], &s, &e), TT_EDB);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_EQUAL(e.rc, TT_EDB);
        CU_ASSERT(e.msg[0] != '\0');
    }
    CU_ASSERT_STRING_EQUAL(tt_store_errmsg(NULL), "no store");
}

static void test_templates(void)
{
    tt_store *s = tt_fx_open_fresh();
    char *doc = NULL, hash[17];
    CU_ASSERT_EQUAL(tt_store_template_get(s, "gemm", NULL, &doc, hash), TT_ENOTFOUND);
    CU_ASSERT_PTR_NULL(doc);
    CU_ASSERT_EQUAL(tt_store_template_put(s, "gemm", "aaaaaaaaaaaaaaaa", "1", "{\"v\":1}"), TT_OK);
    CU_ASSERT_EQUAL(tt_store_template_put(s, "gemm", "bbbbbbbbbbbbbbbb", "2", "{\"v\":2}"), TT_OK);
    /* idempotent: re-putting the first does not make it the latest again */
    CU_ASSERT_EQUAL(tt_store_template_put(s, "gemm", "aaaaaaaaaaaaaaaa", "1", "{\"v\":1}"), TT_OK);
    CU_ASSERT_EQUAL(tt_store_template_put(s, "fa", "cccccccccccccccc", "1", "{\"fa\":1}"), TT_OK);
    CU_ASSERT_EQUAL(tt_store_template_get(s, "gemm", NULL, &doc, hash), TT_OK);
    CU_ASSERT_STRING_EQUAL(doc, "{\"v\":2}");
    CU_ASSERT_STRING_EQUAL(hash, "bbbbbbbbbbbbbbbb");
    free(doc);
    CU_ASSERT_EQUAL(tt_store_template_get(s, "gemm", "aaaaaaaaaaaaaaaa", &doc, hash), TT_OK);
    CU_ASSERT_STRING_EQUAL(doc, "{\"v\":1}");
    free(doc);
    CU_ASSERT_EQUAL(tt_store_template_get(s, "gemm", "dddddddddddddddd", &doc, NULL),
                    TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_template_put(s, NULL, "x", "1", "{}"), TT_EINVAL);
    char *list = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_template_list(s, &list), TT_OK);
    json_t *a = json_loads(list, 0, NULL);
    CU_ASSERT_FATAL(json_is_array(a));
    CU_ASSERT_EQUAL(json_array_size(a), 2);
    json_t *first = json_array_get(a, 0), *second = json_array_get(a, 1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(first, "name")), "fa");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(second, "name")), "gemm");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(second, "hash")),
                           "bbbbbbbbbbbbbbbb");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(second, "version")), "2");
    CU_ASSERT(json_real_value(json_object_get(second, "updated_at")) > 1e9);
    json_decref(a);
    free(list);
    tt_store_close(s);
}

static void test_jobs(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t a = new_job(s, "gemm", "a2", "alice", "M=1");
    int64_t b = new_job(s, "gemm", "a3", "bob", "M=2");
    int64_t c = new_job(s, "fa", "a2", "alice", "M=3");
    CU_ASSERT(a < b && b < c);
    tt_job j;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, b, &j), TT_OK);
    CU_ASSERT_STRING_EQUAL(j.template_name, "gemm");
    CU_ASSERT_STRING_EQUAL(j.target, "a3");
    CU_ASSERT_STRING_EQUAL(j.owner, "bob");
    CU_ASSERT_STRING_EQUAL(j.problem_key, "M=2");
    CU_ASSERT_STRING_EQUAL(j.problem_json, "{\"M\":64}");
    CU_ASSERT_PTR_NULL(j.options_json);
    CU_ASSERT_EQUAL(j.state, TT_JOB_QUEUED);
    CU_ASSERT_EQUAL(j.budget_trials, 8);
    CU_ASSERT_EQUAL(j.seed, 7);
    CU_ASSERT(j.created_at > 1e9);
    CU_ASSERT_EQUAL(j.started_at, 0);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, 9999, &j), TT_ENOTFOUND);

    static const struct {
        int state;
        const char *tpl, *target, *owner;
        int64_t limit, offset;
        size_t n;
        int64_t first_is;   /* 0: a, 1: b, 2: c */
    } cases[] = {
        {-1, NULL, NULL, NULL, 0, 0, 3, 2},      {-1, "gemm", NULL, NULL, 0, 0, 2, 1},
        {-1, NULL, "a2", NULL, 0, 0, 2, 2},      {-1, NULL, NULL, "alice", 0, 0, 2, 2},
        {-1, "gemm", "a2", "alice", 0, 0, 1, 0}, {TT_JOB_QUEUED, NULL, NULL, NULL, 2, 0, 2, 2},
        {-1, NULL, NULL, NULL, 2, 2, 1, 0},      {TT_JOB_DONE, NULL, NULL, NULL, 0, 0, 0, 0},
        {-1, "nope", NULL, NULL, 0, 0, 0, 0},
    };
    int64_t ids[3] = {a, b, c};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_job_filter f = {cases[i].state, cases[i].tpl, cases[i].target, cases[i].owner,
                           cases[i].limit, cases[i].offset};
        tt_job *jobs = NULL;
        size_t n = 99;
        CU_ASSERT_EQUAL(tt_store_job_list(s, &f, &jobs, &n), TT_OK);
        CU_ASSERT_EQUAL(n, cases[i].n);
        if (n && n == cases[i].n) CU_ASSERT_EQUAL(jobs[0].id, ids[cases[i].first_is]);
        for (size_t k = 1; k < n; k++) CU_ASSERT(jobs[k - 1].id > jobs[k].id);
        for (size_t k = 0; k < n; k++) tt_job_clear(&jobs[k]);
        free(jobs);
    }
    tt_job *jobs = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_job_list(s, NULL, &jobs, &n), TT_OK);
    CU_ASSERT_EQUAL(n, 3);
    for (size_t k = 0; k < n; k++) tt_job_clear(&jobs[k]);
    free(jobs);

    CU_ASSERT_EQUAL(tt_store_job_cancel(s, c), TT_OK);
    int64_t counts[TT_JOB__COUNT];
    CU_ASSERT_EQUAL(tt_store_job_counts(s, NULL, counts), TT_OK);
    CU_ASSERT_EQUAL(counts[TT_JOB_QUEUED], 2);
    CU_ASSERT_EQUAL(counts[TT_JOB_CANCELLED], 1);
    CU_ASSERT_EQUAL(counts[TT_JOB_RUNNING], 0);
    CU_ASSERT_EQUAL(tt_store_job_counts(s, "alice", counts), TT_OK);
    CU_ASSERT_EQUAL(counts[TT_JOB_QUEUED], 1);
    CU_ASSERT_EQUAL(counts[TT_JOB_CANCELLED], 1);

    CU_ASSERT_EQUAL(tt_store_job_progress(s, a, 32, 5), TT_OK);
    CU_ASSERT_EQUAL(tt_store_job_get(s, a, &j), TT_OK);
    CU_ASSERT_EQUAL(j.planned, 32);
    CU_ASSERT_EQUAL(j.done, 5);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_progress(s, 9999, 1, 1), TT_ENOTFOUND);
    job_init(&j, "gemm", "a2", "", NULL);
    CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_EINVAL);

    CU_ASSERT_STRING_EQUAL(tt_job_state_name(TT_JOB_CANCELLED), "cancelled");
    CU_ASSERT_EQUAL(tt_job_state_parse("running"), TT_JOB_RUNNING);
    CU_ASSERT_EQUAL(tt_job_state_parse("bogus"), -1);
    CU_ASSERT_EQUAL(tt_job_state_parse(NULL), -1);
    tt_store_close(s);
}

static void test_claim_lease(void)
{
    tt_store *s = tt_fx_open_fresh();
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "w1", 60, &j), TT_ENOTFOUND);
    int64_t a = new_job(s, "gemm", "a2", "", "M=1");
    int64_t b = new_job(s, "gemm", "a2", "", "M=2");
    CU_ASSERT_EQUAL_FATAL(tt_store_job_claim(s, "w1", 60, &j), TT_OK);
    CU_ASSERT_EQUAL(j.id, a);   /* oldest first */
    CU_ASSERT_EQUAL(j.state, TT_JOB_RUNNING);
    CU_ASSERT_EQUAL(j.claimed_running, 0);   /* it was queued */
    CU_ASSERT_STRING_EQUAL(j.lease_owner, "w1");
    CU_ASSERT(j.started_at > 1e9);
    CU_ASSERT(j.lease_expires > j.started_at + 50);
    tt_job_clear(&j);
    /* b is claimed with a tiny lease that expires; then another owner takes it over */
    CU_ASSERT_EQUAL_FATAL(tt_store_job_claim(s, "w2", 0.01, &j), TT_OK);
    CU_ASSERT_EQUAL(j.id, b);
    double started = j.started_at;
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "w3", 60, &j), TT_ENOTFOUND);
    tt_fx_sleep(0.05);
    CU_ASSERT_EQUAL_FATAL(tt_store_job_claim(s, "w3", 60, &j), TT_OK);
    CU_ASSERT_EQUAL(j.id, b);
    CU_ASSERT_STRING_EQUAL(j.lease_owner, "w3");
    CU_ASSERT_EQUAL(j.started_at, started);   /* started_at kept on take-over */
    CU_ASSERT_EQUAL(j.claimed_running, 1);
    CU_ASSERT_STRING_EQUAL(j.claimed_from, "w2");   /* whose lease expired */
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_renew(s, b, "w2", 60), TT_EEXISTS);   /* lost it */
    CU_ASSERT_EQUAL(tt_store_job_finish(s, b, "w2", TT_JOB_DONE, NULL), TT_EEXISTS);
    CU_ASSERT_EQUAL(tt_store_job_renew(s, b, "w3", 120), TT_OK);
    CU_ASSERT_EQUAL(tt_store_job_renew(s, 9999, "w3", 120), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_job_finish(s, b, "w3", TT_JOB_QUEUED, NULL), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_store_job_finish(s, b, "w3", TT_JOB_FAILED, "it's \"broken\""), TT_OK);
    CU_ASSERT_EQUAL(tt_store_job_get(s, b, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_FAILED);
    CU_ASSERT_STRING_EQUAL(j.error, "it's \"broken\"");
    CU_ASSERT(j.finished_at >= j.started_at);
    CU_ASSERT_STRING_EQUAL(j.lease_owner, "");
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_finish(s, b, "w3", TT_JOB_DONE, NULL), TT_EEXISTS);
    CU_ASSERT_EQUAL(tt_store_job_renew(s, b, "w3", 60), TT_EEXISTS);
    /* release_all: a's long lease is dropped, so a new worker claims it at once */
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "w4", 60, &j), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_job_release_all(s), TT_OK);
    CU_ASSERT_EQUAL(tt_store_job_renew(s, a, "w1", 60), TT_EEXISTS);
    CU_ASSERT_EQUAL_FATAL(tt_store_job_claim(s, "w4", 60, &j), TT_OK);
    CU_ASSERT_EQUAL(j.id, a);
    CU_ASSERT_EQUAL(j.claimed_running, 1);   /* a resume after a restart */
    CU_ASSERT_STRING_EQUAL(j.claimed_from, "");
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_finish(s, a, "w4", TT_JOB_DONE, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "", 60, &j), TT_EINVAL);
    tt_store_close(s);
}

/* A job created running for its creator (POST /v1/import): never claimed by a worker, ended
 * by its owner; trials say who measured them (schema 002). */
static void test_create_running_measured_by(void)
{
    tt_store *s = tt_fx_open_fresh();
    CU_ASSERT(tt_store_schema_version(s) >= 2);   /* 002_measured_by */
    tt_job j;
    job_init(&j, "gemm", "a2", "tok", "M=64");
    CU_ASSERT_EQUAL(tt_store_job_create_running(s, &j, "", 60), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_store_job_create_running(s, &j, "api", 0), TT_EINVAL);
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create_running(s, &j, "api", 60), TT_OK);
    int64_t id = j.id;
    CU_ASSERT(id > 0);
    CU_ASSERT_EQUAL(j.state, TT_JOB_RUNNING);
    CU_ASSERT_STRING_EQUAL(j.lease_owner, "api");
    CU_ASSERT(j.lease_expires > j.started_at + 50);
    tt_job c;
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "w1", 60, &c), TT_ENOTFOUND);   /* held */
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, id, &c), TT_OK);
    CU_ASSERT_EQUAL(c.state, TT_JOB_RUNNING);
    CU_ASSERT_STRING_EQUAL(c.lease_owner, "api");
    CU_ASSERT_STRING_EQUAL(c.owner, "tok");
    CU_ASSERT(c.started_at > 1e9);
    tt_job_clear(&c);
    CU_ASSERT_EQUAL(tt_store_job_renew(s, id, "api", 60), TT_OK);
    /* measured_by is stored, listed, and kept by a later job that reuses the measurement */
    tt_trial t;
    trial_init(&t, "A", 1, TT_OK, 10.0);
    snprintf(t.measured_by, sizeof t.measured_by, "host:1/w0");
    CU_ASSERT_EQUAL(tt_store_trial_record(s, &KEY, "gemm", id, 1, &t), TT_OK);
    tt_trial_clear(&t);
    int64_t other = new_job(s, "gemm", "a2", "", "M=64");
    trial_init(&t, "A", 1, TT_OK, 9.0);
    snprintf(t.measured_by, sizeof t.measured_by, "host:2/w5");
    CU_ASSERT_EQUAL(tt_store_trial_record(s, &KEY, "gemm", other, 1, &t), TT_OK);
    CU_ASSERT_EQUAL(t.reused, 1);
    CU_ASSERT_STRING_EQUAL(t.measured_by, "host:1/w0");
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(record(s, &KEY, other, 2, "B", 2, TT_OK, 8.0, NULL), TT_OK);
    tt_trial *rows = NULL;
    size_t n = 0;
    int64_t total = 0;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_list(s, other, 0, 10, &rows, &n, &total), TT_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(rows[0].measured_by, "host:1/w0");
    CU_ASSERT_STRING_EQUAL(rows[1].measured_by, "");   /* not given: unknown */
    for (size_t i = 0; i < n; i++) tt_trial_clear(&rows[i]);
    free(rows);
    CU_ASSERT_EQUAL(tt_store_job_finish(s, id, "w1", TT_JOB_DONE, NULL), TT_EEXISTS);
    CU_ASSERT_EQUAL(tt_store_job_finish(s, id, "api", TT_JOB_DONE, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, id, &c), TT_OK);
    CU_ASSERT_EQUAL(c.state, TT_JOB_DONE);
    CU_ASSERT_EQUAL(c.done, 1);
    tt_job_clear(&c);
    tt_store_close(s);
}

static void test_cancel(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t a = new_job(s, "gemm", "a2", "", "M=1");
    int64_t b = new_job(s, "gemm", "a2", "", "M=2");
    tt_job j;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_claim(s, "w1", 60, &j), TT_OK);
    CU_ASSERT_EQUAL(j.id, a);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_cancel(s, a), TT_OK);   /* running -> cancelled */
    CU_ASSERT_EQUAL(tt_store_job_cancel(s, b), TT_OK);   /* queued -> cancelled */
    CU_ASSERT_EQUAL(tt_store_job_renew(s, a, "w1", 60), TT_EEXISTS);   /* worker stops */
    CU_ASSERT_EQUAL(tt_store_job_finish(s, a, "w1", TT_JOB_DONE, NULL), TT_EEXISTS);
    CU_ASSERT_EQUAL(tt_store_job_cancel(s, a), TT_EEXISTS);
    CU_ASSERT_EQUAL(tt_store_job_cancel(s, 4242), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_job_get(s, b, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_CANCELLED);
    CU_ASSERT(j.finished_at > 1e9);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "w2", 60, &j), TT_ENOTFOUND);
    tt_store_close(s);
}

static void test_trials(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t j1 = new_job(s, "gemm", "a2", "", "M=64");
    int64_t j2 = new_job(s, "gemm", "a2", "", "M=64");
    const uint64_t HB = 0xF00DFACE12345678ull;   /* high bit set: signed in the database */
    tt_trial t;
    CU_ASSERT_EQUAL_FATAL(record(s, &KEY, j1, 0, "A", 1, TT_OK, 10.0, &t), TT_OK);
    CU_ASSERT(t.id > 0);
    CU_ASSERT_EQUAL(t.reused, 0);
    CU_ASSERT_EQUAL(t.job_id, j1);
    int64_t ida = t.id;
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(record(s, &KEY, j1, 1, "B", HB, TT_OK, 8.0, NULL), TT_OK);
    CU_ASSERT_EQUAL(record(s, &KEY, j1, 2, "C", 3, TT_EBUILD, 0, NULL), TT_OK);
    CU_ASSERT_EQUAL(record(s, &KEY, j1, 3, "D", 4, TT_OK, 12.0, NULL), TT_OK);
    /* resumed job records seq 1 again (with other data): nothing changes */
    CU_ASSERT_EQUAL_FATAL(record(s, &KEY, j1, 1, "E", 5, TT_OK, 1.0, &t), TT_OK);
    CU_ASSERT_STRING_EQUAL(t.config_key, "B");
    CU_ASSERT_EQUAL(t.median_us, 8.0);
    CU_ASSERT_EQUAL(t.seq, 1);
    tt_trial_clear(&t);
    tt_job j;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, j1, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 4);
    CU_ASSERT_EQUAL(j.best_us, 8.0);
    CU_ASSERT_STRING_EQUAL(j.best_config_json, "{\"cfg\":\"B\"}");
    CU_ASSERT_DOUBLE_EQUAL(j.best_pred_us, 8.8, 1e-9);
    tt_job_clear(&j);
    /* the same config from a second job is reused, filled from the stored measurement */
    CU_ASSERT_EQUAL_FATAL(record(s, &KEY, j2, 0, "B", HB, TT_OK, 99.0, &t), TT_OK);
    CU_ASSERT_EQUAL(t.reused, 1);
    CU_ASSERT_EQUAL(t.median_us, 8.0);
    CU_ASSERT_EQUAL(t.job_id, j1);
    CU_ASSERT_EQUAL(t.config_hash, HB);
    CU_ASSERT_STRING_EQUAL(t.samples_json, "[1.5,2.5]");
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(record(s, &KEY, j2, 1, "C", 3, TT_OK, 1.0, &t), TT_OK);
    CU_ASSERT_EQUAL(t.reused, 1);
    CU_ASSERT_EQUAL(t.status, TT_EBUILD);   /* the recorded failure, not the new claim */
    CU_ASSERT_STRING_EQUAL(t.error, "compiler said no");
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, j2, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 2);
    CU_ASSERT_EQUAL(j.best_us, 8.0);
    tt_job_clear(&j);
    /* lookup */
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_lookup(s, &KEY, 1, &t), TT_OK);
    CU_ASSERT_EQUAL(t.id, ida);
    CU_ASSERT_EQUAL(t.status, TT_OK);
    CU_ASSERT_EQUAL(t.median_us, 10.0);
    CU_ASSERT_DOUBLE_EQUAL(t.spread_us, 0.1, 1e-12);
    CU_ASSERT_EQUAL(t.compile_s, 0.5);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, HB, &t), TT_OK);
    CU_ASSERT_STRING_EQUAL(t.config_key, "B");
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 77, &t), TT_ENOTFOUND);
    tt_trial_key other = KEY;
    other.target = "a3";
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &other, 1, &t), TT_ENOTFOUND);
    /* unknown job: nothing is written (one transaction) */
    CU_ASSERT_EQUAL(record(s, &KEY, 4242, 0, "Z", 88, TT_OK, 1.0, NULL), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 88, &t), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(record(s, NULL, j1, 9, "Z", 88, TT_OK, 1.0, NULL), TT_EINVAL);

    /* best: only faster results replace it; any backend vs one backend */
    tt_best_query q = {"gemm", "a2", "M=64", NULL, NULL};
    tt_best b;
    CU_ASSERT_EQUAL_FATAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 8.0);
    CU_ASSERT_STRING_EQUAL(b.config_json, "{\"cfg\":\"B\"}");
    CU_ASSERT_STRING_EQUAL(b.problem_json, "{\"M\":64}");
    CU_ASSERT_STRING_EQUAL(b.backend_fp, "sim");
    CU_ASSERT_EQUAL(b.job_id, j1);
    tt_best_clear(&b);
    tt_trial_key fast = KEY;
    fast.backend_fp = "cmd:npu@1234";
    CU_ASSERT_EQUAL(record(s, &fast, j2, 2, "A", 1, TT_OK, 5.0, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 5.0);
    CU_ASSERT_STRING_EQUAL(b.backend_fp, "cmd:npu@1234");
    tt_best_clear(&b);
    q.backend_fp = "sim";
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 8.0);
    tt_best_clear(&b);
    q.template_hash = "ffffffffffffffff";
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_ENOTFOUND);
    q.template_hash = NULL;
    q.backend_fp = NULL;
    q.problem_key = "M=128";
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_ENOTFOUND);
    q.problem_key = NULL;
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_EINVAL);
    tt_best *rows = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_best_list(s, &q, &rows, &n), TT_OK);
    CU_ASSERT_EQUAL(n, 2);
    if (n == 2) CU_ASSERT(rows[0].median_us <= rows[1].median_us);
    for (size_t i = 0; i < n; i++) tt_best_clear(&rows[i]);
    free(rows);
    q.backend_fp = "sim";
    CU_ASSERT_EQUAL(tt_store_best_list(s, &q, &rows, &n), TT_OK);
    CU_ASSERT_EQUAL(n, 1);
    for (size_t i = 0; i < n; i++) tt_best_clear(&rows[i]);
    free(rows);
    tt_store_close(s);
}

/* A failure inside tt_store_trial_record (a trigger raising on the job_trials insert)
 * leaves nothing behind: no measurement, no best, no progress. */
static void test_record_atomic(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t j1 = new_job(s, "gemm", "a2", "", "M=64");
    CU_ASSERT_EQUAL(record(s, &KEY, j1, 0, "A", 1, TT_OK, 10.0, NULL), TT_OK);
    int ok = tt_fx_engine == TT_STORE_SQLITE
                 ? tt_fx_raw_exec("CREATE TRIGGER boom BEFORE INSERT ON job_trials WHEN NEW.seq = 13 "
                            "BEGIN SELECT RAISE(ABORT, 'injected fault'); END")
                 : tt_fx_raw_exec("CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ "
                            "BEGIN IF NEW.seq = 13 THEN RAISE EXCEPTION 'injected fault'; "
                            "END IF; RETURN NEW; END $$; CREATE TRIGGER boom BEFORE INSERT ON "
                            "job_trials FOR EACH ROW EXECUTE FUNCTION boom()");
    CU_ASSERT_FATAL(ok);
    CU_ASSERT_EQUAL(record(s, &KEY, j1, 13, "F", 6, TT_OK, 1.0, NULL), TT_EDB);
    CU_ASSERT_PTR_NOT_NULL(strstr(tt_store_errmsg(s), "injected fault"));
    tt_trial t;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 6, &t), TT_ENOTFOUND);
    tt_best_query q = {"gemm", "a2", "M=64", NULL, NULL};
    tt_best b;
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 10.0);
    tt_best_clear(&b);
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, j1, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 1);
    CU_ASSERT_EQUAL(j.best_us, 10.0);
    tt_job_clear(&j);
    /* the connection is usable after the rollback */
    CU_ASSERT_EQUAL(record(s, &KEY, j1, 14, "F", 6, TT_OK, 1.0, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 1.0);
    tt_best_clear(&b);
    tt_store_close(s);
}

static void test_trial_list_stats(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t j1 = new_job(s, "gemm", "a2", "", "M=64");
    for (int i = 0; i < 5; i++) {
        char cfg[8];
        snprintf(cfg, sizeof cfg, "c%d", i);
        CU_ASSERT_EQUAL(record(s, &KEY, j1, i, cfg, (uint64_t)(100 + i),
                               i == 3 ? TT_EINFEASIBLE : TT_OK, 10.0 + i, NULL), TT_OK);
    }
    static const struct {
        int64_t offset, limit;
        size_t n;
        int64_t first_seq;
    } cases[] = {{0, 2, 2, 0}, {2, 2, 2, 2}, {4, 2, 1, 4}, {10, 2, 0, -1}, {0, 0, 5, 0},
                 {-3, 1, 1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_trial *ts = NULL;
        size_t n = 99;
        int64_t total = 0;
        CU_ASSERT_EQUAL(tt_store_trial_list(s, j1, cases[i].offset, cases[i].limit, &ts, &n,
                                            &total), TT_OK);
        CU_ASSERT_EQUAL(total, 5);
        CU_ASSERT_EQUAL(n, cases[i].n);
        if (n) CU_ASSERT_EQUAL(ts[0].seq, cases[i].first_seq);
        for (size_t k = 0; k < n; k++) {
            CU_ASSERT_EQUAL(ts[k].seq, cases[i].first_seq + (int64_t)k);
            CU_ASSERT_EQUAL(ts[k].status, ts[k].seq == 3 ? TT_EINFEASIBLE : TT_OK);
            tt_trial_clear(&ts[k]);
        }
        free(ts);
    }
    tt_trial *ts = NULL;
    size_t n = 0;
    int64_t total = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, 4242, 0, 10, &ts, &n, &total), TT_ENOTFOUND);
    CU_ASSERT_PTR_NULL(ts);
    char *js = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_stats(s, &js), TT_OK);
    json_t *o = json_loads(js, 0, NULL);
    CU_ASSERT_FATAL(json_is_object(o));
    json_t *sim = json_object_get(o, "sim");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(sim, "ok")), 4);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(sim, "infeasible")), 1);
    CU_ASSERT_EQUAL(json_object_size(o), 1);
    json_decref(o);
    free(js);
    tt_store_close(s);
}

static void test_calib_tokens(void)
{
    tt_store *s = tt_fx_open_fresh();
    char *c = NULL;
    CU_ASSERT_EQUAL(tt_store_calib_get(s, "a2", "sim", &c), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_calib_put(s, "a2", "sim", "{\"k\":1}", 10, 0.05), TT_OK);
    CU_ASSERT_EQUAL(tt_store_calib_put(s, "a2", "sim", "{\"k\":2}", 20, 0.04), TT_OK);
    CU_ASSERT_EQUAL(tt_store_calib_get(s, "a2", "sim", &c), TT_OK);
    CU_ASSERT_STRING_EQUAL(c, "{\"k\":2}");
    free(c);
    CU_ASSERT_EQUAL(tt_store_calib_get(s, "a3", "sim", &c), TT_ENOTFOUND);

    char name[64], scopes[64];
    CU_ASSERT_EQUAL(tt_store_token_find(s, "aa11", name, scopes), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_token_put(s, "ci", "aa11", "read"), TT_OK);
    CU_ASSERT_EQUAL(tt_store_token_find(s, "aa11", name, scopes), TT_OK);
    CU_ASSERT_STRING_EQUAL(name, "ci");
    CU_ASSERT_STRING_EQUAL(scopes, "read");
    CU_ASSERT_EQUAL(tt_store_token_put(s, "ci", "bb22", "read,tune"), TT_OK);   /* rotate */
    CU_ASSERT_EQUAL(tt_store_token_find(s, "aa11", name, scopes), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_token_find(s, "bb22", name, scopes), TT_OK);
    CU_ASSERT_STRING_EQUAL(scopes, "read,tune");
    CU_ASSERT_EQUAL(tt_store_token_put(s, "other", "bb22", "admin"), TT_EEXISTS);
    CU_ASSERT(tt_store_errmsg(s)[0] != '\0');
    CU_ASSERT_EQUAL(tt_store_token_put(s, "", "cc", "x"), TT_EINVAL);
    tt_store_close(s);
}

static void test_baselines(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t j1 = new_job(s, "gemm", "a2", "", "M=64");
    tt_best_query q = {"gemm", "a2", NULL, NULL, NULL};
    size_t np = 99;
    CU_ASSERT_EQUAL(tt_store_baseline_put(s, "v1", &q, &np), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(np, 0);
    CU_ASSERT_EQUAL(record(s, &KEY, j1, 0, "A", 1, TT_OK, 10.0, NULL), TT_OK);
    tt_trial_key k2 = KEY;
    k2.problem_key = "M=128";
    CU_ASSERT_EQUAL(record(s, &k2, 0, 0, "A", 1, TT_OK, 20.0, NULL), TT_OK);   /* no job */
    CU_ASSERT_EQUAL(tt_store_baseline_put(s, "v1", &q, &np), TT_OK);
    CU_ASSERT_EQUAL(np, 2);
    /* a faster trial moves best but not the pinned baseline */
    CU_ASSERT_EQUAL(record(s, &KEY, j1, 1, "B", 2, TT_OK, 7.0, NULL), TT_OK);
    tt_baseline b;
    CU_ASSERT_EQUAL_FATAL(tt_store_baseline_get(s, "v1", "gemm", "M=64", "a2", NULL, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 10.0);
    CU_ASSERT_STRING_EQUAL(b.config_json, "{\"cfg\":\"A\"}");
    CU_ASSERT_STRING_EQUAL(b.problem_json, "{\"M\":64}");
    CU_ASSERT_STRING_EQUAL(b.name, "v1");
    tt_baseline_clear(&b);
    CU_ASSERT_EQUAL(tt_store_baseline_get(s, "v1", "gemm", "M=64", "a2", "other", &b),
                    TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_baseline_get(s, "v2", "gemm", "M=64", "a2", NULL, &b),
                    TT_ENOTFOUND);
    /* re-pinning one problem replaces only that row */
    q.problem_key = "M=64";
    CU_ASSERT_EQUAL(tt_store_baseline_put(s, "v1", &q, &np), TT_OK);
    CU_ASSERT_EQUAL(np, 1);
    CU_ASSERT_EQUAL(tt_store_baseline_get(s, "v1", "gemm", "M=64", "a2", "sim", &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 7.0);
    tt_baseline_clear(&b);
    tt_baseline *rows = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_baseline_list(s, "v1", &rows, &n), TT_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(rows[0].problem_key, "M=128");
    CU_ASSERT_EQUAL(rows[0].median_us, 20.0);
    CU_ASSERT_PTR_NULL(rows[0].problem_json);   /* recorded outside a job */
    CU_ASSERT_STRING_EQUAL(rows[1].problem_key, "M=64");
    for (size_t i = 0; i < n; i++) tt_baseline_clear(&rows[i]);
    free(rows);
    CU_ASSERT_EQUAL(tt_store_baseline_list(s, "none", &rows, &n), TT_OK);
    CU_ASSERT_EQUAL(n, 0);
    free(rows);
    tt_store_close(s);
}

/* Quotes, semicolons and SQL fragments are data, never code. */
static void test_quotes(void)
{
    tt_store *s = tt_fx_open_fresh();
    static const char *const evil[] = {
        "o'brien", "say \"hi\"", "x'); DROP TABLE jobs;--", "back\\slash", "$1 ? :name @x",
        "\xc3\xa9t\xc3\xa9 \xe2\x9c\x93",
    };
    for (size_t i = 0; i < sizeof evil / sizeof evil[0]; i++) {
        const char *e = evil[i];
        char hash[17];
        snprintf(hash, sizeof hash, "%016zx", i);
        CU_ASSERT_EQUAL(tt_store_template_put(s, e, hash, e, e), TT_OK);
        char *doc = NULL;
        CU_ASSERT_EQUAL(tt_store_template_get(s, e, NULL, &doc, NULL), TT_OK);
        if (doc) CU_ASSERT_STRING_EQUAL(doc, e);
        free(doc);
        int64_t id = new_job(s, e, e, e, e);
        tt_job j;
        CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, id, &j), TT_OK);
        CU_ASSERT_STRING_EQUAL(j.template_name, e);
        CU_ASSERT_STRING_EQUAL(j.owner, e);
        CU_ASSERT_STRING_EQUAL(j.problem_key, e);
        tt_job_clear(&j);
        tt_job_filter f = {-1, e, NULL, e, 0, 0};
        tt_job *jobs = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL(tt_store_job_list(s, &f, &jobs, &n), TT_OK);
        CU_ASSERT_EQUAL(n, 1);
        for (size_t k = 0; k < n; k++) tt_job_clear(&jobs[k]);
        free(jobs);
        tt_trial_key k = {hash, e, e, e};
        CU_ASSERT_EQUAL(record(s, &k, id, 0, e, 1, TT_OK, 3.0, NULL), TT_OK);
        CU_ASSERT_EQUAL(tt_store_token_put(s, e, e, e), TT_OK);
        char name[64];
        CU_ASSERT_EQUAL(tt_store_token_find(s, e, name, NULL), TT_OK);
        CU_ASSERT_STRING_EQUAL(name, e);
    }
    int64_t counts[TT_JOB__COUNT];
    CU_ASSERT_EQUAL(tt_store_job_counts(s, NULL, counts), TT_OK);
    CU_ASSERT_EQUAL(counts[TT_JOB_QUEUED], (int64_t)(sizeof evil / sizeof evil[0]));
    tt_store_close(s);
}

/* ---- concurrency: 4 threads, 4 connections, every job claimed exactly once ----------- */
#define CC_JOBS 40
#define CC_THREADS 4
static int64_t cc_claimed_by[CC_JOBS + 1];
static int64_t cc_first_id;
static int cc_errors;
static pthread_mutex_t cc_mu = PTHREAD_MUTEX_INITIALIZER;

static void *cc_worker(void *arg)
{
    intptr_t me = (intptr_t)arg;
    tt_store *s = NULL;
    if (tt_store_open(tt_fx_url, &s, NULL) != TT_OK) {
        pthread_mutex_lock(&cc_mu);
        cc_errors++;
        pthread_mutex_unlock(&cc_mu);
        return NULL;
    }
    char owner[16];
    snprintf(owner, sizeof owner, "t%d", (int)me);
    for (int misses = 0; misses < 3;) {
        tt_job j;
        tt_rc rc = tt_store_job_claim(s, owner, 600, &j);
        if (rc == TT_ENOTFOUND) {
            misses++;
            continue;
        }
        pthread_mutex_lock(&cc_mu);
        if (rc != TT_OK) {
            cc_errors++;
        } else {
            int64_t k = j.id - cc_first_id;
            if (k < 0 || k >= CC_JOBS || cc_claimed_by[k]) cc_errors++;
            else cc_claimed_by[k] = me;
            if (strcmp(j.lease_owner, owner) != 0) cc_errors++;
        }
        pthread_mutex_unlock(&cc_mu);
        tt_job_clear(&j);
        if (rc != TT_OK) break;
    }
    tt_store_close(s);
    return NULL;
}

static void test_concurrent_claim(void)
{
    tt_store *s = tt_fx_open_fresh();
    memset(cc_claimed_by, 0, sizeof cc_claimed_by);
    cc_errors = 0;
    for (int i = 0; i < CC_JOBS; i++) {
        int64_t id = new_job(s, "gemm", "a2", "", "M=1");
        if (i == 0) cc_first_id = id;
    }
    pthread_t th[CC_THREADS];
    for (intptr_t i = 0; i < CC_THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, cc_worker, (void *)(i + 1)), 0);
    for (int i = 0; i < CC_THREADS; i++) pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(cc_errors, 0);
    /* a worker may give up early (SKIP LOCKED can miss a row); the rest stays claimable */
    tt_job j;
    while (tt_store_job_claim(s, "main", 600, &j) == TT_OK) {
        int64_t k = j.id - cc_first_id;
        CU_ASSERT(k >= 0 && k < CC_JOBS && cc_claimed_by[k] == 0);
        if (k >= 0 && k < CC_JOBS) cc_claimed_by[k] = 99;
        tt_job_clear(&j);
    }
    int unclaimed = 0, by_threads = 0;
    for (int i = 0; i < CC_JOBS; i++) {
        if (!cc_claimed_by[i]) unclaimed++;
        if (cc_claimed_by[i] >= 1 && cc_claimed_by[i] <= CC_THREADS) by_threads++;
    }
    CU_ASSERT_EQUAL(unclaimed, 0);
    CU_ASSERT(by_threads >= CC_JOBS / 2);
    int64_t counts[TT_JOB__COUNT];
    CU_ASSERT_EQUAL(tt_store_job_counts(s, NULL, counts), TT_OK);
    CU_ASSERT_EQUAL(counts[TT_JOB_RUNNING], CC_JOBS);
    tt_store_close(s);
}

/* 4 connections open a database nobody has migrated yet, at once: one migrates, all work. */
static int co_rc[CC_THREADS];
static int co_version[CC_THREADS];

static void *co_worker(void *arg)
{
    intptr_t i = (intptr_t)arg;
    tt_store *s = NULL;
    tt_errinfo e;
    co_rc[i] = tt_store_open(tt_fx_url, &s, &e);
    if (co_rc[i]) fprintf(stderr, "\nconcurrent open: %s\n", e.msg);
    if (co_rc[i] == TT_OK) {
        co_version[i] = tt_store_schema_version(s);
        char name[16];
        snprintf(name, sizeof name, "tpl%d", (int)i);
        co_rc[i] = tt_store_template_put(s, name, "0123456789abcdef", "1", "{}");
        if (co_rc[i]) fprintf(stderr, "\nconcurrent put: %s\n", tt_store_errmsg(s));
    }
    tt_store_close(s);
    return NULL;
}

static void test_concurrent_open(void)
{
    tt_fx_fresh_url();   /* a new, empty database: not opened through the store yet */
    pthread_t th[CC_THREADS];
    for (intptr_t i = 0; i < CC_THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, co_worker, (void *)i), 0);
    for (int i = 0; i < CC_THREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < CC_THREADS; i++) {
        CU_ASSERT_EQUAL(co_rc[i], TT_OK);
        CU_ASSERT(co_version[i] >= 1);
    }
    tt_store *s = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(tt_fx_url, &s, &e), TT_OK);
    char *list = NULL;
    CU_ASSERT_EQUAL(tt_store_template_list(s, &list), TT_OK);
    json_t *a = json_loads(list ? list : "", 0, NULL);
    CU_ASSERT_EQUAL(json_array_size(a), CC_THREADS);
    json_decref(a);
    free(list);
    tt_store_close(s);
}

/* 4 connections record into one job at once, half of the configs shared between threads
 * (insert races resolve to one measurement): the counters still add up. */
#define CR_PER 12
static int64_t cr_job;
static int cr_errors, cr_reused;

static void *cr_worker(void *arg)
{
    intptr_t me = (intptr_t)arg;
    tt_store *s = NULL;
    int errors = 0, reused = 0;
    if (tt_store_open(tt_fx_url, &s, NULL) != TT_OK) errors++;
    for (int i = 0; s && i < CR_PER; i++) {
        char cfg[32];
        int shared = i % 2 == 0;   /* even steps: the same config in every thread */
        snprintf(cfg, sizeof cfg, shared ? "s%d" : "t%d_%d", shared ? i : (int)me, i);
        uint64_t h = shared ? (uint64_t)i : (uint64_t)(1000 * (me + 1) + i);
        tt_trial t;
        trial_init(&t, cfg, h, TT_OK, 50.0 - (double)i - (double)me * 0.01);
        tt_rc rc = tt_store_trial_record(s, &KEY, "gemm", cr_job, me * 100 + i, &t);
        if (rc != TT_OK) {
            fprintf(stderr, "\nconcurrent record: %s\n", tt_store_errmsg(s));
            errors++;
        }
        reused += t.reused;
        tt_trial_clear(&t);
    }
    tt_store_close(s);
    pthread_mutex_lock(&cc_mu);
    cr_errors += errors;
    cr_reused += reused;
    pthread_mutex_unlock(&cc_mu);
    return NULL;
}

static void test_concurrent_record(void)
{
    tt_store *s = tt_fx_open_fresh();
    cr_job = new_job(s, "gemm", "a2", "", "M=64");
    cr_errors = cr_reused = 0;
    pthread_t th[CC_THREADS];
    for (intptr_t i = 0; i < CC_THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, cr_worker, (void *)i), 0);
    for (int i = 0; i < CC_THREADS; i++) pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(cr_errors, 0);
    /* each shared config is measured once and reused by the other threads */
    CU_ASSERT_EQUAL(cr_reused, (CC_THREADS - 1) * (CR_PER / 2));
    tt_job j;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, cr_job, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, CC_THREADS * CR_PER);
    CU_ASSERT(j.best_us > 0 && j.best_us <= 50.0 - (CR_PER - 1) + 1e-9);
    tt_job_clear(&j);
    tt_trial *ts = NULL;
    size_t n = 0;
    int64_t total = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, cr_job, 0, 1000, &ts, &n, &total), TT_OK);
    CU_ASSERT_EQUAL(total, CC_THREADS * CR_PER);
    for (size_t i = 0; i < n; i++) tt_trial_clear(&ts[i]);
    free(ts);
    tt_store_close(s);
}

/* ---- durability: a child recording trials is killed with SIGKILL --------------------- */
/* The child: records trials of job *arg and reports each seq on wfd once committed. */
static void crash_writer(tt_store *cs, int wfd, void *arg)
{
    int64_t job = *(const int64_t *)arg;
    for (int64_t seq = 0; seq < 100000; seq++) {
        char cfg[32];
        snprintf(cfg, sizeof cfg, "cfg%lld", (long long)seq);
        tt_trial t;
        trial_init(&t, cfg, (uint64_t)seq * 2654435761u, TT_OK, 100.0 - (double)seq * 1e-3);
        if (tt_store_trial_record(cs, &KEY, "gemm", job, seq, &t) != TT_OK) _exit(4);
        tt_trial_clear(&t);
        if (write(wfd, &seq, sizeof seq) != (ssize_t)sizeof seq) _exit(5);
    }
}

static void test_crash_durability(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t job = new_job(s, "gemm", "a2", "", "M=64");
    tt_store_close(s);
    int rfd = -1;
    pid_t pid = tt_fx_fork_writer(crash_writer, &job, &rfd);
    int64_t seq, got = 0, last = -1;
    int killed = 0;
    while (read(rfd, &seq, sizeof seq) == (ssize_t)sizeof seq) {
        CU_ASSERT_EQUAL(seq, last + 1);
        last = seq;
        got++;
        if (got == 25 && !killed) {
            kill(pid, SIGKILL);
            killed = 1;
        }
    }
    close(rfd);
    int st = 0;
    waitpid(pid, &st, 0);
    CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    CU_ASSERT(got >= 25);
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(tt_fx_url, &s, &e), TT_OK);
    tt_trial *ts = NULL;
    size_t n = 0;
    int64_t total = 0;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_list(s, job, 0, 1000000, &ts, &n, &total), TT_OK);
    /* every reported trial is there, in order; at most one more committed unreported */
    CU_ASSERT((int64_t)n >= got && (int64_t)n <= got + 1);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(ts[i].seq, (int64_t)i);
        tt_trial_clear(&ts[i]);
    }
    free(ts);
    tt_job j;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, job, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, total);   /* counter and links committed together */
    CU_ASSERT(j.best_trial > 0);
    tt_job_clear(&j);
    tt_store_close(s);
}

/* PostgreSQL: the server ends the session (restart, failover); the call that hits the dead
 * link fails with TT_EDB, the next one reconnects and re-prepares its statements. */
static void test_pg_reconnect(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t a = new_job(s, "gemm", "a2", "", "M=1");
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, a, &j), TT_OK);   /* statement now prepared */
    tt_job_clear(&j);
    CU_ASSERT_FATAL(tt_fx_raw_exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                             "datname = current_database() AND pid <> pg_backend_pid()"));
    tt_fx_sleep(0.1);
    CU_ASSERT_EQUAL(tt_store_job_get(s, a, &j), TT_EDB);
    CU_ASSERT(tt_store_errmsg(s)[0] != '\0');
    CU_ASSERT_EQUAL(tt_store_job_get(s, a, &j), TT_OK);
    CU_ASSERT_EQUAL(j.id, a);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(record(s, &KEY, a, 0, "A", 1, TT_OK, 3.0, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_store_ping(s), TT_OK);
    tt_store_close(s);
}

/* Re-measurement: samples appended to a trial, median recomputed, best re-evaluated (a
 * re-measured best that got slower loses its place), once per (job, trial). */
static void test_trial_append(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t a = new_job(s, "gemm", "a2", "", "M=64");
    tt_trial ta, tb;
    CU_ASSERT_EQUAL(record(s, &KEY, a, 1, "A", 1, TT_OK, 3.0, &ta), TT_OK);
    CU_ASSERT_EQUAL(record(s, &KEY, a, 2, "B", 2, TT_OK, 5.0, &tb), TT_OK);
    CU_ASSERT_EQUAL(record(s, &KEY, a, 3, "F", 3, TT_EBUILD, 0, NULL), TT_OK);
    tt_best_query q = {"gemm", "a2", "M=64", NULL, NULL};
    tt_best b;
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.trial_id, ta.id);
    tt_best_clear(&b);
    static const double slow[] = {20, 20, 20};
    tt_trial out;
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &KEY, "gemm", a, ta.id, slow, 3, &out), TT_OK);
    /* [1.5, 2.5] + [20, 20, 20]: median 20, q25 2.5, q75 20 */
    CU_ASSERT_DOUBLE_EQUAL(out.median_us, 20, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(out.min_us, 1.5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(out.spread_us, 17.5, 1e-9);
    CU_ASSERT_STRING_EQUAL(out.samples_json ? out.samples_json : "", "[1.5,2.5,20.0,20.0,20.0]");
    tt_trial_clear(&out);
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.trial_id, tb.id);            /* A got slower: B is the best now */
    CU_ASSERT_DOUBLE_EQUAL(b.median_us, 5.0, 1e-9);
    tt_best_clear(&b);
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, a, &j), TT_OK);
    CU_ASSERT_EQUAL(j.best_trial, tb.id);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 5.0, 1e-9);
    tt_job_clear(&j);
    /* once per (job, trial): a resumed job appends nothing more */
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &KEY, "gemm", a, ta.id, slow, 3, &out), TT_EEXISTS);
    tt_trial lk;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 1, &lk), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(lk.median_us, 20, 1e-9);
    tt_trial_clear(&lk);
    int64_t *ids = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_job_remeasured(s, a, &ids, &n), TT_OK);
    CU_ASSERT_EQUAL(n, 1);
    if (n == 1) CU_ASSERT_EQUAL(ids[0], ta.id);
    free(ids);
    /* bad calls */
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &KEY, "gemm", a + 100, tb.id, slow, 3, NULL),
                    TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &KEY, "gemm", a, tb.id + 100, slow, 3, NULL),
                    TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &KEY, "gemm", a, tb.id, slow, 0, NULL), TT_EINVAL);
    tt_trial tf;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 3, &tf), TT_OK);
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &KEY, "gemm", a, tf.id, slow, 3, NULL), TT_EINVAL);
    tt_trial_clear(&tf);
    /* another job under the same key re-measures A faster: A is the best again */
    int64_t c = new_job(s, "gemm", "a2", "", "M=64");
    CU_ASSERT_EQUAL(record(s, &KEY, c, 1, "A", 1, TT_OK, 3.0, NULL), TT_OK);
    static const double fast[] = {1, 1, 1};
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &KEY, "gemm", c, ta.id, fast, 3, &out), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(out.median_us, 2.0, 1e-9);   /* [1 1 1 1.5 2.5 20 20 20] */
    tt_trial_clear(&out);
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.trial_id, ta.id);
    CU_ASSERT_DOUBLE_EQUAL(b.median_us, 2.0, 1e-9);
    tt_best_clear(&b);
    CU_ASSERT_EQUAL(tt_store_job_get(s, c, &j), TT_OK);
    CU_ASSERT_EQUAL(j.best_trial, ta.id);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 2.0, 1e-9);
    CU_ASSERT(j.options_json && strstr(j.options_json, "\"remeasured\""));
    tt_job_clear(&j);
    tt_trial_clear(&ta);
    tt_trial_clear(&tb);
    tt_store_close(s);
}

#define STORE_CASES \
    {"open_migrate_twice", test_open_twice}, \
    {"bad_urls", test_bad_urls}, \
    {"templates", test_templates}, \
    {"jobs_create_list_counts", test_jobs}, \
    {"claim_lease_renew_finish", test_claim_lease}, \
    {"create_running_measured_by", test_create_running_measured_by}, \
    {"cancel", test_cancel}, \
    {"trials_reuse_seq_best", test_trials}, \
    {"trial_record_atomic", test_record_atomic}, \
    {"trial_list_stats", test_trial_list_stats}, \
    {"trial_append_remeasure", test_trial_append}, \
    {"calib_tokens", test_calib_tokens}, \
    {"baselines", test_baselines}, \
    {"quotes_are_data", test_quotes}, \
    {"concurrent_claim", test_concurrent_claim}, \
    {"concurrent_open_migrate", test_concurrent_open}, \
    {"concurrent_record_one_job", test_concurrent_record}, \
    {"crash_durability", test_crash_durability}

static const tt_test_case sqlite_cases[] = {STORE_CASES, {NULL, NULL}};
static const tt_test_case pg_cases[] = {
    STORE_CASES, {"reconnect_after_server_kill", test_pg_reconnect}, {NULL, NULL}};

static const tt_test_suite suites[] = {
    {"store_sqlite", tt_fx_sqlite_init, tt_fx_sqlite_cleanup, sqlite_cases},
    {"store_postgres", tt_fx_pg_init, tt_fx_pg_cleanup, pg_cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

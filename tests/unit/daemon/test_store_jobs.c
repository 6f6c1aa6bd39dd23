/* SPDX-License-Identifier: MIT
 * test_store_jobs.c - the store (daemon/store/store.h) on both engines, SQLite in temp files
 * and PostgreSQL in a throwaway cluster: opening and migrating, bad URLs, templates, jobs
 * (create, list, counts, claim, lease, renew, finish, cancel), calibrations and tokens,
 * baselines, quotes kept as data.
 * Every case opens a fresh database (SQLite: a new file; PostgreSQL: CREATE DATABASE).  The
 * PostgreSQL suite fails (does not skip) when the server binaries are missing.  Fixtures:
 * tests/helpers/store_fixture and store_rows.
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
#include "store_rows.h"
#include "tt_test.h"

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
        /* a scheme this store does not take is no file name (old code: SQLite files made in
         * the working directory under these names) */
        "tt-sqlite3:never.db",
        "tt-postgres:never",
        "tt-pg:host=db dbname=never",
    };
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        tt_store *s = (tt_store *)&s;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        CU_ASSERT_EQUAL(tt_store_open(urls[i], &s, &e), TT_EDB);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_EQUAL(e.rc, TT_EDB);
        CU_ASSERT(e.msg[0] != '\0');
        if (strncmp(urls[i], "tt-", 3) == 0) {
            CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "unsupported database URL"));
            CU_ASSERT_NOT_EQUAL(access(urls[i], F_OK), 0);
            if (access(urls[i], F_OK) == 0) unlink(urls[i]);
        }
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
    int64_t a = tt_sr_new_job(s, "gemm", "a2", "alice", "M=1");
    int64_t b = tt_sr_new_job(s, "gemm", "a3", "bob", "M=2");
    int64_t c = tt_sr_new_job(s, "fa", "a2", "alice", "M=3");
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
    tt_sr_job_init(&j, "gemm", "a2", "", NULL);
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
    int64_t a = tt_sr_new_job(s, "gemm", "a2", "", "M=1");
    int64_t b = tt_sr_new_job(s, "gemm", "a2", "", "M=2");
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
    tt_sr_job_init(&j, "gemm", "a2", "tok", "M=64");
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
    tt_sr_trial_init(&t, "A", 1, TT_OK, 10.0);
    snprintf(t.measured_by, sizeof t.measured_by, "host:1/w0");
    CU_ASSERT_EQUAL(tt_store_trial_record(s, &tt_sr_key, "gemm", id, 1, &t), TT_OK);
    tt_trial_clear(&t);
    int64_t other = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
    tt_sr_trial_init(&t, "A", 1, TT_OK, 9.0);
    snprintf(t.measured_by, sizeof t.measured_by, "host:2/w5");
    CU_ASSERT_EQUAL(tt_store_trial_record(s, &tt_sr_key, "gemm", other, 1, &t), TT_OK);
    CU_ASSERT_EQUAL(t.reused, 1);
    CU_ASSERT_STRING_EQUAL(t.measured_by, "host:1/w0");
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, other, 2, "B", 2, TT_OK, 8.0, NULL), TT_OK);
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
    int64_t a = tt_sr_new_job(s, "gemm", "a2", "", "M=1");
    int64_t b = tt_sr_new_job(s, "gemm", "a2", "", "M=2");
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
    /* renamed in the config (same secret): the record follows; it was a UNIQUE failure
     * warned at every start, the old name kept */
    CU_ASSERT_EQUAL(tt_store_token_put(s, "other", "bb22", "admin"), TT_OK);
    CU_ASSERT_EQUAL(tt_store_token_find(s, "bb22", name, scopes), TT_OK);
    CU_ASSERT_STRING_EQUAL(name, "other");
    CU_ASSERT_STRING_EQUAL(scopes, "admin");
    CU_ASSERT_EQUAL(tt_store_token_put(s, "ci", "aa11", "read"), TT_OK);   /* "ci" was gone */
    CU_ASSERT_EQUAL(tt_store_token_put(s, "", "cc", "x"), TT_EINVAL);
    tt_store_close(s);
}

static void test_baselines(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t j1 = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
    tt_best_query q = {"gemm", "a2", NULL, NULL, NULL};
    size_t np = 99;
    CU_ASSERT_EQUAL(tt_store_baseline_put(s, "v1", &q, &np), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(np, 0);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, 0, "A", 1, TT_OK, 10.0, NULL), TT_OK);
    tt_trial_key k2 = tt_sr_key;
    k2.problem_key = "M=128";
    CU_ASSERT_EQUAL(tt_sr_record(s, &k2, 0, 0, "A", 1, TT_OK, 20.0, NULL), TT_OK);   /* no job */
    CU_ASSERT_EQUAL(tt_store_baseline_put(s, "v1", &q, &np), TT_OK);
    CU_ASSERT_EQUAL(np, 2);
    /* a faster trial moves best but not the pinned baseline */
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, 1, "B", 2, TT_OK, 7.0, NULL), TT_OK);
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
        int64_t id = tt_sr_new_job(s, e, e, e, e);
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
        CU_ASSERT_EQUAL(tt_sr_record(s, &k, id, 0, e, 1, TT_OK, 3.0, NULL), TT_OK);
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

/* A worker claims a cmd: job only when it has the job's toolchain definition (backend_fp),
 * a replay: job only when it has the job's recording: a host without the toolchain or the
 * dataset, or with another definition or recording of it, leaves the job to one that has it,
 * where it used to claim it and fail it (or file its trials under its own fingerprint).
 * Other backends go to any worker; NULL lists: any job.  What a worker leaves is what
 * tt_store_job_waiting lists (nwait of them, the oldest first). */
static void test_claim_for_toolchains(void)
{
    static const struct { const char *backend, *fp; } jobs[] = {
        {"cmd:a2", "cmd:a2@11111111"}, {"cmd:a3", "cmd:a3@33333333"},
        {"cmd:a2", "cmd:a2@22222222"}, {"sim", "sim"}, {"cmd:a_2", "cmd:a_2@11111111"},
        {"replay:d", "replay:d@44444444"},
    };
    enum { NJ = sizeof jobs / sizeof jobs[0] };
    static const struct {
        const char *fps;     /* the worker's fingerprints */
        int order[NJ + 1];   /* the jobs (1-based) it claims, oldest first; 0 ends */
        int nwait;           /* the jobs it leaves to others */
    } rows[] = {
        {",cmd:a2@11111111,", {1, 4, 0}, 4},
        {",cmd:a2@22222222,cmd:a3@33333333,", {2, 3, 4, 0}, 3},
        {",", {4, 0}, 5},                     /* no toolchain, no dataset: only the sim job */
        {",cmd:a2@1111111,", {4, 0}, 5},      /* a prefix of a fingerprint is not it */
        {",cmd:a_2@11111111,", {4, 5, 0}, 4},
        {",replay:d@44444444,", {4, 6, 0}, 4},
        {",replay:d@4444444,replay:d.x@44444444,cmd:a2@44444444,", {4, 0}, 5},
        {",cmd:a3@33333333,replay:d@44444444,", {2, 4, 6, 0}, 3},
        {NULL, {1, 2, 3, 4, 5, 6, 0}, 0},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        tt_store *s = tt_fx_open_fresh();
        int64_t ids[NJ];
        for (size_t i = 0; i < NJ; i++) {
            tt_job j;
            tt_sr_job_init(&j, "gemm", "a2", "", "M=1");
            snprintf(j.backend, sizeof j.backend, "%s", jobs[i].backend);
            snprintf(j.backend_fp, sizeof j.backend_fp, "%s", jobs[i].fp);
            CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_OK);
            ids[i] = j.id;
        }
        for (int k = 0;; k++) {
            tt_job j;
            tt_rc rc = tt_store_job_claim_for(s, "w", 60, rows[r].fps, &j);
            int want = rows[r].order[k];
            CU_ASSERT_EQUAL(rc, want ? TT_OK : TT_ENOTFOUND);
            if (rc == TT_OK && want) CU_ASSERT_EQUAL(j.id, ids[want - 1]);
            if (rc == TT_OK && want && j.id != ids[want - 1])
                fprintf(stderr, "\nrow %zu: claim %d got job %lld\n", r, k, (long long)j.id);
            tt_job_clear(&j);
            if (rc != TT_OK || !want) break;
        }
        int nwait = 0;
        tt_job j;
        for (int64_t after = 0; rows[r].fps &&
             tt_store_job_waiting(s, rows[r].fps, after, &j) == TT_OK; nwait++) {
            CU_ASSERT(j.id > after && j.state == TT_JOB_QUEUED && strcmp(j.backend, "sim"));
            after = j.id;
            tt_job_clear(&j);
        }
        CU_ASSERT_EQUAL(nwait, rows[r].nwait);
        if (nwait != rows[r].nwait) fprintf(stderr, "\nrow %zu: %d waiting\n", r, nwait);
        tt_store_close(s);
    }
}

#define JOB_CASES \
    {"open_migrate_twice", test_open_twice}, \
    {"bad_urls", test_bad_urls}, \
    {"templates", test_templates}, \
    {"jobs_create_list_counts", test_jobs}, \
    {"claim_lease_renew_finish", test_claim_lease}, \
    {"claim_for_toolchains", test_claim_for_toolchains}, \
    {"create_running_measured_by", test_create_running_measured_by}, \
    {"cancel", test_cancel}, \
    {"calib_tokens", test_calib_tokens}, \
    {"baselines", test_baselines}, \
    {"quotes_are_data", test_quotes}

static const tt_test_case cases[] = {JOB_CASES, {NULL, NULL}};

static const tt_test_suite suites[] = {TT_FX_BOTH_ENGINES("store_jobs", cases, cases)};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

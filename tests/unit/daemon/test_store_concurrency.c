/* SPDX-License-Identifier: MIT
 * test_store_concurrency.c - the store (daemon/store/store.h) under concurrency and failure, on
 * both engines: 4 threads on 4 connections claim every job exactly once, open and migrate one
 * database at once, record into one job at once; a child recording trials killed with
 * SIGKILL loses no committed trial; PostgreSQL: a killed session reconnects.
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
        int64_t id = tt_sr_new_job(s, "gemm", "a2", "", "M=1");
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
        tt_sr_trial_init(&t, cfg, h, TT_OK, 50.0 - (double)i - (double)me * 0.01);
        tt_rc rc = tt_store_trial_record(s, &tt_sr_key, "gemm", cr_job, me * 100 + i, &t);
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
    cr_job = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
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
        tt_sr_trial_init(&t, cfg, (uint64_t)seq * 2654435761u, TT_OK, 100.0 - (double)seq * 1e-3);
        if (tt_store_trial_record(cs, &tt_sr_key, "gemm", job, seq, &t) != TT_OK) _exit(4);
        tt_trial_clear(&t);
        if (write(wfd, &seq, sizeof seq) != (ssize_t)sizeof seq) _exit(5);
    }
}

static void test_crash_durability(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t job = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
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

/* PostgreSQL: the server ends the session (restart, failover, pg_terminate_backend) and each
 * row's call is the first to meet the dead link.  A statement that changes nothing (a SELECT,
 * the BEGIN of a trial's transaction) is sent again on a new connection and succeeds; any
 * other fails with TT_EDB, tt_store_conn_lost() saying why (the runner then leaves its job
 * running instead of failing it), and the next call reconnects.  Before, every row failed:
 * after a database restart each API reader got one 503, and a worker failed its job. */
typedef struct cut_row {
    const char *name;
    tt_rc (*call)(tt_store *s, int64_t job, int row);
    tt_rc want;
    int lost;   /* tt_store_conn_lost after the call */
} cut_row;

static tt_rc cut_get(tt_store *s, int64_t job, int row)
{
    (void)row;
    tt_job j;
    tt_rc rc = tt_store_job_get(s, job, &j);
    if (rc == TT_OK) tt_job_clear(&j);
    return rc;
}
static tt_rc cut_ping(tt_store *s, int64_t job, int row)
{
    (void)job;
    (void)row;
    return tt_store_ping(s);
}
static tt_rc cut_record(tt_store *s, int64_t job, int row)
{
    char cfg[16];
    snprintf(cfg, sizeof cfg, "C%d", row);
    return tt_sr_record(s, &tt_sr_key, job, row + 1, cfg, 100 + (uint64_t)row, TT_OK, 3.0, NULL);
}
static tt_rc cut_progress(tt_store *s, int64_t job, int row)
{
    (void)row;
    return tt_store_job_progress(s, job, 8, 0);
}

static const cut_row cut_rows[] = {
    {"job_get (SELECT)", cut_get, TT_OK, 0},
    {"ping (SELECT 1)", cut_ping, TT_OK, 0},
    {"trial_record (BEGIN first)", cut_record, TT_OK, 0},
    {"job_progress (UPDATE)", cut_progress, TT_EDB, 1},
};

/* The store's sessions say who they are in pg_stat_activity: `tiletuned`, or the name the
 * URL gives (application_name=...), as libpq's own connections do. */
static void test_pg_application_name(void)
{
    static const struct {
        const char *suffix, *name;
    } rows[] = {{"", "tiletuned"}, {"&application_name=ci-worker-7", "ci-worker-7"}};
    tt_store_close(tt_fx_open_fresh());
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char url[800], q[300];
        snprintf(url, sizeof url, "%s%s", tt_fx_url, rows[i].suffix);
        snprintf(q, sizeof q, "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                 "current_database() AND application_name = '%s'", rows[i].name);
        tt_store *s = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
        CU_ASSERT_EQUAL(tt_fx_raw_int(q), 1);
        tt_store_close(s);
    }
}

static void test_pg_reconnect(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t a = tt_sr_new_job(s, "gemm", "a2", "", "M=1");
    for (size_t i = 0; i < sizeof cut_rows / sizeof cut_rows[0]; i++) {
        const cut_row *row = &cut_rows[i];
        CU_ASSERT_EQUAL(row->call(s, a, 100 + (int)i), TT_OK);   /* statements now prepared */
        CU_ASSERT_FATAL(tt_fx_raw_exec("SELECT pg_terminate_backend(pid, 10000) FROM "
                                       "pg_stat_activity WHERE datname = current_database() "
                                       "AND pid <> pg_backend_pid()"));
        tt_rc rc = row->call(s, a, (int)i);
        CU_ASSERT_EQUAL(rc, row->want);
        CU_ASSERT_EQUAL(tt_store_conn_lost(s), row->lost);
        if (rc != row->want || tt_store_conn_lost(s) != row->lost)
            fprintf(stderr, "\n%s after the cut: %s (lost %d): %s\n", row->name, tt_strerror(rc),
                    tt_store_conn_lost(s), tt_store_errmsg(s));
        if (rc != TT_OK) CU_ASSERT_PTR_NULL(strchr(tt_store_errmsg(s), '\n'));   /* one line */
        CU_ASSERT_EQUAL(row->call(s, a, 200 + (int)i), TT_OK);   /* reconnected */
        CU_ASSERT_EQUAL(tt_store_conn_lost(s), 0);
    }
    /* a failure with the connection up is not a lost connection */
    CU_ASSERT_EQUAL(tt_store_job_renew(s, a, "nobody", 5), TT_EEXISTS);
    CU_ASSERT_EQUAL(tt_store_conn_lost(s), 0);
    tt_store_close(s);
}

#define CONCURRENCY_CASES \
    {"concurrent_claim", test_concurrent_claim}, \
    {"concurrent_open_migrate", test_concurrent_open}, \
    {"concurrent_record_one_job", test_concurrent_record}, \
    {"crash_durability", test_crash_durability}

static const tt_test_case sqlite_cases[] = {CONCURRENCY_CASES, {NULL, NULL}};
static const tt_test_case pg_cases[] = {
    CONCURRENCY_CASES, {"reconnect_after_server_kill", test_pg_reconnect},
    {"application_name", test_pg_application_name}, {NULL, NULL}};

static const tt_test_suite suites[] = {TT_FX_BOTH_ENGINES("store_concurrency", sqlite_cases, pg_cases)};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

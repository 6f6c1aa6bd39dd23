/* SPDX-License-Identifier: MIT
 * test_store_integrity.c - the store's integrity guarantees (issue 9 items 1-4, issue 13
 * item 7), on both engines: batches (group commit: all or nothing, savepoints, a crash loses
 * only the uncommitted batch), the per-owner job limit under 20 concurrent submissions,
 * template ownership, claims that never hand out imports, and migration 003 turning a
 * schema-2 database with the same config stored under two param orders into one row.
 */
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store.h"
#include "store_fixture.h"
#include "tt_test.h"

static const tt_trial_key KEY = {"0123456789abcdef", "M=64", "a2", "sim"};

static int64_t new_job(tt_store *s, const char *owner)
{
    tt_job j;
    tt_fx_job(&j, "gemm", "a2", "sim", "random", owner, "M=64");
    snprintf(j.template_hash, sizeof j.template_hash, "0123456789abcdef");
    j.problem_json = (char *)"{\"M\":64}";
    CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_OK);
    return j.id;
}

static tt_rc record(tt_store *s, int64_t job, int64_t seq, uint64_t hash, double us)
{
    tt_trial t;
    memset(&t, 0, sizeof t);
    char key[32];
    snprintf(key, sizeof key, "x=%llu", (unsigned long long)hash);
    t.config_key = strdup(key);
    t.config_json = strdup("{}");
    t.config_hash = hash;
    t.status = TT_OK;
    t.median_us = us;
    tt_rc rc = tt_store_trial_record(s, &KEY, "gemm", job, seq, &t);
    tt_trial_clear(&t);
    return rc;
}

/* Trials linked to job, as the connection o sees them. */
static int64_t linked_on(tt_store *o, int64_t job)
{
    tt_trial *ts = NULL;
    size_t n = 0;
    int64_t total = -1;
    if (tt_store_trial_list(o, job, 0, 1000, &ts, &n, &total) != TT_OK) total = -1;
    for (size_t i = 0; i < n; i++) tt_trial_clear(&ts[i]);
    free(ts);
    return total;
}

/* The same through a new connection (opening one waits for a SQLite writer: not in a batch). */
static int64_t linked(const char *url, int64_t job)
{
    tt_store *o = NULL;
    if (tt_store_open(url, &o, NULL) != TT_OK) return -1;
    int64_t n = linked_on(o, job);
    tt_store_close(o);
    return n;
}

/* ---- batches ------------------------------------------------------------------------ */
static void test_batch_commit_rollback(void)
{
    tt_store *s = tt_fx_open_fresh(), *o = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(tt_fx_url, &o, NULL), TT_OK);
    int64_t job = new_job(s, "");
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    CU_ASSERT(tt_store_in_batch(s));
    CU_ASSERT_EQUAL(tt_store_batch_begin(s), TT_EINVAL);   /* no nesting */
    for (int i = 1; i <= 5; i++) CU_ASSERT_EQUAL(record(s, job, i, (uint64_t)i, 10.0 + i), TT_OK);
    tt_trial t;   /* the batch sees its own writes ... */
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 3, &t), TT_OK);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(linked_on(o, job), 0);                /* ... nobody else does */
    tt_store_close(o);
    CU_ASSERT_EQUAL(tt_store_batch_commit(s), TT_OK);
    CU_ASSERT(!tt_store_in_batch(s));
    CU_ASSERT_EQUAL(linked(tt_fx_url, job), 5);
    CU_ASSERT_EQUAL(tt_store_batch_commit(s), TT_EINVAL);  /* none open */
    /* a rolled-back batch leaves nothing, counters included */
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    for (int i = 6; i <= 8; i++) CU_ASSERT_EQUAL(record(s, job, i, (uint64_t)i, 1.0), TT_OK);
    tt_store_batch_rollback(s);
    tt_store_batch_rollback(s);   /* no-op */
    CU_ASSERT_EQUAL(linked(tt_fx_url, job), 5);
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, job, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 5);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 11.0, 1e-9);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 7, &t), TT_ENOTFOUND);
    tt_store_close(s);
}

/* A batch that stored a new measurement key and rolled back took the key's row with it: the
 * store must not reuse the id it had cached for that key (schema 006, trial_keys). */
static void test_batch_rollback_new_key(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t job = new_job(s, "");
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    CU_ASSERT_EQUAL(record(s, job, 1, 1, 5.0), TT_OK);
    tt_store_batch_rollback(s);
    CU_ASSERT_EQUAL(tt_fx_raw_int("SELECT COUNT(*) FROM trial_keys"), 0);
    CU_ASSERT_EQUAL(record(s, job, 1, 1, 5.0), TT_OK);   /* the key is stored again */
    CU_ASSERT_EQUAL(tt_fx_raw_int("SELECT COUNT(*) FROM trial_keys"), 1);
    CU_ASSERT_EQUAL(tt_fx_raw_int("SELECT COUNT(*) FROM trials t JOIN trial_keys k ON "
                                  "k.id = t.key_id WHERE k.problem_key = 'M=64'"), 1);
    tt_trial t;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 1, &t), TT_OK);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(linked(tt_fx_url, job), 1);
    tt_store_close(s);
}

/* A failing call inside a batch undoes only itself (a savepoint); the batch goes on. */
static void test_batch_savepoint(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t job = new_job(s, "");
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    CU_ASSERT_EQUAL(record(s, job, 1, 1, 5.0), TT_OK);
    CU_ASSERT_EQUAL(record(s, job + 100, 1, 2, 5.0), TT_ENOTFOUND);   /* no such job */
    CU_ASSERT_EQUAL(record(s, job, 2, 3, 4.0), TT_OK);
    CU_ASSERT_EQUAL(tt_store_batch_commit(s), TT_OK);
    CU_ASSERT_EQUAL(linked(tt_fx_url, job), 2);
    tt_trial t;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 2, &t), TT_ENOTFOUND);
    tt_store_close(s);
}

/* The job's done counter and best-so-far, and the `best` row, as the connection o sees them. */
static void job_seen(tt_store *o, int64_t job, int64_t *done, double *best_us, double *row_us,
                     int64_t *row_trial)
{
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(o, job, &j), TT_OK);
    *done = j.done;
    *best_us = j.best_us;
    tt_job_clear(&j);
    tt_best_query q = {"gemm", "a2", "M=64", NULL, NULL};
    tt_best b;
    *row_us = 0;
    *row_trial = 0;
    if (tt_store_best_get(o, &q, &b) == TT_OK) {
        *row_us = b.median_us;
        *row_trial = b.trial_id;
        tt_best_clear(&b);
    }
}

/* Inside a batch the job's counters and `best` are written once, at the commit (store_trials.c
 * "group commit"), yet read the same as if every trial had written them: by the batch's own
 * connection at any time, by others after the commit; a tie keeps the first trial; a batch
 * spanning two jobs keeps both right; a seq recorded before (a resumed job) changes nothing;
 * a rollback after such a read leaves the job as it was. */
static void test_batch_deferred(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t a = new_job(s, ""), b = new_job(s, "");
    int64_t done;
    double best, row;
    int64_t row_trial;
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    CU_ASSERT_EQUAL(record(s, a, 1, 1, 30.0), TT_OK);
    CU_ASSERT_EQUAL(record(s, a, 2, 2, 20.0), TT_OK);
    CU_ASSERT_EQUAL(record(s, a, 3, 3, 20.0), TT_OK);   /* a tie: trial 2 stays */
    CU_ASSERT_EQUAL(record(s, a, 4, 4, 25.0), TT_OK);
    job_seen(s, a, &done, &best, &row, &row_trial);      /* the batch's own view */
    CU_ASSERT_EQUAL(done, 4);
    CU_ASSERT_DOUBLE_EQUAL(best, 20.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(row, 20.0, 1e-12);
    tt_trial t;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_lookup(s, &KEY, 2, &t), TT_OK);
    int64_t id2 = t.id;
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(row_trial, id2);
    CU_ASSERT_EQUAL(record(s, b, 1, 5, 40.0), TT_OK);   /* another job in the same batch */
    CU_ASSERT_EQUAL(record(s, a, 5, 6, 15.0), TT_OK);
    CU_ASSERT_EQUAL(record(s, b, 2, 6, 99.0), TT_OK);   /* reuses a's measurement: 15 */
    CU_ASSERT_EQUAL(record(s, a, 2, 7, 1.0), TT_OK);    /* seq 2 again: nothing changes */
    CU_ASSERT_EQUAL(tt_store_batch_commit(s), TT_OK);
    tt_store *o = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(tt_fx_url, &o, NULL), TT_OK);
    job_seen(o, a, &done, &best, &row, &row_trial);
    CU_ASSERT_EQUAL(done, 5);
    CU_ASSERT_DOUBLE_EQUAL(best, 15.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(row, 15.0, 1e-12);
    job_seen(o, b, &done, &best, &row, &row_trial);
    CU_ASSERT_EQUAL(done, 2);
    CU_ASSERT_DOUBLE_EQUAL(best, 15.0, 1e-12);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(o, &KEY, 7, &t), TT_ENOTFOUND);
    /* a read inside a batch writes the deferred updates; a rollback still undoes them */
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    CU_ASSERT_EQUAL(record(s, a, 6, 8, 1.0), TT_OK);
    job_seen(s, a, &done, &best, &row, &row_trial);
    CU_ASSERT_EQUAL(done, 6);
    CU_ASSERT_DOUBLE_EQUAL(best, 1.0, 1e-12);
    tt_store_batch_rollback(s);
    job_seen(o, a, &done, &best, &row, &row_trial);
    CU_ASSERT_EQUAL(done, 5);
    CU_ASSERT_DOUBLE_EQUAL(best, 15.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(row, 15.0, 1e-12);
    /* a job best set inside the batch (the objective's best at the end of a job) stays: the
     * deferred best of the batch's trials is written before it, not over it */
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    CU_ASSERT_EQUAL(record(s, a, 6, 9, 2.0), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_lookup(s, &KEY, 9, &t), TT_OK);
    CU_ASSERT_EQUAL(tt_store_job_best_set(s, a, t.id, 3.5, 0, "{}"), TT_OK);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_batch_commit(s), TT_OK);
    job_seen(o, a, &done, &best, &row, &row_trial);
    CU_ASSERT_EQUAL(done, 6);
    CU_ASSERT_DOUBLE_EQUAL(best, 3.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(row, 2.0, 1e-12);   /* `best` keeps the median rule */
    tt_store_close(o);
    tt_store_close(s);
}

/* Asynchronous commit (the runner's cheap trials on PostgreSQL): each call still commits
 * and is seen by other connections at once; refused inside a batch; a no-op on SQLite. */
static void test_async_commit(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t job = new_job(s, "");
    CU_ASSERT_EQUAL(tt_store_async_commit(s, 1), TT_OK);
    for (int i = 1; i <= 3; i++) CU_ASSERT_EQUAL(record(s, job, i, (uint64_t)i, 10.0 + i), TT_OK);
    CU_ASSERT_EQUAL(linked(tt_fx_url, job), 3);
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    CU_ASSERT_EQUAL(tt_store_async_commit(s, 0),
                    tt_fx_engine == TT_STORE_POSTGRES ? TT_EINVAL : TT_OK);
    CU_ASSERT_EQUAL(tt_store_batch_commit(s), TT_OK);
    CU_ASSERT_EQUAL(tt_store_async_commit(s, 0), TT_OK);
    CU_ASSERT_EQUAL(record(s, job, 4, 4, 9.0), TT_OK);
    CU_ASSERT_EQUAL(linked(tt_fx_url, job), 4);
    tt_store_close(s);
}

/* The child: three batches of 10 trials of job *arg, the last left open; then 'r' on wfd
 * and it waits to be killed. */
static void batch_writer(tt_store *cs, int wfd, void *arg)
{
    int64_t job = *(const int64_t *)arg, seq = 0;
    for (int b = 0; b < 3; b++) {
        if (tt_store_batch_begin(cs) != TT_OK) _exit(4);
        for (int i = 0; i < 10; i++, seq++)
            if (record(cs, job, seq + 1, (uint64_t)seq + 1, 50.0 - (double)seq) != TT_OK)
                _exit(5);
        if (b < 2 && tt_store_batch_commit(cs) != TT_OK) _exit(6);
    }
    char c = 'r';   /* 20 committed, 10 in the open batch */
    if (write(wfd, &c, 1) != 1) _exit(7);
    pause();
}

/* A batch's job_trials rows go in groups of ten (and the rest one by one at the flush):
 * 23 records, one a reuse and one a repeated seq, list in order with their own trials. */
static void test_batch_links(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t job = new_job(s, "");
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);
    for (int64_t seq = 1; seq <= 23; seq++) {
        uint64_t hash = seq == 17 ? 4 : (uint64_t)seq;   /* seq 17 reuses seq 4's trial */
        CU_ASSERT_EQUAL(record(s, job, seq, hash, 100.0 - (double)seq), TT_OK);
        if (seq == 12) /* seq 12 again while its row is still pending: a no-op */
            CU_ASSERT_EQUAL(record(s, job, 12, 99, 0.5), TT_OK);
    }
    CU_ASSERT_EQUAL(linked_on(s, job), 23);   /* a read inside the batch sees them all */
    CU_ASSERT_EQUAL(tt_store_batch_commit(s), TT_OK);
    tt_trial *ts = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_list(s, job, 0, 100, &ts, &n, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(n, 23);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(ts[i].seq, (int64_t)i + 1);
        CU_ASSERT_EQUAL(ts[i].config_hash, i + 1 == 17 ? 4 : i + 1);
        CU_ASSERT_EQUAL(ts[i].reused, i + 1 == 17);
        tt_trial_clear(&ts[i]);
    }
    free(ts);
    tt_trial t;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 99, &t), TT_ENOTFOUND);
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, job, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 23);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 77.0, 1e-9);   /* seq 23 */
    tt_job_clear(&j);
    tt_store_close(s);
}

/* kill -9 in the middle of a batch: the committed batches are there, the open one is not. */
static void test_batch_crash(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t job = new_job(s, "");
    tt_store_close(s);
    int rfd = -1;
    pid_t pid = tt_fx_fork_writer(batch_writer, &job, &rfd);
    char c = 0;
    CU_ASSERT_EQUAL(read(rfd, &c, 1), 1);
    close(rfd);
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    CU_ASSERT_EQUAL(linked(tt_fx_url, job), 20);
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(tt_fx_url, &s, &e), TT_OK);
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, job, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 20);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 31.0, 1e-9);   /* seq 20: 50 - 19 */
    tt_job_clear(&j);
    tt_store_close(s);
}

/* ---- the per-owner job limit -------------------------------------------------------- */
#define NSUBMIT 20
#define LIMIT 8

typedef struct submitter {
    pthread_barrier_t *go;
    tt_store *shared;          /* NULL: open an own connection */
    tt_rc rc;
} submitter;

static void *submit_main(void *arg)
{
    submitter *x = arg;
    tt_store *s = x->shared;
    if (!s && tt_store_open(tt_fx_url, &s, NULL) != TT_OK) {
        x->rc = TT_EDB;
        pthread_barrier_wait(x->go);
        return NULL;
    }
    tt_job j;
    tt_fx_job(&j, "gemm", "a2", "sim", NULL, "alice", "M=64");
    pthread_barrier_wait(x->go);
    x->rc = tt_store_job_create_capped(s, &j, LIMIT, NULL);
    if (!x->shared) tt_store_close(s);
    return NULL;
}

static void limit_round(tt_store *shared)
{
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, NSUBMIT);
    submitter x[NSUBMIT];
    pthread_t th[NSUBMIT];
    for (int i = 0; i < NSUBMIT; i++) {
        x[i] = (submitter){&go, shared, TT_EINTERNAL};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, submit_main, &x[i]), 0);
    }
    int ok = 0, limited = 0;
    for (int i = 0; i < NSUBMIT; i++) {
        pthread_join(th[i], NULL);
        ok += x[i].rc == TT_OK;
        limited += x[i].rc == TT_ELIMIT;
    }
    pthread_barrier_destroy(&go);
    CU_ASSERT_EQUAL(ok, LIMIT);
    CU_ASSERT_EQUAL(limited, NSUBMIT - LIMIT);
}

static void test_job_limit_concurrent(void)
{
    tt_store *s = tt_fx_open_fresh();
    limit_round(NULL);   /* 20 connections at once */
    int64_t counts[TT_JOB__COUNT];
    CU_ASSERT_EQUAL(tt_store_job_counts(s, "alice", counts), TT_OK);
    CU_ASSERT_EQUAL(counts[TT_JOB_QUEUED], LIMIT);
    /* finished jobs do not count; another owner has a limit of its own */
    CU_ASSERT(tt_fx_raw_exec("UPDATE jobs SET state = 'done'"));
    limit_round(s);      /* 20 threads on one shared connection */
    int64_t bob = new_job(s, "bob");
    CU_ASSERT(bob > 0);
    int64_t active = 0;
    tt_job j;
    tt_fx_job(&j, "gemm", "a2", "sim", NULL, "alice", "M=64");
    CU_ASSERT_EQUAL(tt_store_job_create_capped(s, &j, LIMIT, &active), TT_ELIMIT);
    CU_ASSERT_EQUAL(active, LIMIT);
    CU_ASSERT_EQUAL(tt_store_job_create_capped(s, &j, 0, &active), TT_OK);   /* no limit */
    tt_store_close(s);
}

/* ---- template ownership ------------------------------------------------------------- */
static void test_template_owner(void)
{
    tt_store *s = tt_fx_open_fresh();
    CU_ASSERT_EQUAL(tt_store_template_put_owned(s, "mine", "1111111111111111", "1", "{}",
                                                "alice", 0), TT_OK);
    CU_ASSERT_EQUAL(tt_store_template_put_owned(s, "mine", "2222222222222222", "2", "{}",
                                                "bob", 0), TT_EFORBIDDEN);
    char *doc = NULL, h[17];
    CU_ASSERT_EQUAL(tt_store_template_get(s, "mine", NULL, &doc, h), TT_OK);
    CU_ASSERT_STRING_EQUAL(h, "1111111111111111");   /* bob stored nothing */
    free(doc);
    CU_ASSERT_EQUAL(tt_store_template_put_owned(s, "mine", "3333333333333333", "3", "{}",
                                                "alice", 0), TT_OK);
    CU_ASSERT_EQUAL(tt_store_template_put_owned(s, "mine", "4444444444444444", "4", "{}",
                                                "bob", 1), TT_OK);   /* an admin may */
    CU_ASSERT_EQUAL(tt_store_template_put_owned(s, "mine", "5555555555555555", "5", "{}",
                                                "alice", 0), TT_OK);  /* still alice's */
    /* unowned ('': stored before schema 003, or built-in syncs): only an admin */
    CU_ASSERT_EQUAL(tt_store_template_put(s, "old", "6666666666666666", "1", "{}"), TT_OK);
    CU_ASSERT_EQUAL(tt_store_template_put_owned(s, "old", "7777777777777777", "1", "{}",
                                                "alice", 0), TT_EFORBIDDEN);
    CU_ASSERT_EQUAL(tt_store_template_put_owned(s, "old", "7777777777777777", "1", "{}",
                                                "", 0), TT_OK);   /* an open daemon */
    tt_store_close(s);
}

/* ---- imports are never claimed -------------------------------------------------------- */
static void test_claim_skips_imports(void)
{
    tt_store *s = tt_fx_open_fresh();
    tt_job j;
    tt_fx_job(&j, "conv", "a100", "import:00000000000000ab", "import", NULL, "");
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create_running(s, &j, "import:me", 0.05), TT_OK);
    tt_fx_sleep(0.2);   /* its lease has expired: a dead worker's job would be taken over */
    CU_ASSERT_EQUAL(tt_store_job_release_all(s), TT_OK);
    tt_job c;
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "w1", 30, &c), TT_ENOTFOUND);
    tt_job_clear(&c);
    int64_t q = new_job(s, "");
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "w1", 30, &c), TT_OK);
    CU_ASSERT_EQUAL(c.id, q);
    tt_job_clear(&c);
    tt_store_close(s);
}

/* ---- migration 003 ------------------------------------------------------------------ */
static uint64_t fnv(const int64_t *v, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) h = (h ^ (((uint64_t)v[i] >> (8 * b)) & 0xff)) * 1099511628211ULL;
    return h;
}

static int run_schema_file(const char *rel)
{
    char *path = tt_test_src(rel);
    char *sql = tt_test_read_file(path, NULL);
    free(path);
    int ok = sql && tt_fx_raw_exec(sql);
    free(sql);
    return ok;
}

/* A schema-2 database holding what the old code wrote: one config of a template whose params
 * were declared (b, a) stored twice -- in declared order before a restart and sorted after
 * it -- plus a lone declared-order trial and an import cut by a crash. */
static void test_migration_003_merges(void)
{
    tt_fx_fresh_url();
    const char *eng = tt_fx_engine == TT_STORE_SQLITE ? "sqlite" : "postgres";
    char rel[64];
    snprintf(rel, sizeof rel, "schema/%s/001_init.sql", eng);
    CU_ASSERT_FATAL(run_schema_file(rel));
    snprintf(rel, sizeof rel, "schema/%s/002_measured_by.sql", eng);
    CU_ASSERT_FATAL(run_schema_file(rel));
    const int64_t ba[] = {2, 1}, ab[] = {1, 2}, lone[] = {5, 1}, lone_c[] = {1, 5};
    int64_t h_ba, h_ab, h_lone;
    uint64_t u;
    u = fnv(ba, 2), memcpy(&h_ba, &u, 8);
    u = fnv(ab, 2), memcpy(&h_ab, &u, 8);
    u = fnv(lone, 2), memcpy(&h_lone, &u, 8);
    char sql[4096];
    snprintf(sql, sizeof sql,
             "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
             "name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL);"
             "INSERT INTO schema_migrations VALUES (1, '001_init', 0), (2, '002_measured_by', 0);"
             "INSERT INTO jobs (id, template_name, template_hash, target, backend, backend_fp, "
             " strategy, problem_key, problem_json, state, created_at, best_trial, best_us) VALUES"
             " (1, 'mine', 'h1', 'a2', 'sim', 'sim', 'random', 'M=1', '{}', 'done', 0, 1, 3.0),"
             " (2, 'mine', 'h1', 'a2', 'sim', 'sim', 'random', 'M=1', '{}', 'done', 0, 2, 4.0),"
             " (3, 'conv', 'h2', 'x', 'import:ab', 'import:ab', 'import', '', '{}', 'running', 0, 0, 0);"
             "INSERT INTO trials (id, template_hash, problem_key, target, backend_fp, config_hash,"
             " config_key, config_json, status, median_us, job_id, created_at) VALUES"
             " (1, 'h1', 'M=1', 'a2', 'sim', %lld, 'b=2,a=1', '{\"b\":2,\"a\":1}', 'ok', 3.0, 1, 0),"
             " (2, 'h1', 'M=1', 'a2', 'sim', %lld, 'a=1,b=2', '{\"a\":1,\"b\":2}', 'ok', 4.0, 2, 0),"
             " (3, 'h1', 'M=1', 'a2', 'sim', %lld, 'b=5,a=1', '{\"b\":5,\"a\":1}', 'ok', 9.0, 1, 0);"
             "INSERT INTO job_trials (job_id, seq, trial_id, reused) VALUES (1, 1, 1, 0), "
             " (1, 2, 3, 0), (2, 1, 2, 0);"
             "INSERT INTO best (template_name, template_hash, problem_key, target, backend_fp,"
             " trial_id, job_id, config_json, median_us, updated_at) VALUES"
             " ('mine', 'h1', 'M=1', 'a2', 'sim', 1, 1, '{\"b\":2,\"a\":1}', 3.0, 0);",
             (long long)h_ba, (long long)h_ab, (long long)h_lone);
    CU_ASSERT_FATAL(tt_fx_raw_exec(sql));
    tt_store *s = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_store_open(tt_fx_url, &s, &e);
    if (rc) fprintf(stderr, "open: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    CU_ASSERT(tt_store_schema_version(s) >= 3);
    tt_trial_key k = {"h1", "M=1", "a2", "sim"};
    tt_trial t;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_lookup(s, &k, fnv(ab, 2), &t), TT_OK);
    CU_ASSERT_STRING_EQUAL(t.config_key, "a=1,b=2");
    int64_t kept = t.id;
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &k, fnv(ba, 2), &t), TT_ENOTFOUND);
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_lookup(s, &k, fnv(lone_c, 2), &t), TT_OK);
    CU_ASSERT_STRING_EQUAL(t.config_key, "a=1,b=5");
    CU_ASSERT_STRING_EQUAL(t.config_json, "{\"a\":1,\"b\":5}");
    tt_trial_clear(&t);
    /* both jobs' steps point at the one kept measurement; best follows it */
    tt_trial *ts = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, 1, 0, 10, &ts, &n, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(ts[0].id, kept);
    for (size_t i = 0; i < n; i++) tt_trial_clear(&ts[i]);
    free(ts);
    CU_ASSERT_EQUAL(tt_store_trial_list(s, 2, 0, 10, &ts, &n, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(ts[0].id, kept);
    tt_trial_clear(&ts[0]);
    free(ts);
    tt_best b;
    tt_best_query bq = {"mine", "a2", "M=1", NULL, NULL};
    CU_ASSERT_EQUAL(tt_store_best_get(s, &bq, &b), TT_OK);
    CU_ASSERT_EQUAL(b.trial_id, kept);
    tt_best_clear(&b);
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, 1, &j), TT_OK);
    CU_ASSERT_EQUAL(j.best_trial, kept);
    tt_job_clear(&j);
    /* the import cut by a crash is failed, never claimed */
    CU_ASSERT_EQUAL(tt_store_job_get(s, 3, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_FAILED);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "w", 30, &j), TT_ENOTFOUND);
    tt_job_clear(&j);
    tt_store_close(s);
}

#define CASES                                                                               \
    {"batch_commit_rollback", test_batch_commit_rollback},                                   \
    {"batch_rollback_new_key", test_batch_rollback_new_key},                                 \
    {"batch_savepoint", test_batch_savepoint}, {"batch_deferred", test_batch_deferred},   \
    {"batch_crash", test_batch_crash}, {"batch_links", test_batch_links},             \
    {"async_commit", test_async_commit},                                                     \
    {"job_limit_concurrent", test_job_limit_concurrent},                                     \
    {"template_owner", test_template_owner}, {"claim_skips_imports", test_claim_skips_imports}, \
    {"migration_003_merges", test_migration_003_merges}

static const tt_test_case cases[] = {CASES, {NULL, NULL}};
static const tt_test_suite suites[] = {
    {"integrity_sqlite", tt_fx_sqlite_init, tt_fx_sqlite_cleanup, cases},
    {"integrity_postgres", tt_fx_pg_init, tt_fx_pg_cleanup, cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

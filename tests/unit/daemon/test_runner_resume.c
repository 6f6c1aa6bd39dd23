/* SPDX-License-Identifier: MIT
 * test_runner_resume.c - the runner's claims, leases and resume, against a temporary SQLite
 * database: a job stopped mid-way (kill -9 of a worker, or stopped after 5 trials) resumes to
 * the same sequence and best as an uninterrupted run; a trial longer than the lease keeps it
 * by heartbeat, a lost lease mid-trial, a cancel that kills the running build, a takeover
 * logged.  On a throwaway PostgreSQL: a worker whose database connection is lost mid-job
 * resumes the job instead of failing it; the heartbeat renews at once after a restart.  Fixtures: tests/helpers/runner_fixture,
 * store_fixture (the cluster).
 *
 * Measurements come from the `model` and `sim` backends (models of the chip, not the chip),
 * and for the lease tests from the cmd: backend with the fake toolchain
 * (tests/data/fake-toolchain) behind a build step slowed down beyond the lease.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "dataset.h"
#include "runner.h"
#include "runner_fixture.h"
#include "store.h"
#include "store_fixture.h"
#include "strategy.h"
#include "t1.h"
#include "tt_test.h"

static tt_rfx_seq_out sa, sb, sh;

/* kill -9 of a worker process mid-job: the restarted runner finishes the job with the same
 * trial sequence and best as an uninterrupted run, keeping every committed trial. */
static void test_kill9_resume(void)
{
    static const char *P4K = "{\"M\":4096,\"N\":4096,\"K\":4096,\"dtype\":\"float16\"}";
    char url1[512], url2[512];
    tt_rfx_db_url(url1, sizeof url1, "k9straight");
    tt_rfx_db_url(url2, sizeof url2, "k9crash");
    tt_store *s1 = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url1, &s1, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url2, &s2, NULL), TT_OK);
    /* K9_TRIALS: the job must outlast a group commit (0.1 s) by far, so that the kill lands
     * mid-job: 300 trials of the simulator (0.25 ms per GEMM 4096^3 config since the walk
     * marks) could finish inside the first batch */
    enum { K9_TRIALS = TT_RFX_SEQ_MAX };
    int64_t j1 = tt_rfx_make_job(s1, "sim", "evolution", K9_TRIALS, 5, "Ascend910B2", P4K);
    int64_t j2 = tt_rfx_make_job(s2, "sim", "evolution", K9_TRIALS, 5, "Ascend910B2", P4K);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {   /* the worker process that will be killed */
        tt_runner_config c = tt_rfx_runner_cfg(url2, 1);
        c.worker_name = "victim";
        tt_runner *r = NULL;
        if (tt_runner_start(&c, &r, NULL) != TT_OK) _exit(3);
        for (;;) pause();
    }
    int64_t done = 0;
    for (int i = 0; i < 6000 && done < 5; i++) {
        tt_job j;
        memset(&j, 0, sizeof j);
        if (tt_store_job_get(s2, j2, &j) == TT_OK) done = j.done;
        tt_job_clear(&j);
        usleep(2000);
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    tt_rfx_job_trials(s2, j2, &sh);
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s2, j2, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_RUNNING);   /* killed mid-job */
    CU_ASSERT(sh.n >= 5 && sh.n < K9_TRIALS);
    CU_ASSERT_EQUAL(j.done, (int64_t)sh.n);      /* every committed trial is there */
    tt_job_clear(&j);
    /* restart (a daemon start releases the leases) and an uninterrupted run elsewhere */
    CU_ASSERT_EQUAL(tt_store_job_release_all(s2), TT_OK);
    tt_runner_config c2 = tt_rfx_runner_cfg(url2, 1), c1 = tt_rfx_runner_cfg(url1, 1);
    tt_runner *r2 = NULL, *r1 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c2, &r2, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c1, &r1, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s2, j2, 120), TT_JOB_DONE);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s1, j1, 120), TT_JOB_DONE);
    tt_runner_stop(r1);
    tt_runner_stop(r2);
    tt_rfx_job_trials(s1, j1, &sa);
    tt_rfx_job_trials(s2, j2, &sb);
    CU_ASSERT_EQUAL(sa.n, K9_TRIALS);
    CU_ASSERT_EQUAL(sa.n, sb.n);
    size_t diff = 0;
    for (size_t i = 0; i < sa.n && i < sb.n; i++) diff += strcmp(sa.keys[i], sb.keys[i]) != 0;
    CU_ASSERT_EQUAL(diff, 0);
    CU_ASSERT_DOUBLE_EQUAL(sa.best, sb.best, 0);
    for (size_t i = 0; i < sh.n && i < sb.n; i++) CU_ASSERT_EQUAL(sh.ids[i], sb.ids[i]);
    tt_store_close(s1);
    tt_store_close(s2);
}


static void test_resume_same_result(void)
{
    char url1[512], url2[512];
    tt_rfx_db_url(url1, sizeof url1, "straight");
    tt_rfx_db_url(url2, sizeof url2, "crash");
    tt_store *s1 = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url1, &s1, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url2, &s2, NULL), TT_OK);
    static const char *const strategies[] = {"model-refine", "evolution", "anneal", "bo",
                                             "model-bo"};
    for (int k = 0; k < 5; k++) {
        int64_t j1 = tt_rfx_make_job(s1, "sim", strategies[k], 16, 77, "Ascend910B2", TT_RFX_P1K);
        int64_t j2 = tt_rfx_make_job(s2, "sim", strategies[k], 16, 77, "Ascend910B2", TT_RFX_P1K);
        /* uninterrupted */
        tt_runner_config c1 = tt_rfx_runner_cfg(url1, 1);
        tt_runner *r = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c1, &r, NULL), TT_OK);
        CU_ASSERT_EQUAL(tt_rfx_wait_job(s1, j1, 30), TT_JOB_DONE);
        tt_runner_stop(r);
        /* interrupted after 5 trials: the worker stops as if killed, the job stays running */
        tt_runner_config c2 = tt_rfx_runner_cfg(url2, 1);
        c2.max_trials = 5;
        CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c2, &r, NULL), TT_OK);
        for (int i = 0; i < 1500; i++) {
            tt_job j;
            memset(&j, 0, sizeof j);
            tt_store_job_get(s2, j2, &j);
            int64_t done = j.done;
            tt_job_clear(&j);
            if (done >= 5) break;
            usleep(20000);
        }
        usleep(50000);
        tt_runner_stop(r);
        tt_rfx_seq_out *half = &sh;
        tt_rfx_job_trials(s2, j2, half);
        CU_ASSERT_EQUAL(half->n, 5);
        tt_job j;
        memset(&j, 0, sizeof j);
        CU_ASSERT_EQUAL(tt_store_job_get(s2, j2, &j), TT_OK);
        CU_ASSERT_EQUAL(j.state, TT_JOB_RUNNING);
        tt_job_clear(&j);
        /* restart: release the dead worker's lease and run again */
        CU_ASSERT_EQUAL(tt_store_job_release_all(s2), TT_OK);
        c2.max_trials = 0;
        c2.worker_name = "again";
        CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c2, &r, NULL), TT_OK);
        CU_ASSERT_EQUAL(tt_rfx_wait_job(s2, j2, 30), TT_JOB_DONE);
        tt_runner_stop(r);
        tt_rfx_seq_out *a = &sa, *b = &sb;
        tt_rfx_job_trials(s1, j1, a);
        tt_rfx_job_trials(s2, j2, b);
        CU_ASSERT(a->n > 5);
        CU_ASSERT_EQUAL(a->n, b->n);
        for (size_t i = 0; i < a->n && i < b->n; i++) CU_ASSERT_STRING_EQUAL(a->keys[i], b->keys[i]);
        CU_ASSERT_DOUBLE_EQUAL(a->best, b->best, 0);
        /* the first 5 measurements were kept, not re-measured */
        for (size_t i = 0; i < 5; i++) CU_ASSERT_EQUAL(half->ids[i], b->ids[i]);
        tt_job ja, jb;
        memset(&ja, 0, sizeof ja);
        memset(&jb, 0, sizeof jb);
        CU_ASSERT_EQUAL(tt_store_job_get(s1, j1, &ja), TT_OK);
        CU_ASSERT_EQUAL(tt_store_job_get(s2, j2, &jb), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(ja.best_us, jb.best_us, 0);
        CU_ASSERT_EQUAL(jb.done, (int64_t)b->n);
        tt_job_clear(&ja);
        tt_job_clear(&jb);
    }
    /* a second identical job in the same database reuses every measurement */
    int64_t j3 = tt_rfx_make_job(s1, "sim", "model-refine", 16, 77, "Ascend910B2", TT_RFX_P1K);
    tt_runner_config c1 = tt_rfx_runner_cfg(url1, 2);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c1, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s1, j3, 30), TT_JOB_DONE);
    tt_runner_stop(r);
    tt_trial *tr = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s1, j3, 0, 64, &tr, &n, NULL), TT_OK);
    CU_ASSERT(n > 0);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(tr[i].reused, 1);
        tt_trial_clear(&tr[i]);
    }
    free(tr);
    tt_store_close(s1);
    tt_store_close(s2);
}


/* ---- leases: a trial longer than the lease (a slow cmd: build) -------------------------- */
typedef struct slow_env {
    tt_catalog *cat;
    const tt_template *t;
    json_t *toolchains;
    char counter[600], work[600];
} slow_env;

/* fake_vec (tests/data/templates-cmd) on toolchain "slow": the fake toolchain whose build
 * sleeps build_s first.  Each build appends a line to env->counter. */
static int slow_env_open(slow_env *env, const char *name, double build_s)
{
    memset(env, 0, sizeof *env);
    char *td = tt_test_src("tests/data/templates-cmd"), *gd = tt_test_src("costmodel/targets");
    char *b = tt_test_src("tests/data/fake-toolchain/build.sh");
    char *r = tt_test_src("tests/data/fake-toolchain/run.sh");
    tt_errinfo e;
    int ok = tt_catalog_new(td, gd, &env->cat, &e) == TT_OK &&
             tt_catalog_template(env->cat, NULL, "fake_vec", NULL, &env->t, &e) == TT_OK;
    char bc[700], rc[700];
    snprintf(bc, sizeof bc, "sleep %.2f; sh '%s'", build_s, b);
    snprintf(rc, sizeof rc, "sh '%s'", r);
    snprintf(env->counter, sizeof env->counter, "%s/%s-builds.txt", tt_rfx_tmp, name);
    snprintf(env->work, sizeof env->work, "%s/%s-work", tt_rfx_tmp, name);
    env->toolchains = json_pack("{s:{s:s, s:s, s:{s:s}, s:f, s:f}}", "slow", "build", bc, "run",
                                rc, "env", "FAKE_COUNTER", env->counter, "build_timeout",
                                build_s + 10, "run_timeout", 10.0);
    free(td);
    free(gd);
    free(b);
    free(r);
    return ok && env->toolchains;
}

static void slow_env_close(slow_env *env)
{
    json_decref(env->toolchains);
    tt_catalog_free(env->cat);
}

/* slow_env_open(env, name, build_s) and a SQLite database of that name (its URL in url),
 * opened; fails the test when either cannot be made. */
static tt_store *slow_open(slow_env *env, const char *name, double build_s, char url[512])
{
    CU_ASSERT_FATAL(slow_env_open(env, name, build_s));
    tt_rfx_db_url(url, 512, name);
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    return s;
}

static tt_runner_config slow_cfg(slow_env *env, const char *url, const char *name, double lease)
{
    tt_runner_config c = {.db_url = url, .workers = 1, .lease_seconds = lease,
                          .poll_seconds = 0.02, .worker_name = name, .catalog = env->cat,
                          .toolchains = env->toolchains, .work_dir = env->work};
    return c;
}

/* A queued fake_vec job on cmd:slow: exhaustive over the first `budget` configs (BLOCK 16,
 * MODE 0 = builds and runs, MODE 1 = build error), submitted for the toolchain fingerprint
 * fp (NULL: env's definition of "slow"). */
static int64_t slow_job_fp(tt_store *s, slow_env *env, const char *url, int64_t budget,
                           const char *fp)
{
    tt_runner_config c = slow_cfg(env, url, "check", 1);
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "fake_vec");
    snprintf(j.template_hash, sizeof j.template_hash, "%s", env->t->hash);
    snprintf(j.target, sizeof j.target, "Ascend910B2");
    snprintf(j.backend, sizeof j.backend, "cmd:slow");
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, env->t, "cmd:slow", j.backend_fp, NULL), TT_OK);
    if (fp) snprintf(j.backend_fp, sizeof j.backend_fp, "%s", fp);
    snprintf(j.strategy, sizeof j.strategy, "exhaustive");
    j.problem_key = (char *)"N=4096,dtype=float16";
    j.problem_json = (char *)"{\"N\":4096,\"dtype\":\"float16\"}";
    j.budget_trials = budget;
    CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_OK);
    return j.id;
}

static int64_t slow_job(tt_store *s, slow_env *env, const char *url, int64_t budget)
{
    return slow_job_fp(s, env, url, budget, NULL);
}


/* Log lines of a runner, for the assertions on what it reports. */
typedef struct log_sink {
    pthread_mutex_t mu;
    char text[8192];
} log_sink;

static void log_to_sink(void *ud, tt_log_level level, const char *msg)
{
    log_sink *k = ud;
    pthread_mutex_lock(&k->mu);
    size_t n = strlen(k->text);
    snprintf(k->text + n, sizeof k->text - n, "%s %s\n", tt_log_level_name(level), msg);
    pthread_mutex_unlock(&k->mu);
}

/* Every build takes twice the lease: the heartbeat keeps the first worker's lease alive, so a
 * second worker polling all along never takes the job over, and every config is built once,
 * by the first worker (trials.measured_by). */
/* Run job `id` in store `url` until the worker has measured (or replayed) `trials` trials,
 * then stop it as if killed: the job stays running; its lease is released for the next run. */
static void run_killed_after(const char *url, tt_store *s, int64_t id, int64_t trials)
{
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    c.max_trials = trials;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int i = 0; i < 1500; i++) {
        tt_job j;
        memset(&j, 0, sizeof j);
        tt_store_job_get(s, id, &j);
        int64_t done = j.done;
        tt_job_clear(&j);
        if (done >= trials) break;
        usleep(20000);
    }
    usleep(50000);
    tt_runner_stop(r);
    CU_ASSERT_EQUAL(tt_store_job_release_all(s), TT_OK);
}

/* A resumed job replays its committed trials first; its progress never goes back below what
 * was done before the restart (a --wait progress bar jumped from 8 back to 1, 2, ...). */
static void test_resume_progress(void)
{
    char url[512];
    tt_rfx_db_url(url, sizeof url, "progress");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = tt_rfx_make_job(s, "sim", "evolution", 16, 77, "Ascend910B2", TT_RFX_P1K);
    run_killed_after(url, s, id, 8);
    run_killed_after(url, s, id, 2);   /* stopped while replaying the first 8 */
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_RUNNING);
    CU_ASSERT(j.done >= 8);
    if (j.done < 8) fprintf(stderr, "\nprogress after the resume: %lld\n", (long long)j.done);
    tt_job_clear(&j);
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, id, 30), TT_JOB_DONE);
    tt_runner_stop(r);
    static tt_rfx_seq_out out;   /* 270 KB */
    tt_rfx_job_trials(s, id, &out);
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, (int64_t)out.n);   /* at the end: exactly the trials */
    CU_ASSERT_EQUAL(j.planned, j.done);
    tt_job_clear(&j);
    tt_store_close(s);
}

static void test_lease_heartbeat(void)
{
    slow_env env;
    char url[512];
    tt_store *s = slow_open(&env, "hb", 1.6, url);
    int64_t id = slow_job(s, &env, url, 2);
    log_sink la = {.mu = PTHREAD_MUTEX_INITIALIZER};
    tt_runner_config ca = slow_cfg(&env, url, "A", 0.75);
    ca.log = log_to_sink;
    ca.log_ud = &la;
    tt_runner *ra = NULL, *rb = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&ca, &ra, NULL), TT_OK);
    tt_job j;
    int held = 0;
    for (int i = 0; i < 500 && !held; i++) {
        memset(&j, 0, sizeof j);
        held = tt_store_job_get(s, id, &j) == TT_OK && strcmp(j.lease_owner, "A/w0") == 0;
        tt_job_clear(&j);
        if (!held) usleep(10000);
    }
    CU_ASSERT_FATAL(held);
    tt_runner_config cb = slow_cfg(&env, url, "B", 0.75);
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&cb, &rb, NULL), TT_OK);
    tt_job_state st = TT_JOB_RUNNING;
    int foreign = 0;
    for (int i = 0; i < 2000 && (st == TT_JOB_RUNNING || st == TT_JOB_QUEUED); i++) {
        memset(&j, 0, sizeof j);
        if (tt_store_job_get(s, id, &j) == TT_OK) {
            st = j.state;
            if (st == TT_JOB_RUNNING && strcmp(j.lease_owner, "A/w0") != 0) foreign++;
        }
        tt_job_clear(&j);
        usleep(10000);
    }
    CU_ASSERT(tt_runner_alive(ra));
    CU_ASSERT(tt_runner_alive(rb));
    tt_runner_stop(rb);
    tt_runner_stop(ra);
    CU_ASSERT_EQUAL(st, TT_JOB_DONE);
    CU_ASSERT_EQUAL(foreign, 0);   /* never held by B */
    tt_trial *tr = NULL;
    size_t n = 0;
    int64_t total = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, id, 0, 10, &tr, &n, &total), TT_OK);
    CU_ASSERT_EQUAL(total, 2);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_STRING_EQUAL(tr[i].measured_by, "A/w0");
        tt_trial_clear(&tr[i]);
    }
    free(tr);
    CU_ASSERT_EQUAL(tt_rfx_count_lines(env.counter), 2);   /* each config built once */
    CU_ASSERT_PTR_NOT_NULL(strstr(la.text, "info job 1 claimed by A/w0 (new)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(la.text, "info job 1 done: best "));
    CU_ASSERT_PTR_NOT_NULL(strstr(la.text, "(trials 2/2, 1 ok)"));
    tt_store_close(s);
    slow_env_close(&env);
}

/* Worker "A" (lease 0.3 s, its log in *la) started on the slow toolchain; returns once it
 * holds job `id` (running), NULL (after a failed assertion) if it never does. */
static tt_runner *slow_worker_holding(slow_env *env, const char *url, tt_store *s, int64_t id,
                                      log_sink *la)
{
    tt_runner_config ca = slow_cfg(env, url, "A", 0.3);
    ca.log = log_to_sink;
    ca.log_ud = la;
    tt_runner *ra = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&ca, &ra, NULL), TT_OK);
    int held = 0;
    for (int i = 0; i < 500 && !held; i++) {
        tt_job j;
        memset(&j, 0, sizeof j);
        held = tt_store_job_get(s, id, &j) == TT_OK && j.state == TT_JOB_RUNNING;
        tt_job_clear(&j);
        if (!held) usleep(10000);
    }
    CU_ASSERT_FATAL(held);
    return ra;
}

/* A job cancelled while its worker is in the middle of a slow trial: the heartbeat sees it,
 * the trial in flight is dropped (not recorded), and the worker goes on with the next job. */
static void test_lease_lost_mid_trial(void)
{
    slow_env env;
    char url[512];
    tt_store *s = slow_open(&env, "lost", 1.0, url);
    int64_t id = slow_job(s, &env, url, 2);
    log_sink la = {.mu = PTHREAD_MUTEX_INITIALIZER};
    tt_runner *ra = slow_worker_holding(&env, url, s, id, &la);
    usleep(200000);   /* inside the first build */
    CU_ASSERT_EQUAL(tt_store_job_cancel(s, id), TT_OK);
    int64_t next = slow_job(s, &env, url, 1);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, next, 30), TT_JOB_DONE);
    tt_runner_stop(ra);
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_CANCELLED);
    CU_ASSERT_EQUAL(j.done, 0);   /* the trial in flight was not recorded */
    tt_job_clear(&j);
    CU_ASSERT_PTR_NOT_NULL(strstr(la.text, "info job 1: cancelled, stopping"));
    CU_ASSERT_PTR_NOT_NULL(strstr(la.text, "info job 2 claimed by A/w0 (new)"));
    tt_store_close(s);
    slow_env_close(&env);
}

/* Monotonic seconds. */
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A job cancelled in the middle of a long build: the command's process group is killed as
 * soon as the heartbeat sees the cancel (the build never gets past its sleep to count itself),
 * not left to run to its end or its build_timeout. */
static void test_cancel_stops_command(void)
{
    slow_env env;
    char url[512];
    tt_store *s = slow_open(&env, "stop", 8.0, url);
    int64_t id = slow_job(s, &env, url, 1);
    log_sink la = {.mu = PTHREAD_MUTEX_INITIALIZER};
    tt_runner *ra = slow_worker_holding(&env, url, s, id, &la);
    usleep(200000);   /* inside the build's sleep */
    CU_ASSERT_EQUAL(tt_store_job_cancel(s, id), TT_OK);
    double t0 = mono_now();
    int seen = 0;
    for (int i = 0; i < 1500 && !seen; i++) {   /* old code: only after the 8 s build */
        pthread_mutex_lock(&la.mu);
        seen = strstr(la.text, "job 1: cancelled, stopping") != NULL;
        pthread_mutex_unlock(&la.mu);
        if (!seen) usleep(10000);
    }
    double waited = mono_now() - t0;
    tt_runner_stop(ra);
    CU_ASSERT(seen);
    CU_ASSERT(waited < 6.0);
    if (waited >= 6.0) fprintf(stderr, "cancel seen after %.1f s\n", waited);
    CU_ASSERT_EQUAL(tt_rfx_count_lines(env.counter), 0);   /* killed during the sleep */
    tt_store_close(s);
    slow_env_close(&env);
}

/* A cmd: job submitted for another definition of "slow" (another host's, or this host's
 * before it changed: cmd:slow@00000000).  A team (PostgreSQL) leaves it queued for a host that
 * has that definition while the worker runs the next job, of its own definition; a single
 * host (SQLite), where no other worker can come, fails it naming both fingerprints.  The old
 * worker claimed it and measured it under its own fingerprint: the job's trials and best were
 * filed under a key it was not submitted for (with two hosts: half under each, and the
 * re-measurement failed with 'trial N not found under the key'); a host without the
 * toolchain failed such jobs ('toolchain ... is not defined in the server config'). */
static void claim_definition_case(int pg)
{
    slow_env env;
    char url[700];
    CU_ASSERT_FATAL(slow_env_open(&env, pg ? "pgdef" : "otherdef", 0.0));
    if (pg) snprintf(url, sizeof url, "%s", tt_fx_fresh_url());
    else tt_rfx_db_url(url, sizeof url, "otherdef");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t other = slow_job_fp(s, &env, url, 2, "cmd:slow@00000000");
    int64_t mine = slow_job(s, &env, url, 2);
    tt_runner_config c = slow_cfg(&env, url, "host", 5);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, mine, 60), TT_JOB_DONE);   /* claims go oldest first */
    tt_runner_stop(r);
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, other, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, pg ? TT_JOB_QUEUED : TT_JOB_FAILED);
    CU_ASSERT_EQUAL(j.done, 0);
    CU_ASSERT_STRING_EQUAL(j.lease_owner, "");
    if (!pg)
        CU_ASSERT_PTR_NOT_NULL(strstr(j.error ? j.error : "", "the definition of toolchain slow "
                                      "changed since the job was submitted (job: "
                                      "cmd:slow@00000000, this server: cmd:slow@"));
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_rfx_count_lines(env.counter), 2);   /* the builds of `mine` only */
    tt_store_close(s);
    slow_env_close(&env);
}

static void test_claim_needs_definition(void) { claim_definition_case(0); }
static void test_pg_claim_needs_definition(void) { claim_definition_case(1); }

/* A worker stopped on purpose (SIGTERM: systemctl stop/restart of a host) finishes its trial
 * and releases the lease of its job, so that another worker (another host of the team)
 * resumes it at its next poll.  The old worker kept the lease until it expired: with the
 * default lease_seconds a graceful restart left each of its jobs idle for 30 s on
 * PostgreSQL, where leases are never released at start. */
static void test_stop_releases_lease(void)
{
    slow_env env;
    char url[512];
    tt_store *s = slow_open(&env, "stoprel", 0.2, url);
    int64_t id = slow_job(s, &env, url, 6);
    log_sink k = {.mu = PTHREAD_MUTEX_INITIALIZER};
    tt_runner_config c = slow_cfg(&env, url, "host", 600);
    c.log = log_to_sink;
    c.log_ud = &k;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    tt_job j;
    memset(&j, 0, sizeof j);
    for (int i = 0; i < 3000 && j.done < 1; i++) {   /* until its first trial is recorded */
        tt_job_clear(&j);
        CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, id, &j), TT_OK);
        if (j.done < 1) usleep(10000);
    }
    tt_job_clear(&j);
    tt_runner_stop(r);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_RUNNING);
    CU_ASSERT(j.done >= 1 && j.done < 6);
    CU_ASSERT_STRING_EQUAL(j.lease_owner, "");
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(tt_store_job_claim(s, "other/w0", 30, &j), TT_OK);   /* at once */
    CU_ASSERT_EQUAL(j.id, id);
    CU_ASSERT_STRING_EQUAL(j.claimed_from, "");   /* a resume, not a takeover */
    tt_job_clear(&j);
    CU_ASSERT_PTR_NOT_NULL(strstr(k.text, "info job 1: stopping; its lease is released"));
    tt_store_close(s);
    slow_env_close(&env);
}

/* A worker that stops as if killed leaves its job leased; another worker takes it over once
 * the lease has expired and says so. */
static void test_lease_takeover_logged(void)
{
    char url[512];
    tt_rfx_db_url(url, sizeof url, "takeover");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = tt_rfx_make_job(s, "model", "model-topk", 6, 1, "Ascend910B2", TT_RFX_P512);
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    c.lease_seconds = 0.3;
    c.worker_name = "dies";
    c.max_trials = 2;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int i = 0; i < 500 && tt_runner_alive(r); i++) usleep(10000);
    CU_ASSERT(!tt_runner_alive(r));   /* its worker ended: /readyz would say so */
    tt_runner_stop(r);
    log_sink lb = {.mu = PTHREAD_MUTEX_INITIALIZER};
    tt_runner_config cb = tt_rfx_runner_cfg(url, 1);
    cb.lease_seconds = 0.3;
    cb.worker_name = "next";
    cb.log = log_to_sink;
    cb.log_ud = &lb;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&cb, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, id, 30), TT_JOB_DONE);
    tt_runner_stop(r);
    CU_ASSERT_PTR_NOT_NULL(strstr(lb.text, "claimed by next/w0 (lease of dies/w0 expired, 2 "
                                           "trials done)"));
    tt_trial *tr = NULL;
    size_t n = 0;
    int64_t total = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, id, 0, 10, &tr, &n, &total), TT_OK);
    CU_ASSERT_EQUAL(total, 6);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_STRING_EQUAL(tr[i].measured_by, i < 2 ? "dies/w0" : "next/w0");
        tt_trial_clear(&tr[i]);
    }
    free(tr);
    CU_ASSERT(tt_runner_alive(NULL));
    tt_store_close(s);
}

/* ---- PostgreSQL: the database connection lost in the middle of a job ------------------
 * A trigger on trials ends the worker's session (pg_terminate_backend of its own backend,
 * as a server restart or failover does) inside the transaction of the job's 5th new trial;
 * a sequence counts the inserts, since the dying transaction's writes are rolled back.  The
 * job is left running and resumed, not failed: it ends done with the trials of an
 * uninterrupted run, each once.  Before, the worker failed the job ('store: postgresql:
 * ... terminating connection due to administrator command') on the reconnected link. */
static const char CUT_SQL[] =
    "CREATE SEQUENCE tt_cut_seq;"
    "CREATE FUNCTION tt_cut_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "  IF nextval('tt_cut_seq') = 5 THEN PERFORM pg_terminate_backend(pg_backend_pid()); "
    "  END IF; RETURN NEW; END $$;"
    "CREATE TRIGGER tt_cut BEFORE INSERT ON trials FOR EACH ROW EXECUTE FUNCTION tt_cut_fn();";

/* Run job id of url to its end on one worker (log in *k, may be NULL); its final state. */
static tt_job_state pg_run_job(const char *url, tt_store *s, int64_t id, log_sink *k)
{
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    c.worker_name = "pg";
    if (k) {
        c.log = log_to_sink;
        c.log_ud = k;
    }
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    tt_job_state st = tt_rfx_wait_job(s, id, 120);
    tt_runner_stop(r);
    return st;
}

static void test_pg_connection_lost(void)
{
    static tt_rfx_seq_out ref, cut;
    enum { CUT_TRIALS = 12 };
    char url[700];
    tt_store *s = NULL, *s0 = NULL;
    snprintf(url, sizeof url, "%s", tt_fx_fresh_url());   /* the uninterrupted reference */
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s0, NULL), TT_OK);
    int64_t j0 = tt_rfx_make_job(s0, "model", "model-topk", CUT_TRIALS, 1, "Ascend910B2", TT_RFX_P512);
    CU_ASSERT_EQUAL(pg_run_job(url, s0, j0, NULL), TT_JOB_DONE);
    tt_rfx_job_trials(s0, j0, &ref);
    tt_store_close(s0);
    snprintf(url, sizeof url, "%s", tt_fx_fresh_url());
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    CU_ASSERT_FATAL(tt_fx_raw_exec(CUT_SQL));
    int64_t id = tt_rfx_make_job(s, "model", "model-topk", CUT_TRIALS, 1, "Ascend910B2", TT_RFX_P512);
    log_sink k = {.mu = PTHREAD_MUTEX_INITIALIZER};
    CU_ASSERT_EQUAL(pg_run_job(url, s, id, &k), TT_JOB_DONE);
    tt_rfx_job_trials(s, id, &cut);
    CU_ASSERT_EQUAL(cut.n, CUT_TRIALS);
    CU_ASSERT_EQUAL(cut.n, ref.n);
    for (size_t i = 0; i < cut.n && i < ref.n; i++) CU_ASSERT_STRING_EQUAL(cut.keys[i], ref.keys[i]);
    CU_ASSERT_DOUBLE_EQUAL(cut.best, ref.best, 0);
    CU_ASSERT_EQUAL(tt_fx_raw_int("SELECT count(*) FROM trials"), CUT_TRIALS);   /* each once */
    CU_ASSERT_EQUAL(tt_fx_raw_int("SELECT last_value FROM tt_cut_seq"), CUT_TRIALS + 1);
    const char *lost = "warning job 1: database connection lost (store: postgresql: ";
    const char *resumed = "info job 1 claimed by pg/w0 (resumed, 4 trials done)";
    CU_ASSERT_PTR_NOT_NULL(strstr(k.text, lost));
    CU_ASSERT_PTR_NOT_NULL(strstr(k.text, resumed));
    CU_ASSERT_PTR_NULL(strstr(k.text, "failed"));
    if (!strstr(k.text, lost) || !strstr(k.text, resumed)) fprintf(stderr, "\n%s\n", k.text);
    tt_store_close(s);
}

/* Every session of the database ended (a restart) while the worker is in a slow build: the
 * heartbeat's renewal meets its dead link and is made again on a new connection at once (the
 * old code logged 'cannot renew its lease' and skipped the beat: with lease 0.6 s, two missed
 * beats lose the lease), and the trial is recorded on the worker's reconnected link. */
static void test_pg_heartbeat_reconnects(void)
{
    slow_env env;
    CU_ASSERT_FATAL(slow_env_open(&env, "pghb", 1.5));
    char url[700];
    snprintf(url, sizeof url, "%s", tt_fx_fresh_url());
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = slow_job(s, &env, url, 1);
    log_sink k = {.mu = PTHREAD_MUTEX_INITIALIZER};
    tt_runner_config c = slow_cfg(&env, url, "A", 0.6);
    c.log = log_to_sink;
    c.log_ud = &k;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    int beats = 0;   /* wait for a renewal: the heartbeat's connection is open */
    for (int i = 0; i < 500 && beats < 2; i++) {
        tt_job j;
        memset(&j, 0, sizeof j);
        if (tt_store_job_get(s, id, &j) == TT_OK && j.state == TT_JOB_RUNNING) beats++;
        tt_job_clear(&j);
        usleep(300000);
    }
    CU_ASSERT_FATAL(tt_fx_raw_exec("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                                   "WHERE datname = current_database() AND pid <> pg_backend_pid()"));
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, id, 60), TT_JOB_DONE);
    tt_runner_stop(r);
    CU_ASSERT_PTR_NULL(strstr(k.text, "cannot renew"));
    CU_ASSERT_PTR_NULL(strstr(k.text, "database connection lost"));
    if (strstr(k.text, "cannot renew") || strstr(k.text, "connection lost")) fprintf(stderr, "\n%s\n", k.text);
    CU_ASSERT_EQUAL(tt_rfx_count_lines(env.counter), 1);   /* built once */
    tt_store_close(s);
    slow_env_close(&env);
}

static int pg_suite_init(void) { return tt_rfx_init() || tt_fx_pg_init(); }
static int pg_suite_cleanup(void) { return tt_fx_pg_cleanup() | tt_rfx_cleanup(); }

static const tt_test_case pg_cases[] = {{"connection_lost_mid_job", test_pg_connection_lost},
                                        {"heartbeat_reconnects", test_pg_heartbeat_reconnects},
                                        {"claim_needs_definition", test_pg_claim_needs_definition},
                                        {NULL, NULL}};

static const tt_test_case resume_cases[] = {
    {"lease_heartbeat", test_lease_heartbeat},
    {"lease_lost_mid_trial", test_lease_lost_mid_trial},
    {"cancel_stops_command", test_cancel_stops_command},
    {"claim_needs_definition", test_claim_needs_definition},
    {"stop_releases_lease", test_stop_releases_lease},
    {"lease_takeover_logged", test_lease_takeover_logged},
    {"kill9_resume", test_kill9_resume},
    {"resume_same_result", test_resume_same_result},
    {"resume_progress", test_resume_progress},
    {NULL, NULL}};
static const tt_test_suite suites[] = {
    {"runner_resume", tt_rfx_init, tt_rfx_cleanup, resume_cases},
    {"runner_resume_postgres", pg_suite_init, pg_suite_cleanup, pg_cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_runner.c - the worker pool against a temporary SQLite database: jobs run to done
 * with their trials, best and progress; a job stopped mid-way (as if killed) resumes to the
 * same sequence and best as an uninterrupted run; cancel; failures; backend checks.
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
#include "store.h"
#include "strategy.h"
#include "t1.h"
#include "tt_test.h"

static tt_catalog *cat;
static const tt_template *gemm;
static char *tmp;

static int suite_init(void)
{
    char *td = tt_test_src("templates"), *gd = tt_test_src("costmodel/targets");
    tt_errinfo e;
    tt_rc rc = tt_catalog_new(td, gd, &cat, &e);
    free(td);
    free(gd);
    if (rc != TT_OK) return 1;
    if (tt_catalog_template(cat, NULL, "gemm", NULL, &gemm, &e) != TT_OK) return 1;
    tmp = tt_test_tmpdir("tt-runner");
    return tmp == NULL;
}

static int suite_clean(void)
{
    tt_catalog_free(cat);
    if (tmp) tt_test_rmrf(tmp);
    free(tmp);
    return 0;
}

static void db_url(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "sqlite:%s/%s.db", tmp, name);
}

static tt_runner_config runner_cfg(const char *url, int workers)
{
    tt_runner_config c = {.db_url = url, .workers = workers, .lease_seconds = 5,
                          .poll_seconds = 0.02, .worker_name = "test", .catalog = cat};
    return c;
}

static int64_t make_job(tt_store *s, const char *backend, const char *strategy, int64_t budget,
                        int64_t seed, const char *target, const char *problem)
{
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "gemm");
    snprintf(j.template_hash, sizeof j.template_hash, "%s", gemm->hash);
    snprintf(j.target, sizeof j.target, "%s", target);
    snprintf(j.backend, sizeof j.backend, "%s", backend);
    snprintf(j.backend_fp, sizeof j.backend_fp, "%s", backend);
    snprintf(j.strategy, sizeof j.strategy, "%s", strategy);
    char key[256];
    int64_t slots[TT_MAX_SLOTS];
    json_t *pj = json_loads(problem, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_from_json(gemm, pj, slots, NULL), TT_OK);
    json_decref(pj);
    tt_tmpl_problem_key(gemm, slots, key, sizeof key);
    j.problem_key = key;
    j.problem_json = (char *)problem;
    j.budget_trials = budget;
    j.seed = seed;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &j), TT_OK);
    CU_ASSERT(j.id > 0);
    return j.id;
}

static const char *P512 = "{\"M\":512,\"N\":512,\"K\":512,\"dtype\":\"float16\"}";
static const char *P1K = "{\"M\":1024,\"N\":2048,\"K\":768,\"dtype\":\"float16\"}";

static int quiet_failures;   /* test_failures expects failed jobs: do not print them */

/* Poll until the job leaves queued/running or timeout; returns the state (a failed job's
 * reason goes to stderr, to diagnose a failing test). */
static tt_job_state wait_job(tt_store *s, int64_t id, double timeout)
{
    for (double waited = 0; waited < timeout; waited += 0.02) {
        tt_job j;
        memset(&j, 0, sizeof j);
        if (tt_store_job_get(s, id, &j) == TT_OK && j.state != TT_JOB_QUEUED &&
            j.state != TT_JOB_RUNNING) {
            tt_job_state st = j.state;
            if (st == TT_JOB_FAILED && !quiet_failures)
                fprintf(stderr, "job %lld failed: %s\n", (long long)id, j.error ? j.error : "?");
            tt_job_clear(&j);
            return st;
        }
        tt_job_clear(&j);
        usleep(20000);
    }
    return TT_JOB_RUNNING;
}

#define SEQ_MAX 2000          /* trials kept per job (test_kill9_resume's budget) */
typedef struct seq_out {
    char keys[SEQ_MAX][128];
    int64_t ids[SEQ_MAX];
    size_t n;
    double best;
} seq_out;

/* The job's trials in seq order (paged): config keys, trial ids and the best median. */
static void job_trials(tt_store *s, int64_t id, seq_out *o)
{
    memset(o, 0, sizeof *o);
    o->best = INFINITY;
    for (int64_t off = 0;; off += 100) {
        tt_trial *tr = NULL;
        size_t n = 0;
        int64_t total = 0;
        CU_ASSERT_EQUAL_FATAL(tt_store_trial_list(s, id, off, 100, &tr, &n, &total), TT_OK);
        for (size_t i = 0; i < n; i++) {
            CU_ASSERT_EQUAL(tr[i].seq, off + (int64_t)i + 1);
            if (o->n < SEQ_MAX) {
                snprintf(o->keys[o->n], sizeof o->keys[o->n], "%s", tr[i].config_key);
                o->ids[o->n] = tr[i].id;
                o->n++;
            }
            if (tr[i].status == TT_OK && tr[i].median_us > 0 && tr[i].median_us < o->best)
                o->best = tr[i].median_us;
            tt_trial_clear(&tr[i]);
        }
        free(tr);
        if (n == 0 || off + (int64_t)n >= total) break;
    }
}

static seq_out sa, sb, sh;

/* kill -9 of a worker process mid-job: the restarted runner finishes the job with the same
 * trial sequence and best as an uninterrupted run, keeping every committed trial. */
static void test_kill9_resume(void)
{
    static const char *P4K = "{\"M\":4096,\"N\":4096,\"K\":4096,\"dtype\":\"float16\"}";
    char url1[512], url2[512];
    db_url(url1, sizeof url1, "k9straight");
    db_url(url2, sizeof url2, "k9crash");
    tt_store *s1 = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url1, &s1, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url2, &s2, NULL), TT_OK);
    /* K9_TRIALS: the job must outlast a group commit (0.1 s) by far, so that the kill lands
     * mid-job: 300 trials of the simulator (0.25 ms per GEMM 4096^3 config since the walk
     * marks) could finish inside the first batch */
    enum { K9_TRIALS = SEQ_MAX };
    int64_t j1 = make_job(s1, "sim", "evolution", K9_TRIALS, 5, "Ascend910B2", P4K);
    int64_t j2 = make_job(s2, "sim", "evolution", K9_TRIALS, 5, "Ascend910B2", P4K);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {   /* the worker process that will be killed */
        tt_runner_config c = runner_cfg(url2, 1);
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
    job_trials(s2, j2, &sh);
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s2, j2, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_RUNNING);   /* killed mid-job */
    CU_ASSERT(sh.n >= 5 && sh.n < K9_TRIALS);
    CU_ASSERT_EQUAL(j.done, (int64_t)sh.n);      /* every committed trial is there */
    tt_job_clear(&j);
    /* restart (a daemon start releases the leases) and an uninterrupted run elsewhere */
    CU_ASSERT_EQUAL(tt_store_job_release_all(s2), TT_OK);
    tt_runner_config c2 = runner_cfg(url2, 1), c1 = runner_cfg(url1, 1);
    tt_runner *r2 = NULL, *r1 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c2, &r2, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c1, &r1, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s2, j2, 120), TT_JOB_DONE);
    CU_ASSERT_EQUAL(wait_job(s1, j1, 120), TT_JOB_DONE);
    tt_runner_stop(r1);
    tt_runner_stop(r2);
    job_trials(s1, j1, &sa);
    job_trials(s2, j2, &sb);
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

static void test_jobs_run_to_done(void)
{
    char url[512];
    db_url(url, sizeof url, "run");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t a = make_job(s, "model", "model-topk", 8, 1, "Ascend910B2", P512);
    int64_t b = make_job(s, "sim", "random", 10, 2, "Ascend910B2", P1K);
    int64_t c = make_job(s, "sim", "exhaustive", 0, 0, "Ascend910B2",
                         "{\"M\":16,\"N\":16,\"K\":16,\"dtype\":\"float16\"}");
    tt_runner_config rc = runner_cfg(url, 2);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&rc, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s, a, 30), TT_JOB_DONE);
    CU_ASSERT_EQUAL(wait_job(s, b, 30), TT_JOB_DONE);
    CU_ASSERT_EQUAL(wait_job(s, c, 30), TT_JOB_DONE);
    tt_runner_stop(r);
    static const int64_t budgets[] = {8, 10, 0};
    int64_t ids[] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        tt_job j;
        memset(&j, 0, sizeof j);
        CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, ids[k], &j), TT_OK);
        seq_out *op = &sa;
        job_trials(s, ids[k], op);
        seq_out o = {.n = op->n, .best = op->best};
        CU_ASSERT(o.n > 0);
        if (budgets[k]) CU_ASSERT_EQUAL((int64_t)o.n, budgets[k]);
        CU_ASSERT_EQUAL(j.done, (int64_t)o.n);
        CU_ASSERT_EQUAL(j.planned, (int64_t)o.n);
        CU_ASSERT(j.best_trial > 0);
        CU_ASSERT_DOUBLE_EQUAL(j.best_us, o.best, 1e-9 * o.best);
        CU_ASSERT(j.best_pred_us > 0);   /* the model's prediction for the best */
        CU_ASSERT_PTR_NOT_NULL(j.best_config_json);
        CU_ASSERT(j.lease_owner[0] == 0 || strncmp(j.lease_owner, "test/w", 6) == 0);
        tt_job_clear(&j);
    }
    /* the `model` backend reports the model's prediction: measured == predicted */
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, a, &j), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, j.best_pred_us, 1e-9 * j.best_us);
    tt_job_clear(&j);
    /* best is stored for the key, with the job's best */
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, b, &j), TT_OK);
    tt_best best;
    memset(&best, 0, sizeof best);
    tt_best_query q = {.template_name = "gemm", .target = "Ascend910B2", .backend_fp = "sim",
                       .problem_key = j.problem_key};
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &best), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(best.median_us, j.best_us, 1e-9 * j.best_us);
    CU_ASSERT_EQUAL(best.trial_id, j.best_trial);
    tt_best_clear(&best);
    tt_job_clear(&j);
    /* each finished job stored a calibration fitted on its (prediction, measurement) pairs:
     * for the `model` backend they are equal, so the fit is the identity */
    char *cj = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_calib_get(s, "Ascend910B2", "model", &cj), TT_OK);
    json_t *co = json_loads(cj, 0, NULL);
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(co, "log_b")), 1.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(co, "log_a")), 0.0, 1e-5);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(co, "n")), 8);
    json_decref(co);
    free(cj);
    cj = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_calib_get(s, "Ascend910B2", "sim", &cj), TT_OK);
    co = json_loads(cj, 0, NULL);
    CU_ASSERT(json_integer_value(json_object_get(co, "n")) >= 2);
    CU_ASSERT(json_is_array(json_object_get(co, "unit_scale")));
    json_decref(co);
    free(cj);
    CU_ASSERT_EQUAL(tt_store_calib_get(s, "Ascend910B2", "replay:x", &cj), TT_ENOTFOUND);
    tt_store_close(s);
}

static void test_resume_same_result(void)
{
    char url1[512], url2[512];
    db_url(url1, sizeof url1, "straight");
    db_url(url2, sizeof url2, "crash");
    tt_store *s1 = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url1, &s1, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url2, &s2, NULL), TT_OK);
    static const char *const strategies[] = {"model-refine", "evolution", "anneal", "bo",
                                             "model-bo"};
    for (int k = 0; k < 5; k++) {
        int64_t j1 = make_job(s1, "sim", strategies[k], 16, 77, "Ascend910B2", P1K);
        int64_t j2 = make_job(s2, "sim", strategies[k], 16, 77, "Ascend910B2", P1K);
        /* uninterrupted */
        tt_runner_config c1 = runner_cfg(url1, 1);
        tt_runner *r = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c1, &r, NULL), TT_OK);
        CU_ASSERT_EQUAL(wait_job(s1, j1, 30), TT_JOB_DONE);
        tt_runner_stop(r);
        /* interrupted after 5 trials: the worker stops as if killed, the job stays running */
        tt_runner_config c2 = runner_cfg(url2, 1);
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
        seq_out *half = &sh;
        job_trials(s2, j2, half);
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
        CU_ASSERT_EQUAL(wait_job(s2, j2, 30), TT_JOB_DONE);
        tt_runner_stop(r);
        seq_out *a = &sa, *b = &sb;
        job_trials(s1, j1, a);
        job_trials(s2, j2, b);
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
    int64_t j3 = make_job(s1, "sim", "model-refine", 16, 77, "Ascend910B2", P1K);
    tt_runner_config c1 = runner_cfg(url1, 2);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c1, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s1, j3, 30), TT_JOB_DONE);
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

static void test_cancel(void)
{
    char url[512];
    db_url(url, sizeof url, "cancel");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = make_job(s, "model", "exhaustive", 0, 0, "Ascend910B2", P1K);
    tt_runner_config c = runner_cfg(url, 1);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    int64_t done = 0;
    for (int i = 0; i < 1500 && done < 3; i++) {
        tt_job j;
        memset(&j, 0, sizeof j);
        tt_store_job_get(s, id, &j);
        done = j.done;
        tt_job_clear(&j);
        usleep(10000);
    }
    CU_ASSERT(done >= 3);
    CU_ASSERT_EQUAL(tt_store_job_cancel(s, id), TT_OK);
    usleep(300000);
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    int64_t after = j.done;
    CU_ASSERT_EQUAL(j.state, TT_JOB_CANCELLED);
    CU_ASSERT(j.planned > after);   /* stopped long before the space was exhausted */
    tt_job_clear(&j);
    usleep(200000);
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT(j.done <= after + 1);   /* at most the trial in flight was recorded */
    CU_ASSERT_EQUAL(j.state, TT_JOB_CANCELLED);
    tt_job_clear(&j);
    tt_runner_stop(r);
    tt_store_close(s);
}

static void test_failures(void)
{
    char url[512];
    db_url(url, sizeof url, "fail");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t bad_target = make_job(s, "sim", "random", 4, 0, "Ascend999", P512);
    int64_t bad_backend = make_job(s, "warp-drive", "random", 4, 0, "a2", P512);
    int64_t bad_strategy = make_job(s, "model", "guess", 4, 0, "a2", P512);
    int64_t bad_dataset = make_job(s, "replay:nope", "random", 4, 0, "a2", P512);
    tt_runner_config c = runner_cfg(url, 2);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    static const char *const want[] = {"target", "backend", "strategy", "backend"};
    quiet_failures = 1;
    int64_t ids[] = {bad_target, bad_backend, bad_strategy, bad_dataset};
    for (int k = 0; k < 4; k++) {
        CU_ASSERT_EQUAL(wait_job(s, ids[k], 30), TT_JOB_FAILED);
        tt_job j;
        memset(&j, 0, sizeof j);
        CU_ASSERT_EQUAL(tt_store_job_get(s, ids[k], &j), TT_OK);
        CU_ASSERT_PTR_NOT_NULL(j.error);
        if (j.error) CU_ASSERT(strstr(j.error, want[k]) != NULL);
        CU_ASSERT_EQUAL(j.done, 0);
        tt_job_clear(&j);
    }
    quiet_failures = 0;
    tt_runner_stop(r);
    tt_runner_stop(NULL);
    tt_runner_config bad = runner_cfg(url, 0);
    CU_ASSERT_EQUAL(tt_runner_start(&bad, &r, NULL), TT_EINVAL);
    CU_ASSERT_PTR_NULL(r);
    tt_store_close(s);
}

static void test_check_backend(void)
{
    char *ds = tt_test_shared("datasets");
    json_t *tc = json_pack("{s:{s:s,s:s}}", "fake", "build", "true", "run", "echo");
    tt_runner_config c = {.db_url = "x", .workers = 1, .catalog = cat, .datasets_dir = ds,
                          .toolchains = tc, .work_dir = tmp};
    char fp[80];
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "model", fp, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(fp, "model");
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "sim", fp, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(fp, "sim");
    /* a dataset applies to a template with the same params (the T1 import), not to gemm */
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "replay:convolution_A100", fp, &e),
                    TT_EUNSUPPORTED);
    char *t1 = tt_test_shared("datasets/convolution.t1.json");
    json_t *cdoc = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_t1_file_to_template(t1, "convolution", &cdoc, &e), TT_OK);
    free(t1);
    const tt_template *conv = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(cat, NULL, NULL, cdoc, &conv, &e), TT_OK);
    json_decref(cdoc);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, conv, "replay:convolution_A100", fp, &e), TT_OK);
    /* the same fingerprint as the backend records: name@content hash */
    CU_ASSERT(strncmp(fp, "replay:convolution_A100@", 24) == 0);
    CU_ASSERT_EQUAL(strlen(fp), 24 + 8);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, conv, "sim", fp, &e), TT_EUNSUPPORTED);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "replay:nope", fp, &e), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "replay:../x", fp, &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "cmd:fake", fp, &e), TT_OK);
    CU_ASSERT(strncmp(fp, "cmd:fake@", 9) == 0);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "cmd:other", fp, &e), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "bogus", fp, &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, gemm, "", fp, &e), TT_EINVAL);
    /* a template without a kernel: model and sim do not apply */
    json_t *doc = json_loads("{\"tiletune\":1,\"name\":\"nok\",\"version\":\"1\","
                             "\"inputs\":{\"N\":\"int\"},\"params\":{\"a\":[1,2]}}", 0, NULL);
    const tt_template *nok = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(cat, NULL, "nok", doc, &nok, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, nok, "sim", fp, &e), TT_EUNSUPPORTED);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, nok, "model", fp, &e), TT_EUNSUPPORTED);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, nok, "cmd:fake", fp, &e), TT_EUNSUPPORTED);
    json_decref(doc);
    json_decref(tc);
    free(ds);
    CU_ASSERT(tt_runner_strategy_known("evolution"));
    CU_ASSERT(!tt_runner_strategy_known("genetic"));
}

static void test_replay_job(void)
{
    /* a template without a kernel (T1 import) measured on a recorded dataset: model-refine
     * falls back to seeded random, evolution runs model-free */
    char *t1 = tt_test_shared("datasets/convolution.t1.json");
    json_t *cdoc = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_t1_file_to_template(t1, "convolution", &cdoc, &e), TT_OK);
    free(t1);
    const tt_template *conv = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(cat, NULL, NULL, cdoc, &conv, &e), TT_OK);
    json_decref(cdoc);
    char url[512];
    db_url(url, sizeof url, "replay");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    static const char *const strategies[] = {"model-refine", "evolution", "anneal"};
    int64_t ids[3];
    for (int k = 0; k < 3; k++) {
        tt_job j;
        memset(&j, 0, sizeof j);
        snprintf(j.template_name, sizeof j.template_name, "convolution");
        snprintf(j.template_hash, sizeof j.template_hash, "%s", conv->hash);
        snprintf(j.target, sizeof j.target, "Ascend910B2");
        snprintf(j.backend, sizeof j.backend, "replay:convolution_A100");
        snprintf(j.backend_fp, sizeof j.backend_fp, "replay:convolution_A100");
        snprintf(j.strategy, sizeof j.strategy, "%s", strategies[k]);
        j.problem_key = "";
        j.problem_json = "{}";
        j.options_json = "{\"objective\":\"median\"}";   /* the store's best is by median */
        j.budget_trials = 20;
        j.seed = 3;
        CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &j), TT_OK);
        ids[k] = j.id;
    }
    char *ds = tt_test_shared("datasets");
    tt_runner_config c = runner_cfg(url, 2);
    c.datasets_dir = ds;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int k = 0; k < 3; k++) {
        CU_ASSERT_EQUAL(wait_job(s, ids[k], 60), TT_JOB_DONE);
        seq_out *op = &sa;
        job_trials(s, ids[k], op);
        seq_out o = {.n = op->n, .best = op->best};
        CU_ASSERT_EQUAL(o.n, 20);
        tt_job j;
        memset(&j, 0, sizeof j);
        CU_ASSERT_EQUAL(tt_store_job_get(s, ids[k], &j), TT_OK);
        CU_ASSERT(j.best_us > 100 && j.best_us < 1e6);   /* recorded times, us */
        CU_ASSERT_DOUBLE_EQUAL(j.best_us, o.best, 1e-9 * o.best);
        CU_ASSERT_EQUAL(j.best_pred_us, 0);              /* no kernel: no prediction */
        tt_job_clear(&j);
    }
    tt_runner_stop(r);
    free(ds);
    tt_store_close(s);
}

/* The objective statistic on replay: the whole space of each of the three recordings in
 * ../shared/datasets measured (exhaustive); the job's best must be the dataset's own optimum
 * by default (its recorded objective: Kernel Tuner `time`, T4 measurement "time"), and the
 * fastest by median / mean / min of the samples when asked. */
static void test_replay_objective(void)
{
    static const struct { const char *file, *name; } sets[] = {
        {"convolution_A100.kt-cache.json.gz", "a100kt.kt-cache.json.gz"},
        {"convolution_A100.t4.json.gz", "a100t4.t4.json.gz"},
        {"convolution_MI250X.t4.json.gz", "mi250x.t4.json.gz"},
    };
    static const char *const objectives[] = {NULL, "median", "mean", "min"};
    char *t1 = tt_test_shared("datasets/convolution.t1.json");
    json_t *cdoc = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_t1_file_to_template(t1, "convolution", &cdoc, NULL), TT_OK);
    free(t1);
    const tt_template *conv = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(cat, NULL, NULL, cdoc, &conv, NULL), TT_OK);
    json_decref(cdoc);
    char dsdir[600], url[512];
    snprintf(dsdir, sizeof dsdir, "%s/ds-objective", tmp);
    CU_ASSERT_EQUAL_FATAL(mkdir(dsdir, 0700), 0);
    db_url(url, sizeof url, "objective");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t ids[3][4];
    double want[3][4];
    for (int d = 0; d < 3; d++) {
        char rel[128], link[800];
        snprintf(rel, sizeof rel, "datasets/%s", sets[d].file);
        char *src = tt_test_shared(rel);
        snprintf(link, sizeof link, "%s/%s", dsdir, sets[d].name);
        CU_ASSERT_EQUAL_FATAL(symlink(src, link), 0);
        tt_dataset *ds = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_dataset_load_file(src, &ds, NULL), TT_OK);
        free(src);
        for (int k = 0; k < 4; k++) want[d][k] = INFINITY;
        for (size_t i = 0; i < ds->nrecords; i++) {
            const tt_ds_record *r = &ds->records[i];
            if (r->status != TT_DS_OK) continue;
            const double *smp = tt_ds_samples(ds, r);
            double v[4] = {r->value_us,
                           tt_objective_value(TT_OBJ_MEDIAN, smp, (int)r->nsamples, NAN),
                           tt_objective_value(TT_OBJ_MEAN, smp, (int)r->nsamples, NAN),
                           tt_objective_value(TT_OBJ_MIN, smp, (int)r->nsamples, NAN)};
            for (int k = 0; k < 4; k++)
                if (v[k] < want[d][k]) want[d][k] = v[k];
        }
        tt_dataset_free(ds);
        for (int k = 0; k < 4; k++) {
            tt_job j;
            memset(&j, 0, sizeof j);
            snprintf(j.template_name, sizeof j.template_name, "convolution");
            snprintf(j.template_hash, sizeof j.template_hash, "%s", conv->hash);
            snprintf(j.target, sizeof j.target, "Ascend910B2");
            snprintf(j.backend, sizeof j.backend, "replay:%.*s", (int)strcspn(sets[d].name, "."),
                     sets[d].name);
            snprintf(j.backend_fp, sizeof j.backend_fp, "%.70s", j.backend);
            snprintf(j.strategy, sizeof j.strategy, "exhaustive");
            char opt[64];
            snprintf(opt, sizeof opt, "{\"objective\":\"%s\"}", objectives[k] ? objectives[k] : "");
            j.options_json = objectives[k] ? opt : NULL;
            j.problem_key = "";
            j.problem_json = "{}";
            CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &j), TT_OK);
            ids[d][k] = j.id;
        }
    }
    tt_runner_config c = runner_cfg(url, 2);
    c.datasets_dir = dsdir;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < 4; k++) {
            CU_ASSERT_EQUAL(wait_job(s, ids[d][k], 240), TT_JOB_DONE);
            tt_job j;
            memset(&j, 0, sizeof j);
            CU_ASSERT_EQUAL(tt_store_job_get(s, ids[d][k], &j), TT_OK);
            CU_ASSERT_EQUAL(j.done, 4362);
            CU_ASSERT_DOUBLE_EQUAL(j.best_us, want[d][k], 1e-9 * want[d][k]);
            if (fabs(j.best_us - want[d][k]) > 1e-9 * want[d][k])
                fprintf(stderr, "\n%s objective %s: best %.6f, want %.6f\n", sets[d].file,
                        objectives[k] ? objectives[k] : "(default)", j.best_us, want[d][k]);
            tt_job_clear(&j);
        }
    tt_runner_stop(r);
    tt_store_close(s);
    /* an unknown objective, or "recorded" off replay, fails the job with the reason */
    CU_ASSERT_EQUAL(tt_objective_value(TT_OBJ_MEAN, (const double[]){1, 2, 6}, 3, NAN), 3);
    CU_ASSERT_EQUAL(tt_objective_value(TT_OBJ_MEDIAN, (const double[]){1, 2, 6}, 3, NAN), 2);
    CU_ASSERT_EQUAL(tt_objective_value(TT_OBJ_MIN, (const double[]){6, 2, 1}, 3, NAN), 1);
    CU_ASSERT_EQUAL(tt_objective_value(TT_OBJ_RECORDED, (const double[]){6, 2, 1}, 3, 7), 7);
    CU_ASSERT_EQUAL(tt_objective_value(TT_OBJ_RECORDED, (const double[]){6, 2, 1}, 3, NAN), 2);
    tt_objective o;
    CU_ASSERT_EQUAL(tt_objective_parse("mean", &o), 0);
    CU_ASSERT_EQUAL(o, TT_OBJ_MEAN);
    CU_ASSERT_EQUAL(tt_objective_parse("average", &o), -1);
}

/* The in-process backends: one sample, infeasible configs with a reason, fingerprints. */
static void test_builtin_backends(void)
{
    const tt_target *a2 = tt_catalog_target(cat, "a2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a2);
    int64_t slots[TT_MAX_SLOTS];
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(gemm, "M=1024,N=1024,K=1024,dtype=float16,"
                                                "out_dtype=float16", slots, NULL), TT_OK);
    tt_backend_env env = {.repeats = 1};
    static const char *const kinds[] = {"model", "sim"};
    double t_ok[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        tt_backend *b = NULL;
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_backend_open(kinds[k], &env, gemm, a2, slots, &b, &e), TT_OK);
        CU_ASSERT_STRING_EQUAL(tt_backend_fingerprint(b), kinds[k]);
        int64_t s[TT_MAX_SLOTS];
        memcpy(s, slots, sizeof s);
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(gemm, "block_M=128,block_N=256,block_K=64,"
                                                   "K_L1=256,S1=2,S2=2", s, NULL), TT_OK);
        tt_measurement m;
        CU_ASSERT_EQUAL(tt_backend_measure(b, s, &m), TT_OK);
        CU_ASSERT_EQUAL(m.status, TT_OK);
        CU_ASSERT_EQUAL(m.nsamples, 1);
        CU_ASSERT(m.median_us > 0 && m.median_us == m.samples_us[0]);
        t_ok[k] = m.median_us;
        /* deterministic: the same config gives the same number */
        tt_measurement m2;
        CU_ASSERT_EQUAL(tt_backend_measure(b, s, &m2), TT_OK);
        CU_ASSERT_EQUAL(m2.median_us, m.median_us);
        /* L0C: 512 x 512 fp32 = 1 MiB > 128 KiB */
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(gemm, "block_M=512,block_N=512,block_K=64,"
                                                   "K_L1=256,S1=2,S2=2", s, NULL), TT_OK);
        CU_ASSERT_EQUAL(tt_backend_measure(b, s, &m), TT_OK);
        CU_ASSERT_EQUAL(m.status, TT_EINFEASIBLE);
        CU_ASSERT_EQUAL(m.nsamples, 0);
        CU_ASSERT(strstr(m.error, "L0C") != NULL);
        tt_backend_close(b);
        /* arguments are refused */
        char spec[16];
        snprintf(spec, sizeof spec, "%s:x", kinds[k]);
        CU_ASSERT_EQUAL(tt_backend_open(spec, &env, gemm, a2, slots, &b, &e), TT_EINVAL);
        CU_ASSERT_PTR_NULL(b);
    }
    /* the model and the simulator agree on the order of magnitude (both model the chip) */
    CU_ASSERT(t_ok[1] > t_ok[0] / 3 && t_ok[1] < t_ok[0] * 3);
    json_t *doc = json_loads("{\"tiletune\":1,\"name\":\"nok2\",\"version\":\"1\","
                             "\"inputs\":{\"N\":\"int\"},\"params\":{\"a\":[1,2]}}", 0, NULL);
    const tt_template *nok = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(cat, NULL, NULL, doc, &nok, NULL), TT_OK);
    json_decref(doc);
    tt_backend *b = NULL;
    int64_t p1[TT_MAX_SLOTS] = {4};
    CU_ASSERT_EQUAL(tt_backend_open("sim", &env, nok, a2, p1, &b, NULL), TT_EUNSUPPORTED);
    CU_ASSERT_EQUAL(tt_backend_open("model", &env, nok, a2, p1, &b, NULL), TT_EUNSUPPORTED);
}

static void test_seconds_budget(void)
{
    /* a budget in seconds ends a long job early, as done (not failed) */
    char url[512];
    db_url(url, sizeof url, "seconds");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    tt_job j;
    tt_job k;
    memset(&k, 0, sizeof k);
    snprintf(k.template_name, sizeof k.template_name, "gemm");
    snprintf(k.template_hash, sizeof k.template_hash, "%s", gemm->hash);
    snprintf(k.target, sizeof k.target, "a2");
    snprintf(k.backend, sizeof k.backend, "model");
    snprintf(k.backend_fp, sizeof k.backend_fp, "model");
    snprintf(k.strategy, sizeof k.strategy, "exhaustive");
    k.problem_key = "x";
    k.problem_json = (char *)P1K;
    k.budget_seconds = 0.1;   /* a group-committed model trial takes ~10 us: 0.3 s could do
                                 20 000 of them (the job ran out of space instead of time) */
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &k), TT_OK);
    tt_runner_config c = runner_cfg(url, 1);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s, k.id, 60), TT_JOB_DONE);
    tt_runner_stop(r);
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, k.id, &j), TT_OK);
    CU_ASSERT(j.done > 0);
    CU_ASSERT(j.done < 20000);   /* the space has ~30 000 feasible configs */
    CU_ASSERT_EQUAL(j.planned, j.done);
    CU_ASSERT(j.finished_at - j.started_at < 30);
    tt_job_clear(&j);
    tt_store_close(s);
}

static void test_stored_calibration_applied(void)
{
    /* a stored calibration (time' = e^a * time^b) scales the recorded predictions; the
     * strategy still ranks with the raw model, so the sequence is unchanged */
    char url[512], url2[512];
    db_url(url, sizeof url, "calib");
    db_url(url2, sizeof url2, "nocalib");
    tt_store *s = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url2, &s2, NULL), TT_OK);
    char cj[256];
    snprintf(cj, sizeof cj, "{\"log_a\":%.17g,\"log_b\":1,\"n\":5,\"rmse_log\":0.1}", log(2.0));
    CU_ASSERT_EQUAL_FATAL(tt_store_calib_put(s, "Ascend910B2", "model", cj, 5, 0.1), TT_OK);
    int64_t id = make_job(s, "model", "model-topk", 6, 0, "Ascend910B2", P512);
    int64_t id2 = make_job(s2, "model", "model-topk", 6, 0, "Ascend910B2", P512);
    tt_runner_config c = runner_cfg(url, 1), c2 = runner_cfg(url2, 1);
    tt_runner *r = NULL, *r2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c2, &r2, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s, id, 30), TT_JOB_DONE);
    CU_ASSERT_EQUAL(wait_job(s2, id2, 30), TT_JOB_DONE);
    tt_runner_stop(r);
    tt_runner_stop(r2);
    tt_trial *tr = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_list(s, id, 0, 10, &tr, &n, NULL), TT_OK);
    CU_ASSERT_EQUAL(n, 6);
    for (size_t i = 0; i < n; i++) {
        /* the model backend measures the raw prediction: calibrated = 2 x measured */
        CU_ASSERT_DOUBLE_EQUAL(tr[i].predicted_us, 2 * tr[i].median_us, 1e-6 * tr[i].median_us);
        tt_trial_clear(&tr[i]);
    }
    free(tr);
    job_trials(s, id, &sa);
    job_trials(s2, id2, &sb);
    CU_ASSERT_EQUAL(sa.n, sb.n);
    for (size_t i = 0; i < sa.n && i < sb.n; i++) CU_ASSERT_STRING_EQUAL(sa.keys[i], sb.keys[i]);
    tt_store_close(s);
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
    snprintf(env->counter, sizeof env->counter, "%s/%s-builds.txt", tmp, name);
    snprintf(env->work, sizeof env->work, "%s/%s-work", tmp, name);
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

static tt_runner_config slow_cfg(slow_env *env, const char *url, const char *name, double lease)
{
    tt_runner_config c = {.db_url = url, .workers = 1, .lease_seconds = lease,
                          .poll_seconds = 0.02, .worker_name = name, .catalog = env->cat,
                          .toolchains = env->toolchains, .work_dir = env->work};
    return c;
}

/* A queued fake_vec job on cmd:slow: exhaustive over the first `budget` configs (BLOCK 16,
 * MODE 0 = builds and runs, MODE 1 = build error). */
static int64_t slow_job(tt_store *s, slow_env *env, const char *url, int64_t budget)
{
    tt_runner_config c = slow_cfg(env, url, "check", 1);
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "fake_vec");
    snprintf(j.template_hash, sizeof j.template_hash, "%s", env->t->hash);
    snprintf(j.target, sizeof j.target, "Ascend910B2");
    snprintf(j.backend, sizeof j.backend, "cmd:slow");
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, env->t, "cmd:slow", j.backend_fp, NULL), TT_OK);
    snprintf(j.strategy, sizeof j.strategy, "exhaustive");
    j.problem_key = (char *)"N=4096,dtype=float16";
    j.problem_json = (char *)"{\"N\":4096,\"dtype\":\"float16\"}";
    j.budget_trials = budget;
    CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_OK);
    return j.id;
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0, ch;
    while ((ch = fgetc(f)) != EOF) n += ch == '\n';
    fclose(f);
    return n;
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
static void test_lease_heartbeat(void)
{
    slow_env env;
    CU_ASSERT_FATAL(slow_env_open(&env, "hb", 1.6));
    char url[512];
    db_url(url, sizeof url, "heartbeat");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
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
    CU_ASSERT_EQUAL(count_lines(env.counter), 2);   /* each config built once */
    CU_ASSERT_PTR_NOT_NULL(strstr(la.text, "info job 1 claimed by A/w0 (new)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(la.text, "info job 1 done: best "));
    CU_ASSERT_PTR_NOT_NULL(strstr(la.text, "(trials 2/2, 1 ok)"));
    tt_store_close(s);
    slow_env_close(&env);
}

/* A job cancelled while its worker is in the middle of a slow trial: the heartbeat sees it,
 * the trial in flight is dropped (not recorded), and the worker goes on with the next job. */
static void test_lease_lost_mid_trial(void)
{
    slow_env env;
    CU_ASSERT_FATAL(slow_env_open(&env, "lost", 1.0));
    char url[512];
    db_url(url, sizeof url, "lost");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = slow_job(s, &env, url, 2);
    log_sink la = {.mu = PTHREAD_MUTEX_INITIALIZER};
    tt_runner_config ca = slow_cfg(&env, url, "A", 0.3);
    ca.log = log_to_sink;
    ca.log_ud = &la;
    tt_runner *ra = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&ca, &ra, NULL), TT_OK);
    tt_job j;
    int held = 0;
    for (int i = 0; i < 500 && !held; i++) {
        memset(&j, 0, sizeof j);
        held = tt_store_job_get(s, id, &j) == TT_OK && j.state == TT_JOB_RUNNING;
        tt_job_clear(&j);
        if (!held) usleep(10000);
    }
    CU_ASSERT_FATAL(held);
    usleep(200000);   /* inside the first build */
    CU_ASSERT_EQUAL(tt_store_job_cancel(s, id), TT_OK);
    int64_t next = slow_job(s, &env, url, 1);
    CU_ASSERT_EQUAL(wait_job(s, next, 30), TT_JOB_DONE);
    tt_runner_stop(ra);
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

/* A worker that stops as if killed leaves its job leased; another worker takes it over once
 * the lease has expired and says so. */
static void test_lease_takeover_logged(void)
{
    char url[512];
    db_url(url, sizeof url, "takeover");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = make_job(s, "model", "model-topk", 6, 1, "Ascend910B2", P512);
    tt_runner_config c = runner_cfg(url, 1);
    c.lease_seconds = 0.3;
    c.worker_name = "dies";
    c.max_trials = 2;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int i = 0; i < 500 && tt_runner_alive(r); i++) usleep(10000);
    CU_ASSERT(!tt_runner_alive(r));   /* its worker ended: /readyz would say so */
    tt_runner_stop(r);
    log_sink lb = {.mu = PTHREAD_MUTEX_INITIALIZER};
    tt_runner_config cb = runner_cfg(url, 1);
    cb.lease_seconds = 0.3;
    cb.worker_name = "next";
    cb.log = log_to_sink;
    cb.log_ud = &lb;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&cb, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s, id, 30), TT_JOB_DONE);
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

/* ---- re-measuring the top configs on a noisy backend ----------------------------------- */
typedef struct noisy_env {
    tt_catalog *cat;
    const tt_template *t;
    json_t *toolchains;
    char runs[600], work[600];
} noisy_env;

/* noisy_vec (tests/data/fake-toolchain/noisy) on toolchain "noisy": the fake toolchain with
 * FAKE_RUNS (every run appends to env->runs; samples drift with the run count) and a slower
 * re-run of BLOCK 128 (FAKE_SLOW_BLOCK). */
static int noisy_env_open(noisy_env *env, const char *name)
{
    memset(env, 0, sizeof *env);
    char *td = tt_test_src("tests/data/fake-toolchain/noisy");
    char *gd = tt_test_src("costmodel/targets");
    char *b = tt_test_src("tests/data/fake-toolchain/build.sh");
    char *r = tt_test_src("tests/data/fake-toolchain/run.sh");
    tt_errinfo e;
    int ok = tt_catalog_new(td, gd, &env->cat, &e) == TT_OK &&
             tt_catalog_template(env->cat, NULL, "noisy_vec", NULL, &env->t, &e) == TT_OK;
    char bc[700], rc[700];
    snprintf(bc, sizeof bc, "sh '%s'", b);
    snprintf(rc, sizeof rc, "sh '%s'", r);
    snprintf(env->runs, sizeof env->runs, "%s/%s-runs.txt", tmp, name);
    snprintf(env->work, sizeof env->work, "%s/%s-work", tmp, name);
    env->toolchains = json_pack("{s:{s:s, s:s, s:{s:s, s:s}, s:f, s:f}}", "noisy", "build", bc,
                                "run", rc, "env", "FAKE_RUNS", env->runs, "FAKE_SLOW_BLOCK",
                                "128", "build_timeout", 10.0, "run_timeout", 10.0);
    free(td);
    free(gd);
    free(b);
    free(r);
    return ok && env->toolchains;
}

static void noisy_env_close(noisy_env *env)
{
    json_decref(env->toolchains);
    tt_catalog_free(env->cat);
}

static tt_runner_config noisy_cfg(noisy_env *env, const char *url)
{
    tt_runner_config c = {.db_url = url, .workers = 1, .poll_seconds = 0.02,
                          .worker_name = "noisy", .catalog = env->cat,
                          .toolchains = env->toolchains, .work_dir = env->work};
    return c;
}

/* An exhaustive noisy_vec job at N=4096 (medians 266.25, 138.25, 74.25, 42.25 us). */
static int64_t noisy_job(tt_store *s, noisy_env *env, const char *url, const char *options)
{
    tt_runner_config c = noisy_cfg(env, url);
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "noisy_vec");
    snprintf(j.template_hash, sizeof j.template_hash, "%s", env->t->hash);
    snprintf(j.target, sizeof j.target, "Ascend910B2");
    snprintf(j.backend, sizeof j.backend, "cmd:noisy");
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, env->t, "cmd:noisy", j.backend_fp, NULL), TT_OK);
    snprintf(j.strategy, sizeof j.strategy, "exhaustive");
    j.problem_key = (char *)"N=4096,dtype=float16";
    j.problem_json = (char *)"{\"N\":4096,\"dtype\":\"float16\"}";
    j.options_json = (char *)options;
    CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_OK);
    return j.id;
}

/* Samples of the job's trial whose config_json holds "BLOCK":block (-1 when absent). */
static int nsamples_of(tt_store *s, int64_t job, int block, double *median)
{
    tt_trial *ts = NULL;
    size_t n = 0;
    int got = -1;
    char needle[32];
    snprintf(needle, sizeof needle, "\"BLOCK\":%d", block);
    CU_ASSERT_EQUAL(tt_store_trial_list(s, job, 0, 100, &ts, &n, NULL), TT_OK);
    for (size_t i = 0; i < n; i++) {
        if (got < 0 && ts[i].config_json && strstr(ts[i].config_json, needle)) {
            json_t *a = json_loads(ts[i].samples_json ? ts[i].samples_json : "", 0, NULL);
            got = json_is_array(a) ? (int)json_array_size(a) : 0;
            json_decref(a);
            if (median) *median = ts[i].median_us;
        }
        tt_trial_clear(&ts[i]);
    }
    free(ts);
    return got;
}

/* The final state every variant must reach: BLOCK 128 re-measured slower (median of
 * [42 42.25 42.5 142.125 142.375 142.625] = 92.3125) loses the best to BLOCK 64
 * ([74 .. 74.625]: 74.3125); 4 + 3 runs. */
static void check_remeasured(tt_store *s, int64_t id, const noisy_env *env)
{
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_DONE);
    CU_ASSERT_EQUAL(j.done, 4);   /* re-measurements are not trials */
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 74.3125, 1e-9);
    CU_ASSERT(j.best_config_json && strstr(j.best_config_json, "\"BLOCK\":64"));
    tt_job_clear(&j);
    double med = 0;
    CU_ASSERT_EQUAL(nsamples_of(s, id, 128, &med), 6);
    CU_ASSERT_DOUBLE_EQUAL(med, 92.3125, 1e-9);
    CU_ASSERT_EQUAL(nsamples_of(s, id, 64, &med), 6);
    CU_ASSERT_EQUAL(nsamples_of(s, id, 32, &med), 6);
    CU_ASSERT_DOUBLE_EQUAL(med, 138.3125, 1e-9);
    CU_ASSERT_EQUAL(nsamples_of(s, id, 16, NULL), 3);   /* not in the top 3 */
    tt_best_query q = {"noisy_vec", "Ascend910B2", "N=4096,dtype=float16", NULL, NULL};
    tt_best b;
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(b.median_us, 74.3125, 1e-9);
    CU_ASSERT(b.config_json && strstr(b.config_json, "\"BLOCK\":64"));
    tt_best_clear(&b);
    CU_ASSERT_EQUAL(count_lines(env->runs), 7);
}

static void test_remeasure_top(void)
{
    noisy_env env;
    CU_ASSERT_FATAL(noisy_env_open(&env, "remeasure"));
    char url[512];
    db_url(url, sizeof url, "remeasure");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = noisy_job(s, &env, url, NULL);   /* remeasure: 3 by default */
    tt_runner_config c = noisy_cfg(&env, url);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s, id, 60), TT_JOB_DONE);
    tt_runner_stop(r);
    check_remeasured(s, id, &env);
    tt_store_close(s);
    noisy_env_close(&env);
}

/* "remeasure": 0 disables it: the first measurement decides. */
static void test_remeasure_off(void)
{
    noisy_env env;
    CU_ASSERT_FATAL(noisy_env_open(&env, "remeasure-off"));
    char url[512];
    db_url(url, sizeof url, "remeasure-off");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = noisy_job(s, &env, url, "{\"remeasure\":0}");
    tt_runner_config c = noisy_cfg(&env, url);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s, id, 60), TT_JOB_DONE);
    tt_runner_stop(r);
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 42.25, 1e-9);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(nsamples_of(s, id, 128, NULL), 3);
    CU_ASSERT_EQUAL(count_lines(env.runs), 4);
    tt_store_close(s);
    noisy_env_close(&env);
}

/* Stopped (as if killed) after the first re-measurement was committed: the resumed job
 * re-measures the other two only and ends as an uninterrupted one. */
static void test_remeasure_resume(void)
{
    noisy_env env;
    CU_ASSERT_FATAL(noisy_env_open(&env, "remeasure-resume"));
    char url[512];
    db_url(url, sizeof url, "remeasure-resume");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = noisy_job(s, &env, url, "{\"remeasure\":3}");
    tt_runner_config c = noisy_cfg(&env, url);
    c.max_trials = 5;   /* 4 trials + 1 re-measurement */
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int i = 0; i < 3000 && tt_runner_alive(r); i++) usleep(10000);
    tt_runner_stop(r);
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_RUNNING);
    CU_ASSERT(j.options_json && strstr(j.options_json, "\"remeasured\""));
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(count_lines(env.runs), 5);
    CU_ASSERT_EQUAL(nsamples_of(s, id, 128, NULL), 6);
    CU_ASSERT_EQUAL(tt_store_job_release_all(s), TT_OK);
    c.max_trials = 0;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(wait_job(s, id, 60), TT_JOB_DONE);
    tt_runner_stop(r);
    check_remeasured(s, id, &env);   /* BLOCK 128 appended once, 7 runs in all */
    tt_store_close(s);
    noisy_env_close(&env);
}

static const tt_test_case cases[] = {
    {"remeasure_top", test_remeasure_top},
    {"remeasure_off", test_remeasure_off},
    {"remeasure_resume", test_remeasure_resume},
    {"lease_heartbeat", test_lease_heartbeat},
    {"lease_lost_mid_trial", test_lease_lost_mid_trial},
    {"lease_takeover_logged", test_lease_takeover_logged},
    {"stored_calibration_applied", test_stored_calibration_applied},
    {"seconds_budget", test_seconds_budget},
    {"builtin_backends", test_builtin_backends},
    {"replay_job", test_replay_job},
    {"replay_objective", test_replay_objective},
    {"kill9_resume", test_kill9_resume},
    {"jobs_run_to_done", test_jobs_run_to_done},
    {"resume_same_result", test_resume_same_result},
    {"cancel", test_cancel},
    {"failures", test_failures},
    {"check_backend", test_check_backend},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"runner", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_runner_remeasure.c - the runner re-measuring a job's top configs on a noisy backend
 * (the cmd: backend with the fake toolchain, tests/data/fake-toolchain/noisy): samples
 * accumulate per config, off when asked, and a resumed job re-measures once.  Fixture:
 * tests/helpers/runner_fixture.
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
#include "strategy.h"
#include "t1.h"
#include "tt_test.h"

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
    snprintf(env->runs, sizeof env->runs, "%s/%s-runs.txt", tt_rfx_tmp, name);
    snprintf(env->work, sizeof env->work, "%s/%s-work", tt_rfx_tmp, name);
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
    CU_ASSERT_EQUAL(tt_rfx_count_lines(env->runs), 7);
}

static void test_remeasure_top(void)
{
    noisy_env env;
    CU_ASSERT_FATAL(noisy_env_open(&env, "remeasure"));
    char url[512];
    tt_rfx_db_url(url, sizeof url, "remeasure");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = noisy_job(s, &env, url, NULL);   /* remeasure: 3 by default */
    tt_runner_config c = noisy_cfg(&env, url);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, id, 60), TT_JOB_DONE);
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
    tt_rfx_db_url(url, sizeof url, "remeasure-off");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = noisy_job(s, &env, url, "{\"remeasure\":0}");
    tt_runner_config c = noisy_cfg(&env, url);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, id, 60), TT_JOB_DONE);
    tt_runner_stop(r);
    tt_job j;
    memset(&j, 0, sizeof j);
    CU_ASSERT_EQUAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 42.25, 1e-9);
    tt_job_clear(&j);
    CU_ASSERT_EQUAL(nsamples_of(s, id, 128, NULL), 3);
    CU_ASSERT_EQUAL(tt_rfx_count_lines(env.runs), 4);
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
    tt_rfx_db_url(url, sizeof url, "remeasure-resume");
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
    CU_ASSERT_EQUAL(tt_rfx_count_lines(env.runs), 5);
    CU_ASSERT_EQUAL(nsamples_of(s, id, 128, NULL), 6);
    CU_ASSERT_EQUAL(tt_store_job_release_all(s), TT_OK);
    c.max_trials = 0;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, id, 60), TT_JOB_DONE);
    tt_runner_stop(r);
    check_remeasured(s, id, &env);   /* BLOCK 128 appended once, 7 runs in all */
    tt_store_close(s);
    noisy_env_close(&env);
}

static const tt_test_case remeasure_cases[] = {
    {"remeasure_top", test_remeasure_top},
    {"remeasure_off", test_remeasure_off},
    {"remeasure_resume", test_remeasure_resume},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"runner_remeasure", tt_rfx_init, tt_rfx_cleanup, remeasure_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

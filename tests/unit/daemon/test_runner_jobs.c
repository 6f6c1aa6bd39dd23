/* SPDX-License-Identifier: MIT
 * test_runner_jobs.c - the worker pool against a temporary SQLite database: jobs run to done
 * with their trials, best and progress; cancel; failures; backend checks; replay jobs (the
 * dataset's optimum by the objective asked); the built-in backends; seconds budgets; a
 * stored calibration applied; a sampled space whose draws find nothing feasible.  Fixture: tests/helpers/runner_fixture.
 *
 * Measurements come from the `model` and `sim` backends (models of the chip, not the chip)
 * and recorded datasets (replay).
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

static tt_rfx_seq_out sa, sb;

static void test_jobs_run_to_done(void)
{
    char url[512];
    tt_rfx_db_url(url, sizeof url, "run");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t a = tt_rfx_make_job(s, "model", "model-topk", 8, 1, "Ascend910B2", TT_RFX_P512);
    int64_t b = tt_rfx_make_job(s, "sim", "random", 10, 2, "Ascend910B2", TT_RFX_P1K);
    int64_t c = tt_rfx_make_job(s, "sim", "exhaustive", 0, 0, "Ascend910B2",
                         "{\"M\":16,\"N\":16,\"K\":16,\"dtype\":\"float16\"}");
    tt_runner_config rc = tt_rfx_runner_cfg(url, 2);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&rc, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, a, 30), TT_JOB_DONE);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, b, 30), TT_JOB_DONE);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, c, 30), TT_JOB_DONE);
    tt_runner_stop(r);
    static const int64_t budgets[] = {8, 10, 0};
    int64_t ids[] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        tt_job j;
        memset(&j, 0, sizeof j);
        CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, ids[k], &j), TT_OK);
        tt_rfx_seq_out *op = &sa;
        tt_rfx_job_trials(s, ids[k], op);
        tt_rfx_seq_out o = {.n = op->n, .best = op->best};
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


static void test_cancel(void)
{
    char url[512];
    tt_rfx_db_url(url, sizeof url, "cancel");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t id = tt_rfx_make_job(s, "model", "exhaustive", 0, 0, "Ascend910B2", TT_RFX_P1K);
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
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
    tt_rfx_db_url(url, sizeof url, "fail");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    int64_t bad_target = tt_rfx_make_job(s, "sim", "random", 4, 0, "Ascend999", TT_RFX_P512);
    int64_t bad_backend = tt_rfx_make_job(s, "warp-drive", "random", 4, 0, "a2", TT_RFX_P512);
    int64_t bad_strategy = tt_rfx_make_job(s, "model", "guess", 4, 0, "a2", TT_RFX_P512);
    int64_t bad_dataset = tt_rfx_make_job(s, "replay:nope", "random", 4, 0, "a2", TT_RFX_P512);
    tt_runner_config c = tt_rfx_runner_cfg(url, 2);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    static const char *const want[] = {"target", "backend", "strategy", "backend"};
    tt_rfx_quiet_failures = 1;
    int64_t ids[] = {bad_target, bad_backend, bad_strategy, bad_dataset};
    for (int k = 0; k < 4; k++) {
        CU_ASSERT_EQUAL(tt_rfx_wait_job(s, ids[k], 30), TT_JOB_FAILED);
        tt_job j;
        memset(&j, 0, sizeof j);
        CU_ASSERT_EQUAL(tt_store_job_get(s, ids[k], &j), TT_OK);
        CU_ASSERT_PTR_NOT_NULL(j.error);
        if (j.error) CU_ASSERT(strstr(j.error, want[k]) != NULL);
        CU_ASSERT_EQUAL(j.done, 0);
        tt_job_clear(&j);
    }
    tt_rfx_quiet_failures = 0;
    tt_runner_stop(r);
    tt_runner_stop(NULL);
    tt_runner_config bad = tt_rfx_runner_cfg(url, 0);
    CU_ASSERT_EQUAL(tt_runner_start(&bad, &r, NULL), TT_EINVAL);
    CU_ASSERT_PTR_NULL(r);
    tt_store_close(s);
}

static void test_check_backend(void)
{
    char *ds = tt_test_shared("datasets");
    json_t *tc = json_pack("{s:{s:s,s:s}}", "fake", "build", "true", "run", "echo");
    tt_runner_config c = {.db_url = "x", .workers = 1, .catalog = tt_rfx_cat, .datasets_dir = ds,
                          .toolchains = tc, .work_dir = tt_rfx_tmp};
    char fp[80];
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "model", fp, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(fp, "model");
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "sim", fp, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(fp, "sim");
    /* a dataset applies to a template with the same params (the T1 import), not to gemm */
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "replay:convolution_A100", fp, &e),
                    TT_EUNSUPPORTED);
    char *t1 = tt_test_shared("datasets/convolution.t1.json");
    json_t *cdoc = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_t1_file_to_template(t1, "convolution", &cdoc, &e), TT_OK);
    free(t1);
    const tt_template *conv = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(tt_rfx_cat, NULL, NULL, cdoc, &conv, &e), TT_OK);
    json_decref(cdoc);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, conv, "replay:convolution_A100", fp, &e), TT_OK);
    /* the same fingerprint as the backend records: name@content hash */
    CU_ASSERT(strncmp(fp, "replay:convolution_A100@", 24) == 0);
    CU_ASSERT_EQUAL(strlen(fp), 24 + 8);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, conv, "sim", fp, &e), TT_EUNSUPPORTED);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "replay:nope", fp, &e), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "replay:../x", fp, &e), TT_EINVAL);
    /* the submission check takes dataset names as the replay backend does (it took 64
     * characters and a leading '.', which then failed the job when the backend opened) */
    static const char *const bad_names[] = {
        "replay:.hidden", "replay:a..b",
        "replay:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};   /* 64 */
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++)
        CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, bad_names[i], fp, &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "cmd:fake", fp, &e), TT_OK);
    CU_ASSERT(strncmp(fp, "cmd:fake@", 9) == 0);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "cmd:other", fp, &e), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "bogus", fp, &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, tt_rfx_gemm, "", fp, &e), TT_EINVAL);
    /* a template without a kernel: model and sim do not apply */
    json_t *doc = json_loads("{\"tiletune\":1,\"name\":\"nok\",\"version\":\"1\","
                             "\"inputs\":{\"N\":\"int\"},\"params\":{\"a\":[1,2]}}", 0, NULL);
    const tt_template *nok = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(tt_rfx_cat, NULL, "nok", doc, &nok, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, nok, "sim", fp, &e), TT_EUNSUPPORTED);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, nok, "model", fp, &e), TT_EUNSUPPORTED);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, nok, "cmd:fake", fp, &e), TT_EUNSUPPORTED);
    json_decref(doc);
    json_decref(tc);
    free(ds);
    CU_ASSERT(tt_runner_strategy_known("evolution"));
    CU_ASSERT(!tt_runner_strategy_known("genetic"));
}

/* The backend_fp a submission gives a replay: job on datasets in dir (the runner fails a
 * job whose backend_fp is not the fingerprint of the recording it finds). */
static void replay_fp(const char *dir, const tt_template *t, const char *backend, char fp[80])
{
    tt_runner_config c = tt_rfx_runner_cfg("sqlite::memory:", 1);
    c.datasets_dir = dir;
    CU_ASSERT_EQUAL_FATAL(tt_runner_check_backend(&c, t, backend, fp, NULL), TT_OK);
}

/* j: a job of template t (stored as name, no inputs) on Ascend910B2, measured on backend with
 * the fingerprint fp, by strategy; the caller sets options, budget and seed and creates it. */
static void replay_job_init(tt_job *j, const tt_template *t, const char *name,
                            const char *backend, const char *fp, const char *strategy)
{
    memset(j, 0, sizeof *j);
    snprintf(j->template_name, sizeof j->template_name, "%s", name);
    snprintf(j->template_hash, sizeof j->template_hash, "%s", t->hash);
    snprintf(j->target, sizeof j->target, "Ascend910B2");
    snprintf(j->backend, sizeof j->backend, "%s", backend);
    snprintf(j->backend_fp, sizeof j->backend_fp, "%s", fp);
    snprintf(j->strategy, sizeof j->strategy, "%s", strategy);
    j->problem_key = "";
    j->problem_json = "{}";
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
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(tt_rfx_cat, NULL, NULL, cdoc, &conv, &e), TT_OK);
    json_decref(cdoc);
    char url[512];
    tt_rfx_db_url(url, sizeof url, "replay");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    static const char *const strategies[] = {"model-refine", "evolution", "anneal"};
    int64_t ids[3];
    char *ds = tt_test_shared("datasets"), fp[80];
    replay_fp(ds, conv, "replay:convolution_A100", fp);
    for (int k = 0; k < 3; k++) {
        tt_job j;
        replay_job_init(&j, conv, "convolution", "replay:convolution_A100", fp, strategies[k]);
        j.options_json = "{\"objective\":\"median\"}";   /* the store's best is by median */
        j.budget_trials = 20;
        j.seed = 3;
        CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &j), TT_OK);
        ids[k] = j.id;
    }
    tt_runner_config c = tt_rfx_runner_cfg(url, 2);
    c.datasets_dir = ds;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int k = 0; k < 3; k++) {
        CU_ASSERT_EQUAL(tt_rfx_wait_job(s, ids[k], 60), TT_JOB_DONE);
        tt_rfx_seq_out *op = &sa;
        tt_rfx_job_trials(s, ids[k], op);
        tt_rfx_seq_out o = {.n = op->n, .best = op->best};
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
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(tt_rfx_cat, NULL, NULL, cdoc, &conv, NULL), TT_OK);
    json_decref(cdoc);
    char dsdir[600], url[512];
    snprintf(dsdir, sizeof dsdir, "%s/ds-objective", tt_rfx_tmp);
    CU_ASSERT_EQUAL_FATAL(mkdir(dsdir, 0700), 0);
    tt_rfx_db_url(url, sizeof url, "objective");
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
            char be[80], fp[80];
            snprintf(be, sizeof be, "replay:%.*s", (int)strcspn(sets[d].name, "."), sets[d].name);
            replay_fp(dsdir, conv, be, fp);
            replay_job_init(&j, conv, "convolution", be, fp, "exhaustive");
            char opt[64];
            snprintf(opt, sizeof opt, "{\"objective\":\"%s\"}", objectives[k] ? objectives[k] : "");
            j.options_json = objectives[k] ? opt : NULL;
            CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &j), TT_OK);
            ids[d][k] = j.id;
        }
    }
    tt_runner_config c = tt_rfx_runner_cfg(url, 2);
    c.datasets_dir = dsdir;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < 4; k++) {
            CU_ASSERT_EQUAL(tt_rfx_wait_job(s, ids[d][k], 240), TT_JOB_DONE);
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

/* A recording with more runtimes per config than a measurement holds (100 > TT_MAX_SAMPLES):
 * the job's best by median / mean / min is by every recorded runtime, not by the 63 kept as
 * samples -- measured afresh and reused.  tests/data/datasets/many_samples.kt-cache.json
 * (ms): a1b1 99 x 1 + 300 (mean 3.99; the kept samples' mean 5.75), a1b2 50 x 0.2 + 49 x 1.6
 * + 400 (median 0.9; the kept samples' 1.6), a2b1 100 x 5, the rest 3 x 8. */
/* The template of tests/data/datasets/many_samples.kt-cache.json under `name`. */
static const tt_template *many_template(const char *name)
{
    json_t *t1 = json_loads("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": "
                            "\"a\", \"Type\": \"int\", \"Values\": \"[1, 2, 3]\"}, {\"Name\": "
                            "\"b\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}], "
                            "\"Conditions\": []}}", 0, NULL);
    json_t *doc = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_t1_to_template(t1, name, &doc, NULL), TT_OK);
    json_decref(t1);
    const tt_template *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(tt_rfx_cat, NULL, NULL, doc, &t, NULL), TT_OK);
    json_decref(doc);
    return t;
}

/* A dataset file replaced between a job's submission and its run: the job fails naming both
 * recordings, and nothing is measured.  Before, it ran on the new file, filed its trials
 * under the new fingerprint, and its best claimed 'measured_by' the old one. */
static void test_replay_dataset_replaced(void)
{
    const tt_template *t = many_template("replaced");
    char *dir = tt_test_tmpdir("replaced"), path[700], url[512], fp[80];
    size_t len = 0;
    char *src = tt_test_src("tests/data/datasets/many_samples.kt-cache.json");
    char *text = tt_test_read_file(src, &len);
    free(src);
    snprintf(path, sizeof path, "%s/x.kt-cache.json", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f && text && fwrite(text, 1, len, f) == len && fclose(f) == 0);
    replay_fp(dir, t, "replay:x", fp);
    f = fopen(path, "a");   /* the same records, other bytes: another recording */
    CU_ASSERT_FATAL(f && fputs("\n", f) >= 0 && fclose(f) == 0);
    tt_rfx_db_url(url, sizeof url, "replaced");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    tt_job j;
    replay_job_init(&j, t, "replaced", "replay:x", fp, "exhaustive");
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &j), TT_OK);
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    c.datasets_dir = dir;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    tt_rfx_quiet_failures = 1;
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, j.id, 60), TT_JOB_FAILED);
    tt_rfx_quiet_failures = 0;
    tt_runner_stop(r);
    tt_job got;
    memset(&got, 0, sizeof got);
    CU_ASSERT_EQUAL(tt_store_job_get(s, j.id, &got), TT_OK);
    CU_ASSERT_EQUAL(got.done, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(got.error ? got.error : "", "the recording of dataset x "
                                  "changed since the job was submitted (job: replay:x@"));
    CU_ASSERT_PTR_NOT_NULL(strstr(got.error ? got.error : "", fp));
    tt_job_clear(&got);
    tt_store_close(s);
    free(text);
    tt_test_rmrf(dir);
    free(dir);
}

static void test_replay_objective_many_samples(void)
{
    static const struct {
        const char *objective;
        int a, b;
        double us;
    } want[] = {{NULL, 1, 1, 3990}, {"median", 1, 2, 900}, {"mean", 1, 1, 3990},
                {"min", 1, 2, 200}};
    enum { N = sizeof want / sizeof want[0] };
    const tt_template *t = many_template("many");
    char dsdir[600], link[700], url[512];
    snprintf(dsdir, sizeof dsdir, "%s/ds-many", tt_rfx_tmp);
    CU_ASSERT_EQUAL_FATAL(mkdir(dsdir, 0700), 0);
    char *src = tt_test_src("tests/data/datasets/many_samples.kt-cache.json");
    snprintf(link, sizeof link, "%s/many.kt-cache.json", dsdir);
    CU_ASSERT_EQUAL_FATAL(symlink(src, link), 0);
    free(src);
    tt_rfx_db_url(url, sizeof url, "many");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    c.datasets_dir = dsdir;
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    for (int round = 0; round < 2; round++)   /* 0: measured, 1: every trial reused */
        for (int k = 0; k < N; k++) {
            tt_job j;
            char fp[80];
            replay_fp(dsdir, t, "replay:many", fp);
            replay_job_init(&j, t, "many", "replay:many", fp, "exhaustive");
            char opt[64];
            snprintf(opt, sizeof opt, "{\"objective\":\"%s\"}", want[k].objective ? want[k].objective : "");
            j.options_json = want[k].objective ? opt : NULL;
            CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &j), TT_OK);
            CU_ASSERT_EQUAL(tt_rfx_wait_job(s, j.id, 60), TT_JOB_DONE);
            tt_job got;
            memset(&got, 0, sizeof got);
            CU_ASSERT_EQUAL(tt_store_job_get(s, j.id, &got), TT_OK);
            char cfg[64];
            snprintf(cfg, sizeof cfg, "{\"a\":%d,\"b\":%d}", want[k].a, want[k].b);
            int ok = got.best_config_json && strcmp(got.best_config_json, cfg) == 0 &&
                     fabs(got.best_us - want[k].us) < 1e-6 * want[k].us;
            CU_ASSERT_TRUE(ok);
            if (!ok)
                fprintf(stderr, "\nround %d, objective %s: best %s %.3f us, want %s %.3f us\n",
                        round, want[k].objective ? want[k].objective : "(default)",
                        got.best_config_json ? got.best_config_json : "-", got.best_us, cfg,
                        want[k].us);
            tt_job_clear(&got);
        }
    tt_runner_stop(r);
    tt_store_close(s);
    /* the statistics of more samples than a measurement holds: all of them count */
    double many[100];
    for (int i = 0; i < 100; i++) many[i] = i < 99 ? 1 : 300;
    CU_ASSERT_DOUBLE_EQUAL(tt_objective_value(TT_OBJ_MEAN, many, 100, NAN), 3.99, 1e-12);
    many[0] = 0.5;
    many[50] = 7;
    CU_ASSERT_DOUBLE_EQUAL(tt_objective_value(TT_OBJ_MEDIAN, many, 100, NAN), 1, 1e-12);
}

/* The in-process backends: one sample, infeasible configs with a reason, fingerprints. */
static void test_builtin_backends(void)
{
    const tt_target *a2 = tt_catalog_target(tt_rfx_cat, "a2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a2);
    int64_t slots[TT_MAX_SLOTS];
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(tt_rfx_gemm, "M=1024,N=1024,K=1024,dtype=float16,"
                                                "out_dtype=float16", slots, NULL), TT_OK);
    tt_backend_env env = {.repeats = 1};
    static const char *const kinds[] = {"model", "sim"};
    double t_ok[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        tt_backend *b = NULL;
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_backend_open(kinds[k], &env, tt_rfx_gemm, a2, slots, &b, &e), TT_OK);
        CU_ASSERT_STRING_EQUAL(tt_backend_fingerprint(b), kinds[k]);
        int64_t s[TT_MAX_SLOTS];
        memcpy(s, slots, sizeof s);
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(tt_rfx_gemm, "block_M=128,block_N=256,block_K=64,"
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
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(tt_rfx_gemm, "block_M=512,block_N=512,block_K=64,"
                                                   "K_L1=256,S1=2,S2=2", s, NULL), TT_OK);
        CU_ASSERT_EQUAL(tt_backend_measure(b, s, &m), TT_OK);
        CU_ASSERT_EQUAL(m.status, TT_EINFEASIBLE);
        CU_ASSERT_EQUAL(m.nsamples, 0);
        CU_ASSERT(strstr(m.error, "L0C") != NULL);
        tt_backend_close(b);
        /* arguments are refused */
        char spec[16];
        snprintf(spec, sizeof spec, "%s:x", kinds[k]);
        CU_ASSERT_EQUAL(tt_backend_open(spec, &env, tt_rfx_gemm, a2, slots, &b, &e), TT_EINVAL);
        CU_ASSERT_PTR_NULL(b);
    }
    /* the model and the simulator agree on the order of magnitude (both model the chip) */
    CU_ASSERT(t_ok[1] > t_ok[0] / 3 && t_ok[1] < t_ok[0] * 3);
    json_t *doc = json_loads("{\"tiletune\":1,\"name\":\"nok2\",\"version\":\"1\","
                             "\"inputs\":{\"N\":\"int\"},\"params\":{\"a\":[1,2]}}", 0, NULL);
    const tt_template *nok = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(tt_rfx_cat, NULL, NULL, doc, &nok, NULL), TT_OK);
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
    tt_rfx_db_url(url, sizeof url, "seconds");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    tt_job j;
    tt_job k;
    memset(&k, 0, sizeof k);
    snprintf(k.template_name, sizeof k.template_name, "gemm");
    snprintf(k.template_hash, sizeof k.template_hash, "%s", tt_rfx_gemm->hash);
    snprintf(k.target, sizeof k.target, "a2");
    snprintf(k.backend, sizeof k.backend, "model");
    snprintf(k.backend_fp, sizeof k.backend_fp, "model");
    snprintf(k.strategy, sizeof k.strategy, "exhaustive");
    k.problem_key = "x";
    k.problem_json = (char *)TT_RFX_P1K;
    k.budget_seconds = 0.1;   /* a group-committed model trial takes ~10 us: 0.3 s could do
                                 20 000 of them (the job ran out of space instead of time) */
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &k), TT_OK);
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, k.id, 60), TT_JOB_DONE);
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
    tt_rfx_db_url(url, sizeof url, "calib");
    tt_rfx_db_url(url2, sizeof url2, "nocalib");
    tt_store *s = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url2, &s2, NULL), TT_OK);
    char cj[256];
    snprintf(cj, sizeof cj, "{\"log_a\":%.17g,\"log_b\":1,\"n\":5,\"rmse_log\":0.1}", log(2.0));
    CU_ASSERT_EQUAL_FATAL(tt_store_calib_put(s, "Ascend910B2", "model", cj, 5, 0.1), TT_OK);
    int64_t id = tt_rfx_make_job(s, "model", "model-topk", 6, 0, "Ascend910B2", TT_RFX_P512);
    int64_t id2 = tt_rfx_make_job(s2, "model", "model-topk", 6, 0, "Ascend910B2", TT_RFX_P512);
    tt_runner_config c = tt_rfx_runner_cfg(url, 1), c2 = tt_rfx_runner_cfg(url2, 1);
    tt_runner *r = NULL, *r2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c2, &r2, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, id, 30), TT_JOB_DONE);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s2, id2, 30), TT_JOB_DONE);
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
    tt_rfx_job_trials(s, id, &sa);
    tt_rfx_job_trials(s2, id2, &sb);
    CU_ASSERT_EQUAL(sa.n, sb.n);
    for (size_t i = 0; i < sa.n && i < sb.n; i++) CU_ASSERT_STRING_EQUAL(sa.keys[i], sb.keys[i]);
    tt_store_close(s);
    tt_store_close(s2);
}

/* A stored calibration that overflows for this problem (a slope fitted on a narrow range of
 * predictions, or absurd measurements, applied to a larger problem): the trials record no
 * prediction (0, null in the API) instead of an infinity, which the API could not encode
 * (GET /v1/jobs/{id} and /v1/best answered 503 out_of_memory). */
static void test_stored_calibration_overflows(void)
{
    char url[512];
    tt_rfx_db_url(url, sizeof url, "calib_inf");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    const char *cj = "{\"log_a\":700,\"log_b\":30,\"n\":5,\"rmse_log\":0.1}";
    CU_ASSERT_EQUAL_FATAL(tt_store_calib_put(s, "Ascend910B2", "model", cj, 5, 0.1), TT_OK);
    int64_t id = tt_rfx_make_job(s, "model", "model-topk", 4, 0, "Ascend910B2", TT_RFX_P512);
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_rfx_wait_job(s, id, 30), TT_JOB_DONE);
    tt_runner_stop(r);
    tt_trial *tr = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_list(s, id, 0, 10, &tr, &n, NULL), TT_OK);
    CU_ASSERT_EQUAL(n, 4);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(isfinite(tr[i].predicted_us));
        CU_ASSERT_EQUAL(tr[i].predicted_us, 0);
        CU_ASSERT(tr[i].median_us > 0 && isfinite(tr[i].median_us));
        tt_trial_clear(&tr[i]);
    }
    free(tr);
    tt_job j;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, id, &j), TT_OK);
    CU_ASSERT(isfinite(j.best_pred_us));
    tt_job_clear(&j);
    tt_store_close(s);
}

/* A space too large to enumerate (2^49 configs) whose few feasible configs (p0..p3 all 1)
 * the random draws of a sampling strategy never hit: the job fails, but it must not say that
 * the space has no feasible config (the old message), since it has 2. */
static void test_sampled_space_none_drawn(void)
{
    static const char doc[] =
        "{\"tiletune\": 1, \"name\": \"rare\", \"inputs\": {\"M\": \"int\"},"
        " \"params\": {\"b\": [16, 32], \"p0\": {\"range\": [1, 4096]},"
        " \"p1\": {\"range\": [1, 4096]}, \"p2\": {\"range\": [1, 4096]},"
        " \"p3\": {\"range\": [1, 4096]}},"
        " \"constraints\": [\"p0 + p1 + p2 + p3 == 4\"],"
        " \"tensors\": {\"A\": {\"shape\": [\"M\"], \"dtype\": \"float16\"},"
        " \"C\": {\"shape\": [\"M\"], \"dtype\": \"float16\", \"output\": true}},"
        " \"buffers\": {\"a_UB\": {\"scope\": \"UB\", \"shape\": [\"b\"], \"dtype\": \"float16\"}},"
        " \"kernel\": {\"grid\": {\"bx\": \"ceildiv(M, b)\"}, \"cores\": \"vector\", \"body\": ["
        " {\"copy\": [\"gm:A\", \"a_UB\"], \"along\": [\"bx\"]},"
        " {\"copy\": [\"a_UB\", \"gm:C\"], \"along\": [\"bx\"]}]}}";
    tt_template *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, NULL), TT_OK);
    char url[512];
    tt_rfx_db_url(url, sizeof url, "rare");
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_template_put(s, "rare", t->hash, "0", doc), TT_OK);
    static const char *const strategies[] = {"random", "evolution", "model-bo"};
    int64_t ids[3];
    for (int i = 0; i < 3; i++) {
        tt_job k;
        memset(&k, 0, sizeof k);
        snprintf(k.template_name, sizeof k.template_name, "rare");
        snprintf(k.template_hash, sizeof k.template_hash, "%s", t->hash);
        snprintf(k.target, sizeof k.target, "a2");
        snprintf(k.backend, sizeof k.backend, "model");
        snprintf(k.backend_fp, sizeof k.backend_fp, "model");
        snprintf(k.strategy, sizeof k.strategy, "%s", strategies[i]);
        k.problem_key = "M=4096";
        k.problem_json = "{\"M\":4096}";
        k.budget_trials = 4;
        CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &k), TT_OK);
        ids[i] = k.id;
    }
    tt_runner_config c = tt_rfx_runner_cfg(url, 1);
    tt_runner *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_runner_start(&c, &r, NULL), TT_OK);
    tt_rfx_quiet_failures = 1;
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(tt_rfx_wait_job(s, ids[i], 60), TT_JOB_FAILED);
        tt_job j;
        memset(&j, 0, sizeof j);
        CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, ids[i], &j), TT_OK);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j.error);
        CU_ASSERT_PTR_NULL(strstr(j.error, "has no feasible config"));
        CU_ASSERT_PTR_NOT_NULL(strstr(j.error, "found no feasible config in its random draws"));
        CU_ASSERT_PTR_NOT_NULL(strstr(j.error, "5.63e+14 configs"));
        if (!strstr(j.error, "random draws")) fprintf(stderr, "%s: %s\n", strategies[i], j.error);
        tt_job_clear(&j);
    }
    tt_rfx_quiet_failures = 0;
    tt_runner_stop(r);
    tt_store_close(s);
    tt_tmpl_free(t);
}

static const tt_test_case jobs_cases[] = {
    {"sampled_space_none_drawn", test_sampled_space_none_drawn},
    {"stored_calibration_applied", test_stored_calibration_applied},
    {"stored_calibration_overflows", test_stored_calibration_overflows},
    {"seconds_budget", test_seconds_budget},
    {"builtin_backends", test_builtin_backends},
    {"replay_job", test_replay_job},
    {"replay_objective", test_replay_objective},
    {"replay_objective_many_samples", test_replay_objective_many_samples},
    {"replay_dataset_replaced", test_replay_dataset_replaced},
    {"jobs_run_to_done", test_jobs_run_to_done},
    {"cancel", test_cancel},
    {"failures", test_failures},
    {"check_backend", test_check_backend},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"runner_jobs", tt_rfx_init, tt_rfx_cleanup, jobs_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

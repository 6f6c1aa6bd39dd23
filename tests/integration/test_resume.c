/* SPDX-License-Identifier: MIT
 * test_resume.c - kill -9 the daemon while a sim job runs, restart it on the same database:
 * the job finishes, no trial committed before the kill is lost, and its trial sequence
 * (configs in order) and best equal those of an uninterrupted run of the identical job with
 * the same seed on a fresh database.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt_daemon.h"
#include "tt_test.h"

static const char *JOB =
    "{\"template\":\"gemm\",\"problem\":{\"M\":4096,\"N\":4096,\"K\":4096,\"dtype\":\"float16\"},"
    "\"target\":\"a2\",\"backend\":\"sim\",\"strategy\":\"model-refine\","
    "\"budget\":{\"trials\":200},\"seed\":42}";

static const char *const trial_fields[] = {"id", "seq", "config_key", NULL};

static json_t *job_of(tt_daemon *d, long long id)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    tt_hres r;
    json_t *j = NULL;
    if (tt_daemon_req(d, "GET", path, NULL, NULL, 0, &r) == 0 && r.status == 200)
        j = json_incref(r.json);
    tt_hres_free(&r);
    return j;
}

static tt_daemon a, b;     /* static: the suite cleanup stops them after a fatal assert */

static int suite_clean(void)
{
    tt_daemon_cleanup(&a);
    tt_daemon_cleanup(&b);
    return 0;
}

/* Run job (a /v1/tune body), kill -9 the daemon in the middle, resume, compare with an
 * uninterrupted run of the same job on a fresh database. */
static void kill_and_resume(const char *job)
{
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&a, "{\"workers\": 1, \"lease_seconds\": 5}"), 0);
    long long id = tt_daemon_submit(&a, job);
    CU_ASSERT_FATAL(id > 0);
    /* wait until some trials are committed, then kill -9 in the middle of the job */
    json_t *seen = NULL;
    for (int i = 0; i < 2000; i++) {
        json_t *j = job_of(&a, id);
        json_int_t done = json_integer_value(json_object_get(json_object_get(j, "progress"), "done"));
        const char *st = json_string_value(json_object_get(j, "state"));
        int finished = st && strcmp(st, "running") && strcmp(st, "queued");
        json_decref(j);
        CU_ASSERT_FATAL(!finished);      /* budget too small for this machine? */
        if (done >= 40) break;
        usleep(10 * 1000);
    }
    seen = tt_daemon_trials(&a, id, trial_fields);
    CU_ASSERT_FATAL(seen != NULL);
    CU_ASSERT(json_array_size(seen) >= 40);
    CU_ASSERT_EQUAL(tt_daemon_signal(&a, SIGKILL), 128 + SIGKILL);

    /* restart on the same database: the job resumes and finishes */
    CU_ASSERT_EQUAL_FATAL(tt_daemon_restart(&a), 0);
    const char *st = tt_daemon_wait_job(&a, id, 180);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(st, "done");
    json_t *after = tt_daemon_trials(&a, id, trial_fields);
    json_t *ja = job_of(&a, id);
    CU_ASSERT_FATAL(after != NULL && ja != NULL);

    /* no committed trial lost: every (id, seq, config) seen before the kill is still there */
    size_t i;
    json_t *t;
    json_array_foreach(seen, i, t) {
        json_int_t seq = json_integer_value(json_object_get(t, "seq"));
        CU_ASSERT_FATAL(seq >= 1 && (size_t)seq <= json_array_size(after));
        json_t *u = json_array_get(after, (size_t)seq - 1);
        CU_ASSERT(json_equal(t, u));
    }

    /* an uninterrupted run of the same job on a fresh database */
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&b, "{\"workers\": 1}"), 0);
    long long id2 = tt_daemon_submit(&b, job);
    CU_ASSERT_FATAL(id2 > 0);
    st = tt_daemon_wait_job(&b, id2, 180);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_STRING_EQUAL(st, "done");
    json_t *ref = tt_daemon_trials(&b, id2, trial_fields);
    json_t *jb = job_of(&b, id2);
    CU_ASSERT_FATAL(ref != NULL && jb != NULL);
    CU_ASSERT_EQUAL(json_array_size(after), json_array_size(ref));
    size_t n = json_array_size(after) < json_array_size(ref) ? json_array_size(after)
                                                             : json_array_size(ref);
    size_t diffs = 0;
    for (i = 0; i < n; i++) {
        json_t *x = json_array_get(after, i), *y = json_array_get(ref, i);
        if (!json_equal(json_object_get(x, "seq"), json_object_get(y, "seq")) ||
            !json_equal(json_object_get(x, "config_key"), json_object_get(y, "config_key"))) {
            if (!diffs)
                fprintf(stderr, "\nfirst difference at index %zu: %s vs %s\n", i,
                        json_string_value(json_object_get(x, "config_key")),
                        json_string_value(json_object_get(y, "config_key")));
            diffs++;
        }
    }
    CU_ASSERT_EQUAL(diffs, 0);
    json_t *ba = json_object_get(ja, "best"), *bb = json_object_get(jb, "best");
    CU_ASSERT(json_equal(json_object_get(ba, "config"), json_object_get(bb, "config")));
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(ba, "measured_us")),
                           json_number_value(json_object_get(bb, "measured_us")), 1e-9);
    CU_ASSERT(json_equal(json_object_get(ja, "progress"), json_object_get(jb, "progress")));
    fprintf(stderr, "\n  killed after %zu of %zu trials; resumed run matches the reference\n",
            json_array_size(seen), json_array_size(after));
    json_decref(seen);
    json_decref(after);
    json_decref(ref);
    json_decref(ja);
    json_decref(jb);
    CU_ASSERT_EQUAL(tt_daemon_stop(&a), 0);
    CU_ASSERT_EQUAL(tt_daemon_stop(&b), 0);
    tt_daemon_cleanup(&a);
    tt_daemon_cleanup(&b);
}

static void test_kill_and_resume(void) { kill_and_resume(JOB); }

/* The same with a user template whose params are declared in non-alphabetical order (gemm's
 * block_M, block_N, block_K, K_L1, S1, S2, sent inline as "gemm_user"): stored, it is reloaded
 * after the restart with sorted keys, and must still give the same configs, keys and best. */
static void test_kill_and_resume_user_template(void)
{
    json_t *t = tt_test_load_json("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    json_object_set_new(t, "name", json_string("gemm_user"));
    json_t *j = json_loads(JOB, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    json_object_set_new(j, "template", t);
    char *body = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    kill_and_resume(body);
    free(body);
}

static const tt_test_case cases[] = {
    {"kill_and_resume", test_kill_and_resume},
    {"kill_and_resume_user_template", test_kill_and_resume_user_template},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"resume", NULL, suite_clean, cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

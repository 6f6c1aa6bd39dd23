/* SPDX-License-Identifier: MIT
 * runner_fixture.c - catalog, databases, jobs and trial sequences shared by the runner tests.
 */
#include "runner_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tt_test.h"

tt_catalog *tt_rfx_cat;
const tt_template *tt_rfx_gemm;
char *tt_rfx_tmp;

int tt_rfx_init(void)
{
    char *td = tt_test_src("templates"), *gd = tt_test_src("costmodel/targets");
    tt_errinfo e;
    tt_rc rc = tt_catalog_new(td, gd, &tt_rfx_cat, &e);
    free(td);
    free(gd);
    if (rc != TT_OK) return 1;
    if (tt_catalog_template(tt_rfx_cat, NULL, "gemm", NULL, &tt_rfx_gemm, &e) != TT_OK) return 1;
    tt_rfx_tmp = tt_test_tmpdir("tt-runner");
    return tt_rfx_tmp == NULL;
}

int tt_rfx_cleanup(void)
{
    tt_catalog_free(tt_rfx_cat);
    tt_rfx_cat = NULL;
    if (tt_rfx_tmp) tt_test_rmrf(tt_rfx_tmp);
    free(tt_rfx_tmp);
    tt_rfx_tmp = NULL;
    return 0;
}

void tt_rfx_db_url(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "sqlite:%s/%s.db", tt_rfx_tmp, name);
}

tt_runner_config tt_rfx_runner_cfg(const char *url, int workers)
{
    tt_runner_config c = {.db_url = url, .workers = workers, .lease_seconds = 5,
                          .poll_seconds = 0.02, .worker_name = "test", .catalog = tt_rfx_cat};
    return c;
}

int64_t tt_rfx_make_job(tt_store *s, const char *backend, const char *strategy, int64_t budget,
                        int64_t seed, const char *target, const char *problem)
{
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "gemm");
    snprintf(j.template_hash, sizeof j.template_hash, "%s", tt_rfx_gemm->hash);
    snprintf(j.target, sizeof j.target, "%s", target);
    snprintf(j.backend, sizeof j.backend, "%s", backend);
    snprintf(j.backend_fp, sizeof j.backend_fp, "%s", backend);
    snprintf(j.strategy, sizeof j.strategy, "%s", strategy);
    char key[256];
    int64_t slots[TT_MAX_SLOTS];
    json_t *pj = json_loads(problem, 0, NULL);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_from_json(tt_rfx_gemm, pj, slots, NULL), TT_OK);
    json_decref(pj);
    tt_tmpl_problem_key(tt_rfx_gemm, slots, key, sizeof key);
    j.problem_key = key;
    j.problem_json = (char *)problem;
    j.budget_trials = budget;
    j.seed = seed;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create(s, &j), TT_OK);
    CU_ASSERT(j.id > 0);
    return j.id;
}

int tt_rfx_quiet_failures;   /* test_failures expects failed jobs: do not print them */

tt_job_state tt_rfx_wait_job(tt_store *s, int64_t id, double timeout)
{
    for (double waited = 0; waited < timeout; waited += 0.02) {
        tt_job j;
        memset(&j, 0, sizeof j);
        if (tt_store_job_get(s, id, &j) == TT_OK && j.state != TT_JOB_QUEUED &&
            j.state != TT_JOB_RUNNING) {
            tt_job_state st = j.state;
            if (st == TT_JOB_FAILED && !tt_rfx_quiet_failures)
                fprintf(stderr, "job %lld failed: %s\n", (long long)id, j.error ? j.error : "?");
            tt_job_clear(&j);
            return st;
        }
        tt_job_clear(&j);
        usleep(20000);
    }
    return TT_JOB_RUNNING;
}

void tt_rfx_job_trials(tt_store *s, int64_t id, tt_rfx_seq_out *o)
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
            if (o->n < TT_RFX_SEQ_MAX) {
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

int tt_rfx_count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0, ch;
    while ((ch = fgetc(f)) != EOF) n += ch == '\n';
    fclose(f);
    return n;
}

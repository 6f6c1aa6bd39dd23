/* SPDX-License-Identifier: MIT
 * store_rows.c - jobs and trials for the store tests.
 */
#include "store_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fixture.h"
#include "tt_test.h"

void tt_sr_job_init(tt_job *j, const char *tpl, const char *target, const char *owner,
                    const char *pkey)
{
    tt_fx_job(j, tpl, target, "sim", "model-topk", owner, pkey);
    snprintf(j->template_hash, sizeof j->template_hash, "0123456789abcdef");
    snprintf(j->backend_fp, sizeof j->backend_fp, "sim");
    j->problem_json = (char *)"{\"M\":64}";
    j->budget_trials = 8;
    j->seed = 7;
}

int64_t tt_sr_new_job(tt_store *s, const char *tpl, const char *target, const char *owner,
                      const char *pkey)
{
    tt_job j;
    tt_sr_job_init(&j, tpl, target, owner, pkey);
    CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_OK);
    CU_ASSERT(j.id > 0);
    return j.id;
}

void tt_sr_trial_init(tt_trial *t, const char *cfg, uint64_t hash, tt_rc status, double us)
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

tt_rc tt_sr_record(tt_store *s, const tt_trial_key *k, int64_t job, int64_t seq,
                   const char *cfg, uint64_t hash, tt_rc status, double us, tt_trial *out)
{
    tt_trial t;
    tt_sr_trial_init(&t, cfg, hash, status, us);
    tt_rc rc = tt_store_trial_record(s, k, "gemm", job, seq, &t);
    if (out) *out = t;
    else tt_trial_clear(&t);
    return rc;
}

const tt_trial_key tt_sr_key = {"0123456789abcdef", "M=64", "a2", "sim"};

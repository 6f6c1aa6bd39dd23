/* SPDX-License-Identifier: MIT
 * store_rows.h - the rows test_store_* write: a queued gemm job on `sim` (model-topk, budget
 * 8, seed 7, problem {"M":64}) and trials of one trial key, tt_sr_key.
 *
 * Shared by test_store_jobs, test_store_trials and test_store_concurrency, on top of
 * store_fixture.h.  Thread-safe as far as the store handle passed in is.
 */
#ifndef TT_STORE_ROWS_H
#define TT_STORE_ROWS_H

#include <stdint.h>

#include "store.h"

/* The trial key of the tests' trials (template hash, problem "M=64", a2, sim). */
extern const tt_trial_key tt_sr_key;

/* Fill *j as a test job (tt_fx_job plus the fields above); tpl, target, owner and pkey are
 * copied or borrowed as tt_fx_job says. */
void tt_sr_job_init(tt_job *j, const char *tpl, const char *target, const char *owner,
                    const char *pkey);
/* Create that job; its id (CUnit assertions check the create). */
int64_t tt_sr_new_job(tt_store *s, const char *tpl, const char *target, const char *owner,
                      const char *pkey);
/* A trial with malloc'd fields (the store may replace them); the caller clears it with
 * tt_trial_clear(). */
void tt_sr_trial_init(tt_trial *t, const char *cfg, uint64_t hash, tt_rc status, double us);
/* Record such a trial as seq of job under key k; the store's rc.  With out, the trial is
 * handed to the caller (who clears it), else cleared here. */
tt_rc tt_sr_record(tt_store *s, const tt_trial_key *k, int64_t job, int64_t seq,
                   const char *cfg, uint64_t hash, tt_rc status, double us, tt_trial *out);

#endif

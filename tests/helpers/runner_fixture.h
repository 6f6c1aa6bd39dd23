/* SPDX-License-Identifier: MIT
 * runner_fixture.h - the runner tests' fixture: the shipped catalog and its gemm template, a
 * temp dir of SQLite databases, gemm jobs and the runner config that runs them, waiting for
 * a job, and reading a job's trial sequence back.
 *
 * Shared by test_runner_jobs, test_runner_resume and test_runner_remeasure.  Use
 * tt_rfx_init / tt_rfx_cleanup as the CUnit suite init/cleanup.  Measurements come from the
 * `model` and `sim` backends (models of the chip) or the fake toolchain.  Not thread-safe:
 * call from the test's main thread.
 */
#ifndef TT_RUNNER_FIXTURE_H
#define TT_RUNNER_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "runner.h"
#include "store.h"

extern tt_catalog *tt_rfx_cat;          /* templates/ and costmodel/targets (suite-owned) */
extern const tt_template *tt_rfx_gemm;  /* borrowed from tt_rfx_cat */
extern char *tt_rfx_tmp;                /* the suite's temp dir */
extern int tt_rfx_quiet_failures;       /* set: tt_rfx_wait_job does not print failed jobs */

#define TT_RFX_P512 "{\"M\":512,\"N\":512,\"K\":512,\"dtype\":\"float16\"}"
#define TT_RFX_P1K "{\"M\":1024,\"N\":2048,\"K\":768,\"dtype\":\"float16\"}"

/* 0, or 1 when the catalog or the temp dir cannot be made. */
int tt_rfx_init(void);
int tt_rfx_cleanup(void);

/* "sqlite:<tmp>/<name>.db" into buf. */
void tt_rfx_db_url(char *buf, size_t cap, const char *name);
/* A runner config on url with `workers` workers, lease 5 s, poll 0.02 s; borrows url. */
tt_runner_config tt_rfx_runner_cfg(const char *url, int workers);
/* Create a queued gemm job (problem given as JSON text); its id.  Failures are fatal CUnit
 * assertions. */
int64_t tt_rfx_make_job(tt_store *s, const char *backend, const char *strategy, int64_t budget,
                        int64_t seed, const char *target, const char *problem);

/* Poll until the job leaves queued/running or timeout; returns the state (a failed job's
 * reason goes to stderr, to diagnose a failing test, unless tt_rfx_quiet_failures). */
tt_job_state tt_rfx_wait_job(tt_store *s, int64_t id, double timeout);

#define TT_RFX_SEQ_MAX 2000          /* trials kept per job (test_kill9_resume's budget) */
typedef struct tt_rfx_seq_out {
    char keys[TT_RFX_SEQ_MAX][128];
    int64_t ids[TT_RFX_SEQ_MAX];
    size_t n;
    double best;
} tt_rfx_seq_out;

/* The job's trials in seq order (paged): config keys, trial ids and the best median. */
void tt_rfx_job_trials(tt_store *s, int64_t id, tt_rfx_seq_out *o);

/* Lines of a text file (0 when it does not open). */
int tt_rfx_count_lines(const char *path);

#endif

/* SPDX-License-Identifier: MIT
 * runner.h - the workers: claim jobs from the store, run the job's strategy, measure configs
 * with the job's backend and commit every trial as it finishes.
 *
 * Jobs live only in the database; the HTTP API creates queued jobs, cancels them and reads
 * their progress.  A runner is a pool of threads, each with its own store connection.  The
 * same runner runs inside `tiletuned serve` and alone in `tiletuned worker` (other hosts,
 * PostgreSQL).  Deterministic: a strategy given the same seed, budget and measurements asks
 * for the same configs, so a job resumed after a crash (kill -9) reuses what was committed
 * and ends with the same result as an uninterrupted run.
 *
 * Ownership: the config is copied except the pointers it borrows (catalog, toolchains),
 * which must outlive the runner.  tt_runner_stop() joins the threads; jobs they held stay
 * `running` with a lease that the next claimer (or restart) takes over.
 */
#ifndef TT_RUNNER_H
#define TT_RUNNER_H

#include <jansson.h>

#include "catalog.h"
#include "store.h"

typedef struct tt_runner_config {
    const char *db_url;           /* each worker opens its own connection */
    int workers;                  /* threads (>= 1) */
    double lease_seconds;         /* job lease; renewed while working */
                                  /* (renewed between trials, every lease/4 s: it must be
                                     longer than the longest trial, e.g. a cmd: build+run) */
    double poll_seconds;          /* idle poll interval */
    const char *worker_name;      /* prefix of lease owner names (host:pid by default) */
    tt_catalog *catalog;          /* borrowed */
    const char *datasets_dir;     /* where replay:<name> finds <name>.{t4,kt-cache}.json[.gz] */
    const json_t *toolchains;     /* borrowed: {"name": {"build": "...", "run": "...", ...}} */
    /* added by runner.c (zero = default) */
    const char *work_dir;         /* scratch and build cache of cmd: backends ($TMPDIR) */
    int repeats;                  /* samples per measurement for backends that repeat (1) */
    int64_t max_trials;           /* testing: each worker stops, as if killed, after this many
                                     trials (its job stays running with its lease); 0: never */
} tt_runner_config;

typedef struct tt_runner tt_runner;

tt_rc tt_runner_start(const tt_runner_config *cfg, tt_runner **out, tt_errinfo *err);
/* Ask the workers to stop after their current trial and join them.  NULL accepted. */
void tt_runner_stop(tt_runner *r);

/* Check a backend spec for a job submission ("model", "sim", "replay:NAME", "cmd:NAME")
 * against this configuration, and fill its fingerprint (backend + dataset/toolchain hash).
 * TT_EINVAL / TT_ENOTFOUND with a message when it is unknown or does not apply to the
 * template (e.g. "sim" for a template without a kernel -> TT_EUNSUPPORTED). */
tt_rc tt_runner_check_backend(const tt_runner_config *cfg, const tt_template *t,
                              const char *backend, char fp[80], tt_errinfo *err);
/* Names of the strategies ("model-topk", "model-refine", "evolution", "anneal", "random",
 * "exhaustive"); 1 if name is one of them. */
int tt_runner_strategy_known(const char *name);

#endif

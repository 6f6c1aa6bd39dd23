/* SPDX-License-Identifier: MIT
 * runner.h - the workers: claim jobs from the store, run the job's strategy, measure configs
 * with the job's backend and commit every trial as it finishes (cheap backends: in batches of
 * trials, one transaction each -- group commit, runner.c).
 *
 * Jobs live only in the database; the HTTP API creates queued jobs, cancels them and reads
 * their progress.  A runner is a pool of threads, each with its own store connection.  The
 * same runner runs inside `tiletuned serve` and alone in `tiletuned worker` (other hosts,
 * PostgreSQL).  Deterministic: a strategy given the same seed, budget and measurements asks
 * for the same configs, so a job resumed after a crash (kill -9) reuses what was committed
 * and ends with the same result as an uninterrupted run.
 *
 * Leases: a worker holds its job with a lease of lease_seconds.  A heartbeat thread per
 * worker, with its own store connection, renews it every lease/3 for as long as the worker
 * holds the job -- also while one trial (a cmd: build + run) runs longer than the lease -- so
 * a live worker's job is never taken over.  When a renewal reports that the job is no longer
 * ours (cancelled, or taken over after the lease expired because this host stalled), the
 * worker drops the trial in flight without recording it and leaves the job.  A dead worker's
 * job is claimed by another worker about lease_seconds + poll_seconds after its last renewal.
 *
 * Logging: the library never prints; it reports job events through cfg->log (NULL: silent):
 * info "job N claimed by W (new|resumed|lease of X expired)", "job N done: ...", "job N:
 * lease lost, abandoning", "job N: cancelled, stopping"; warning for failed jobs and store
 * errors.  The callback is called from the worker threads (it must be thread-safe).
 *
 * Ownership: the config is copied except the pointers it borrows (catalog, toolchains,
 * log_ud), which must outlive the runner.  tt_runner_stop() joins the threads; jobs they held
 * stay `running` with a lease that the next claimer (or restart) takes over.
 */
#ifndef TT_RUNNER_H
#define TT_RUNNER_H

#include <jansson.h>

#include "catalog.h"
#include "log.h"
#include "store.h"

/* A log line from the runner: level (TT_LOG_INFO ...) and the formatted message (borrowed,
 * valid during the call). */
typedef void (*tt_runner_log_fn)(void *ud, tt_log_level level, const char *msg);

typedef struct tt_runner_config {
    const char *db_url;           /* each worker opens its own connection */
    int workers;                  /* threads (>= 1) */
    double lease_seconds;         /* job lease (30 s when <= 0); renewed every lease/3 s by
                                     the worker's heartbeat thread, also during a trial */
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
                                  /* (re-measurements of the top configs count here too) */
    int64_t batch_trials;         /* group commit of cheap backends (model, sim, replay:): at
                                     most this many trials per transaction (0: 1024; 1: one
                                     commit per trial); cmd: always commits each trial */
    double batch_seconds;         /* ... and a batch is committed after this long (0: 0.1 s) */
    tt_runner_log_fn log;         /* job events (see above); NULL: silent */
    void *log_ud;                 /* borrowed, passed to log */
} tt_runner_config;

#define TT_RUNNER_BATCH_TRIALS 1024
#define TT_RUNNER_BATCH_SECONDS 0.1

typedef struct tt_runner tt_runner;

tt_rc tt_runner_start(const tt_runner_config *cfg, tt_runner **out, tt_errinfo *err);
/* What a runner with this config needs before it starts, checked without starting it: with
 * toolchains configured, a writable work directory (cfg->work_dir, else the default
 * $TMPDIR/tiletune-work).  TT_OK, or TT_EIO naming the directory. */
tt_rc tt_runner_check(const tt_runner_config *cfg, tt_errinfo *err);
/* Ask the workers to stop after their current trial and join them.  NULL accepted. */
void tt_runner_stop(tt_runner *r);
/* 1 while every worker thread (and its heartbeat thread) is still running -- 1 too for a NULL
 * runner or one with 0 workers (nothing that could have died); 0 once any of them has ended
 * (stopped, or the testing max_trials exit).  Thread-safe. */
int tt_runner_alive(const tt_runner *r);

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

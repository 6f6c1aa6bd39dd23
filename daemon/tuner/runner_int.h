/* SPDX-License-Identifier: MIT
 * runner_int.h - what runner.c (the worker pool, heartbeats) and runner_job.c (one job on
 * a worker) share; private to daemon/tuner.
 *
 * Ownership: the runner owns its workers; a worker's fields are written by its own thread,
 * but the hb_* fields, which its heartbeat thread shares under hb_mu (hb_lost is atomic).
 */
#ifndef TT_RUNNER_INT_H
#define TT_RUNNER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "model.h"
#include "runner.h"
#include "store.h"

typedef struct tt_worker {
    struct tt_runner *r;
    int index;
    char owner[64];
    int64_t trials;           /* trials handled by this worker (all jobs) */
    pthread_t th;
    int started;
    atomic_int running;       /* the worker thread is in tt_worker_main */
    /* heartbeat */
    pthread_t hb_th;
    int hb_started;
    atomic_int hb_running;
    pthread_mutex_t hb_mu;
    pthread_cond_t hb_cv;
    int64_t hb_job;           /* job to keep leased, 0: none */
    uint64_t hb_gen;          /* bumped at every hb_job change: restarts the renewal timer */
    int hb_busy;              /* a renewal is in flight */
    int hb_quit;
    atomic_int hb_lost;       /* a renewal said hb_job is no longer ours */
} tt_worker;

struct tt_runner {
    tt_runner_config cfg;     /* strings below are the runner's copies */
    char *db_url, *worker_name, *datasets_dir, *work_dir;
    char *toolchain_list;     /* its toolchains' fingerprints ",fp1,fp2," (claims of cmd: jobs) */
    _Atomic int64_t waiting_seen;   /* the last job logged as left to other hosts */
    atomic_int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tt_worker *w;
    int nw;
    atomic_int db_moved;      /* 1 once the error "database file deleted or moved" is logged,
                                 0 again when a claim goes through (tt__runner_db_moved) */
};

/* The cmd: work directory when the config names none: $TMPDIR/tiletune-work (runner.c). */
void tt__runner_default_work_dir(char *buf, size_t cap);

/* Wall-clock seconds (CLOCK_REALTIME). */
double tt__now(void);

/* Log through the runner's configured sink (nothing when it has none). */
void tt__rlog(const tt_runner *r, tt_log_level l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* After a failure on s: when it is the refusal of tt_store_moved() (the SQLite file was
 * deleted or moved), log it at error level, once until the database answers writes again;
 * returns 1 then (keep s: reopening would create a new, empty database at the path). */
int tt__runner_db_moved(tt_runner *r, const tt_store *s);

/* ---- the calibration of a job (runner_calib.c) ----------------------------------------
 * The (raw model prediction, measured time) pairs of a job's successful trials. */
typedef struct tt_fitset {
    tt_model_result *pred;
    double *meas;
    size_t n, cap;
} tt_fitset;
/* Add a trial's pair when it succeeded with positive times (dropped when out of memory: the
 * calibration is an estimate). */
void tt__fit_add(tt_fitset *f, const tt_model_result *raw, tt_rc status, double us);
/* Fit the pairs (at least 2) and store the calibration of (target, backend fingerprint fp)
 * in s; nothing is stored when the fit fails.  The job goes on either way. */
void tt__fit_store(const tt_fitset *f, tt_store *s, const char *target, const char *fp);
void tt__fit_free(tt_fitset *f);
/* 1 and *c filled when text is a stored calibration the model may apply (n >= 2, positive
 * finite slope), else 0. */
int tt__calib_parse(const char *text, tt_calib *c);

/* Run one claimed job on worker w with its store connection s (runner_job.c): every way
 * out commits what was measured; the job's row says how it ended. */
void tt__job_run(tt_worker *w, tt_store *s, tt_job *job);

#endif

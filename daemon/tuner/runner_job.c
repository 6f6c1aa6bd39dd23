/* SPDX-License-Identifier: MIT
 * runner_job.c - one job on a worker (runner.c claims it): set-up (template, backend, space,
 * models, strategy), the trial loop with group commit for cheap backends, the objective and
 * the job's best, the re-measurement of the top configs on noisy backends, and the job's end
 * (the calibration fitted from the run: runner_calib.c).  Runs on the worker's thread with the worker's own
 * store connection; shares only tt_worker's hb_lost with the heartbeat (runner_int.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "jsonutil.h"
#include "model.h"
#include "runner.h"
#include "runner_int.h"
#include "space.h"
#include "strategy.h"

/* ---- one job ------------------------------------------------------------------------ */
typedef struct tt_jobrun {
    tt_worker *w;
    tt_store *s;
    tt_job *job;
    const tt_template *t;
    const tt_target *tgt;
    int64_t slots[TT_MAX_SLOTS];
    int64_t problem[TT_MAX_SLOTS];
    char problem_key[1024];
    tt_backend_env env;
    tt_backend *be;
    tt_space *space;
    char *space_key;          /* the strategy's enumeration cache key (NULL: none) */
    tt_model *model;          /* uncalibrated: what the strategies rank with */
    tt_model *model_cal;      /* with the stored calibration, for predicted_us (or NULL) */
    json_t *options;
    tt_strategy *st;
    int cancelled;            /* seen cancelled by tt_job_still_ours */
    int64_t remeasure;        /* option "remeasure": top configs re-measured at the end */
    tt_objective objective;   /* option "objective": what the strategy and the best rank by */
    int64_t *seq_params;      /* params of each seq (nparams per seq), for the re-measure */
    size_t nseq, capseq;
    /* group commit (cheap backends): the open batch's size and start */
    int batching;             /* 1: this job's trials are committed in batches (SQLite) */
    int async_commit;         /* 1: PostgreSQL session in asynchronous commit for this job */
    int64_t batch_n;
    double batch_t0;
    int64_t prog_planned, prog_done;   /* progress not yet written (batch: at its commit) */
    int64_t done_before;      /* trials done before this run: a resume replays them first, and
                               * the progress shown never goes back below them */
    int prog_dirty;
    tt_fitset fit;            /* successful trials of this run, for the calibration */
} tt_jobrun;

/* How a job's run ended (FINISHED: done or failed, recorded; ABANDONED: cancelled, taken over
 * or, testing, stopped as if killed; STOPPED: the runner stops, the job stays running and its
 * lease is released; DISCONNECTED: the database connection was lost, the job stays running
 * and is resumed) or, from one of its stages, that the run goes on (GO_ON). */
typedef enum {
    TT_JR_FINISHED, TT_JR_ABANDONED, TT_JR_STOPPED, TT_JR_DISCONNECTED, TT_JR_GO_ON
} tt_jr_outcome;

static tt_jr_outcome tt_job_abandon(tt_jobrun *jr);
static int tt_job_still_ours(tt_jobrun *jr);

/* ---- group commit ------------------------------------------------------------------------
 * Trials of cheap backends (model, sim, replay:) cost microseconds, their commits far more;
 * so a worker records them in batches: one store transaction (tt_store_batch_begin) of at
 * most cfg.batch_trials trials or cfg.batch_seconds, whichever comes first.  Crash-safe: a
 * crash loses only the open batch, whose trials the resumed job measures again -- the same
 * configs in the same order, since the strategy replays deterministically from the committed
 * ones.  cmd: trials (real hardware, minutes each) stay committed one by one.  While a batch
 * is open the worker's connection holds SQLite's write lock: other writers, the heartbeat's
 * lease renewal and a cancel wait for the batch (also across the strategy's computation of
 * the next proposal, which runs between trials).
 * PostgreSQL does not batch: there an open batch would hold row locks (the job's row, updated
 * by every trial's progress, and the `best` rows) across the strategy's computation, so the
 * worker's own heartbeat could not renew the lease behind it (a model-refine round on a
 * 1.3 M-config space outlived a 2 s lease in test_team_pg and the job crawled), and two
 * workers batching trials of one key could deadlock on their `best` rows.  Instead each trial
 * is its own short transaction with asynchronous commit (tt_store_async_commit: no wait for
 * the WAL flush), which takes most of the commit's cost away without holding any lock
 * between trials; a crash of the worker loses nothing committed, a crash of the server at
 * most the last moments of trials, which the resumed job measures again. */
static int tt_backend_cheap(const char *backend) { return strncmp(backend, "cmd:", 4) != 0; }

static int64_t tt_batch_max(const tt_runner *r)
{
    return r->cfg.batch_trials > 0 ? r->cfg.batch_trials : TT_RUNNER_BATCH_TRIALS;
}

static double tt_batch_secs(const tt_runner *r)
{
    return r->cfg.batch_seconds > 0 ? r->cfg.batch_seconds : TT_RUNNER_BATCH_SECONDS;
}

/* Before a trial: open a batch when the job batches and none is open. */
static tt_rc tt_batch_open(tt_jobrun *jr)
{
    if (!jr->batching || tt_store_in_batch(jr->s)) return TT_OK;
    tt_rc rc = tt_store_batch_begin(jr->s);
    jr->batch_n = 0;
    jr->batch_t0 = tt__now();
    return rc;
}

/* The job's progress (planned, done): at once without a batch, else with the batch's
 * commit -- nothing of an open batch is visible to others anyway (API readers see the
 * progress of the last committed batch: at most one batch, <= batch_seconds, old). */
static void tt_progress(tt_jobrun *jr, int64_t planned, int64_t done)
{
    if (done < jr->done_before) done = jr->done_before;
    if (planned < done) planned = done;
    jr->prog_planned = planned;
    jr->prog_done = done;
    jr->prog_dirty = 1;
    if (tt_store_in_batch(jr->s)) return;
    jr->prog_dirty = 0;
    (void)tt_store_job_progress(jr->s, jr->job->id, planned, done);
}

/* Commit the open batch (if any), with the progress of its trials. */
static tt_rc tt_batch_end(tt_jobrun *jr)
{
    if (!tt_store_in_batch(jr->s)) return TT_OK;
    jr->batch_n = 0;
    if (jr->prog_dirty)
        (void)tt_store_job_progress(jr->s, jr->job->id, jr->prog_planned, jr->prog_done);
    jr->prog_dirty = 0;
    return tt_store_batch_commit(jr->s);
}

/* After a trial: commit when the batch is full or old enough.  On SQLite the worker then
 * leaves the single write lock free for TT_BATCH_GAP_S before its next batch, so that other
 * writers (a cancel, a submission, an import, the lease renewal), polling every 0.5 ms
 * (store_sqlite.c), get their turn instead of starving behind a long cheap job.
 * (PostgreSQL queues lock waiters in order: no gap needed.) */
#define TT_BATCH_GAP_S 0.002
static tt_rc tt_batch_step(tt_jobrun *jr)
{
    if (!tt_store_in_batch(jr->s)) return TT_OK;
    tt_runner *r = jr->w->r;
    if (++jr->batch_n < tt_batch_max(r) && tt__now() - jr->batch_t0 < tt_batch_secs(r))
        return TT_OK;
    tt_rc rc = tt_batch_end(jr);
    if (tt_store_engine_of(jr->s) == TT_STORE_SQLITE) {
        struct timespec ts = {0, (long)(TT_BATCH_GAP_S * 1e9)};
        nanosleep(&ts, NULL);
    }
    return rc;
}
static tt_jr_outcome tt_job_fail(tt_jobrun *jr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A store call of the job failed because the database connection was lost (a server
 * restart, a terminated session, a network cut): nothing is wrong with the job, so it is not
 * failed; the worker leaves it running (tt__job_run then releases its lease for the next
 * claim, which resumes it with every committed trial). */
static tt_jr_outcome tt_job_disconnected(tt_jobrun *jr, const char *what)
{
    tt__rlog(jr->w->r, TT_LOG_WARNING, "job %lld: database connection lost (%s); the job "
             "stays running and resumes", (long long)jr->job->id, what);
    return TT_JR_DISCONNECTED;
}

/* Fail the job with the reason fmt, unless the reason is a lost database connection. */
static tt_jr_outcome tt_job_fail(tt_jobrun *jr, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (tt_store_conn_lost(jr->s)) return tt_job_disconnected(jr, msg);
    (void)tt_batch_end(jr);   /* what was measured stays (a failed commit: re-measured) */
    tt_rc rc = tt_store_job_finish(jr->s, jr->job->id, jr->w->owner, TT_JOB_FAILED, msg);
    if (rc == TT_EEXISTS || rc == TT_ENOTFOUND) {
        (void)tt_job_still_ours(jr);   /* tells a cancel from a takeover, for the log */
        return tt_job_abandon(jr);
    }
    tt__rlog(jr->w->r, TT_LOG_WARNING, "job %lld failed: %s", (long long)jr->job->id, msg);
    if (rc != TT_OK) (void)tt__runner_db_moved(jr->w->r, jr->s);
    if (rc != TT_OK)
        tt__rlog(jr->w->r, TT_LOG_WARNING, "job %lld: cannot record the failure: %s",
                (long long)jr->job->id, tt_store_errmsg(jr->s));
    return TT_JR_FINISHED;
}

/* Between trials: 1 while the job is still ours (the heartbeat has not lost its lease, and
 * it is still running under our name: a cancel is seen here at once). */
static int tt_job_still_ours(tt_jobrun *jr)
{
    int lost = atomic_load(&jr->w->hb_lost);
    tt_job cur;
    memset(&cur, 0, sizeof cur);
    if (tt_store_job_get(jr->s, jr->job->id, &cur) != TT_OK) return !lost;   /* transient */
    int ours = !lost && cur.state == TT_JOB_RUNNING &&
               strcmp(cur.lease_owner, jr->w->owner) == 0;
    jr->cancelled = cur.state == TT_JOB_CANCELLED;
    tt_job_clear(&cur);
    return ours;
}

/* Leave a job that is no longer ours. */
static tt_jr_outcome tt_job_abandon(tt_jobrun *jr)
{
    if (jr->cancelled)
        tt__rlog(jr->w->r, TT_LOG_INFO, "job %lld: cancelled, stopping", (long long)jr->job->id);
    else
        tt__rlog(jr->w->r, TT_LOG_INFO, "job %lld: lease lost, abandoning",
                (long long)jr->job->id);
    return TT_JR_ABANDONED;
}

/* The objective value of a successful trial (jr->objective; docs/strategies.md).  m: a new
 * measurement, or NULL for a reused trial tr: a replay trial is asked from the backend again
 * (it answers from memory, with the statistics of every recorded runtime and the recorded
 * objective, where the store keeps at most TT_MAX_SAMPLES of them); another's from its stored
 * samples. */
static double tt_job_objective(tt_jobrun *jr, const tt_measurement *m, const tt_trial *tr)
{
    if (jr->objective == TT_OBJ_MEDIAN) return m ? m->median_us : tr->median_us;
    if (m) return tt_measurement_objective(m, jr->objective);
    tt_measurement again;
    if (strncmp(jr->job->backend, "replay:", 7) == 0 &&
        tt_backend_measure(jr->be, jr->slots, &again) == TT_OK && again.status == TT_OK)
        return tt_measurement_objective(&again, jr->objective);
    double s[TT_MAX_SAMPLES];
    int n = 0;
    json_t *a = tr->samples_json ? json_loads(tr->samples_json, 0, NULL) : NULL;
    for (size_t i = 0; i < json_array_size(a) && n < TT_MAX_SAMPLES; i++)
        s[n++] = json_number_value(json_array_get(a, i));
    json_decref(a);
    double v = tt_objective_value(jr->objective, s, n, NAN);
    return isnan(v) ? tr->median_us : v;
}

/* The store keeps a job's best by median; with another objective the job's best is the
 * strategy's best (it saw the objective values) -- set once the search is over. */
static void tt_job_best_by_objective(tt_jobrun *jr, const tt_trial_key *key)
{
    const tt_template *t = jr->t;
    int64_t params[TT_MAX_SLOTS];
    double v;
    if (!tt_strategy_best(jr->st, params, &v)) return;
    memcpy(jr->slots, jr->problem, t->ninputs * sizeof(int64_t));
    memcpy(jr->slots + t->ninputs, params, t->nparams * sizeof(int64_t));
    tt_trial tr;
    memset(&tr, 0, sizeof tr);
    if (tt_store_trial_lookup(jr->s, key, tt_tmpl_config_hash(t, jr->slots), &tr) == TT_OK)
        (void)tt_store_job_best_set(jr->s, jr->job->id, tr.id, v, tr.predicted_us,
                                    tr.config_json);
    tt_trial_clear(&tr);
}

/* Measure one config (or reuse its measurement) and record it at seq.  Returns TT_OK and
 * the outcome for the strategy, or a backend/store error that fails the job. */
static tt_rc tt_job_trial(tt_jobrun *jr, const tt_trial_key *key, int64_t seq,
                          const int64_t *params, tt_rc *status, double *us, char *why,
                          size_t whycap)
{
    const tt_template *t = jr->t;
    memcpy(jr->slots, jr->problem, t->ninputs * sizeof(int64_t));
    memcpy(jr->slots + t->ninputs, params, t->nparams * sizeof(int64_t));
    uint64_t hash = tt_tmpl_config_hash(t, jr->slots);
    double pred = 0;
    tt_model_result raw;
    int have_raw = 0;
    if (jr->model) {
        int64_t tmp[TT_MAX_SLOTS];
        memcpy(tmp, jr->slots, t->nslots * sizeof(int64_t));
        have_raw = tt_model_eval(jr->model, tmp, &raw) == TT_OK;
        if (have_raw) pred = raw.time_us;
        tt_model_result mc;
        memcpy(tmp, jr->slots, t->nslots * sizeof(int64_t));
        /* with a stored calibration, predicted_us is the calibrated prediction, or none
         * (0, null in the API) where the calibration overflows: never the raw one */
        if (have_raw && jr->model_cal)
            pred = tt_model_eval(jr->model_cal, tmp, &mc) == TT_OK ? mc.time_us : 0;
    }
    tt_trial tr;
    memset(&tr, 0, sizeof tr);
    /* replay: answers from memory, faster than the store's look-up: measure, and let the
     * record find an earlier measurement under the key (then reused, the same as when looked
     * up first).  sim and cmd: cost more than a look-up, model about as much: look first. */
    tt_rc rc = strncmp(jr->job->backend, "replay:", 7) == 0
                   ? TT_ENOTFOUND
                   : tt_store_trial_lookup(jr->s, key, hash, &tr);
    if (rc == TT_OK) {
        rc = tt_store_trial_record(jr->s, key, t->name, jr->job->id, seq, &tr);
        if (rc != TT_OK) snprintf(why, whycap, "store: %s", tt_store_errmsg(jr->s));
        *status = tr.status;
        *us = tr.status == TT_OK ? tt_job_objective(jr, NULL, &tr) : tr.median_us;
        tt_trial_clear(&tr);
        if (rc == TT_OK && have_raw) tt__fit_add(&jr->fit, &raw, *status, *us);
        return rc;
    }
    if (rc != TT_ENOTFOUND) {
        snprintf(why, whycap, "store: %s", tt_store_errmsg(jr->s));
        return rc;
    }
    char ckey[2048];
    if (tt_tmpl_config_key(t, jr->slots, ckey, sizeof ckey) >= sizeof ckey) {
        snprintf(why, whycap, "config key longer than %zu bytes", sizeof ckey - 1);
        return TT_ETOOBIG;
    }
    char cjson[2048];
    if (tt_tmpl_config_json_text(t, jr->slots, cjson, sizeof cjson) >= sizeof cjson) {
        snprintf(why, whycap, "config JSON longer than %zu bytes", sizeof cjson - 1);
        return TT_ETOOBIG;
    }
    tt_measurement m;
    rc = tt_backend_measure(jr->be, jr->slots, &m);
    if (rc != TT_OK && atomic_load(&jr->w->hb_lost)) {
        snprintf(why, whycap, "lease lost");
        return TT_EEXISTS;
    }
    if (rc != TT_OK) {
        snprintf(why, whycap, "backend %s: %s%s%s", jr->job->backend, tt_strerror(rc),
                 m.error[0] ? ": " : "", m.error);
        return rc;
    }
    if (atomic_load(&jr->w->hb_lost)) {   /* taken over or cancelled while measuring */
        snprintf(why, whycap, "lease lost");
        return TT_EEXISTS;
    }
    /* heap fields: the store may clear and replace them (tt_trial_clear at the end) */
    tr.config_key = strdup(ckey);
    size_t ol = strnlen(jr->w->owner, sizeof tr.measured_by - 1);   /* no printf per trial */
    memcpy(tr.measured_by, jr->w->owner, ol);
    tr.measured_by[ol] = '\0';
    tr.config_hash = hash;
    tr.config_json = strdup(cjson);
    tr.status = m.status;
    tr.error = m.status != TT_OK && m.error[0] ? strdup(m.error) : NULL;
    if (m.status == TT_OK && m.nsamples > 0) {
        tr.median_us = m.median_us;
        tr.spread_us = m.spread_us;
        tr.min_us = m.min_us;
        tr.samples_us = m.samples_us;   /* kept compactly by the store (schema 005) */
        tr.nsamples = (size_t)m.nsamples;
    }
    tr.predicted_us = pred;
    tr.compile_s = m.compile_s;
    tr.measure_s = m.measure_s;
    if (!tr.config_key || !tr.config_json) {
        tt_trial_clear(&tr);
        snprintf(why, whycap, "out of memory");
        return TT_ENOMEM;
    }
    rc = tt_store_trial_record(jr->s, key, t->name, jr->job->id, seq, &tr);
    if (rc != TT_OK) snprintf(why, whycap, "store: %s", tt_store_errmsg(jr->s));
    *status = tr.status;
    *us = tr.median_us;
    if (tr.status == TT_OK && !tr.reused && m.status == TT_OK) {
        double v = tt_job_objective(jr, &m, NULL);
        if (!isnan(v)) *us = v;
    } else if (tr.status == TT_OK && tr.reused) {
        *us = tt_job_objective(jr, NULL, &tr);
    }
    tt_trial_clear(&tr);
    if (rc == TT_OK && have_raw) tt__fit_add(&jr->fit, &raw, *status, *us);
    return rc;
}

/* Remember the params asked at seq (1-based) for the re-measurement. */
static tt_rc tt_seq_keep(tt_jobrun *jr, int64_t seq, const int64_t *params)
{
    size_t np = jr->t->nparams ? jr->t->nparams : 1;
    if ((size_t)seq > jr->capseq) {
        size_t ncap = jr->capseq ? 2 * jr->capseq : 64;
        while (ncap < (size_t)seq) ncap *= 2;
        int64_t *n = realloc(jr->seq_params, ncap * np * sizeof *n);
        if (!n) return TT_ENOMEM;
        jr->seq_params = n;
        jr->capseq = ncap;
    }
    memcpy(jr->seq_params + (size_t)(seq - 1) * np, params, jr->t->nparams * sizeof(int64_t));
    if ((size_t)seq > jr->nseq) jr->nseq = (size_t)seq;
    return TT_OK;
}

/* 1 when the job's backend is noisy: cmd: measures real hardware.  model, sim and replay:
 * answer the same number every time, so re-measuring them would only cost time. */
static int tt_backend_noisy(const char *backend) { return !tt_backend_cheap(backend); }

static int tt_cmp_trial_rank(const void *a, const void *b)
{
    const tt_trial *x = *(const tt_trial *const *)a, *y = *(const tt_trial *const *)b;
    if (x->median_us != y->median_us) return x->median_us < y->median_us ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* After the strategy: re-measure the jr->remeasure fastest distinct successful configs of
 * the job and append their samples (tt_store_trial_append), fastest first.  Resumable: the
 * trials already re-measured (the job's "remeasured") count towards K and are skipped; since
 * they are re-measured in rank order and only re-measurement changes a median, the others
 * keep their rank, so a resumed job re-measures the same configs as an uninterrupted one.
 * Returns TT_JR_GO_ON to go on finishing the job, else the outcome that ends it (failed,
 * abandoned). */
static tt_jr_outcome tt_job_remeasure(tt_jobrun *jr, const tt_trial_key *key, int64_t seq)
{
    tt_runner *r = jr->w->r;
    tt_job *job = jr->job;
    tt_trial *tl = NULL;
    size_t n = 0;
    int64_t *done = NULL;
    size_t ndone = 0;
    tt_trial **cand = NULL;
    tt_jr_outcome out = TT_JR_FINISHED;
    tt_rc rc = tt_store_trial_list(jr->s, job->id, 0, seq + 1, &tl, &n, NULL);
    if (rc == TT_OK) rc = tt_store_job_remeasured(jr->s, job->id, &done, &ndone);
    if (rc != TT_OK) {
        out = tt_job_fail(jr, "re-measure: store: %s", tt_store_errmsg(jr->s));
        goto end;
    }
    cand = calloc(n ? n : 1, sizeof *cand);
    if (!cand) {
        out = tt_job_fail(jr, "re-measure: out of memory");
        goto end;
    }
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        const tt_trial *t = &tl[i];
        if (t->status != TT_OK || !(t->median_us > 0) || t->seq < 1 || (size_t)t->seq > jr->nseq)
            continue;
        int skip = 0;
        for (size_t d = 0; d < ndone && !skip; d++) skip = done[d] == t->id;
        for (size_t c = 0; c < nc && !skip; c++) skip = cand[c]->id == t->id;
        if (!skip) cand[nc++] = &tl[i];
    }
    qsort(cand, nc, sizeof *cand, tt_cmp_trial_rank);
    int64_t left = jr->remeasure - (int64_t)ndone;
    for (size_t c = 0; c < nc && left > 0; c++, left--) {
        if (atomic_load(&r->stop)) {
            out = TT_JR_STOPPED;
            goto end;
        }
        if (!tt_job_still_ours(jr)) {
            out = tt_job_abandon(jr);
            goto end;
        }
        const tt_trial *t = cand[c];
        memcpy(jr->slots, jr->problem, jr->t->ninputs * sizeof(int64_t));
        size_t np = jr->t->nparams ? jr->t->nparams : 1;
        memcpy(jr->slots + jr->t->ninputs, jr->seq_params + (size_t)(t->seq - 1) * np,
               jr->t->nparams * sizeof(int64_t));
        tt_measurement m;
        rc = tt_backend_measure(jr->be, jr->slots, &m);
        if (atomic_load(&jr->w->hb_lost)) {   /* taken over or cancelled while measuring */
            (void)tt_job_still_ours(jr);
            out = tt_job_abandon(jr);
            goto end;
        }
        if (rc != TT_OK || m.status != TT_OK || m.nsamples <= 0) {
            /* keep the first measurement; a resumed job tries this config again */
            tt__rlog(r, TT_LOG_WARNING, "job %lld: re-measuring trial %lld: %s%s%s",
                    (long long)job->id, (long long)t->id,
                    tt_strerror(rc != TT_OK ? rc : m.status != TT_OK ? m.status : TT_ERUN),
                    m.error[0] ? ": " : "", m.error);
        } else {
            rc = tt_store_trial_append(jr->s, key, jr->t->name, job->id, t->id, m.samples_us,
                                       (size_t)m.nsamples, NULL);
            if (rc != TT_OK && rc != TT_EEXISTS) {
                out = tt_job_fail(jr, "re-measure: store: %s", tt_store_errmsg(jr->s));
                goto end;
            }
        }
        if (r->cfg.max_trials > 0 && ++jr->w->trials >= r->cfg.max_trials) {
            atomic_store(&r->stop, 1);   /* testing: behave as if killed here */
            out = TT_JR_ABANDONED;
            goto end;
        }
    }
    out = TT_JR_GO_ON;
end:
    for (size_t i = 0; i < n; i++) tt_trial_clear(&tl[i]);
    free(tl);
    free(done);
    free(cand);
    return out;
}

/* The cost model of the job (none for templates without a kernel) and, when the store has a
 * calibration for this target and backend, the calibrated one; either may stay NULL. */
static void tt_job_models(tt_jobrun *jr)
{
    if (jr->t->kernel && tt_model_new(jr->t, jr->tgt, jr->problem, NULL, &jr->model, NULL) != TT_OK)
        jr->model = NULL;
    char *ctext = NULL;
    tt_calib cal;
    if (jr->model &&
        tt_store_calib_get(jr->s, jr->tgt->name, tt_backend_fingerprint(jr->be), &ctext) == TT_OK &&
        ctext && tt__calib_parse(ctext, &cal) &&
        tt_model_new(jr->t, jr->tgt, jr->problem, &cal, &jr->model_cal, NULL) != TT_OK)
        jr->model_cal = NULL;
    free(ctext);
}

/* The log line of a finished job: "trials a/b" is trials run / the trial budget (or a when
 * there was none). */
static void tt_job_done_log(tt_jobrun *jr, int64_t seq, int64_t ok)
{
    tt_runner *r = jr->w->r;
    tt_job *job = jr->job;
    long long budget = job->budget_trials > 0 ? (long long)job->budget_trials : (long long)seq;
    if (!r->cfg.log) return;   /* nobody listens: no read of the job */
    tt_job cur;
    memset(&cur, 0, sizeof cur);
    if (tt_store_job_get(jr->s, job->id, &cur) == TT_OK && cur.best_trial)
        tt__rlog(r, TT_LOG_INFO, "job %lld done: best %.3f us %s (trials %lld/%lld, %lld ok)",
                (long long)job->id, cur.best_us,
                cur.best_config_json ? cur.best_config_json : "", (long long)seq, budget,
                (long long)ok);
    else
        tt__rlog(r, TT_LOG_INFO, "job %lld done (trials %lld/%lld, %lld ok)", (long long)job->id,
                (long long)seq, budget, (long long)ok);
    tt_job_clear(&cur);
}


/* The job's template, target and problem (and its key). */
static tt_jr_outcome tt_job_load(tt_jobrun *jr)
{
    tt_runner *r = jr->w->r;
    tt_job *job = jr->job;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_catalog_template(r->cfg.catalog, jr->s, job->template_name,
                                   job->template_hash[0] ? job->template_hash : NULL, &jr->t, &err);
    if (rc != TT_OK) return tt_job_fail(jr, "template: %s", err.msg[0] ? err.msg : tt_strerror(rc));
    jr->tgt = tt_catalog_target(r->cfg.catalog, job->target);
    if (!jr->tgt) return tt_job_fail(jr, "unknown target '%s'", job->target);
    json_t *pj = json_loads(job->problem_json ? job->problem_json : "", 0, NULL);
    if (!pj) return tt_job_fail(jr, "problem: malformed JSON");
    rc = tt_tmpl_problem_from_json(jr->t, pj, jr->problem, &err);
    json_decref(pj);
    if (rc != TT_OK) return tt_job_fail(jr, "problem: %s%s%s", err.path, err.path[0] ? ": " : "", err.msg);
    if (tt_tmpl_problem_key(jr->t, jr->problem, jr->problem_key, sizeof jr->problem_key) >=
        sizeof jr->problem_key)
        return tt_job_fail(jr, "problem: key longer than %zu bytes", sizeof jr->problem_key - 1);
    return TT_JR_GO_ON;
}

/* The job's options: remeasure, the objective statistic. */
static tt_jr_outcome tt_job_options(tt_jobrun *jr)
{
    tt_job *job = jr->job;
    if (job->options_json && *job->options_json) {
        jr->options = json_loads(job->options_json, 0, NULL);
        if (!jr->options) return tt_job_fail(jr, "options: malformed JSON");
    }
    jr->remeasure = 3;
    const json_t *rm = json_object_get(jr->options, "remeasure");
    if (rm && (!json_is_integer(rm) || json_integer_value(rm) < 0 ||
               json_integer_value(rm) > 1024))
        return tt_job_fail(jr, "options: option 'remeasure' must be an integer in [0, 1024]");
    if (rm) jr->remeasure = json_integer_value(rm);
    /* the objective: replay defaults to the dataset's own, real backends to the median */
    jr->objective = strncmp(job->backend, "replay:", 7) == 0 ? TT_OBJ_RECORDED : TT_OBJ_MEDIAN;
    const json_t *ob = json_object_get(jr->options, "objective");
    if (ob && (!json_is_string(ob) || tt_objective_parse(json_string_value(ob), &jr->objective) ||
               (jr->objective == TT_OBJ_RECORDED && strncmp(job->backend, "replay:", 7) != 0)))
        return tt_job_fail(jr, "options: option 'objective' must be \"median\", \"mean\", "
                           "\"min\" or (replay: only) \"recorded\"");
    return TT_JR_GO_ON;
}

/* The backend, the search space, the models and the strategy (logged with why it runs). */
static tt_jr_outcome tt_job_open(tt_jobrun *jr)
{
    tt_runner *r = jr->w->r;
    tt_job *job = jr->job;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    jr->env.datasets_dir = r->datasets_dir;
    jr->env.toolchains = r->cfg.toolchains;
    jr->env.work_dir = r->work_dir;
    jr->env.repeats = r->cfg.repeats > 0 ? r->cfg.repeats : 1;
    jr->env.stop = &jr->w->hb_lost;   /* a cancel stops a running cmd: command */
    tt_rc rc = tt_backend_open(job->backend, &jr->env, jr->t, jr->tgt, jr->problem, &jr->be, &err);
    if (rc != TT_OK) return tt_job_fail(jr, "backend: %s", err.msg[0] ? err.msg : tt_strerror(rc));
    /* a single host (SQLite) claims every job: one submitted before its toolchain's
     * definition changed, or before its dataset file was replaced, can never be measured
     * under the key it was submitted for (its trials would be filed under another key than
     * the job's backend_fp, which its best then claims) */
    const char *fp = tt_backend_fingerprint(jr->be);
    int cmd = !strncmp(job->backend, "cmd:", 4), replay = !strncmp(job->backend, "replay:", 7);
    if ((cmd || replay) && job->backend_fp[0] && strcmp(fp, job->backend_fp))
        return tt_job_fail(jr, "backend: the %s %s changed since the job was submitted (job: "
                           "%s, this server: %s); submit it again",
                           cmd ? "definition of toolchain" : "recording of dataset",
                           job->backend + (cmd ? 4 : 7), job->backend_fp, fp);
    tt_caps caps;
    tt_target_caps(jr->tgt, &caps);
    rc = tt_space_new(jr->t, jr->problem, &caps, &jr->space, &err);
    if (rc != TT_OK) return tt_job_fail(jr, "space: %s", err.msg[0] ? err.msg : tt_strerror(rc));
    jr->space_key = tt_strategy_space_key(jr->t, jr->problem, &caps);   /* NULL: no caching */
    tt_job_models(jr);
    tt_strategy_config sc = {
        .name = job->strategy, .t = jr->t, .tgt = jr->tgt, .space = jr->space,
        .model = jr->model, .problem = jr->problem, .seed = (uint64_t)job->seed,
        .budget = job->budget_trials, .options = jr->options, .space_key = jr->space_key,
    };
    rc = tt_strategy_new(&sc, &jr->st, &err);
    if (rc != TT_OK) return tt_job_fail(jr, "strategy: %s", err.msg[0] ? err.msg : tt_strerror(rc));
    const tt_strategy_choice *ch = tt_strategy_chosen(jr->st);
    tt__rlog(r, ch->fallback ? TT_LOG_WARNING : TT_LOG_INFO, "job %lld: strategy %s (%s)",
            (long long)job->id, ch->name, ch->reason);
    /* cheap backends' trials are group-committed (SQLite) or committed asynchronously
     * (PostgreSQL) */
    int pg = tt_store_engine_of(jr->s) == TT_STORE_POSTGRES;
    jr->batching = !pg && tt_backend_cheap(job->backend) && tt_batch_max(r) > 1;
    if (pg && tt_backend_cheap(job->backend) && tt_batch_max(r) > 1 &&
        tt_store_async_commit(jr->s, 1) == TT_OK)
        jr->async_commit = 1;
    return TT_JR_GO_ON;
}

/* The search: the strategy's configs measured one by one until the budget, the space or
 * the job's time is spent; *seq trials were recorded, *ok of them measured successfully. */
static tt_jr_outcome tt_job_search(tt_jobrun *jr, const tt_trial_key *key, int64_t *seq, int64_t *ok)
{
    tt_runner *r = jr->w->r;
    tt_job *job = jr->job;
    double start = tt__now();
    int64_t params[TT_MAX_SLOTS];
    for (;;) {
        if (atomic_load(&r->stop)) return TT_JR_STOPPED;
        /* inside an open batch nobody else can have changed the job (we hold the write lock /
         * its row): the heartbeat's verdict is enough; the store is asked once per batch */
        if (jr->batch_n > 0 && tt_store_in_batch(jr->s) ? atomic_load(&jr->w->hb_lost)
                                                         : !tt_job_still_ours(jr))
            return tt_job_abandon(jr);   /* cancelled or taken over */
        if (job->budget_seconds > 0 && tt__now() - start >= job->budget_seconds) break;
        size_t n = 0;
        tt_rc rc = tt_strategy_next(jr->st, 1, params, &n);
        if (rc == TT_ELIMIT)
            return tt_job_fail(jr, "strategy %s: the space is too large to enumerate (give a "
                               "trial budget or a sampling strategy)", job->strategy);
        if (rc != TT_OK) return tt_job_fail(jr, "strategy %s: %s", job->strategy, tt_strerror(rc));
        if (n == 0) break;
        tt_rc status = TT_OK;
        double us = 0;
        char why[512] = "";
        if ((rc = tt_batch_open(jr)) != TT_OK)
            return tt_job_fail(jr, "store: %s", tt_store_errmsg(jr->s));
        rc = tt_job_trial(jr, key, *seq + 1, params, &status, &us, why, sizeof why);
        if (rc != TT_OK && atomic_load(&jr->w->hb_lost)) {
            (void)tt_job_still_ours(jr);   /* tells a cancel from a takeover, for the log */
            return tt_job_abandon(jr);
        }
        if (rc != TT_OK) return tt_job_fail(jr, "%s", why[0] ? why : tt_strerror(rc));
        if (tt_seq_keep(jr, *seq + 1, params) != TT_OK) return tt_job_fail(jr, "out of memory");
        ++*seq;
        if (status == TT_OK) ++*ok;
        (void)tt_strategy_report(jr->st, params, status, us);
        tt_progress(jr, tt_strategy_planned(jr->st), *seq);
        if ((rc = tt_batch_step(jr)) != TT_OK)   /* the batch is lost: a resume re-measures */
            return tt_job_fail(jr, "store: commit: %s", tt_store_errmsg(jr->s));
        if (r->cfg.max_trials > 0 && ++jr->w->trials >= r->cfg.max_trials) {
            atomic_store(&r->stop, 1);   /* testing: behave as if killed here */
            return TT_JR_ABANDONED;
        }
    }
    return TT_JR_GO_ON;
}

/* The end of a search of seq trials (ok measured): remeasuring the best of a noisy backend,
 * the objective's best, the calibration, the job's end. */
static tt_jr_outcome tt_job_end(tt_jobrun *jr, const tt_trial_key *key, int64_t seq, int64_t ok)
{
    tt_runner *r = jr->w->r;
    tt_job *job = jr->job;
    if (seq == 0 && tt_strategy_enumerated(jr->st))
        return tt_job_fail(jr, "the search space has no feasible config");
    if (seq == 0)   /* sampled: feasible configs may exist, too rare to be drawn */
        return tt_job_fail(jr, "strategy %s found no feasible config in its random draws of "
                           "the space (%.3g configs, too many to enumerate), which may still "
                           "hold some: constraints or capacities reject nearly every config; "
                           "narrow the param domains or the constraints",
                           job->strategy, (double)tt_space_total(jr->space));
    if (ok == 0)
        return tt_job_fail(jr, "no config was measured successfully (%lld trials)", (long long)seq);
    /* The end of the search -- progress (planned = done), the objective's best, the
     * calibration -- goes into the last batch when one is open: one commit, not four. */
    tt_progress(jr, seq, seq);
    if (jr->remeasure > 0 && tt_backend_noisy(job->backend)) {   /* cmd: never batches */
        tt_jr_outcome o = tt_job_remeasure(jr, key, seq);
        if (o != TT_JR_GO_ON) return o;
    }
    if (jr->objective != TT_OBJ_MEDIAN) tt_job_best_by_objective(jr, key);
    tt__fit_store(&jr->fit, jr->s, jr->tgt->name, key->backend_fp);
    tt_rc rc = tt_batch_end(jr);
    if (rc != TT_OK) return tt_job_fail(jr, "store: commit: %s", tt_store_errmsg(jr->s));
    rc = tt_store_job_finish(jr->s, job->id, jr->w->owner, TT_JOB_DONE, NULL);
    if (rc == TT_EEXISTS || rc == TT_ENOTFOUND) {
        (void)tt_job_still_ours(jr);
        return tt_job_abandon(jr);
    }
    if (rc != TT_OK && tt_store_conn_lost(jr->s)) return tt_job_disconnected(jr, tt_store_errmsg(jr->s));
    if (rc != TT_OK) {
        tt__rlog(r, TT_LOG_WARNING, "job %lld: cannot record its end: %s", (long long)job->id,
                tt_store_errmsg(jr->s));
        return TT_JR_FINISHED;
    }
    tt_job_done_log(jr, seq, ok);
    return TT_JR_FINISHED;
}

/* A claimed job from its setup to its end: each stage either hands on (GO_ON) or ends the
 * run (failed, done, abandoned). */
static tt_jr_outcome tt_job_setup_and_run(tt_jobrun *jr)
{
    tt_jr_outcome o;
    if ((o = tt_job_load(jr)) != TT_JR_GO_ON) return o;
    if ((o = tt_job_options(jr)) != TT_JR_GO_ON) return o;
    if ((o = tt_job_open(jr)) != TT_JR_GO_ON) return o;
    tt_trial_key key = {jr->t->hash, jr->problem_key, jr->tgt->name, tt_backend_fingerprint(jr->be)};
    int64_t seq = 0, ok = 0;
    if ((o = tt_job_search(jr, &key, &seq, &ok)) != TT_JR_GO_ON) return o;
    return tt_job_end(jr, &key, seq, ok);
}

void tt__job_run(tt_worker *w, tt_store *s, tt_job *job)
{
    tt_jobrun jr;
    memset(&jr, 0, sizeof jr);
    jr.w = w;
    jr.s = s;
    jr.job = job;
    jr.done_before = job->done;
    tt_jr_outcome o = tt_job_setup_and_run(&jr);
    /* every other way out (stop, abandon, the testing max_trials) commits what it measured */
    if (tt_batch_end(&jr) != TT_OK)
        tt__rlog(w->r, TT_LOG_WARNING, "job %lld: cannot commit its last trials: %s (they are "
                "measured again when it resumes)", (long long)job->id, tt_store_errmsg(s));
    if (jr.async_commit) (void)tt_store_async_commit(s, 0);
    /* disconnected: let the next claim (this worker's or another's) resume it at once; while
     * the database is still away, its lease expires instead */
    if (o == TT_JR_DISCONNECTED && tt_store_job_release(s, job->id, w->owner) != TT_OK)
        tt__rlog(w->r, TT_LOG_WARNING, "job %lld: cannot release its lease (%s): resumed once "
                "it expires", (long long)job->id, tt_store_errmsg(s));
    /* stopped (SIGTERM): the next claim, another host's on PostgreSQL, resumes it at once
     * instead of after lease_seconds */
    if (o == TT_JR_STOPPED) {
        if (tt_store_job_release(s, job->id, w->owner) == TT_OK)
            tt__rlog(w->r, TT_LOG_INFO, "job %lld: stopping; its lease is released, the next "
                     "claim resumes it", (long long)job->id);
        else
            tt__rlog(w->r, TT_LOG_WARNING, "job %lld: stopping; cannot release its lease (%s): "
                     "resumed once it expires", (long long)job->id, tt_store_errmsg(s));
    }
    tt_strategy_free(jr.st);
    free(jr.space_key);
    tt_model_free(jr.model);
    tt_model_free(jr.model_cal);
    tt__fit_free(&jr.fit);
    free(jr.seq_params);
    tt_space_free(jr.space);
    tt_backend_close(jr.be);
    json_decref(jr.options);
}


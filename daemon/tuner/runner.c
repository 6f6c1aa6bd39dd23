/* SPDX-License-Identifier: MIT
 * runner.c - the worker pool: workers claim jobs (one job on a worker -- replay its strategy
 * from scratch, reusing every config already measured under the job's trial key, measure the
 * rest with the job's backend, commit the trials -- is runner_job.c), heartbeats keep them
 * leased, start and stop.
 *
 * Each worker thread owns its own store connection, backend, space, model and strategy.
 * Each worker also has a heartbeat thread with a second store connection (its own) that
 * renews the lease of the worker's job every lease/3 while the worker holds it; the two
 * share only the hb_* fields of tt_worker (runner_int.h), under hb_mu (hb_lost is atomic).
 */
#include "runner.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "jsonutil.h"
#include "model.h"
#include "space.h"
#include "strategy.h"
#include "runner_int.h"

/* ---- shared with runner_job.c (runner_int.h) ---------------------------------------- */
double tt__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tt__rlog(const tt_runner *r, tt_log_level l, const char *fmt, ...)
{
    if (!r->cfg.log) return;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->cfg.log(r->cfg.log_ud, l, msg);
}

int tt__runner_db_moved(tt_runner *r, const tt_store *s)
{
    if (!tt_store_moved(s)) return 0;
    if (!atomic_exchange(&r->db_moved, 1))
        tt__rlog(r, TT_LOG_ERROR, "database: %s; jobs cannot record trials or end until then",
                 tt_store_errmsg(s));
    return 1;
}

static double tt_lease_of(const tt_runner *r)
{
    return r->cfg.lease_seconds > 0 ? r->cfg.lease_seconds : 30;
}

static void tt_abstime(double secs, struct timespec *ts)
{
    clock_gettime(CLOCK_REALTIME, ts);
    double end = (double)ts->tv_sec + (double)ts->tv_nsec * 1e-9 + secs;
    ts->tv_sec = (time_t)end;
    ts->tv_nsec = (long)((end - (double)ts->tv_sec) * 1e9);
    if (ts->tv_nsec >= 1000000000L) ts->tv_nsec = 999999999L;
    if (ts->tv_nsec < 0) ts->tv_nsec = 0;
}

/* ---- heartbeat: keeps the worker's job leased, also in the middle of a trial ----------- */
static void *tt_heartbeat_main(void *arg)
{
    tt_worker *w = arg;
    tt_runner *r = w->r;
    double lease = tt_lease_of(r);
    tt_store *s = NULL;
    pthread_mutex_lock(&w->hb_mu);
    while (!w->hb_quit) {
        if (w->hb_job == 0) {
            pthread_cond_wait(&w->hb_cv, &w->hb_mu);
            continue;
        }
        uint64_t gen = w->hb_gen;
        struct timespec ts;
        tt_abstime(lease / 3, &ts);
        int timed_out = 0;
        while (!w->hb_quit && w->hb_gen == gen && !timed_out)
            timed_out = pthread_cond_timedwait(&w->hb_cv, &w->hb_mu, &ts) != 0;
        if (w->hb_quit || w->hb_gen != gen) continue;
        int64_t id = w->hb_job;
        w->hb_busy = 1;
        pthread_mutex_unlock(&w->hb_mu);
        tt_rc rc = TT_EDB;
        if (!s && tt_store_open(r->db_url, &s, NULL) != TT_OK) s = NULL;
        if (s) rc = tt_store_job_renew(s, id, w->owner, lease);
        /* its connection, idle between jobs, died with a database restart: the renewal
         * (an idempotent UPDATE) is made again at once on a new one, not a beat later */
        if (s && rc == TT_EDB && tt_store_conn_lost(s)) rc = tt_store_job_renew(s, id, w->owner, lease);
        const char *why = s ? tt_store_errmsg(s) : "cannot open the database";
        char msg[256];
        snprintf(msg, sizeof msg, "%s", why);
        int moved = s && rc != TT_OK && tt__runner_db_moved(r, s);
        if (s && rc != TT_OK && rc != TT_EEXISTS && rc != TT_ENOTFOUND && !moved) {
            tt_store_close(s);   /* reconnect at the next beat */
            s = NULL;
        }
        pthread_mutex_lock(&w->hb_mu);
        w->hb_busy = 0;
        if (w->hb_gen == gen && (rc == TT_EEXISTS || rc == TT_ENOTFOUND))
            atomic_store(&w->hb_lost, 1);
        pthread_cond_broadcast(&w->hb_cv);
        if (w->hb_gen == gen && rc != TT_OK && rc != TT_EEXISTS && rc != TT_ENOTFOUND) {
            pthread_mutex_unlock(&w->hb_mu);
            tt__rlog(r, TT_LOG_WARNING, "job %lld: %s cannot renew its lease: %s",
                    (long long)id, w->owner, msg);
            pthread_mutex_lock(&w->hb_mu);
        }
    }
    pthread_mutex_unlock(&w->hb_mu);
    tt_store_close(s);
    atomic_store(&w->hb_running, 0);
    return NULL;
}

/* The worker holds job id from now on (0: none).  Waits for a renewal in flight, so that
 * after tt_hb_hold(w, 0) the heartbeat touches the old job no more. */
static void tt_hb_hold(tt_worker *w, int64_t id)
{
    pthread_mutex_lock(&w->hb_mu);
    while (w->hb_busy) pthread_cond_wait(&w->hb_cv, &w->hb_mu);
    w->hb_job = id;
    w->hb_gen++;
    atomic_store(&w->hb_lost, 0);
    pthread_cond_broadcast(&w->hb_cv);
    pthread_mutex_unlock(&w->hb_mu);
}

/* Sleep up to secs, waking early when the runner stops. */
static void tt_runner_nap(tt_runner *r, double secs)
{
    struct timespec ts;
    tt_abstime(secs, &ts);
    pthread_mutex_lock(&r->mu);
    while (!atomic_load(&r->stop))
        if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) != 0) break;
    pthread_mutex_unlock(&r->mu);
}

/* ---- what a team worker can run -------------------------------------------------------
 * The fingerprints of the toolchains (fixed at start) and of the datasets in datasets_dir
 * now (a file added, replaced or removed counts at the next poll; each file is hashed once
 * per path, inode, size and mtime), as ",fp1,fp2,"; NULL when out of memory. */
static char *tt_claim_list(const tt_runner *r)
{
    char *ds = NULL;
    if (tt_backend_replay_fps(r->datasets_dir, &ds) != TT_OK) return NULL;
    size_t n = strlen(r->toolchain_list) + strlen(ds) + 1;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s%s", r->toolchain_list, ds + 1);
    free(ds);
    return out;
}

/* What this host has of the backend of job j, for the log: its fingerprint from fps, or
 * "no toolchain NAME" / "no dataset NAME in DIR". */
static void tt_host_has(const tt_runner *r, const tt_job *j, const char *fps, char *out,
                        size_t cap)
{
    int cmd = !strncmp(j->backend, "cmd:", 4);
    char key[sizeof j->backend + 2];
    snprintf(key, sizeof key, ",%s@", j->backend);
    const char *at = strstr(fps, key);
    if (at) {
        size_t len = strcspn(at + 1, ",");
        snprintf(out, cap, "has %.*s", (int)len, at + 1);
    } else if (cmd) {
        snprintf(out, cap, "has no toolchain '%s'", j->backend + 4);
    } else {
        snprintf(out, cap, "has no dataset '%s' in %s", j->backend + 7, r->datasets_dir);
    }
}

/* An idle worker of a team: log, once per job and process, each job it leaves queued for
 * another host (notice level), so that a job nobody can run does not wait in silence. */
static void tt_log_waiting(tt_runner *r, tt_store *s, const char *fps)
{
    for (;;) {
        int64_t after = atomic_load(&r->waiting_seen);
        tt_job j;
        if (tt_store_job_waiting(s, fps, after, &j) != TT_OK) return;
        /* another worker thread of this process may have logged it meanwhile */
        if (atomic_compare_exchange_strong(&r->waiting_seen, &after, j.id)) {
            char has[600];
            tt_host_has(r, &j, fps, has, sizeof has);
            tt__rlog(r, TT_LOG_NOTICE, "job %lld waits for a worker with %s: %s %s",
                     (long long)j.id, j.backend_fp, r->worker_name, has);
        }
        tt_job_clear(&j);
    }
}

/* ---- workers ------------------------------------------------------------------------ */
static void *tt_worker_main(void *arg)
{
    tt_worker *w = arg;
    tt_runner *r = w->r;
    double poll = r->cfg.poll_seconds > 0 ? r->cfg.poll_seconds : 0.5;
    double lease = tt_lease_of(r);
    tt_store *s = NULL;
    int open_failed = 0;
    while (!atomic_load(&r->stop)) {
        if (!s) {
            tt_errinfo e;
            tt_errinfo_clear(&e);
            if (tt_store_open(r->db_url, &s, &e) != TT_OK) {
                if (!open_failed++)
                    tt__rlog(r, TT_LOG_WARNING, "%s: cannot open the database: %s", w->owner,
                            e.msg);
                s = NULL;
                tt_runner_nap(r, poll);
                continue;
            }
            open_failed = 0;
        }
        tt_job job;
        memset(&job, 0, sizeof job);
        /* a team (PostgreSQL): a cmd: job only with its definition, a replay: job only with
         * its recording (tt_claim_list); a single host (SQLite) claims it anyway and fails it
         * naming both fingerprints */
        char *fps = NULL;
        if (tt_store_engine_of(s) == TT_STORE_POSTGRES && !(fps = tt_claim_list(r))) {
            tt_runner_nap(r, poll);   /* out of memory: claim nothing this time */
            continue;
        }
        tt_rc rc = tt_store_job_claim_for(s, w->owner, lease, fps, &job);
        if (rc == TT_ENOTFOUND && fps) tt_log_waiting(r, s, fps);
        free(fps);
        if ((rc == TT_OK || rc == TT_ENOTFOUND) && atomic_exchange(&r->db_moved, 0))
            tt__rlog(r, TT_LOG_NOTICE, "database: the file is back at its path; writes go "
                     "through again");
        if (rc == TT_OK) {
            tt_hb_hold(w, job.id);
            if (!job.claimed_running)
                tt__rlog(r, TT_LOG_INFO, "job %lld claimed by %s (new)", (long long)job.id,
                        w->owner);
            else if (!job.claimed_from[0])
                tt__rlog(r, TT_LOG_INFO, "job %lld claimed by %s (resumed, %lld trials done)",
                        (long long)job.id, w->owner, (long long)job.done);
            else
                tt__rlog(r, TT_LOG_INFO, "job %lld claimed by %s (lease of %s expired, %lld "
                        "trials done)", (long long)job.id, w->owner, job.claimed_from,
                        (long long)job.done);
            tt__job_run(w, s, &job);
            tt_hb_hold(w, 0);
            tt_job_clear(&job);
            continue;
        }
        if (rc != TT_ENOTFOUND && !tt__runner_db_moved(r, s)) {
            tt__rlog(r, TT_LOG_WARNING, "%s: cannot claim a job: %s", w->owner,
                    tt_store_errmsg(s));
            tt_store_close(s);   /* reconnect */
            s = NULL;
        }
        tt_job_clear(&job);
        tt_runner_nap(r, poll);
    }
    tt_store_close(s);
    atomic_store(&w->running, 0);
    return NULL;
}

static char *tt_dup(const char *s) { return s ? strdup(s) : NULL; }

/* The fingerprints of the configured toolchains as ",cmd:a@1234abcd,...," ("," for none):
 * a worker claims a cmd: job only when it has the definition the job was submitted with
 * (its backend_fp), so in a team whose hosts define different toolchains (A2 hosts, A3
 * hosts, an API host without an NPU) or a host whose definition drifted, each such job
 * goes to a host that can measure it under its key, instead of being failed or filed
 * under another key by the first one that polls.  NULL when out of memory. */
static char *tt_toolchain_list(const json_t *toolchains)
{
    size_t n = 2;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)toolchains, k, v) n += strlen(k) + 16;
    char *out = malloc(n);
    if (!out) return NULL;
    strcpy(out, ",");
    size_t len = 1;
    json_object_foreach((json_t *)toolchains, k, v) {
        char fp[128];
        if (tt_backend_cmd_fingerprint(k, v, fp, sizeof fp) != TT_OK) {
            free(out);
            return NULL;
        }
        len += (size_t)snprintf(out + len, n - len, "%s,", fp);
    }
    return out;
}

void tt__runner_default_work_dir(char *buf, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, cap, "%.480s/tiletune-work", tmp && *tmp ? tmp : "/tmp");
}

tt_rc tt_runner_check(const tt_runner_config *cfg, tt_errinfo *err)
{
    if (!cfg || json_object_size(cfg->toolchains) == 0) return TT_OK;
    char defwork[512];
    tt__runner_default_work_dir(defwork, sizeof defwork);
    return tt_backend_cmd_work_dir_check(cfg->work_dir ? cfg->work_dir : defwork, err);
}

tt_rc tt_runner_start(const tt_runner_config *cfg, tt_runner **out, tt_errinfo *err)
{
    *out = NULL;
    if (!cfg || !cfg->db_url || !cfg->catalog)
        return tt_errf(err, TT_EINVAL, "runner", "db_url and catalog are required");
    if (cfg->workers < 1 || cfg->workers > 1024)
        return tt_errf(err, TT_EINVAL, "workers", "workers must be in [1, 1024]");
    tt_runner *r = calloc(1, sizeof *r);
    if (!r) return tt_errf(err, TT_ENOMEM, "runner", "out of memory");
    r->cfg = *cfg;
    char host[64] = "localhost", defname[96];
    (void)gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    snprintf(defname, sizeof defname, "%s:%ld", host, (long)getpid());
    char defwork[512];
    tt__runner_default_work_dir(defwork, sizeof defwork);
    r->db_url = tt_dup(cfg->db_url);
    r->worker_name = tt_dup(cfg->worker_name && *cfg->worker_name ? cfg->worker_name : defname);
    r->datasets_dir = tt_dup(cfg->datasets_dir ? cfg->datasets_dir : TT_DEFAULT_DATASETS_DIR);
    r->work_dir = tt_dup(cfg->work_dir ? cfg->work_dir : defwork);
    r->toolchain_list = tt_toolchain_list(cfg->toolchains);
    r->w = calloc((size_t)cfg->workers, sizeof *r->w);
    if (!r->db_url || !r->worker_name || !r->datasets_dir || !r->work_dir ||
        !r->toolchain_list || !r->w) {
        tt_runner_stop(r);
        return tt_errf(err, TT_ENOMEM, "runner", "out of memory");
    }
    r->cfg.db_url = r->db_url;
    r->cfg.worker_name = r->worker_name;
    r->cfg.datasets_dir = r->datasets_dir;
    r->cfg.work_dir = r->work_dir;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->nw = cfg->workers;
    for (int i = 0; i < r->nw; i++) {
        tt_worker *w = &r->w[i];
        w->r = r;
        w->index = i;
        snprintf(w->owner, sizeof w->owner, "%.50s/w%d", r->worker_name, i);
        pthread_mutex_init(&w->hb_mu, NULL);
        pthread_cond_init(&w->hb_cv, NULL);
    }
    for (int i = 0; i < r->nw; i++) {
        tt_worker *w = &r->w[i];
        atomic_store(&w->hb_running, 1);
        if (pthread_create(&w->hb_th, NULL, tt_heartbeat_main, w) != 0) {
            atomic_store(&w->hb_running, 0);
            tt_runner_stop(r);
            return tt_errf(err, TT_ENOMEM, "runner", "cannot start heartbeat thread %d", i);
        }
        w->hb_started = 1;
        atomic_store(&w->running, 1);
        if (pthread_create(&w->th, NULL, tt_worker_main, w) != 0) {
            atomic_store(&w->running, 0);
            tt_runner_stop(r);
            return tt_errf(err, TT_ENOMEM, "runner", "cannot start worker thread %d", i);
        }
        w->started = 1;
    }
    *out = r;
    return TT_OK;
}

void tt_runner_stop(tt_runner *r)
{
    if (!r) return;
    if (r->w && r->nw > 0) {
        pthread_mutex_lock(&r->mu);
        atomic_store(&r->stop, 1);
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        for (int i = 0; i < r->nw; i++)
            if (r->w[i].started) pthread_join(r->w[i].th, NULL);
        for (int i = 0; i < r->nw; i++) {
            tt_worker *w = &r->w[i];
            pthread_mutex_lock(&w->hb_mu);
            w->hb_quit = 1;
            pthread_cond_broadcast(&w->hb_cv);
            pthread_mutex_unlock(&w->hb_mu);
            if (w->hb_started) pthread_join(w->hb_th, NULL);
            pthread_cond_destroy(&w->hb_cv);
            pthread_mutex_destroy(&w->hb_mu);
        }
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
    }
    free(r->w);
    free(r->db_url);
    free(r->worker_name);
    free(r->datasets_dir);
    free(r->work_dir);
    free(r->toolchain_list);
    free(r);
}

int tt_runner_alive(const tt_runner *r)
{
    if (!r) return 1;
    for (int i = 0; i < r->nw; i++) {
        tt_worker *w = &r->w[i];
        if (!atomic_load(&w->running) || !atomic_load(&w->hb_running)) return 0;
    }
    return 1;
}

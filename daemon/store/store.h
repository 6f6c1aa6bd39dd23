/* SPDX-License-Identifier: MIT
 * store.h - the database behind tiletune: one interface, two engines.
 *
 *   SQLite (default, embedded, one file, WAL):   "sqlite:/path/tt.db", or a plain path
 *   PostgreSQL (shared by many worker hosts):    "postgresql://user@host:port/db" / "postgres://"
 *
 * The schema lives in schema/{sqlite,postgres}/NNN_*.sql; migrations are applied at open,
 * in order, each in a transaction, and recorded in schema_migrations.
 * Tables: templates, jobs, trials, job_trials, best, calibrations, tokens, baselines,
 * check_history.
 *
 * A measurement is keyed by (template hash, problem key, target, backend fingerprint,
 * config hash): a config measured under the same key is reused, not measured again.
 * Trials are committed one by one, or many in one transaction inside a batch (group commit,
 * tt_store_batch_begin); `best` is updated in the same transaction as the trial that beats
 * it.  A job's state lives only here, so a restarted daemon resumes it.
 *
 * URLs: "sqlite:PATH[?synchronous=normal|full]" (also "sqlite:///abs/path" or a bare path;
 * WAL, NORMAL by default: committed trials survive kill -9, see schema/README.md), and any
 * libpq URL "postgresql://..." / "postgres://...".  Any other "scheme://" is TT_EDB.
 * Clock: unix seconds as double; PostgreSQL takes it from the server (tt_now() in SQL), so
 * leases agree across worker hosts.  Errors: engine failures are TT_EDB (unique violations
 * TT_EEXISTS) with the engine's text in tt_store_errmsg(); absent rows TT_ENOTFOUND; bad
 * arguments TT_EINVAL.  Implementation: store.c (queries, written once for both engines),
 * store_trials.c, store_sqlite.c, store_pg.c, behind the vtable of store_internal.h.
 *
 * Thread-safety: a tt_store is one database connection guarded by an internal mutex, so it
 * may be shared, but calls are serialised; open one store per worker thread for
 * parallelism.  Ownership: structs filled by the store own their heap fields; release them
 * with the matching *_clear() (NULL accepted).  Strings passed in are borrowed.
 */
#ifndef TT_STORE_H
#define TT_STORE_H

#include <stdint.h>

#include "tt_err.h"

typedef struct tt_store tt_store;

typedef enum tt_store_engine { TT_STORE_SQLITE, TT_STORE_POSTGRES } tt_store_engine;

/* Open (creating the database file if needed) and migrate.  TT_EDB with err->msg from the
 * engine on failure; *out is NULL then. */
tt_rc tt_store_open(const char *url, tt_store **out, tt_errinfo *err);
void tt_store_close(tt_store *s);
tt_store_engine tt_store_engine_of(const tt_store *s);
/* Schema version (highest migration applied). */
int tt_store_schema_version(tt_store *s);
/* Cheap liveness check (SELECT 1); on SQLite also whether the database file is still the
 * one opened (one stat(2)): TT_EDB with "the database file PATH was deleted or moved ..."
 * in tt_store_errmsg() and tt_store_moved() set when it was deleted, renamed or replaced. */
tt_rc tt_store_ping(tt_store *s);
/* Last engine error text (borrowed, valid until the next call on s). */
const char *tt_store_errmsg(const tt_store *s);
/* 1 when the last failure on s (TT_EDB) came from a lost server connection (PostgreSQL: the
 * server restarted or ended the session, the network broke, it could not be reached again):
 * nothing is wrong with the request, and the next call reconnects.  0 otherwise (SQLite). */
int tt_store_conn_lost(const tt_store *s);
/* 1 when the last failure on s (TT_EDB) is that its SQLite database file was deleted,
 * renamed or replaced while open (rm, mv, a log rotation): the connection still reads the
 * unlinked file, whose writes would vanish with it, so every commit on s is refused from
 * then on (rolled back, TT_EDB "the database file PATH was deleted or moved ...") until the
 * file is back at its path.  Do not reopen: that would create a new, empty database there.
 * 0 otherwise (PostgreSQL). */
int tt_store_moved(const tt_store *s);

/* ---- batches (group commit) --------------------------------------------------------- */
/* Group the following calls of this thread on s into ONE transaction, committed by
 * tt_store_batch_commit() (or dropped by tt_store_batch_rollback()): many trials of a cheap
 * backend for the cost of one commit, or a whole import that is all or nothing.  While the
 * batch is open the store's mutex stays held by its thread, so other threads' calls on s wait
 * (open a second store for them).  Calls that are a transaction of their own
 * (tt_store_trial_append, tt_store_job_create_capped, tt_store_baseline_put) run as a
 * savepoint inside the batch: a failed one undoes only itself.  tt_store_trial_record of a
 * job inside a batch is the group-commit fast path: it writes the measurement and its
 * job_trials row only (no savepoint: a failure can leave the measurement row without its
 * link, a valid measurement under its key that later trials reuse); the job's done counter
 * and best-so-far and the `best` row are written once, from the batch's fastest trial, at
 * the commit -- or earlier, before any other call on s (tt__store_lock), so that every
 * reader, the batch's own thread included, sees them as if each trial had written them.
 * Nothing of a batch is visible to other connections, or survives a crash, before
 * the commit.  TT_EINVAL when a batch is already open; engine errors as usual (then no batch
 * is open).  tt_store_batch_commit() ends the batch also when the commit fails (its writes
 * are then lost: TT_EDB and the engine's text); TT_EINVAL when no batch is open. */
tt_rc tt_store_batch_begin(tt_store *s);
tt_rc tt_store_batch_commit(tt_store *s);
void tt_store_batch_rollback(tt_store *s);   /* no-op without an open batch; NULL accepted */
int tt_store_in_batch(const tt_store *s);    /* 1 between begin and commit/rollback */
/* Asynchronous commit for this connection (on = 1) or back to the default (0).  PostgreSQL:
 * `SET synchronous_commit = off` -- a COMMIT returns without waiting for the WAL flush; a
 * crash of the database server can lose the last commits (at most ~3 x wal_writer_delay),
 * always a consistent prefix, never a torn transaction; a crash of the client loses nothing
 * committed.  The runner uses it for cheap-backend trials on PostgreSQL instead of batches
 * (runner.c "group commit").  A reconnect (tt_store reconnects a lost PostgreSQL session)
 * drops the setting: commits are then synchronous again.  SQLite: no-op (TT_OK). */
tt_rc tt_store_async_commit(tt_store *s, int on);

/* ---- templates ---------------------------------------------------------------------- */
/* Store a template document (canonical JSON text).  Idempotent on (name, hash). */
tt_rc tt_store_template_put(tt_store *s, const char *name, const char *hash,
                            const char *version, const char *doc_json);
/* Same, on behalf of the token `owner` ("" for an open daemon): the name's owner is the
 * token that stored its first version; another token may store a version only when admin,
 * else TT_EFORBIDDEN and nothing is stored.  Versions stored before schema 003 (and built-ins
 * synced by tt_store_template_put) are owned by "".  Check and insert are one transaction
 * (PostgreSQL: under a per-name advisory lock). */
tt_rc tt_store_template_put_owned(tt_store *s, const char *name, const char *hash,
                                  const char *version, const char *doc_json, const char *owner,
                                  int admin);
/* Latest document for name (hash NULL) or the exact (name, hash).  *doc_json is malloc'd,
 * caller frees.  TT_ENOTFOUND if absent. */
tt_rc tt_store_template_get(tt_store *s, const char *name, const char *hash, char **doc_json,
                            char hash_out[17]);
/* JSON array text of {"name","hash","version","updated_at"} (latest per name), caller frees. */
tt_rc tt_store_template_list(tt_store *s, char **json_array);

/* ---- jobs --------------------------------------------------------------------------- */
typedef enum tt_job_state {
    TT_JOB_QUEUED, TT_JOB_RUNNING, TT_JOB_DONE, TT_JOB_FAILED, TT_JOB_CANCELLED,
    TT_JOB__COUNT
} tt_job_state;
const char *tt_job_state_name(tt_job_state s);   /* "queued", "running", ... */
int tt_job_state_parse(const char *name);          /* -1 if unknown */

typedef struct tt_job {
    int64_t id;
    char template_name[64];
    char template_hash[17];
    char target[64];
    char backend[128];        /* "model", "sim", "replay:<dataset>", "cmd:<toolchain>" */
    char backend_fp[80];      /* backend + fingerprint (toolchain hash, dataset hash, ...) */
    char strategy[32];
    char *problem_key;        /* canonical "M=4096,N=4096,..." */
    char *problem_json;       /* {"M":4096,...} */
    char *options_json;       /* strategy options, e.g. {"topk":16}; may be NULL */
    int64_t budget_trials;    /* 0: strategy default */
    double budget_seconds;    /* 0: none */
    int64_t seed;
    tt_job_state state;
    int64_t planned;          /* trials planned (budget or space, whichever is smaller) */
    int64_t done;             /* trials finished, reused ones included */
    int64_t best_trial;       /* trial id or 0 */
    double best_us;           /* 0 when none */
    double best_pred_us;      /* model prediction for the best config, 0 when none */
    char *best_config_json;   /* may be NULL */
    char *error;              /* failure reason, may be NULL */
    char owner[64];           /* token name that submitted it ("" when open) */
    char lease_owner[64];     /* worker holding it while running ("" when none) */
    double lease_expires;     /* unix seconds */
    double created_at, started_at, finished_at;   /* unix seconds, 0 when not yet */
    /* How the job was last claimed (schema 002): 0 when it was queued; 1 when it was already
     * running: claimed_from is then "" (a lease released at a restart: a resume) or the
     * worker whose lease had expired (a takeover).  Ignored by tt_store_job_create*(). */
    int claimed_running;
    char claimed_from[64];
} tt_job;
void tt_job_clear(tt_job *j);

/* Insert a new queued job (id, state, timestamps and counters are set by the store).
 * Sets j->id. */
tt_rc tt_store_job_create(tt_store *s, tt_job *j);
/* tt_store_job_create, refused atomically with TT_ELIMIT (nothing inserted) when j->owner
 * already has max_active or more queued or running jobs: the count and the insert are one
 * transaction (SQLite: the write lock; PostgreSQL: a per-owner advisory lock), so concurrent
 * submissions can never exceed the limit.  *active (may be NULL) is the count seen.
 * max_active <= 0: no limit. */
tt_rc tt_store_job_create_capped(tt_store *s, tt_job *j, int64_t max_active, int64_t *active);
/* Insert a new job already `running` and leased to `owner` for lease_seconds (one statement),
 * so that no worker ever claims it: for work the caller does itself (POST /v1/import), which
 * then ends it with tt_store_job_finish(owner) (or keeps it with tt_store_job_renew()).
 * Sets j->id, state, lease_owner, lease_expires and the timestamps.  TT_EINVAL when owner is
 * empty or lease_seconds <= 0. */
tt_rc tt_store_job_create_running(tt_store *s, tt_job *j, const char *owner,
                                  double lease_seconds);
tt_rc tt_store_job_get(tt_store *s, int64_t id, tt_job *out);

typedef struct tt_job_filter {
    int state;                /* -1: any */
    const char *template_name;/* NULL: any */
    const char *target;       /* NULL: any */
    const char *owner;        /* NULL: any */
    int64_t limit, offset;    /* limit 0: 100 */
} tt_job_filter;
/* Newest first.  *jobs is a malloc'd array of *n jobs; free each with tt_job_clear() and
 * the array with free(). */
tt_rc tt_store_job_list(tt_store *s, const tt_job_filter *f, tt_job **jobs, size_t *n);
/* Count jobs per state (counts[TT_JOB__COUNT]); owner NULL for all owners. */
tt_rc tt_store_job_counts(tt_store *s, const char *owner, int64_t counts[TT_JOB__COUNT]);

/* Claim one job for worker `owner`: the oldest queued job, or a running job whose lease has
 * expired (a dead worker's) -- never an import (strategy "import": work of the API), atomically (SQLite: BEGIN IMMEDIATE; PostgreSQL: FOR UPDATE
 * SKIP LOCKED).  It becomes running with lease_expires = now + lease_seconds.
 * TT_ENOTFOUND when there is nothing to do. */
tt_rc tt_store_job_claim(tt_store *s, const char *owner, double lease_seconds, tt_job *out);
/* The same, for a worker that can run only the cmd: toolchains and replay: datasets whose
 * fingerprints (a job's backend_fp, "cmd:<name>@<8 hex>", "replay:<name>@<8 hex>") are
 * listed in `fps`, written ",fp1,fp2," ("," when it has none): a cmd: or replay: job is
 * claimed only when its backend_fp is listed, i.e. by a worker with the very definition or
 * recording it was submitted for; other backends as before.  NULL: any job. */
tt_rc tt_store_job_claim_for(tt_store *s, const char *owner, double lease_seconds,
                             const char *fps, tt_job *out);
/* The oldest job with an id above `after` that tt_store_job_claim_for(.., fps, ..) leaves to
 * other workers (a queued or lease-expired cmd: or replay: job whose backend_fp is not in
 * fps), into *out (tt_job_clear() it); TT_ENOTFOUND when there is none. */
tt_rc tt_store_job_waiting(tt_store *s, const char *fps, int64_t after, tt_job *out);
/* Extend the lease; TT_EEXISTS when the job is no longer held by owner (cancelled, or
 * claimed by another worker after expiry): the worker must stop working on it. */
tt_rc tt_store_job_renew(tt_store *s, int64_t id, const char *owner, double lease_seconds);
/* Record progress (planned and done counters). */
tt_rc tt_store_job_progress(tt_store *s, int64_t id, int64_t planned, int64_t done);
/* Finish: state must be DONE, FAILED; only from RUNNING held by owner (TT_EEXISTS else). */
tt_rc tt_store_job_finish(tt_store *s, int64_t id, const char *owner, tt_job_state state,
                          const char *error);
/* Cancel from QUEUED or RUNNING.  TT_ENOTFOUND, or TT_EEXISTS when already finished. */
tt_rc tt_store_job_cancel(tt_store *s, int64_t id);
/* On daemon start (SQLite, single host): release leases of running jobs so they resume. */
tt_rc tt_store_job_release_all(tt_store *s);
/* Release the lease of running job id held by owner, so that the next claim (of any worker)
 * resumes it at once.  TT_ENOTFOUND, or TT_EEXISTS when it is not running under owner. */
tt_rc tt_store_job_release(tt_store *s, int64_t id, const char *owner);

/* ---- trials ------------------------------------------------------------------------- */
/* The measurement key shared by jobs. */
typedef struct tt_trial_key {
    const char *template_hash;
    const char *problem_key;
    const char *target;
    const char *backend_fp;
} tt_trial_key;

typedef struct tt_trial {
    int64_t id;
    int64_t job_id;           /* job that measured it first */
    int64_t seq;              /* position in the job that lists it (job_trials) */
    char *config_key;         /* "block_M=128,block_N=256,..." */
    uint64_t config_hash;
    char *config_json;
    tt_rc status;             /* TT_OK or the failure class (TT_EBUILD, TT_EINFEASIBLE, ...) */
    char *error;              /* failure detail, may be NULL */
    double median_us;         /* 0 when failed */
    double spread_us;         /* inter-quartile range of the samples */
    double min_us;
    char *samples_json;       /* [..] microseconds, may be NULL */
    /* Writing only (record): when samples_json is NULL, the samples as numbers, borrowed for
     * the call (the store keeps them compactly, schema 005; reads give their samples_json,
     * tt_json_reals' text of them).  Reads leave them NULL / 0. */
    const double *samples_us;
    size_t nsamples;
    double predicted_us;      /* model prediction at the time (0 when none) */
    double compile_s, measure_s;
    int reused;               /* 1 when taken from an earlier measurement */
    double created_at;
    char measured_by[64];     /* worker (lease owner name) that measured it; "" when unknown
                                 (imported, or recorded before schema 002) */
} tt_trial;
void tt_trial_clear(tt_trial *t);

/* Find a measurement under key for this config hash.  TT_ENOTFOUND if none. */
tt_rc tt_store_trial_lookup(tt_store *s, const tt_trial_key *k, uint64_t config_hash,
                            tt_trial *out);
/* Record a trial for job at position seq, in one transaction:
 *   - insert the measurement under key (or reuse the existing one for the same config hash),
 *   - link it to the job (job_trials (job_id, seq); idempotent on (job_id, seq)),
 *   - bump the job's done counter and best-so-far,
 *   - update `best` for (template name, template hash, problem key, target, backend_fp)
 *     when it succeeded and beats the stored one.
 * Sets t->id (and t->reused when the measurement existed).
 * When the measurement existed (or seq was already recorded: a resumed job), t's heap
 * fields are released with tt_trial_clear() and t is filled from the stored measurement,
 * so they must be malloc'd (or NULL), not borrowed.  TT_ENOTFOUND if job_id > 0 names no
 * job; job_id 0 records a measurement outside any job (no job_trials row). */
tt_rc tt_store_trial_record(tt_store *s, const tt_trial_key *k, const char *template_name,
                            int64_t job_id, int64_t seq, tt_trial *t);
/* Re-measurement of a noisy backend (docs/strategies.md "Re-measuring the top"): append
 * samples (nsamples > 0, each > 0) to the successful measurement trial_id under key k, for
 * job_id, in one transaction:
 *   - merge them into its samples_json and recompute median_us, spread_us (inter-quartile
 *     range) and min_us with the quantile rule of tt_measurement_summarise (backend.c),
 *   - mark the re-measurement done for (job, trial): trial_id is appended to the array
 *     "remeasured" of the job's options_json,
 *   - recompute `best` for (template_name, k) and the job's best-so-far from the stored
 *     trials (a re-measured best that got slower may lose its place).
 * TT_EEXISTS (nothing changed) when job_id already re-measured trial_id -- a job resumed
 * after a crash appends once; TT_ENOTFOUND when the job, or the trial under k, is absent;
 * TT_EINVAL when the trial failed or an argument is bad.  out (may be NULL) is filled with
 * the updated measurement on TT_OK; release it with tt_trial_clear(). */
tt_rc tt_store_trial_append(tt_store *s, const tt_trial_key *k, const char *template_name,
                            int64_t job_id, int64_t trial_id, const double *samples,
                            size_t nsamples, tt_trial *out);
/* Trial ids job_id has re-measured (its options' "remeasured"), in order: *ids malloc'd
 * (caller frees; NULL when *n is 0).  TT_ENOTFOUND if there is no such job. */
tt_rc tt_store_job_remeasured(tt_store *s, int64_t job_id, int64_t **ids, size_t *n);
/* Set a job's best to trial_id with value_us (the job's objective when it is not the median:
 * docs/strategies.md "Objective"), its prediction and config.  TT_ENOTFOUND: no such job. */
tt_rc tt_store_job_best_set(tt_store *s, int64_t job_id, int64_t trial_id, double value_us,
                            double pred_us, const char *config_json);
/* Trials of a job in seq order, paginated.  *trials malloc'd array of *n; *total the count. */
tt_rc tt_store_trial_list(tt_store *s, int64_t job_id, int64_t offset, int64_t limit,
                          tt_trial **trials, size_t *n, int64_t *total);
/* Count trials by backend and status, as a JSON object text
 * {"sim":{"ok":12,"infeasible":3},...}; caller frees. */
tt_rc tt_store_trial_stats(tt_store *s, char **json);

/* ---- best --------------------------------------------------------------------------- */
typedef struct tt_best {
    char template_name[64];
    char template_hash[17];
    char target[64];
    char backend_fp[80];
    char *problem_key;
    char *problem_json;
    char *config_json;
    int64_t trial_id;
    int64_t job_id;
    double median_us, spread_us, predicted_us;
    double updated_at;
} tt_best;
void tt_best_clear(tt_best *b);

typedef struct tt_best_query {
    const char *template_name;  /* required */
    const char *target;         /* required (canonical target name) */
    const char *problem_key;    /* NULL: all problems */
    const char *backend_fp;     /* NULL: any backend (the fastest wins) */
    const char *template_hash;  /* NULL: any version */
} tt_best_query;
/* Exact problem: the single fastest row (TT_ENOTFOUND if none). */
tt_rc tt_store_best_get(tt_store *s, const tt_best_query *q, tt_best *out);
/* Every row matching (problem_key NULL) -- for nearest-shape lookups and exports. */
tt_rc tt_store_best_list(tt_store *s, const tt_best_query *q, tt_best **rows, size_t *n);

/* Validity stamp of the `best` rows as seen through s (SQLite only), for read-through caches
 * of tt_store_best_get (daemon/api/bestcache.h).  Take the stamp BEFORE reading; a cached answer
 * read after stamp A is still current while a new stamp equals A: gen changes after every
 * trial record committed by any store of this process and when a store closes (an atomic
 * load, no lock); data_version (SQLite's PRAGMA data_version on s's connection) changes after
 * any commit to the file by another connection, of this process or another one (`tiletuned
 * worker`, a second daemon).  The PRAGMA is a read transaction under the store mutex, so it
 * runs at most once per refresh interval (TT_STORE_STAMP_REFRESH_MS, tt_store_set_stamp_refresh)
 * and stamps in between reuse its value.  Staleness bound: writes through this process are
 * seen at once (gen); a commit by ANOTHER process that finished more than the refresh
 * interval before the stamp is taken is always seen, a younger one may not be yet.
 * TT_EUNSUPPORTED on PostgreSQL: other hosts write, so nothing may be cached.
 * Thread-safe like every store call; only a refresh takes the store mutex. */
#define TT_STORE_STAMP_REFRESH_MS 2
typedef struct tt_store_stamp {
    uint64_t gen;
    int64_t data_version;
} tt_store_stamp;
tt_rc tt_store_best_stamp(tt_store *s, tt_store_stamp *out);
/* How long tt_store_best_stamp may reuse a data_version read (0: read it on every call). */
void tt_store_set_stamp_refresh(tt_store *s, unsigned ms);

/* ---- calibrations ------------------------------------------------------------------- */
/* The fitted tt_calib of costmodel/model.h, stored as JSON text per (target, backend_fp). */
tt_rc tt_store_calib_put(tt_store *s, const char *target, const char *backend_fp,
                         const char *calib_json, int npoints, double error);
tt_rc tt_store_calib_get(tt_store *s, const char *target, const char *backend_fp,
                         char **calib_json);

/* ---- tokens ------------------------------------------------------------------------- */
/* Tokens are stored as SHA-256 hex of the secret; scopes is a comma list
 * ("read,tune,admin").  Upsert by name; a row holding the same secret under another name
 * (a token renamed in the config) is replaced. */
tt_rc tt_store_token_put(tt_store *s, const char *name, const char *sha256_hex,
                         const char *scopes);
/* Find by hash; name/scopes copied into the caller's buffers.  TT_ENOTFOUND if absent. */
tt_rc tt_store_token_find(tt_store *s, const char *sha256_hex, char name[64],
                          char scopes[64]);

/* ---- baselines (CI regression checks) ---------------------------------------------- */
/* A named, pinned copy of best rows, so that a later tune does not silently move what a CI
 * job compares against.  Keyed by (name, template_name, problem_key, target, backend_fp). */
typedef struct tt_baseline {
    char name[64];
    char template_name[64];
    char template_hash[17];
    char target[64];
    char backend_fp[80];
    char *problem_key;
    char *problem_json;       /* may be NULL */
    char *config_json;
    int64_t trial_id;
    double median_us, spread_us;
    double created_at;
} tt_baseline;
void tt_baseline_clear(tt_baseline *b);

/* Pin under `name` the current best rows matching q (template_name and target required;
 * problem_key / backend_fp / template_hash NULL: all), replacing what `name` pinned for
 * those keys before.  When several template hashes match one key the fastest is pinned.
 * *npinned (may be NULL) is the number of rows pinned; TT_ENOTFOUND when no best row matches
 * (nothing is changed then). */
tt_rc tt_store_baseline_put(tt_store *s, const char *name, const tt_best_query *q,
                            size_t *npinned);
/* The pinned row for (name, template, problem, target[, backend_fp]): backend_fp NULL takes
 * the fastest of any backend.  TT_ENOTFOUND if absent. */
tt_rc tt_store_baseline_get(tt_store *s, const char *name, const char *template_name,
                            const char *problem_key, const char *target,
                            const char *backend_fp, tt_baseline *out);
/* Every row pinned under name, ordered by template, target, problem, backend.  *rows is a
 * malloc'd array of *n; free each with tt_baseline_clear() and the array with free(). */
tt_rc tt_store_baseline_list(tt_store *s, const char *name, tt_baseline **rows, size_t *n);


/* ---- check history (CI verdicts over time) ------------------------------------------ */
/* One verdict of POST /v1/check, kept so that people can see a shape's history. */
typedef struct tt_check_rec {
    int64_t id;
    double created_at;
    char template_name[64];
    char target[64];
    char verdict[16];          /* pass, regressed, improved, missing, error */
    char token_name[64];       /* who asked ("" anonymous) */
    char *problem_key;
    char *entry_json;          /* the verdict entry as the API answered it */
} tt_check_rec;
void tt_check_rec_clear(tt_check_rec *c);
/* Append one verdict (strings borrowed; entry_json is the answer's entry as text). */
tt_rc tt_store_check_add(tt_store *s, const char *template_name, const char *target,
                         const char *problem_key, const char *verdict, const char *token_name,
                         const char *entry_json);
/* The newest `limit` verdicts of a template on a target (problem_key NULL: every shape),
 * newest first.  *rows is a malloc'd array of *n; free each with tt_check_rec_clear() and the
 * array with free(). */
tt_rc tt_store_check_list(tt_store *s, const char *template_name, const char *target,
                          const char *problem_key, int64_t limit, tt_check_rec **rows,
                          size_t *n);

#endif

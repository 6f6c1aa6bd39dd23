/* SPDX-License-Identifier: MIT
 * store_internal.h - the engine vtable behind tt_store: the few primitives an engine
 * provides (connect, transactions, parameterised queries, row access), shared by store.c.
 *
 * store.c holds every query of the store, written once in the SQL dialect common to SQLite
 * and PostgreSQL: parameters are $1..$n (SQLite accepts them as named parameters), the
 * clock is tt_now() (SQLite: a registered function; PostgreSQL: a schema function), upserts
 * are INSERT .. ON CONFLICT.  Where the dialects differ (job claim) store.c picks the
 * engine's variant.  An engine caches the prepared statement of each query id per
 * connection (SQLite: sqlite3_stmt; PostgreSQL: PQprepare'd "tt_qN").
 *
 * Thread-safety: none here; store.c serialises every call on a store with its mutex.
 * Ownership: a tt__res borrows the connection until tt__engine.finish().
 */
#ifndef TT_STORE_INTERNAL_H
#define TT_STORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* An embedded migration: name "001_init" (version = leading number) and its SQL script. */
typedef struct tt__migration {
    const char *name;
    const char *sql;
} tt__migration;
/* Generated at build time from schema/{sqlite,postgres}/NNN_*.sql; terminated by {0, 0}. */
extern const tt__migration tt__store_migrations_sqlite[];
extern const tt__migration tt__store_migrations_postgres[];

/* A bound query parameter.  Kinds are fixed per query id (PostgreSQL prepares with them);
 * a NULL text is still of kind TEXT. */
/* TT__P_TEXTK: text that stays valid until the query's finish(), so SQLite binds it without
 * copying (the trial insert's kilobyte of text); PostgreSQL treats it as TT__P_TEXT. */
typedef enum tt__pkind { TT__P_TEXT, TT__P_I64, TT__P_F64, TT__P_TEXTK } tt__pkind;
typedef struct tt__param {
    tt__pkind kind;
    const char *s;   /* TEXT; NULL binds SQL NULL */
    int64_t i;
    double d;
} tt__param;

/* A running query: rows are read with the engine's accessors between step() == 1 calls. */
typedef struct tt__res {
    tt_store *s;
    void *h;          /* sqlite3_stmt * / PGresult * */
    int row, nrows;   /* PostgreSQL: current row index and row count */
    int owned;        /* SQLite: an uncached statement to finalize */
    int64_t changes;  /* rows changed, valid once step() returned 0 */
    int64_t last_id;  /* SQLite: rowid of the last row inserted, valid with changes */
} tt__res;

typedef struct tt__engine {
    const char *name;
    /* Connect (conninfo: a file path for SQLite, a libpq URL for PostgreSQL);
     * opts is the URL's query string for SQLite ("synchronous=full"), may be NULL. */
    tt_rc (*open)(tt_store *s, const char *conninfo, const char *opts);
    void (*close)(tt_store *s);
    /* Run a parameterless multi-statement script (migrations). */
    tt_rc (*exec_script)(tt_store *s, const char *sql);
    /* Write transaction (SQLite: BEGIN IMMEDIATE, so that it never has to upgrade a read
     * lock and deadlock; PostgreSQL: BEGIN, READ COMMITTED). */
    tt_rc (*begin)(tt_store *s);
    tt_rc (*commit)(tt_store *s);
    void (*rollback)(tt_store *s);
    /* Inside the migration transaction: serialise concurrent migrators. */
    tt_rc (*migrate_lock)(tt_store *s);
    /* Start query `id` (0 <= id < TT__Q_MAX: cached; -1: one-shot).  On error the result
     * needs no finish(). */
    tt_rc (*query)(tt_store *s, int id, const char *sql, const tt__param *p, int np,
                   tt__res *r);
    /* Next row: 1 row available, 0 done (r->changes set), -1 error (tt_store_errmsg). */
    int (*step)(tt__res *r);
    int (*isnull)(tt__res *r, int col);
    const char *(*text)(tt__res *r, int col);   /* NULL for SQL NULL; borrowed */
    int64_t (*i64)(tt__res *r, int col);
    double (*f64)(tt__res *r, int col);
    void (*finish)(tt__res *r);
    /* Drop the connection's cached statements (after a reconnect / schema change). */
    void (*forget)(tt_store *s);
    /* TT_OK while the database is still the one opened; TT_EDB with err_moved set when it
     * is not (SQLite: its file was deleted, renamed or replaced since the open).  NULL:
     * nothing to check (PostgreSQL). */
    tt_rc (*check)(tt_store *s);
} tt__engine;

#define TT__Q_MAX 96
#define TT__PMAP 32

struct tt_store {
    const tt__engine *eng;
    tt_store_engine engine;
    pthread_mutex_t mu;
    int schema_version;
    int in_tx;                 /* inside begin()..commit()/rollback() */
    int batch;                 /* inside tt_store_batch_begin()..commit/rollback: the mutex
                                  (recursive) stays held by the batch's thread */
    void *conn;                /* sqlite3 * / PGconn * */
    void *cache[TT__Q_MAX];    /* SQLite: sqlite3_stmt *; PostgreSQL: non-NULL once prepared */
    struct tt__pend *pend;     /* a batch's deferred job and best updates (store_trials.c) */
    /* The trial_keys id of the last measurement key recorded (store_trials.c, schema 006):
     * kid_text holds its four texts, each '\0'-terminated, back to back (NULL: none).  An id
     * this connection inserted is gone again after a rollback: every rollback forgets it
     * (tt__store_key_forget). */
    char *kid_text;
    int64_t kid;
    /* SQLite: the bind index of $1..$TT__PMAP in each cached statement (0: not used),
     * filled at its prepare, so that binding needs no name lookup */
    unsigned char pmap[TT__Q_MAX][TT__PMAP];
    tt_rc err_rc;              /* code of the last failure */
    int err_lost;              /* the last failure lost the server connection (PostgreSQL):
                                  set by the engine after tt__store_fail, which clears it, as
                                  does a successful reconnect */
    int err_moved;             /* the last failure (TT_EDB) was a write refused because the
                                  database file was deleted or moved (SQLite): set by the
                                  engine after tt__store_fail, which clears it */
    char errmsg[512];
    /* tt_store_best_stamp's last PRAGMA data_version (SQLite): written under mu, read
     * without it (a sequence lock: dv_seq is odd while a writer fills the pair). */
    _Atomic uint64_t dv_seq;
    _Atomic int64_t dv_value;
    _Atomic int64_t dv_at_ns;      /* CLOCK_MONOTONIC before that PRAGMA ran; 0: never */
    _Atomic int64_t dv_refresh_ns; /* reuse it for this long (tt_store_set_stamp_refresh) */
};

extern const tt__engine tt__engine_sqlite;
extern const tt__engine tt__engine_postgres;

/* Record an engine error on s: sets s->errmsg and returns rc. */
/* The write generation behind tt_store_best_stamp (owned by store.c): bumped after every
 * commit that may have changed a `best` row through this process, and when a store closes
 * (so that a new store at the same address starts with a new stamp). */
void tt__store_best_touch(void);
uint64_t tt__store_best_gen(void);
tt_rc tt__store_fail(tt_store *s, tt_rc rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Unix time in seconds (CLOCK_REALTIME). */
double tt__store_now(void);

/* ---- helpers shared by store.c and store_trials.c ----------------------------------- */
/* Query ids (cache slots): store.c uses 0.., store_jobs.c TT__Q_STORE_JOBS.., store_trials.c
 * TT__Q_STORE_TRIALS.., store_remeasure.c TT__Q_STORE_REMEASURE.., store_best.c
 * TT__Q_STORE_BEST.., store_meta.c TT__Q_STORE_META.., store_checks.c TT__Q_STORE_CHECKS.. */
/* One entry of a store file's query table `tt_q[]`: its SQL, and the PostgreSQL text when it
 * differs (NULL: the same). */
typedef struct tt__qdef {
    const char *sql;
    const char *pg;
} tt__qdef;
#define TT__Q_STORE_JOBS 8
#define TT__Q_STORE_TRIALS 24
#define TT__Q_STORE_REMEASURE 42
#define TT__Q_STORE_BEST 56
#define TT__Q_STORE_META 64
#define TT__Q_STORE_CHECKS 88

#define TT__PT(x) {TT__P_TEXT, (x), 0, 0.0}
#define TT__PTK(x) {TT__P_TEXTK, (x), 0, 0.0}
#define TT__PI(x) {TT__P_I64, NULL, (x), 0.0}
#define TT__PF(x) {TT__P_F64, NULL, 0, (x)}
#define TT__NP(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* Column accessors of the current row. */
#define TT__CT(r, i) ((r)->s->eng->text((r), (i)))
#define TT__CI(r, i) ((r)->s->eng->i64((r), (i)))
#define TT__CF(r, i) ((r)->s->eng->f64((r), (i)))

/* Lock s.  Inside a batch, first write the deferred updates of the batch's trial records
 * (tt__store_pend_flush), so that every other call sees the job and `best` as if each trial
 * had updated them itself. */
void tt__store_lock(tt_store *s);
/* Lock s without that (tt_store_trial_record and tt_store_trial_lookup: they read and write
 * only what the deferral keeps consistent). */
void tt__store_lock_raw(tt_store *s);
/* store_trials.c: write the batch's deferred updates now (done counter, best-so-far, `best`;
 * a no-op without any), or drop them (batch rollback, close).  A failure is remembered and
 * returned again by every later flush until the drop, so the batch's commit reports it. */
tt_rc tt__store_pend_flush(tt_store *s);
void tt__store_pend_drop(tt_store *s);
/* Lock and start a write transaction: BEGIN, or inside a batch a savepoint (so that a failed
 * call rolls back only its own writes).  On error the lock is released. */
tt_rc tt__store_tx_begin(tt_store *s);
/* Unlock and return rc. */
tt_rc tt__store_unlock(tt_store *s, tt_rc rc);
/* Commit when rc is TT_OK, else roll back (keeping the cause in errmsg); unlock; return.
 * Inside a batch: release or roll back to the savepoint of tt__store_tx_begin. */
tt_rc tt__store_tx_end(tt_store *s, tt_rc rc);
/* Forget the cached trial_keys id (store_trials.c): at every rollback and at close. */
void tt__store_key_forget(tt_store *s);
/* Bounded copy into a fixed field ("" for NULL). */
void tt__cpy(char *dst, size_t n, const char *src);
/* strdup; NULL stays NULL; sets *oom when out of memory. */
char *tt__dup(const char *src, int *oom);
/* PostgreSQL: hold an advisory lock on (class, name) until the transaction ends, so that a
 * check-then-insert for one name is atomic across hosts (SQLite: BEGIN IMMEDIATE already
 * holds the single write lock; TT_OK at once).  Classes: */
enum { TT_LOCK_JOBS = 7474, TT_LOCK_TEMPLATES = 7475 };
tt_rc tt__store_owner_lock(tt_store *s, int cls, const char *name);
/* Serialise a jansson value (reference stolen) as compact text into *out (malloc'd). */
struct json_t;
tt_rc tt__json_out(struct json_t *v, char **out);

/* Start query id with its SQL (pg: the PostgreSQL variant, NULL when the same). */
tt_rc tt__q_start(tt_store *s, int id, const char *sql, const char *pg, const tt__param *p,
                  int np, tt__res *r);
/* Next row: 1 row, 0 done, -1 error with *rc set. */
int tt__q_step(tt__res *r, tt_rc *rc);
/* Run to completion; *changes (may be NULL) = rows changed. */
tt_rc tt__q_exec(tt_store *s, int id, const char *sql, const char *pg, const tt__param *p,
                 int np, int64_t *changes);
/* First row: TT_OK with the row (finish with tt__q_end), TT_ENOTFOUND or an error with
 * nothing left to finish. */
tt_rc tt__q_first(tt_store *s, int id, const char *sql, const char *pg, const tt__param *p,
                  int np, tt__res *r);
/* Run the rest of the statement (writes with RETURNING) and finish it. */
tt_rc tt__q_end(tt__res *r);

/* The compact form of a trial's samples (trials.samples_z, schema 005; store_samples.c):
 * base64 (RFC 4648 with padding, OpenSSL's EVP_EncodeBlock) of: a version byte 1, the count n (1..255), then per sample a tag byte:
 * 0..252 an earlier distinct value (in order of first appearance), 0xFE a float f (4 bytes
 * little-endian) meaning (double)f * 1000 -- microseconds from a timer that counts float
 * milliseconds, as the recorded GPU datasets do -- or 0xFF a double (8 bytes LE).  Lossless
 * bit for bit, so the text read back (tt_json_reals of the values) is the text the samples
 * had.  pack: writes NUL-terminated text into out (cap >= TT__SAMPLES_Z_CAP(n)), returns its
 * length, 0 when n is 0 or > TT__SAMPLES_Z_MAXN.  unpack: the values into v (cap entries),
 * returns n, 0 for malformed text. */
#define TT__SAMPLES_Z_MAXN 255
#define TT__SAMPLES_Z_CAP(n) (((2 + 9 * (size_t)(n) + 2) / 3) * 4 + 1)
size_t tt__samples_pack(const double *v, size_t n, char *out, size_t cap);
size_t tt__samples_unpack(const char *z, double *v, size_t cap);

/* The key columns that a best row and a pinned baseline share, read by one decoder:
 * template_name, template_hash, target, backend_fp, problem_key, problem_json, config_json,
 * trial_id, median_us, spread_us (in this order in BEST_COLS and BASE_COLS).  A tt__key
 * points into a tt_best or a tt_baseline (TT__KEY_OF; the array pointer types check that
 * both keep the fixed fields' sizes). */
typedef struct tt__key {
    char (*template_name)[64], (*template_hash)[17], (*target)[64], (*backend_fp)[80];
    char **problem_key, **problem_json, **config_json;
    int64_t *trial_id;
    double *median_us, *spread_us;
} tt__key;
#define TT__KEY_OF(b)                                                                     \
    ((tt__key){&(b)->template_name, &(b)->template_hash, &(b)->target, &(b)->backend_fp,   \
               &(b)->problem_key, &(b)->problem_json, &(b)->config_json, &(b)->trial_id,   \
               &(b)->median_us, &(b)->spread_us})
/* Fill k from columns col..col+9 of the current row.  The heap fields become new copies
 * owned by the struct k points into (released by its *_clear()); *oom is set when one could
 * not be made (the others are still filled). */
void tt__key_from_row(tt__res *r, int col, tt__key k, int *oom);
/* Free the heap fields of k (NULL-safe) and set them to NULL. */
void tt__key_free(tt__key k);

/* Run query id (lock taken and released here) and fold its rows into acc, a new jansson
 * reference that this call steals (NULL: TT_ENOMEM): row() adds the current row to acc and
 * returns TT_OK or an error (the remaining rows are still stepped through).  On success *out
 * is acc as compact text (malloc'd, serialised after the lock is released); on error acc is
 * released, *out is NULL and the error is returned. */
typedef tt_rc (*tt__json_row_fn)(tt__res *r, struct json_t *acc);
tt_rc tt__store_json_query(tt_store *s, int id, const char *sql, const char *pg,
                           const tt__param *p, int np, struct json_t *acc, tt__json_row_fn row,
                           char **out);

/* store_rekey.c: the data step of migration 003 (inside its transaction): canonical config
 * keys, hashes and JSON for every trial, duplicates merged (*merged counts them). */
tt_rc tt__store_rekey(tt_store *s, size_t *merged);

/* store_trials.c: every best row matching q (store_meta.c pins them as baselines). */
tt_rc tt__store_best_rows(tt_store *s, const tt_best_query *q, tt_best **rows, size_t *n);

/* Collect the rows of a started query into a new array of `size`-byte elements: row() fills
 * one element from the current row, clear() releases one.  Finishes r.  On success *rows is a
 * malloc'd array of *n elements (NULL when none); on error everything is released, *rows is
 * NULL, *n is 0 and the error is returned. */
typedef tt_rc (*tt__row_fn)(tt__res *r, void *elem);
typedef void (*tt__clear_fn)(void *elem);
tt_rc tt__store_collect(tt_store *s, tt__res *r, size_t size, tt__row_fn row,
                        tt__clear_fn clear, void **rows, size_t *n);

#endif

/* SPDX-License-Identifier: MIT
 * store_sqlite.c - the SQLite engine of tt_store: WAL, busy timeout, foreign keys, cached
 * prepared statements, and the tt_now() SQL function.
 *
 * Durability: journal_mode=WAL with synchronous=NORMAL by default.  A commit appends to
 * the WAL with write(2) before sqlite3_step() returns, so a committed trial survives
 * kill -9 of the daemon (the data is in the OS page cache and the WAL is replayed on the
 * next open); only a power loss or kernel crash can lose the last transactions, and never
 * corrupts the database.  Those lost trials are simply measured again when the job resumes
 * (job state and trials live in the same database, so they are lost together, consistently).
 * An fsync per trial would buy nothing else; whoever wants it opens
 * "sqlite:/path/tt.db?synchronous=full".
 *
 * A database file deleted, renamed or replaced while open (rm, mv, a log rotation or a
 * clean-up script): the connection keeps its descriptor of the unlinked file, so reads and
 * writes still succeed, and every write made from then on is lost at the next restart (which
 * opens, or creates, whatever is at the path).  A commit hook asks SQLite whether the file
 * moved (SQLITE_FCNTL_HAS_MOVED, one stat(2) of the path: once per commit, not per statement,
 * so one per group-commit batch) and turns such a commit into a rollback; the error says
 * "the database file PATH was deleted or moved" (TT_EDB, tt_store_moved()).  tt_store_ping
 * checks the same (GET /readyz).  Once the file is back at its path, commits go through.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_internal.h"

#define TT_SQLITE_BUSY_MS 10000

/* 1 when the main database file of db is no longer at the path it was opened by (deleted,
 * renamed or replaced); 0 when it is, or for a database without a file. */
static int tt_sqlite_has_moved(sqlite3 *db)
{
    int moved = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK) return 0;
    return moved != 0;
}

/* The commit hook: non-zero turns the commit into a rollback (SQLITE_CONSTRAINT_COMMITHOOK). */
static int tt_sqlite_commit_hook(void *ud) { return tt_sqlite_has_moved(ud); }

static tt_rc tt_sqlite_moved_fail(tt_store *s)
{
    const char *path = sqlite3_db_filename(s->conn, "main");
    tt__store_fail(s, TT_EDB, "sqlite: the database file %s was deleted or moved while "
                   "tiletuned had it open; writes are refused, since they would be lost with "
                   "the unlinked file (put the file back, or restart tiletuned)",
                   path && *path ? path : "?");
    s->err_moved = 1;
    return TT_EDB;
}

static tt_rc tt_sqlite_check(tt_store *s)
{
    return tt_sqlite_has_moved(s->conn) ? tt_sqlite_moved_fail(s) : TT_OK;
}

static tt_rc tt_sqlite_fail(tt_store *s, int code)
{
    sqlite3 *db = s->conn;
    if (code == SQLITE_CONSTRAINT_COMMITHOOK) return tt_sqlite_moved_fail(s);
    int base = code & 0xff;
    tt_rc rc = TT_EDB;
    if (code == SQLITE_CONSTRAINT_UNIQUE || code == SQLITE_CONSTRAINT_PRIMARYKEY) rc = TT_EEXISTS;
    else if (base == SQLITE_NOMEM) rc = TT_ENOMEM;
    return tt__store_fail(s, rc, "sqlite: %s", db ? sqlite3_errmsg(db) : sqlite3_errstr(code));
}

/* Busy handler: retry every 0.5 ms for up to TT_SQLITE_BUSY_MS.  SQLite's own
 * (sqlite3_busy_timeout) backs off to 100 ms sleeps, which keeps missing the short gaps a
 * worker leaves between its group-commit batches (runner.c): a cancel or an import could
 * starve behind a long cheap job.  Polling finely finds the gap. */
static int tt_sqlite_busy(void *ud, int count)
{
    (void)ud;
    if ((double)count * 0.5 >= TT_SQLITE_BUSY_MS) return 0;
    struct timespec ts = {0, 500 * 1000};
    nanosleep(&ts, NULL);
    return 1;
}

static void tt_sqlite_now_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    sqlite3_result_double(ctx, tt__store_now());
}

static tt_rc tt_sqlite_exec_script(tt_store *s, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->conn, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK) return TT_OK;
    if (rc == SQLITE_CONSTRAINT_COMMITHOOK) {
        sqlite3_free(msg);
        return tt_sqlite_moved_fail(s);
    }
    tt_rc r = tt__store_fail(s, (rc & 0xff) == SQLITE_CONSTRAINT ? TT_EEXISTS : TT_EDB,
                             "sqlite: %s", msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return r;
}

/* Before SQLite initialises (the first open of the process): no memory statistics.  They
 * cost a global mutex around every allocation of every connection (a fifth of a group-
 * committed trial's insert), and nothing here reads them.  When something in the process
 * initialised SQLite before, the call is refused (SQLITE_MISUSE) and nothing changes. */
static void tt_sqlite_config_once(void) { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

static tt_rc tt_sqlite_open(tt_store *s, const char *path, const char *opts)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, tt_sqlite_config_once);
    const char *sync = "NORMAL";
    if (opts && *opts) {
        if (strcmp(opts, "synchronous=full") == 0) sync = "FULL";
        else if (strcmp(opts, "synchronous=normal") != 0)
            return tt__store_fail(s, TT_EDB, "sqlite: unknown option \"%s\" "
                                  "(synchronous=normal|full)", opts);
    }
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
    if (rc != SQLITE_OK) {
        tt__store_fail(s, TT_EDB, "sqlite: %s: %s", path,
                       db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return TT_EDB;
    }
    s->conn = db;
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_handler(db, tt_sqlite_busy, NULL);
    rc = sqlite3_create_function(db, "tt_now", 0, SQLITE_UTF8, NULL, tt_sqlite_now_fn, NULL,
                                 NULL);
    if (rc != SQLITE_OK) return tt_sqlite_fail(s, rc);
    /* The default 4 KiB pages: 16 KiB pages wrote a batch of trials 8 % faster but made every
     * single-row commit (cmd: trials, leases, the API) write 4x the WAL bytes: one commit per
     * trial took 2x as long (bench/bench_job, 2026-11-24). */
    char pragmas[160];
    snprintf(pragmas, sizeof pragmas,
             "PRAGMA foreign_keys=ON; PRAGMA journal_mode=WAL; PRAGMA synchronous=%s;", sync);
    /* Switching a new file to WAL needs a lock that SQLite does not always wait for through
     * the busy handler (several connections opening a fresh file at once): retry. */
    for (int waited_ms = 0;; waited_ms += 5) {
        rc = sqlite3_exec(db, pragmas, NULL, NULL, NULL);
        if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) break;
        if (waited_ms >= TT_SQLITE_BUSY_MS) break;
        sqlite3_sleep(5);
    }
    if (rc != SQLITE_OK) return tt_sqlite_fail(s, rc);
    sqlite3_commit_hook(db, tt_sqlite_commit_hook, db);
    return TT_OK;
}

static void tt_sqlite_forget(tt_store *s)
{
    for (int i = 0; i < TT__Q_MAX; i++) {
        sqlite3_finalize(s->cache[i]);
        s->cache[i] = NULL;
    }
}

static void tt_sqlite_close(tt_store *s)
{
    tt_sqlite_forget(s);
    sqlite3_close_v2(s->conn);
    s->conn = NULL;
}

static tt_rc tt_sqlite_begin(tt_store *s) { return tt_sqlite_exec_script(s, "BEGIN IMMEDIATE"); }
static tt_rc tt_sqlite_commit(tt_store *s) { return tt_sqlite_exec_script(s, "COMMIT"); }
static void tt_sqlite_rollback(tt_store *s)
{
    if (s->conn && !sqlite3_get_autocommit(s->conn))
        sqlite3_exec(s->conn, "ROLLBACK", NULL, NULL, NULL);
}
/* BEGIN IMMEDIATE already holds the one write lock. */
static tt_rc tt_sqlite_migrate_lock(tt_store *s) { return TT_OK; }

/* The bind index of parameter $(i+1) in st (0: st does not use it). */
static int tt_sqlite_pindex(sqlite3_stmt *st, int i)
{
    char name[16];
    snprintf(name, sizeof name, "$%d", i + 1);
    return sqlite3_bind_parameter_index(st, name);
}

static tt_rc tt_sqlite_query(tt_store *s, int id, const char *sql, const tt__param *p, int np,
                             tt__res *r)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    int cached = id >= 0 && id < TT__Q_MAX;
    sqlite3_stmt *st = cached ? s->cache[id] : NULL;
    if (!st) {
        int rc = sqlite3_prepare_v3(s->conn, sql, -1, id >= 0 ? SQLITE_PREPARE_PERSISTENT : 0,
                                    &st, NULL);
        if (rc != SQLITE_OK) return tt_sqlite_fail(s, rc);
        if (cached) {
            s->cache[id] = st;
            for (int i = 0; i < TT__PMAP; i++)
                s->pmap[id][i] = (unsigned char)tt_sqlite_pindex(st, i);
        } else {
            r->owned = 1;
        }
    }
    r->h = st;
    for (int i = 0; i < np; i++) {
        int idx = cached && i < TT__PMAP ? s->pmap[id][i] : tt_sqlite_pindex(st, i);
        if (idx == 0) continue;   /* not used by this dialect's variant */
        int rc;
        switch (p[i].kind) {
        case TT__P_I64: rc = sqlite3_bind_int64(st, idx, p[i].i); break;
        case TT__P_F64: rc = sqlite3_bind_double(st, idx, p[i].d); break;
        case TT__P_TEXTK:   /* valid until finish(), which clears the bindings */
            rc = p[i].s ? sqlite3_bind_text(st, idx, p[i].s, -1, SQLITE_STATIC)
                        : sqlite3_bind_null(st, idx);
            break;
        default:
            rc = p[i].s ? sqlite3_bind_text(st, idx, p[i].s, -1, SQLITE_TRANSIENT)
                        : sqlite3_bind_null(st, idx);
        }
        if (rc != SQLITE_OK) {
            tt_rc e = tt_sqlite_fail(s, rc);
            r->h = NULL;
            sqlite3_clear_bindings(st);
            if (r->owned) sqlite3_finalize(st);
            return e;
        }
    }
    return TT_OK;
}

static int tt_sqlite_step(tt__res *r)
{
    int rc = sqlite3_step(r->h);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) {
        r->changes = sqlite3_changes(r->s->conn);
        r->last_id = sqlite3_last_insert_rowid(r->s->conn);
        return 0;
    }
    tt_sqlite_fail(r->s, sqlite3_extended_errcode(r->s->conn));
    return -1;
}

static int tt_sqlite_isnull(tt__res *r, int col)
{
    return sqlite3_column_type(r->h, col) == SQLITE_NULL;
}
static const char *tt_sqlite_text(tt__res *r, int col)
{
    return (const char *)sqlite3_column_text(r->h, col);
}
static int64_t tt_sqlite_i64(tt__res *r, int col) { return sqlite3_column_int64(r->h, col); }
static double tt_sqlite_f64(tt__res *r, int col) { return sqlite3_column_double(r->h, col); }

static void tt_sqlite_finish(tt__res *r)
{
    if (!r->h) return;
    if (r->owned) {
        sqlite3_finalize(r->h);
    } else {
        sqlite3_reset(r->h);
        sqlite3_clear_bindings(r->h);
    }
    r->h = NULL;
}

const tt__engine tt__engine_sqlite = {
    "sqlite",         tt_sqlite_open,   tt_sqlite_close,  tt_sqlite_exec_script,
    tt_sqlite_begin,  tt_sqlite_commit, tt_sqlite_rollback, tt_sqlite_migrate_lock,
    tt_sqlite_query,  tt_sqlite_step,   tt_sqlite_isnull, tt_sqlite_text,
    tt_sqlite_i64,    tt_sqlite_f64,    tt_sqlite_finish, tt_sqlite_forget,
    tt_sqlite_check,
};

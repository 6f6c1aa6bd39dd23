/* SPDX-License-Identifier: MIT
 * store_pg.c - the PostgreSQL engine of tt_store (libpq): text-format parameters and
 * results, statements prepared once per connection, one reconnect attempt when the
 * server connection was lost.
 *
 * Many worker hosts share one database: jobs are claimed with FOR UPDATE SKIP LOCKED and a
 * lease measured on the server clock (tt_now() in the schema), so hosts need not agree on
 * the time.  Concurrent migrators serialise on a transaction-scoped advisory lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* Advisory lock key of the migration transaction ("tt" "mi" "gr"). */
#define TT_PG_MIGRATE_LOCK 0x74746d696772LL

static void tt_pg_quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;   /* libraries never print: NOTICEs ("already exists, skipping") dropped */
}

static tt_rc tt_pg_fail_res(tt_store *s, PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    tt_rc rc = TT_EDB;
    if (state && strcmp(state, "23505") == 0) rc = TT_EEXISTS;   /* unique_violation */
    const char *msg = res ? PQresultErrorMessage(res) : NULL;
    if (!msg || !*msg) msg = PQerrorMessage(s->conn);
    char buf[400];
    snprintf(buf, sizeof buf, "%s", msg ? msg : "unknown error");
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = '\0';
    size_t o = 0;   /* libpq's multi-line texts on one line (logs, API errors) */
    for (size_t i = 0; i < n; i++) {
        int ws = buf[i] == '\n' || buf[i] == '\t';
        if (ws && o > 0 && buf[o - 1] == ' ') continue;
        buf[o++] = ws ? ' ' : buf[i];
    }
    buf[o] = '\0';
    tt__store_fail(s, rc, "postgresql: %s", buf);
    s->err_lost = s->conn && PQstatus(s->conn) != CONNECTION_OK;
    return rc;
}

static void tt_pg_forget(tt_store *s)
{
    for (int i = 0; i < TT__Q_MAX; i++) s->cache[i] = NULL;
}

static tt_rc tt_pg_open(tt_store *s, const char *conninfo, const char *opts)
{
    (void)opts;   /* options are part of the libpq URL */
    /* The sessions are named in pg_stat_activity and the server log unless the URL names
     * them itself (application_name=...): a team's DBA tells the daemons' sessions apart. */
    const char *const keys[] = {"dbname", "fallback_application_name", NULL};
    const char *const vals[] = {conninfo, "tiletuned", NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (!c) return tt__store_fail(s, TT_ENOMEM, "postgresql: out of memory");
    s->conn = c;
    if (PQstatus(c) != CONNECTION_OK) return tt_pg_fail_res(s, NULL);
    PQsetNoticeProcessor(c, tt_pg_quiet, NULL);
    return TT_OK;
}

static void tt_pg_close(tt_store *s)
{
    PQfinish(s->conn);
    s->conn = NULL;
    tt_pg_forget(s);
}

/* Before a statement outside a transaction (or a BEGIN): re-establish a connection that
 * was lost (server restart, failover, idle timeout).  The statement that first hit the
 * dead link has failed with TT_EDB; it is not retried, since it may have been applied. */
static int tt_pg_revive(tt_store *s)
{
    if (PQstatus(s->conn) == CONNECTION_OK) return 0;
    PQreset(s->conn);
    tt_pg_forget(s);
    if (PQstatus(s->conn) != CONNECTION_OK) return 0;
    s->err_lost = 0;   /* connected again: an earlier failure says nothing about it any more */
    return 1;
}

/* 1 when a statement that failed outside a transaction may be sent again on a new
 * connection: the link was found dead, and the statement changes nothing (a SELECT, or the
 * BEGIN of a transaction), so it cannot have been applied.  The first statement after a
 * server restart or a terminated session meets the dead link: without this, every reader
 * got one TT_EDB (HTTP 503) and a worker's trial failed its job. */
static int tt_pg_retry(tt_store *s, const char *sql)
{
    if (s->in_tx || PQstatus(s->conn) == CONNECTION_OK) return 0;
    while (*sql == ' ' || *sql == '\n' || *sql == '(') sql++;
    if (strcmp(sql, "BEGIN") != 0 && strncmp(sql, "SELECT ", 7) != 0) return 0;
    return tt_pg_revive(s);
}

static int tt_pg_failed(PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    return !res || (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK);
}

static tt_rc tt_pg_exec_script(tt_store *s, const char *sql)
{
    if (!s->in_tx) tt_pg_revive(s);
    PGresult *res = PQexec(s->conn, sql);
    if (tt_pg_failed(res) && tt_pg_retry(s, sql)) {
        PQclear(res);
        res = PQexec(s->conn, sql);
    }
    ExecStatusType st = PQresultStatus(res);
    tt_rc rc = TT_OK;
    if (!res || (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)) rc = tt_pg_fail_res(s, res);
    PQclear(res);
    return rc;
}

static tt_rc tt_pg_begin(tt_store *s)
{
    tt_rc rc = tt_pg_exec_script(s, "BEGIN");
    s->in_tx = rc == TT_OK;
    return rc;
}
static tt_rc tt_pg_commit(tt_store *s)
{
    tt_rc rc = tt_pg_exec_script(s, "COMMIT");
    s->in_tx = 0;
    return rc;
}
static void tt_pg_rollback(tt_store *s)
{
    s->in_tx = 0;
    if (s->conn && PQtransactionStatus(s->conn) != PQTRANS_IDLE) {
        PGresult *res = PQexec(s->conn, "ROLLBACK");
        PQclear(res);
    }
}
static tt_rc tt_pg_migrate_lock(tt_store *s)
{
    char sql[80];
    snprintf(sql, sizeof sql, "SELECT pg_advisory_xact_lock(%lld)", (long long)TT_PG_MIGRATE_LOCK);
    return tt_pg_exec_script(s, sql);
}

enum { TT_PG_TEXT_OID = 25, TT_PG_INT8_OID = 20, TT_PG_FLOAT8_OID = 701, TT_PG_MAXP = TT__PMAP };

/* Run query id (prepared once per connection; -1: one-shot); its result, failed or not. */
static PGresult *tt_pg_send(tt_store *s, int id, const char *sql, int np,
                            const char *const *vals, const Oid *types)
{
    if (id < 0 || id >= TT__Q_MAX) return PQexecParams(s->conn, sql, np, types, vals, NULL, NULL, 0);
    char name[16];
    snprintf(name, sizeof name, "tt_q%d", id);
    if (!s->cache[id]) {
        PGresult *res = PQprepare(s->conn, name, sql, np, types);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) return res;
        PQclear(res);
        s->cache[id] = s;   /* marker: prepared on this connection */
    }
    return PQexecPrepared(s->conn, name, np, vals, NULL, NULL, 0);
}

static tt_rc tt_pg_query(tt_store *s, int id, const char *sql, const tt__param *p, int np,
                         tt__res *r)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    if (np > TT_PG_MAXP) return tt__store_fail(s, TT_EINTERNAL, "postgresql: too many params");
    char buf[TT_PG_MAXP][32];
    const char *vals[TT_PG_MAXP];
    Oid types[TT_PG_MAXP];
    for (int i = 0; i < np; i++) {
        switch (p[i].kind) {
        case TT__P_I64:
            snprintf(buf[i], sizeof buf[i], "%" PRId64, p[i].i);
            vals[i] = buf[i];
            types[i] = TT_PG_INT8_OID;
            break;
        case TT__P_F64:
            snprintf(buf[i], sizeof buf[i], "%.17g", p[i].d);
            vals[i] = buf[i];
            types[i] = TT_PG_FLOAT8_OID;
            break;
        default:
            vals[i] = p[i].s;
            types[i] = TT_PG_TEXT_OID;
        }
    }
    if (!s->in_tx) tt_pg_revive(s);   /* never inside a transaction: it died with the link */
    PGresult *res = tt_pg_send(s, id, sql, np, vals, types);
    if (tt_pg_failed(res) && tt_pg_retry(s, sql)) {
        PQclear(res);
        res = tt_pg_send(s, id, sql, np, vals, types);
    }
    if (tt_pg_failed(res)) {
        tt_rc rc = tt_pg_fail_res(s, res);
        PQclear(res);
        return rc;
    }
    r->h = res;
    r->row = -1;
    r->nrows = PQntuples(res);
    const char *ct = PQcmdTuples(res);
    r->changes = ct && *ct ? strtoll(ct, NULL, 10) : 0;
    return TT_OK;
}

static int tt_pg_step(tt__res *r)
{
    if (r->row + 1 < r->nrows) {
        r->row++;
        return 1;
    }
    r->row = r->nrows;
    return 0;
}

static int tt_pg_isnull(tt__res *r, int col) { return PQgetisnull(r->h, r->row, col); }
static const char *tt_pg_text(tt__res *r, int col)
{
    return PQgetisnull(r->h, r->row, col) ? NULL : PQgetvalue(r->h, r->row, col);
}
static int64_t tt_pg_i64(tt__res *r, int col)
{
    const char *v = tt_pg_text(r, col);
    return v ? strtoll(v, NULL, 10) : 0;
}
static double tt_pg_f64(tt__res *r, int col)
{
    const char *v = tt_pg_text(r, col);
    return v ? strtod(v, NULL) : 0.0;
}
static void tt_pg_finish(tt__res *r)
{
    PQclear(r->h);
    r->h = NULL;
}

const tt__engine tt__engine_postgres = {
    "postgresql",  tt_pg_open,   tt_pg_close,  tt_pg_exec_script,
    tt_pg_begin,   tt_pg_commit, tt_pg_rollback, tt_pg_migrate_lock,
    tt_pg_query,   tt_pg_step,   tt_pg_isnull, tt_pg_text,
    tt_pg_i64,     tt_pg_f64,    tt_pg_finish, tt_pg_forget,
    NULL,          /* check: a server has no file to lose */
};

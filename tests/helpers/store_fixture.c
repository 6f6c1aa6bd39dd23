/* SPDX-License-Identifier: MIT
 * store_fixture.c - one database per test case on either engine, for the store tests.
 */
#include "store_fixture.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tt_test.h"

tt_store_engine tt_fx_engine;
static char *tt_fx_tmp;              /* SQLite: dir of the case files */
tt_pg_cluster tt_fx_pg;       /* PostgreSQL: the cluster */
static int tt_fx_ncase;
char tt_fx_url[700];

int tt_fx_sqlite_init(void)
{
    tt_fx_engine = TT_STORE_SQLITE;
    tt_fx_tmp = tt_test_tmpdir("tt-store");
    return tt_fx_tmp ? 0 : -1;
}
int tt_fx_sqlite_cleanup(void)
{
    tt_test_rmrf(tt_fx_tmp);
    free(tt_fx_tmp);
    tt_fx_tmp = NULL;
    return 0;
}
int tt_fx_pg_init(void)
{
    tt_fx_engine = TT_STORE_POSTGRES;
    char err[512];
    if (tt_pg_cluster_start(&tt_fx_pg, err, sizeof err) != 0) {
        fprintf(stderr, "\nPostgreSQL suite: %s\n", err);
        return -1;
    }
    return 0;
}
int tt_fx_pg_cleanup(void)
{
    tt_pg_cluster_stop(&tt_fx_pg);
    return 0;
}

/* A URL of a new empty database for this case (static buffer). */
const char *tt_fx_fresh_url(void)
{
    tt_fx_ncase++;
    if (tt_fx_engine == TT_STORE_SQLITE) {
        snprintf(tt_fx_url, sizeof tt_fx_url, "sqlite:%s/case%d.db", tt_fx_tmp, tt_fx_ncase);
        return tt_fx_url;
    }
    char name[32], err[512];
    snprintf(name, sizeof name, "tt_case%d", tt_fx_ncase);
    if (tt_pg_cluster_createdb(&tt_fx_pg, name, tt_fx_url, sizeof tt_fx_url, err, sizeof err) != 0) {
        fprintf(stderr, "createdb: %s\n", err);
        return "postgresql://nowhere.invalid/x";
    }
    return tt_fx_url;
}

tt_store *tt_fx_open_fresh(void)
{
    tt_store *s = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_store_open(tt_fx_fresh_url(), &s, &e);
    if (rc) fprintf(stderr, "open %s: %s\n", tt_fx_url, e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(tt_store_engine_of(s), tt_fx_engine);
    return s;
}

/* Run SQL directly on the case database, behind the store's back (fault injection). */
int tt_fx_raw_exec(const char *sql)
{
    int ok = 0;
    if (tt_fx_engine == TT_STORE_SQLITE) {
        sqlite3 *db = NULL;
        if (sqlite3_open(tt_fx_url + strlen("sqlite:"), &db) == SQLITE_OK) {
            sqlite3_busy_timeout(db, 5000);
            char *msg = NULL;
            ok = sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK;
            if (!ok) fprintf(stderr, "tt_fx_raw_exec: %s\n", msg ? msg : "?");
            sqlite3_free(msg);
        }
        sqlite3_close(db);
    } else {
        PGconn *c = PQconnectdb(tt_fx_url);
        PGresult *r = PQexec(c, sql);
        ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
        if (!ok) fprintf(stderr, "tt_fx_raw_exec: %s\n", PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
    }
    return ok;
}

long long tt_fx_raw_int(const char *sql)
{
    long long v = -1;
    if (tt_fx_engine == TT_STORE_SQLITE) {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        if (sqlite3_open(tt_fx_url + strlen("sqlite:"), &db) == SQLITE_OK &&
            sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        else
            fprintf(stderr, "tt_fx_raw_int: %s\n", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        sqlite3_close(db);
    } else {
        PGconn *c = PQconnectdb(tt_fx_url);
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
            v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        else
            fprintf(stderr, "tt_fx_raw_int: %s\n", PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
    }
    return v;
}

int tt_fx_schema_file(const char *name)
{
    char rel[96];
    snprintf(rel, sizeof rel, "schema/%s/%s.sql",
             tt_fx_engine == TT_STORE_SQLITE ? "sqlite" : "postgres", name);
    char *path = tt_test_src(rel);
    char *sql = path ? tt_test_read_file(path, NULL) : NULL;
    free(path);
    int ok = sql && tt_fx_raw_exec(sql);
    free(sql);
    return ok;
}

int tt_fx_schema_v2_job(int done)
{
    tt_fx_fresh_url();
    char sql[1024];
    snprintf(sql, sizeof sql,
             "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
             "name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL);"
             "INSERT INTO schema_migrations VALUES (1, '001_init', 0), "
             "(2, '002_measured_by', 0);"
             "INSERT INTO jobs (id, template_name, template_hash, target, backend, backend_fp, "
             "strategy, problem_key, problem_json, state, created_at, done) VALUES (7, 'gemm', "
             "'0123456789abcdef', 'a2', 'sim', 'sim', 'random', 'M=64', '{}', 'done', 0, %d);",
             done);
    return tt_fx_schema_file("001_init") && tt_fx_schema_file("002_measured_by") &&
           tt_fx_raw_exec(sql);
}

void tt_fx_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

void tt_fx_job(tt_job *j, const char *tpl, const char *target, const char *backend,
               const char *strategy, const char *owner, const char *problem_key)
{
    memset(j, 0, sizeof *j);
    snprintf(j->template_name, sizeof j->template_name, "%s", tpl ? tpl : "");
    snprintf(j->target, sizeof j->target, "%s", target ? target : "");
    snprintf(j->backend, sizeof j->backend, "%s", backend ? backend : "");
    snprintf(j->strategy, sizeof j->strategy, "%s", strategy ? strategy : "");
    snprintf(j->owner, sizeof j->owner, "%s", owner ? owner : "");
    j->problem_key = (char *)problem_key;
}

pid_t tt_fx_fork_writer(tt_fx_child_fn child, void *arg, int *rfd)
{
    int fds[2];
    CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        tt_store *cs = NULL;
        if (tt_store_open(tt_fx_url, &cs, NULL) != TT_OK) _exit(3);
        child(cs, fds[1], arg);
        _exit(0);
    }
    close(fds[1]);
    *rfd = fds[0];
    return pid;
}

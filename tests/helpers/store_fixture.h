/* SPDX-License-Identifier: MIT
 * store_fixture.h - the store tests' engine fixture: a suite runs its cases against SQLite
 * (a temp dir, one file per case) or PostgreSQL (a throwaway cluster, one database per case).
 *
 * Use tt_fx_{sqlite,pg}_{init,cleanup} as the CUnit suite init/cleanup; every case then calls
 * tt_fx_open_fresh() (a new empty, migrated database; tt_fx_url is its URL).  The PostgreSQL
 * suite fails (does not skip) when the server binaries are missing.  Not thread-safe: call
 * from the test's main thread.
 */
#ifndef TT_STORE_FIXTURE_H
#define TT_STORE_FIXTURE_H

#include <sys/types.h>

#include "pg_cluster.h"
#include "store.h"

extern tt_store_engine tt_fx_engine;   /* engine of the running suite */
extern tt_pg_cluster tt_fx_pg;         /* PostgreSQL: the cluster */
extern char tt_fx_url[700];            /* URL of the current case's database */

int tt_fx_sqlite_init(void);
int tt_fx_sqlite_cleanup(void);
int tt_fx_pg_init(void);
int tt_fx_pg_cleanup(void);
/* The suite table of a store test whose cases run on both engines: NAME_sqlite over
 * SQLITE_CASES, NAME_postgres over PG_CASES, then the end mark. */
#define TT_FX_BOTH_ENGINES(NAME, SQLITE_CASES, PG_CASES)                                   \
    {NAME "_sqlite", tt_fx_sqlite_init, tt_fx_sqlite_cleanup, SQLITE_CASES},               \
    {NAME "_postgres", tt_fx_pg_init, tt_fx_pg_cleanup, PG_CASES}, {NULL, NULL, NULL, NULL}

/* URL of a new empty database for this case (tt_fx_url). */
const char *tt_fx_fresh_url(void);
/* Open (and migrate) a new empty database; a fatal CUnit assertion when it fails. */
tt_store *tt_fx_open_fresh(void);
/* Run SQL on the case database behind the store's back (fault injection); 1 when it worked. */
int tt_fx_raw_exec(const char *sql);
/* The first column of the first row of a query on the case database, behind the store's
 * back, as an integer; -1 when the query fails or returns no row. */
long long tt_fx_raw_int(const char *sql);
/* Run the engine's migration file schema/<engine>/<name>.sql on the case database (building a
 * database of an older schema version); 1 when it worked. */
int tt_fx_schema_file(const char *name);
/* A new case database at schema version 2 (001_init, 002_measured_by and their
 * schema_migrations rows) holding job 7: gemm, template hash 0123456789abcdef, problem M=64,
 * a2, backend sim, done with `done` trials (the caller inserts them); 1 when it worked. */
int tt_fx_schema_v2_job(int done);
void tt_fx_sleep(double s);
/* Zero *j and set the fields every test job has (copied, bounded; NULL leaves a field
 * empty); problem_key is borrowed.  The caller sets the rest (template_hash, problem_json,
 * budgets) before tt_store_job_create*. */
/* A writer process on the case database (crash tests): forks a child that opens tt_fx_url,
 * runs child(cs, wfd, arg) with the write end of a pipe and _exit(0)s (3 when the open
 * failed; child may _exit with codes of its own).  Returns the child's pid and *rfd, the
 * pipe's read end: the caller closes it and reaps the child.  pipe/fork failures are fatal
 * CUnit assertions. */
typedef void (*tt_fx_child_fn)(tt_store *cs, int wfd, void *arg);
pid_t tt_fx_fork_writer(tt_fx_child_fn child, void *arg, int *rfd);
void tt_fx_job(tt_job *j, const char *tpl, const char *target, const char *backend,
               const char *strategy, const char *owner, const char *problem_key);

#endif

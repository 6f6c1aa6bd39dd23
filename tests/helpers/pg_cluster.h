/* SPDX-License-Identifier: MIT
 * pg_cluster.h - a throwaway PostgreSQL cluster for tests: initdb + pg_ctl in a temp dir,
 * listening only on a unix socket in that dir, stopped and deleted at the end.
 *
 * Binaries: $TT_PG_BINDIR, else `pg_config --bindir`, else the newest
 * /usr/lib/postgresql/NN/bin.  initdb refuses to run as root: when getuid() == 0 the temp dir
 * is given to the `postgres` system user and every PG binary runs through
 * `runuser -u postgres --`.  Logs (initdb.log, server.log) stay in the dir until stop.
 * Thread-safety: call start/stop from one thread; the URLs may be used from any thread.
 */
#ifndef TT_PG_CLUSTER_H
#define TT_PG_CLUSTER_H

#include <stddef.h>

typedef struct tt_pg_cluster {
    char dir[256];       /* temp dir: data/, socket, logs ("" when not started) */
    char bindir[256];
    int port;
    int as_postgres;     /* running the binaries as the postgres user */
    char url[512];       /* libpq URL of the "postgres" database */
} tt_pg_cluster;

/* Start a cluster.  0 on success; -1 with a reason in err (the dir is removed). */
int tt_pg_cluster_start(tt_pg_cluster *c, char *err, size_t errlen);
/* Create a new empty database `name` (letters, digits, _) and write its URL into url.
 * 0 on success, -1 with a reason in err. */
int tt_pg_cluster_createdb(const tt_pg_cluster *c, const char *name, char *url, size_t urllen,
                           char *err, size_t errlen);
/* Stop the server (immediate) and delete the dir.  Safe on a cluster that never started. */
void tt_pg_cluster_stop(tt_pg_cluster *c);

#endif

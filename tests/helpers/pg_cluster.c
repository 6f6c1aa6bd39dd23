/* SPDX-License-Identifier: MIT
 * pg_cluster.c - start and stop a throwaway PostgreSQL cluster for the tests (pg_cluster.h).
 */
#include "pg_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glob.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt_test.h"

static int pgc_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int pgc_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int pgc_has_initdb(const char *bindir)
{
    char p[300];
    snprintf(p, sizeof p, "%s/initdb", bindir);
    return access(p, X_OK) == 0;
}

static int pgc_find_bindir(char *out, size_t n)
{
    const char *env = getenv("TT_PG_BINDIR");
    if (env && *env && pgc_has_initdb(env)) {
        snprintf(out, n, "%s", env);
        return 0;
    }
    FILE *f = popen("pg_config --bindir 2>/dev/null", "r");
    if (f) {
        char line[256] = "";
        if (fgets(line, sizeof line, f)) line[strcspn(line, "\n")] = '\0';
        pclose(f);
        if (*line && pgc_has_initdb(line)) {
            snprintf(out, n, "%s", line);
            return 0;
        }
    }
    glob_t g;
    int found = -1;
    if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) == 0 && g.gl_pathc > 0) {
        /* glob sorts: the last one is the newest major version (two digits since 10) */
        snprintf(out, n, "%s", g.gl_pathv[g.gl_pathc - 1]);
        char *slash = strrchr(out, '/');
        if (slash) *slash = '\0';
        found = 0;
    }
    if (found == 0) globfree(&g);
    return found;
}

static int pgc_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 54321;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 54321;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* Run bindir/prog with args (NULL-terminated), as postgres when needed, output appended to
 * log.  Returns the exit status (0 ok), -1 when it could not run. */
static int pgc_run(const tt_pg_cluster *c, const char *log, const char *prog, ...)
{
    const char *argv[32];
    int n = 0;
    char path[300];
    snprintf(path, sizeof path, "%s/%s", c->bindir, prog);
    if (c->as_postgres) {
        argv[n++] = "runuser";
        argv[n++] = "-u";
        argv[n++] = "postgres";
        argv[n++] = "--";
    }
    argv[n++] = path;
    va_list ap;
    va_start(ap, prog);
    const char *a;
    while (n < 31 && (a = va_arg(ap, const char *))) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        if (c->as_postgres) {
            execvp("runuser", (char *const *)argv);
            execv("/usr/sbin/runuser", (char *const *)argv);
            execv("/sbin/runuser", (char *const *)argv);
        } else {
            execv(path, (char *const *)argv);
        }
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {}
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int tt_pg_cluster_start(tt_pg_cluster *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (pgc_find_bindir(c->bindir, sizeof c->bindir))
        return pgc_fail(err, errlen, "PostgreSQL server binaries not found (initdb): install "
                        "postgresql or set TT_PG_BINDIR");
    char *dir = tt_test_tmpdir("tt-pg");
    if (!dir) return pgc_fail(err, errlen, "cannot create a temp dir");
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    free(dir);
    c->as_postgres = getuid() == 0;
    if (c->as_postgres) {
        struct passwd *pw = getpwnam("postgres");
        if (!pw || chown(c->dir, pw->pw_uid, pw->pw_gid) != 0) {
            tt_pg_cluster_stop(c);
            return pgc_fail(err, errlen, "running as root and no usable `postgres` user");
        }
    }
    c->port = pgc_free_port();
    char data[300], log[300], slog[300], opts[400], port[16];
    snprintf(data, sizeof data, "%s/data", c->dir);
    snprintf(log, sizeof log, "%s/initdb.log", c->dir);
    snprintf(slog, sizeof slog, "%s/server.log", c->dir);
    snprintf(port, sizeof port, "%d", c->port);
    snprintf(opts, sizeof opts, "-k %s -p %d -c listen_addresses='' -c fsync=off "
             "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60",
             c->dir, c->port);
    int rc = pgc_run(c, log, "initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E",
                     "UTF8", "--no-locale", "--no-sync", NULL);
    if (rc != 0) {
        char *text = tt_test_read_file(log, NULL);
        pgc_fail(err, errlen, "initdb failed (%d): %.300s", rc, text ? text : "");
        free(text);
        tt_pg_cluster_stop(c);
        return -1;
    }
    rc = pgc_run(c, log, "pg_ctl", "-D", data, "-l", slog, "-o", opts, "-w", "-t", "60",
                 "start", NULL);
    if (rc != 0) {
        char *text = tt_test_read_file(slog, NULL);
        pgc_fail(err, errlen, "pg_ctl start failed (%d): %.300s", rc, text ? text : "");
        free(text);
        tt_pg_cluster_stop(c);
        return -1;
    }
    snprintf(c->url, sizeof c->url, "postgresql://postgres@/postgres?host=%s&port=%d", c->dir,
             c->port);
    return 0;
}

int tt_pg_cluster_createdb(const tt_pg_cluster *c, const char *name, char *url, size_t urllen,
                           char *err, size_t errlen)
{
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return pgc_fail(err, errlen, "bad database name \"%s\"", name);
    PGconn *conn = PQconnectdb(c->url);
    if (PQstatus(conn) != CONNECTION_OK) {
        pgc_fail(err, errlen, "connect: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return -1;
    }
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
    PGresult *res = PQexec(conn, sql);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok) pgc_fail(err, errlen, "%s: %s", sql, PQresultErrorMessage(res));
    PQclear(res);
    PQfinish(conn);
    if (!ok) return -1;
    snprintf(url, urllen, "postgresql://postgres@/%s?host=%s&port=%d", name, c->dir, c->port);
    return 0;
}

void tt_pg_cluster_stop(tt_pg_cluster *c)
{
    if (!c->dir[0]) return;
    char data[300], log[300];
    snprintf(data, sizeof data, "%s/data", c->dir);
    snprintf(log, sizeof log, "%s/stop.log", c->dir);
    struct stat sb;
    if (stat(data, &sb) == 0 && c->url[0])
        pgc_run(c, log, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop", NULL);
    tt_test_rmrf(c->dir);
    c->dir[0] = '\0';
    c->url[0] = '\0';
}

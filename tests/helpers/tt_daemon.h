/* SPDX-License-Identifier: MIT
 * tt_daemon.h - integration-test helpers: start the real build/bin/tiletuned on a free
 * port with a temporary SQLite database and config, talk to it over HTTP (libcurl), stop it.
 *
 * A daemon's directory (config, database, log) is removed by tt_daemon_cleanup() unless a
 * CUnit assertion failed during the run: then the directory is kept, its path printed and
 * the last lines of the log shown (like redis' start_server).
 *
 * Tokens configured by default (secret -> scopes): "admin-secret" admin, "tune-secret" tune
 * (name "tuner"), "tune2-secret" tune (name "tuner2"), "read-secret" read.
 * Not thread-safe; one test program drives its daemons from one thread.
 */
#ifndef TT_DAEMON_TEST_H
#define TT_DAEMON_TEST_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#define TT_TOKEN_ADMIN "admin-secret"
#define TT_TOKEN_TUNE "tune-secret"
#define TT_TOKEN_TUNE2 "tune2-secret"
#define TT_TOKEN_READ "read-secret"

typedef struct tt_daemon {
    char *dir;                /* temp dir: config.json, tt.db, daemon.log */
    char config_path[512];
    char log_path[512];
    char db_url[512];
    char url[64];             /* "http://127.0.0.1:PORT" */
    int port;
    pid_t pid;                /* 0 when not running */
    int stop_status;          /* the last tt_daemon_stop's result (0: exited cleanly); a
                               * non-zero one keeps the directory and prints the log */
} tt_daemon;

/* Start a daemon.  extra_json (may be NULL) is a JSON object merged over the default config
 * (e.g. "{\"workers\": 0, \"open_reads\": false}").  Returns 0 when /healthz answered. */
int tt_daemon_start(tt_daemon *d, const char *extra_json);
/* Start again with the same directory, config and database (after a stop or kill). */
int tt_daemon_restart(tt_daemon *d);
/* Send sig and wait for the process; returns its exit status (128+sig when killed). */
int tt_daemon_signal(tt_daemon *d, int sig);
/* SIGTERM and wait: the exit status (0 for a clean stop). */
int tt_daemon_stop(tt_daemon *d);
/* Stop if running; remove the directory unless a test failed (then keep it and print the
 * log path and tail to stderr). */
void tt_daemon_cleanup(tt_daemon *d);
/* 1 when the process is still alive. */
int tt_daemon_alive(tt_daemon *d);

typedef struct tt_hres {
    long status;              /* 0 when the request failed at the transport level */
    char *body;               /* NUL-terminated, malloc'd */
    size_t len;
    json_t *json;             /* parsed body or NULL */
    char content_type[128];
} tt_hres;

/* One request to the daemon (path like "/v1/jobs/1"); token may be NULL; body may be NULL
 * (len ignored) or len bytes.  Returns 0 when a response arrived.  Free with tt_hres_free. */
int tt_daemon_req(const tt_daemon *d, const char *method, const char *path, const char *token,
                  const char *body, size_t len, tt_hres *out);
void tt_hres_free(tt_hres *r);

/* out = pattern with its first "{job}" replaced by the job id (a path of a table row). */
void tt_path_job(char *out, size_t cap, const char *pattern, long long job);
/* The error code string of an error response ("" when none). */
const char *tt_hres_code(const tt_hres *r);
/* Poll GET /v1/jobs/{id} until its state is final or timeout_s passes; returns the final
 * state name (static) or NULL on timeout. */
const char *tt_daemon_wait_job(const tt_daemon *d, long long id, double timeout_s);
/* POST /v1/tune with `body` (tune token): the new job id, or -1 after printing the status and
 * the answer to stderr. */
long long tt_daemon_submit(const tt_daemon *d, const char *body);
/* Every trial of a job through GET /v1/jobs/{id}/trials (pages of 1000): a new array with,
 * per trial, an object of the listed members (`fields` NULL-terminated, copied by
 * reference), or NULL when a request fails. */
json_t *tt_daemon_trials(const tt_daemon *d, long long job, const char *const *fields);
/* Seconds to allow for slow builds (sanitizers): multiplies by 4 when TT_SANITIZED is set. */
double tt_daemon_slow(double seconds);

#endif

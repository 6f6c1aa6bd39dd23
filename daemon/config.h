/* SPDX-License-Identifier: MIT
 * config.h - the daemon's configuration: ONE declarative table drives everything.
 *
 * Each row of TT_CONFIG_TABLE gives: id, key, type, default, range (ints and numbers),
 * extra validator, environment variable and help.  From it come the parsing of the config
 * file (a JSON object whose keys are the row keys), of the environment, and of the command
 * line flags (--key-with-dashes VALUE or --key-with-dashes=VALUE), the generated --help,
 * `tiletuned config --sample` (deploy/tiletune.conf.sample is checked against it by
 * tests/unit/daemon/test_config.c) and `tiletuned config --show` / GET /v1/config.
 *
 * Precedence: default < file < environment < flags.  Each value remembers its source
 * (like postgres' GucSource), shown by --show and /v1/config.
 *
 * Ownership: a tt_config is caller-allocated, tt_config_init() / tt_config_close(); the
 * strings and JSON values it returns are borrowed and valid until the value is set again
 * or the config is closed.  Not thread-safe while being set; read-only use from many
 * threads is safe.
 */
#ifndef TT_CONFIG_H
#define TT_CONFIG_H

#include <jansson.h>
#include <stdint.h>

#include "tt_err.h"

#ifndef TT_DEFAULT_DATASETS_DIR
#define TT_DEFAULT_DATASETS_DIR "datasets"
#endif
#ifndef TT_DEFAULT_TEMPLATES_DIR
#define TT_DEFAULT_TEMPLATES_DIR "templates"
#endif
#ifndef TT_DEFAULT_TARGETS_DIR
#define TT_DEFAULT_TARGETS_DIR "costmodel/targets"
#endif

typedef enum tt_cfg_type { TT_CFGT_STR, TT_CFGT_INT, TT_CFGT_NUM, TT_CFGT_BOOL, TT_CFGT_JSON }
    tt_cfg_type;

/* X(id, key, type, default, min, max, validator, env, help) */
#define TT_CONFIG_TABLE(X)                                                                  \
    X(LISTEN, "listen", STR, "127.0.0.1:7878", 0, 0, tt__cfgv_listen, "TILETUNE_LISTEN",    \
      "address:port the HTTP API listens on (port 0 picks a free port)")                    \
    X(DB, "db", STR, "sqlite:tiletune.db", 0, 0, tt__cfgv_nonempty, "TILETUNE_DB",          \
      "database URL: sqlite:PATH, or postgresql://user@host/db for a shared team database") \
    X(WORKERS, "workers", INT, "2", 0, 256, NULL, "TILETUNE_WORKERS",                       \
      "measurement worker threads in this process (0: API only)")                           \
    X(TOKENS, "tokens", JSON, "[]", 0, 0, tt__cfgv_tokens, "TILETUNE_TOKENS",               \
      "bearer tokens: [{\"name\",\"secret_sha256\",\"scopes\":\"read,tune,admin\"}]")       \
    X(OPEN_READS, "open_reads", BOOL, "true", 0, 0, NULL, "TILETUNE_OPEN_READS",            \
      "GET routes, predict, simulate and validate need no token")                          \
    X(UI, "ui", BOOL, "true", 0, 0, NULL, "TILETUNE_UI",                                    \
      "serve the read-only web view at /ui/ (read scope)")                                  \
    X(TOOLCHAINS, "toolchains", JSON, "{}", 0, 0, tt__cfgv_toolchains,                      \
      "TILETUNE_TOOLCHAINS",                                                                \
      "cmd: backends: {\"name\": {\"build\": CMD, \"run\": CMD, \"env\": {..}, ...}}")     \
    X(DATASETS_DIR, "datasets_dir", STR, TT_DEFAULT_DATASETS_DIR, 0, 0, NULL,               \
      "TILETUNE_DATASETS_DIR", "where replay:NAME finds its recorded dataset")              \
    X(WORK_DIR, "work_dir", STR, "/tmp/tiletune-work", 0, 0, tt__cfgv_nonempty,             \
      "TILETUNE_WORK_DIR", "scratch and build cache of cmd: backends")                      \
    X(TEMPLATES_DIR, "templates_dir", STR, TT_DEFAULT_TEMPLATES_DIR, 0, 0, NULL,            \
      "TILETUNE_TEMPLATES_DIR", "built-in kernel templates (*.json)")                       \
    X(TARGETS_DIR, "targets_dir", STR, TT_DEFAULT_TARGETS_DIR, 0, 0, NULL,                  \
      "TILETUNE_TARGETS_DIR", "chip descriptions (*.json, one per SoC)")                    \
    X(LOG_LEVEL, "log_level", STR, "info", 0, 0, tt__cfgv_loglevel, "TILETUNE_LOG_LEVEL",   \
      "debug, info, notice, warning, error or fatal")                                       \
    X(LOG_FILE, "log_file", STR, "", 0, 0, NULL, "TILETUNE_LOG_FILE",                       \
      "append the log to this file (empty: stderr); SIGHUP reopens it (logrotate)")         \
    X(MAX_BODY_BYTES, "max_body_bytes", INT, "1048576", 1024, 268435456, NULL,              \
      "TILETUNE_MAX_BODY_BYTES", "largest request body; larger ones get 413")               \
    X(MAX_JSON_DEPTH, "max_json_depth", INT, "64", 4, 1024, NULL, "TILETUNE_MAX_JSON_DEPTH", \
      "deepest nesting of a JSON request body; deeper ones get 400")                        \
    X(MAX_SPACE, "max_space", NUM, "1e7", 1, 1e15, NULL, "TILETUNE_MAX_SPACE",              \
      "largest search space (configs) that enumerating strategies and predict accept")      \
    X(MAX_JOBS_PER_TOKEN, "max_jobs_per_token", INT, "8", 1, 100000, NULL,                  \
      "TILETUNE_MAX_JOBS_PER_TOKEN", "queued + running jobs one token may have (429 beyond)") \
    X(REQUEST_TIMEOUT, "request_timeout", INT, "30", 1, 3600, NULL,                         \
      "TILETUNE_REQUEST_TIMEOUT", "seconds an idle or stalled connection is kept")          \
    X(MAX_CONNECTIONS, "max_connections", INT, "1024", 1, 100000, NULL,                      \
      "TILETUNE_MAX_CONNECTIONS",                                                           \
      "concurrent HTTP connections served; beyond, requests get 503 busy (Retry-After)")   \
    X(CONNECTION_RESERVE, "connection_reserve", INT, "64", 0, 10000, NULL,                  \
      "TILETUNE_CONNECTION_RESERVE",                                                        \
      "connections beyond max_connections kept for /healthz, /readyz and /metrics")         \
    X(MAX_CONNECTIONS_PER_IP, "max_connections_per_ip", INT, "256", 1, 100000, NULL,        \
      "TILETUNE_MAX_CONNECTIONS_PER_IP",                                                    \
      "connections of one client address; beyond, requests get 503 busy")                 \
    X(HEADER_TIMEOUT, "header_timeout", NUM, "10", 0.1, 3600, NULL,                         \
      "TILETUNE_HEADER_TIMEOUT",                                                            \
      "seconds from connect (or the previous answer) to the end of a request's headers")   \
    X(BODY_TIMEOUT, "body_timeout", NUM, "30", 0.1, 3600, NULL, "TILETUNE_BODY_TIMEOUT",    \
      "seconds from the end of the headers to the end of the request body")                \
    X(HTTP_THREADS, "http_threads", INT, "0", 0, 256, NULL, "TILETUNE_HTTP_THREADS",        \
      "event-loop threads of the HTTP server (0: one per core)")                           \
    X(MAX_HEAVY_REQUESTS, "max_heavy_requests", INT, "2", 1, 256, NULL,                     \
      "TILETUNE_MAX_HEAVY_REQUESTS",                                                        \
      "predict, simulate, import and check requests running at once; more get 503 busy")   \
    X(SHUTDOWN_GRACE, "shutdown_grace", NUM, "10", 0, 3600, NULL, "TILETUNE_SHUTDOWN_GRACE", \
      "seconds SIGTERM waits for in-flight requests (handed back with 503) before exiting") \
    X(PREDICT_WORK_ANON, "predict_work_anon", NUM, "2e7", 1, 1e18, NULL,                    \
      "TILETUNE_PREDICT_WORK_ANON",                                                         \
      "predict budget without a token: configs x (constraints + 1) checked")               \
    X(PREDICT_WORK_TOKEN, "predict_work_token", NUM, "5e8", 1, 1e18, NULL,                  \
      "TILETUNE_PREDICT_WORK_TOKEN", "predict budget of requests with a token")            \
    X(SIMULATE_EVENTS_ANON, "simulate_events_anon", INT, "5000000", 1000, 1e12, NULL,       \
      "TILETUNE_SIMULATE_EVENTS_ANON", "simulate budget without a token: simulated events") \
    X(SIMULATE_EVENTS_TOKEN, "simulate_events_token", INT, "50000000", 1000, 1e12, NULL,    \
      "TILETUNE_SIMULATE_EVENTS_TOKEN", "simulate budget of requests with a token")        \
    X(REQUEST_SECONDS_ANON, "request_seconds_anon", NUM, "5", 0.1, 86400, NULL,             \
      "TILETUNE_REQUEST_SECONDS_ANON", "wall-time budget of a request without a token")    \
    X(REQUEST_SECONDS_TOKEN, "request_seconds_token", NUM, "60", 0.1, 86400, NULL,          \
      "TILETUNE_REQUEST_SECONDS_TOKEN", "wall-time budget of a request with a token")      \
    X(MAX_IMPORT_BYTES, "max_import_bytes", INT, "67108864", 1024, 536870912, NULL,        \
      "TILETUNE_MAX_IMPORT_BYTES",                                                          \
      "largest POST /v1/import dataset once decompressed (gzip stops inflating there)")    \
    X(MAX_IMPORT_BYTES_ADMIN, "max_import_bytes_admin", INT, "536870912", 1024, 536870912,  \
      NULL, "TILETUNE_MAX_IMPORT_BYTES_ADMIN", "the same limit for admin tokens")          \
    X(MAX_TRACE_BYTES, "max_trace_bytes", INT, "33554432", 4096, 1073741824, NULL,          \
      "TILETUNE_MAX_TRACE_BYTES",                                                           \
      "simulate traces are cut to this many bytes (whole events; the answer says so)")     \
    X(LEASE_SECONDS, "lease_seconds", NUM, "30", 1, 86400, NULL, "TILETUNE_LEASE_SECONDS",   \
      "job lease of a worker; a dead worker's jobs are taken over after it expires")        \
    X(POLL_SECONDS, "poll_seconds", NUM, "0.2", 0.01, 60, NULL, "TILETUNE_POLL_SECONDS",     \
      "how often idle workers look for queued jobs")                                        \
    X(BATCH_TRIALS, "batch_trials", INT, "1024", 1, 100000, NULL, "TILETUNE_BATCH_TRIALS",  \
      "group commit (SQLite): model/sim/replay: trials per transaction (1: one each)")     \
    X(BATCH_SECONDS, "batch_seconds", NUM, "0.1", 0.001, 60, NULL,                          \
      "TILETUNE_BATCH_SECONDS", "group commit: a batch is committed after this long")      \
    X(WORKER_NAME, "worker_name", STR, "", 0, 0, NULL, "TILETUNE_WORKER_NAME",              \
      "lease owner prefix of this host's workers (empty: host:pid)")

typedef enum tt_cfg_id {
#define TT_X_CFG_ID(id, key, type, def, lo, hi, val, env, help) TT_CFG_##id,
    TT_CONFIG_TABLE(TT_X_CFG_ID)
#undef TT_X_CFG_ID
    TT_CFG__COUNT
} tt_cfg_id;

typedef enum tt_cfg_source {
    TT_CFGS_DEFAULT, TT_CFGS_FILE, TT_CFGS_ENV, TT_CFGS_FLAG
} tt_cfg_source;
const char *tt_cfg_source_name(tt_cfg_source s);   /* "default", "file", "env", "flag" */

typedef struct tt_cfg_value {
    char *s;                  /* STR */
    int64_t i;                /* INT, BOOL */
    double d;                 /* NUM */
    json_t *j;                /* JSON (owned reference) */
    tt_cfg_source source;
    char origin[160];         /* file path, env var or flag that set it */
} tt_cfg_value;

typedef struct tt_config {
    tt_cfg_value v[TT_CFG__COUNT];
} tt_config;

/* Row of the table, for generators (help, sample, docs). */
typedef struct tt_cfg_row {
    const char *key;
    tt_cfg_type type;
    const char *def;
    double lo, hi;
    const char *env;
    const char *help;
} tt_cfg_row;
const tt_cfg_row *tt_config_row(tt_cfg_id id);
/* Id of a key ("max_body_bytes") or flag ("max-body-bytes"); -1 if unknown. */
int tt_config_find(const char *key);
/* The key nearest a mistyped key or flag name (in key form, "datasets_dir"), or NULL. */
const char *tt_config_suggest(const char *key);

/* Every value at its default.  TT_ENOMEM on failure (then close it). */
tt_rc tt_config_init(tt_config *c);
void tt_config_close(tt_config *c);

/* Set one value from text (INT/NUM/BOOL parsed, JSON parsed as JSON) and validate it.
 * On failure the old value stays and err names the key. */
tt_rc tt_config_set(tt_config *c, tt_cfg_id id, const char *text, tt_cfg_source src,
                    const char *origin, tt_errinfo *err);
/* Apply a config file (JSON object).  Unknown keys and wrong types are errors (TT_ECONFIG
 * with the key as path; TT_EIO / TT_EJSON when unreadable / malformed). */
tt_rc tt_config_load_file(tt_config *c, const char *path, tt_errinfo *err);
/* Same from a parsed object (borrowed); origin names it in --show. */
tt_rc tt_config_load_json(tt_config *c, const json_t *obj, const char *origin,
                          tt_errinfo *err);
/* Apply every TILETUNE_* variable of the table that is set in the environment. */
tt_rc tt_config_load_env(tt_config *c, tt_errinfo *err);

static inline const char *tt_config_str(const tt_config *c, tt_cfg_id id) { return c->v[id].s; }
static inline int64_t tt_config_int(const tt_config *c, tt_cfg_id id) { return c->v[id].i; }
static inline double tt_config_num(const tt_config *c, tt_cfg_id id) { return c->v[id].d; }
static inline const json_t *tt_config_json(const tt_config *c, tt_cfg_id id)
{
    return c->v[id].j;
}

/* New JSON object {"key": {"value": .., "source": "file", "origin": ".."}, ...} when
 * with_sources, else {"key": value}.  Token hashes and the database password are replaced
 * by "***" when redact. */
json_t *tt_config_to_json(const tt_config *c, int with_sources, int redact);
/* Generated texts (malloc'd, caller frees; NULL when out of memory):
 * the options part of --help, and the sample config file (every key at its default). */
char *tt_config_help_text(void);
char *tt_config_sample_text(void);

/* Validators named in the table (internal, shared with the tests). */
tt_rc tt__cfgv_listen(const tt_cfg_value *v, tt_errinfo *err);
tt_rc tt__cfgv_nonempty(const tt_cfg_value *v, tt_errinfo *err);
tt_rc tt__cfgv_tokens(const tt_cfg_value *v, tt_errinfo *err);
tt_rc tt__cfgv_toolchains(const tt_cfg_value *v, tt_errinfo *err);
tt_rc tt__cfgv_loglevel(const tt_cfg_value *v, tt_errinfo *err);

/* The database URL url with its password replaced by "***" (the userinfo's
 * "user:PASSWORD@" and any "password=VALUE" parameter), into out (cap bytes, cut short if
 * needed); returns out.  For logs and the shown configuration: the password stays secret. */
const char *tt_config_url_redact(const char *url, char *out, size_t cap);

/* Split "host:port" ("[::1]:7878" too) into host (cap bytes) and port.  TT_EINVAL if bad. */
tt_rc tt_config_split_listen(const char *listen, char *host, size_t cap, int *port);

#endif

/* SPDX-License-Identifier: MIT
 * main.c - tiletuned: the daemon (serve, worker) and its offline commands (predict,
 * simulate, validate, targets, config, hash-token).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_int.h"
#include "auth.h"
#include "config.h"
#include "http.h"
#include "jsonutil.h"
#include "log.h"
#include "metrics.h"
#include "runner.h"
#include "suggest.h"

#ifndef TT_VERSION
#define TT_VERSION "0.0.0"
#endif

/* Exit codes of tiletuned (docs/operations.md, `tiletuned --help`). */
typedef enum tt_exit {
    TT_EXIT_OK = 0,        /* success; serve/worker: stopped by SIGTERM/SIGINT */
    TT_EXIT_FAIL = 1,      /* a runtime failure not covered below */
    TT_EXIT_USAGE = 2,     /* bad command line */
    TT_EXIT_CONFIG = 3,    /* invalid configuration (file, environment or flag) */
    TT_EXIT_INVALID = 4,   /* invalid template, problem or config; infeasible config */
    TT_EXIT_NOTFOUND = 5,  /* unknown template or target */
    TT_EXIT_STORE = 6,     /* database cannot be opened or migrated */
    TT_EXIT_LISTEN = 7     /* cannot listen on the configured address */
} tt_exit;

static const char tt_usage[] =
    "usage: tiletuned [COMMAND] [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  serve                 run the HTTP API and the workers (default)\n"
    "  worker                run workers only, against a shared PostgreSQL (--db)\n"
    "  predict               rank configs with the analytic cost model\n"
    "      --template FILE|NAME --target T --problem K=V,.. [--config K=V,..] [--top K] [--json]\n"
    "  simulate              run the pipeline simulator on one config\n"
    "      --template FILE|NAME --target T --problem K=V,.. --config K=V,.. [--trace FILE.json]\n"
    "      [--json]\n"
    "  validate FILE         check a template document\n"
    "  targets [--json]      list the chip descriptions\n"
    "  config --show|--sample [--json]   effective configuration with sources / a sample file\n"
    "  hash-token [SECRET]   SHA-256 of a token secret for the config file (stdin if omitted)\n"
    "  --help, --version\n"
    "\n"
    "options of serve, worker and config (default < file < environment < flag):\n"
    "  -c, --config-file FILE   JSON config file (env TILETUNE_CONFIG)\n";

static const char tt_exit_help[] =
    "\nexit codes: 0 ok, 1 failure, 2 usage, 3 configuration, 4 invalid input,\n"
    "  5 unknown template/target, 6 database, 7 cannot listen\n";

static void tt_print_help(void)
{
    fputs(tt_usage, stdout);
    char *h = tt_config_help_text();
    if (h) fputs(h, stdout);
    free(h);
    fputs(tt_exit_help, stdout);
}

/* ---- configuration from file, environment and flags --------------------------------- */
/* Parse config flags of argv[1..]; positional and unknown arguments are left to the caller
 * in rest[] (count *nrest). */
static int tt_load_config(tt_config *cfg, int argc, char **argv, char **rest, int *nrest)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    if (tt_config_init(cfg)) { fprintf(stderr, "tiletuned: out of memory\n"); return TT_EXIT_FAIL; }
    const char *file = getenv("TILETUNE_CONFIG");
    for (int i = 1; i < argc; i++)
        if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config-file")) && i + 1 < argc)
            file = argv[i + 1];
        else if (!strncmp(argv[i], "--config-file=", 14))
            file = argv[i] + 14;
    if (file && *file && tt_config_load_file(cfg, file, &err)) {
        int at_key = err.path[0] && strcmp(err.path, file) != 0;   /* else the file itself */
        fprintf(stderr, "tiletuned: config file %s: %s%s%s\n", file, at_key ? err.path : "",
                at_key ? ": " : "", err.msg);
        return TT_EXIT_CONFIG;
    }
    if (tt_config_load_env(cfg, &err)) {
        fprintf(stderr, "tiletuned: environment: %s: %s\n", err.path, err.msg);
        return TT_EXIT_CONFIG;
    }
    *nrest = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int cf = !strcmp(a, "-c") || !strcmp(a, "--config-file");
        if ((cf && i + 1 == argc) || !strcmp(a, "--config-file=")) {   /* was ignored */
            fprintf(stderr, "tiletuned: %s needs a value (a config file)\n", cf ? a : "--config-file");
            return TT_EXIT_USAGE;
        }
        if (cf) { i++; continue; }
        if (!strncmp(a, "--config-file=", 14)) continue;
        if (strncmp(a, "--", 2) != 0) { rest[(*nrest)++] = argv[i]; continue; }
        char key[64];
        const char *eq = strchr(a, '=');
        size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (kl >= sizeof key) { rest[(*nrest)++] = argv[i]; continue; }
        memcpy(key, a + 2, kl);
        key[kl] = '\0';
        int id = tt_config_find(key);
        if (id < 0) { rest[(*nrest)++] = argv[i]; continue; }
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val) {
            fprintf(stderr, "tiletuned: --%s needs a value\n", key);
            return TT_EXIT_USAGE;
        }
        if (tt_config_set(cfg, (tt_cfg_id)id, val, TT_CFGS_FLAG, a, &err)) {
            /* the path inside a JSON value (toolchains.a2.run_timout, tokens[1]) */
            int inner = strcmp(err.path, tt_config_row((tt_cfg_id)id)->key) != 0 && err.path[0];
            fprintf(stderr, "tiletuned: --%s: %s%s%s\n", key, inner ? err.path : "",
                    inner ? ": " : "", err.msg);
            return TT_EXIT_CONFIG;
        }
    }
    return TT_EXIT_OK;
}

static int tt_open_log(const tt_config *cfg)
{
    int lvl = tt_log_level_parse(tt_config_str(cfg, TT_CFG_LOG_LEVEL));
    if (tt_log_open(tt_config_str(cfg, TT_CFG_LOG_FILE), (tt_log_level)(lvl < 0 ? 1 : lvl))) {
        fprintf(stderr, "tiletuned: cannot open log file %s: %s\n",
                tt_config_str(cfg, TT_CFG_LOG_FILE), strerror(errno));
        return TT_EXIT_CONFIG;
    }
    return TT_EXIT_OK;
}

/* The runner's job events go to the daemon's log. */
static void tt_runner_log(void *ud, tt_log_level level, const char *msg)
{
    (void)ud;
    TT_LOG(level, "%s", msg);
}

static void tt_runner_cfg(const tt_config *cfg, tt_catalog *cat, tt_runner_config *rc)
{
    memset(rc, 0, sizeof *rc);
    rc->db_url = tt_config_str(cfg, TT_CFG_DB);
    rc->workers = (int)tt_config_int(cfg, TT_CFG_WORKERS);
    rc->lease_seconds = tt_config_num(cfg, TT_CFG_LEASE_SECONDS);
    rc->poll_seconds = tt_config_num(cfg, TT_CFG_POLL_SECONDS);
    rc->batch_trials = tt_config_int(cfg, TT_CFG_BATCH_TRIALS);
    rc->batch_seconds = tt_config_num(cfg, TT_CFG_BATCH_SECONDS);
    const char *wn = tt_config_str(cfg, TT_CFG_WORKER_NAME);
    rc->worker_name = wn && *wn ? wn : NULL;
    rc->catalog = cat;
    rc->datasets_dir = tt_config_str(cfg, TT_CFG_DATASETS_DIR);
    rc->toolchains = tt_config_json(cfg, TT_CFG_TOOLCHAINS);
    rc->work_dir = tt_config_str(cfg, TT_CFG_WORK_DIR);
    rc->log = tt_runner_log;
}

static tt_catalog *tt_open_catalog(const tt_config *cfg, int *code)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_catalog *cat = NULL;
    if (tt_catalog_new(tt_config_str(cfg, TT_CFG_TEMPLATES_DIR),
                       tt_config_str(cfg, TT_CFG_TARGETS_DIR), &cat, &err)) {
        fprintf(stderr, "tiletuned: cannot load templates/targets: %s%s%s\n", err.path,
                err.path[0] ? ": " : "", err.msg);
        *code = TT_EXIT_CONFIG;
        return NULL;
    }
    if (tt_targets_count(tt_catalog_targets(cat)) == 0) {   /* nothing could be tuned */
        fprintf(stderr, "tiletuned: no chip descriptions (*.json) in the targets directory %s\n",
                tt_config_str(cfg, TT_CFG_TARGETS_DIR));
        tt_catalog_free(cat);
        *code = TT_EXIT_CONFIG;
        return NULL;
    }
    return cat;
}

static pthread_t tt_main_thread;

/* A stop signal that reached a thread which does not block it: one a library started before
 * main (OpenBLAS starts its pool when it is loaded), so the mask below never covered it.  The
 * kernel picks such a thread when the main thread cannot take the signal (just after a
 * SIGCONT, for one), and the default action ended the daemon at once, without its shutdown.
 * It is handed to the main thread, whose sigwait takes it as usual. */
static void tt_forward_signal(int sig)
{
    int e = errno;
    pthread_kill(tt_main_thread, sig);
    errno = e;
}

/* Block the stop signals in every thread; the main thread waits for them.  SIGPIPE and
 * SIGXFSZ are ignored: a closed peer and a file grown past RLIMIT_FSIZE (ulimit -f) come back
 * as write errors (EPIPE, EFBIG), which the store reports (a job fails naming them), instead
 * of killing the daemon without a word in its log. */
static void tt_block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    tt_main_thread = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tt_forward_signal;
    sigfillset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
}

/* Wait for SIGTERM or SIGINT and return it; SIGHUP reopens the log file on the way (for
 * logrotate; it used to stop the daemon with the signal's default action). */
static int tt_wait_stop_signal(const sigset_t *set, const char *log_file)
{
    int sig = 0;
    while (sigwait(set, &sig) == 0 && sig == SIGHUP) {
        if (tt_log_reopen(log_file))
            tt_error("SIGHUP: cannot reopen the log file %s: %s", log_file, strerror(errno));
        else
            tt_info("SIGHUP: log file reopened");
    }
    return sig;
}

/* Connections are file descriptors: take the hard limit (max_connections + reserve + the
 * database and log need more than the usual soft limit of 1024). */
static void tt_raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl)) tt_warning("cannot raise the open-file limit");
    }
}

/* The HTTP server's options from the config (limits, timeouts, budgets by tier). */
static void tt_http_opts_from_config(const tt_config *cfg, tt_http_opts *ho)
{
    memset(ho, 0, sizeof *ho);
    ho->listen = tt_config_str(cfg, TT_CFG_LISTEN);
    ho->timeout_s = (int)tt_config_int(cfg, TT_CFG_REQUEST_TIMEOUT);
    ho->max_connections = (int)tt_config_int(cfg, TT_CFG_MAX_CONNECTIONS);
    ho->reserve = (int)tt_config_int(cfg, TT_CFG_CONNECTION_RESERVE);
    ho->max_per_ip = (int)tt_config_int(cfg, TT_CFG_MAX_CONNECTIONS_PER_IP);
    ho->header_timeout_s = tt_config_num(cfg, TT_CFG_HEADER_TIMEOUT);
    ho->body_timeout_s = tt_config_num(cfg, TT_CFG_BODY_TIMEOUT);
    ho->threads = (int)tt_config_int(cfg, TT_CFG_HTTP_THREADS);
    ho->max_heavy = (int)tt_config_int(cfg, TT_CFG_MAX_HEAVY_REQUESTS);
    ho->turbo = 1;
    ho->anon.tier = "anon";
    ho->anon.predict_work = tt_config_num(cfg, TT_CFG_PREDICT_WORK_ANON);
    ho->anon.sim_events = tt_config_int(cfg, TT_CFG_SIMULATE_EVENTS_ANON);
    ho->token.tier = "token";
    ho->token.predict_work = tt_config_num(cfg, TT_CFG_PREDICT_WORK_TOKEN);
    ho->token.sim_events = tt_config_int(cfg, TT_CFG_SIMULATE_EVENTS_TOKEN);
    ho->anon.trace_bytes = ho->token.trace_bytes = (size_t)tt_config_int(cfg, TT_CFG_MAX_TRACE_BYTES);
    ho->seconds_anon = tt_config_num(cfg, TT_CFG_REQUEST_SECONDS_ANON);
    ho->seconds_token = tt_config_num(cfg, TT_CFG_REQUEST_SECONDS_TOKEN);
}

/* The configured tokens (config file only: the store keeps a record, so removing a token
 * and restarting revokes it).  NULL with *code set on a bad token. */
static tt_auth *tt_open_auth(const tt_config *cfg, tt_store *store, int *code)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_auth *auth = tt_auth_new();
    size_t i;
    json_t *t;
    json_array_foreach(tt_config_json(cfg, TT_CFG_TOKENS), i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        const char *sha = json_string_value(json_object_get(t, "secret_sha256"));
        const char *sc = json_string_value(json_object_get(t, "scopes"));
        if (!auth || tt_auth_add(auth, name, sha, sc, &err)) {
            tt_fatal("token %zu: %s", i, auth ? err.msg : "out of memory");
            tt_auth_free(auth);
            *code = TT_EXIT_CONFIG;
            return NULL;
        }
        char lower[65];
        for (int k = 0; k < 64; k++) lower[k] = (char)(sha[k] | 0x20);
        lower[64] = '\0';
        if (tt_store_token_put(store, name, lower, sc))
            tt_warning("cannot store token %s: %s", name, tt_store_errmsg(store));
    }
    if (!auth) *code = TT_EXIT_FAIL;
    return auth;
}

/* The API's view of the daemon: shared objects and the request limits of the config. */
static void tt_server_fill(tt_server *srv, const tt_config *cfg, tt_store *store,
                           tt_catalog *cat, const tt_runner_config *rcfg, const json_t *cfgjson)
{
    memset(srv, 0, sizeof *srv);
    srv->store = store;
    srv->catalog = cat;
    srv->runner_cfg = *rcfg;
    srv->config = cfgjson;
    srv->max_body_bytes = (size_t)tt_config_int(cfg, TT_CFG_MAX_BODY_BYTES);
    srv->max_json_depth = (int)tt_config_int(cfg, TT_CFG_MAX_JSON_DEPTH);
    srv->max_space = tt_config_num(cfg, TT_CFG_MAX_SPACE);
    srv->max_jobs_per_token = (int)tt_config_int(cfg, TT_CFG_MAX_JOBS_PER_TOKEN);
    srv->open_reads = (int)tt_config_int(cfg, TT_CFG_OPEN_READS);
    srv->ui = (int)tt_config_int(cfg, TT_CFG_UI);
    srv->max_import_bytes = (size_t)tt_config_int(cfg, TT_CFG_MAX_IMPORT_BYTES);
    srv->max_import_bytes_admin = (size_t)tt_config_int(cfg, TT_CFG_MAX_IMPORT_BYTES_ADMIN);
}


/* ---- serve / worker ----------------------------------------------------------------- */
/* Start the HTTP API (not ready until the workers run: /readyz says "runner not running").
 * Returns TT_EXIT_OK, or TT_EXIT_LISTEN after logging why; *http, *metrics and *cfgjson are
 * the caller's to free either way. */
static int tt_serve_http(const tt_config *cfg, tt_store *store, tt_catalog *cat,
                         const tt_runner_config *rcfg, tt_auth *auth, tt_http **http,
                         tt_metrics **metrics, json_t **cfgjson)
{
    static tt_server srv;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    *cfgjson = tt_config_to_json(cfg, 1, 1);
    *metrics = tt_metrics_new(tt__route_names(), tt__route_count());
    tt__api_set_metrics(*metrics);
    tt_server_fill(&srv, cfg, store, cat, rcfg, *cfgjson);
    tt_http_opts ho;
    tt_http_opts_from_config(cfg, &ho);
    if (tt_http_start(&srv, auth, &ho, http, &err)) {
        tt_fatal("%s", err.msg);
        return TT_EXIT_LISTEN;
    }
    return TT_EXIT_OK;
}

/* "unknown option --x", with the nearest configuration flag when one is close. */
static void tt_unknown_option(const char *arg)
{
    const char *name = arg;
    while (*name == '-') name++;
    char flag[64] = "", ph[96];
    const char *hint = name != arg ? tt_config_suggest(name) : NULL;
    if (hint) {   /* the key as a flag: max_space -> max-space */
        size_t i = 0;
        for (; hint[i] && i < sizeof flag - 1; i++) flag[i] = hint[i] == '_' ? '-' : hint[i];
        flag[i] = '\0';
    }
    fprintf(stderr, "tiletuned: unknown option %s%s (see --help)\n", arg,
            tt_suggest_phrase(ph, sizeof ph, hint ? flag : NULL, "--"));
}

static int tt_cmd_daemon(int argc, char **argv, int serve)
{
    tt_config cfg;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest) return TT_EXIT_FAIL;
    int code = tt_load_config(&cfg, argc, argv, rest, &nrest);
    if (!code && nrest) {
        tt_unknown_option(rest[0]);
        code = TT_EXIT_USAGE;
    }
    free(rest);
    if (!code) code = tt_open_log(&cfg);
    if (!code && !serve && tt_config_int(&cfg, TT_CFG_WORKERS) < 1) {
        fprintf(stderr, "tiletuned: worker: --workers must be at least 1\n");
        code = TT_EXIT_CONFIG;
    }
    if (code) { tt_config_close(&cfg); return code; }

    sigset_t sigs;
    tt_block_signals(&sigs);
    tt_raise_fd_limit();
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_catalog *cat = NULL;
    tt_store *store = NULL;
    tt_auth *auth = NULL;
    tt_runner *runner = NULL;
    tt_http *http = NULL;
    tt_metrics *metrics = NULL;
    json_t *cfgjson = NULL;
    const char *db = tt_config_str(&cfg, TT_CFG_DB);
    char db_shown[1024];   /* logged without its password */
    tt_config_url_redact(db, db_shown, sizeof db_shown);

    if (!(cat = tt_open_catalog(&cfg, &code))) goto out;
    if (tt_store_open(db, &store, &err)) {
        tt_fatal("cannot open database %s: %s", db_shown, err.msg);
        code = TT_EXIT_STORE;
        goto out;
    }
    if (tt_catalog_sync(cat, store)) tt_warning("cannot store the built-in templates");
    if (serve && !(auth = tt_open_auth(&cfg, store, &code))) goto out;
    tt_runner_config rcfg;
    tt_runner_cfg(&cfg, cat, &rcfg);
    if (rcfg.workers > 0 && tt_runner_check(&rcfg, &err)) {   /* before any job is touched */
        tt_fatal("%s", err.msg);
        code = TT_EXIT_CONFIG;
        goto out;
    }
    /* listen before touching any job: a second daemon on a port in use (exit 7) must not
     * release the running daemon's leases nor claim its jobs */
    if (serve && (code = tt_serve_http(&cfg, store, cat, &rcfg, auth, &http, &metrics, &cfgjson)))
        goto out;
    if (serve && tt_store_engine_of(store) == TT_STORE_SQLITE) {
        /* single host: jobs left running by a previous process resume now */
        if (tt_store_job_release_all(store)) tt_warning("cannot release old job leases");
    }
    if (rcfg.workers > 0) {
        if (tt_runner_start(&rcfg, &runner, &err)) {
            tt_fatal("cannot start the workers: %s", err.msg);
            code = TT_EXIT_FAIL;
            goto out;
        }
        tt__api_set_runner(runner);
        tt__api_set_runner_state(1);
    } else {
        tt__api_set_runner_state(-1);   /* API only, on purpose */
    }
    if (serve)
        tt_info("tiletuned %s listening on %s (port %d), db %s, %d workers, %zu tokens, "
                "open reads %s", TT_VERSION, tt_config_str(&cfg, TT_CFG_LISTEN),
                tt_http_port(http), db_shown, rcfg.workers, tt_auth_count(auth),
                tt_config_int(&cfg, TT_CFG_OPEN_READS) ? "yes" : "no");
    else
        tt_info("tiletuned worker %s: db %s, %d workers", TT_VERSION, db_shown, rcfg.workers);
    int sig = tt_wait_stop_signal(&sigs, tt_config_str(&cfg, TT_CFG_LOG_FILE));
    tt_info("signal %d: stopping (running jobs stay resumable)", sig);
    code = TT_EXIT_OK;
out:
    /* stop accepting, hand back in-flight requests (503), end SSE streams */
    if (tt_http_stop(http, tt_config_num(&cfg, TT_CFG_SHUTDOWN_GRACE))) {
        tt_info("stopped (a request was still running after shutdown_grace)");
        tt_log_close();
        _exit(TT_EXIT_OK);          /* its handler may still use the store: do not close it */
    }
    tt__api_set_runner(NULL);
    tt_runner_stop(runner);         /* workers finish their current trial */
    tt__api_set_runner_state(0);
    tt__api_set_metrics(NULL);
    tt_metrics_free(metrics);
    tt_store_close(store);
    tt_catalog_free(cat);
    tt_auth_free(auth);
    json_decref(cfgjson);
    if (code == TT_EXIT_OK) tt_info("stopped");
    tt_log_close();
    tt_config_close(&cfg);
    return code;
}

/* ---- offline commands --------------------------------------------------------------- */
typedef struct tt_cli {
    const char *tmpl, *target, *problem, *config, *trace;
    int top, json, show, sample;
} tt_cli;

static int tt_exit_of(tt_rc rc)
{
    switch (rc) {
    case TT_OK: return TT_EXIT_OK;
    case TT_ENOTFOUND: case TT_ETARGET: return TT_EXIT_NOTFOUND;
    case TT_EIO: case TT_ENOMEM: case TT_EINTERNAL: return TT_EXIT_FAIL;
    default: return TT_EXIT_INVALID;
    }
}

static int tt_report(const char *what, tt_rc rc, const tt_errinfo *e)
{
    const char *msg = e->msg[0] ? e->msg : tt_strerror(rc);
    int named = strstr(msg, what) != NULL;   /* "cannot open FILE: ..." names it already */
    fprintf(stderr, "tiletuned: %s%s%s%s%s\n", named ? "" : what, named ? "" : ": ", e->path,
            e->path[0] ? ": " : "", msg);
    return tt_exit_of(rc);
}

/* Template by file (a path that exists) or by name from the catalog. */
static tt_rc tt_cli_template(tt_catalog *cat, const char *arg, tt_template **owned,
                             const tt_template **t, tt_errinfo *err)
{
    struct stat st;
    *owned = NULL;
    if (stat(arg, &st) == 0 && S_ISREG(st.st_mode)) {
        tt_rc rc = tt_tmpl_parse_file(arg, owned, err);
        *t = *owned;
        return rc;
    }
    tt_rc rc = tt_catalog_template(cat, NULL, arg, NULL, t, err);
    if (rc == TT_ENOTFOUND)
        return tt_errf(err, TT_ENOTFOUND, "template", "no template file or built-in named %s",
                       arg);
    return rc;
}

static int tt_cmd_model(int argc, char **argv, int simulate)
{
    tt_config cfg;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest) return TT_EXIT_FAIL;
    int code = tt_load_config(&cfg, argc, argv, rest, &nrest);
    tt_cli c = {NULL, NULL, NULL, NULL, NULL, 10, 0, 0, 0};
    for (int i = 0; !code && i < nrest; i++) {
        const char *a = rest[i];
        const char **dst = !strcmp(a, "--template") ? &c.tmpl
                           : !strcmp(a, "--target") ? &c.target
                           : !strcmp(a, "--problem") || !strcmp(a, "-p") ? &c.problem
                           : !strcmp(a, "--config") ? &c.config
                           : !strcmp(a, "--trace") && simulate ? &c.trace : NULL;
        if (dst && i + 1 < nrest) { *dst = rest[++i]; continue; }
        if (!strcmp(a, "--json")) { c.json = 1; continue; }
        if (!strcmp(a, "--top") && !simulate && i + 1 < nrest) {
            char *end;
            long top = strtol(rest[++i], &end, 10);
            c.top = (int)top;
            if (end != rest[i] && !*end && top >= 1 && top <= 1000) continue;
            a = rest[i];   /* the value is what is wrong: "5x", "0" */
        }
        fprintf(stderr, "tiletuned: bad argument %s (see --help)\n", a);
        code = TT_EXIT_USAGE;
    }
    free(rest);
    if (!code && (!c.tmpl || !c.target || !c.problem || (simulate && !c.config))) {
        fprintf(stderr, "tiletuned: %s needs --template, --target, --problem%s\n",
                simulate ? "simulate" : "predict", simulate ? " and --config" : "");
        code = TT_EXIT_USAGE;
    }
    if (code) { tt_config_close(&cfg); return code; }
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_catalog *cat = tt_open_catalog(&cfg, &code);
    tt_template *owned = NULL;
    const tt_template *t = NULL;
    json_t *a = NULL;
    tt_rc rc;
    if (!cat) goto out;
    const tt_target *tgt = tt_catalog_target(cat, c.target);
    if (!tgt) {
        fprintf(stderr, "tiletuned: unknown target %s (tiletuned targets)\n", c.target);
        code = TT_EXIT_NOTFOUND;
        goto out;
    }
    if ((rc = tt_cli_template(cat, c.tmpl, &owned, &t, &err))) {
        code = tt_report(c.tmpl, rc, &err);
        goto out;
    }
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    if ((rc = tt_tmpl_problem_parse(t, c.problem, slots, &err))) {
        code = tt_report("--problem", rc, &err);
        goto out;
    }
    if (simulate) {
        if ((rc = tt_tmpl_config_parse(t, c.config, slots, &err))) {
            code = tt_report("--config", rc, &err);
            goto out;
        }
        a = tt__sim_run(t, tgt, slots, c.trace ? 0 : -1, NULL, &err);
    } else {
        json_t *cfgs = NULL;
        if (c.config) cfgs = json_pack("[s]", c.config);
        a = tt__model_predict(t, tgt, slots, cfgs, c.top, tt_config_num(&cfg, TT_CFG_MAX_SPACE),
                              NULL, &err);
        json_decref(cfgs);
    }
    if (!a) {
        code = tt_report(simulate ? "simulate" : "predict", err.rc, &err);
        goto out;
    }
    if (c.trace) {
        json_t *tr = json_object_get(a, "trace");
        if (!tr || json_dump_file(tr, c.trace, JSON_COMPACT)) {
            fprintf(stderr, "tiletuned: cannot write trace %s\n", c.trace);
            code = TT_EXIT_FAIL;
            goto out;
        }
        json_object_del(a, "trace");
        json_object_set_new(a, "trace_file", json_string(c.trace));
    }
    if (c.json) {
        char *s = tt_json_dumps(a, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s) puts(s);
        free(s);
    } else {
        char *s = simulate ? tt__sim_text(a) : tt__predict_text(a);
        if (s) fputs(s, stdout);
        if (c.trace) printf("trace written to %s (open in https://ui.perfetto.dev)\n", c.trace);
        free(s);
    }
out:
    json_decref(a);
    tt_tmpl_free(owned);
    tt_catalog_free(cat);
    tt_config_close(&cfg);
    return code;
}

static int tt_cmd_validate(int argc, char **argv)
{
    if (argc != 3 || argv[2][0] == '-') {
        fprintf(stderr, "usage: tiletuned validate FILE\n");
        return TT_EXIT_USAGE;
    }
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_template *t = NULL;
    tt_rc rc = tt_tmpl_parse_file(argv[2], &t, &err);
    if (rc) return tt_report(argv[2], rc, &err);
    double total = 1;
    for (size_t i = 0; i < t->nparams; i++) total *= (double)t->params[i].nvalues;
    printf("%s: ok: template %s version %s hash %s, %zu inputs, %zu params (%.0f configs "
           "before constraints), %s\n", argv[2], t->name, t->version ? t->version : "-",
           t->hash, t->ninputs, t->nparams, total, t->kernel ? "with kernel" : "no kernel");
    tt_tmpl_free(t);
    return TT_EXIT_OK;
}

static int tt_cmd_targets(int argc, char **argv)
{
    tt_config cfg;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0, json = 0;
    if (!rest) return TT_EXIT_FAIL;
    int code = tt_load_config(&cfg, argc, argv, rest, &nrest);
    for (int i = 0; !code && i < nrest; i++) {
        if (!strcmp(rest[i], "--json")) json = 1;
        else { fprintf(stderr, "tiletuned: bad argument %s\n", rest[i]); code = TT_EXIT_USAGE; }
    }
    free(rest);
    tt_catalog *cat = code ? NULL : tt_open_catalog(&cfg, &code);
    if (cat) {
        const tt_targets *ts = tt_catalog_targets(cat);
        json_t *arr = json_array();
        if (!json) printf("%-14s %-3s %5s %5s %8s  %s\n", "name", "", "cube", "vec", "MHz", "aliases");
        for (size_t i = 0; i < tt_targets_count(ts); i++) {
            const tt_target *t = tt_targets_at(ts, i);
            char al[256] = "";
            json_t *aj = json_array();
            for (int k = 0; k < t->naliases; k++) {
                size_t used = strlen(al);
                snprintf(al + used, sizeof al - used, "%s%s", k ? "," : "", t->aliases[k]);
                json_array_append_new(aj, json_string(t->aliases[k]));
            }
            if (json)
                json_array_append_new(arr, json_pack("{s:s, s:s, s:i, s:i, s:f, s:o}", "name",
                                                     t->name, "platform", t->platform,
                                                     "cube_cores", t->cube_cores, "vector_cores",
                                                     t->vector_cores, "clock_mhz", t->clock_mhz,
                                                     "aliases", aj));
            else {
                json_decref(aj);
                printf("%-14s %-3s %5d %5d %8.0f  %s\n", t->name, t->platform, t->cube_cores,
                       t->vector_cores, t->clock_mhz, al);
            }
        }
        if (json) {
            char *s = tt_json_dumps(arr, JSON_INDENT(2));
            if (s) puts(s);
            free(s);
        }
        json_decref(arr);
    }
    tt_catalog_free(cat);
    tt_config_close(&cfg);
    return code;
}

static int tt_cmd_config(int argc, char **argv)
{
    tt_config cfg;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0, json = 0, show = 0, sample = 0;
    if (!rest) return TT_EXIT_FAIL;
    int code = tt_load_config(&cfg, argc, argv, rest, &nrest);
    for (int i = 0; !code && i < nrest; i++) {
        if (!strcmp(rest[i], "--json")) json = 1;
        else if (!strcmp(rest[i], "--show")) show = 1;
        else if (!strcmp(rest[i], "--sample")) sample = 1;
        else if (strcmp(rest[i], "config")) {
            fprintf(stderr, "tiletuned: bad argument %s\n", rest[i]);
            code = TT_EXIT_USAGE;
        }
    }
    free(rest);
    if (!code && sample) {
        char *s = tt_config_sample_text();
        if (s) fputs(s, stdout);
        free(s);
    } else if (!code && (show || json)) {
        json_t *o = tt_config_to_json(&cfg, 1, 1);
        if (json) {
            char *s = tt_json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            if (s) puts(s);
            free(s);
        } else {
            const char *k;
            json_t *v;
            json_object_foreach(o, k, v) {
                char *val = tt_json_dumps(json_object_get(v, "value"), JSON_COMPACT | JSON_ENCODE_ANY);
                const char *origin = json_string_value(json_object_get(v, "origin"));
                printf("%-20s %-8s %s%s%s%s\n", k,
                       json_string_value(json_object_get(v, "source")), val ? val : "",
                       origin && *origin ? "  (" : "", origin ? origin : "",
                       origin && *origin ? ")" : "");
                free(val);
            }
        }
        json_decref(o);
    } else if (!code) {
        fprintf(stderr, "usage: tiletuned config --show|--sample [--json] [options]\n");
        code = TT_EXIT_USAGE;
    }
    tt_config_close(&cfg);
    return code;
}

static int tt_cmd_hash_token(int argc, char **argv)
{
    char buf[4096];
    const char *secret;
    size_t len;
    if (argc > 3) {
        fprintf(stderr, "usage: tiletuned hash-token [SECRET]  (one secret; stdin if omitted)\n");
        return TT_EXIT_USAGE;
    }
    if (argc == 3) {
        secret = argv[2];
        len = strlen(secret);
    } else {
        len = fread(buf, 1, sizeof buf - 1, stdin);
        if (len == sizeof buf - 1 && fgetc(stdin) != EOF) {   /* never hash a cut secret */
            fprintf(stderr, "tiletuned: secret longer than %zu bytes\n", sizeof buf - 2);
            return TT_EXIT_USAGE;
        }
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) len--;
        buf[len] = '\0';
        secret = buf;
    }
    if (!len) { fprintf(stderr, "tiletuned: empty secret\n"); return TT_EXIT_USAGE; }
    char hex[65];
    tt_sha256_hex(secret, len, hex);
    puts(hex);
    return TT_EXIT_OK;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "serve";
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        tt_print_help();
        return TT_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("tiletuned %s\n", TT_VERSION);
        return TT_EXIT_OK;
    }
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help")) { tt_print_help(); return TT_EXIT_OK; }
    /* a leading option means "serve" with options */
    if (cmd[0] == '-') return tt_cmd_daemon(argc, argv, 1);
    /* subcommands see argv shifted by one (their own name is argv[0]) */
    if (!strcmp(cmd, "serve")) return tt_cmd_daemon(argc - 1, argv + 1, 1);
    if (!strcmp(cmd, "worker")) return tt_cmd_daemon(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "predict")) return tt_cmd_model(argc - 1, argv + 1, 0);
    if (!strcmp(cmd, "simulate")) return tt_cmd_model(argc - 1, argv + 1, 1);
    if (!strcmp(cmd, "validate")) return tt_cmd_validate(argc, argv);
    if (!strcmp(cmd, "targets")) return tt_cmd_targets(argc - 1, argv + 1);
    if (!strcmp(cmd, "config")) return tt_cmd_config(argc - 1, argv + 1);
    if (!strcmp(cmd, "hash-token")) return tt_cmd_hash_token(argc, argv);
    static const char *const cmds[] = {"serve", "worker", "predict", "simulate", "validate",
                                       "targets", "config", "hash-token"};
    const char *hint = tt_suggest(cmd, strlen(cmd), cmds, sizeof cmds / sizeof cmds[0]);
    char ph[96];
    fprintf(stderr, "tiletuned: unknown command %s%s (see tiletuned --help)\n", cmd,
            tt_suggest_phrase(ph, sizeof ph, hint, ""));
    return TT_EXIT_USAGE;
}

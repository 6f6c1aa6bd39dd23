/* SPDX-License-Identifier: MIT
 * test_cli.c - the tiletuned command line: help generated from the config table, exit codes,
 * predict/simulate output (labelled model / simulator), validate, targets, config --show
 * with sources, hash-token, and a daemon that cannot start (bad config, address in use: no
 * job of the daemon holding the port is touched).
 * Suite cli_tlctl: tlctl against a live daemon (tt_daemon): every trial with --trials (a
 * failed one with its error), best
 * and check for a template without inputs, non-UTF-8 arguments in JSON bodies, config-file
 * values, job-id overflow and --width checked before any request.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auth.h"
#include "config.h"
#include "store.h"
#include "tt_daemon.h"
#include "tt_test.h"

static char *g_bin, *g_tmp;

static int suite_init(void)
{
    g_bin = tt_test_bin("tiletuned");
    g_tmp = tt_test_tmpdir("tt-cli");
    return g_bin && g_tmp && access(g_bin, X_OK) == 0 ? 0 : 1;
}

static int suite_clean(void)
{
    tt_test_rmrf(g_tmp);
    free(g_tmp);
    free(g_bin);
    return 0;
}

/* Run "BIN ARGS" through the shell (env prefix allowed); stdout into *out (malloc'd),
 * stderr into *err.  Returns the exit status. */
static int run_bin(const char *bin, const char *env, const char *args, char **out, char **err)
{
    char cmd[4096], ep[600];
    snprintf(ep, sizeof ep, "%s/stderr", g_tmp);
    snprintf(cmd, sizeof cmd, "%s '%s' %s 2>'%s'", env ? env : "", bin, args, ep);
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 4096) buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    int st = pclose(f);
    if (out) *out = buf;
    else free(buf);
    if (err) {
        *err = tt_test_read_file(ep, NULL);
        if (!*err) *err = strdup("");
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "tiletuned ARGS" */
static int run(const char *env, const char *args, char **out, char **err)
{
    return run_bin(g_bin, env, args, out, err);
}

static void test_help_version(void)
{
    char *out, *err;
    CU_ASSERT_EQUAL(run(NULL, "--help", &out, &err), 0);
    for (int i = 0; i < TT_CFG__COUNT; i++) {
        char flag[64];
        snprintf(flag, sizeof flag, "--%s", tt_config_row((tt_cfg_id)i)->key);
        for (char *p = flag; *p; p++)
            if (*p == '_') *p = '-';
        CU_ASSERT(strstr(out, flag) != NULL);
    }
    CU_ASSERT(strstr(out, "exit codes") != NULL);
    free(out);
    free(err);
    CU_ASSERT_EQUAL(run(NULL, "--version", &out, NULL), 0);
    CU_ASSERT(!strncmp(out, "tiletuned ", 10));
    free(out);
    CU_ASSERT_EQUAL(run(NULL, "frobnicate", NULL, &err), 2);
    CU_ASSERT(strstr(err, "unknown command") != NULL);
    free(err);
    CU_ASSERT_EQUAL(run(NULL, "predict --target a2", NULL, NULL), 2);
    CU_ASSERT_EQUAL(run(NULL, "serve --no-such-flag 1", NULL, &err), 2);
    CU_ASSERT(strstr(err, "unknown option --no-such-flag (see --help)") != NULL);   /* no hint */
    free(err);
    /* a mistyped name gets the nearest one */
    static const struct { const char *args, *want; } typos[] = {
        {"simlate", "unknown command simlate; did you mean simulate?"},
        {"serve --worker 3", "unknown option --worker; did you mean --workers?"},
        {"serve --datasets /tmp", "unknown option --datasets; did you mean --datasets-dir?"},
    };
    for (size_t i = 0; i < sizeof typos / sizeof typos[0]; i++) {
        CU_ASSERT_EQUAL(run(NULL, typos[i].args, NULL, &err), 2);
        if (!strstr(err, typos[i].want)) fprintf(stderr, "%s: %s\n", typos[i].args, err);
        CU_ASSERT(strstr(err, typos[i].want) != NULL);
        free(err);
    }
}

static void test_predict(void)
{
    char *out, *err;
    CU_ASSERT_EQUAL(run(NULL, "predict --template gemm --target a2 --problem "
                              "M=4096,N=4096,K=4096,dtype=float16 --top 4 --json", &out, &err), 0);
    json_t *j = json_loads(out, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "source")), "model");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(j, "space"), "total")), 1228800);
    CU_ASSERT(json_integer_value(json_object_get(json_object_get(j, "space"), "feasible")) > 0);
    json_t *res = json_object_get(j, "results");
    CU_ASSERT_EQUAL(json_array_size(res), 4);
    json_t *r0 = json_array_get(res, 0);
    CU_ASSERT(json_is_object(json_object_get(r0, "config")));
    CU_ASSERT(json_number_value(json_object_get(r0, "time_us")) > 0);
    CU_ASSERT(json_is_string(json_object_get(r0, "bound")));
    json_decref(j);
    free(out);
    free(err);
    /* text form: counts, rejections by reason, the model label */
    CU_ASSERT_EQUAL(run(NULL, "predict --template gemm --target a2 --problem "
                              "M=4096,N=4096,K=4096 --top 3", &out, NULL), 0);
    CU_ASSERT(strstr(out, "space: total 1228800, feasible") != NULL);
    CU_ASSERT(strstr(out, "rejected") != NULL && strstr(out, "capacity") != NULL);
    CU_ASSERT(strstr(out, "analytic model, not measured") != NULL);
    free(out);
    /* one config from a template file */
    char args[1024];
    char *tf = tt_test_src("templates/gemm.json");
    snprintf(args, sizeof args, "predict --template '%s' --target a3 --problem M=512,N=512,K=512 "
             "--config block_M=128,block_N=128,block_K=64,K_L1=128,S1=2,S2=2 --json", tf);
    CU_ASSERT_EQUAL(run(NULL, args, &out, NULL), 0);
    j = json_loads(out, 0, NULL);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "results")), 1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "target")), "Ascend910_9382");
    json_decref(j);
    free(out);
    free(tf);
    /* errors: unknown target 5, bad problem 4, bad config value 4 */
    CU_ASSERT_EQUAL(run(NULL, "predict --template gemm --target h100 --problem M=1,N=1,K=1", NULL, NULL), 5);
    CU_ASSERT_EQUAL(run(NULL, "predict --template nope --target a2 --problem M=1,N=1,K=1", NULL, NULL), 5);
    CU_ASSERT_EQUAL(run(NULL, "predict --template gemm --target a2 --problem M=1", NULL, &err), 4);
    CU_ASSERT(strstr(err, "problem") != NULL);
    free(err);
    CU_ASSERT_EQUAL(run(NULL, "predict --template gemm --target a2 --problem M=64,N=64,K=64 "
                              "--config block_M=7,block_N=64,block_K=64,K_L1=64,S1=1,S2=1", NULL, NULL), 4);
}

static void test_simulate(void)
{
    char args[1024], *out;
    char trace[600];
    snprintf(trace, sizeof trace, "%s/trace.json", g_tmp);
    snprintf(args, sizeof args, "simulate --template gemm --target a3 --problem M=1024,N=1024,K=1024 "
             "--config block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2 --trace '%s' --json",
             trace);
    CU_ASSERT_EQUAL(run(NULL, args, &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "source")), "sim");
    CU_ASSERT(json_number_value(json_object_get(j, "time_us")) > 0);
    CU_ASSERT_PTR_NULL(json_object_get(j, "trace"));           /* written to the file */
    json_decref(j);
    free(out);
    json_t *t = json_load_file(trace, 0, NULL);
    CU_ASSERT(json_is_array(t) || json_is_object(t));
    json_t *evs = json_is_array(t) ? t : json_object_get(t, "traceEvents");
    CU_ASSERT(json_array_size(evs) > 10);
    CU_ASSERT(json_is_string(json_object_get(json_array_get(evs, 1), "ph")));
    json_decref(t);
    CU_ASSERT_EQUAL(run(NULL, "simulate --template gemm --target a3 --problem M=1024,N=1024,K=1024 "
                              "--config block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", &out, NULL), 0);
    CU_ASSERT(strstr(out, "simulated time:") != NULL && strstr(out, "not hardware") != NULL);
    free(out);
    /* infeasible: K_L1 % block_K != 0 */
    CU_ASSERT_EQUAL(run(NULL, "simulate --template gemm --target a3 --problem M=1024,N=1024,K=1024 "
                              "--config block_M=128,block_N=256,block_K=256,K_L1=96,S1=2,S2=2", NULL, NULL), 4);
}

static void test_validate_targets(void)
{
    char *out, *err, args[1024];
    char *tf = tt_test_src("templates/gemm.json");
    snprintf(args, sizeof args, "validate '%s'", tf);
    CU_ASSERT_EQUAL(run(NULL, args, &out, NULL), 0);
    CU_ASSERT(strstr(out, "ok: template gemm") != NULL);
    free(out);
    free(tf);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.json", g_tmp);
    FILE *f = fopen(bad, "w");
    fputs("{\"tiletune\": 1, \"name\": \"b\", \"inputs\": {\"N\": \"int\"}, \"params\": {\"x\": [1, \"y\"]}}", f);
    fclose(f);
    snprintf(args, sizeof args, "validate '%s'", bad);
    CU_ASSERT_EQUAL(run(NULL, args, NULL, &err), 4);
    CU_ASSERT(strstr(err, "params.x") != NULL);
    free(err);
    /* a template saved with a UTF-8 byte order mark (old code: exit 4, "'[' or '{' expected") */
    snprintf(bad, sizeof bad, "%s/bom.json", g_tmp);
    f = fopen(bad, "w");
    fputs("\xEF\xBB\xBF{\"tiletune\": 1, \"name\": \"b\", \"inputs\": {\"N\": \"int\"}, "
          "\"params\": {\"x\": [1, 2]}}", f);
    fclose(f);
    snprintf(args, sizeof args, "validate '%s'", bad);
    CU_ASSERT_EQUAL(run(NULL, args, &out, NULL), 0);
    CU_ASSERT(out && strstr(out, "ok: template b") != NULL);
    free(out);
    /* the path once (old code: "tiletuned: /nonexistent.json: cannot open /nonexistent.json") */
    CU_ASSERT_EQUAL(run(NULL, "validate /nonexistent.json", NULL, &err), 1);
    CU_ASSERT_STRING_EQUAL(err, "tiletuned: cannot open /nonexistent.json: No such file or "
                                "directory\n");
    free(err);
    CU_ASSERT_EQUAL(run(NULL, "validate /tmp", NULL, &err), 1);   /* old code: no reason */
    CU_ASSERT_STRING_EQUAL(err, "tiletuned: cannot read /tmp: Is a directory\n");
    free(err);
    CU_ASSERT_EQUAL(run(NULL, "targets --json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    CU_ASSERT(json_array_size(j) >= 10);
    json_decref(j);
    free(out);
    CU_ASSERT_EQUAL(run(NULL, "targets", &out, NULL), 0);
    CU_ASSERT(strstr(out, "Ascend910B2") != NULL && strstr(out, "a2") != NULL);
    free(out);
    /* a targets directory without chip descriptions: exit 3 naming it (targets listed none
     * with exit 0, and serve started a daemon that could tune nothing) */
    char empty[700];
    snprintf(empty, sizeof empty, "%s/no-targets", g_tmp);
    mkdir(empty, 0755);
    static const char *const cmds[] = {"targets", "serve --listen 127.0.0.1:0 --workers 0"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(args, sizeof args, "%s --targets-dir '%s' --db 'sqlite:%s/e.db'", cmds[i], empty,
                 g_tmp);
        CU_ASSERT_EQUAL(run("timeout 10", args, NULL, &err), 3);   /* not a running daemon */
        CU_ASSERT(strstr(err, "no chip descriptions") && strstr(err, empty));
        free(err);
    }
}

static void test_config_show(void)
{
    char cfg[600], args[1024], want[800], *out, *err;
    snprintf(cfg, sizeof cfg, "%s/c.json", g_tmp);
    FILE *f = fopen(cfg, "w");
    fputs("{\"workers\": 3, \"listen\": \"127.0.0.1:9999\", \"max_space\": 5000}", f);
    fclose(f);
    snprintf(args, sizeof args, "config --show --json --config-file '%s' --max-space 7000", cfg);
    CU_ASSERT_EQUAL(run("TILETUNE_WORKERS=4 TILETUNE_LOG_LEVEL=debug", args, &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    json_t *w = json_object_get(j, "workers"), *l = json_object_get(j, "listen"),
           *m = json_object_get(j, "max_space"), *d = json_object_get(j, "db");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(w, "value")), 4);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(w, "source")), "env");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(l, "source")), "file");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(l, "origin")), cfg);
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(m, "value")), 7000, 1e-9);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(m, "source")), "flag");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(d, "source")), "default");
    json_decref(j);
    free(out);
    CU_ASSERT_EQUAL(run("TILETUNE_WORKERS=lots", "config --show", NULL, &err), 3);
    CU_ASSERT(strstr(err, "workers") != NULL);
    free(err);
    /* the file named once (old code: "config file F: F: cannot open: ...") */
    snprintf(args, sizeof args, "config --show --config-file '%s/none.json'", g_tmp);
    CU_ASSERT_EQUAL(run(NULL, args, NULL, &err), 3);
    snprintf(want, sizeof want, "tiletuned: config file %s/none.json: cannot open: No such file "
             "or directory\n", g_tmp);
    CU_ASSERT_STRING_EQUAL(err, want);
    free(err);
    CU_ASSERT_EQUAL(run(NULL, "config --sample", &out, NULL), 0);
    j = json_loads(out, 0, NULL);
    CU_ASSERT_EQUAL(json_object_size(j), TT_CFG__COUNT);
    json_decref(j);
    free(out);
}

static void test_hash_token(void)
{
    char *out, hex[65];
    CU_ASSERT_EQUAL(run(NULL, "hash-token abc", &out, NULL), 0);
    tt_sha256_hex("abc", 3, hex);
    CU_ASSERT(!strncmp(out, hex, 64));
    CU_ASSERT(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    free(out);
    CU_ASSERT_EQUAL(run("printf 'abc\\n' |", "hash-token", &out, NULL), 0);
    CU_ASSERT(!strncmp(out, hex, 64));
    free(out);
    /* what would hash something else than the secret is a usage error: a second argument
     * (was ignored), a secret on stdin longer than the buffer (was cut at 4095 bytes) */
    static const struct { const char *env, *args, *want; } bad[] = {
        {NULL, "hash-token abc def", "usage: tiletuned hash-token"},
        {"head -c 5000 /dev/zero | tr '\\0' a |", "hash-token", "secret longer than"},
        {NULL, "predict --template gemm --target a2 --problem M=64,N=64,K=64 --top 5x",
         "bad argument 5x"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err;
        out = NULL;
        CU_ASSERT_EQUAL(run(bad[i].env, bad[i].args, &out, &err), 2);
        CU_ASSERT(strstr(err, bad[i].want) != NULL && !*out);
        free(out);
        free(err);
    }
}

static void test_serve_failures(void)
{
    /* address in use: exit 7 */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 1) == 0);
    getsockname(fd, (struct sockaddr *)&a, &al);
    char args[1024], url[700];
    snprintf(args, sizeof args, "serve --listen 127.0.0.1:%d --db 'sqlite:%s/s.db' --workers 0",
             ntohs(a.sin_port), g_tmp);
    CU_ASSERT_EQUAL(run(NULL, args, NULL, NULL), 7);
    /* ... and it leaves the jobs of the daemon that holds the port alone: a job running
     * under another worker's lease keeps it (no release, no claim by the failed start) */
    snprintf(url, sizeof url, "sqlite:%s/s.db", g_tmp);
    tt_store *st = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &st, NULL), TT_OK);
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "gemm");
    snprintf(j.target, sizeof j.target, "Ascend910B2");
    snprintf(j.backend, sizeof j.backend, "sim");
    snprintf(j.backend_fp, sizeof j.backend_fp, "sim");
    snprintf(j.strategy, sizeof j.strategy, "random");
    snprintf(j.template_hash, sizeof j.template_hash, "0123456789abcdef");
    j.problem_key = "K=64,M=64,N=64,dtype=float16";
    j.problem_json = "{\"M\":64,\"N\":64,\"K\":64,\"dtype\":\"float16\"}";
    j.budget_trials = 4;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_create(st, &j), TT_OK);
    tt_job got;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_claim(st, "alive:1/w0", 300, &got), TT_OK);
    tt_job_clear(&got);
    snprintf(args, sizeof args, "serve --listen 127.0.0.1:%d --db '%s' --workers 1",
             ntohs(a.sin_port), url);
    CU_ASSERT_EQUAL(run(NULL, args, NULL, NULL), 7);
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(st, j.id, &got), TT_OK);
    CU_ASSERT_STRING_EQUAL(got.lease_owner, "alive:1/w0");
    CU_ASSERT_EQUAL(got.claimed_running, 0);
    tt_job_clear(&got);
    tt_store_close(st);
    close(fd);
    /* bad config value, bad token in the file, unopenable database */
    CU_ASSERT_EQUAL(run(NULL, "serve --listen nowhere", NULL, NULL), 3);
    CU_ASSERT_EQUAL(run(NULL, "serve --tokens '[{\"name\":\"x\"}]'", NULL, NULL), 3);
    /* -c / --config-file without a file is a usage error (was ignored: serve started on the
     * defaults) */
    static const char *const nofile[] = {"-c", "--config-file", "--config-file="};
    for (size_t i = 0; i < sizeof nofile / sizeof nofile[0]; i++) {
        char *err;
        snprintf(args, sizeof args, "serve --listen 127.0.0.1:0 --db 'sqlite:%s/c.db' %s", g_tmp,
                 nofile[i]);
        CU_ASSERT_EQUAL(run("timeout 10", args, NULL, &err), 2);
        CU_ASSERT(strstr(err, "needs a value (a config file)") != NULL);
        free(err);
    }
    /* a toolchain definition the cmd: backend would refuse stops the start, naming the key */
    static const struct { const char *args, *want; } tcs[] = {
        {"serve --toolchains '{\"a2\": {\"run\": \"true\", \"run_timout\": 5}}'",
         "tiletuned: --toolchains: toolchains.a2.run_timout: unknown key\n"},
        {"serve --toolchains '{\"a2\": {\"run\": \"true\", \"run_timeout\": 0}}'",
         "tiletuned: --toolchains: toolchains.a2.run_timeout: expected a number above 0"},
    };
    for (size_t i = 0; i < sizeof tcs / sizeof tcs[0]; i++) {
        char *err;
        CU_ASSERT_EQUAL(run(NULL, tcs[i].args, NULL, &err), 3);
        if (strncmp(err, tcs[i].want, strlen(tcs[i].want))) fprintf(stderr, "%s", err);
        CU_ASSERT(!strncmp(err, tcs[i].want, strlen(tcs[i].want)));
        free(err);
    }
    /* with toolchains, a work directory that cannot be made or written stops serve and
     * worker at start, naming it (it was found only by the first cmd: job) */
    char file[700];
    snprintf(file, sizeof file, "%s/plainfile", g_tmp);
    FILE *pf = fopen(file, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pf);
    fclose(pf);
    static const char *const cmds[] = {"serve --listen 127.0.0.1:0", "worker"};
    for (size_t i = 0; i < 2; i++) {
        char *err;
        snprintf(args, sizeof args, "%s --db 'sqlite:%s/wd.db' --workers 1 --toolchains "
                 "'{\"a2\": {\"run\": \"true\"}}' --work-dir '%s/work'", cmds[i], g_tmp, file);
        CU_ASSERT_EQUAL(run("timeout 10", args, NULL, &err), 3);
        if (!strstr(err, "cannot create the work directory")) fprintf(stderr, "%s", err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot create the work directory"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "plainfile/work: Not a directory"));
        free(err);
    }
    CU_ASSERT_EQUAL(run(NULL, "serve --listen 127.0.0.1:0 --db sqlite:/nonexistent/dir/x.db", NULL, NULL), 6);
    /* a PostgreSQL that cannot be reached: exit 6, and the log names the URL without its
     * password (it was printed whole, into journald, as in every start's log line) */
    static const struct { const char *db, *shown; } pgs[] = {
        {"postgresql://tt:S3CRETPW@127.0.0.1:1/x", "postgresql://tt:***@127.0.0.1:1/x"},
        {"postgres://tt@127.0.0.1:1/x?sslmode=disable&password=S3CRETPW",
         "postgres://tt@127.0.0.1:1/x?sslmode=disable&password=***"},
    };
    for (size_t i = 0; i < 2 * (sizeof pgs / sizeof pgs[0]); i++) {
        char *err;
        snprintf(args, sizeof args, "%s --db '%s'", i % 2 ? "worker" : "serve --listen 127.0.0.1:0",
                 pgs[i / 2].db);
        CU_ASSERT_EQUAL(run(NULL, args, NULL, &err), 6);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, pgs[i / 2].shown));
        CU_ASSERT_PTR_NULL(strstr(err, "S3CRETPW"));
        if (!strstr(err, pgs[i / 2].shown) || strstr(err, "S3CRETPW")) fprintf(stderr, "\n%s", err);
        free(err);
    }
    snprintf(args, sizeof args, "worker --workers 0 --db 'sqlite:%s/w.db'", g_tmp);
    CU_ASSERT_EQUAL(run(NULL, args, NULL, NULL), 3);
}

/* SIGHUP reopens the log file (logrotate moved it) and the daemon carries on; it used to
 * end the daemon (the signal's default action) */
static void test_sighup_reopens_log(void)
{
    char log[600], moved[620], extra[700];
    snprintf(log, sizeof log, "%s/rot.log", g_tmp);
    snprintf(moved, sizeof moved, "%s.1", log);
    snprintf(extra, sizeof extra, "{\"log_file\": \"%s\", \"workers\": 0}", log);
    tt_daemon d;
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&d, extra), 0);
    CU_ASSERT_EQUAL_FATAL(rename(log, moved), 0);
    CU_ASSERT_EQUAL(kill(d.pid, SIGHUP), 0);
    char *text = NULL;
    for (int i = 0; i < 200 && !(text && strstr(text, "log file reopened")); i++) {
        free(text);
        usleep(20000);
        size_t n;
        text = tt_test_read_file(log, &n);
    }
    CU_ASSERT(text && strstr(text, "SIGHUP: log file reopened"));
    free(text);
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&d, "GET", "/v1/targets", NULL, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_hres_free(&r);
    CU_ASSERT_TRUE(tt_daemon_alive(&d));
    size_t n;
    char *old = tt_test_read_file(moved, &n);   /* the start went to the moved file */
    CU_ASSERT(old && strstr(old, "listening on"));
    free(old);
    CU_ASSERT_EQUAL(tt_daemon_stop(&d), 0);
    tt_daemon_cleanup(&d);
}

/* A thread of process pid other than its main thread that does not block SIGTERM (its
 * /proc status SigBlk), or 0: a library's, started before main blocked the stop signals. */
static pid_t unblocking_thread(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    pid_t found = 0;
    struct dirent *e;
    while (d && !found && (e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == pid) continue;
        char path[128], line[256];
        snprintf(path, sizeof path, "%s/%d/status", dir, (int)tid);
        FILE *f = fopen(path, "r");
        unsigned long long blk = ~0ULL;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "SigBlk: %llx", &blk) == 1) break;
        if (f) fclose(f);
        if (!(blk & (1ULL << (SIGTERM - 1)))) found = tid;
    }
    if (d) closedir(d);
    return found;
}

/* SIGTERM that the kernel hands to a library's thread (OpenBLAS starts its pool when it is
 * loaded, before main blocks the stop signals; the kernel picks such a thread when the main
 * thread cannot take the signal, as just after a SIGCONT) ended the daemon with the signal's
 * default action (status 143), skipping its shutdown.  It now stops as for any SIGTERM: exit 0,
 * "stopping" in its log.  Sent to that thread directly (tgkill), so the old code always fails;
 * on a machine where no library thread exists there is nothing to send it to. */
static void test_sigterm_on_a_library_thread(void)
{
    tt_daemon d;
    CU_ASSERT_EQUAL_FATAL(tt_daemon_start(&d, "{\"workers\": 0}"), 0);
    pid_t tid = unblocking_thread(d.pid);
    if (!tid) {
        fprintf(stderr, "(no library thread that takes SIGTERM: nothing to check) ");
        CU_ASSERT_EQUAL(tt_daemon_stop(&d), 0);
        tt_daemon_cleanup(&d);
        return;
    }
    CU_ASSERT_EQUAL(syscall(SYS_tgkill, d.pid, tid, SIGTERM), 0);
    int st = 0;
    pid_t r = 0;
    for (int i = 0; i < 1000 && (r = waitpid(d.pid, &st, WNOHANG)) == 0; i++) usleep(20000);
    CU_ASSERT_EQUAL(r, d.pid);
    CU_ASSERT(r == d.pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (r == d.pid) d.pid = 0;
    size_t n;
    char *log = tt_test_read_file(d.log_path, &n);
    CU_ASSERT(log && strstr(log, "signal 15: stopping"));
    free(log);
    tt_daemon_cleanup(&d);
}

/* A daemon under a file size limit (RLIMIT_FSIZE, ulimit -f) that its database outgrows: the
 * write fails (SIGXFSZ ignored: EFBIG, which SQLite reports as "disk I/O error") and the job
 * fails saying so, or stays running when even that cannot be written; the daemon stays up.
 * (Before, SIGXFSZ killed it without a word in the log.) */
static void test_file_size_limit(void)
{
    struct rlimit old, lim;
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 1 << 20;   /* inherited by the daemon: its WAL outgrows 1 MiB */
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &lim), 0);
    tt_daemon d;
    int started = tt_daemon_start(&d, "{\"workers\": 1}");
    CU_ASSERT_EQUAL(setrlimit(RLIMIT_FSIZE, &old), 0);
    CU_ASSERT_EQUAL_FATAL(started, 0);
    long long id = tt_daemon_submit(&d, "{\"template\": \"gemm\", \"problem\": {\"M\": 1024, "
                                        "\"N\": 1024, \"K\": 1024, \"dtype\": \"float16\"}, "
                                        "\"target\": \"a2\", \"strategy\": \"random\", "
                                        "\"budget\": 100000}");
    CU_ASSERT_FATAL(id > 0);
    /* the job fails with the reason; or, when even the failure no longer fits (where the
     * failed commit left the file decides: it varies with the batch sizes of a loaded
     * machine), it stays running, to resume once the database can grow, and the log says so */
    char path[64], *why = NULL;
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    int unrecorded = 0;
    for (int i = 0; i < (int)tt_daemon_slow(1200) && !why && !unrecorded; i++) {
        tt_hres r;
        if (tt_daemon_req(&d, "GET", path, NULL, NULL, 0, &r) == 0) {
            const char *st = json_string_value(json_object_get(r.json, "state"));
            const char *err = json_string_value(json_object_get(r.json, "error"));
            if (st && !strcmp(st, "failed")) why = strdup(err ? err : "(none)");
        }
        tt_hres_free(&r);
        char *log = why ? NULL : tt_test_read_file(d.log_path, NULL);
        unrecorded = log && strstr(log, "cannot record the failure: sqlite: disk I/O error");
        free(log);
        if (!why && !unrecorded) usleep(100 * 1000);
    }
    CU_ASSERT_TRUE(tt_daemon_alive(&d));
    CU_ASSERT_TRUE(unrecorded || (why && strstr(why, "disk I/O error")));
    if (!unrecorded && !(why && strstr(why, "disk I/O error")))
        fprintf(stderr, "\nerror: %s\n", why ? why : "- (job not failed)");
    free(why);
    CU_ASSERT_EQUAL(tt_daemon_stop(&d), 0);
    tt_daemon_cleanup(&d);
}

/* ---- tlctl against a live daemon ----------------------------------------------------- */
static tt_daemon g_d;
static char *g_tlctl;
static long long g_conv_job;   /* the kt-cache import of conv on a2: 4362 trials */

/* "tlctl ARGS" (dash: non-UTF-8 bytes as "$(printf '\377')") with the daemon's URL, a tune
 * token, HOME the temp dir and no config file; *out and *err as run(), both may be NULL. */
static int tl(const char *args, char **out, char **err)
{
    char env[512];
    snprintf(env, sizeof env, "env -u TLCTL_CONFIG -u XDG_CONFIG_HOME TILETUNE_URL=%s "
             "TILETUNE_TOKEN=%s HOME='%s' NO_COLOR=1", g_d.url, TT_TOKEN_TUNE, g_tmp);
    char *e = NULL;
    int rc = run_bin(g_tlctl, env, args, out, &e);
    if (err) *err = e;
    else free(e);
    return rc;
}

/* exit code `code`, stderr one line containing `want`, stdout empty */
static void tl_fails(const char *args, int code, const char *want)
{
    char *out, *err;
    int rc = tl(args, &out, &err);
    size_t k = strcspn(err, "\n");   /* one line: its only newline ends it */
    int ok = rc == code && strstr(err, want) && err[k] == '\n' && !err[k + 1] && !*out;
    if (!ok) fprintf(stderr, "\ntlctl %s: exit %d, stdout [%.200s], stderr [%s]\n", args, rc, out, err);
    CU_ASSERT_TRUE(ok);
    free(out);
    free(err);
}

static int tl_suite_init(void)
{
    g_tmp = tt_test_tmpdir("tt-cli-tlctl");
    g_tlctl = tt_test_bin("tlctl");
    if (!g_tmp || !g_tlctl || access(g_tlctl, X_OK) ||
        tt_daemon_start(&g_d, "{\"max_body_bytes\": 16777216, \"toolchains\": {\"fails\": "
                              "{\"run\": \"echo 'in kernel.py:' >&2; echo 'error: bad tile' >&2; "
                              "exit 3\"}}}")) {
        fprintf(stderr, "cannot run %s against a daemon\n", g_tlctl ? g_tlctl : "tlctl");
        return 1;
    }
    /* conv: a template without inputs (T1 file) and 4362 imported trials on a2 */
    char *t1 = tt_test_shared("datasets/convolution.t1.json");
    char *kt = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "import '%s' -T conv", t1);
    int rc = tl(args, NULL, NULL);
    snprintf(args, sizeof args, "--json import '%s' -T conv -t a2", kt);
    if (!rc) rc = tl(args, &out, NULL);
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    g_conv_job = (long long)json_integer_value(json_object_get(j, "job"));
    json_decref(j);
    free(out);
    free(t1);
    free(kt);
    if (rc || g_conv_job <= 0) fprintf(stderr, "tlctl import of conv failed: exit %d\n", rc);
    return rc || g_conv_job <= 0;
}

static int tl_suite_clean(void)
{
    tt_daemon_cleanup(&g_d);
    tt_test_rmrf(g_tmp);
    free(g_tmp);
    free(g_tlctl);
    return 0;
}

/* job ID --trials lists every trial, not the first page of 1000 */
static void test_tlctl_trials_all(void)
{
    char args[128], *out;
    snprintf(args, sizeof args, "--json job %lld --trials", g_conv_job);
    CU_ASSERT_EQUAL(tl(args, &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "trials")), 4362);
    json_decref(j);
    free(out);
    snprintf(args, sizeof args, "job %lld --trials", g_conv_job);
    CU_ASSERT_EQUAL(tl(args, &out, NULL), 0);
    size_t lines = 0;   /* the job table, a blank line, the header and one line a trial */
    for (const char *p = out; (p = strchr(p, '\n')); p++) lines++;
    CU_ASSERT(lines > 4362 + 2 && lines < 4362 + 40);
    free(out);
}

/* job ID --trials shows a failed trial's error on its line (a toolchain's stderr tail of
 * two lines joined); it was in --json only */
static void test_tlctl_trials_errors(void)
{
    char *out = NULL;
    CU_ASSERT_EQUAL(tl("--json tune gemm -p M=512,N=512,K=512,dtype=float16 -t a2 -b cmd:fails "
                       "-s model-topk -n 1 --wait", &out, NULL), 6);   /* job failed */
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    long long id = (long long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    free(out);
    CU_ASSERT_FATAL(id > 0);
    char args[64];
    snprintf(args, sizeof args, "job %lld --trials", id);
    CU_ASSERT_EQUAL(tl(args, &out, NULL), 0);
    const char *hdr = out ? strstr(out, "SEQ ") : NULL, *row = hdr ? strstr(hdr, "\n1 ") : NULL;
    CU_ASSERT_PTR_NOT_NULL(hdr ? strstr(hdr, "ERROR") : NULL);
    CU_ASSERT_PTR_NOT_NULL(row ? strstr(row, "run_failed") : NULL);
    const char *want = "run failed (exit 3): in kernel.py: | error: bad tile\n";
    CU_ASSERT_PTR_NOT_NULL(row ? strstr(row, want) : NULL);
    if (!row || !strstr(row, "error: bad tile")) fprintf(stderr, "\n%s\n", out ? out : "");
    free(out);
}

/* best and check for a template without inputs: -p empty or left out */
static void test_tlctl_inputless(void)
{
    char *out, m[600], args[1024];
    CU_ASSERT_EQUAL(tl("best conv -t a2 -f args", &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--block_size_x="));
    free(out);
    CU_ASSERT_EQUAL(tl("best conv -t a2 -p ''", &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "block_size_x"));
    free(out);
    tl_fails("best gemm -t a2", 2, "--problem is required");   /* gemm has inputs */
    tl_fails("best nope -t a2", 5, "nope");
    snprintf(m, sizeof m, "%s/measured.json", g_tmp);
    FILE *f = fopen(m, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("[{\"samples_us\": [549.0, 549.5]}]", f);
    fclose(f);
    static const char *const forms[] = {"-p ''", ""};
    for (size_t i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "check -T conv -t a2 %s --measured '%s'", forms[i], m);
        CU_ASSERT_EQUAL(tl(args, &out, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 pass"));
        free(out);
        snprintf(args, sizeof args, "check -T conv -t a2 %s --remeasure -b "
                 "replay:convolution_A100 -f json", forms[i]);
        int rc = tl(args, &out, NULL);
        CU_ASSERT(rc == 0 || rc == 1);
        json_t *j = json_loads(out, 0, NULL);
        CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "entries")), 1);
        json_decref(j);
        free(out);
    }
    tl_fails("check -T gemm -t a2 --remeasure", 2, "needs at least one -p");
}

/* a template whose every input has a default needs no -p either: tune, best and check take
 * the defaults (the look-up reads each input's "default" from GET /v1/templates/{name}) */
static void test_tlctl_defaults(void)
{
    static const char doc[] =
        "{\"tiletune\": 1, \"name\": \"dscale\", \"version\": \"1\", \"inputs\": {\"N\": "
        "{\"type\": \"int\", \"default\": 65536}}, \"params\": {\"block\": [256, 512]}, "
        "\"let\": {\"n_num\": \"ceildiv(N, block)\"}, \"buffers\": {\"X_UB\": {\"scope\": "
        "\"UB\", \"shape\": [\"block\"], \"dtype\": \"float16\", \"copies\": 2}}, "
        "\"tensors\": {\"X\": {\"shape\": [\"N\"], \"dtype\": \"float16\"}, \"Y\": {\"shape\": "
        "[\"N\"], \"dtype\": \"float16\", \"output\": true}}, \"kernel\": {\"grid\": {\"bx\": "
        "\"n_num\"}, \"cores\": \"vector\", \"body\": [{\"copy\": [\"gm:X\", \"X_UB\"], "
        "\"along\": [\"bx\"]}, {\"vec\": \"muls\", \"out\": \"X_UB\", \"in\": [\"X_UB\"]}, "
        "{\"copy\": [\"X_UB\", \"gm:Y\"], \"along\": [\"bx\"]}]}}";
    tt_hres r;
    CU_ASSERT_EQUAL_FATAL(tt_daemon_req(&g_d, "PUT", "/v1/templates/dscale", TT_TOKEN_TUNE, doc,
                                        strlen(doc), &r), 0);
    CU_ASSERT_EQUAL(r.status, 201);
    const json_t *in = json_array_get(json_object_get(r.json, "inputs"), 0);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(in, "default")), 65536);
    tt_hres_free(&r);
    char *out;
    CU_ASSERT_EQUAL(tl("tune dscale -t a2 -b sim -n 2 --wait", &out, NULL), 0);
    free(out);
    CU_ASSERT_EQUAL(tl("best dscale -t a2 -b sim -f json", &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "problem_key")), "N=65536");
    json_decref(j);
    free(out);
    CU_ASSERT_EQUAL(tl("check -T dscale -t a2 --remeasure -b sim -f json", &out, NULL), 0);
    j = json_loads(out, 0, NULL);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "entries")), 1);
    json_decref(j);
    free(out);
}

/* arguments that are not UTF-8 are refused before a JSON body is built (never an empty
 * body, never a dropped member) */
static void test_tlctl_bad_utf8(void)
{
    static const char *const cases[] = {
        "tune gemm -p \"M=1,N=1,K=1,dtype=$(printf '\\377')\" -t a2",
        "tune gemm -p M=64,N=64,K=64 -t a2 -n 1 --objective \"$(printf '\\377')\"",
        "tune \"gemm$(printf '\\300\\200')\" -p M=64,N=64,K=64 -t a2",   /* overlong */
        "predict gemm -p \"M=1,N=1,K=1,dtype=$(printf '\\377')\" -t a2",
        "simulate gemm -p M=64,N=64,K=64 -t a2 -c \"block_M=$(printf '\\355\\240\\200')\"",
        "check -T gemm -t a2 -p \"M=$(printf '\\377')\" --remeasure",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        tl_fails(cases[i], 2, "not valid UTF-8 (bad_encoding)");
    char *out;   /* valid multi-byte UTF-8 passes to the server (which rejects the dtype) */
    CU_ASSERT_EQUAL(tl("predict gemm -p 'M=64,N=64,K=64,dtype=\xc3\xa9' -t a2", &out, NULL), 5);
    free(out);
}

/* config-file values: the flags' rules, file:line in the message; comments; directories */
static void test_tlctl_config_file(void)
{
    char conf[600], args[1024], want[700];
    snprintf(conf, sizeof conf, "%s/tlctl.conf", g_tmp);
    static const char *const bad[] = {"timeout = abc", "timeout = 0", "timeout = 86401",
                                      "timeout = 99999999999999999999", "timeout ="};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(conf, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f, "# tlctl\n%s\n", bad[i]);
        fclose(f);
        snprintf(args, sizeof args, "--config-file '%s' templates", conf);
        snprintf(want, sizeof want, "%s:2: timeout needs seconds in 1..86400", conf);
        tl_fails(args, 2, want);
    }
    tl_fails("--timeout abc templates", 2, "--timeout needs seconds in 1..86400");
    /* a trailing " # comment" and one pair of quotes are not part of the value */
    FILE *f = fopen(conf, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "url = \"%s\" # the test daemon\ntimeout = '30'\t# seconds\n", g_d.url);
    fclose(f);
    char env[900], *out;
    snprintf(env, sizeof env, "env -u TILETUNE_URL HOME='%s' TLCTL_CONFIG='%s'", g_tmp, conf);
    CU_ASSERT_EQUAL(run_bin(g_tlctl, env, "targets", &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "Ascend910B2"));
    free(out);
    snprintf(args, sizeof args, "--config-file '%s' templates", g_tmp);
    tl_fails(args, 2, "Is a directory");
}

/* job ids beyond 64 bits and --width are usage errors found before any request */
static void test_tlctl_job_args(void)
{
    tl_fails("job 99999999999999999999", 2, "a job id is an integer in 1..9223372036854775807");
    tl_fails("cancel 99999999999999999999", 2, "a job id is an integer");
    char args[128];
    snprintf(args, sizeof args, "job %lld --width 0", g_conv_job);
    tl_fails(args, 2, "--width is only for --plot and --params");
    snprintf(args, sizeof args, "job %lld --width 40 --trials", g_conv_job);
    tl_fails(args, 2, "--width is only for --plot and --params");
    snprintf(args, sizeof args, "job %lld --plot --width 0", g_conv_job);
    tl_fails(args, 2, "--width needs an integer in 20..1000");
    snprintf(args, sizeof args, "job %lld --params --width 5000", g_conv_job);
    tl_fails(args, 2, "--width needs an integer in 20..1000");
    char *out;
    snprintf(args, sizeof args, "job %lld --plot --width 40", g_conv_job);
    CU_ASSERT_EQUAL(tl(args, &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "conv"));
    free(out);
}

/* a server URL that is not http(s)://host is a usage error naming where it came from (it
 * was tried as given: "cannot reach", exit 3, and ftp:// spoke FTP); an over-long url or
 * token is refused instead of cut short */
static void test_tlctl_server_url(void)
{
    static const struct { const char *args, *want; } bad[] = {
        {"--url notaurl templates", "bad server URL \"notaurl\" (from flag): the scheme must"},
        {"--url ftp://127.0.0.1 templates", "the scheme must be http:// or https://"},
        {"--url 'http://[::1' templates", "bad server URL"},
        {"--url http://127.0.0.1:99999 templates", "bad server URL"},
        {"--url 'http://127.0.0.1:7878/?x=1' templates", "no ?query or #fragment"},
        {"--url 'http://127.0.0.1:7878/#top' jobs", "no ?query or #fragment"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) tl_fails(bad[i].args, 2, bad[i].want);
    char big[700], args[800], env[900], *out;
    memset(big, 'a', 600);
    big[600] = 0;
    snprintf(args, sizeof args, "--token %s templates", big);
    tl_fails(args, 2, "--token is 600 bytes, longer than tlctl takes (255)");
    snprintf(args, sizeof args, "--url http://%s templates", big);
    tl_fails(args, 2, "--url is 607 bytes, longer than tlctl takes (511)");
    snprintf(env, sizeof env, "env -u TLCTL_CONFIG HOME='%s' TILETUNE_URL=gopher://h", g_tmp);
    char *err = NULL;
    CU_ASSERT_EQUAL(run_bin(g_tlctl, env, "jobs", &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "(from environment)"));
    free(out);
    free(err);
    /* a base path with a trailing slash stays a good URL */
    snprintf(args, sizeof args, "--url %s/ targets", g_d.url);
    CU_ASSERT_EQUAL(tl(args, &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "Ascend910B2"));
    free(out);
}

static const tt_test_case tl_cases[] = {{"trials_all", test_tlctl_trials_all},
                                        {"trials_errors", test_tlctl_trials_errors},
                                        {"inputless", test_tlctl_inputless},
                                        {"defaults", test_tlctl_defaults},
                                        {"bad_utf8", test_tlctl_bad_utf8},
                                        {"config_file", test_tlctl_config_file},
                                        {"job_args", test_tlctl_job_args},
                                        {"server_url", test_tlctl_server_url},
                                        {NULL, NULL}};

static const tt_test_case cases[] = {{"help_version", test_help_version},
                                     {"predict", test_predict},
                                     {"simulate", test_simulate},
                                     {"validate_targets", test_validate_targets},
                                     {"config_show", test_config_show},
                                     {"hash_token", test_hash_token},
                                     {"serve_failures", test_serve_failures},
                                     {"sighup_reopens_log", test_sighup_reopens_log},
                                     {"sigterm_on_a_library_thread", test_sigterm_on_a_library_thread},
                                     {"file_size_limit", test_file_size_limit},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"cli", suite_init, suite_clean, cases},
                                       {"cli_tlctl", tl_suite_init, tl_suite_clean, tl_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

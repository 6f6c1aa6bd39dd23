/* SPDX-License-Identifier: MIT
 * test_tlctl.c - build/bin/tlctl as a subprocess against a live tiletuned (tt_daemon helpers):
 * every command's stdout and exit code, the documented exit codes for bad flags (2), an
 * unreachable server (3), auth failures (4), server errors (5), failed/cancelled jobs (6) and
 * Ctrl-C during --wait (130); configuration precedence; docs/tlctl.md up to date.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tt_daemon.h"
#include "tt_test.h"

/* A JSON string value, "" when absent (so that a failed lookup fails the assertion). */
static const char *js(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

static tt_daemon g_d;
static char *g_tmp;
static char *g_bin;
static void (*g_at)(void);   /* run_env: called at sigint_after instead of sending SIGINT */

typedef struct run_res {
    int code;                 /* exit status, 128+sig when killed, -1 on failure to run */
    char *out, *err;
} run_res;

static void run_free(run_res *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

static void slurp(int fd, char **buf, size_t *n, size_t *cap)
{
    char tmp[4096];
    ssize_t k = read(fd, tmp, sizeof tmp);
    if (k <= 0) return;
    if (*n + (size_t)k + 1 > *cap) {
        *cap = (*n + (size_t)k + 1) * 2;
        *buf = realloc(*buf, *cap);
    }
    memcpy(*buf + *n, tmp, (size_t)k);
    *n += (size_t)k;
    (*buf)[*n] = '\0';
}

/* Run tlctl with argv (NULL-terminated) and extra environment "K=V" strings (NULL-terminated,
 * may be NULL).  TILETUNE_URL is the test daemon's, TILETUNE_TOKEN unset, HOME a temp dir.
 * When sigint_after > 0, SIGINT is sent after that many seconds. */
static run_res run_env(const char *const *env, double sigint_after, const char *const *argv)
{
    run_res r = {-1, NULL, NULL};
    int po[2], pe[2];
    if (pipe(po) || pipe(pe)) return r;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]); close(pe[0]); close(po[1]); close(pe[1]);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        setenv("TILETUNE_URL", g_d.url, 1);
        unsetenv("TILETUNE_TOKEN");
        unsetenv("TLCTL_CONFIG");
        unsetenv("XDG_CONFIG_HOME");
        setenv("HOME", g_tmp, 1);
        setenv("NO_COLOR", "1", 1);
        for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
        const char *args[40];
        int n = 0;
        args[n++] = g_bin;
        for (int i = 0; argv[i] && n < 39; i++) args[n++] = argv[i];
        args[n] = NULL;
        execv(g_bin, (char *const *)args);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t no = 0, co = 0, ne = 0, ce = 0;
    r.out = calloc(1, 1);
    r.err = calloc(1, 1);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int open_o = 1, open_e = 1, sent = 0;
    while (open_o || open_e) {
        struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
        int k = poll(fds, 2, 100);
        if (k > 0) {
            if (fds[0].revents) {
                size_t before = no;
                slurp(po[0], &r.out, &no, &co);
                if (no == before) open_o = 0, fds[0].fd = -1;
            }
            if (fds[1].revents) {
                size_t before = ne;
                slurp(pe[0], &r.err, &ne, &ce);
                if (ne == before) open_e = 0;
            }
            if (!open_o && po[0] >= 0) { close(po[0]); po[0] = -1; }
            if (!open_e && pe[0] >= 0) { close(pe[0]); pe[0] = -1; }
        }
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
        if (sigint_after > 0 && !sent && el >= sigint_after) {
            if (g_at) g_at();
            else kill(pid, SIGINT);
            sent = 1;
        }
        if (el > tt_daemon_slow(60)) { kill(pid, SIGKILL); break; }
    }
    if (po[0] >= 0) close(po[0]);
    if (pe[0] >= 0) close(pe[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    return r;
}

#define RUN(...) run_env(NULL, 0, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_TOKEN(tok, ...) \
    run_env((const char *const[]){"TILETUNE_TOKEN=" tok, NULL}, 0, (const char *const[]){__VA_ARGS__, NULL})

/* stderr is exactly one line */
static int one_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl && nl[1] == '\0' && strncmp(s, "tlctl", 5) == 0;
}

static int suite_init(void)
{
    g_tmp = tt_test_tmpdir("tlctl-test");
    g_bin = tt_test_bin("tlctl");
    if (!g_tmp || !g_bin || access(g_bin, X_OK)) return -1;
    return tt_daemon_start(&g_d, "{\"max_body_bytes\": 16777216}");
}

static int suite_cleanup(void)
{
    tt_daemon_cleanup(&g_d);
    if (CU_get_number_of_failures() == 0) tt_test_rmrf(g_tmp);
    free(g_tmp);
    free(g_bin);
    return 0;
}

#define GEMM_P "M=1024,N=1024,K=1024,dtype=float16"

/* ---- usage and documentation ------------------------------------------------------- */
static void test_usage_errors(void)
{
    const char *const *const cases[] = {
        (const char *const[]){"frobnicate", NULL},
        (const char *const[]){"best", "gemm", "--frobnicate", NULL},
        (const char *const[]){"best", "gemm", "-t", "a2", NULL},            /* no -p */
        (const char *const[]){"best", "gemm", "-p", GEMM_P, "-t", "a2", "--format", "xml", NULL},
        (const char *const[]){"tune", NULL},                                /* no TEMPLATE */
        (const char *const[]){"tune", "gemm", "-p", GEMM_P, "-t", "a2", "--budget", "x", NULL},
        (const char *const[]){"job", "abc", NULL},
        (const char *const[]){"cancel", "1", "2", NULL},
        (const char *const[]){"check", "-T", "gemm", "-t", "a2", NULL},     /* neither mode */
        (const char *const[]){"check", "-T", "gemm", "-t", "a2", "--remeasure", "--tolerance",
                              "-1", "-p", GEMM_P, NULL},
        (const char *const[]){"import", "/nonexistent/file.json", NULL},
        (const char *const[]){"--timeout", "0", "templates", NULL},
        (const char *const[]){"best", "gemm", "-p", NULL},                  /* value missing */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_res r = run_env(NULL, 0, cases[i]);
        if (r.code != 2 || !one_line(r.err))
            fprintf(stderr, "usage case %zu: code %d, stderr [%s]\n", i, r.code, r.err);
        CU_ASSERT_EQUAL(r.code, 2);
        CU_ASSERT_TRUE(one_line(r.err));
        CU_ASSERT_STRING_EQUAL(r.out, "");
        run_free(&r);
    }
    /* a mistyped command or option gets the nearest name, on the same one line */
    const struct {
        const char *const *argv;
        const char *want;
    } typos[] = {
        {(const char *const[]){"tnue", "gemm", NULL}, "unknown command \"tnue\"; did you mean tune?"},
        {(const char *const[]){"help", "chekc", NULL}, "did you mean check?"},
        {(const char *const[]){"tune", "gemm", "--budjet", "5", NULL},
         "unknown option --budjet; did you mean --budget?"},
        {(const char *const[]){"best", "gemm", "--jsno", NULL}, "did you mean --json?"},   /* global */
        {(const char *const[]){"--tiemout", "3", "jobs", NULL}, "did you mean --timeout?"},
        {(const char *const[]){"best", "gemm", "--frobnicate", NULL}, NULL},              /* none */
    };
    for (size_t i = 0; i < sizeof typos / sizeof typos[0]; i++) {
        run_res r = run_env(NULL, 0, typos[i].argv);
        CU_ASSERT_EQUAL(r.code, 2);
        CU_ASSERT_TRUE(one_line(r.err));
        if (typos[i].want) {
            CU_ASSERT_PTR_NOT_NULL(strstr(r.err, typos[i].want));
        } else {
            CU_ASSERT_PTR_NULL(strstr(r.err, "did you mean"));
        }
        if (typos[i].want && !strstr(r.err, typos[i].want)) fprintf(stderr, "typo %zu: %s", i, r.err);
        run_free(&r);
    }
}

static void test_help(void)
{
    run_res r = RUN("--help");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "commands:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "check"));
    run_free(&r);
    static const char *const cmds[] = {"tune", "best", "jobs", "job", "cancel", "templates",
                                       "targets", "predict", "simulate", "check", "export",
                                       "import"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        r = run_env(NULL, 0, (const char *const[]){cmds[i], "--help", NULL});
        CU_ASSERT_EQUAL(r.code, 0);
        char want[64];
        snprintf(want, sizeof want, "usage: tlctl %s", cmds[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, want));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--url URL"));
        run_free(&r);
    }
    r = RUN("tune", "--help");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--wait"));
    run_free(&r);
    r = RUN("version");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT(strncmp(r.out, "tlctl ", 6) == 0);
    run_free(&r);
}

static void test_docs_up_to_date(void)
{
    run_res r = RUN("help", "--markdown");
    CU_ASSERT_EQUAL(r.code, 0);
    char *path = tt_test_src("docs/tlctl.md");
    char *doc = tt_test_read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL(doc);
    if (doc && strcmp(doc, r.out) != 0)
        fprintf(stderr, "docs/tlctl.md is stale: regenerate with "
                        "`build/bin/tlctl help --markdown > docs/tlctl.md`\n");
    CU_ASSERT_TRUE(doc && strcmp(doc, r.out) == 0);
    /* every command of the table has a section */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "### tlctl check"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "| 3 | server unreachable"));
    free(doc);
    free(path);
    run_free(&r);
}

/* ---- transport, auth, server errors ------------------------------------------------ */
static void test_unreachable(void)
{
    /* a port nobody listens on: bind, read the port, close */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", 1);
    char env[96];
    snprintf(env, sizeof env, "TILETUNE_URL=%s", url);
    run_res r = run_env((const char *const[]){env, NULL}, 0,
                        (const char *const[]){"templates", NULL});
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_TRUE(one_line(r.err));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "cannot reach"));
    run_free(&r);
    /* the flag beats the environment: same failure through --url */
    r = RUN("--url", url, "targets");
    CU_ASSERT_EQUAL(r.code, 3);
    run_free(&r);
}

static void test_auth(void)
{
    run_res r = RUN("tune", "gemm", "-p", GEMM_P, "-t", "a2", "--budget", "2");
    CU_ASSERT_EQUAL(r.code, 4);
    CU_ASSERT_TRUE(one_line(r.err));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "unauthorized"));
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_READ, "tune", "gemm", "-p", GEMM_P, "-t", "a2", "--budget", "2");
    CU_ASSERT_EQUAL(r.code, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "forbidden"));
    run_free(&r);
    r = RUN_TOKEN("wrong-secret", "templates");
    CU_ASSERT_EQUAL(r.code, 4);
    run_free(&r);
}

static void test_server_errors(void)
{
    run_res r = RUN("best", "gemm", "-p", "M=7,N=7,K=7", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(one_line(r.err));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "not_found"));
    run_free(&r);
    r = RUN("job", "999999");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(one_line(r.err));
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "tune", "nosuchtemplate", "-p", "M=1", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(one_line(r.err));
    run_free(&r);
    r = RUN("best", "gemm", "-p", GEMM_P, "-t", "no such chip");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "invalid_target"));
    run_free(&r);
    r = RUN("best", "gemm", "-p", GEMM_P, "-t", "nosuchchip");   /* an imported device's? */
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "\"nosuchchip\" is not a configured target"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "not_found"));
    run_free(&r);
}

/* ---- commands ---------------------------------------------------------------------- */
static void test_tune_wait_best(void)
{
    run_res r = RUN_TOKEN(TT_TOKEN_TUNE, "tune", "gemm", "-p", GEMM_P, "-t", "a2", "--budget",
                          "6", "--wait");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "done"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "progress: 6/6 trials"));   /* line per update */
    run_free(&r);
    r = RUN("best", "gemm", "-p", GEMM_P, "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "median (simulated)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "block_M"));
    run_free(&r);
    r = RUN("best", "gemm", "-p", GEMM_P, "-t", "a2", "--format", "env");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "TT_BLOCK_M="));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "TT_K_L1="));
    run_free(&r);
    r = RUN("best", "gemm", "-p", GEMM_P, "-t", "a2", "-f", "args");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--block_M="));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--K_L1="));
    CU_ASSERT_TRUE(strchr(r.out, '\n') == r.out + strlen(r.out) - 1);   /* one line */
    run_free(&r);
    r = RUN("--json", "best", "gemm", "-p", "M=1000,N=1000,K=1000,dtype=float16", "-t", "a2",
            "--nearest");
    CU_ASSERT_EQUAL(r.code, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL(j);
    CU_ASSERT_TRUE(json_is_false(json_object_get(j, "exact")));
    json_decref(j);
    run_free(&r);
    /* jobs, job --trials */
    r = RUN("jobs", "--status", "done");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "model-bo"));   /* the default with a kernel program */
    run_free(&r);
    r = RUN("jobs", "--status", "bogus");
    CU_ASSERT_EQUAL(r.code, 5);
    run_free(&r);
    r = RUN("job", "1", "--trials");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "SEQ"));
    run_free(&r);
    r = RUN("--json", "job", "1");
    CU_ASSERT_EQUAL(r.code, 0);
    j = json_loads(r.out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(js(json_object_get(j, "state")), "done");
    json_decref(j);
    run_free(&r);
    /* cancelling a finished job is a conflict (5) */
    r = RUN_TOKEN(TT_TOKEN_TUNE, "cancel", "1");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "conflict"));
    run_free(&r);
}

static void test_tune_submit_cancel_and_sigint(void)
{
    /* a long job: Ctrl-C during --wait (not a terminal) leaves it running: 130 */
    run_res r = run_env((const char *const[]){"TILETUNE_TOKEN=" TT_TOKEN_TUNE, NULL}, 1.0,
                        (const char *const[]){"tune", "gemm", "-p",
                                              "M=8192,N=8192,K=8192,dtype=float16", "-t", "a2",
                                              "--strategy", "random", "--budget", "100000",
                                              "--wait", NULL});
    CU_ASSERT_EQUAL(r.code, 130);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "keeps running"));
    const char *p = strstr(r.err, "tlctl cancel ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    long long id = strtoll(p + 13, NULL, 10);
    CU_ASSERT(id > 0);
    run_free(&r);
    char ids[32];
    snprintf(ids, sizeof ids, "%lld", id);
    r = RUN("--json", "job", ids);
    json_t *j = json_loads(r.out, 0, NULL);
    const char *st = json_string_value(json_object_get(j, "state"));
    CU_ASSERT(st && (!strcmp(st, "running") || !strcmp(st, "queued")));
    json_decref(j);
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "cancel", ids);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "cancelled"));
    run_free(&r);
    /* waiting on a cancelled job ends with 6 */
    CU_ASSERT_PTR_NOT_NULL(tt_daemon_wait_job(&g_d, id, 20));
    r = RUN_TOKEN(TT_TOKEN_TUNE, "tune", "gemm", "-p", "M=64,N=64,K=64,dtype=float16", "-t",
                  "a2", "--budget", "3");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "queued"));
    run_free(&r);
}

/* On a terminal (script(1) gives tlctl a pty): the bar is redrawn in place, and Ctrl-C asks
 * whether to cancel; answering y cancels the job and exits 6. */
static void test_tty_progress_and_prompt(void)
{
    CU_ASSERT_EQUAL_FATAL(system("command -v script >/dev/null && command -v timeout >/dev/null"), 0);
    char out[600], cmd[2400];
    snprintf(out, sizeof out, "%s/tty.out", g_tmp);
    snprintf(cmd, sizeof cmd,
             "(sleep %.1f; printf 'y\\n'; sleep 1) | TILETUNE_URL=%s TILETUNE_TOKEN=%s HOME=%s "
             "timeout %d script -qec \"timeout --foreground --preserve-status -s INT %.1f %s tune "
             "gemm -p M=8192,N=8192,K=4096,dtype=float16 -t a2 --strategy random --budget 100000 "
             "--wait\" /dev/null > %s",
             tt_daemon_slow(3), g_d.url, TT_TOKEN_TUNE, g_tmp, (int)tt_daemon_slow(30),
             tt_daemon_slow(1.5), g_bin, out);
    int st = system(cmd);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    CU_ASSERT_EQUAL(code, 6);
    char *text = tt_test_read_file(out, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\r\033[K["));        /* redrawn in place */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, " trials  best "));
    CU_ASSERT_PTR_NULL(strstr(text, "progress: "));          /* not the line-per-update form */
    const char *q = strstr(text, "cancel job ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_PTR_NOT_NULL(strstr(q, "[y/N]"));
    long long id = strtoll(q + 11, NULL, 10);
    char want[64];
    snprintf(want, sizeof want, "job %lld cancelled", id);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    free(text);
    char ids[32];
    snprintf(ids, sizeof ids, "%lld", id);
    run_res r = RUN("--json", "job", ids);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(js(json_object_get(j, "state")), "cancelled");
    json_decref(j);
    run_free(&r);
}

static void test_catalog_predict_simulate(void)
{
    run_res r = RUN("templates");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "gemm"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "NAME"));
    run_free(&r);
    r = RUN("targets");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Ascend910B2"));
    run_free(&r);
    r = RUN("--json", "targets");
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT(json_array_size(json_object_get(j, "targets")) >= 2);
    json_decref(j);
    run_free(&r);
    r = RUN("predict", "gemm", "-p", GEMM_P, "-t", "a2", "--top", "3");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "MODEL PREDICTIONS"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\n3 "));
    /* each row shows the model's error band (old code: the API's low_us/high_us unshown) */
    const char *row1 = strstr(r.out, "\n1 ");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "BAND"));
    CU_ASSERT(row1 && strstr(row1, " us..") && strstr(row1, " us..") < strchr(row1 + 1, '\n'));
    run_free(&r);
    char trace[600];
    snprintf(trace, sizeof trace, "%s/trace.json", g_tmp);
    r = RUN("simulate", "gemm", "-p", GEMM_P, "-t", "a2", "-c",
            "block_M=128,block_N=128,block_K=64,K_L1=256,S1=2,S2=2", "--trace", trace);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "SIMULATED"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "MTE2"));
    json_t *t = json_load_file(trace, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL(t);
    json_decref(t);
    run_free(&r);
    r = RUN("simulate", "gemm", "-p", GEMM_P, "-t", "a2", "-c", "block_M=7");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(one_line(r.err));
    run_free(&r);
}

/* ---- CI: check, export, import ----------------------------------------------------- */
/* The three CI routes are registered in daemon/api/api.c's table; say so plainly when they are not. */
static int ci_routes_present(void)
{
    static const char *const probes[][2] = {{"POST", "/v1/check"}, {"GET", "/v1/export"},
                                            {"POST", "/v1/import"}};
    int ok = 1;
    for (size_t i = 0; i < 3; i++) {
        tt_hres h;
        tt_daemon_req(&g_d, probes[i][0], probes[i][1], TT_TOKEN_TUNE, "{}", 2, &h);
        const char *msg = js(json_object_get(json_object_get(h.json, "error"), "message"));
        if (h.status == 404 && strstr(msg, "no route")) {
            fprintf(stderr, "\n%s %s is not in daemon/api/api.c's route table\n", probes[i][0],
                    probes[i][1]);
            ok = 0;
        }
        tt_hres_free(&h);
    }
    CU_ASSERT_TRUE(ok);
    return ok;
}
static double best_median(void)
{
    run_res r = RUN("--json", "best", "gemm", "-p", GEMM_P, "-t", "a2");
    json_t *j = json_loads(r.out, 0, NULL);
    double m = json_number_value(json_object_get(j, "median_us"));
    json_decref(j);
    run_free(&r);
    return m;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* A TEMPLATE argument that is a document file: tune sends it inline (stored under its name),
 * predict and simulate use it, best asks for that version; a bad file is a usage error. */
#define SCALE_DOC "{\"tiletune\": 1, \"name\": \"%s\", \"version\": \"1\", \"inputs\": " \
    "{\"N\": \"int\"}, \"params\": {\"block\": [256, 512, 1024]}, \"let\": {\"n_num\": " \
    "\"ceildiv(N, block)\"}, \"buffers\": {\"X_UB\": {\"scope\": \"UB\", \"shape\": " \
    "[\"block\"], \"dtype\": \"float16\", \"copies\": 2}}, \"tensors\": {\"X\": {\"shape\": " \
    "[\"N\"], \"dtype\": \"float16\"}, \"Y\": {\"shape\": [\"N\"], \"dtype\": \"float16\", " \
    "\"output\": true}}, \"kernel\": {\"grid\": {\"bx\": \"n_num\"}, \"cores\": \"vector\", " \
    "\"body\": [{\"copy\": [\"gm:X\", \"X_UB\"], \"along\": [\"bx\"]}, {\"vec\": \"muls\", " \
    "\"out\": \"X_UB\", \"in\": [\"X_UB\"]}, {\"copy\": [\"X_UB\", \"gm:Y\"], \"along\": " \
    "[\"bx\"]}]}}"

static void test_template_file(void)
{
    char doc[2048], path[512], peek[512], bad[512];
    snprintf(path, sizeof path, "%s/fscale.json", g_tmp);
    snprintf(doc, sizeof doc, SCALE_DOC, "fscale");
    write_text(path, doc);
    snprintf(peek, sizeof peek, "%s/peek.json", g_tmp);      /* predicted, never stored */
    snprintf(doc, sizeof doc, SCALE_DOC, "fpeek");
    write_text(peek, doc);
    run_res r = RUN_TOKEN(TT_TOKEN_TUNE, "tune", path, "-p", "N=65536", "-t", "a2", "-n", "3",
                          "--wait");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fscale"));
    run_free(&r);
    r = RUN("predict", peek, "-p", "N=65536", "-t", "a2", "-k", "2");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "{\"block\":1024}"));
    run_free(&r);
    /* a space without a feasible config says why instead of printing an empty table */
    char *v1 = strstr(doc, "\"version\": \"1\", ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v1);
    char tight[2200];
    snprintf(tight, sizeof tight, "%.*s\"constraints\": [\"block <= N\"], %s",
             (int)(v1 - doc), doc, v1);
    write_text(peek, tight);
    r = RUN("predict", peek, "-p", "N=100", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "no feasible config (3 configs); rejected: "
                                         "constraints[0]: block <= N (3)\n"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "PREDICTED"));
    run_free(&r);
    r = RUN("simulate", peek, "-p", "N=65536", "-t", "a2", "--config", "block=512");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "simulated time"));
    run_free(&r);
    r = RUN("templates");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fscale"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "fpeek"));
    run_free(&r);
    r = RUN("best", path, "-p", "N=65536", "-t", "a2");         /* that version's best */
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fscale"));
    run_free(&r);
    /* export and check take the file's name (old code: 404 unknown template) */
    r = RUN("export", "-T", path, "-t", "a2", "--format", "json");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"fscale\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "N=65536"));
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", path, "-t", "a2", "-p", "N=65536",
                  "--remeasure");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fscale"));
    run_free(&r);
    snprintf(bad, sizeof bad, "%s/noname.json", g_tmp);
    write_text(bad, "{\"tiletune\": 1}");
    r = RUN("export", "-T", bad, "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "has no \"name\""));
    run_free(&r);
    r = RUN("best", path, "-t", "a2");                           /* N has no default */
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--problem is required"));
    run_free(&r);
    /* another version of the file has no result yet */
    snprintf(doc, sizeof doc, SCALE_DOC, "fscale");
    char *v2 = strstr(doc, "[256, 512, 1024]");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v2);
    memcpy(v2, "[256, 512, 2048]", 16);
    write_text(path, doc);
    r = RUN("best", path, "-p", "N=65536", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "not_found"));
    run_free(&r);
    static const struct { const char *text, *want; } bads[] = {
        {NULL, "No such file"},                                   /* no file at all */
        {"{\"name\": ", "cannot read the template file"},
        {"{\"name\": \"a\", \"name\": \"b\"}", "duplicate object key"},
        {"[1, 2]", "does not hold a JSON object"},
    };
    for (size_t i = 0; i < sizeof bads / sizeof *bads; i++) {
        snprintf(bad, sizeof bad, "%s/bad%zu.json", g_tmp, i);
        if (bads[i].text) write_text(bad, bads[i].text);
        r = RUN_TOKEN(TT_TOKEN_TUNE, "tune", bad, "-p", "N=1", "-t", "a2");
        CU_ASSERT_EQUAL(r.code, 2);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bads[i].want));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bad));
        run_free(&r);
    }
}

/* jobs pages with --limit/--offset (a full page says how to get the next) and filters by
 * target and owner. */
static void test_jobs_pages(void)
{
    run_res r = RUN("--json", "jobs", "--limit", "2");
    json_t *all = json_loads(r.out, 0, NULL), *jobs = json_object_get(all, "jobs");
    CU_ASSERT_EQUAL_FATAL(json_array_size(jobs), 2);   /* the earlier cases ran jobs */
    long long second = (long long)json_integer_value(json_object_get(json_array_get(jobs, 1), "id"));
    run_free(&r);
    json_decref(all);
    r = RUN("jobs", "--limit", "1");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "(a full page of 1: older jobs with --offset 1)"));
    run_free(&r);
    r = RUN("--json", "jobs", "--limit", "1", "--offset", "1");
    all = json_loads(r.out, 0, NULL);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(json_object_get(all, "jobs"), 0),
                                                       "id")), second);
    json_decref(all);
    run_free(&r);
    r = RUN("jobs", "--target", "a3");                 /* every job here ran on a2 */
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "Ascend910B2"));
    run_free(&r);
    r = RUN("jobs", "--owner", "nobody-at-all");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "done"));
    run_free(&r);
    r = RUN("jobs", "--offset", "-1");
    CU_ASSERT_EQUAL(r.code, 2);
    run_free(&r);
}

static void test_check(void)
{
    if (!ci_routes_present()) return;
    /* check needs a tune token */
    run_res r = RUN_TOKEN(TT_TOKEN_READ, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P,
                          "--remeasure");
    CU_ASSERT_EQUAL(r.code, 4);
    CU_ASSERT_TRUE(one_line(r.err));
    run_free(&r);
    double m = best_median();
    CU_ASSERT_FATAL(m > 0);
    char ok[600], bad[600], body[512];
    snprintf(ok, sizeof ok, "%s/measured-ok.json", g_tmp);
    snprintf(bad, sizeof bad, "%s/measured-bad.json", g_tmp);
    snprintf(body, sizeof body, "[{\"samples_us\": [%.6f, %.6f, %.6f]}]", m, m * 1.01, m * 0.99);
    write_text(ok, body);
    snprintf(body, sizeof body, "{\"entries\": [{\"problem\": \"%s\", \"samples_us\": [%.6f]}]}",
             GEMM_P, m * 1.5);
    write_text(bad, body);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P,
                          "--measured", ok);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "pass"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "VERDICT"));
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", bad);
    CU_ASSERT_EQUAL(r.code, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "regressed"));
    run_free(&r);
    /* a larger tolerance lets it pass */
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", bad,
                  "--tolerance", "0.6");
    CU_ASSERT_EQUAL(r.code, 0);
    run_free(&r);
    /* JUnit and JSON reports */
    char xml[600];
    snprintf(xml, sizeof xml, "%s/report.xml", g_tmp);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", bad,
                  "--format", "junit", "-o", xml);
    CU_ASSERT_EQUAL(r.code, 1);
    char *x = tt_test_read_file(xml, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL(strstr(x, "<testsuites name=\"tiletune check\" tests=\"1\" failures=\"1\">"));
    CU_ASSERT_PTR_NOT_NULL(strstr(x, "<failure type=\"regressed\""));
    free(x);
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", ok, "-p",
                  GEMM_P, "--format", "json");
    CU_ASSERT_EQUAL(r.code, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(js(json_object_get(j, "verdict")), "pass");
    json_decref(j);
    run_free(&r);
    /* re-measure on the simulator: the stored best came from sim, so it passes */
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P, "-p",
                  "M=3000,N=3000,K=3000,dtype=float16", "--remeasure", "--backend", "sim");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "missing"));
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "-p",
                  "M=3000,N=3000,K=3000,dtype=float16", "--remeasure", "--fail-on-missing");
    CU_ASSERT_EQUAL(r.code, 1);
    run_free(&r);
    /* pin, then compare against the pin */
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "-p", GEMM_P, "--pin", "rel1");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "pinned 1"));
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", ok, "-p",
                  GEMM_P, "--baseline", "rel1", "--format", "json");
    CU_ASSERT_EQUAL(r.code, 0);
    j = json_loads(r.out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(js(json_object_get(j, "baseline")), "rel1");
    json_decref(j);
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "check", "-T", "gemm", "-t", "a2", "--measured", ok, "-p",
                  GEMM_P, "--baseline", "never-pinned", "--fail-on-missing");
    CU_ASSERT_EQUAL(r.code, 1);
    run_free(&r);
}

static void test_export(void)
{
    if (!ci_routes_present()) return;
    char py[600], h[600], cmd[2000];
    snprintf(py, sizeof py, "%s/spec.py", g_tmp);
    snprintf(h, sizeof h, "%s/gemm_tuned.h", g_tmp);
    run_res r = RUN("export", "-T", "gemm", "-t", "a2", "--format", "specializations", "-o", py);
    CU_ASSERT_EQUAL(r.code, 0);
    run_free(&r);
    char *checker = tt_test_src("tests/data/xllm/check_specializations.py");
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s M,N,K,dtype,out_dtype "
             "block_M,block_N,block_K,K_L1,S1,S2,core_num,swizzle 1 >/dev/null", checker, py);
    free(checker);
    CU_ASSERT_EQUAL(system(cmd), 0);
    r = RUN("export", "-T", "gemm", "-t", "a2", "--format", "c-header", "-o", h);
    CU_ASSERT_EQUAL(r.code, 0);
    run_free(&r);
    snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Werror -fsyntax-only -x c %s", h);
    CU_ASSERT_EQUAL(system(cmd), 0);
    r = RUN("export", "-T", "gemm", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT(json_array_size(json_object_get(j, "records")) >= 1);
    json_decref(j);
    run_free(&r);
    r = RUN("export", "-T", "gemm", "-t", "a2", "--format", "t4", "-p", GEMM_P);
    CU_ASSERT_EQUAL(r.code, 0);
    j = json_loads(r.out, 0, NULL);
    CU_ASSERT(json_array_size(json_object_get(j, "results")) >= 1);
    json_decref(j);
    run_free(&r);
    r = RUN("export", "-T", "softmax", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(one_line(r.err));
    run_free(&r);
}

static void test_import(void)
{
    if (!ci_routes_present()) return;
    char *t1 = tt_test_shared("datasets/convolution.t1.json");
    char *kt = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    run_res r = RUN_TOKEN(TT_TOKEN_TUNE, "import", t1, "--template", "conv");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "template conv"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "1 added"));
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "import", kt, "-T", "conv");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "kt-cache"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "0 skipped"));
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "--json", "import", kt, "-T", "conv", "--format", "kt-cache");
    CU_ASSERT_EQUAL(r.code, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "added")), 0);
    CU_ASSERT(json_integer_value(json_object_get(j, "skipped")) > 4000);
    json_decref(j);
    run_free(&r);
    r = RUN("jobs", "--template", "conv");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "import"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "done"));
    run_free(&r);
    /* a read token cannot import; a file of the wrong format is refused by the server */
    r = RUN_TOKEN(TT_TOKEN_READ, "import", kt, "-T", "conv");
    CU_ASSERT_EQUAL(r.code, 4);
    run_free(&r);
    r = RUN_TOKEN(TT_TOKEN_TUNE, "import", kt, "-T", "conv", "--format", "t4");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(one_line(r.err));
    run_free(&r);
    /* conv has no inputs: tune needs no -p; without a kernel program the default is bo, and
     * model-refine runs bo as a named fallback (tlctl job says which ran and why) */
    static const struct { const char *strategy, *ran; } tc[] = {
        {"auto", "bo (default: no kernel program (no model)"},
        {"model-refine", "bo (fallback: model-refine needs the analytic model"},
    };
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        r = RUN_TOKEN(TT_TOKEN_TUNE, "--json", "tune", "conv", "-t", "a2", "-b",
                      "replay:convolution_A100", "-s", tc[i].strategy, "-n", "4");
        CU_ASSERT_EQUAL(r.code, 0);
        j = json_loads(r.out, 0, NULL);
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(j, "job")));
        json_decref(j);
        run_free(&r);
        r = RUN("job", id);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "strategy ran"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, tc[i].ran));
        run_free(&r);
    }
    free(t1);
    free(kt);
}

/* ---- configuration precedence ------------------------------------------------------- */
static void test_config_file(void)
{
    char dir[600], conf[700], text[256];
    snprintf(dir, sizeof dir, "%s/.config/tiletune", g_tmp);
    char mk[700];
    snprintf(mk, sizeof mk, "mkdir -p %s", dir);
    CU_ASSERT_EQUAL(system(mk), 0);
    snprintf(conf, sizeof conf, "%s/tlctl.conf", dir);
    /* the file gives the URL and a tune token: works without environment */
    snprintf(text, sizeof text, "# tlctl\nurl = %s\ntoken = %s\n", g_d.url, TT_TOKEN_TUNE);
    write_text(conf, text);
    run_res r = run_env((const char *const[]){"TILETUNE_URL=", NULL}, 0,
                        (const char *const[]){"tune", "gemm", "-p",
                                              "M=128,N=128,K=128,dtype=float16", "-t", "a2",
                                              "--budget", "2", NULL});
    CU_ASSERT_EQUAL(r.code, 0);
    run_free(&r);
    /* the environment beats the file */
    r = run_env((const char *const[]){"TILETUNE_URL=http://127.0.0.1:1", NULL}, 0,
                (const char *const[]){"templates", NULL});
    CU_ASSERT_EQUAL(r.code, 3);
    run_free(&r);
    /* the flag beats both */
    r = run_env((const char *const[]){"TILETUNE_URL=http://127.0.0.1:1", NULL}, 0,
                (const char *const[]){"--url", g_d.url, "templates", NULL});
    CU_ASSERT_EQUAL(r.code, 0);
    run_free(&r);
    /* a broken file is a usage error */
    write_text(conf, "colour = blue\n");
    r = RUN("templates");
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_TRUE(one_line(r.err));
    run_free(&r);
    unlink(conf);
    r = RUN("--config-file", "/nonexistent/tlctl.conf", "templates");
    CU_ASSERT_EQUAL(r.code, 2);
    run_free(&r);
}

/* The daemon stops while tlctl follows a job: the stream ends early, exit 3.  Runs last. */
static void stop_daemon(void) { tt_daemon_stop(&g_d); }

static void test_server_stops_during_wait(void)
{
    g_at = stop_daemon;
    run_res r = run_env((const char *const[]){"TILETUNE_TOKEN=" TT_TOKEN_TUNE, NULL},
                        tt_daemon_slow(1.0),
                        (const char *const[]){"tune", "gemm", "-p",
                                              "M=8192,N=4096,K=8192,dtype=float16", "-t", "a2",
                                              "--strategy", "random", "--budget", "100000",
                                              "--wait", NULL});
    g_at = NULL;
    CU_ASSERT_EQUAL(r.code, 3);
    if (!strstr(r.err, "lost the event stream")) fprintf(stderr, "stderr: [%s]\n", r.err);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "lost the event stream"));
    run_free(&r);
    r = RUN("jobs");   /* and now nobody answers */
    CU_ASSERT_EQUAL(r.code, 3);
    run_free(&r);
}

static const tt_test_case cases[] = {
    {"usage_errors", test_usage_errors},
    {"help", test_help},
    {"docs_up_to_date", test_docs_up_to_date},
    {"unreachable", test_unreachable},
    {"auth", test_auth},
    {"server_errors", test_server_errors},
    {"tune_wait_best_jobs", test_tune_wait_best},
    {"tune_sigint_cancel", test_tune_submit_cancel_and_sigint},
    {"tty_progress_and_prompt", test_tty_progress_and_prompt},
    {"catalog_predict_simulate", test_catalog_predict_simulate},
    {"check", test_check},
    {"export", test_export},
    {"import", test_import},
    {"config_file", test_config_file},
    {"template_file", test_template_file},
    {"jobs_pages", test_jobs_pages},
    {"server_stops_during_wait", test_server_stops_during_wait},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"tlctl", suite_init, suite_cleanup, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_tlctl.c - build/bin/tlctl's command-line surface as a subprocess against a live
 * tiletuned (helpers/tlctl_fixture): every command's stdout and exit code, the documented exit
 * codes for bad flags (2), an unreachable server (3), auth failures (4), server errors (5),
 * failed/cancelled jobs (6) and Ctrl-C during --wait (130); configuration precedence;
 * docs/tlctl.md up to date.  The data-exchange commands (check, export, import, template
 * document files) are test_tlctl_data.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tlctl_fixture.h"
#include "tt_test.h"

static int suite_init(void) { return tt_tlfx_init("tlctl-test"); }

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
        tt_tlfx_res r = tt_tlfx_run(NULL, 0, cases[i]);
        if (r.code != 2 || !tt_tlfx_one_line(r.err))
            fprintf(stderr, "usage case %zu: code %d, stderr [%s]\n", i, r.code, r.err);
        CU_ASSERT_EQUAL(r.code, 2);
        CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
        CU_ASSERT_STRING_EQUAL(r.out, "");
        tt_tlfx_free(&r);
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
        tt_tlfx_res r = tt_tlfx_run(NULL, 0, typos[i].argv);
        CU_ASSERT_EQUAL(r.code, 2);
        CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
        if (typos[i].want) {
            CU_ASSERT_PTR_NOT_NULL(strstr(r.err, typos[i].want));
        } else {
            CU_ASSERT_PTR_NULL(strstr(r.err, "did you mean"));
        }
        if (typos[i].want && !strstr(r.err, typos[i].want)) fprintf(stderr, "typo %zu: %s", i, r.err);
        tt_tlfx_free(&r);
    }
}

static void test_help(void)
{
    tt_tlfx_res r = TT_TLFX_RUN("--help");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "commands:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "check"));
    tt_tlfx_free(&r);
    static const char *const cmds[] = {"tune", "best", "jobs", "job", "cancel", "templates",
                                       "targets", "predict", "simulate", "check", "export",
                                       "import"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        r = tt_tlfx_run(NULL, 0, (const char *const[]){cmds[i], "--help", NULL});
        CU_ASSERT_EQUAL(r.code, 0);
        char want[64];
        snprintf(want, sizeof want, "usage: tlctl %s", cmds[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, want));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--url URL"));
        tt_tlfx_free(&r);
    }
    r = TT_TLFX_RUN("tune", "--help");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--wait"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("version");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT(strncmp(r.out, "tlctl ", 6) == 0);
    tt_tlfx_free(&r);
}

static void test_docs_up_to_date(void)
{
    tt_tlfx_res r = TT_TLFX_RUN("help", "--markdown");
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
    tt_tlfx_free(&r);
}

/* ---- transport, auth, server errors ------------------------------------------------ */
static void test_unreachable(void)
{
    /* a port nobody listens on: bind, read the port, close */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", 1);
    char env[96];
    snprintf(env, sizeof env, "TILETUNE_URL=%s", url);
    tt_tlfx_res r = tt_tlfx_run((const char *const[]){env, NULL}, 0,
                                (const char *const[]){"templates", NULL});
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "cannot reach"));
    tt_tlfx_free(&r);
    /* the flag beats the environment: same failure through --url */
    r = TT_TLFX_RUN("--url", url, "targets");
    CU_ASSERT_EQUAL(r.code, 3);
    tt_tlfx_free(&r);
}

/* A proxy in the environment (a corporate host's http_proxy, no 127.0.0.1 in no_proxy) is
 * not used for the loopback daemon (old code: every request went to the proxy, "cannot
 * reach", exit 3, with the daemon up); a dead proxy port. */
static void test_loopback_skips_proxy(void)
{
    static const char *const vars[] = {"http_proxy=http://127.0.0.1:1"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        tt_tlfx_res r = tt_tlfx_run((const char *const[]){vars[i], "no_proxy=", "NO_PROXY=",
                                                          NULL},
                                    0, (const char *const[]){"templates", NULL});
        CU_ASSERT_EQUAL(r.code, 0);
        if (r.code) fprintf(stderr, "%s: %s", vars[i], r.err);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "gemm"));
        tt_tlfx_free(&r);
    }
}

static void test_auth(void)
{
    tt_tlfx_res r = TT_TLFX_RUN("tune", "gemm", "-p", GEMM_P, "-t", "a2", "--budget", "2");
    CU_ASSERT_EQUAL(r.code, 4);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "unauthorized"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_READ, "tune", "gemm", "-p", GEMM_P, "-t", "a2", "--budget", "2");
    CU_ASSERT_EQUAL(r.code, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "forbidden"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN("wrong-secret", "templates");
    CU_ASSERT_EQUAL(r.code, 4);
    tt_tlfx_free(&r);
}

static void test_server_errors(void)
{
    tt_tlfx_res r = TT_TLFX_RUN("best", "gemm", "-p", "M=7,N=7,K=7", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "not_found"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("job", "999999");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "tune", "nosuchtemplate", "-p", "M=1", "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("best", "gemm", "-p", GEMM_P, "-t", "no such chip");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "invalid_target"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("best", "gemm", "-p", GEMM_P, "-t", "nosuchchip");   /* an imported device's? */
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "\"nosuchchip\" is not a configured target"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "not_found"));
    tt_tlfx_free(&r);
}

/* ---- commands ---------------------------------------------------------------------- */
static void test_tune_wait_best(void)
{
    tt_tlfx_res r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "tune", "gemm", "-p", GEMM_P, "-t", "a2",
                                      "--budget", "6", "--wait");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "done"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "progress: 6/6 trials"));   /* line per update */
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("best", "gemm", "-p", GEMM_P, "-t", "a2");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "median (simulated)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "block_M"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("best", "gemm", "-p", GEMM_P, "-t", "a2", "--format", "env");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "TT_BLOCK_M="));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "TT_K_L1="));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("best", "gemm", "-p", GEMM_P, "-t", "a2", "-f", "args");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--block_M="));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "--K_L1="));
    CU_ASSERT_TRUE(strchr(r.out, '\n') == r.out + strlen(r.out) - 1);   /* one line */
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("--json", "best", "gemm", "-p", "M=1000,N=1000,K=1000,dtype=float16", "-t",
                    "a2", "--nearest");
    CU_ASSERT_EQUAL(r.code, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL(j);
    CU_ASSERT_TRUE(json_is_false(json_object_get(j, "exact")));
    json_decref(j);
    tt_tlfx_free(&r);
    /* jobs, job --trials */
    r = TT_TLFX_RUN("jobs", "--status", "done");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "model-bo"));   /* the default with a kernel program */
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("jobs", "--status", "bogus");
    CU_ASSERT_EQUAL(r.code, 5);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("job", "1", "--trials");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "SEQ"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("--json", "job", "1");
    CU_ASSERT_EQUAL(r.code, 0);
    j = json_loads(r.out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(tt_tlfx_js(json_object_get(j, "state")), "done");
    json_decref(j);
    tt_tlfx_free(&r);
    /* cancelling a finished job is a conflict (5) */
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "cancel", "1");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "conflict"));
    tt_tlfx_free(&r);
}

static void test_tune_submit_cancel_and_sigint(void)
{
    /* a long job: Ctrl-C during --wait (not a terminal) leaves it running: 130 */
    tt_tlfx_res r = tt_tlfx_run((const char *const[]){"TILETUNE_TOKEN=" TT_TOKEN_TUNE, NULL}, 1.0,
                                (const char *const[]){"tune", "gemm", "-p",
                                                      "M=8192,N=8192,K=8192,dtype=float16", "-t",
                                                      "a2", "--strategy", "random", "--budget",
                                                      "100000", "--wait", NULL});
    CU_ASSERT_EQUAL(r.code, 130);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "keeps running"));
    const char *p = strstr(r.err, "tlctl cancel ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    long long id = strtoll(p + 13, NULL, 10);
    CU_ASSERT(id > 0);
    tt_tlfx_free(&r);
    char ids[32];
    snprintf(ids, sizeof ids, "%lld", id);
    r = TT_TLFX_RUN("--json", "job", ids);
    json_t *j = json_loads(r.out, 0, NULL);
    const char *st = json_string_value(json_object_get(j, "state"));
    CU_ASSERT(st && (!strcmp(st, "running") || !strcmp(st, "queued")));
    json_decref(j);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "cancel", ids);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "cancelled"));
    tt_tlfx_free(&r);
    /* waiting on a cancelled job ends with 6 */
    CU_ASSERT_PTR_NOT_NULL(tt_daemon_wait_job(&tt_tlfx_d, id, 20));
    r = TT_TLFX_RUN_TOKEN(TT_TOKEN_TUNE, "tune", "gemm", "-p", "M=64,N=64,K=64,dtype=float16", "-t",
                          "a2", "--budget", "3");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "queued"));
    tt_tlfx_free(&r);
}

/* On a terminal (script(1) gives tlctl a pty): the bar is redrawn in place, and Ctrl-C asks
 * whether to cancel; answering y cancels the job and exits 6. */
static void test_tty_progress_and_prompt(void)
{
    CU_ASSERT_EQUAL_FATAL(system("command -v script >/dev/null && command -v timeout >/dev/null"), 0);
    char out[600], cmd[2400];
    snprintf(out, sizeof out, "%s/tty.out", tt_tlfx_tmp);
    snprintf(cmd, sizeof cmd,
             "(sleep %.1f; printf 'y\\n'; sleep 1) | TILETUNE_URL=%s TILETUNE_TOKEN=%s HOME=%s "
             "timeout %d script -qec \"timeout --foreground --preserve-status -s INT %.1f %s tune "
             "gemm -p M=8192,N=8192,K=4096,dtype=float16 -t a2 --strategy random --budget 100000 "
             "--wait\" /dev/null > %s",
             tt_daemon_slow(3), tt_tlfx_d.url, TT_TOKEN_TUNE, tt_tlfx_tmp, (int)tt_daemon_slow(30),
             tt_daemon_slow(1.5), tt_tlfx_bin, out);
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
    tt_tlfx_res r = TT_TLFX_RUN("--json", "job", ids);
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT_STRING_EQUAL(tt_tlfx_js(json_object_get(j, "state")), "cancelled");
    json_decref(j);
    tt_tlfx_free(&r);
}

static void test_catalog_predict_simulate(void)
{
    tt_tlfx_res r = TT_TLFX_RUN("templates");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "gemm"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "NAME"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("targets");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Ascend910B2"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("--json", "targets");
    json_t *j = json_loads(r.out, 0, NULL);
    CU_ASSERT(json_array_size(json_object_get(j, "targets")) >= 2);
    json_decref(j);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("predict", "gemm", "-p", GEMM_P, "-t", "a2", "--top", "3");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "MODEL PREDICTIONS"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\n3 "));
    /* each row shows the model's error band (old code: the API's low_us/high_us unshown) */
    const char *row1 = strstr(r.out, "\n1 ");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "BAND"));
    CU_ASSERT(row1 && strstr(row1, " us..") && strstr(row1, " us..") < strchr(row1 + 1, '\n'));
    tt_tlfx_free(&r);
    char trace[600];
    snprintf(trace, sizeof trace, "%s/trace.json", tt_tlfx_tmp);
    r = TT_TLFX_RUN("simulate", "gemm", "-p", GEMM_P, "-t", "a2", "-c",
                    "block_M=128,block_N=128,block_K=64,K_L1=256,S1=2,S2=2", "--trace", trace);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "SIMULATED"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "MTE2"));
    json_t *t = json_load_file(trace, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL(t);
    json_decref(t);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("simulate", "gemm", "-p", GEMM_P, "-t", "a2", "-c", "block_M=7");
    CU_ASSERT_EQUAL(r.code, 5);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    tt_tlfx_free(&r);
}

/* jobs pages with --limit/--offset (a full page says how to get the next) and filters by
 * target and owner. */
static void test_jobs_pages(void)
{
    tt_tlfx_res r = TT_TLFX_RUN("--json", "jobs", "--limit", "2");
    json_t *all = json_loads(r.out, 0, NULL), *jobs = json_object_get(all, "jobs");
    CU_ASSERT_EQUAL_FATAL(json_array_size(jobs), 2);   /* the earlier cases ran jobs */
    long long second = (long long)json_integer_value(json_object_get(json_array_get(jobs, 1), "id"));
    tt_tlfx_free(&r);
    json_decref(all);
    r = TT_TLFX_RUN("jobs", "--limit", "1");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "(a full page of 1: older jobs with --offset 1)"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("--json", "jobs", "--limit", "1", "--offset", "1");
    all = json_loads(r.out, 0, NULL);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(json_object_get(all, "jobs"), 0),
                                                       "id")), second);
    json_decref(all);
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("jobs", "--target", "a3");                 /* every job here ran on a2 */
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "Ascend910B2"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("jobs", "--owner", "nobody-at-all");
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NULL(strstr(r.out, "done"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("jobs", "--offset", "-1");
    CU_ASSERT_EQUAL(r.code, 2);
    tt_tlfx_free(&r);
}

/* ---- configuration precedence ------------------------------------------------------- */
static void test_config_file(void)
{
    char dir[600], conf[700], text[256];
    snprintf(dir, sizeof dir, "%s/.config/tiletune", tt_tlfx_tmp);
    char mk[700];
    snprintf(mk, sizeof mk, "mkdir -p %s", dir);
    CU_ASSERT_EQUAL(system(mk), 0);
    snprintf(conf, sizeof conf, "%s/tlctl.conf", dir);
    /* the file gives the URL and a tune token: works without environment */
    snprintf(text, sizeof text, "# tlctl\nurl = %s\ntoken = %s\n", tt_tlfx_d.url, TT_TOKEN_TUNE);
    tt_tlfx_write_text(conf, text);
    tt_tlfx_res r = tt_tlfx_run((const char *const[]){"TILETUNE_URL=", NULL}, 0,
                                (const char *const[]){"tune", "gemm", "-p",
                                                      "M=128,N=128,K=128,dtype=float16", "-t", "a2",
                                                      "--budget", "2", NULL});
    CU_ASSERT_EQUAL(r.code, 0);
    tt_tlfx_free(&r);
    /* the environment beats the file */
    r = tt_tlfx_run((const char *const[]){"TILETUNE_URL=http://127.0.0.1:1", NULL}, 0,
                    (const char *const[]){"templates", NULL});
    CU_ASSERT_EQUAL(r.code, 3);
    tt_tlfx_free(&r);
    /* the flag beats both */
    r = tt_tlfx_run((const char *const[]){"TILETUNE_URL=http://127.0.0.1:1", NULL}, 0,
                    (const char *const[]){"--url", tt_tlfx_d.url, "templates", NULL});
    CU_ASSERT_EQUAL(r.code, 0);
    tt_tlfx_free(&r);
    /* a broken file is a usage error */
    tt_tlfx_write_text(conf, "colour = blue\n");
    r = TT_TLFX_RUN("templates");
    CU_ASSERT_EQUAL(r.code, 2);
    CU_ASSERT_TRUE(tt_tlfx_one_line(r.err));
    tt_tlfx_free(&r);
    unlink(conf);
    r = TT_TLFX_RUN("--config-file", "/nonexistent/tlctl.conf", "templates");
    CU_ASSERT_EQUAL(r.code, 2);
    tt_tlfx_free(&r);
}

/* The daemon stops while tlctl follows a job: the stream ends early, exit 3.  Runs last. */
static void stop_daemon(void) { tt_daemon_stop(&tt_tlfx_d); }

static void test_server_stops_during_wait(void)
{
    tt_tlfx_at = stop_daemon;
    tt_tlfx_res r = tt_tlfx_run((const char *const[]){"TILETUNE_TOKEN=" TT_TOKEN_TUNE, NULL},
                                tt_daemon_slow(1.0),
                                (const char *const[]){"tune", "gemm", "-p",
                                                      "M=8192,N=4096,K=8192,dtype=float16", "-t",
                                                      "a2", "--strategy", "random", "--budget",
                                                      "100000", "--wait", NULL});
    tt_tlfx_at = NULL;
    CU_ASSERT_EQUAL(r.code, 3);
    if (!strstr(r.err, "lost the event stream")) fprintf(stderr, "stderr: [%s]\n", r.err);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "lost the event stream"));
    tt_tlfx_free(&r);
    r = TT_TLFX_RUN("jobs");   /* and now nobody answers */
    CU_ASSERT_EQUAL(r.code, 3);
    tt_tlfx_free(&r);
}

static const tt_test_case cases[] = {
    {"usage_errors", test_usage_errors},
    {"help", test_help},
    {"docs_up_to_date", test_docs_up_to_date},
    {"unreachable", test_unreachable},
    {"loopback_skips_proxy", test_loopback_skips_proxy},
    {"auth", test_auth},
    {"server_errors", test_server_errors},
    {"tune_wait_best_jobs", test_tune_wait_best},
    {"tune_sigint_cancel", test_tune_submit_cancel_and_sigint},
    {"tty_progress_and_prompt", test_tty_progress_and_prompt},
    {"catalog_predict_simulate", test_catalog_predict_simulate},
    {"config_file", test_config_file},
    {"jobs_pages", test_jobs_pages},
    {"server_stops_during_wait", test_server_stops_during_wait},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"tlctl", suite_init, tt_tlfx_cleanup, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

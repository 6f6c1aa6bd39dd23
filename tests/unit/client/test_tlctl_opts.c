/* SPDX-License-Identifier: MIT
 * test_tlctl_opts.c - tlctl's option table and parser (client/opts.c, compiled in): names
 * and short letters never collide with the global options, every command has help, values
 * are taken in all the spellings (--k v, --k=v, -kv, -k v), repeatable options join,
 * usage errors return 2, and the configuration precedence default < file < environment.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../client/opts.c"
#include "tt_test.h"

/* The command table points at the command functions of the other client files, which this
 * program does not link: these are never called here. */
#define TL_UNUSED_CMD(n) \
    int n(tl_ctx *c, const tl_cmd *cmd, const tl_args *a) { (void)c; (void)cmd; (void)a; return 99; }
TL_UNUSED_CMD(tl_cmd_tune)
TL_UNUSED_CMD(tl_cmd_jobs)
TL_UNUSED_CMD(tl_cmd_job)
TL_UNUSED_CMD(tl_cmd_cancel)
TL_UNUSED_CMD(tl_cmd_best)
TL_UNUSED_CMD(tl_cmd_templates)
TL_UNUSED_CMD(tl_cmd_targets)
TL_UNUSED_CMD(tl_cmd_predict)
TL_UNUSED_CMD(tl_cmd_simulate)
TL_UNUSED_CMD(tl_cmd_check)
TL_UNUSED_CMD(tl_cmd_export)
TL_UNUSED_CMD(tl_cmd_import)
TL_UNUSED_CMD(tl_cmd_help)
TL_UNUSED_CMD(tl_cmd_version)

static void test_table_consistent(void)
{
    int ncmds = 0;
    for (const tl_cmd *c = tl_cmds; c->name; c++, ncmds++) {
        CU_ASSERT_PTR_NOT_NULL(c->run);
        CU_ASSERT(c->summary && *c->summary);
        CU_ASSERT(c->npos_min <= c->npos_max && c->npos_max <= TL_MAX_POS);
        CU_ASSERT_PTR_EQUAL(tl_cmd_find(c->name), c);
        int n = 0;
        for (const tl_opt *o = c->opts; o->name; o++, n++) {
            CU_ASSERT(o->help && *o->help);
            for (const tl_opt *p = c->opts; p < o; p++) {
                CU_ASSERT(strcmp(p->name, o->name) != 0);
                CU_ASSERT(!o->shortname || p->shortname != o->shortname);
            }
            for (const tl_opt *g = tl_global_opts; g->name; g++) {
                if (!strcmp(g->name, o->name) || (o->shortname && g->shortname == o->shortname))
                    fprintf(stderr, "%s --%s collides with a global option\n", c->name, o->name);
                CU_ASSERT(strcmp(g->name, o->name) != 0);
                CU_ASSERT(!o->shortname || g->shortname != o->shortname);
            }
        }
        CU_ASSERT(n < TL_MAX_OPTS);
    }
    CU_ASSERT(ncmds >= 14);
    CU_ASSERT_PTR_NULL(tl_cmd_find("frobnicate"));
}

static int parse(tl_ctx *c, const char *cmdname, tl_args *a, int *help, const char *const *argv)
{
    int n = 0;
    while (argv[n]) n++;
    memset(c, 0, sizeof *c);
    snprintf(c->url, sizeof c->url, "http://default");
    c->timeout_s = 60;
    c->color = 1;
    return tl_args_parse(c, tl_cmd_find(cmdname), n, (char **)argv, a, help);
}

static void test_parse_spellings(void)
{
    tl_ctx c;
    tl_args a;
    int help;
    const tl_cmd *best = tl_cmd_find("best");
    const char *v1[] = {"gemm", "-p", "M=1,N=2", "--target=a2", "-fenv", "--json", "--no-color",
                        "--url", "http://x:1", "--token=s3", "--timeout", "7", NULL};
    CU_ASSERT_EQUAL(parse(&c, "best", &a, &help, v1), 0);
    CU_ASSERT_EQUAL(a.npos, 1);
    CU_ASSERT_STRING_EQUAL(a.pos[0], "gemm");
    CU_ASSERT_STRING_EQUAL(tl_arg(best, &a, "problem"), "M=1,N=2");
    CU_ASSERT_STRING_EQUAL(tl_arg(best, &a, "target"), "a2");
    CU_ASSERT_STRING_EQUAL(tl_arg(best, &a, "format"), "env");
    CU_ASSERT_PTR_NULL(tl_arg(best, &a, "nearest"));
    CU_ASSERT_EQUAL(c.json, 1);
    CU_ASSERT_EQUAL(c.color, 0);
    CU_ASSERT_STRING_EQUAL(c.url, "http://x:1");
    CU_ASSERT_STRING_EQUAL(c.url_src, "flag");
    CU_ASSERT_STRING_EQUAL(c.token, "s3");
    CU_ASSERT_EQUAL(c.timeout_s, 7);
    tl_args_free(&a);
    /* repeatable -p joins with ';', a flag is "1", "--" ends options */
    const tl_cmd *check = tl_cmd_find("check");
    const char *v2[] = {"-p", "M=1", "--problem", "M=2", "-pM=3", "--remeasure", NULL};
    CU_ASSERT_EQUAL(parse(&c, "check", &a, &help, v2), 0);
    CU_ASSERT_STRING_EQUAL(tl_arg(check, &a, "problem"), "M=1;M=2;M=3");
    CU_ASSERT_STRING_EQUAL(tl_arg(check, &a, "remeasure"), "1");
    tl_args_free(&a);
    const char *v3[] = {"--", "-weird-file.json", NULL};
    CU_ASSERT_EQUAL(parse(&c, "import", &a, &help, v3), 0);
    CU_ASSERT_STRING_EQUAL(a.pos[0], "-weird-file.json");
    tl_args_free(&a);
    const char *v4[] = {"gemm", "-h", NULL};
    CU_ASSERT_EQUAL(parse(&c, "best", &a, &help, v4), 1);
    CU_ASSERT_EQUAL(help, 1);
    tl_args_free(&a);
}

static void test_parse_errors(void)
{
    static const struct {
        const char *cmd;
        const char *argv[6];
    } cases[] = {
        {"best", {"gemm", "--bogus", NULL}},
        {"best", {"gemm", "-Z", NULL}},
        {"best", {"gemm", "-p", NULL}},                 /* value missing */
        {"best", {"gemm", "--nearest=yes", NULL}},      /* flag with a value */
        {"best", {NULL}},                               /* TEMPLATE missing */
        {"best", {"gemm", "extra", NULL}},              /* one positional too many */
        {"jobs", {"--timeout", "0", NULL}},
        {"jobs", {"--timeout", "12x", NULL}},
        {"templates", {"x", NULL}},
        {"best", {"gemm", "--token", "abc\ndef", NULL}},   /* a header line cut in two */
        {"best", {"gemm", "--url", "http://h:1/\r", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_ctx c;
        tl_args a;
        int help;
        CU_ASSERT_EQUAL(parse(&c, cases[i].cmd, &a, &help, cases[i].argv), TL_EXIT_USAGE);
        tl_args_free(&a);
    }
}

static void test_config_precedence(void)
{
    char *dir = tt_test_tmpdir("tlctl-opts");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char path[600];
    snprintf(path, sizeof path, "%s/tlctl.conf", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("# comment\n\n url = http://file:1 \ntoken=filetok\ntimeout = 9\n", f);
    fclose(f);
    unsetenv("TILETUNE_URL");
    unsetenv("TILETUNE_TOKEN");
    tl_ctx c;
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(tl_ctx_load(&c, path), 0);
    CU_ASSERT_STRING_EQUAL(c.url, "http://file:1");
    CU_ASSERT_STRING_EQUAL(c.url_src, "file");
    CU_ASSERT_STRING_EQUAL(c.token, "filetok");
    CU_ASSERT_EQUAL(c.timeout_s, 9);
    setenv("TILETUNE_URL", "http://env:2", 1);
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(tl_ctx_load(&c, path), 0);
    CU_ASSERT_STRING_EQUAL(c.url, "http://env:2");
    CU_ASSERT_STRING_EQUAL(c.url_src, "environment");
    CU_ASSERT_STRING_EQUAL(c.token_src, "file");
    unsetenv("TILETUNE_URL");
    /* defaults without a file (HOME points at an empty dir) */
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", dir, 1);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("TLCTL_CONFIG");
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(tl_ctx_load(&c, NULL), 0);
    CU_ASSERT_STRING_EQUAL(c.url, "http://127.0.0.1:7878");
    CU_ASSERT_STRING_EQUAL(c.url_src, "default");
    if (home) setenv("HOME", home, 1);
    free(home);
    /* bad files */
    static const char *const bad[] = {"colour = red\n", "just words\n"};
    for (size_t i = 0; i < 2; i++) {
        f = fopen(path, "w");
        fputs(bad[i], f);
        fclose(f);
        memset(&c, 0, sizeof c);
        CU_ASSERT_EQUAL(tl_ctx_load(&c, path), TL_EXIT_USAGE);
    }
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(tl_ctx_load(&c, "/nonexistent/tlctl.conf"), TL_EXIT_USAGE);
    /* a token with a control character, from the file or the environment, is a usage error
     * (old code: sent as two header lines, the server's 400 was exit 5) */
    f = fopen(path, "w");
    fputs("token = ab\x01" "cd\n", f);
    fclose(f);
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(tl_ctx_load(&c, path), TL_EXIT_USAGE);
    f = fopen(path, "w");
    fputs("token = fine\n", f);
    fclose(f);
    setenv("TILETUNE_TOKEN", "abc\ndef", 1);
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(tl_ctx_load(&c, path), TL_EXIT_USAGE);
    unsetenv("TILETUNE_TOKEN");
    tt_test_rmrf(dir);
    free(dir);
}

static void test_help_and_markdown(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tl_print_markdown(f);
    fclose(f);
    for (const tl_cmd *c = tl_cmds; c->name; c++) {
        char h[64];
        snprintf(h, sizeof h, "### tlctl %s\n", c->name);
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, h));
        for (const tl_opt *o = c->opts; o->name; o++) {
            char opt[80];
            snprintf(opt, sizeof opt, "--%s`", o->name);
            CU_ASSERT_PTR_NOT_NULL(strstr(buf, opt));
        }
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "| 130 |"));
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    tl_print_help(f, tl_cmd_find("check"));
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "usage: tlctl check"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "-p, --problem K=V,.."));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "[env TILETUNE_URL]"));
    free(buf);
}

static const tt_test_case cases[] = {
    {"table_consistent", test_table_consistent},
    {"parse_spellings", test_parse_spellings},
    {"parse_errors", test_parse_errors},
    {"config_precedence", test_config_precedence},
    {"help_and_markdown", test_help_and_markdown},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"tlctl_opts", NULL, NULL, cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

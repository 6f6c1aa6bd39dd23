/* SPDX-License-Identifier: MIT
 * opts.c - the one table of tlctl's commands and options: it drives parsing, --help, the
 * configuration precedence and docs/tlctl.md (`tlctl help --markdown`).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "suggest.h"
#include "tlctl.h"

#define P_OPT {"problem", 'p', "K=V,..", "problem: template inputs, e.g. M=4096,N=4096,K=4096,dtype=float16", NULL, 0}
#define TG_OPT {"target", 't', "NAME", "target SoC (a2, a3 or a full name; `tlctl targets`)", NULL, 0}

/* Global options (index order is fixed: tl_args_parse applies them by name). */
const tl_opt tl_global_opts[] = {
    {"url", 0, "URL", "server URL (default http://127.0.0.1:7878)", "TILETUNE_URL", 0},
    {"token", 0, "TOKEN", "bearer token for the API", "TILETUNE_TOKEN", 0},
    {"config-file", 0, "FILE", "config file (default ~/.config/tiletune/tlctl.conf)",
     "TLCTL_CONFIG", 0},
    {"json", 0, NULL, "print the server's JSON answer instead of a table", NULL, 0},
    {"timeout", 0, "SECONDS", "request timeout (default 60; a 503 busy answer is retried until it is spent; --wait streams are not limited)",
     NULL, 0},
    {"no-color", 0, NULL, "no colour (also when NO_COLOR is set and not empty, or stdout is not a terminal)",
     "NO_COLOR", 0},
    {"help", 'h', NULL, "show help for the command", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static const tl_opt o_tune[] = {
    P_OPT, TG_OPT,
    {"backend", 'b', "B", "measurement backend: sim (default), model, replay:NAME, cmd:NAME", NULL, 0},
    {"strategy", 's', "S", "auto (default: model-bo with a kernel program, else bo; up to 1500 trials), bo, model-bo, model-refine, model-topk, evolution, anneal, random, exhaustive", NULL, 0},
    {"objective", 0, "O", "what ranks a config: median (default), mean, min of its samples; recorded (replay: the dataset's own, the default there)", NULL, 0},
    {"budget", 'n', "N", "trials to measure (default 32)", NULL, 0},
    {"seed", 0, "N", "random seed (default 0)", NULL, 0},
    {"wait", 'w', NULL, "follow the job with a progress bar and print the result", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_best[] = {
    P_OPT, TG_OPT,
    {"nearest", 0, NULL, "when the exact shape was not tuned, take the closest tuned one", NULL, 0},
    {"backend", 'b', "B", "only configs measured by this backend", NULL, 0},
    {"format", 'f', "FMT", "table (default), json, env (TT_BLOCK_M=128 lines), args (--block_M=128 ...)", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_jobs[] = {
    {"status", 0, "S", "only jobs in this state: queued, running, done, failed, cancelled", NULL, 0},
    {"template", 0, "T", "only jobs of this template", NULL, 0},
    {"target", 0, "NAME", "only jobs on this target (name or alias)", NULL, 0},
    {"owner", 0, "TOKEN", "only jobs submitted with this token name", NULL, 0},
    {"limit", 0, "N", "at most N jobs (default 100)", NULL, 0},
    {"offset", 0, "N", "skip the N newest (a full page ends with the --offset of the next)", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_job[] = {
    {"trials", 0, NULL, "also list the job's trials (a failed one with its error)", NULL, 0},
    {"plot", 0, NULL, "draw best-so-far vs trial number (and each trial as a dot) in the terminal", NULL, 0},
    {"params", 0, NULL, "for each tunable, a bar chart of the best time seen per value", NULL, 0},
    {"width", 0, "N", "plot width in columns (default: the terminal's, $COLUMNS, or 80)", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_none[] = {{NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_predict[] = {
    P_OPT, TG_OPT,
    {"config", 'c', "K=V,..", "predict this config (default: the model's top K of the space)", NULL, 0},
    {"top", 'k', "K", "how many of the space's best predictions (default 10)", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_simulate[] = {
    P_OPT, TG_OPT,
    {"config", 'c', "K=V,..", "the config to simulate (required)", NULL, 0},
    {"trace", 0, "FILE", "write the Chrome trace (open in Perfetto) of core 0 to FILE", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_check[] = {
    {"template", 'T', "T", "template of the entries (required): a name, or a document file whose name is used", NULL, 0},
    {"problem", 'p', "K=V,..", "a problem to check (repeat for several)", NULL, 1},
    TG_OPT,
    {"baseline", 0, "NAME", "compare with this pinned baseline (default: the stored best)", NULL, 0},
    {"against", 0, "best", "compare with the stored best (the default)", NULL, 0},
    {"measured", 'm', "FILE", "latencies measured by the CI job (JSON, see docs/ci.md)", NULL, 0},
    {"remeasure", 0, NULL, "ask the server to re-measure the stored best configs", NULL, 0},
    {"backend", 'b', "B", "backend for --remeasure (default sim); also selects baseline rows", NULL, 0},
    {"tolerance", 0, "X", "allowed slowdown as a fraction (default 0.05 = 5%)", NULL, 0},
    {"fail-on-missing", 0, NULL, "an entry without a baseline fails the check too", NULL, 0},
    {"format", 'f', "FMT", "table (default), json, junit (JUnit XML for CI systems)", NULL, 0},
    {"output", 'o', "FILE", "write the report to FILE instead of stdout", NULL, 0},
    {"pin", 0, "NAME",
     "pin the current best configs as baseline NAME (no check: the check's options are refused)",
     NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_export[] = {
    {"template", 'T', "T", "template to export (required): a name, or a document file whose name is used", NULL, 0},
    TG_OPT,
    {"format", 'f', "FMT", "json (default), t4, specializations (xLLM Python), registry-inc (xLLM C++), c-header", NULL, 0},
    {"backend", 'b', "B", "only configs measured by this backend", NULL, 0},
    {"problem", 'p', "K=V,..", "only this problem (t4: the tuning run of this problem)", NULL, 0},
    {"job", 0, "ID", "t4: the trials of this job", NULL, 0},
    {"output", 'o', "FILE", "write to FILE instead of stdout", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_import[] = {
    {"format", 'f', "FMT", "t4, kt-cache or t1 (default: recognised from the content)", NULL, 0},
    {"template", 'T', "NAME", "template the records belong to (T1: the new template's name)", NULL, 0},
    TG_OPT, P_OPT,
    {NULL, 0, NULL, NULL, NULL, 0}};
static const tl_opt o_help[] = {
    {"markdown", 0, NULL, "print the whole reference as Markdown (docs/tlctl.md)", NULL, 0},
    {NULL, 0, NULL, NULL, NULL, 0}};

const tl_cmd tl_cmds[] = {
    {"tune", "TEMPLATE [-p K=V,..] -t TARGET [options]", "submit a tuning job",
     "POST /v1/tune.  TEMPLATE is a name or a template document file (./k.json: sent inline "
     "and stored; see Templates).  -p may be left out for a template without inputs or whose every input "
     "has a default (the defaults apply).  Prints the job id; with --wait a live progress bar (trials done / planned, "
     "best so far, ETA) fed by the job's event stream, on a terminal with the convergence curve "
     "(as `tlctl job ID --plot`) redrawn under it, then the result.  Ctrl-C during --wait "
     "asks whether to cancel the job (on a terminal); otherwise the job keeps running and tlctl "
     "prints how to cancel it.", o_tune, 1, 1, tl_cmd_tune},
    {"best", "TEMPLATE [-p K=V,..] -t TARGET [options]", "the best tuned config of a shape",
     "GET /v1/best: the fastest config the template's current version runs, measured by any "
     "version of it (as tlctl export picks); TEMPLATE may be a document file: that version's "
     "own best.  -p may be left out (or given empty, -p \"\") for a template without "
     "inputs or whose every input has a default; when an input has no default it is required "
     "(tlctl looks the template up to tell).  --format env prints TT_BLOCK_M=128 lines for a shell; args prints "
     "--block_M=128 --block_N=256 ... for a Python launcher.", o_best, 1, 1, tl_cmd_best},
    {"jobs", "[options]", "list jobs", "GET /v1/jobs, newest first.", o_jobs, 0, 0, tl_cmd_jobs},
    {"job", "ID [--trials] [--plot] [--params]", "show a job",
     "GET /v1/jobs/{id} (and /trials).  --plot draws the convergence curve (best so far as a "
     "line, each trial as a dot) with Unicode braille characters in the terminal width; --params "
     "shows which knob matters: the best time seen per value of each tunable.  Colour only on "
     "a terminal with NO_COLOR unset or empty.  --trials lists every trial (all pages); --width goes "
     "with --plot or --params.", o_job, 1, 1,
     tl_cmd_job},
    {"cancel", "ID", "cancel a queued or running job", "DELETE /v1/jobs/{id}.", o_none, 1, 1,
     tl_cmd_cancel},
    {"templates", "", "list templates",
     "GET /v1/templates: name, version, hash, built-in, kernel and a one-line description "
     "(`summary`, the first sentence of the template's description).",
     o_none, 0, 0, tl_cmd_templates},
    {"targets", "", "list targets", "GET /v1/targets.", o_none, 0, 0, tl_cmd_targets},
    {"predict", "TEMPLATE -p K=V,.. -t TARGET [--config K=V,..] [--top K]",
     "cost-model predictions (not measurements)",
     "POST /v1/predict.  TEMPLATE may be a document file (sent inline, not stored).  Output "
     "is labelled as model predictions; a row shows the predicted time, the model's error "
     "band for the template's family (BAND: the answer's low_us..high_us, "
     "docs/cost-model.md), the bound and the config.", o_predict, 1, 1,
     tl_cmd_predict},
    {"simulate", "TEMPLATE -p K=V,.. -t TARGET --config K=V,.. [--trace FILE]",
     "simulate one config on the pipeline simulator",
     "POST /v1/simulate.  TEMPLATE may be a document file (sent inline, not stored).  Output "
     "is labelled as simulated (a model of the chip, not hardware).",
     o_simulate, 1, 1, tl_cmd_simulate},
    {"check", "-T TEMPLATE -t TARGET [-p K=V,..] (--measured FILE | --remeasure) [options]",
     "CI performance-regression check against the stored best or a pinned baseline",
     "POST /v1/check.  Each entry gets a verdict: pass, regressed, improved, missing (no "
     "baseline) or error (re-measurement failed).  Exit code 1 when any entry regressed or "
     "errored.  --pin NAME copies the current best rows into baseline NAME instead.  For a "
     "template without inputs, or whose every input has a default, -p may be empty (-p \"\") "
     "or left out: the problem is sent as {} and the defaults apply.  "
     "See docs/ci.md for the rule and the --measured file format.", o_check, 0, 0, tl_cmd_check},
    {"export", "-T TEMPLATE -t TARGET [--format json|t4|specializations|registry-inc|c-header] [-o FILE]",
     "export tuned configs for AOT builds or other tools",
     "GET /v1/export.  specializations is the DISPATCH_SCHEMA and SPECIALIZATIONS of an xLLM "
     "TilelangKernel class; registry-inc a C++ header shaped like xLLM's generated registry.inc; "
     "c-header a static dispatch table with an exact-shape find_<template>_entry() lookup.", o_export, 0, 0, tl_cmd_export},
    {"import", "FILE [--format t4|kt-cache|t1] [-T TEMPLATE] [-t TARGET] [-p K=V,..]",
     "import recorded measurements or a T1 search space",
     "POST /v1/import.  T4 and Kernel Tuner cache files (gzip accepted, and a cache left open "
     "by an interrupted Kernel Tuner run) become trials of a done job with strategy import; a "
     "T1 file becomes a template (its Values may be the Python list expressions T1 files write; "
     "a file named like a built-in template needs -T NAME).  Importing the same file again "
     "adds nothing; the counts added / skipped / rejected are printed.", o_import, 1, 1,
     tl_cmd_import},
    {"help", "[COMMAND] [--markdown]", "show help", NULL, o_help, 0, 1, tl_cmd_help},
    {"version", "", "print the version", NULL, o_none, 0, 0, tl_cmd_version},
    {NULL, NULL, NULL, NULL, NULL, 0, 0, NULL},
};

const tl_cmd *tl_cmd_find(const char *name)
{
    for (const tl_cmd *c = tl_cmds; c->name; c++)
        if (!strcmp(c->name, name)) return c;
    return NULL;
}

/* Count the entries of a NULL-name-terminated table of records of `size` bytes. */
static size_t tl_table_len(const void *first, size_t size)
{
    size_t n = 0;
    for (const char *r = first;; r += size, n++) {
        const char *name;
        memcpy(&name, r, sizeof name);
        if (!name) return n;
    }
}

const char *tl_cmd_suggest(const char *word)
{
    return tt_suggest_in(word, strlen(word), tl_cmds, sizeof tl_cmds[0],
                         tl_table_len(tl_cmds, sizeof tl_cmds[0]));
}

const char *tl_opt_suggest(const tl_opt *opts, const char *word, size_t len)
{
    const char *s = tt_suggest_in(word, len, opts, sizeof *opts, tl_table_len(opts, sizeof *opts));
    if (!s && opts != tl_global_opts)
        s = tt_suggest_in(word, len, tl_global_opts, sizeof *tl_global_opts,
                          tl_table_len(tl_global_opts, sizeof *tl_global_opts));
    return s;
}

const char *tl_arg(const tl_cmd *cmd, const tl_args *a, const char *name)
{
    for (int i = 0; cmd->opts[i].name; i++)
        if (!strcmp(cmd->opts[i].name, name)) return a->val[i];
    return NULL;
}

void tl_args_free(tl_args *a)
{
    for (int i = 0; i < TL_MAX_OPTS; i++) free(a->owned[i]);
    memset(a, 0, sizeof *a);
}

/* Find an option by long name (len chars) or short letter. */
static int tl_find(const tl_opt *opts, const char *name, size_t len, char sh)
{
    for (int i = 0; opts[i].name; i++) {
        if (sh ? opts[i].shortname == sh
               : (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len)))
            return i;
    }
    return -1;
}

/* dst = v (the url or token, from src), or -1 after one line naming `what` when v does not
 * fit (it used to be cut short without a word: a long token then failed as "unknown") or
 * holds a control character (a token with a newline was sent as two header lines). */
static int tl_take(char *dst, size_t cap, const char *v, const char *what, const char **srcp,
                   const char *src)
{
    size_t n = strlen(v);
    if (n >= cap) {
        fprintf(stderr, "tlctl: %s is %zu bytes, longer than tlctl takes (%zu)\n", what, n,
                cap - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {   /* would cut or forge a request header line */
        unsigned char ch = (unsigned char)v[i];
        if (ch < 0x20 || ch == 0x7f) {   /* the value itself is a secret: not printed */
            fprintf(stderr, "tlctl: %s holds a control character (byte 0x%02x at offset %zu)\n",
                    what, ch, i);
            return -1;
        }
    }
    memcpy(dst, v, n + 1);
    *srcp = src;
    return 0;
}

/* --timeout / `timeout =`: seconds in 1..86400.  0 with *out, or -1. */
static int tl_timeout_parse(const char *v, long *out)
{
    char *end;
    errno = 0;
    long t = strtol(v, &end, 10);
    if (!*v || *end || errno == ERANGE || t < 1 || t > 86400) return -1;
    *out = t;
    return 0;
}

static int tl_apply_global(tl_ctx *c, int gi, const char *v, int *help)
{
    const char *n = tl_global_opts[gi].name;
    if (!strcmp(n, "url")) {
        if (tl_take(c->url, sizeof c->url, v, "--url", &c->url_src, "flag")) return TL_EXIT_USAGE;
    } else if (!strcmp(n, "token")) {
        if (tl_take(c->token, sizeof c->token, v, "--token", &c->token_src, "flag"))
            return TL_EXIT_USAGE;
    } else if (!strcmp(n, "json")) {
        c->json = 1;
    } else if (!strcmp(n, "timeout")) {
        if (tl_timeout_parse(v, &c->timeout_s)) {
            fprintf(stderr, "tlctl: --timeout needs seconds in 1..86400, got \"%s\"\n", v);
            return TL_EXIT_USAGE;
        }
    } else if (!strcmp(n, "no-color")) {
        c->color = 0;
        c->nocolor = 1;
    } else if (!strcmp(n, "help")) {
        *help = 1;
    }   /* config-file was handled before the file was read */
    return 0;
}

int tl_args_parse(tl_ctx *c, const tl_cmd *cmd, int argc, char **argv, tl_args *a, int *help)
{
    memset(a, 0, sizeof *a);
    *help = 0;
    int only_pos = 0;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (only_pos || s[0] != '-' || !s[1]) {
            if (a->npos >= cmd->npos_max || a->npos >= TL_MAX_POS) {
                fprintf(stderr, "tlctl %s: unexpected argument \"%s\" (see tlctl %s --help)\n",
                        cmd->name, s, cmd->name);
                return TL_EXIT_USAGE;
            }
            a->pos[a->npos++] = s;
            continue;
        }
        if (!strcmp(s, "--")) { only_pos = 1; continue; }
        const char *name, *eq = NULL;
        size_t len;
        char sh = 0;
        if (s[1] == '-') {
            name = s + 2;
            eq = strchr(name, '=');
            len = eq ? (size_t)(eq - name) : strlen(name);
        } else {
            name = s + 1;
            sh = s[1];
            len = 1;
            if (s[2]) eq = s + 1;   /* -pM=1: value attached */
        }
        const tl_opt *opt;
        int ci = tl_find(cmd->opts, name, len, sh), gi = -1;
        if (ci >= 0) opt = &cmd->opts[ci];
        else if ((gi = tl_find(tl_global_opts, name, len, sh)) >= 0) opt = &tl_global_opts[gi];
        else {
            const char *hint = sh ? NULL : tl_opt_suggest(cmd->opts, name, len);
            char ph[96];
            fprintf(stderr, "tlctl %s: unknown option %.*s%.*s%s (see tlctl %s --help)\n",
                    cmd->name, sh ? 1 : 2, "--", (int)len, name,
                    tt_suggest_phrase(ph, sizeof ph, hint, "--"), cmd->name);
            return TL_EXIT_USAGE;
        }
        const char *v = "1";
        if (opt->arg) {
            if (eq) v = eq + 1;
            else if (i + 1 < argc) v = argv[++i];
            else {
                fprintf(stderr, "tlctl %s: option --%s needs a value (%s)\n", cmd->name,
                        opt->name, opt->arg);
                return TL_EXIT_USAGE;
            }
        } else if (eq) {
            fprintf(stderr, "tlctl %s: option --%s takes no value\n", cmd->name, opt->name);
            return TL_EXIT_USAGE;
        }
        if (gi >= 0) {
            int rc = tl_apply_global(c, gi, v, help);
            if (rc) return rc;
            continue;
        }
        if (a->val[ci] && opt->multi) {
            size_t n = strlen(a->val[ci]) + strlen(v) + 2;
            char *j = malloc(n);
            if (!j) return TL_EXIT_USAGE;
            snprintf(j, n, "%s;%s", a->val[ci], v);
            free(a->owned[ci]);
            a->owned[ci] = j;
            a->val[ci] = j;
        } else {
            a->val[ci] = v;
        }
    }
    if (*help) return 1;
    if (a->npos < cmd->npos_min) {
        fprintf(stderr, "tlctl %s: missing argument (usage: tlctl %s %s)\n", cmd->name,
                cmd->name, cmd->usage);
        return TL_EXIT_USAGE;
    }
    /* defaults from the environment for options that name one */
    for (int i = 0; cmd->opts[i].name; i++)
        if (!a->val[i] && cmd->opts[i].env) a->val[i] = getenv(cmd->opts[i].env);
    return 0;
}

/* 1 when s is valid UTF-8: jansson's own check (no overlong forms, no surrogates, nothing
 * above U+10FFFF), the one the JSON body would fail on. */
static int tl_utf8_valid(const char *s)
{
    json_t *j = json_string(s);
    int ok = j != NULL;
    json_decref(j);
    return ok;
}

int tl_args_utf8(const tl_cmd *cmd, const tl_args *a, const char *const *skip)
{
    for (int i = 0; i < a->npos; i++) {
        if (!tl_utf8_valid(a->pos[i])) {
            fprintf(stderr, "tlctl %s: argument %d is not valid UTF-8 (bad_encoding)\n",
                    cmd->name, i + 1);
            return TL_EXIT_USAGE;
        }
    }
    for (int i = 0; cmd->opts[i].name; i++) {
        int skipped = 0;
        for (size_t k = 0; skip && skip[k]; k++) skipped |= !strcmp(skip[k], cmd->opts[i].name);
        if (!skipped && a->val[i] && !tl_utf8_valid(a->val[i])) {
            fprintf(stderr, "tlctl %s: --%s is not valid UTF-8 (bad_encoding)\n", cmd->name,
                    cmd->opts[i].name);
            return TL_EXIT_USAGE;
        }
    }
    return 0;
}

int tl_num_arg(const tl_cmd *cmd, const tl_args *a, const char *opt, double lo, double hi,
               const char *what, double *out)
{
    const char *v = tl_arg(cmd, a, opt);
    if (!v) return 0;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    /* "" reads nothing and 1e-400 underflows to 0 (ERANGE): neither is the 0 it would be */
    if (!*v || *end || errno == ERANGE || !(x >= lo && x <= hi)) {
        fprintf(stderr, "tlctl %s: --%s is %s, got \"%s\"\n", cmd->name, opt, what, v);
        return TL_EXIT_USAGE;
    }
    *out = x;
    return 0;
}

int tl_oom(const tl_cmd *cmd)
{
    fprintf(stderr, "tlctl %s: out of memory\n", cmd->name);
    return TL_EXIT_SERVER;
}

static void tl_opt_line(FILE *f, const tl_opt *o)
{
    char left[64];
    if (o->shortname)
        snprintf(left, sizeof left, "-%c, --%s%s%s", o->shortname, o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
    else
        snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(f, "  %-26s %s%s%s%s\n", left, o->help, o->env ? " [env " : "", o->env ? o->env : "",
            o->env ? "]" : "");
}

void tl_print_help(FILE *f, const tl_cmd *cmd)
{
    fprintf(f, "usage: tlctl %s %s\n\n%s.\n", cmd->name, cmd->usage, cmd->summary);
    if (cmd->details) fprintf(f, "%s\n", cmd->details);
    if (cmd->opts[0].name) {
        fprintf(f, "\noptions:\n");
        for (int i = 0; cmd->opts[i].name; i++) tl_opt_line(f, &cmd->opts[i]);
    }
    fprintf(f, "\nglobal options:\n");
    for (int i = 0; tl_global_opts[i].name; i++) tl_opt_line(f, &tl_global_opts[i]);
}

void tl_print_usage(FILE *f)
{
    fprintf(f, "usage: tlctl [global options] COMMAND [options]\n\n"
               "tlctl talks to a tiletune daemon (tiletuned).\n\ncommands:\n");
    for (const tl_cmd *c = tl_cmds; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\nglobal options:\n");
    for (int i = 0; tl_global_opts[i].name; i++) tl_opt_line(f, &tl_global_opts[i]);
    fprintf(f, "\n`tlctl COMMAND --help` shows the options of a command.\n");
}

static void tl_md_opts(FILE *f, const tl_opt *o)
{
    fprintf(f, "| option | value | meaning | environment |\n|---|---|---|---|\n");
    for (; o->name; o++) {
        if (o->shortname) fprintf(f, "| `-%c, --%s` | %s | ", o->shortname, o->name, o->arg ? o->arg : "");
        else fprintf(f, "| `--%s` | %s | ", o->name, o->arg ? o->arg : "");
        for (const char *p = o->help; *p; p++) {   /* escape table pipes */
            if (*p == '|') fputs("\\|", f);
            else fputc(*p, f);
        }
        fprintf(f, "%s | %s%s%s |\n", o->multi ? " (repeatable)" : "", o->env ? "`" : "",
                o->env ? o->env : "", o->env ? "`" : "");
    }
}

void tl_print_markdown(FILE *f)
{
    fprintf(f, "<!-- Generated by `tlctl help --markdown` from client/opts.c; do not edit. -->\n"
               "# tlctl reference\n\n"
               "`tlctl` is the command-line client of tiletuned.  It follows git/kubectl "
               "conventions: `tlctl [global options] COMMAND [options]`, `--help` on every "
               "command, `--json` for scripts.\n\n"
               "## Configuration\n\n"
               "Precedence: defaults < config file < environment < flags.  The config file "
               "(`~/.config/tiletune/tlctl.conf`, or `$XDG_CONFIG_HOME/tiletune/tlctl.conf`, or "
               "`--config-file` / `TLCTL_CONFIG`) holds `key = value` lines: `url`, `token`, "
               "`timeout` (seconds in 1..86400, as `--timeout`); a line starting with `#` is a comment, "
               "and so is the rest of a line from a `#` that follows a space or tab (`url = "
               "http://h:7878 # lab`), so a value cannot contain ` #`; one pair of double or single "
               "quotes around a value is not part of it (`token = \"abc\"` is abc).  A bad value, an unknown "
               "key or a directory given as the file is a usage error (exit 2) naming the file (and line).  The default URL is http://127.0.0.1:7878.  "
               "A server on this machine's loopback (localhost, 127.0.0.0/8, [::1]) is reached "
               "directly, whatever `http_proxy` / `ALL_PROXY` and `no_proxy` say; other hosts go "
               "through the proxy the environment names, as with curl.  "
               "Colour is used only when stdout is a terminal and `NO_COLOR` is unset or empty "
               "(no-color.org).  "
               "Text from the server (names, versions, messages quoting a toolchain's output) "
               "is printed in tables and text lines with its control characters spelled "
               "`\\xNN` (C0, DEL, C1; `\\uNNNN` for the bidirectional overrides) and bytes "
               "that are not UTF-8 as `\\xNN`, so no escape sequence it carries acts on your "
               "terminal; `--json` and `-f json` print it exact.\n\n"
               "## Exit codes\n\n"
               "| code | meaning |\n|---|---|\n"
               "| 0 | success (check: nothing regressed) |\n"
               "| 1 | check: an entry regressed, or its re-measurement failed |\n"
               "| 2 | usage error: bad flag or argument, unreadable input file, a server URL "
               "that is not `http://` or `https://` with a host (no query or fragment) or an "
               "over-long url or token, or one holding a control character (also when the "
               "server could not decode what was sent: `400 bad_encoding`, e.g. a corrupt or "
               "truncated gzip file given to `import`, or an argument that is not valid "
               "UTF-8; tune, predict, simulate and check, which send their arguments in a JSON "
               "body, refuse such an argument themselves with the same `bad_encoding`) |\n"
               "| 3 | server unreachable (connection refused, DNS, timeout) |\n"
               "| 4 | authentication failure (401 missing/unknown token, 403 insufficient scope) |\n"
               "| 5 | the server answered with an error: not found (404), rejected request (4xx), "
               "server error (5xx); a `503 busy` (all heavy-request workers or the "
               "connection limit taken: nothing of the request was done) is sent again after "
               "its `Retry-After`, saying so once on stderr, until `--timeout` is spent |\n"
               "| 6 | tune --wait: the job failed or was cancelled |\n"
               "| 130 | tune --wait interrupted with Ctrl-C; the job keeps running |\n\n"
               "Errors are one line on stderr: `tlctl: [<json path>: ]<message> (<api error "
               "code>, HTTP <status>)` for error answers, `tlctl: cannot reach <url>: <reason>` "
               "for transport failures.\n\n"
               "## Templates\n\n"
               "TEMPLATE (tune, best, predict, simulate) is a template's name (`tlctl "
               "templates`) or a template document file: an argument with a `/` in it or "
               "ending in `.json` is read as JSON and sent inline (`./my_kernel.json`).  tune "
               "stores it under its `name`, owned by your token (docs/api.md, PUT "
               "/v1/templates); predict and simulate use it without storing it; best asks for "
               "that version (its hash, from POST /v1/templates/{name}/validate).  export "
               "and check take `-T` a name or such a file and use the `name` inside it (the "
               "server's current version of that template).  An "
               "unreadable file, invalid JSON (duplicate keys included) or a document that is "
               "not an object is a usage error (exit 2) naming the file.\n\n"
               "## Global options\n\n");
    tl_md_opts(f, tl_global_opts);
    fprintf(f, "\n## Commands\n");
    for (const tl_cmd *c = tl_cmds; c->name; c++) {
        fprintf(f, "\n### tlctl %s\n\n`tlctl %s %s`\n\n%s.", c->name, c->name, c->usage,
                c->summary);
        if (c->details) fprintf(f, "  %s", c->details);
        fprintf(f, "\n");
        if (c->opts[0].name) {
            fprintf(f, "\n");
            tl_md_opts(f, c->opts);
        }
    }
}

/* ---- configuration ------------------------------------------------------------------ */
static void tl_trim(char **s)
{
    while (**s == ' ' || **s == '\t') (*s)++;
    char *e = *s + strlen(*s);
    while (e > *s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
}

/* Cut a trailing comment off a value: '#' after a space or tab (so "a#b" stays whole). */
static void tl_cut_comment(char *v)
{
    for (char *p = v; *p; p++) {
        if (*p == '#' && p > v && (p[-1] == ' ' || p[-1] == '\t')) {
            *p = '\0';
            return;
        }
    }
}

/* One `key = value` line of config file p (line ln) applied to c: 0, or TL_EXIT_USAGE after
 * one line naming p:ln. */
static int tl_conf_line(tl_ctx *c, const char *p, int ln, char *s)
{
    char *eq = strchr(s, '=');
    if (!eq) {
        fprintf(stderr, "tlctl: %s:%d: expected key = value\n", p, ln);
        return TL_EXIT_USAGE;
    }
    *eq = 0;
    char *k = s, *v = eq + 1;
    tl_cut_comment(v);
    tl_trim(&k);
    tl_trim(&v);
    size_t n = strlen(v);   /* one pair of surrounding quotes is not part of the value */
    if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
        v[n - 1] = 0;
        v++;
    }
    char where[1100];
    snprintf(where, sizeof where, "%s:%d: %s", p, ln, k);
    if (!strcmp(k, "url")) {
        if (tl_take(c->url, sizeof c->url, v, where, &c->url_src, "file")) return TL_EXIT_USAGE;
    } else if (!strcmp(k, "token")) {
        if (tl_take(c->token, sizeof c->token, v, where, &c->token_src, "file"))
            return TL_EXIT_USAGE;
    } else if (!strcmp(k, "timeout")) {
        if (tl_timeout_parse(v, &c->timeout_s)) {
            fprintf(stderr, "tlctl: %s:%d: timeout needs seconds in 1..86400, got \"%s\"\n", p,
                    ln, v);
            return TL_EXIT_USAGE;
        }
    } else {
        fprintf(stderr, "tlctl: %s:%d: unknown key \"%s\" (url, token, timeout)\n", p, ln, k);
        return TL_EXIT_USAGE;
    }
    return 0;
}

int tl_ctx_load(tl_ctx *c, const char *config_path)
{
    snprintf(c->url, sizeof c->url, "http://127.0.0.1:7878");
    c->url_src = c->token_src = "default";
    c->timeout_s = 60;
    const char *nc = getenv("NO_COLOR");   /* no-color.org: set and not empty */
    c->nocolor = nc && *nc;
    c->color = isatty(1) && !c->nocolor;
    char path[1024];
    const char *p = config_path ? config_path : getenv("TLCTL_CONFIG");
    int explicit_path = p != NULL;
    if (!p) {
        const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
        if (x && *x) snprintf(path, sizeof path, "%s/tiletune/tlctl.conf", x);
        else snprintf(path, sizeof path, "%s/.config/tiletune/tlctl.conf", h ? h : ".");
        p = path;
    }
    FILE *f = fopen(p, "r");
    struct stat st;
    if (f && (fstat(fileno(f), &st) || S_ISDIR(st.st_mode))) {
        fclose(f);
        f = NULL;
        errno = EISDIR;
        explicit_path = 1;   /* a directory where the file should be is an error either way */
    }
    if (!f && explicit_path) {
        fprintf(stderr, "tlctl: cannot read config file %s: %s\n", p, strerror(errno));
        return TL_EXIT_USAGE;
    }
    char line[1024];
    int ln = 0, rc = 0;
    while (!rc && f && fgets(line, sizeof line, f)) {
        ln++;
        char *s = line;
        tl_trim(&s);
        if (*s && *s != '#') rc = tl_conf_line(c, p, ln, s);
    }
    if (f && !rc && ferror(f)) {
        fprintf(stderr, "tlctl: cannot read config file %s: %s\n", p, strerror(errno));
        rc = TL_EXIT_USAGE;
    }
    if (f) fclose(f);
    if (rc) return rc;
    const char *e;
    if ((e = getenv("TILETUNE_URL")) && *e &&
        tl_take(c->url, sizeof c->url, e, "TILETUNE_URL", &c->url_src, "environment"))
        return TL_EXIT_USAGE;
    if ((e = getenv("TILETUNE_TOKEN")) && *e &&
        tl_take(c->token, sizeof c->token, e, "TILETUNE_TOKEN", &c->token_src, "environment"))
        return TL_EXIT_USAGE;
    return 0;
}

/* SPDX-License-Identifier: MIT
 * tlctl.c - main of tlctl, the command-line client of tiletuned: configuration, subcommand
 * dispatch, help and version.
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"
#include "tlctl.h"

static void tl_unknown_command(const char *name)
{
    char ph[96];
    fprintf(stderr, "tlctl: unknown command \"%s\"%s (see tlctl help)\n", name,
            tt_suggest_phrase(ph, sizeof ph, tl_cmd_suggest(name), ""));
}

int tl_cmd_help(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    (void)c;
    if (tl_arg(cmd, a, "markdown")) { tl_print_markdown(stdout); return 0; }
    if (a->npos) {
        const tl_cmd *k = tl_cmd_find(a->pos[0]);
        if (!k) {
            tl_unknown_command(a->pos[0]);
            return TL_EXIT_USAGE;
        }
        tl_print_help(stdout, k);
        return 0;
    }
    tl_print_usage(stdout);
    return 0;
}

int tl_cmd_version(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    (void)c; (void)cmd; (void)a;
    printf("tlctl %s (libcurl %s)\n", TT_VERSION, curl_version_info(CURLVERSION_NOW)->version);
    return 0;
}

int main(int argc, char **argv)
{
    /* --config-file must be known before the file is read; it may appear anywhere */
    const char *cfgfile = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--config-file") && i + 1 < argc) cfgfile = argv[i + 1];
        else if (!strncmp(argv[i], "--config-file=", 14)) cfgfile = argv[i] + 14;
    }
    tl_ctx c;
    memset(&c, 0, sizeof c);
    int rc = tl_ctx_load(&c, cfgfile);
    if (rc) return rc;
    /* the command is the first argument that is not a global option (or its value) */
    int ci = -1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (s[0] != '-') { ci = i; break; }
        const char *n = s + (s[1] == '-' ? 2 : 1);
        size_t len = strcspn(n, "=");
        int takes = 0, known = 0;
        for (int g = 0; tl_global_opts[g].name; g++) {
            if ((s[1] == '-' && strlen(tl_global_opts[g].name) == len &&
                 !strncmp(tl_global_opts[g].name, n, len)) ||
                (s[1] != '-' && tl_global_opts[g].shortname == n[0] && !n[1])) {
                known = 1;
                takes = tl_global_opts[g].arg && !strchr(n, '=');
            }
        }
        if (!strcmp(s, "--version")) { ci = -2; break; }
        if (!known) {
            const char *hint = s[1] == '-' ? tl_opt_suggest(tl_global_opts, n, len) : NULL;
            char ph[96];
            fprintf(stderr, "tlctl: unknown option %s%s (see tlctl --help)\n", s,
                    tt_suggest_phrase(ph, sizeof ph, hint, "--"));
            return TL_EXIT_USAGE;
        }
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) { tl_print_usage(stdout); return 0; }
        if (takes) i++;
    }
    if (ci == -2) return tl_cmd_version(&c, NULL, NULL);
    if (ci < 0) {
        tl_print_usage(stderr);
        return TL_EXIT_USAGE;
    }
    const tl_cmd *cmd = tl_cmd_find(argv[ci]);
    if (!cmd) {
        tl_unknown_command(argv[ci]);
        return TL_EXIT_USAGE;
    }
    /* global options before the command, then the command's own arguments */
    int nargs = argc - 2;
    char **args = calloc((size_t)(nargs > 0 ? nargs : 1), sizeof *args);
    if (!args) return TL_EXIT_USAGE;
    int k = 0;
    for (int i = 1; i < argc; i++)
        if (i != ci) args[k++] = argv[i];
    tl_args a;
    int help = 0;
    rc = tl_args_parse(&c, cmd, k, args, &a, &help);
    if (rc == 1 && help) {
        tl_print_help(stdout, cmd);
        rc = 0;
    } else if (rc == 0) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        rc = cmd->run(&c, cmd, &a);
        curl_global_cleanup();
    }
    tl_args_free(&a);
    free(args);
    return rc;
}

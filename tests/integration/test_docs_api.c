/* SPDX-License-Identifier: MIT
 * test_docs_api.c - runs every curl example of docs/api.md against a live daemon and checks
 * the status written after it ("# expect: NNN"), so the documentation cannot drift from
 * the API.  Needs the curl program (deploy/install-deps.sh installs it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_daemon.h"
#include "tt_test.h"

typedef struct example {
    char *cmd;
    long expect;
    int line;
} example;

static tt_daemon D;

/* Extract the (command, expected status) pairs of ```sh blocks. */
static size_t extract(const char *md, example *out, size_t cap)
{
    size_t n = 0;
    int in_sh = 0, lineno = 0;
    char *cmd = NULL;
    int cmd_line = 0;
    const char *p = md;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[8192];
        if (len >= sizeof line) len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        lineno++;
        p += len + (e ? 1 : 0);
        if (!strncmp(line, "```", 3)) {
            in_sh = !in_sh && !strcmp(line, "```sh");
            continue;
        }
        if (!in_sh) continue;
        if (!strncmp(line, "# expect:", 9)) {
            if (cmd && n < cap) {
                out[n].cmd = cmd;
                out[n].expect = strtol(line + 9, NULL, 10);
                out[n].line = cmd_line;
                n++;
                cmd = NULL;
            }
            continue;
        }
        size_t ll = strlen(line);
        int cont = ll && line[ll - 1] == '\\';
        if (cont) line[--ll] = '\0';
        if (!cmd) {
            if (strncmp(line, "curl ", 5)) continue;
            cmd = strdup(line);
            cmd_line = lineno;
        } else {
            size_t ol = strlen(cmd);
            char *nc = realloc(cmd, ol + ll + 2);
            if (!nc) break;
            cmd = nc;
            cmd[ol] = ' ';
            memcpy(cmd + ol + 1, line, ll + 1);
        }
    }
    free(cmd);
    return n;
}

static void test_examples(void)
{
    char *path = tt_test_src("docs/api.md");
    char *md = tt_test_read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    example ex[256];
    size_t n = extract(md, ex, 256);
    CU_ASSERT(n >= 40);              /* every route has at least one example */
    setenv("TT_URL", D.url, 1);
    setenv("TT_TOKEN", TT_TOKEN_TUNE, 1);
    setenv("TT_ADMIN_TOKEN", TT_TOKEN_ADMIN, 1);
    const char *must[] = {"/v1/tune", "/v1/jobs/1/events", "/v1/predict", "/v1/simulate",
                          "/v1/best", "/v1/templates", "/v1/targets", "/metrics", "/v1/check",
                          "/v1/export", "/v1/import"};
    enum { NMUST = sizeof must / sizeof must[0] };
    int routes_seen[NMUST] = {0};
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < NMUST; k++)
            if (strstr(ex[i].cmd, must[k])) routes_seen[k] = 1;
        size_t cl = strlen(ex[i].cmd) + 64;
        char *full = malloc(cl);
        snprintf(full, cl, "%s -w '\\n%%{http_code}'", ex[i].cmd);
        FILE *f = popen(full, "r");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        char *out = NULL;
        size_t olen = 0, ocap = 0;
        char buf[4096];
        size_t r;
        while ((r = fread(buf, 1, sizeof buf, f)) > 0) {
            if (olen + r + 1 > ocap) {
                ocap = (olen + r + 1) * 2;
                out = realloc(out, ocap);
            }
            memcpy(out + olen, buf, r);
            olen += r;
        }
        int st = pclose(f);
        if (out) out[olen] = '\0';
        char *nl = out ? strrchr(out, '\n') : NULL;
        long code = nl ? strtol(nl + 1, NULL, 10) : -1;
        if (code != ex[i].expect || st != 0)
            fprintf(stderr, "\ndocs/api.md:%d: got %ld (exit %d), want %ld: %s\n  -> %.300s\n",
                    ex[i].line, code, st, ex[i].expect, ex[i].cmd, out ? out : "");
        CU_ASSERT_EQUAL(code, ex[i].expect);
        if (code == 202 && strstr(ex[i].cmd, "/v1/tune") && nl) {
            *nl = '\0';
            json_t *j = json_loads(out, 0, NULL);
            long long id = (long long)json_integer_value(json_object_get(j, "job"));
            json_decref(j);
            CU_ASSERT(id > 0);
            const char *fin = tt_daemon_wait_job(&D, id, 60);
            CU_ASSERT_PTR_NOT_NULL(fin);
        }
        free(out);
        free(full);
        free(ex[i].cmd);
    }
    for (int k = 0; k < NMUST; k++) {
        if (!routes_seen[k]) fprintf(stderr, "docs/api.md: no example for %s\n", must[k]);
        CU_ASSERT(routes_seen[k]);
    }
    free(md);
    free(path);
}

static int suite_init(void) { return tt_daemon_start(&D, NULL) ? 1 : 0; }
static int suite_clean(void)
{
    int st = tt_daemon_stop(&D);
    tt_daemon_cleanup(&D);
    return st != 0;
}

static const tt_test_case cases[] = {{"examples", test_examples}, {NULL, NULL}};
static const tt_test_suite suites[] = {{"docs_api", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

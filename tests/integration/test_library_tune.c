/* SPDX-License-Identifier: MIT
 * test_library_tune.c - the kernel library end to end on a live daemon: every family of
 * tests/data/library/shapes.txt (its first shape) is tuned on the `sim` backend with
 * model-refine and a short budget, once through POST /v1/tune (then GET /v1/best answers
 * with the job's best) and once through `tlctl tune --wait`; `tlctl templates` lists every
 * family with its one-line summary.  Times are simulator numbers (a model, not the chip).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tt_daemon.h"
#include "tt_test.h"

static tt_daemon D;

typedef struct family {
    char name[64];
    char problem[512];
} family;

static family fams[32];
static size_t nfams;

static int suite_init(void)
{
    char *path = tt_test_src("tests/data/library/shapes.txt");
    char *text = tt_test_read_file(path, NULL);
    free(path);
    if (!text) return 1;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        family f;
        if (line[0] == '#' || sscanf(line, "%63s %511s", f.name, f.problem) != 2) continue;
        if (nfams > 0 && strcmp(fams[nfams - 1].name, f.name) == 0) continue;   /* first shape */
        if (nfams < sizeof fams / sizeof fams[0]) fams[nfams++] = f;
    }
    free(text);
    return tt_daemon_start(&D, NULL) ? 1 : 0;
}

static int suite_clean(void)
{
    int st = tt_daemon_stop(&D);
    tt_daemon_cleanup(&D);
    return st != 0;
}

/* "M=1,N=2,dtype=float16" -> {"M":1,"N":2,"dtype":"float16"} (new reference). */
static json_t *problem_json(const char *kv)
{
    json_t *o = json_object();
    char buf[512];
    snprintf(buf, sizeof buf, "%s", kv);
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(p, '=');
        if (!eq) continue;
        *eq = '\0';
        char *end = NULL;
        long long v = strtoll(eq + 1, &end, 10);
        json_object_set_new(o, p, end && *end == '\0' ? json_integer(v) : json_string(eq + 1));
    }
    return o;
}

static void test_api_tune(void)
{
    CU_ASSERT_FATAL(nfams >= 12);
    for (size_t i = 0; i < nfams; i++) {
        json_t *body = json_pack("{s:s, s:o, s:s, s:s, s:s, s:{s:i}, s:i}", "template", fams[i].name,
                                 "problem", problem_json(fams[i].problem), "target", "a2", "backend",
                                 "sim", "strategy", "model-refine", "budget", "trials", 6, "seed", 1);
        char *text = json_dumps(body, JSON_COMPACT);
        long long job = tt_daemon_submit(&D, text);
        free(text);
        json_decref(body);
        CU_ASSERT(job > 0);
        if (job <= 0) continue;
        const char *st = tt_daemon_wait_job(&D, job, tt_daemon_slow(120));
        if (!st || strcmp(st, "done") != 0) fprintf(stderr, "\n%s: job %lld ended %s\n", fams[i].name, job, st ? st : "(timeout)");
        CU_ASSERT(st && strcmp(st, "done") == 0);
        char path[1024];
        snprintf(path, sizeof path, "/v1/jobs/%lld", job);
        tt_hres j;
        CU_ASSERT_EQUAL_FATAL(tt_daemon_req(&D, "GET", path, NULL, NULL, 0, &j), 0);
        json_t *best = json_object_get(j.json, "best");
        CU_ASSERT(json_number_value(json_object_get(best, "measured_us")) > 0);
        /* GET /v1/best with the problem as query parameters (its commas become '&') */
        char q[1024];
        int n = snprintf(q, sizeof q, "/v1/best?template=%s&target=a2&backend=sim&%s", fams[i].name,
                         fams[i].problem);
        for (int c = 0; c < n && c < (int)sizeof q; c++)
            if (q[c] == ',') q[c] = '&';
        tt_hres b;
        CU_ASSERT_EQUAL_FATAL(tt_daemon_req(&D, "GET", q, NULL, NULL, 0, &b), 0);
        if (b.status != 200) fprintf(stderr, "\n%s: GET %s: %ld %s\n", fams[i].name, q, b.status, b.body);
        CU_ASSERT_EQUAL(b.status, 200);
        CU_ASSERT(json_equal(json_object_get(b.json, "config"), json_object_get(best, "config")));
        tt_hres_free(&b);
        tt_hres_free(&j);
    }
}

/* Run build/bin/tlctl with args; returns the exit code, *out its stdout (malloc'd). */
static int tlctl(const char *args, char **out)
{
    char *bin = tt_test_bin("tlctl");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "TILETUNE_URL=%s TILETUNE_TOKEN=%s NO_COLOR=1 %s %s </dev/null 2>&1",
             D.url, TT_TOKEN_TUNE, bin, args);
    free(bin);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += k;
        if (cap - n < 1024) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
    }
    if (buf) buf[n] = '\0';
    int st = pclose(p);
    if (out) *out = buf;
    else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_tlctl_tune(void)
{
    for (size_t i = 0; i < nfams; i++) {
        char args[2048], *out = NULL;
        snprintf(args, sizeof args, "tune %.63s -p %.511s --target a3 --backend sim --budget 5 --wait",
                 fams[i].name, fams[i].problem);
        int rc = tlctl(args, &out);
        if (rc != 0) fprintf(stderr, "\ntlctl %s: exit %d\n%s\n", args, rc, out ? out : "");
        CU_ASSERT_EQUAL(rc, 0);
        free(out);
        snprintf(args, sizeof args, "best %.63s -p %.511s --target a3 --format args", fams[i].name,
                 fams[i].problem);
        rc = tlctl(args, &out);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT(out && strchr(out, '=') != NULL);
        free(out);
    }
}

static void test_tlctl_templates(void)
{
    char *out = NULL;
    CU_ASSERT_EQUAL(tlctl("templates", &out), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "DESCRIPTION"));
    for (size_t i = 0; i < nfams; i++) {
        const char *l = strstr(out, fams[i].name);
        CU_ASSERT_PTR_NOT_NULL(l);
        /* the row has the summary: text after the KERNEL column's "yes" */
        const char *eol = l ? strchr(l, '\n') : NULL;
        const char *yes = l ? strstr(l, "yes") : NULL;
        CU_ASSERT(yes && eol && yes < eol && eol - yes > 30);
    }
    free(out);
}

static const tt_test_case cases[] = {
    {"api_tune", test_api_tune},
    {"tlctl_tune", test_tlctl_tune},
    {"tlctl_templates", test_tlctl_templates},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"library_tune", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

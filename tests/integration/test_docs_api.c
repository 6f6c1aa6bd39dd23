/* SPDX-License-Identifier: MIT
 * test_docs_api.c - runs every curl example of docs/api.md against a live daemon and checks
 * the status written after it ("# expect: NNN"), so the documentation cannot drift from
 * the API, and compares every ```json example with the answers of the commands above it
 * (members, types, pinned values such as hashes; see tt_covers).  Needs the curl program
 * (deploy/install-deps.sh installs it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_daemon.h"
#include "tt_err.h"
#include "tt_test.h"

/* One item of docs/api.md: a curl command of a ```sh block (with the status after it) or the
 * text of a ```json block.  `block` is the number of the last ```sh block seen, so a JSON
 * example is compared with the answers of the commands just above it. */
typedef struct example {
    char *cmd;       /* the curl command, or NULL for a JSON example */
    char *json;      /* the JSON example's text (one or more documents) */
    long expect;
    int line;
    int block;
} example;

static tt_daemon D;

static char *tt_append(char *s, const char *line, size_t ll, char sep)
{
    size_t ol = s ? strlen(s) : 0;
    char *n = realloc(s, ol + ll + 2);
    if (!n) return s;
    if (ol) n[ol++] = sep;
    memcpy(n + ol, line, ll);
    n[ol + ll] = '\0';
    return n;
}

/* Extract the (command, expected status) pairs of ```sh blocks and the ```json examples. */
static size_t extract(const char *md, example *out, size_t cap)
{
    size_t n = 0;
    int in_sh = 0, in_json = 0, lineno = 0, block = 0, cmd_line = 0;
    char *cmd = NULL, *js = NULL;
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
            if (in_json && n < cap)
                out[n++] = (example){NULL, js, 0, cmd_line, block};
            else free(js);
            js = NULL;
            in_sh = !in_sh && !in_json && !strcmp(line, "```sh");
            in_json = !in_json && !in_sh && !strcmp(line, "```json");
            block += in_sh;
            cmd_line = lineno + 1;
            continue;
        }
        if (in_json) js = tt_append(js, line, len, '\n');
        if (!in_sh) continue;
        if (!strncmp(line, "# expect:", 9)) {
            if (cmd && n < cap) {
                out[n++] = (example){cmd, NULL, strtol(line + 9, NULL, 10), cmd_line, block};
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
            cmd = tt_append(cmd, line, ll, ' ');
        }
    }
    free(cmd);
    free(js);
    return n;
}

/* Members whose example value is a fact of the run (the same on every fresh database), not
 * an illustration: the example must show the real value. */
static int tt_pinned(const char *key)
{
    static const char *const keys[] = {"hash", "template_hash", "space_total", "code", "path",
                                       "source", "time_kind", "problem_key", "measured_by",
                                       "backend_fp", "target", "kind", NULL};
    for (int i = 0; keys[i]; i++)
        if (!strcmp(key, keys[i])) return 1;
    return 0;
}

static int tt_class(const json_t *v)
{
    if (json_is_number(v)) return JSON_INTEGER;
    if (json_is_boolean(v)) return JSON_TRUE;
    return json_typeof(v);
}

/* A tuning config: an object of integers only (not GET /v1/config's object of objects). */
static int tt_is_config(const char *key, const json_t *v)
{
    if (strcmp(key, "config") || !json_is_object(v) || !json_object_size(v)) return 0;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) if (!json_is_integer(x)) return 0;
    return 1;
}

/* 1 when the example value `doc` (under member `key`) is shown as the daemon answers: every
 * member it shows exists with the same JSON type, a pinned member has the same value, a
 * config names every param, and the first element of an array looks like some element of
 * the answer's array.  0 with the reason in why. */
static int tt_covers(const json_t *doc, const json_t *real, const char *key, char *why, size_t cap)
{
    if (tt_class(doc) != tt_class(real)) {
        snprintf(why, cap, "\"%s\": the answer has another JSON type", key);
        return 0;
    }
    if (json_is_object(doc)) {
        if (tt_is_config(key, doc) && json_object_size(doc) != json_object_size(real)) {
            snprintf(why, cap, "\"%s\" shows %zu params, the answer has %zu", key,
                     json_object_size(doc), json_object_size(real));
            return 0;
        }
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)doc, k, v) {
            if (!strcmp(k, "...")) continue;
            const json_t *r = json_object_get(real, k);
            if (!r) {
                snprintf(why, cap, "member \"%s\" is not in the answer", k);
                return 0;
            }
            if (!tt_covers(v, r, k, why, cap)) return 0;
        }
        return 1;
    }
    if (json_is_array(doc)) {
        const json_t *d0 = json_array_get(doc, 0);
        if (!d0 || !json_array_size(real)) return 1;
        size_t i;
        json_t *r;
        json_array_foreach((json_t *)real, i, r) if (tt_covers(d0, r, key, why, cap)) return 1;
        return 0;
    }
    if (tt_pinned(key) && !json_equal((json_t *)doc, (json_t *)real)) {
        char *a = json_dumps(doc, JSON_ENCODE_ANY), *b = json_dumps(real, JSON_ENCODE_ANY);
        snprintf(why, cap, "\"%s\" is %s in the example, %s in the answer", key, a ? a : "?",
                 b ? b : "?");
        free(a);
        free(b);
        return 0;
    }
    return 1;
}

/* Check every document of a JSON example (", ...]" marks elements left out) against the
 * answers of the commands above it; 0 after printing what differs. */
static int tt_check_example(const example *ex, json_t *const *ans, size_t nans)
{
    char *t = strdup(ex->json), *q;
    while ((q = strstr(t, ", ...]")) != NULL) memmove(q, q + 5, strlen(q + 5) + 1);
    int ok = 1, ndocs = 0;
    size_t off = 0, len = strlen(t);
    while (ok) {
        while (off < len && strchr(" \t\r\n", t[off])) off++;
        if (off >= len) break;
        json_error_t err;
        json_t *doc = json_loadb(t + off, len - off, JSON_DISABLE_EOF_CHECK, &err);
        if (!doc) {
            fprintf(stderr, "\ndocs/api.md:%d: JSON example does not parse: %s (line %d)\n",
                    ex->line, err.text, err.line);
            ok = 0;
            break;
        }
        off += err.position;
        ndocs++;
        char why[512] = "no JSON answer above it", other[512];
        int found = 0;
        for (size_t i = 0; i < nans && !found; i++)   /* the reason given: the first answer's */
            found = tt_covers(doc, ans[i], "", i ? other : why, sizeof why);
        if (!found) fprintf(stderr, "\ndocs/api.md:%d: JSON example (document %d) differs from "
                                    "the answer: %s\n", ex->line, ndocs, why);
        ok = found;
        json_decref(doc);
    }
    free(t);
    return ok;
}

/* Run one command; its answer (parsed when JSON) goes to *answer. */
static long tt_run(const example *ex, json_t **answer)
{
    size_t cl = strlen(ex->cmd) + 64;
    char *full = malloc(cl);
    snprintf(full, cl, "%s -w '\\n%%{http_code}'", ex->cmd);
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
    if (code != ex->expect || st != 0)
        fprintf(stderr, "\ndocs/api.md:%d: got %ld (exit %d), want %ld: %s\n  -> %.300s\n",
                ex->line, code, st, ex->expect, ex->cmd, out ? out : "");
    if (nl) *nl = '\0';
    *answer = nl ? json_loads(out, 0, NULL) : NULL;
    free(out);
    free(full);
    return code;
}

static void test_examples(void)
{
    char *path = tt_test_src("docs/api.md");
    char *md = tt_test_read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    example ex[256];
    size_t n = extract(md, ex, 256), ncmd = 0, njson = 0;
    setenv("TT_URL", D.url, 1);
    setenv("TT_TOKEN", TT_TOKEN_TUNE, 1);
    setenv("TT_ADMIN_TOKEN", TT_TOKEN_ADMIN, 1);
    const char *must[] = {"/v1/tune", "/v1/jobs/1/events", "/v1/predict", "/v1/simulate",
                          "/v1/best", "/v1/templates", "/v1/targets", "/metrics", "/v1/check",
                          "/v1/export", "/v1/import"};
    enum { NMUST = sizeof must / sizeof must[0], NANS = 16 };
    int routes_seen[NMUST] = {0}, block = -1;
    json_t *ans[NANS] = {0};
    size_t nans = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ex[i].cmd) {
            njson++;
            CU_ASSERT(tt_check_example(&ex[i], ans, ex[i].block == block ? nans : 0));
            free(ex[i].json);
            continue;
        }
        ncmd++;
        if (ex[i].block != block)
            for (block = ex[i].block; nans; nans--) json_decref(ans[nans - 1]);
        for (int k = 0; k < NMUST; k++)
            if (strstr(ex[i].cmd, must[k])) routes_seen[k] = 1;
        json_t *j = NULL;
        long code = tt_run(&ex[i], &j);
        CU_ASSERT_EQUAL(code, ex[i].expect);
        long long id = code == 202 && strstr(ex[i].cmd, "/v1/tune")
                           ? (long long)json_integer_value(json_object_get(j, "job")) : 0;
        if (j && nans < NANS) ans[nans++] = j;
        else json_decref(j);
        if (code == 202 && strstr(ex[i].cmd, "/v1/tune")) {
            CU_ASSERT(id > 0);
            const char *fin = tt_daemon_wait_job(&D, id, 60);
            CU_ASSERT_PTR_NOT_NULL(fin);
        }
        free(ex[i].cmd);
    }
    while (nans) json_decref(ans[--nans]);
    CU_ASSERT(ncmd >= 40);           /* every route has at least one example */
    CU_ASSERT(njson >= 15);          /* and most an answer */
    for (int k = 0; k < NMUST; k++) {
        if (!routes_seen[k]) fprintf(stderr, "docs/api.md: no example for %s\n", must[k]);
        CU_ASSERT(routes_seen[k]);
    }
    free(md);
    free(path);
}

/* docs/api.md's "Error codes" table lists every code of the one error table with its HTTP
 * status, and nothing else: a code appended to compiler/tt_err.h must be documented. */
static void test_error_codes(void)
{
    char *path = tt_test_src("docs/api.md");
    char *md = tt_test_read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    const char *tab = strstr(md, "\n| HTTP | code | meaning |");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tab);
    for (int rc = TT_OK + 1; rc < TT_RC__COUNT; rc++) {
        char row[128];
        snprintf(row, sizeof row, "\n| %d | `%s` |", tt_rc_http_status((tt_rc)rc),
                 tt_rc_code((tt_rc)rc));
        const char *hit = strstr(tab, row);
        if (!hit) fprintf(stderr, "\ndocs/api.md: no error-code row \"%s\"\n", row + 1);
        CU_ASSERT_PTR_NOT_NULL(hit);
    }
    int rows = 0;
    for (const char *p = strstr(tab + 1, "\n|"); p && p[1] == '|'; p = strchr(p + 1, '\n')) {
        char code[64];
        int http;
        if (sscanf(p, "\n| %d | `%63[a-z_]` |", &http, code) != 2) continue;
        rows++;
        tt_rc rc = tt_rc_from_code(code);
        if ((rc == TT_EINTERNAL && strcmp(code, "internal")) || tt_rc_http_status(rc) != http)
            fprintf(stderr, "\ndocs/api.md: error-code row %d `%s` does not match compiler/tt_err.h\n",
                    http, code);
        CU_ASSERT(!(rc == TT_EINTERNAL && strcmp(code, "internal")));
        CU_ASSERT_EQUAL(tt_rc_http_status(rc), http);
    }
    CU_ASSERT_EQUAL(rows, TT_RC__COUNT - 1);
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

static const tt_test_case cases[] = {
    {"examples", test_examples}, {"error_codes", test_error_codes}, {NULL, NULL}};
static const tt_test_suite suites[] = {{"docs_api", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

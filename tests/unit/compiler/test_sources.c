/* SPDX-License-Identifier: MIT
 * test_sources.c - every TileLang-Ascend source in templates/ renders for a sample config
 * (tests/data/tilelang/sources.txt), compiles with Debian's `/usr/bin/python3 -m py_compile`,
 * and passes tests/data/tilelang/check_source.py: only T.<name>s of upstream's language module
 * (t_names.txt), the runner's kernel/make_inputs/reference, no nested T.Pipelined.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "render.h"
#include "template.h"
#include "tt_test.h"

#define PY "/usr/bin/python3"

static char *g_tmp;

typedef struct row {
    char name[64], problem[512], config[512];
} row;

static int setup(void)
{
    g_tmp = tt_test_tmpdir("tt-sources");
    return g_tmp ? 0 : 1;
}

static int teardown(void)
{
    if (g_tmp) tt_test_rmrf(g_tmp);
    free(g_tmp);
    return 0;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
    size_t k = strspn(s, " ");
    memmove(s, s + k, strlen(s + k) + 1);
}

/* The rows of sources.txt (at most cap). */
static size_t load_rows(row *rows, size_t cap)
{
    char *path = tt_test_src("tests/data/tilelang/sources.txt");
    FILE *f = fopen(path, "r");
    free(path);
    size_t n = 0;
    char line[1200];
    while (f && n < cap && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char *a = strtok(line, "|"), *b = strtok(NULL, "|"), *c = strtok(NULL, "|");
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        snprintf(rows[n].name, sizeof rows[n].name, "%s", a);
        snprintf(rows[n].problem, sizeof rows[n].problem, "%s", b);
        snprintf(rows[n].config, sizeof rows[n].config, "%s", c);
        trim(rows[n].name);
        trim(rows[n].problem);
        trim(rows[n].config);
        n++;
    }
    if (f) fclose(f);
    return n;
}

/* Value of key in "k=v,k=v" lists a and b, copied into out; 0 when absent. */
static int lookup(const char *a, const char *b, const char *key, size_t klen, char *out, size_t cap)
{
    const char *lists[2] = {a, b};
    for (int l = 0; l < 2; l++)
        for (const char *p = lists[l]; p && *p;) {
            const char *eq = strchr(p, '='), *end = strchr(p, ',');
            if (!end) end = p + strlen(p);
            if (eq && eq < end && (size_t)(eq - p) == klen && !strncmp(p, key, klen)) {
                snprintf(out, cap, "%.*s", (int)(end - eq - 1), eq + 1);
                return 1;
            }
            p = *end ? end + 1 : end;
        }
    return 0;
}

/* Plain {{name}} substitution for a source whose template JSON is not hooked up yet. */
static char *substitute(const char *src, const row *r)
{
    size_t cap = strlen(src) * 2 + 1024, n = 0;
    char *out = malloc(cap);
    for (const char *p = src; out && *p;) {
        const char *close = strncmp(p, "{{", 2) == 0 ? strstr(p + 2, "}}") : NULL;
        char key[64], val[128];
        if (close && (size_t)(close - p - 2) < sizeof key) {
            snprintf(key, sizeof key, "%.*s", (int)(close - p - 2), p + 2);
            trim(key);
            if (!lookup(r->problem, r->config, key, strlen(key), val, sizeof val)) {
                fprintf(stderr, "%s: no value for {{%s}} in sources.txt\n", r->name, key);
                free(out);
                return NULL;
            }
            n += (size_t)snprintf(out + n, cap - n, "%s", val);
            p = close + 2;
        } else {
            out[n++] = *p++;
        }
        if (n + 256 > cap) break;
    }
    if (out) out[n] = '\0';
    return out;
}

/* Rendered text of one row's source (through the template when it names the source). */
static char *render_row(const row *r)
{
    char rel[160];
    snprintf(rel, sizeof rel, "templates/%.120s.json", r->name);
    char *jpath = tt_test_src(rel);
    struct stat st;
    tt_template *t = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    char *out = NULL;
    if (stat(jpath, &st) == 0) {
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(jpath, &t, &e), TT_OK);
    }
    free(jpath);
    if (t && t->source_text) {
        int64_t s[TT_MAX_SLOTS] = {0};
        tt_rc rc = tt_tmpl_problem_parse(t, r->problem, s, &e);
        if (!rc) rc = tt_tmpl_config_parse(t, r->config, s, &e);
        if (!rc) rc = tt_tmpl_eval_lets(t, s, &e);
        if (!rc) rc = tt_render(t, s, t->source_text, strlen(t->source_text), &out, NULL, &e);
        if (rc) fprintf(stderr, "%s: %s [%s] %s\n", r->name, tt_rc_code(rc), e.path, e.msg);
        CU_ASSERT_EQUAL(rc, TT_OK);
    } else {
        snprintf(rel, sizeof rel, "templates/%.120s.py.in", r->name);
        char *spath = tt_test_src(rel);
        char *src = tt_test_read_file(spath, NULL);
        free(spath);
        CU_ASSERT_PTR_NOT_NULL(src);
        if (src) out = substitute(src, r);
        CU_ASSERT_PTR_NOT_NULL(out);
        free(src);
        if (t) fprintf(stderr, "note: %s.json has no source yet; rendered by substitution\n", r->name);
    }
    tt_tmpl_free(t);
    return out;
}

static int sh(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 255;
}

static void test_every_source_compiles(void)
{
    static row rows[64];
    size_t n = load_rows(rows, 64);
    CU_ASSERT_FATAL(n > 0);
    char *names = tt_test_src("tests/data/tilelang/t_names.txt");
    char *checker = tt_test_src("tests/data/tilelang/check_source.py");
    for (size_t i = 0; i < n; i++) {
        char *text = render_row(&rows[i]);
        if (!text) continue;
        CU_ASSERT_PTR_NULL(strstr(text, "{{"));
        char py[700], cmd[2400];
        snprintf(py, sizeof py, "%.500s/%.120s.py", g_tmp, rows[i].name);
        FILE *f = fopen(py, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(text, f);
        fclose(f);
        free(text);
        snprintf(cmd, sizeof cmd, PY " -m py_compile %s", py);
        int rc = sh(cmd);
        if (rc) fprintf(stderr, "py_compile failed: %s\n", rows[i].name);
        CU_ASSERT_EQUAL(rc, 0);
        snprintf(cmd, sizeof cmd, PY " %s %s %s", checker, names, py);
        rc = sh(cmd);
        CU_ASSERT_EQUAL(rc, 0);
    }
    free(names);
    free(checker);
}

/* Every templates/<name>.py.in has a row, so no source goes untested. */
static void test_every_source_has_a_row(void)
{
    static row rows[64];
    size_t n = load_rows(rows, 64);
    char *dir = tt_test_src("templates");
    DIR *d = opendir(dir);
    free(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *de;
    size_t seen = 0;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 7 || strcmp(de->d_name + l - 6, ".py.in") != 0) continue;
        seen++;
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found |= strlen(rows[i].name) == l - 6 && !strncmp(rows[i].name, de->d_name, l - 6);
        if (!found) fprintf(stderr, "templates/%s has no row in sources.txt\n", de->d_name);
        CU_ASSERT_TRUE(found);
    }
    closedir(d);
    CU_ASSERT_EQUAL(seen, n);
}

/* The checker itself fails on what it must reject. */
static void test_checker_rejects(void)
{
    char *names = tt_test_src("tests/data/tilelang/t_names.txt");
    char *checker = tt_test_src("tests/data/tilelang/check_source.py");
    static const char *const bad[] = {
        /* a name upstream does not have */
        "import tilelang.language as T\ndef kernel(): T.alloc_smem(1)\n"
        "def make_inputs(): pass\ndef reference(): pass\n",
        /* nested T.Pipelined */
        "import tilelang.language as T\ndef kernel():\n"
        "    for a in T.Pipelined(4, num_stages=2):\n"
        "        for b in T.Pipelined(4, num_stages=2):\n            T.copy(a, b)\n"
        "def make_inputs(): pass\ndef reference(): pass\n",
        /* no reference() */
        "import tilelang.language as T\ndef kernel(): T.copy(1, 2)\ndef make_inputs(): pass\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char py[700], cmd[2400];
        snprintf(py, sizeof py, "%s/bad%zu.py", g_tmp, i);
        FILE *f = fopen(py, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(bad[i], f);
        fclose(f);
        snprintf(cmd, sizeof cmd, PY " %s %s %s >/dev/null", checker, names, py);
        CU_ASSERT_EQUAL(sh(cmd), 1);
    }
    free(names);
    free(checker);
}

static const tt_test_case cases[] = {
    {"every_source_compiles", test_every_source_compiles},
    {"every_source_has_a_row", test_every_source_has_a_row},
    {"checker_rejects", test_checker_rejects},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"sources", setup, teardown, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

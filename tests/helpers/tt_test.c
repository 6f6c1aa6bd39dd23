/* SPDX-License-Identifier: MIT
 * tt_test.c - CUnit runner and path helpers shared by the test programs.
 */
#include "tt_test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "template.h"

int tt_test_main(int argc, char **argv, const tt_test_suite *suites)
{
    (void)argc;
    (void)argv;
    if (CU_initialize_registry() != CUE_SUCCESS) return 2;
    for (const tt_test_suite *s = suites; s->name; s++) {
        CU_pSuite cs = CU_add_suite(s->name, s->init, s->cleanup);
        if (!cs) { CU_cleanup_registry(); return 2; }
        for (const tt_test_case *c = s->cases; c && c->name; c++)
            if (!CU_add_test(cs, c->name, c->fn)) { CU_cleanup_registry(); return 2; }
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed() +
                      CU_get_number_of_tests_failed();
    unsigned ran = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (ran == 0) { fprintf(stderr, "no test ran\n"); return 1; }
    return failed ? 1 : 0;
}

static char *tt_test_join(const char *envname, const char *fallback, const char *rel)
{
    const char *base = getenv(envname);
    if (!base || !*base) base = fallback;
    size_t n = strlen(base) + strlen(rel) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", base, rel);
    return p;
}

char *tt_test_src(const char *rel) { return tt_test_join("TT_SOURCE_DIR", ".", rel); }
char *tt_test_shared(const char *rel) { return tt_test_join("TT_SHARED_DIR", "../shared", rel); }
char *tt_test_bin(const char *name) { return tt_test_join("TT_BIN_DIR", "build/bin", name); }

char *tt_test_tmpdir(const char *prefix)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    size_t n = strlen(tmp) + strlen(prefix) + 16;
    char *p = malloc(n);
    if (!p) return NULL;
    snprintf(p, n, "%s/%s-XXXXXX", tmp, prefix);
    if (!mkdtemp(p)) { free(p); return NULL; }
    return p;
}

static int tt_test_rm1(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

void tt_test_rmrf(const char *path)
{
    if (path) nftw(path, tt_test_rm1, 16, FTW_DEPTH | FTW_PHYS);
}

char *tt_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

json_t *tt_test_load_json(const char *rel)
{
    char *path = tt_test_src(rel);
    if (!path) return NULL;
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) fprintf(stderr, "%s:%d: %s\n", path, je.line, je.text);
    free(path);
    return j;
}

tt_template *tt_test_load_template(const char *rel)
{
    char *p = tt_test_src(rel);
    tt_template *t = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_tmpl_parse_file(p, &t, &e);
    if (rc != TT_OK) fprintf(stderr, "%s: %s: %s: %s\n", rel, tt_rc_code(rc), e.path, e.msg);
    free(p);
    return t;
}

/* SPDX-License-Identifier: MIT
 * test_catalog.c - the template/target catalog: built-ins, put/get by name and hash, bad
 * documents, name mismatch, the store round trip and listing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "store.h"
#include "tt_test.h"

static const char *toy1 =
    "{\"tiletune\":1,\"name\":\"toy\",\"version\":\"1\",\"inputs\":{\"N\":\"int\"},"
    "\"params\":{\"a\":[1,2,4]},\"constraints\":[\"a <= N\"]}";
static const char *toy2 =
    "{\"tiletune\":1,\"name\":\"toy\",\"version\":\"2\",\"inputs\":{\"N\":\"int\"},"
    "\"params\":{\"a\":[1,2,4,8]},\"constraints\":[\"a <= N\"]}";

static tt_catalog *new_builtin(void)
{
    char *td = tt_test_src("templates"), *gd = tt_test_src("costmodel/targets");
    tt_catalog *c = NULL;
    tt_errinfo e;
    tt_rc rc = tt_catalog_new(td, gd, &c, &e);
    if (rc != TT_OK) fprintf(stderr, "catalog: %s: %s\n", e.path, e.msg);
    free(td);
    free(gd);
    return c;
}

static void test_builtins(void)
{
    tt_catalog *c = new_builtin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const tt_template *g = NULL, *g2 = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_template(c, NULL, "gemm", NULL, &g, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(g->name, "gemm");
    CU_ASSERT_PTR_NOT_NULL(g->kernel);
    CU_ASSERT_EQUAL(tt_catalog_template(c, NULL, "gemm", g->hash, &g2, &e), TT_OK);
    CU_ASSERT_PTR_EQUAL(g, g2);
    CU_ASSERT_EQUAL(tt_catalog_template(c, NULL, "gemm", "0123456789abcdef", &g2, &e),
                    TT_ENOTFOUND);
    CU_ASSERT_PTR_NULL(g2);
    CU_ASSERT_EQUAL(tt_catalog_template(c, NULL, "nope", NULL, &g2, &e), TT_ENOTFOUND);
    CU_ASSERT(strstr(e.msg, "nope") != NULL);
    CU_ASSERT_EQUAL(tt_catalog_template(c, NULL, "", NULL, &g2, &e), TT_EINVAL);
    const tt_target *a2 = tt_catalog_target(c, "a2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a2);
    CU_ASSERT_STRING_EQUAL(a2->name, "Ascend910B2");
    CU_ASSERT_PTR_EQUAL(tt_catalog_target(c, "ascend910b2"), a2);
    CU_ASSERT_PTR_NULL(tt_catalog_target(c, "a9"));
    CU_ASSERT(tt_targets_count(tt_catalog_targets(c)) >= 10);
    json_t *l = tt_catalog_list(c, NULL);
    CU_ASSERT(json_array_size(l) >= 1);
    int seen = 0;
    size_t i;
    json_t *v;
    json_array_foreach(l, i, v) {
        if (strcmp(json_string_value(json_object_get(v, "name")), "gemm") != 0) continue;
        seen++;
        CU_ASSERT(json_is_true(json_object_get(v, "builtin")));
        CU_ASSERT(json_is_true(json_object_get(v, "has_kernel")));
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(v, "hash")), g->hash);
    }
    CU_ASSERT_EQUAL(seen, 1);
    json_decref(l);
    tt_catalog_free(c);
    tt_catalog_free(NULL);
}

static void test_put_get(void)
{
    tt_catalog *c = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_new(NULL, NULL, &c, NULL), TT_OK);
    CU_ASSERT_PTR_NULL(tt_catalog_target(c, "a2"));
    json_t *d1 = json_loads(toy1, 0, NULL), *d2 = json_loads(toy2, 0, NULL);
    const tt_template *t1 = NULL, *t2 = NULL, *x = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(c, NULL, "toy", d1, &t1, &e), TT_OK);
    CU_ASSERT_PTR_NULL(t1->kernel);
    CU_ASSERT_EQUAL(tt_catalog_template(c, NULL, "toy", NULL, &x, &e), TT_OK);
    CU_ASSERT_PTR_EQUAL(x, t1);
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(c, NULL, NULL, d2, &t2, &e), TT_OK);
    CU_ASSERT(strcmp(t1->hash, t2->hash) != 0);
    /* name alone: the latest; old version still there by hash, pointer still valid */
    CU_ASSERT_EQUAL(tt_catalog_template(c, NULL, "toy", NULL, &x, &e), TT_OK);
    CU_ASSERT_PTR_EQUAL(x, t2);
    CU_ASSERT_EQUAL(tt_catalog_template(c, NULL, "toy", t1->hash, &x, &e), TT_OK);
    CU_ASSERT_PTR_EQUAL(x, t1);
    CU_ASSERT_STRING_EQUAL(t1->version, "1");
    /* putting the same document again returns the cached template */
    CU_ASSERT_EQUAL(tt_catalog_put(c, NULL, "toy", d1, &x, &e), TT_OK);
    CU_ASSERT_PTR_EQUAL(x, t1);
    CU_ASSERT_EQUAL(tt_catalog_template(c, NULL, "toy", NULL, &x, &e), TT_OK);
    CU_ASSERT_PTR_EQUAL(x, t1);   /* re-put makes it the latest again */
    /* name mismatch */
    CU_ASSERT_EQUAL(tt_catalog_put(c, NULL, "other", d1, &x, &e), TT_EINVAL);
    CU_ASSERT_PTR_NULL(x);
    CU_ASSERT(strstr(e.msg, "other") != NULL);
    /* bad document: error names the JSON path */
    json_t *bad = json_loads("{\"tiletune\":1,\"name\":\"toy\",\"version\":\"1\",\"inputs\":{},"
                             "\"params\":{\"a\":[1,\"x\"]}}", 0, NULL);
    CU_ASSERT_EQUAL(tt_catalog_put(c, NULL, "toy", bad, &x, &e), TT_ETEMPLATE);
    CU_ASSERT(strstr(e.path, "params.a") != NULL);
    json_decref(bad);
    json_t *arr = json_array();
    CU_ASSERT_EQUAL(tt_catalog_put(c, NULL, NULL, arr, &x, &e), TT_ETEMPLATE);
    json_decref(arr);
    json_decref(d1);
    json_decref(d2);
    tt_catalog_free(c);
}

static void test_bad_builtin_dir(void)
{
    char *dir = tt_test_tmpdir("tt-cat");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/broken.json", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"tiletune\":1,\"name\":\"broken\",\"version\":\"1\",\"inputs\":{},"
          "\"params\":{\"a\":{\"range\":[4,1]}}}", f);
    fclose(f);
    tt_catalog *c = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_catalog_new(dir, NULL, &c, &e), TT_ETEMPLATE);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT(strstr(e.msg, "broken.json") != NULL);
    CU_ASSERT(strstr(e.msg, "params.a") != NULL);
    snprintf(path, sizeof path, "%s/missing", dir);
    CU_ASSERT_EQUAL(tt_catalog_new(path, NULL, &c, &e), TT_EIO);
    tt_test_rmrf(dir);
    free(dir);
}

static void test_store_roundtrip(void)
{
    char *dir = tt_test_tmpdir("tt-cat");
    char url[512];
    snprintf(url, sizeof url, "sqlite:%s/tt.db", dir);
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    tt_catalog *c = new_builtin();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(tt_catalog_sync(c, s), TT_OK);
    CU_ASSERT_EQUAL(tt_catalog_sync(c, s), TT_OK);   /* idempotent */
    json_t *d1 = json_loads(toy1, 0, NULL);
    const tt_template *t1 = NULL, *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(c, s, "toy", d1, &t1, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_catalog_template(c, NULL, "gemm", NULL, &g, NULL), TT_OK);
    /* a second catalog without built-ins finds both through the store */
    tt_catalog *c2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_new(NULL, NULL, &c2, NULL), TT_OK);
    const tt_template *x = NULL;
    CU_ASSERT_EQUAL(tt_catalog_template(c2, NULL, "toy", NULL, &x, NULL), TT_ENOTFOUND);
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_template(c2, s, "toy", NULL, &x, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(x->hash, t1->hash);
    CU_ASSERT_EQUAL_FATAL(tt_catalog_template(c2, s, "gemm", g->hash, &x, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(x->hash, g->hash);
    CU_ASSERT_PTR_NOT_NULL(x->kernel);
    CU_ASSERT_EQUAL(tt_catalog_template(c2, s, "gemm", "ffffffffffffffff", &x, &e), TT_ENOTFOUND);
    json_t *l = tt_catalog_list(c2, s), *l1 = tt_catalog_list(c, NULL);
    CU_ASSERT(json_array_size(l) >= 2);
    CU_ASSERT_EQUAL(json_array_size(l), json_array_size(l1));   /* built-ins + toy */
    size_t i;
    json_t *v;
    int names = 0;
    json_array_foreach(l, i, v) {
        CU_ASSERT(json_is_false(json_object_get(v, "builtin")));   /* c2 has no built-ins */
        const char *nm = json_string_value(json_object_get(v, "name"));
        names += nm && (strcmp(nm, "toy") == 0 || strcmp(nm, "gemm") == 0);
    }
    CU_ASSERT_EQUAL(names, 2);
    json_decref(l);
    json_decref(l1);
    json_decref(d1);
    tt_catalog_free(c2);
    tt_catalog_free(c);
    tt_store_close(s);
    tt_test_rmrf(dir);
    free(dir);
}

/* A template whose lets are not in sorted order ("z" before "b" that reads it) reads back
 * from the store as it was written (the store once kept sorted keys: "unknown name 'z'"). */
static void test_store_let_order(void)
{
    char *dir = tt_test_tmpdir("tt-cat");
    char url[512];
    snprintf(url, sizeof url, "sqlite:%s/tt.db", dir);
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, NULL), TT_OK);
    tt_catalog *c = NULL, *c2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_new(NULL, NULL, &c, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_catalog_new(NULL, NULL, &c2, NULL), TT_OK);
    json_t *d = json_loads("{\"tiletune\":1,\"name\":\"order\",\"inputs\":{\"N\":\"int\"},"
                           "\"params\":{\"p\":[1,2],\"a\":[3]},\"let\":{\"z\":\"a * 2\",\"b\":\"z + p\"}}",
                           0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    const tt_template *t1 = NULL, *t2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put(c, s, "order", d, &t1, NULL), TT_OK);
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_catalog_template(c2, s, "order", NULL, &t2, &e), TT_OK);
    if (t2) {
        CU_ASSERT_STRING_EQUAL(t2->hash, t1->hash);
        CU_ASSERT_STRING_EQUAL(t2->params[0].name, "p");   /* config key order kept */
        CU_ASSERT_STRING_EQUAL(t2->lets[0].name, "z");
    }
    json_decref(d);
    tt_catalog_free(c2);
    tt_catalog_free(c);
    tt_store_close(s);
    tt_test_rmrf(dir);
    free(dir);
}

static const tt_test_case cases[] = {
    {"store_let_order", test_store_let_order},
    {"builtins", test_builtins},
    {"put_get", test_put_get},
    {"bad_builtin_dir", test_bad_builtin_dir},
    {"store_roundtrip", test_store_roundtrip},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"catalog", NULL, NULL, cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

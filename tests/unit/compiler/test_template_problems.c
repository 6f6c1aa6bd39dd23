/* SPDX-License-Identifier: MIT
 * test_template_problems.c - a parsed template's problems, configs (keys and hashes free of
 * the params' order), lets and geometry.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "render.h"
#include "template.h"
#include "tt_test.h"

/* ---- problems and configs -------------------------------------------------------------------- */

static void test_problem(void)
{
    tt_template *t = tt_test_load_template("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t s[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    char key[256];
    CU_ASSERT_EQUAL(tt_tmpl_problem_parse(t, "M=4096, N=1024,K=8192,dtype=bf16", s, &e), TT_OK);
    size_t n = tt_tmpl_problem_key(t, s, key, sizeof key);
    CU_ASSERT_STRING_EQUAL(key, "M=4096,N=1024,K=8192,dtype=bfloat16,out_dtype=float16");
    CU_ASSERT_EQUAL(n, strlen(key));
    char small[8];
    CU_ASSERT_EQUAL(tt_tmpl_problem_key(t, s, small, sizeof small), n);
    CU_ASSERT(strlen(small) < sizeof small);
    /* JSON round trip */
    json_t *j = tt_tmpl_problem_json(t, s);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "dtype")), "bfloat16");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "K")), 8192);
    int64_t s2[TT_MAX_SLOTS] = {0};
    CU_ASSERT_EQUAL(tt_tmpl_problem_from_json(t, j, s2, &e), TT_OK);
    CU_ASSERT_EQUAL(memcmp(s, s2, t->ninputs * sizeof *s), 0);
    json_decref(j);
    static const struct {
        const char *kv, *path, *msg;
    } bad[] = {
        {"M=1,N=1", "problem.K", "missing"},
        {"M=1,N=1,K=1,Q=2", "problem.Q", "unknown input"},
        {"M=0,N=1,K=1", "problem.M", "outside [1, 1048576]"},
        {"M=abc,N=1,K=1", "problem.M", "not an integer"},
        {"M=1x,N=1,K=1", "problem.M", "not an integer"},
        {"M=99999999999999999999,N=1,K=1", "problem.M", "out of range"},
        {"M=1,N=1,K=1,dtype=float64", "problem.dtype", "unknown dtype"},
        {"M=1,N=1,K=1,dtype=float32", "problem.dtype", "not accepted"},
        {"M=1,M=2,N=1,K=1", "problem.M", "given twice"},
        {"M,N=1,K=1", "problem.M", "expected name=value"},
        {"M=,N=1,K=1", "problem.M", "empty value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_problem_parse(t, bad[i].kv, s, &e);
        int ok = rc == TT_EPROBLEM && strcmp(e.path, bad[i].path) == 0 && strstr(e.msg, bad[i].msg);
        if (!ok) fprintf(stderr, "problem \"%s\": got %s [%s] %s\n", bad[i].kv, tt_rc_code(rc), e.path, e.msg);
        CU_ASSERT(ok);
    }
    static const struct {
        const char *json, *path, *msg;
    } badj[] = {
        {"{\"M\":\"4096\",\"N\":1,\"K\":1}", "problem.M", "not an integer (got string)"},
        {"{\"M\":true,\"N\":1,\"K\":1}", "problem.M", "not an integer (got boolean)"},
        {"{\"M\":1,\"N\":1,\"K\":1,\"dtype\":1}", "problem.dtype", "expected a dtype name"},
        {"{\"M\":1,\"N\":1,\"K\":1,\"extra\":1}", "problem.extra", "unknown input"},
        {"{\"M\":1,\"N\":1}", "problem.K", "missing"},
        {"[1,2]", "problem", "expected an object"},
    };
    for (size_t i = 0; i < sizeof badj / sizeof badj[0]; i++) {
        json_t *o = json_loads(badj[i].json, 0, NULL);
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_problem_from_json(t, o, s, &e);
        int ok = rc == TT_EPROBLEM && strcmp(e.path, badj[i].path) == 0 && strstr(e.msg, badj[i].msg);
        if (!ok) fprintf(stderr, "problem %s: got %s [%s] %s\n", badj[i].json, tt_rc_code(rc), e.path, e.msg);
        CU_ASSERT(ok);
        json_decref(o);
    }
    tt_tmpl_free(t);
}

static uint64_t fnv_values(const int64_t *v, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) h = (h ^ (((uint64_t)v[i] >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
    return h;
}

/* The same template with its params declared in another order (here: reversed, as a stored
 * template is reloaded with sorted keys) gives every config the same key, hash and JSON. */
static void test_config_order_free(void)
{
    json_t *doc = tt_test_load_json("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    json_t *params = json_object_get(doc, "params"), *rev = json_object();
    const char *names[16];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(params, k, v) names[n++] = k;
    for (size_t i = n; i-- > 0;) json_object_set(rev, names[i], json_object_get(params, names[i]));
    json_t *doc2 = json_deep_copy(doc);
    json_object_set_new(doc2, "params", rev);
    tt_template *a = NULL, *b = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc, NULL, &a, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc2, NULL, &b, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(a->hash, b->hash);              /* one template ... */
    CU_ASSERT_STRING_NOT_EQUAL(a->params[0].name, b->params[0].name);   /* ... two orders */
    int64_t sa[TT_MAX_SLOTS] = {0}, sb[TT_MAX_SLOTS] = {0};
    const char *cfg = "block_M=64,block_N=128,block_K=32,K_L1=128,S1=3,S2=1";
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(a, cfg, sa, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(b, cfg, sb, &e), TT_OK);
    char ka[256], kb[256];
    tt_tmpl_config_key(a, sa, ka, sizeof ka);
    tt_tmpl_config_key(b, sb, kb, sizeof kb);
    CU_ASSERT_STRING_EQUAL(ka, kb);
    CU_ASSERT_EQUAL(tt_tmpl_config_hash(a, sa), tt_tmpl_config_hash(b, sb));
    json_t *ja = tt_tmpl_config_json(a, sa), *jb = tt_tmpl_config_json(b, sb);
    char *ta = json_dumps(ja, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *tb = json_dumps(jb, JSON_COMPACT | JSON_PRESERVE_ORDER);
    CU_ASSERT_STRING_EQUAL(ta, tb);                        /* member order too */
    free(ta);
    free(tb);
    json_decref(ja);
    json_decref(jb);
    tt_tmpl_free(a);
    tt_tmpl_free(b);
    json_decref(doc);
    json_decref(doc2);
}

static void test_config(void)
{
    tt_template *t = tt_test_load_template("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t s[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    char key[256];
    /* core_num and swizzle are omitted: they take their defaults */
    const char *kv = "K_L1=256,S1=2,S2=2,block_K=64,block_M=128,block_N=256,core_num=0,swizzle=1";
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, "S2=2,S1=2,K_L1=256,block_K=64,block_N=256,"
                                                  "block_M=128", s, &e), TT_OK);
    tt_tmpl_config_key(t, s, key, sizeof key);
    CU_ASSERT_STRING_EQUAL(key, kv);                 /* names in byte order, whatever the input */
    CU_ASSERT_EQUAL(s[t->ninputs], 128);
    const int64_t canon[8] = {256, 2, 2, 64, 128, 256, 0, 1};   /* the values in that order */
    CU_ASSERT_EQUAL(tt_tmpl_config_hash(t, s), fnv_values(canon, 8));
    uint64_t h = tt_tmpl_config_hash(t, s);
    json_t *j = tt_tmpl_config_json(t, s);
    /* the text the runner stores: jansson's sorted compact dump, byte for byte */
    char *dumped = tt_json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    char text[256];
    size_t need = tt_tmpl_config_json_text(t, s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dumped);
    CU_ASSERT_STRING_EQUAL(text, dumped);
    CU_ASSERT_EQUAL(need, strlen(dumped));
    char small[12];   /* cut like snprintf: the needed length, a terminated prefix */
    CU_ASSERT_EQUAL(tt_tmpl_config_json_text(t, s, small, sizeof small), need);
    CU_ASSERT_EQUAL(strncmp(small, dumped, sizeof small - 1), 0);
    CU_ASSERT_EQUAL(small[sizeof small - 1], '\0');
    free(dumped);
    int64_t s2[TT_MAX_SLOTS] = {0};
    CU_ASSERT_EQUAL(tt_tmpl_config_from_json(t, j, s2, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_tmpl_config_hash(t, s2), h);
    json_decref(j);
    s2[t->ninputs + 5] = 1;
    CU_ASSERT(tt_tmpl_config_hash(t, s2) != h);
    static const struct {
        const char *kv, *path, *msg;
    } bad[] = {
        {"block_M=100,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", "config.block_M", "not in the domain"},
        {"block_M=128,block_N=256,block_K=64,K_L1=256,S1=2", "config.S2", "missing"},
        {"block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2,S3=1", "config.S3", "unknown param"},
        {"block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=two", "config.S2", "not an integer"},
        {"M=128", "config.M", "unknown param"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_config_parse(t, bad[i].kv, s, &e);
        int ok = rc == TT_ECONFIG && strcmp(e.path, bad[i].path) == 0 && strstr(e.msg, bad[i].msg);
        if (!ok) fprintf(stderr, "config \"%s\": got %s [%s] %s\n", bad[i].kv, tt_rc_code(rc), e.path, e.msg);
        CU_ASSERT(ok);
    }
    json_t *o = json_loads("{\"block_M\":128,\"block_N\":256,\"block_K\":64,\"K_L1\":256,\"S1\":2,"
                           "\"S2\":true}", 0, NULL);
    CU_ASSERT_EQUAL(tt_tmpl_config_from_json(t, o, s, &e), TT_ECONFIG);
    CU_ASSERT_STRING_EQUAL(e.path, "config.S2");
    CU_ASSERT(strstr(e.msg, "got boolean") != NULL);
    json_decref(o);
    tt_tmpl_free(t);
}

/* ---- lets and geometry ------------------------------------------------------------------------ */

static void test_lets_geom(void)
{
    tt_template *t = tt_test_load_template("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t s[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, "M=4000,N=4096,K=4096,out_dtype=float32", s, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, "block_M=128,block_N=256,block_K=64,K_L1=256,"
                                                  "S1=3,S2=2", s, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_tmpl_eval_lets(t, s, &e), TT_OK);
    CU_ASSERT_EQUAL(s[tt_tmpl_slot_of(t, "m_num")], 32);      /* ceildiv(4000, 128) */
    CU_ASSERT_EQUAL(s[tt_tmpl_slot_of(t, "n_num")], 16);
    CU_ASSERT_EQUAL(s[tt_tmpl_slot_of(t, "kk_tiles")], 4);
    int64_t dims[TT_MAX_RANK], elems, copies;
    int esize;
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 0, s, dims, &elems, &esize, &copies), TT_OK);
    CU_ASSERT(dims[0] == 128 && dims[1] == 256 && elems == 128 * 256 && esize == 2 && copies == 3);
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 4, s, dims, &elems, &esize, &copies), TT_OK);
    CU_ASSERT(esize == 4 && copies == 1 && elems == 128 * 256);
    CU_ASSERT_EQUAL(tt_tmpl_tensor_geom(t, 2, s, dims, &elems, &esize), TT_OK);
    CU_ASSERT(dims[0] == 4000 && dims[1] == 4096 && esize == 4);   /* C is out_dtype */
    tt_tmpl_free(t);

    /* evaluation errors name the let; negative extents are domain errors */
    const char *doc = "{\"tiletune\":1,\"name\":\"o\",\"inputs\":{\"N\":{\"type\":\"int\",\"min\":-8}},"
                      "\"params\":{\"p\":[1,2]},\"let\":{\"a\":\"N * 2\",\"x\":\"N ** (8 * p)\"},"
                      "\"buffers\":{\"b\":{\"scope\":\"UB\",\"shape\":[\"a\"],\"dtype\":\"int8\","
                      "\"copies\":\"p - 1\"}}}";
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, &e), TT_OK);
    int64_t v[8] = {16, 1};
    CU_ASSERT_EQUAL(tt_tmpl_eval_lets(t, v, &e), TT_OK);
    CU_ASSERT_EQUAL(v[2], 32);
    CU_ASSERT_EQUAL(v[3], (int64_t)1 << 32);                     /* 16 ** 8 */
    /* copies = p - 1 = 0 is not a ring */
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 0, v, dims, &elems, &esize, &copies), TT_EDOMAIN);
    v[1] = 2;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_tmpl_eval_lets(t, v, &e), TT_EOVERFLOW);   /* 16 ** 16 */
    CU_ASSERT_STRING_EQUAL(e.path, "let.x");
    CU_ASSERT_STRING_EQUAL(e.msg, "let x: overflow");
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 0, (int64_t[]){-8, 2, -16, 0}, dims, &elems, &esize,
                                        &copies), TT_EDOMAIN);
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 0, (int64_t[]){8, 2, 16, 0}, dims, &elems, &esize,
                                        &copies), TT_OK);
    CU_ASSERT(elems == 16 && esize == 1 && copies == 1);
    CU_ASSERT_EQUAL(tt_tmpl_slot_of(t, "nope"), -1);
    CU_ASSERT_PTR_NULL(tt_tmpl_slot_name(t, 4));
    tt_tmpl_free(t);
    tt_tmpl_free(NULL);
}

static const tt_test_case problems_cases[] = {
    {"problem", test_problem},
    {"config", test_config},
    {"config_order_free", test_config_order_free},
    {"lets_geom", test_lets_geom},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"template_problems", NULL, NULL, problems_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

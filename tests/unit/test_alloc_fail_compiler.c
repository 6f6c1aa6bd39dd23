/* SPDX-License-Identifier: MIT
 * test_alloc_fail_compiler.c - allocation-failure torture of the compiler's workloads: every
 * allocation of expressions (compiler/expr_*.c), the built-in templates (compiler/
 * template*.c), gemm space enumeration (compiler/space.c), T1 import + render (compiler/t1.c,
 * compiler/render.c) and JSON text (compiler/jsonutil.c: never a document with a member
 * silently missing, which jansson 2.14's json_dumps() can return) is made to fail once, and
 * each must then return a clean error with nothing leaked; and the hooks themselves.
 *
 * How: tests/helpers/alloc_fail/tt_alloc_fail.h (malloc and friends interposed by this
 * program, a countdown that fails the Nth allocation, a live-block counter, each N in a
 * forked child).  Under AddressSanitizer nothing is interposed: each workload runs (twice)
 * unarmed and must succeed; the injection runs in the plain (-Werror) build.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "dataset.h"
#include "expr.h"
#include "jsonutil.h"
#include "model.h"
#include "render.h"
#include "sim.h"
#include "space.h"
#include "t1.h"
#include "target.h"
#include "template.h"
#include "tt_alloc_fail.h"
#include "tt_test.h"

/* 1. expressions */
static int expr_resolve(void *ud, const char *name, size_t len)
{
    static const char *const names[] = {"M", "N", "K", "block_M", "block_N"};
    (void)ud;
    for (int i = 0; i < 5; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) return i;
    return -1;
}

static tt_rc wl_expr(uint64_t *digest)
{
    static const char *const srcs[] = {
        "ceildiv(M, block_M) * ceildiv(N, block_N)",
        "block_M * block_N <= 1024 * 64 and K % 16 == 0",
        "max(M, N, K, 7) // 3 if not (M < N <= K) else min(M, 2 ** 10) - -1",
        "align_up(M, 16) + log2(block_N) + sizeof(\"float16\") + (M & 0xff) << 2",
        "(((((((((M + 1) * 2) - 3) // 4) % 5) + 6) * 7) - 8) // 9) + abs(-N)",
    };
    const int64_t slots[5] = {4096, 3000, 777, 128, 256};
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        tt_expr *x = NULL;
        tt_errinfo e;
        tt_rc rc = tt_expr_compile(srcs[i], expr_resolve, NULL, &x, &e);
        if (rc != TT_OK) {
            if (x) return TT_EINTERNAL;   /* *out must be NULL on failure */
            return rc;
        }
        int64_t v = 0;
        rc = tt_expr_eval(x, slots, &v);
        h = tt_af_mix(tt_af_mix(h, (uint64_t)v), (uint64_t)tt_expr_max_slot(x));
        h = tt_af_mix_str(h, tt_expr_source(x));
        tt_expr_free(x);
        if (rc != TT_OK) return rc;
    }
    *digest = h;
    return TT_OK;
}

/* 2. every built-in template */
static const char *const g_templates[] = {"batch_gemm.json", "elementwise.json",
                                          "flash_attn_fwd.json", "gemm.json", "rms_norm.json",
                                          "softmax.json"};

static tt_rc wl_templates(uint64_t *digest)
{
    uint64_t h = 1;
    for (size_t i = 0; i < sizeof g_templates / sizeof g_templates[0]; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "templates/%s", g_templates[i]);
        char *path = tt_test_src(rel);
        if (!path) return TT_ENOMEM;
        tt_template *t = NULL;
        tt_errinfo e;
        tt_rc rc = tt_tmpl_parse_file(path, &t, &e);
        free(path);
        if (rc != TT_OK) return t ? TT_EINTERNAL : rc;
        h = tt_af_mix(tt_af_mix_str(tt_af_mix_str(h, t->name), t->hash), t->nslots);
        h = tt_af_mix(h, t->source_text ? strlen(t->source_text) : 0);
        tt_tmpl_free(t);
    }
    *digest = h;
    return TT_OK;
}

/* 3. gemm space on a2, first 1000 feasible configs */
static int space_visit(void *ud, const int64_t *slots)
{
    uint64_t *h = ud;
    for (size_t i = 0; i < tt_af_gemm->nslots; i++) *h = tt_af_mix(*h, (uint64_t)slots[i]);
    return 0;
}

static tt_rc wl_space(uint64_t *digest)
{
    tt_caps caps;
    tt_target_caps(tt_af_a2, &caps);
    tt_space *s = NULL;
    tt_errinfo e;
    tt_rc rc = tt_space_new(tt_af_gemm, tt_af_gemm_slots, &caps, &s, &e);
    if (rc != TT_OK) return s ? TT_EINTERNAL : rc;
    uint64_t h = 2;
    tt_space_counts c;
    rc = tt_space_enumerate(s, space_visit, &h, 1000, &c);
    tt_space_free(s);
    if (rc != TT_OK) return rc;
    *digest = tt_af_mix(tt_af_mix(h, c.feasible), c.nreasons);
    return TT_OK;
}

/* 4. the targets directory */

static tt_rc render_one(const tt_template *t, const int64_t *slots, const char *src,
                        uint64_t *h)
{
    char *out = NULL;
    size_t len = 0;
    tt_errinfo e;
    tt_rc rc = tt_render(t, slots, src, strlen(src), &out, &len, &e);
    if (rc != TT_OK) return out ? TT_EINTERNAL : rc;
    *h = tt_af_mix(tt_af_mix_str(*h, out), len);
    free(out);
    return TT_OK;
}

static tt_rc wl_t1_render(uint64_t *digest)
{
    char *path = tt_test_shared("datasets/convolution.t1.json");
    if (!path) return TT_ENOMEM;
    json_t *doc = NULL;
    tt_errinfo e;
    tt_rc rc = tt_t1_file_to_template(path, NULL, &doc, &e);
    free(path);
    if (rc != TT_OK) return doc ? TT_EINTERNAL : rc;
    tt_template *t = NULL;
    rc = tt_tmpl_parse_json(doc, NULL, &t, &e);
    json_decref(doc);
    if (rc != TT_OK) return t ? TT_EINTERNAL : rc;
    uint64_t h = 6;
    int64_t slots[TT_MAX_SLOTS] = {0};
    for (size_t i = 0; i < t->nparams; i++) slots[tt_tmpl_param_slot(t, i)] = t->params[i].values[0];
    rc = render_one(t, slots,
                    "// {{ block_size_x }}x{{block_size_y}} {{config_json}} {{problem_json}}\n"
                    "f\"{{ 1 }}\" { lone", &h);
    tt_tmpl_free(t);
    if (rc != TT_OK) return rc;
    int64_t gs[TT_MAX_SLOTS];
    memcpy(gs, tt_af_gemm_slots, sizeof gs);
    if (tt_tmpl_eval_lets(tt_af_gemm, gs, &e) != TT_OK || !tt_af_gemm->source_text) return TT_EINTERNAL;
    rc = render_one(tt_af_gemm, gs, tt_af_gemm->source_text, &h);
    if (rc != TT_OK) return rc;
    *digest = h;
    return TT_OK;
}

/* 8. datasets: a small KT cache, the same as T4, the T4 one gzip-compressed, and the KT one
 * padded with whitespace past the reader's first 1 MiB buffer (so that it grows) */

static tt_rc wl_jsonutil(uint64_t *digest)
{
    json_t *doc = json_object();
    if (!doc) return TT_ENOMEM;
    for (int i = 0; i < 300; i++) {
        char key[16];
        snprintf(key, sizeof key, "member_%03d", (i * 7) % 300);
        if (json_object_set_new(doc, key, json_pack("{s:i, s:[s, f]}", "n", i, "v", key, i * 0.5))) {
            json_decref(doc);
            return TT_ENOMEM;
        }
    }
    static const size_t flags[] = {JSON_SORT_KEYS | JSON_INDENT(2),
                                   JSON_COMPACT | JSON_PRESERVE_ORDER};
    uint64_t h = 11;
    for (int k = 0; k < 2; k++) {
        char *text = tt_json_dumps(doc, flags[k]);
        if (!text) {
            json_decref(doc);
            return TT_ENOMEM;
        }
        h = tt_af_mix(tt_af_mix_str(h, text), strlen(text));
        free(text);
    }
    json_decref(doc);
    *digest = h;
    return TT_OK;
}


static const tt_af_workload W_EXPR = {"expr", wl_expr, {TT_OK}};
static const tt_af_workload W_TMPL = {"templates", wl_templates, {TT_EJSON, TT_OK}};
static const tt_af_workload W_SPACE = {"space", wl_space, {TT_OK}};

static const tt_af_workload W_T1 = {"t1_render", wl_t1_render, {TT_EJSON, TT_OK}};

static const tt_af_workload W_JSON = {"jsonutil", wl_jsonutil, {TT_OK}};

static void test_expr(void) { tt_af_torture(&W_EXPR); }
static void test_templates(void) { tt_af_torture(&W_TMPL); }
static void test_space(void) { tt_af_torture(&W_SPACE); }

static void test_t1_render(void) { tt_af_torture(&W_T1); }

static void test_jsonutil(void) { tt_af_torture(&W_JSON); }

/* The hooks themselves: the countdown fails exactly the Nth call, once, and counts blocks. */
static void test_hooks(void)
{
    if (!TT_AF_HOOKS || tt_af_backtrace) return;   /* backtrace() allocates */
    long live = tt_af_live;
    /* called through volatile pointers: clang may otherwise drop an allocation whose
     * result is only compared with NULL (and fold the comparison) */
    void *(*volatile mal)(size_t) = malloc;
    void *(*volatile real)(void *, size_t) = realloc;
    char *(*volatile sdup)(const char *) = strdup;
    tt_af_reset(2);
    char *a = mal(16);
    char *b = mal(16);
    int e = errno;
    char *c = sdup("x");   /* glibc's strdup goes through the hook too */
    tt_af_disarm();
    CU_ASSERT_PTR_NOT_NULL(a);
    CU_ASSERT_PTR_NULL(b);
    CU_ASSERT_EQUAL(e, ENOMEM);
    CU_ASSERT_PTR_NOT_NULL(c);
    CU_ASSERT_EQUAL(tt_af_calls, 3);
    CU_ASSERT_EQUAL(tt_af_fired, 1);
    CU_ASSERT_EQUAL(tt_af_live - live, 2);
    tt_af_reset(1);
    char *r = real(a, 4096);   /* failing realloc keeps the block */
    tt_af_disarm();
    CU_ASSERT_PTR_NULL(r);
    if (!r) r = a;
    free(r);
    free(c);
    CU_ASSERT_EQUAL(tt_af_live, live);
}

static const tt_test_case hook_cases[] = {{"hooks", test_hooks}, {NULL, NULL}};
static const tt_test_case compile_cases[] = {
    {"expr", test_expr}, {"templates", test_templates}, {"space", test_space},
    {"t1_render", test_t1_render}, {"jsonutil", test_jsonutil}, {NULL, NULL}};

static const tt_test_suite suites[] = {
    {"alloc_hooks", NULL, NULL, hook_cases},
    {"alloc_fail_compiler", tt_af_init, tt_af_cleanup, compile_cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_af_main(argc, argv, suites); }

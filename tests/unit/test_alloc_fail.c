/* SPDX-License-Identifier: MIT
 * test_alloc_fail.c - allocation-failure torture test: every allocation of nine library
 * workloads is made to fail once, and each must then return a clean error with nothing leaked.
 *
 * How (curl's torture mode, sqlite's do_faultsim_test, libuv's test-loop-oom.c): this program
 * defines malloc, calloc, realloc, free, posix_memalign, aligned_alloc, memalign, valloc and
 * pvalloc itself, forwarding to glibc's __libc_* entry points.  The definitions in the
 * executable interpose for the whole process, so they also see the allocations of strdup,
 * fopen, jansson and zlib.  A countdown, once armed with N, makes the Nth allocation return
 * NULL with errno ENOMEM (only that one); a live counter (allocations minus frees) detects
 * leaks.  For each workload:
 *   1. the suite init builds what the workloads borrow (gemm template, targets, files), unarmed;
 *   2. run() is executed unarmed twice: the second run gives the number of allocations A and
 *      the reference digest (a checksum of the results), and must be TT_OK with no leak;
 *   3. for N = 1..A (every N up to TT_AF_FULL, then a strided sample of about TT_AF_SAMPLE
 *      more, unless the environment sets TT_ALLOC_FAIL_ALL=1) run() is executed in a forked
 *      child with the Nth allocation failing, and must return TT_OK with the reference digest
 *      (the allocation was optional and nothing was silently lost) or TT_ENOMEM, or a code in
 *      the workload's documented `also` set; the live count must be back where it was.  A
 *      crash is reported with the workload and N (the loop goes on).
 * jansson 2.14 itself mishandles a failing allocation inside its lexer (see
 * jansson_lexer_defect()); those outcomes are counted separately, not failed.  jansson's hash
 * seed is fixed so that N is reproducible.
 * Diagnosis: TT_ALLOC_FAIL_ONLY=<workload>:<N> runs one point, TT_ALLOC_FAIL_BT=1 prints the
 * stack of the failed call, TT_ALLOC_FAIL_VERBOSE=1 lists every bad point (else the first 8).
 *
 * Under AddressSanitizer the hooks would fight ASan's own allocator, so when
 * __SANITIZE_ADDRESS__ (gcc) or __has_feature(address_sanitizer) (clang) is set, nothing is
 * interposed: each workload runs (twice) unarmed and must succeed; ASan/LSan then check the
 * success paths for leaks and overflows.  The injection runs in the plain (-Werror) build.
 *
 * Workloads: expressions (compiler/expr_*.c), the built-in templates (compiler/template*.c),
 * gemm space enumeration (compiler/space.c), the targets directory (costmodel/target.c),
 * the analytic model and the simulator (with and without a trace) on gemm and every
 * template of tests/data/sim/smoke.txt (costmodel/model*.c, costmodel/sim*.c), T1 import + render (compiler/t1.c, compiler/render.c), and datasets in
 * KT-cache, T4 and gzip form (daemon/backends/dataset*.c), and JSON text (compiler/jsonutil.c: never a
 * document with a member silently missing, which jansson 2.14's json_dumps() can return).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
#include "tt_test.h"

/* ---------------------------------------------------------------- allocation hooks */

#if defined(__SANITIZE_ADDRESS__)
#define TT_AF_HOOKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_AF_HOOKS 0
#else
#define TT_AF_HOOKS 1
#endif
#else
#define TT_AF_HOOKS 1
#endif

#define TT_AF_FULL 3000     /* every N up to this one is tested */
#define TT_AF_SAMPLE 1500   /* then about this many more, evenly strided */

static long g_af_calls;     /* allocation calls since af_reset() */
static long g_af_fail_at;   /* 0: disarmed; else the call number that fails */
static long g_af_fired;     /* injected failures since af_reset() */
static long g_af_live;      /* live blocks (allocations minus frees), whole process */
static void *g_af_caller;   /* return address of the call that was made to fail */
static int g_af_in_load;    /* > 0 while inside one of jansson's json_load* parsers */
static int g_af_failed_in_load;  /* the failed call was made inside json_load* */
static long g_af_load_leak; /* blocks a json_load* that returned NULL left allocated */
static int g_af_backtrace;  /* TT_ALLOC_FAIL_BT=1: print the stack of the failed call */

#if TT_AF_HOOKS
#include <execinfo.h>
#include <malloc.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

/* 1 when this allocation call is the one to fail (errno is then set and the caller kept). */
static int af_fail_now(void *caller)
{
    long n = __atomic_add_fetch(&g_af_calls, 1, __ATOMIC_RELAXED);
    long at = __atomic_load_n(&g_af_fail_at, __ATOMIC_RELAXED);
    if (at > 0 && n == at) {
        __atomic_add_fetch(&g_af_fired, 1, __ATOMIC_RELAXED);
        g_af_caller = caller;
        g_af_failed_in_load = g_af_in_load > 0;
        if (g_af_backtrace) {
            void *bt[32];
            backtrace_symbols_fd(bt, backtrace(bt, 32), 2);
        }
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

static void *af_count(void *p)
{
    if (p) __atomic_add_fetch(&g_af_live, 1, __ATOMIC_RELAXED);
    return p;
}

void *malloc(size_t n)
{
    return af_fail_now(__builtin_return_address(0)) ? NULL : af_count(__libc_malloc(n));
}

void *calloc(size_t n, size_t m)
{
    return af_fail_now(__builtin_return_address(0)) ? NULL : af_count(__libc_calloc(n, m));
}

void free(void *p)
{
    if (!p) return;
    __atomic_sub_fetch(&g_af_live, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

void *realloc(void *p, size_t n)
{
    if (p && n == 0) {   /* glibc: frees p and returns NULL */
        free(p);
        return NULL;
    }
    if (af_fail_now(__builtin_return_address(0))) return NULL;   /* p stays valid */
    if (!p) return af_count(__libc_malloc(n));
    return __libc_realloc(p, n);      /* same live count whether it moved or not */
}

static void *af_memalign(size_t align, size_t n, void *caller)
{
    return af_fail_now(caller) ? NULL : af_count(__libc_memalign(align, n));
}

void *memalign(size_t align, size_t n)
{
    return af_memalign(align, n, __builtin_return_address(0));
}

void *aligned_alloc(size_t align, size_t n)
{
    return af_memalign(align, n, __builtin_return_address(0));
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    void *p = af_memalign(align, n, __builtin_return_address(0));
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t n)
{
    return af_fail_now(__builtin_return_address(0)) ? NULL : af_count(__libc_valloc(n));
}

void *pvalloc(size_t n)
{
    return af_fail_now(__builtin_return_address(0)) ? NULL : af_count(__libc_pvalloc(n));
}

/* jansson's parsers, interposed too, only to know that a failed allocation happened inside
 * one (see jansson_lexer_defect()).  Each forwards to the library's own definition. */
#define AF_JSON_WRAP(name, params, args)                                                   \
    json_t *name params                                                                    \
    {                                                                                      \
        static json_t *(*real) params;                                                     \
        if (!real) *(void **)&real = dlsym(RTLD_NEXT, #name);                              \
        if (!real) abort();                                                                \
        long live = g_af_live;                                                             \
        g_af_in_load++;                                                                    \
        json_t *r = real args;                                                             \
        g_af_in_load--;                                                                    \
        if (!r) g_af_load_leak += g_af_live - live;                                        \
        return r;                                                                          \
    }
AF_JSON_WRAP(json_loads, (const char *in, size_t fl, json_error_t *e), (in, fl, e))
AF_JSON_WRAP(json_loadb, (const char *b, size_t n, size_t fl, json_error_t *e), (b, n, fl, e))
AF_JSON_WRAP(json_loadf, (FILE *in, size_t fl, json_error_t *e), (in, fl, e))
AF_JSON_WRAP(json_loadfd, (int in, size_t fl, json_error_t *e), (in, fl, e))
AF_JSON_WRAP(json_load_file, (const char *p, size_t fl, json_error_t *e), (p, fl, e))
AF_JSON_WRAP(json_load_callback, (json_load_callback_t cb, void *d, size_t fl, json_error_t *e),
             (cb, d, fl, e))
#endif

static void af_reset(long fail_at)
{
    g_af_load_leak = 0;
    __atomic_store_n(&g_af_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_af_fired, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_af_fail_at, fail_at, __ATOMIC_RELAXED);
}

static void af_disarm(void) { __atomic_store_n(&g_af_fail_at, 0, __ATOMIC_RELAXED); }

/* ---------------------------------------------------------------- shared helpers */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v;
    h *= 1099511628211ull;
    return h ^ (h >> 29);
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    for (; s && *s; s++) h = mix(h, (unsigned char)*s);
    return h;
}

static uint64_t mix_double(uint64_t h, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return mix(h, v);
}

static tt_targets *g_targets;         /* loaded unarmed by the suite */
static const tt_target *g_a2;
static tt_template *g_gemm;
static int64_t g_gemm_slots[TT_MAX_SLOTS];   /* problem + one config */

/* The simulator's smoke table (tests/data/sim/smoke.txt): every built-in template with a
 * problem and a config, for the model and sim workloads. */
#define MAX_SMOKE 16
static tt_template *g_smoke_t[MAX_SMOKE];
static int64_t g_smoke_slots[MAX_SMOKE][TT_MAX_SLOTS];
static size_t g_nsmoke;

static int load_smoke(tt_errinfo *e)
{
    char *table = tt_test_src("tests/data/sim/smoke.txt");
    char *text = table ? tt_test_read_file(table, NULL) : NULL;
    free(table);
    if (!text) return -1;
    int bad = 0;
    for (char *line = strtok(text, "\n"); line && !bad; line = strtok(NULL, "\n")) {
        char *f1 = strchr(line, '|'), *f2 = f1 ? strchr(f1 + 1, '|') : NULL;
        if (line[0] == '#' || !f2 || g_nsmoke == MAX_SMOKE) continue;
        *f1 = *f2 = '\0';
        char rel[128];
        snprintf(rel, sizeof rel, "templates/%s", line);
        char *path = tt_test_src(rel);
        tt_template **t = &g_smoke_t[g_nsmoke];
        int64_t *slots = g_smoke_slots[g_nsmoke];
        bad = !path || tt_tmpl_parse_file(path, t, e) != TT_OK ||
              tt_tmpl_problem_parse(*t, f1 + 1, slots, e) != TT_OK ||
              tt_tmpl_config_parse(*t, f2 + 1, slots, e) != TT_OK;
        free(path);
        if (*t) g_nsmoke++;
    }
    free(text);
    return bad || g_nsmoke == 0 ? -1 : 0;
}

static int suite_init(void)
{
    char *dir = tt_test_src("costmodel/targets");
    char *gp = tt_test_src("templates/gemm.json");
    tt_errinfo e;
    tt_errinfo_clear(&e);
    int bad = !dir || !gp || tt_targets_load_dir(dir, &g_targets, &e) != TT_OK ||
              !(g_a2 = tt_targets_find(g_targets, "a2")) ||
              tt_tmpl_parse_file(gp, &g_gemm, &e) != TT_OK ||
              tt_tmpl_problem_parse(g_gemm, "M=512,N=384,K=256,dtype=float16,out_dtype=float16",
                                    g_gemm_slots, &e) != TT_OK ||
              tt_tmpl_config_parse(g_gemm, "block_M=128,block_N=128,block_K=64,K_L1=128,S1=2,S2=2",
                                   g_gemm_slots, &e) != TT_OK ||
              load_smoke(&e) != 0;
    if (bad) fprintf(stderr, "suite init: %s: %s\n", e.path, e.msg);
    free(dir);
    free(gp);
    return bad ? -1 : 0;
}

static int suite_cleanup(void)
{
    for (size_t i = 0; i < g_nsmoke; i++) tt_tmpl_free(g_smoke_t[i]);
    g_nsmoke = 0;
    tt_tmpl_free(g_gemm);
    tt_targets_free(g_targets);
    return 0;
}

/* ---------------------------------------------------------------- workloads */

/* A workload: run() does the work from scratch and cleans up everything it created (also on
 * failure), returns the first error and a digest of the results.  `also` lists the codes
 * besides TT_OK and TT_ENOMEM that an allocation failure may legitimately produce
 * (terminated by TT_OK). */
typedef struct workload {
    const char *name;
    tt_rc (*run)(uint64_t *digest);
    tt_rc also[4];
} workload;

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
        h = mix(mix(h, (uint64_t)v), (uint64_t)tt_expr_max_slot(x));
        h = mix_str(h, tt_expr_source(x));
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
        h = mix(mix_str(mix_str(h, t->name), t->hash), t->nslots);
        h = mix(h, t->source_text ? strlen(t->source_text) : 0);
        tt_tmpl_free(t);
    }
    *digest = h;
    return TT_OK;
}

/* 3. gemm space on a2, first 1000 feasible configs */
static int space_visit(void *ud, const int64_t *slots)
{
    uint64_t *h = ud;
    for (size_t i = 0; i < g_gemm->nslots; i++) *h = mix(*h, (uint64_t)slots[i]);
    return 0;
}

static tt_rc wl_space(uint64_t *digest)
{
    tt_caps caps;
    tt_target_caps(g_a2, &caps);
    tt_space *s = NULL;
    tt_errinfo e;
    tt_rc rc = tt_space_new(g_gemm, g_gemm_slots, &caps, &s, &e);
    if (rc != TT_OK) return s ? TT_EINTERNAL : rc;
    uint64_t h = 2;
    tt_space_counts c;
    rc = tt_space_enumerate(s, space_visit, &h, 1000, &c);
    tt_space_free(s);
    if (rc != TT_OK) return rc;
    *digest = mix(mix(h, c.feasible), c.nreasons);
    return TT_OK;
}

/* 4. the targets directory */
static tt_rc wl_targets(uint64_t *digest)
{
    char *dir = tt_test_src("costmodel/targets");
    if (!dir) return TT_ENOMEM;
    tt_targets *ts = NULL;
    tt_errinfo e;
    tt_rc rc = tt_targets_load_dir(dir, &ts, &e);
    free(dir);
    if (rc != TT_OK) return ts ? TT_EINTERNAL : rc;
    uint64_t h = 3;
    for (size_t i = 0; i < tt_targets_count(ts); i++) {
        const tt_target *t = tt_targets_at(ts, i);
        h = mix_double(mix(mix_str(h, t->name), (uint64_t)t->cube_cores), t->hbm_gbps);
    }
    h = mix(h, tt_targets_find(ts, "a3") != NULL);
    tt_targets_free(ts);
    *digest = h;
    return TT_OK;
}

/* 5. analytic model: gemm on a2, then every smoke-table config on a3 */
static tt_rc model_one(const tt_template *t, const tt_target *tgt, const int64_t *problem,
                       uint64_t *h)
{
    tt_model *m = NULL;
    tt_errinfo e;
    tt_rc rc = tt_model_new(t, tgt, problem, NULL, &m, &e);
    if (rc != TT_OK) return m ? TT_EINTERNAL : rc;
    int64_t slots[TT_MAX_SLOTS];
    memcpy(slots, problem, sizeof slots);
    tt_model_result r;
    rc = tt_model_eval(m, slots, &r);
    tt_model_free(m);
    if (rc != TT_OK) return rc;
    *h = mix(mix_double(mix_double(*h, r.time_us), r.gm_bytes), (uint64_t)r.bound);
    return TT_OK;
}

static tt_rc wl_model(uint64_t *digest)
{
    uint64_t h = 4;
    tt_rc rc = model_one(g_gemm, g_a2, g_gemm_slots, &h);
    const tt_target *a3 = tt_targets_find(g_targets, "a3");
    if (!a3) return TT_EINTERNAL;
    for (size_t i = 0; i < g_nsmoke && rc == TT_OK; i++)
        rc = model_one(g_smoke_t[i], a3, g_smoke_slots[i], &h);
    if (rc != TT_OK) return rc;
    *digest = h;
    return TT_OK;
}

/* 6. simulator: gemm on a2 without and with a trace of core 0, then every smoke-table config
 * on a3 (the mix kernel and the vector ones too) */
static tt_rc sim_one(const tt_template *t, const tt_target *tgt, const int64_t *problem,
                     int trace, uint64_t *h)
{
    int64_t slots[TT_MAX_SLOTS];
    memcpy(slots, problem, sizeof slots);
    tt_sim_opts o = {.trace_core = trace ? 0 : -1};
    tt_sim_result r;
    tt_rc rc = tt_sim_run(t, tgt, slots, &o, &r);
    if (rc != TT_OK) {
        int bad = r.trace_json != NULL || r.rc != rc;
        tt_sim_result_close(&r);
        return bad ? TT_EINTERNAL : rc;
    }
    if (trace && !r.trace_json) {
        tt_sim_result_close(&r);
        return TT_EINTERNAL;
    }
    *h = mix(mix_double(*h, r.cycles), (uint64_t)r.events);
    *h = mix_str(*h, r.trace_json);
    tt_sim_result_close(&r);
    return TT_OK;
}

static tt_rc wl_sim(uint64_t *digest)
{
    uint64_t h = 5;
    tt_rc rc = sim_one(g_gemm, g_a2, g_gemm_slots, 0, &h);
    if (rc == TT_OK) rc = sim_one(g_gemm, g_a2, g_gemm_slots, 1, &h);
    const tt_target *a3 = tt_targets_find(g_targets, "a3");
    if (!a3) return TT_EINTERNAL;
    for (size_t i = 0; i < g_nsmoke && rc == TT_OK; i++)
        rc = sim_one(g_smoke_t[i], a3, g_smoke_slots[i], 0, &h);
    if (rc != TT_OK) return rc;
    *digest = h;
    return TT_OK;
}

/* 7. T1 import of the convolution space, parse, render a source for its first config; and
 * the gemm source for the gemm config */
static tt_rc render_one(const tt_template *t, const int64_t *slots, const char *src,
                        uint64_t *h)
{
    char *out = NULL;
    size_t len = 0;
    tt_errinfo e;
    tt_rc rc = tt_render(t, slots, src, strlen(src), &out, &len, &e);
    if (rc != TT_OK) return out ? TT_EINTERNAL : rc;
    *h = mix(mix_str(*h, out), len);
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
    memcpy(gs, g_gemm_slots, sizeof gs);
    if (tt_tmpl_eval_lets(g_gemm, gs, &e) != TT_OK || !g_gemm->source_text) return TT_EINTERNAL;
    rc = render_one(g_gemm, gs, g_gemm->source_text, &h);
    if (rc != TT_OK) return rc;
    *digest = h;
    return TT_OK;
}

/* 8. datasets: a small KT cache, the same as T4, the T4 one gzip-compressed, and the KT one
 * padded with whitespace past the reader's first 1 MiB buffer (so that it grows) */
static char *g_ds_dir, *g_ds_kt, *g_ds_t4, *g_ds_gz, *g_ds_big;

static const char KT_DOC[] =
    "{\"device_name\": \"NVIDIA A100\", \"kernel_name\": \"conv\", \"problem_size\": [4096, 4096],"
    " \"tune_params_keys\": [\"bx\", \"by\", \"unroll\"],"
    " \"tune_params\": {\"bx\": [16, 32, 64], \"by\": [1, 2], \"unroll\": [0, 1]},"
    " \"objective\": \"time\", \"cache\": {"
    "  \"16,1,0\": {\"bx\": 16, \"by\": 1, \"unroll\": 0, \"time\": 1.5, \"times\": [1.4, 1.5, 1.6],"
    "             \"compile_time\": 250.0, \"timestamp\": \"2024-01-01 00:00:00\"},"
    "  \"16,2,1\": {\"bx\": 16, \"by\": 2, \"unroll\": 1, \"time\": 1.25, \"times\": [1.25, 1.3],"
    "             \"compile_time\": 240.0},"
    "  \"32,1,0\": {\"bx\": 32, \"by\": 1, \"unroll\": 0, \"time\": \"InvalidConfig\"},"
    "  \"32,2,0\": {\"bx\": 32, \"by\": 2, \"unroll\": 0, \"time\": \"CompilationFailedConfig\"},"
    "  \"64,1,1\": {\"bx\": 64, \"by\": 1, \"unroll\": 1, \"time\": \"RuntimeFailedConfig\"},"
    "  \"64,2,1\": {\"bx\": 64, \"by\": 2, \"unroll\": 1, \"time\": 0.75, \"times\": [0.75, 0.8, 0.7, 0.9]}"
    "}}";

static const char T4_DOC[] =
    "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"milliseconds\"},"
    " \"results\": ["
    "  {\"configuration\": {\"bx\": 16, \"by\": 1, \"unroll\": 0}, \"invalidity\": \"correct\","
    "   \"times\": {\"runtimes\": [1.4, 1.5, 1.6], \"compilation\": 250.0},"
    "   \"measurements\": [{\"name\": \"time\", \"value\": 1.5, \"unit\": \"ms\"}],"
    "   \"timestamp\": \"2024-01-01T00:00:00Z\"},"
    "  {\"configuration\": {\"bx\": 16, \"by\": 2, \"unroll\": 1}, \"invalidity\": \"correct\","
    "   \"times\": {\"runtimes\": [1.25, 1.3]}},"
    "  {\"configuration\": {\"bx\": 32, \"by\": 1, \"unroll\": 0}, \"invalidity\": \"constraints\","
    "   \"times\": {}},"
    "  {\"configuration\": {\"bx\": 32, \"by\": 2, \"unroll\": false}, \"invalidity\": \"compile\"},"
    "  {\"configuration\": {\"bx\": 64, \"by\": 1, \"unroll\": true}, \"invalidity\": \"timeout\"},"
    "  {\"configuration\": {\"bx\": 64, \"by\": 2, \"unroll\": 1}, \"invalidity\": \"correct\","
    "   \"times\": {\"runtimes\": [0.75, 0.8, 0.7, 0.9], \"compilation\": 1.0}},"
    "  {\"configuration\": {\"bx\": 64, \"by\": 2, \"unroll\": 1}, \"invalidity\": \"correct\","
    "   \"times\": {\"runtimes\": [9.0]}}"
    "]}";

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int write_file(const char *path, const char *text, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        if (!f) return -1;
        int ok = gzwrite(f, text, (unsigned)strlen(text)) == (int)strlen(text);
        return gzclose(f) == Z_OK && ok ? 0 : -1;
    }
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(text, 1, strlen(text), f) == strlen(text);
    return fclose(f) == 0 && ok ? 0 : -1;
}

static int ds_init(void)
{
    if (suite_init()) return -1;
    g_ds_dir = tt_test_tmpdir("tt-alloc-fail");
    if (!g_ds_dir) return -1;
    g_ds_kt = join(g_ds_dir, "small.kt-cache.json");
    g_ds_t4 = join(g_ds_dir, "small.t4.json");
    g_ds_gz = join(g_ds_dir, "small.t4.json.gz");
    g_ds_big = join(g_ds_dir, "padded.kt-cache.json");
    size_t pad = (size_t)3 << 19;   /* 1.5 MiB */
    char *big = malloc(sizeof KT_DOC + pad);
    if (!g_ds_kt || !g_ds_t4 || !g_ds_gz || !g_ds_big || !big) {
        free(big);
        return -1;
    }
    memcpy(big, KT_DOC, sizeof KT_DOC - 1);
    memset(big + sizeof KT_DOC - 1, ' ', pad);
    big[sizeof KT_DOC - 1 + pad] = '\0';
    int bad = write_file(g_ds_kt, KT_DOC, 0) || write_file(g_ds_t4, T4_DOC, 0) ||
              write_file(g_ds_gz, T4_DOC, 1) || write_file(g_ds_big, big, 0);
    free(big);
    return bad ? -1 : 0;
}

static int ds_cleanup(void)
{
    if (g_ds_dir) tt_test_rmrf(g_ds_dir);
    free(g_ds_dir);
    free(g_ds_kt);
    free(g_ds_t4);
    free(g_ds_gz);
    free(g_ds_big);
    return suite_cleanup();
}

static tt_rc wl_dataset(uint64_t *digest)
{
    const char *const paths[] = {g_ds_kt, g_ds_t4, g_ds_gz, g_ds_big};
    uint64_t h = 7;
    for (int i = 0; i < 4; i++) {
        tt_dataset *ds = NULL;
        tt_errinfo e;
        tt_rc rc = tt_dataset_load_file(paths[i], &ds, &e);
        if (rc != TT_OK) return ds ? TT_EINTERNAL : rc;
        h = mix(mix(mix(h, ds->nrecords), ds->nduplicates), ds->content_hash);
        for (size_t r = 0; r < ds->nrecords; r++) {
            const tt_ds_record *rec = &ds->records[r];
            h = mix_double(mix(h, (uint64_t)rec->status), rec->median_us);
            h = mix_str(h, rec->timestamp);
            if (tt_dataset_find(ds, tt_ds_values(ds, rec)) != rec) h = mix(h, 0xdead);
        }
        for (size_t p = 0; p < ds->nparams; p++) h = mix(mix_str(h, ds->params[p]), ds->ndomain[p]);
        h = mix_str(mix_str(h, ds->device), ds->kernel);
        if (i == 0) {   /* the T4 writer (export) */
            char *text = NULL;
            size_t len = 0;
            rc = tt_dataset_write_t4_buffer(ds, 0, &text, &len, &e);
            if (rc != TT_OK) {
                tt_dataset_free(ds);
                return text ? TT_EINTERNAL : rc;
            }
            h = mix(mix_str(h, text), len);
            free(text);
        }
        tt_dataset_free(ds);
    }
    *digest = h;
    return TT_OK;
}

/* 9. JSON text through tt_json_dumps(): a document of 300 members (several KB, so the buffer
 * grows), sorted and indented, then compact in insertion order.  An allocation failure must
 * give NULL, never text with a member missing (the digest would differ). */
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
        h = mix(mix_str(h, text), strlen(text));
        free(text);
    }
    json_decref(doc);
    *digest = h;
    return TT_OK;
}

/* ---------------------------------------------------------------- the torture loop */

static int rc_allowed(const workload *w, tt_rc rc)
{
    if (rc == TT_OK || rc == TT_ENOMEM) return 1;
    for (int i = 0; i < 4 && w->also[i] != TT_OK; i++)
        if (w->also[i] == rc) return 1;
    return 0;
}

/* The outcome of one armed run, computed in a child process so that a crash is reported
 * with its N and the loop goes on. */
typedef struct af_result {
    int sig;                  /* 0: returned; else the fatal signal of the child */
    tt_rc rc;
    uint64_t digest;
    long leak, fired;
    void *caller;             /* return address of the failed allocation call */
    int in_load;              /* it was made inside jansson's json_load* */
    int sig_in_load;          /* the fatal signal came while still inside json_load* */
    long load_leak;           /* part of leak left by a json_load* that failed */
} af_result;

static int g_child_fd = -1;

static void child_fatal(int sig)
{
    af_result r = {.sig = sig, .fired = g_af_fired, .caller = g_af_caller,
                   .in_load = g_af_failed_in_load, .sig_in_load = g_af_in_load > 0};
    ssize_t wr = write(g_child_fd, &r, sizeof r);
    (void)wr;
    _exit(128 + sig);
}

static af_result run_armed(const workload *w, long n)
{
    af_result r = {.sig = -1};
    int fd[2];
    if (pipe(fd) != 0) return r;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return r;
    }
    if (pid == 0) {
        close(fd[0]);
        g_child_fd = fd[1];
        int null = g_af_backtrace ? -1 : open("/dev/null", O_WRONLY);   /* assert() texts */
        if (null >= 0) dup2(null, 2);
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], child_fatal);
        long live = g_af_live;
        af_reset(n);
        af_result c = {0};
        c.rc = w->run(&c.digest);
        af_disarm();
        c.fired = g_af_fired;
        c.caller = g_af_caller;
        c.in_load = g_af_failed_in_load;
        c.leak = g_af_live - live;
        c.load_leak = g_af_load_leak;
        ssize_t wr = write(fd[1], &c, sizeof c);
        _exit(wr == (ssize_t)sizeof c ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t k = read(fd[0], (char *)&r + got, sizeof r - got);
        if (k > 0) got += (size_t)k;
        else if (k < 0 && errno == EINTR) continue;
        else break;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (got != sizeof r) {
        memset(&r, 0, sizeof r);
        r.sig = WIFSIGNALED(st) ? WTERMSIG(st) : -1;
    }
    return r;
}

/* Name of the shared object (basename) and function that contain a code address. */
static void where(void *addr, char *buf, size_t cap)
{
    Dl_info di;
    if (addr && dladdr(addr, &di) && di.dli_fname) {
        const char *base = strrchr(di.dli_fname, '/');
        snprintf(buf, cap, "%s:%s", base ? base + 1 : di.dli_fname,
                 di.dli_sname ? di.dli_sname : "?");
    } else {
        snprintf(buf, cap, "%p", addr);
    }
}

/* jansson 2.14's lexer ignores a failed strbuf_append_byte() (lex_save() drops the byte):
 * the parse then succeeds with a string that lacks a character (a key "cache" may become
 * "cach"), or the lexer trips its own assert(0) in lex_scan_string() on an escape sequence,
 * or it reads past the token and crashes, or the parser fails on the damaged token stream
 * and leaks what it had built.  No caller can detect or handle that, so when the failed
 * allocation was made inside json_load*, these outcomes are counted and reported as that
 * library defect instead of failing: a signal raised inside or after such a json_load*, a TT_OK
 * with a different digest, a validation error about the damaged document, or blocks leaked by
 * a json_load* call that returned NULL (measured across the call).  Any other leak, and any
 * crash when the failed allocation was not made inside json_load*, still fails. */
static int jansson_lexer_defect(const workload *w, const af_result *r, uint64_t ref)
{
    if (!r->in_load) return 0;
    /* A crash after the damaged json_load* returned counts too: the dropped byte can leave
     * uninitialised bytes in a string, so what happens later differs from run to run (seen:
     * the same failure point giving malformed_json, a damaged key, or an abort in free()). */
    if (r->sig) return 1;
    if (r->leak != r->load_leak) return 0;
    if (r->load_leak) return 1;
    return r->rc == TT_OK ? r->digest != ref : !rc_allowed(w, r->rc);
}

static void torture(const workload *w)
{
    uint64_t ref = 0, d = 0;
    /* warm-up run: lazily initialised library state (stdio, locale) settles here */
    af_reset(0);
    tt_rc rc = w->run(&ref);
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    long live0 = g_af_live;
    af_reset(0);
    rc = w->run(&d);
    long total = g_af_calls;
    long leak0 = g_af_live - live0;
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    CU_ASSERT_EQUAL(d, ref);          /* deterministic */
    if (!TT_AF_HOOKS) {
        printf("\n  %-10s unarmed run OK (no injection under AddressSanitizer) ", w->name);
        return;
    }
    CU_ASSERT_EQUAL(leak0, 0);
    CU_ASSERT(total > 0);             /* the hooks see the workload */

    const char *all = getenv("TT_ALLOC_FAIL_ALL");
    const char *verbose = getenv("TT_ALLOC_FAIL_VERBOSE");
    long stride = 1;
    if (!(all && *all == '1') && total > TT_AF_FULL) stride = (total - TT_AF_FULL) / TT_AF_SAMPLE + 1;
    long tested = 0, ok_rc = 0, nomem = 0, other = 0, unfired = 0, bad = 0, jansson = 0;
    long by_rc[TT_RC__COUNT] = {0};
    long first = 1;
    const char *only = getenv("TT_ALLOC_FAIL_ONLY");   /* "workload:N" */
    const char *colon = only ? strchr(only, ':') : NULL;
    if (colon && (size_t)(colon - only) == strlen(w->name) && !strncmp(only, w->name, strlen(w->name)))
        first = total = atol(colon + 1);
    else if (colon)
        return;
    for (long n = first; n <= total; n += n < TT_AF_FULL ? 1 : stride) {
        af_result r = run_armed(w, n);
        tested++;
        char at[160];
        where(r.caller, at, sizeof at);
        if (r.sig != 0) {
            if (jansson_lexer_defect(w, &r, ref)) {
                jansson++;
                continue;
            }
            bad++;
            if (bad <= 8 || verbose)
                fprintf(stderr, "\n  %s: allocation %ld of %ld failing (by %s): child died, signal %d",
                        w->name, n, total, at, r.sig);
            CU_FAIL("crash under allocation failure");
            continue;
        }
        if (jansson_lexer_defect(w, &r, ref)) {
            jansson++;
            continue;
        }
        if (!r.fired) unfired++;
        if (r.rc == TT_OK) ok_rc++;
        else if (r.rc == TT_ENOMEM) nomem++;
        else other++;
        if ((int)r.rc >= 0 && r.rc < TT_RC__COUNT) by_rc[r.rc]++;
        int fail = !rc_allowed(w, r.rc) || r.leak != 0 || (r.rc == TT_OK && r.digest != ref);
        if (fail && (bad++ < 8 || verbose))
            fprintf(stderr, "\n  %s: allocation %ld of %ld failing (by %s): rc %s%s, leaked %ld block(s)",
                    w->name, n, total, at, tt_rc_code(r.rc),
                    r.rc == TT_OK && r.digest != ref ? ", digest differs from the reference" : "",
                    r.leak);
        CU_ASSERT(rc_allowed(w, r.rc));
        CU_ASSERT_EQUAL(r.leak, 0);
        if (r.rc == TT_OK) CU_ASSERT_EQUAL(r.digest, ref);
    }
    /* injected failures must mostly be reported, not swallowed */
    CU_ASSERT(nomem + other > 0);
    printf("\n  %-10s %ld allocations, %ld failure points tested (%s), ok %ld / out_of_memory %ld"
           " / other %ld, %ld not reached, %ld jansson-lexer defects, %ld bad ",
           w->name, total, tested, stride == 1 ? "all" : "every N to 3000, then strided",
           ok_rc, nomem, other, unfired, jansson, bad);
    for (int i = TT_ENOMEM + 1; i < TT_RC__COUNT; i++)
        if (by_rc[i]) printf("[%s %ld] ", tt_rc_code((tt_rc)i), by_rc[i]);
}

/* What each workload may return besides TT_OK / TT_ENOMEM, and why:
 *   - jansson 2.14 reports most allocation failures inside json_load*() as a parse error
 *     without json_error_out_of_memory (e.g. a failed json_object_set() in parse_object()),
 *     so the loaders can only say TT_EJSON ("malformed JSON") then; where jansson does say
 *     out of memory they return TT_ENOMEM;
 *   - costmodel/target.c wraps a parse error of a target file as TT_ETARGET, and a failed
 *     fopen() inside json_load_file() (reported by jansson as "cannot open file") as TT_EIO. */
static const workload W_EXPR = {"expr", wl_expr, {TT_OK}};
static const workload W_TMPL = {"templates", wl_templates, {TT_EJSON, TT_OK}};
static const workload W_SPACE = {"space", wl_space, {TT_OK}};
static const workload W_TARGETS = {"targets", wl_targets, {TT_ETARGET, TT_EIO, TT_OK}};
static const workload W_MODEL = {"model", wl_model, {TT_OK}};
static const workload W_SIM = {"sim", wl_sim, {TT_OK}};
static const workload W_T1 = {"t1_render", wl_t1_render, {TT_EJSON, TT_OK}};
static const workload W_DS = {"dataset", wl_dataset, {TT_EJSON, TT_OK}};
static const workload W_JSON = {"jsonutil", wl_jsonutil, {TT_OK}};

static void test_expr(void) { torture(&W_EXPR); }
static void test_templates(void) { torture(&W_TMPL); }
static void test_space(void) { torture(&W_SPACE); }
static void test_targets(void) { torture(&W_TARGETS); }
static void test_model(void) { torture(&W_MODEL); }
static void test_sim(void) { torture(&W_SIM); }
static void test_t1_render(void) { torture(&W_T1); }
static void test_dataset(void) { torture(&W_DS); }
static void test_jsonutil(void) { torture(&W_JSON); }

/* The hooks themselves: the countdown fails exactly the Nth call, once, and counts blocks. */
static void test_hooks(void)
{
    if (!TT_AF_HOOKS || g_af_backtrace) return;   /* backtrace() allocates */
    long live = g_af_live;
    af_reset(2);
    char *a = malloc(16);
    char *b = malloc(16);
    int e = errno;
    char *c = strdup("x");   /* glibc's strdup goes through the hook too */
    af_disarm();
    CU_ASSERT_PTR_NOT_NULL(a);
    CU_ASSERT_PTR_NULL(b);
    CU_ASSERT_EQUAL(e, ENOMEM);
    CU_ASSERT_PTR_NOT_NULL(c);
    CU_ASSERT_EQUAL(g_af_calls, 3);
    CU_ASSERT_EQUAL(g_af_fired, 1);
    CU_ASSERT_EQUAL(g_af_live - live, 2);
    af_reset(1);
    char *r = realloc(a, 4096);   /* failing realloc keeps the block */
    af_disarm();
    CU_ASSERT_PTR_NULL(r);
    if (!r) r = a;
    free(r);
    free(c);
    CU_ASSERT_EQUAL(g_af_live, live);
}

static const tt_test_case hook_cases[] = {{"hooks", test_hooks}, {NULL, NULL}};
static const tt_test_case compile_cases[] = {
    {"expr", test_expr}, {"templates", test_templates}, {"space", test_space},
    {"t1_render", test_t1_render}, {"jsonutil", test_jsonutil}, {NULL, NULL}};
static const tt_test_case cost_cases[] = {
    {"targets", test_targets}, {"model", test_model}, {"sim", test_sim}, {NULL, NULL}};
static const tt_test_case daemon_cases[] = {{"dataset", test_dataset}, {NULL, NULL}};

static const tt_test_suite suites[] = {
    {"alloc_hooks", NULL, NULL, hook_cases},
    {"alloc_fail_compiler", suite_init, suite_cleanup, compile_cases},
    {"alloc_fail_costmodel", suite_init, suite_cleanup, cost_cases},
    {"alloc_fail_daemon", ds_init, ds_cleanup, daemon_cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    json_object_seed(1);   /* jansson's hash order, hence allocation N, is reproducible */
    const char *bt = getenv("TT_ALLOC_FAIL_BT");
    g_af_backtrace = bt && *bt == '1';
    setvbuf(stdout, NULL, _IONBF, 0);
    return tt_test_main(argc, argv, suites);
}

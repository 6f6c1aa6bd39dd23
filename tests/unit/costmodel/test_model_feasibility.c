/* SPDX-License-Identifier: MIT
 * test_model_feasibility.c - the analytic cost model against the space: refusals identical to
 * tt_space_check() (also through the fast feasibility tables), GEMM sanity and calibration,
 * the API's edges, every built-in template over (part of) its space, and one model shared by
 * many threads.  Fixture: tests/helpers/model_fixture.
 * Every time checked here is a prediction of the model.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "cube_ring.h"
#include "model.h"
#include "model_fixture.h"
#include "reuse.h"
#include "sim.h"
#include "space.h"
#include "target.h"
#include "tt_test.h"

static tt_targets *shipped;
static tt_target hand;     /* clock 1000 MHz, GM->UB 100 B/cycle + 50, exp 50 B/cycle + 20 */

static int setup(void) { return tt_mfx_init(&shipped, &hand); }
static int teardown(void) { return tt_mfx_cleanup(&shipped, &hand); }

/* ---- 4. refusals: exactly what tt_space_check refuses, with its reason ----------------- */

static void check_same(const tt_template *t, const tt_target *tg, const int64_t *problem,
                       tt_model *m, tt_space *sp, int64_t *slots, int *disagree)
{
    int64_t a[TT_MAX_SLOTS], b[TT_MAX_SLOTS];
    memcpy(a, slots, sizeof a);
    memcpy(b, slots, sizeof b);
    tt_model_result r;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rm = tt_model_eval(m, a, &r);
    tt_rc rs = tt_space_check(sp, b, &e);
    if (rm != rs || (rs && strncmp(r.reason, e.msg, sizeof r.reason - 1) != 0)) {
        if (*disagree < 3) fprintf(stderr, "\nmodel %d \"%s\" vs space %d \"%s\"\n", rm, r.reason, rs, e.msg);
        (*disagree)++;
    }
    (void)t; (void)tg; (void)problem;
}

static void test_infeasible(void)
{
    tt_template *t = tt_mfx_gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    static const struct {
        const char *config;
        tt_rc rc;
        const char *reason;      /* substring */
    } cases[] = {
        {"block_M=256,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", TT_EINFEASIBLE, "L0C"},
        {"block_M=128,block_N=256,block_K=64,K_L1=96,S1=2,S2=2", TT_EINFEASIBLE, "constraints[0]"},
        {"block_M=128,block_N=128,block_K=256,K_L1=1024,S1=4,S2=2", TT_EINFEASIBLE, "capacity"},
        {"block_M=17,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", TT_ECONFIG, "block_M"},
        {"block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", TT_OK, ""},
    };
    const char *problem = "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16";
    int64_t ps[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, problem, ps, &e), TT_OK);
    tt_caps caps;
    tt_target_caps(a3, &caps);
    tt_space *sp = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, ps, &caps, &sp, &e), TT_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_model_result r;
        tt_rc rc = tt_mfx_predict(t, a3, problem, cases[i].config, NULL, &r);
        CU_ASSERT_EQUAL(rc, cases[i].rc);
        CU_ASSERT_EQUAL(r.rc, rc);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, cases[i].reason));
        if (rc == TT_OK) {
            CU_ASSERT(r.time_us > 0);
        } else {
            CU_ASSERT_DOUBLE_EQUAL(r.time_us, 0, 0);
        }
    }
    /* every config of the cartesian product of a small problem: same verdict, same reason */
    const char *small = "M=512,N=384,K=768,dtype=bfloat16,out_dtype=float32";
    int64_t slots[TT_MAX_SLOTS] = {0};
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, small, slots, &e), TT_OK);
    tt_space *sp2 = NULL;
    tt_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, slots, &caps, &sp2, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_model_new(t, a3, slots, NULL, &m, &e), TT_OK);
    int disagree = 0;
    uint64_t total = tt_space_total(sp2);
    CU_ASSERT(total > 10000);
    for (uint64_t i = 0; i < total; i++) {
        tt_space_decode(sp2, i, slots);
        check_same(t, a3, slots, m, sp2, slots, &disagree);
    }
    /* and off-domain values */
    slots[tt_tmpl_slot_of(t, "block_K")] = 48;
    check_same(t, a3, slots, m, sp2, slots, &disagree);
    CU_ASSERT_EQUAL(disagree, 0);
    tt_model_free(m);
    tt_space_free(sp2);
    tt_space_free(sp);
    tt_tmpl_free(t);
}

/* The fast feasibility path tabulates lets and constraints that read at most two params
 * (docs/cost-model.md, "Speed"): a let of one param, of two, of three (not tabulated), a let
 * that reads a let, one that fails for some values (division by zero), constraints over
 * each, and buffers shaped by lets (one tabulated, one not); every config must get the space's verdict and reason,
 * and a config accepted twice must get the same prediction. */
static const char *tables_tmpl =
    "{\"tiletune\":1,\"name\":\"tables\",\"inputs\":{\"N\":\"int\"},"
    "\"params\":{\"a\":{\"values\":[16,48,32,96,80]},\"b\":{\"range\":[1,6,1]},"
    "\"c\":{\"pow2\":[1,64]},\"d\":[1,2]},"
    "\"let\":{\"x\":\"a // (b - 2)\",\"w\":\"ceildiv(N, a)\",\"y\":\"x * c + a + d\","
    "\"z\":\"(w + x) % 5\"},"
    "\"constraints\":[\"x >= 0\",\"(a * b) % 7 != 1\",\"y > 20\",\"z != 2\",\"N // (c - 8) != 3\"],"
    "\"tensors\":{\"X\":{\"shape\":[\"N\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"X_UB\":{\"scope\":\"UB\",\"shape\":[\"x * 64 + 16\", \"c\"],\"dtype\":\"float16\",\"copies\":\"d\"},"
    "\"Y_UB\":{\"scope\":\"UB\",\"shape\":[\"x * 512 + 1\", 8],\"dtype\":\"float16\",\"copies\":\"c\"}},"
    "\"kernel\":{\"grid\":{\"bx\":\"w\"},\"cores\":\"vector\",\"body\":["
    "{\"for\":\"i\",\"trip\":\"z + 1\",\"stages\":\"d\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_UB\"],\"along\":[\"bx\",\"i\"]},"
    "{\"vec\":\"exp\",\"in\":[\"X_UB\"],\"out\":\"Y_UB\"}]}]}}";

static void test_fast_tables(void)
{
    tt_template *t = tt_mfx_parse(tables_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    tt_caps caps;
    tt_target_caps(a3, &caps);
    static const char *const problems[] = {"N=100000", "N=33", "N=1"};
    for (size_t k = 0; k < sizeof problems / sizeof problems[0]; k++) {
        int64_t slots[TT_MAX_SLOTS] = {0};
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, problems[k], slots, &e), TT_OK);
        tt_space *sp = NULL;
        tt_model *m = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_space_new(t, slots, &caps, &sp, &e), TT_OK);
        CU_ASSERT_EQUAL_FATAL(tt_model_new(t, a3, slots, NULL, &m, &e), TT_OK);
        int disagree = 0, ok = 0, refused = 0;
        uint64_t total = tt_space_total(sp);
        for (uint64_t i = 0; i < total; i++) {
            tt_space_decode(sp, i, slots);
            check_same(t, a3, slots, m, sp, slots, &disagree);
            int64_t a[TT_MAX_SLOTS], b[TT_MAX_SLOTS];
            memcpy(a, slots, sizeof a);
            memcpy(b, slots, sizeof b);
            tt_model_result r1, r2;
            if (tt_model_eval(m, a, &r1) != TT_OK) { refused++; continue; }
            ok++;
            CU_ASSERT_EQUAL(tt_model_eval(m, b, &r2), TT_OK);
            CU_ASSERT_EQUAL(memcmp(&r1, &r2, sizeof r1), 0);
            /* the lets are in the slots, as tt_space_check leaves them */
            int64_t c[TT_MAX_SLOTS];
            memcpy(c, slots, sizeof c);
            CU_ASSERT_EQUAL(tt_space_check(sp, c, &e), TT_OK);
            for (size_t l = 0; l < t->nlets; l++)
                CU_ASSERT_EQUAL(a[tt_tmpl_let_slot(t, l)], c[tt_tmpl_let_slot(t, l)]);
        }
        /* off-domain values of a tabulated param */
        slots[tt_tmpl_slot_of(t, "a")] = 17;
        check_same(t, a3, slots, m, sp, slots, &disagree);
        slots[tt_tmpl_slot_of(t, "a")] = 16;
        slots[tt_tmpl_slot_of(t, "b")] = 7;
        check_same(t, a3, slots, m, sp, slots, &disagree);
        CU_ASSERT_EQUAL(disagree, 0);
        CU_ASSERT(ok > 0);
        CU_ASSERT(refused > 0);
        tt_model_free(m);
        tt_space_free(sp);
    }
    tt_tmpl_free(t);
}


/* ---- 6. GEMM sanity: more K is more time, flops are 2MNK, calibration applies ---------- */

static void test_gemm_sanity(void)
{
    tt_template *t = tt_mfx_gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    const char *cfg = "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2";
    double prev = 0;
    for (int k = 1024; k <= 16384; k *= 2) {
        char pb[128];
        snprintf(pb, sizeof pb, "M=4096,N=4096,K=%d,dtype=float16,out_dtype=float16", k);
        tt_model_result r;
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a3, pb, cfg, NULL, &r), TT_OK);
        CU_ASSERT(r.time_us > prev);
        CU_ASSERT_DOUBLE_EQUAL(r.flops, 2.0 * 4096 * 4096 * k, 1);
        CU_ASSERT_EQUAL(r.blocks, 32 * 16);
        CU_ASSERT(r.busy_us[TT_UNIT_M] > 0 && r.busy_us[TT_UNIT_MTE1] > 0 && r.busy_us[TT_UNIT_FIX] > 0);
        CU_ASSERT(r.util[TT_UNIT_M] > 0.5 && r.util[TT_UNIT_M] <= 1.0);
        /* the model never beats the cube's peak */
        double peak = 2.0 * 4096 * a3->cube_cores * a3->clock_mhz * 1e6;
        CU_ASSERT(r.flops / (r.time_us * 1e-6) < peak);
        prev = r.time_us;
    }
    /* fp32 inputs are not in the template's domain; int8 would be: bigger tiles cost more */
    tt_model_result a, b, c, d;
    const char *pb = "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16";
    CU_ASSERT_EQUAL(tt_mfx_predict(t, a3, pb, cfg, NULL, &a), TT_OK);
    tt_calib cal;
    tt_calib_identity(&cal);
    cal.n = 2;
    cal.log_a = log(2.0);
    CU_ASSERT_EQUAL(tt_mfx_predict(t, a3, pb, cfg, &cal, &b), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(b.time_us, 2 * a.time_us, 1e-9 * a.time_us);
    tt_calib_identity(&cal);
    cal.unit_scale[TT_UNIT_M] = 2;
    CU_ASSERT_EQUAL(tt_mfx_predict(t, a3, pb, cfg, &cal, &c), TT_OK);
    CU_ASSERT(c.time_us > 1.3 * a.time_us);
    CU_ASSERT_DOUBLE_EQUAL(c.busy_us[TT_UNIT_M], 2 * a.busy_us[TT_UNIT_M], 1e-9 * a.time_us);
    /* a target with fewer cores (20) is slower on the same problem */
    CU_ASSERT_EQUAL(tt_mfx_predict(t, tt_targets_find(shipped, "Ascend910_9362"), pb, cfg, NULL, &d), TT_OK);
    CU_ASSERT(d.time_us > a.time_us);
    tt_tmpl_free(t);
}

/* ---- 7. API edges ---------------------------------------------------------------------- */

static void test_api(void)
{
    static const char *const names[TT_BOUND__COUNT] = {
        "MTE2", "MTE1", "M", "V", "FIX", "MTE3", "S", "HBM", "L2", "latency", "launch", "sync"};
    for (int b = 0; b < TT_BOUND__COUNT; b++) CU_ASSERT_STRING_EQUAL(tt_bound_name((tt_bound)b), names[b]);
    CU_ASSERT_STRING_EQUAL(tt_bound_name(TT_BOUND__COUNT), "?");
    for (int u = 0; u < TT_UNIT__COUNT; u++)
        CU_ASSERT_STRING_EQUAL(tt_bound_name((tt_bound)u), tt_unit_name((tt_unit)u));

    tt_template *t = tt_mfx_parse("{\"tiletune\":1,\"name\":\"nokernel\",\"inputs\":{\"N\":\"int\"},"
                           "\"params\":{\"S\":[1,2]}}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t slots[TT_MAX_SLOTS] = {0};
    slots[0] = 5;
    slots[1] = 1;
    tt_model *m = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_model_new(t, &hand, slots, NULL, &m, &e), TT_OK);
    tt_model_result r;
    CU_ASSERT_EQUAL(tt_model_eval(m, slots, &r), TT_EUNSUPPORTED);
    CU_ASSERT_EQUAL(r.rc, TT_EUNSUPPORTED);
    tt_model_free(m);
    /* a problem out of the inputs' range, missing arguments */
    slots[0] = 0;
    m = (tt_model *)&e;
    CU_ASSERT_EQUAL(tt_model_new(t, &hand, slots, NULL, &m, &e), TT_EPROBLEM);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_EQUAL(tt_model_new(NULL, &hand, slots, NULL, &m, &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_model_new(t, NULL, slots, NULL, &m, &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_model_new(t, &hand, slots, NULL, NULL, &e), TT_EINVAL);
    tt_model_free(NULL);
    tt_tmpl_free(t);
}



/* ---- 10. every built-in template: sane predictions over (part of) its space ------------ */

static void test_builtin_templates(void)
{
    static const char *const names[] = {"gemm", "batch_gemm", "flash_attn_fwd", "rms_norm",
                                        "softmax", "elementwise"};
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    int with_configs = 0;
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        char rel[96];
        snprintf(rel, sizeof rel, "templates/%s.json", names[n]);
        char *path = tt_test_src(rel);
        tt_template *t = NULL;
        tt_errinfo e;
        tt_rc prc = tt_tmpl_parse_file(path, &t, &e);
        free(path);
        if (prc) { fprintf(stderr, "\n%s: %s: %s\n", rel, e.path, e.msg); CU_FAIL("template"); continue; }
        int64_t slots[TT_MAX_SLOTS] = {0};
        for (size_t i = 0; i < t->ninputs; i++) {
            const tt_input *in = &t->inputs[i];
            if (in->has_default) slots[i] = in->def;
            else if (in->kind == TT_INPUT_DTYPE) slots[i] = in->dtypes[0];
            else slots[i] = in->max < 1024 ? in->max : (in->min > 1024 ? in->min : 1024);
        }
        tt_model *m = NULL;
        tt_caps caps;
        tt_target_caps(a2, &caps);
        tt_space *sp = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_space_new(t, slots, &caps, &sp, &e), TT_OK);
        CU_ASSERT_EQUAL_FATAL(tt_model_new(t, a2, slots, NULL, &m, &e), TT_OK);
        uint64_t total = tt_space_total(sp), step = total / 20000 + 1, ok = 0;
        for (uint64_t i = 0; i < total; i += step) {
            tt_space_decode(sp, i, slots);
            tt_model_result r;
            if (tt_model_eval(m, slots, &r) != TT_OK) { CU_ASSERT(r.reason[0] != 0); continue; }
            ok++;
            CU_ASSERT(isfinite(r.time_us) && r.time_us > a2->launch_us);
            CU_ASSERT(r.bound >= 0 && r.bound < TT_BOUND__COUNT);
            CU_ASSERT(r.l2_hit >= 0 && r.l2_hit <= 1);
            CU_ASSERT(r.blocks >= 1 && r.cores_used >= 1 && r.cores_used <= a2->cube_cores);
            for (int u = 0; u < TT_UNIT__COUNT; u++) CU_ASSERT(r.util[u] >= 0 && r.util[u] <= 1.0 + 1e-9);
        }
        if (ok) with_configs++;
        tt_model_free(m);
        tt_space_free(sp);
        tt_tmpl_free(t);
    }
    CU_ASSERT(with_configs >= 5);
}

/* ---- 11. one model, many threads: the same answers as serially ------------------------ */

typedef struct thr_arg {
    const tt_model *m;
    const tt_space *sp;
    size_t nslots;
    uint64_t first, n;
    double *out;
} thr_arg;

static void *thr_eval(void *p)
{
    thr_arg *a = p;
    int64_t slots[TT_MAX_SLOTS] = {0};
    for (uint64_t i = 0; i < a->n; i++) {
        tt_space_decode(a->sp, a->first + i, slots);
        tt_model_result r;
        a->out[i] = tt_model_eval(a->m, slots, &r) == TT_OK ? r.time_us : -1;
    }
    return NULL;
}

static void test_threads(void)
{
    tt_template *t = tt_mfx_gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, "M=2048,N=3072,K=1024,dtype=float16,out_dtype=float16", slots, &e), TT_OK);
    tt_caps caps;
    tt_target_caps(a3, &caps);
    tt_space *sp = NULL;
    tt_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, slots, &caps, &sp, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_model_new(t, a3, slots, NULL, &m, &e), TT_OK);
    enum { NT = 4, PER = 4000 };
    double *serial = calloc(NT * PER, sizeof *serial), *par = calloc(NT * PER, sizeof *par);
    CU_ASSERT_PTR_NOT_NULL_FATAL(serial);
    CU_ASSERT_PTR_NOT_NULL_FATAL(par);
    thr_arg all = {m, sp, t->nslots, 0, NT * PER, serial};
    thr_eval(&all);
    pthread_t th[NT];
    thr_arg args[NT];
    for (int i = 0; i < NT; i++) {
        args[i] = (thr_arg){m, sp, t->nslots, (uint64_t)i * PER, PER, par + i * PER};
        CU_ASSERT_EQUAL(pthread_create(&th[i], NULL, thr_eval, &args[i]), 0);
    }
    for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
    int same = 1, feasible = 0;
    for (int i = 0; i < NT * PER; i++) {
        if (serial[i] != par[i]) same = 0;
        if (serial[i] > 0) feasible++;
    }
    CU_ASSERT(same);
    CU_ASSERT(feasible > 100);
    free(serial);
    free(par);
    tt_model_free(m);
    tt_space_free(sp);
    tt_tmpl_free(t);
}

static const tt_test_case feasibility_cases[] = {
    {"infeasible", test_infeasible},
    {"gemm_sanity", test_gemm_sanity},
    {"api", test_api},
    {"builtin_templates", test_builtin_templates},
    {"threads", test_threads},
    {"fast_tables", test_fast_tables},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"model_feasibility", setup, teardown, feasibility_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

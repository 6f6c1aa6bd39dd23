/* SPDX-License-Identifier: MIT
 * test_library.c - the kernel library (issue 11): every (template, shape) of
 * tests/data/library/shapes.txt on a2 and a3 has a non-empty space, the analytic model's
 * best config is feasible, and the simulator runs it (both are models, not the chip); the
 * copy variants the library added (gather rows, atomic-add writes) cost what
 * docs/cost-model.md says in the model and in the simulator.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "sim.h"
#include "space.h"
#include "target.h"
#include "template.h"
#include "tt_test.h"

static tt_targets *shipped;

static int setup(void)
{
    char *dir = tt_test_src("costmodel/targets");
    tt_errinfo e;
    tt_rc rc = tt_targets_load_dir(dir, &shipped, &e);
    free(dir);
    return rc == TT_OK ? 0 : 1;
}

static int teardown(void)
{
    tt_targets_free(shipped);
    return 0;
}

static tt_template *load(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "templates/%s.json", name);
    char *path = tt_test_src(rel);
    tt_template *t = NULL;
    tt_errinfo e;
    if (tt_tmpl_parse_file(path, &t, &e) != TT_OK) fprintf(stderr, "\n%s: %s: %s\n", rel, e.path, e.msg);
    free(path);
    return t;
}

/* The model's best feasible config over the whole space (slots filled); 0 when the space
 * has none. */
typedef struct best_ctx {
    const tt_model *m;
    const tt_template *t;
    int64_t best[TT_MAX_SLOTS];
    double best_us;
    uint64_t feasible;
} best_ctx;

static int best_visit(void *ud, const int64_t *slots)
{
    best_ctx *b = ud;
    int64_t s[TT_MAX_SLOTS];
    memcpy(s, slots, b->t->nslots * sizeof *s);
    tt_model_result r;
    b->feasible++;
    if (tt_model_eval(b->m, s, &r) != TT_OK) return 0;
    if (r.time_us < b->best_us) {
        b->best_us = r.time_us;
        memcpy(b->best, slots, b->t->nslots * sizeof *slots);
    }
    return 0;
}

/* One line of shapes.txt on one target. */
static void check_shape(const tt_template *t, const tt_target *tgt, const char *problem)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, problem, slots, &e), TT_OK);
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    tt_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, slots, &caps, &sp, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_model_new(t, tgt, slots, NULL, &m, &e), TT_OK);
    best_ctx *b = calloc(1, sizeof *b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    b->m = m;
    b->t = t;
    b->best_us = INFINITY;
    CU_ASSERT_EQUAL(tt_space_enumerate(sp, best_visit, b, 0, NULL), TT_OK);
    if (b->feasible == 0 || !isfinite(b->best_us)) {
        fprintf(stderr, "\n%s %s on %s: %llu feasible configs, no prediction\n", t->name, problem,
                tgt->name, (unsigned long long)b->feasible);
        CU_FAIL("empty space or no prediction");
    } else {
        int64_t s[TT_MAX_SLOTS];
        memcpy(s, b->best, t->nslots * sizeof *s);
        CU_ASSERT_EQUAL(tt_space_check(sp, s, &e), TT_OK);
        tt_sim_result r;
        memcpy(s, b->best, t->nslots * sizeof *s);
        tt_rc rc = tt_sim_run(t, tgt, s, NULL, &r);
        if (rc != TT_OK) fprintf(stderr, "\n%s %s on %s: sim: %s\n", t->name, problem, tgt->name, r.reason);
        CU_ASSERT_EQUAL(rc, TT_OK);
        CU_ASSERT(r.time_us > tgt->launch_us && isfinite(r.time_us));
        /* two models of one chip: the same order of magnitude for the model's pick */
        CU_ASSERT(r.time_us < 4 * b->best_us && b->best_us < 4 * r.time_us);
        if (!(r.time_us < 4 * b->best_us && b->best_us < 4 * r.time_us))
            fprintf(stderr, "\n%s %s on %s: model %.2f us, sim %.2f us\n", t->name, problem, tgt->name,
                    b->best_us, r.time_us);
        tt_sim_result_close(&r);
    }
    free(b);
    tt_model_free(m);
    tt_space_free(sp);
}

static void test_shapes(void)
{
    char *path = tt_test_src("tests/data/library/shapes.txt");
    char *text = tt_test_read_file(path, NULL);
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    const char *const targets[] = {"a2", "a3"};
    char name[64] = "", problem[512];
    tt_template *t = NULL;
    int lines = 0, families = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char nm[64];
        if (line[0] == '#' || sscanf(line, "%63s %511s", nm, problem) != 2) continue;
        if (strcmp(nm, name) != 0) {
            tt_tmpl_free(t);
            snprintf(name, sizeof name, "%s", nm);
            t = load(name);
            families++;
        }
        CU_ASSERT_PTR_NOT_NULL(t);
        if (!t) continue;
        for (size_t k = 0; k < 2; k++) {
            const tt_target *tgt = tt_targets_find(shipped, targets[k]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
            check_shape(t, tgt, problem);
        }
        lines++;
    }
    tt_tmpl_free(t);
    free(text);
    CU_ASSERT(families >= 10);
    CU_ASSERT(lines >= 5 * families);
}

/* A two-copy vector kernel: X -> UB -> Y; the load is a gather of "rows" rows when
 * `rows` is given. */
#define GATHER_DOC \
    "{\"tiletune\": 1, \"name\": \"g\", \"inputs\": {\"R\": \"int\"}," \
    " \"params\": {\"p\": [1]}," \
    " \"tensors\": {\"X\": {\"shape\": [65536, 256], \"dtype\": \"float16\"}," \
    "   \"Y\": {\"shape\": [\"R\", 256], \"dtype\": \"float16\", \"output\": true}}," \
    " \"buffers\": {\"x\": {\"scope\": \"UB\", \"shape\": [64, 256], \"dtype\": \"float16\"}}," \
    " \"kernel\": {\"grid\": {\"bx\": 1}, \"cores\": \"vector\", \"body\": [" \
    "   {\"copy\": [\"gm:X\", \"x\"], %s}," \
    "   {\"copy\": [\"x\", \"gm:Y\"]%s}]}}"

static double run_variant(const char *rows, const char *atomic, int sim)
{
    char doc[2048];
    snprintf(doc, sizeof doc, GATHER_DOC, rows, atomic);
    tt_template *t = NULL;
    tt_errinfo e;
    if (tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, &e) != TT_OK) {
        fprintf(stderr, "\n%s: %s\n", e.path, e.msg);
        return -1;
    }
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    int64_t slots[TT_MAX_SLOTS] = {64, 1};
    double us = -1;
    if (sim) {
        tt_sim_result r;
        if (tt_sim_run(t, a2, slots, NULL, &r) == TT_OK) us = r.time_us;
        tt_sim_result_close(&r);
    } else {
        tt_model *m = NULL;
        tt_model_result r;
        if (tt_model_new(t, a2, slots, NULL, &m, &e) == TT_OK && tt_model_eval(m, slots, &r) == TT_OK)
            us = r.time_us;
        tt_model_free(m);
    }
    tt_tmpl_free(t);
    return us;
}

/* A gather of 64 rows pays 63 more transfers, each the path latency / dma_outstanding;
 * "rows": 1 is the plain copy; an atomic write costs more than a plain one. */
static void test_copy_variants(void)
{
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a2);
    double extra = tt__gather_cycles(&a2->path[TT_PATH_GM_UB], 64, a2->dma_outstanding);
    CU_ASSERT_DOUBLE_EQUAL(extra, 63.0 * a2->path[TT_PATH_GM_UB].latency_cycles / a2->dma_outstanding, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(tt__gather_cycles(&a2->path[TT_PATH_GM_UB], 1, 4), 0, 1e-12);
    for (int sim = 0; sim < 2; sim++) {
        double plain = run_variant("\"along\": [\"bx\"]", "", sim);
        double one = run_variant("\"rows\": 1", "", sim);
        double gath = run_variant("\"rows\": \"R\"", "", sim);
        double atom = run_variant("\"rows\": 1", ", \"atomic\": true", sim);
        double noat = run_variant("\"rows\": 1", ", \"atomic\": \"R > 64\"", sim);
        CU_ASSERT(plain > 0 && one > 0 && gath > 0 && atom > 0);
        CU_ASSERT_DOUBLE_EQUAL(one, plain, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(noat, plain, 1e-9);
        /* the extra cycles of the gather show in full: the kernel is one chain */
        CU_ASSERT_DOUBLE_EQUAL(gath - plain, tt_target_us(a2, extra), 0.02 * tt_target_us(a2, extra) + 0.05);
        CU_ASSERT(atom > plain);
    }
}

/* The parser's rules for the two keys. */
static void test_copy_variant_parse(void)
{
    static const struct { const char *rows, *atomic, *path; } bad[] = {
        {"\"rows\": \"q\"", "", "kernel.body[0].rows"},
        {"\"along\": [\"bx\"]", ", \"rows\": 2", "kernel.body[1].rows"},
        {"\"atomic\": true", "", "kernel.body[0].atomic"},
        {"\"along\": [\"bx\"]", ", \"atomic\": [1]", "kernel.body[1].atomic"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[2048];
        snprintf(doc, sizeof doc, GATHER_DOC, bad[i].rows, bad[i].atomic);
        tt_template *t = NULL;
        tt_errinfo e;
        CU_ASSERT_NOT_EQUAL(tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, &e), TT_OK);
        CU_ASSERT_STRING_EQUAL(e.path, bad[i].path);
        CU_ASSERT_PTR_NULL(t);
    }
}

/* One config "prob" + "params" (e.g. "block_N=32,block_K=1024") of t on tgt: the model's
 * result into *r and the simulator's time into *sim_us; the model stays open in *m (caller
 * frees) when m is given. */
static void run_config(const tt_template *t, const tt_target *tgt, const char *prob,
                       const char *params, tt_model **m, tt_model_result *r, double *sim_us)
{
    int64_t slots[TT_MAX_SLOTS] = {0}, s2[TT_MAX_SLOTS];
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, prob, slots, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, params, slots, &e), TT_OK);
    memcpy(s2, slots, sizeof s2);
    tt_model *mm = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_model_new(t, tgt, slots, NULL, &mm, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_model_eval(mm, slots, r), TT_OK);
    if (m) *m = mm;
    else tt_model_free(mm);
    tt_sim_result sr;
    CU_ASSERT_EQUAL(tt_sim_run(t, tgt, s2, NULL, &sr), TT_OK);
    *sim_us = sr.time_us;
    tt_sim_result_close(&sr);
}

/* gemv's x copy moves the M rows of x, not the 16-row fractal it is padded to in L1 (the
 * rendered T.copy clips at the tensor, as CATLASS copies the tile's actual rows): at M = 1
 * the 24-block fp32 config of catlass-mmopt-c3-tuned (N 768, K 5120, block_K 1024, where
 * x's padded rows were 1/3 of the bytes) is faster than at M = 16 in the model and the
 * simulator; the L1 footprint still counts 16 rows (block_K 2048 stays infeasible). */
static void test_gemv_x_rows(void)
{
    tt_template *t = load("gemv");
    const tt_target *b2 = tt_targets_find(shipped, "Ascend910B2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b2);
    double us[2][2] = {{0}};   /* [M = 1, 16][model, sim] */
    for (int i = 0; i < 2; i++) {
        char prob[128];
        snprintf(prob, sizeof prob, "M=%d,N=768,K=5120,dtype=float32,out_dtype=float32", i ? 16 : 1);
        tt_model *m = NULL;
        tt_model_result r;
        run_config(t, b2, prob, "block_N=32,block_K=1024,split_k=1", &m, &r, &us[i][1]);
        us[i][0] = r.time_us;
        int64_t slots[TT_MAX_SLOTS] = {0};
        tt_errinfo e;
        CU_ASSERT_EQUAL(tt_tmpl_problem_parse(t, prob, slots, &e), TT_OK);
        CU_ASSERT_EQUAL(tt_tmpl_config_parse(t, "block_N=16,block_K=2048,split_k=1", slots, &e), TT_OK);
        CU_ASSERT_EQUAL(tt_model_eval(m, slots, &r), TT_EINFEASIBLE);
        tt_model_free(m);
    }
    for (int k = 0; k < 2; k++) CU_ASSERT(us[0][k] > 0 && us[0][k] < 0.95 * us[1][k]);
    tt_tmpl_free(t);
}

/* The activation template and the A3 die its published fla rows ran on (*a3; NULL if the
 * shipped targets lack it). */
static tt_template *load_activation(const tt_target **a3)
{
    *a3 = tt_targets_find(shipped, "Ascend910_9391");
    return load("activation");
}

/* activation act 3 (fla's torch.compile'd gelu_fwd: the tanh form op by op, tanh as
 * 2 sigmoid(2y) - 1) costs 12 unary, 3 mul, exp and div per fp32 element against act 0's folded
 * sigmoid form (4 unary, mul, mla, exp, div): 0.376 / 0.281 = 1.34x the vector time at the
 * msKPP rates (A3, 2048 x 4096 bf16, block_M 32, block_N 512, stages 2); launch_mix 0 drops
 * the MIX launch extra (model and simulator). */
static void test_activation_tanh_form(void)
{
    const tt_target *a3 = NULL;
    tt_template *t = load_activation(&a3);
    CU_ASSERT_FATAL(t && a3);
    static const char *const probs[3] = {
        "M=2048,N=4096,act=0,dtype=bfloat16", "M=2048,N=4096,act=3,dtype=bfloat16",
        "M=2048,N=4096,act=3,dtype=bfloat16,launch_mix=0"};
    tt_model_result r[3];
    double sim[3] = {0};
    for (int i = 0; i < 3; i++)
        run_config(t, a3, probs[i], "block_M=32,block_N=512,stages=2", NULL, &r[i], &sim[i]);
    double ratio = r[1].busy_us[TT_UNIT_V] / r[0].busy_us[TT_UNIT_V];
    CU_ASSERT(r[0].busy_us[TT_UNIT_V] > 0 && ratio > 1.25 && ratio < 1.45);
    CU_ASSERT_DOUBLE_EQUAL(r[1].time_us - r[2].time_us, a3->mix_launch_extra_us, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(sim[1] - sim[2], a3->mix_launch_extra_us, 1e-6);
    tt_tmpl_free(t);
}

/* Between the two casts, relu (act 4) adds one unary op, squared relu (act 5, fla's
 * sqrelu_fwd) that op and one fp32 mul, silu (act 1) four unary-class ops and a div: vector
 * time act 4 < act 5 < act 1, in the model and in the simulator (A3, 2048 x 4096 bf16). */
static void test_activation_relu(void)
{
    const tt_target *a3 = NULL;
    tt_template *t = load_activation(&a3);
    CU_ASSERT_FATAL(t && a3);
    static const char *const probs[3] = {"M=2048,N=4096,act=4,dtype=bfloat16",
                                         "M=2048,N=4096,act=5,dtype=bfloat16",
                                         "M=2048,N=4096,act=1,dtype=bfloat16"};
    tt_model_result r[3];
    double sim[3] = {0};
    for (int i = 0; i < 3; i++)
        run_config(t, a3, probs[i], "block_M=32,block_N=512,stages=2", NULL, &r[i], &sim[i]);
    CU_ASSERT(r[0].busy_us[TT_UNIT_V] > 0);
    CU_ASSERT(r[0].busy_us[TT_UNIT_V] < r[1].busy_us[TT_UNIT_V]);
    CU_ASSERT(r[1].busy_us[TT_UNIT_V] < r[2].busy_us[TT_UNIT_V]);
    CU_ASSERT(sim[0] > 0 && sim[0] <= sim[1] && sim[1] <= sim[2]);
    tt_tmpl_free(t);
}

/* An emptied L2 (bench_fidelity's comparison under triton.testing.do_bench: a target copy
 * whose l2_resident_bytes is 1 byte) keeps nothing of the previous call: a memory-bound
 * squared relu over 16 MB reads from HBM, slower in the model and the simulator, and the
 * model's L2 hit rate is 0 (the kernel re-reads nothing); its writes are not slower. */
static void test_activation_emptied_l2(void)
{
    const tt_target *a3 = NULL;
    tt_template *t = load_activation(&a3);
    CU_ASSERT_FATAL(t && a3);
    tt_target cold = *a3;
    cold.l2_resident_bytes = 1;
    const char *prob = "M=4096,N=2048,act=5,dtype=bfloat16,launch_mix=0";
    const char *cfg = "block_M=128,block_N=128,stages=2";
    tt_model_result warm_r, cold_r;
    double warm_sim = 0, cold_sim = 0;
    run_config(t, a3, prob, cfg, NULL, &warm_r, &warm_sim);
    run_config(t, &cold, prob, cfg, NULL, &cold_r, &cold_sim);
    CU_ASSERT(warm_r.l2_hit > 0.5);
    CU_ASSERT_DOUBLE_EQUAL(cold_r.l2_hit, 0, 1e-9);
    double L = a3->launch_us;   /* the same launch in both: compare the kernels */
    CU_ASSERT(cold_r.time_us - L > 1.5 * (warm_r.time_us - L));
    CU_ASSERT(cold_sim - L > 1.5 * (warm_sim - L));
    /* the writes land in the write-back L2 at its rate either way (roofline.h,
     * tt__roof_write_gbps): the model's MTE3 (UB -> GM) stays near its warm time, 9.7 against
     * 8.2 us (it was 40.9 us when a cold write was charged as a read miss) */
    CU_ASSERT(warm_r.busy_us[TT_UNIT_MTE3] > 0);
    CU_ASSERT(cold_r.busy_us[TT_UNIT_MTE3] < 1.5 * warm_r.busy_us[TT_UNIT_MTE3]);
    tt_tmpl_free(t);
}

static const tt_test_case library_cases[] = {
    {"shapes", test_shapes},
    {"copy_variants", test_copy_variants},
    {"copy_variant_parse", test_copy_variant_parse},
    {"gemv_x_rows", test_gemv_x_rows},
    {"activation_tanh_form", test_activation_tanh_form},
    {"activation_relu", test_activation_relu},
    {"activation_emptied_l2", test_activation_emptied_l2},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"library", setup, teardown, library_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_model.c - the analytic cost model on hand-computed cases (a "hand" target with round
 * numbers derived from the shipped 910B2 file), overlap by stages, wave quantisation, L2
 * re-use, refusals identical to tt_space_check(), calibration and monotonic sanity, and
 * the MIX-kernel rules: the cross-core round trip, a workspace's L2 footprint that does not
 * grow with its ring depth, and chip bandwidth shared by demand.
 * Every time checked here is a prediction of the model, compared with its own equations.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "cube_ring.h"
#include "model.h"
#include "reuse.h"
#include "sim.h"
#include "space.h"
#include "target.h"
#include "tt_test.h"

static tt_targets *shipped;
static tt_target hand;     /* clock 1000 MHz, GM->UB 100 B/cycle + 50, exp 50 B/cycle + 20 */

static int setup(void)
{
    char *dir = tt_test_src("costmodel/targets");
    tt_errinfo e;
    tt_rc rc = tt_targets_load_dir(dir, &shipped, &e);
    free(dir);
    if (rc) { fprintf(stderr, "targets: %s\n", e.msg); return 1; }
    json_t *doc = json_deep_copy(tt_targets_find(shipped, "a2")->doc);
    json_object_set_new(doc, "clock_mhz", json_integer(1000));
    json_t *p = json_object_get(json_object_get(doc, "paths"), "GM->UB");
    json_object_set_new(p, "bytes_per_cycle", json_integer(100));
    json_object_set_new(p, "latency_cycles", json_integer(50));
    json_t *ex = json_object_get(json_object_get(doc, "vector"), "exp");
    json_object_set_new(ex, "bytes_per_cycle", json_pack("[i,i]", 50, 100));
    json_object_set_new(ex, "head_cycles", json_integer(20));
    json_t *ov = json_object_get(doc, "overheads");
    json_object_set_new(ov, "launch_us", json_integer(1));
    json_object_set_new(ov, "issue_cycles", json_integer(1));
    json_object_set_new(ov, "flag_cycles", json_integer(10));
    json_object_del(ov, "block_cycles");
    /* the cube's loads hit L2 at l2_gbps (no loaded rate): rates stay the path's */
    json_object_del(json_object_get(doc, "memory"), "l2_load_gbps");
    json_object_set_new(doc, "name", json_string("Hand"));
    rc = tt_target_from_json(doc, NULL, &hand, &e);
    json_decref(doc);
    if (rc) { fprintf(stderr, "hand target: %s: %s\n", e.path, e.msg); return 1; }
    return 0;
}

static int teardown(void)
{
    tt_target_close(&hand);
    tt_targets_free(shipped);
    return 0;
}

static tt_template *parse(const char *text)
{
    tt_template *t = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    if (tt_tmpl_parse_string(text, strlen(text), NULL, &t, &e))
        fprintf(stderr, "\ntemplate: %s: %s\n", e.path, e.msg);
    return t;
}

/* A shipped template by file name ("gemm.json"); NULL (and a message) when it fails. */
static tt_template *shipped_template(const char *file)
{
    char rel[96];
    snprintf(rel, sizeof rel, "templates/%s", file);
    char *path = tt_test_src(rel);
    tt_template *t = NULL;
    tt_errinfo e;
    if (tt_tmpl_parse_file(path, &t, &e)) fprintf(stderr, "\n%s: %s: %s\n", file, e.path, e.msg);
    free(path);
    return t;
}

static tt_template *gemm_template(void) { return shipped_template("gemm.json"); }

/* Evaluate one config given as "k=v,..." strings; returns the result's rc. */
static tt_rc predict(const tt_template *t, const tt_target *tg, const char *problem,
                     const char *config, const tt_calib *cal, tt_model_result *r)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    if (tt_tmpl_problem_parse(t, problem, slots, &e)) { fprintf(stderr, "\nproblem: %s\n", e.msg); return TT_EPROBLEM; }
    if (tt_tmpl_config_parse(t, config, slots, &e)) {
        /* off-domain values are the model's to refuse: set them by name */
        char buf[256];
        snprintf(buf, sizeof buf, "%s", config);
        for (char *kv = strtok(buf, ","); kv; kv = strtok(NULL, ",")) {
            char *eq = strchr(kv, '=');
            if (!eq) continue;
            *eq = 0;
            int s = tt_tmpl_slot_of(t, kv);
            if (s >= 0) slots[s] = atoll(eq + 1);
        }
    }
    tt_model *m = NULL;
    if (tt_model_new(t, tg, slots, cal, &m, &e)) { fprintf(stderr, "\nmodel: %s\n", e.msg); return TT_EINTERNAL; }
    tt_rc rc = tt_model_eval(m, slots, r);
    tt_model_free(m);
    return rc;
}

/* ---- 1. one transfer: latency + bytes / rate ------------------------------------------- */

static const char *one_copy =
    "{\"tiletune\":1,\"name\":\"one_copy\",\"inputs\":{\"N\":\"int\"},\"params\":{\"S\":[1]},"
    "\"tensors\":{\"X\":{\"shape\":[\"N\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"X_UB\":{\"scope\":\"UB\",\"shape\":[\"N\"],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"b\":1},\"cores\":\"vector\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_UB\"],\"along\":[\"b\"]}]}}";

static void test_single_copy(void)
{
    tt_template *t = parse(one_copy);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const struct {
        int64_t n;
        double cycles;   /* 50 + 2n / 100 */
    } cases[] = {{10000, 250}, {50000, 1050}, {90000, 1850}, {16, 50.32}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char pb[64];
        snprintf(pb, sizeof pb, "N=%lld", (long long)cases[i].n);
        tt_model_result r;
        CU_ASSERT_EQUAL_FATAL(predict(t, &hand, pb, "S=1", NULL, &r), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(r.time_us, 1.0 + cases[i].cycles / 1000.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(r.busy_us[TT_UNIT_MTE2], 2.0 * cases[i].n / 100 / 1000.0, 1e-9);
        CU_ASSERT_EQUAL(r.blocks, 1);
        CU_ASSERT_EQUAL(r.cores_used, 1);
        /* the launch (1 us) bounds the kernel while it is more than half of the time */
        CU_ASSERT_EQUAL(r.bound, cases[i].cycles < 1000 ? TT_BOUND_LAUNCH : TT_BOUND_MTE2);
        CU_ASSERT(r.util[TT_UNIT_MTE2] > 0 && r.util[TT_UNIT_MTE2] < 1);
    }
    /* a big transfer: the launch no longer dominates, MTE2 does */
    tt_model_result r;
    CU_ASSERT_EQUAL(predict(t, &hand, "N=90000", "S=1", NULL, &r), TT_OK);
    CU_ASSERT_EQUAL(r.bound, TT_BOUND_MTE2);
    tt_tmpl_free(t);
}

/* ---- 2. overlap: stages >= 2 runs at the slowest unit, stages = 1 sums the chain ------- */

static const char *two_stage =
    "{\"tiletune\":1,\"name\":\"two_stage\",\"inputs\":{\"T\":\"int\"},\"params\":{\"S\":[1,2]},"
    "\"tensors\":{\"X\":{\"shape\":[\"T*5000\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"A_UB\":{\"scope\":\"UB\",\"shape\":[5000],\"dtype\":\"float16\",\"copies\":\"S\"},"
    "\"B_UB\":{\"scope\":\"UB\",\"shape\":[5000],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"b\":1},\"cores\":\"vector\",\"body\":["
    "{\"for\":\"i\",\"trip\":\"T\",\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"gm:X\",\"A_UB\"],\"along\":[\"b\",\"i\"]},"
    "{\"vec\":\"exp\",\"out\":\"B_UB\",\"in\":[\"A_UB\"]}]}]}}";

static void test_overlap(void)
{
    tt_template *t = parse(two_stage);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* copy: 50 + 10000/100 = 150 cycles (occupancy 100); exp: 20 + 10000/50 = 220 */
    for (int n = 1; n <= 12; n += 11) {
        char pb[32];
        snprintf(pb, sizeof pb, "T=%d", n);
        tt_model_result r1, r2;
        CU_ASSERT_EQUAL_FATAL(predict(t, &hand, pb, "S=1", NULL, &r1), TT_OK);
        CU_ASSERT_EQUAL_FATAL(predict(t, &hand, pb, "S=2", NULL, &r2), TT_OK);
        double serial = n * (150.0 + 220.0);
        /* pipelined: (n-1) x (slowest unit + one flag hand-off) + one iteration's chain */
        double piped = (n - 1) * (220.0 + 10.0) + 370.0;
        CU_ASSERT_DOUBLE_EQUAL(r1.time_us, 1.0 + serial / 1000.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(r2.time_us, 1.0 + piped / 1000.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(r1.busy_us[TT_UNIT_V], n * 220.0 / 1000.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(r2.busy_us[TT_UNIT_V], n * 220.0 / 1000.0, 1e-9);
        if (n > 1) {
            CU_ASSERT(r2.time_us < r1.time_us);
            CU_ASSERT_EQUAL(r1.bound, TT_BOUND_V);
            CU_ASSERT_EQUAL(r2.bound, TT_BOUND_V);
        } else {
            CU_ASSERT_DOUBLE_EQUAL(r2.time_us, r1.time_us, 1e-12);
        }
    }
    tt_tmpl_free(t);
}

/* ---- 3. waves: 25 blocks on 24 cores take two waves ------------------------------------ */

static const char *blocks_tmpl =
    "{\"tiletune\":1,\"name\":\"blocks\",\"inputs\":{\"NB\":\"int\"},\"params\":{\"S\":[1]},"
    "\"tensors\":{\"X\":{\"shape\":[\"NB*1024\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"X_L1\":{\"scope\":\"L1\",\"shape\":[1024],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"b\":\"NB\"},\"cores\":\"cube\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_L1\"],\"along\":[\"b\"]}]}}";

static void test_waves(void)
{
    tt_template *t = parse(blocks_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_model_result r24, r25, r48, r12;
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "NB=24", "S=1", NULL, &r24), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "NB=25", "S=1", NULL, &r25), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "NB=48", "S=1", NULL, &r48), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "NB=12", "S=1", NULL, &r12), TT_OK);
    CU_ASSERT_EQUAL(hand.cube_cores, 24);
    CU_ASSERT_EQUAL(r25.blocks, 25);
    CU_ASSERT_EQUAL(r25.cores_used, 24);
    CU_ASSERT_EQUAL(r12.cores_used, 12);
    CU_ASSERT_DOUBLE_EQUAL(r25.waves, 25.0 / 24.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r24.waves, 1.0, 1e-12);
    double one = r24.time_us - hand.launch_us;
    CU_ASSERT(one > 0);
    CU_ASSERT_DOUBLE_EQUAL(r25.time_us - hand.launch_us, 2 * one, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r48.time_us, r25.time_us, 1e-9);   /* the tail wave is a full wave */
    CU_ASSERT_DOUBLE_EQUAL(r25.busy_us[TT_UNIT_MTE2], 2 * r24.busy_us[TT_UNIT_MTE2], 1e-12);
    tt_tmpl_free(t);
}

/* ---- 3b. persistent kernels: fill/drain once per core; swizzle: L2 re-use distance ------ */

static const char *persist_tmpl =
    "{\"tiletune\":1,\"name\":\"persist\",\"inputs\":{\"T\":\"int\",\"NB\":\"int\"},"
    "\"params\":{\"S\":[2],\"P\":{\"values\":[0,4],\"default\":0}},"
    "\"tensors\":{\"X\":{\"shape\":[\"NB*T*5000\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"A_UB\":{\"scope\":\"UB\",\"shape\":[5000],\"dtype\":\"float16\",\"copies\":\"S\"},"
    "\"B_UB\":{\"scope\":\"UB\",\"shape\":[5000],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"b\":\"NB\"},\"cores\":\"vector\",\"persistent\":\"P\",\"body\":["
    "{\"for\":\"i\",\"trip\":\"T\",\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"gm:X\",\"A_UB\"],\"along\":[\"b\",\"i\"]},"
    "{\"vec\":\"exp\",\"out\":\"B_UB\",\"in\":[\"A_UB\"]}]}]}}";

static void test_persistent(void)
{
    tt_template *t = parse(persist_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* one grid point: copy 150 cycles (occupancy 100), exp 220; T = 12 iterations at stages 2:
     * (12 - 1) x (220 + 10 flag) + 370 = 2900 cycles, of which the fill/drain is 2900 - 12 x
     * 230 = 140.  Launched as 4 blocks over 8 grid points, each block walks 2 points and
     * pays the fill once: 2900 + 2760 = 5660 cycles; as the grid (P = 0, the default), 4
     * points on 4 cores: 2900. */
    tt_model_result grid4, pers, grid8;
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "T=12,NB=4", "S=2", NULL, &grid4), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "T=12,NB=8", "S=2,P=4", NULL, &pers), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "T=12,NB=8", "S=2,P=0", NULL, &grid8), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(grid4.time_us, hand.launch_us + 2.900, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(pers.time_us, hand.launch_us + 5.660, 1e-9);
    CU_ASSERT_EQUAL(pers.cores_used, 4);
    CU_ASSERT_DOUBLE_EQUAL(pers.waves, 2.0 / 24.0 * 4.0, 1e-12);   /* 4 blocks x 2 points */
    CU_ASSERT_EQUAL(grid8.cores_used, 8);                          /* P = 0: the grid */
    CU_ASSERT_DOUBLE_EQUAL(grid8.time_us, hand.launch_us + 2.900, 1e-9);
    tt_tmpl_free(t);
}

/* Model and simulator time of one config (the simulator is the reference here). */
static void model_and_sim(const tt_template *t, const tt_target *tg, const char *problem,
                          const char *config, double *model_us, double *sim_us)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    tt_model_result r;
    tt_sim_result s;
    *model_us = *sim_us = -1;
    CU_ASSERT_EQUAL_FATAL(predict(t, tg, problem, config, NULL, &r), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, problem, slots, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, config, slots, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(t, tg, slots, NULL, &s), TT_OK);
    *model_us = r.time_us;
    *sim_us = s.time_us;
    tt_sim_result_close(&s);
}

/* Issue #10: a persistent GEMM whose K loop runs once per tile (K_L1 = K).  Its walk still
 * pipelines across tiles (double-buffered L1/L0: tile j+1's loads run under tile j's mma),
 * as the simulator runs it; the model once charged every tile its whole chain (the fill of
 * a one-iteration loop counted as steady time) and was 35-55 % above the simulator. */
static void test_persistent_single_k(void)
{
    tt_template *t = gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    static const char *const cases[][2] = {
        {"M=4096,N=4096,K=256,dtype=float16,out_dtype=float16",
         "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2,core_num=20"},
        {"M=2048,N=4096,K=512,dtype=float16,out_dtype=float16",
         "block_M=64,block_N=128,block_K=64,K_L1=512,S1=2,S2=2,core_num=24"},
        {"M=4096,N=4096,K=1024,dtype=float16,out_dtype=float16",
         "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2,core_num=20"},   /* control */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double mu, su;
        model_and_sim(t, a3, cases[i][0], cases[i][1], &mu, &su);
        int ok = su > 0 && fabs(mu / su - 1) < 0.10;
        if (!ok) fprintf(stderr, "\n  %s %s: model %.2f us, sim %.2f us", cases[i][0], cases[i][1], mu, su);
        CU_ASSERT(ok);
    }
    tt_tmpl_free(t);
}

/* The last step of a persistent walk (or a tail wave) runs on the cores that still have
 * work, and they share the chip bandwidth among themselves.  M = 20 weight streaming on
 * 910B3 (HBM bound): 20 output tiles on 20 cores vs 24 (4 cores walk a second tile).
 * Before the rule the 4 extra tiles doubled the model's time (148.7 -> 302.6 us) while the
 * simulator, which runs every core, adds 39 % (160.9 -> 223.4 us). */
static void test_tail_step_share(void)
{
    tt_template *t = gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *b3 = tt_targets_find(shipped, "Ascend910B3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b3);
    const char *cf = "block_M=32,block_N=256,block_K=64,K_L1=256,S1=2,S2=2,core_num=20";
    double m20, s20, m24, s24;
    model_and_sim(t, b3, "M=20,N=5120,K=16384,dtype=float16,out_dtype=float16", cf, &m20, &s20);
    model_and_sim(t, b3, "M=20,N=6144,K=16384,dtype=float16,out_dtype=float16", cf, &m24, &s24);
    CU_ASSERT(m24 / m20 < 1.6);
    int ok = s24 > 0 && fabs(m24 / s24 - 1) < 0.15;
    if (!ok) fprintf(stderr, "\n  tail step: model %.2f us, sim %.2f us", m24, s24);
    CU_ASSERT(ok);
    tt_tmpl_free(t);
}

/* grouped_gemm with core_num > 0 is a persistent walk of its (group, m-block, n-block)
 * tiles, as CATLASS 08_grouped_matmul runs one block per cube core: on the autotune shape
 * (8 groups, 1024 rows, N 768, K 512, 910B4) with 64 x 64 tiles (228 tiles) the walk pays
 * block_cycles and the fill once per core, not once per tile: faster than the grid launch,
 * and within 10 % of the simulator. */
static void test_grouped_walk(void)
{
    tt_template *t = shipped_template("grouped_gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *b4 = tt_targets_find(shipped, "Ascend910B4");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b4);
    const char *pb = "batch_count=8,batch_sum=1024,K=512,N=768,balanced=0";
    double mw, sw, mg, sg;
    model_and_sim(t, b4, pb, "block_M=64,block_N=64,block_K=128,K_L1=256,core_num=20", &mw, &sw);
    model_and_sim(t, b4, pb, "block_M=64,block_N=64,block_K=128,K_L1=256,core_num=0", &mg, &sg);
    CU_ASSERT(mw > 0 && mw < 0.8 * mg);
    CU_ASSERT(sw > 0 && sw < 0.8 * sg);
    int ok = sw > 0 && fabs(mw / sw - 1) < 0.10;
    if (!ok) fprintf(stderr, "\n  grouped walk: model %.2f us, sim %.2f us", mw, sw);
    CU_ASSERT(ok);
    tt_tmpl_free(t);
}

/* An int8 B operand reaches L0B through a transposing load that does not overlap the MMAD
 * (cube_ring.h): the L0B ring of 1-byte elements acts as one slot, in the model and the
 * simulator alike.  CATLASS 12_quant_matmul's tiling on 910B3 (M = 128, N = 256, K = 16384,
 * published 78.5 us): with two L0 slots that overlap, model 55.5 / sim 53.0 us (S2 = 1:
 * 76.1 / 80.1); now S2 = 2 is within 15 % of S2 = 1.  fp16 GEMM keeps its L0 overlap. */
static void test_int8_l0b_ring(void)
{
    CU_ASSERT_EQUAL(tt__ring_slots(TT_SCOPE_L0B, 1, 2), 1);
    CU_ASSERT_EQUAL(tt__ring_slots(TT_SCOPE_L0B, 2, 2), 2);
    CU_ASSERT_EQUAL(tt__ring_slots(TT_SCOPE_L0A, 1, 2), 2);
    tt_template *t = shipped_template("quant_matmul.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *b3 = tt_targets_find(shipped, "Ascend910B3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b3);
    const char *pb = "M=128,N=256,K=16384,in_dtype=int8,out_dtype=bfloat16";
    double m2, s2, m1, s1;
    model_and_sim(t, b3, pb, "block_M=128,block_N=256,block_K=128,K_L1=512,S1=2,S2=2,split_k=1", &m2, &s2);
    model_and_sim(t, b3, pb, "block_M=128,block_N=256,block_K=128,K_L1=512,S1=2,S2=1,split_k=1", &m1, &s1);
    CU_ASSERT(m2 > 0.85 * m1 && m2 <= m1 * 1.001);
    CU_ASSERT(s2 > 0.85 * s1 && s2 <= s1 * 1.001);
    tt_tmpl_free(t);
    tt_template *g = gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const char *pg = "M=128,N=256,K=16384,dtype=float16,out_dtype=float16";
    model_and_sim(g, b3, pg, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", &m2, &s2);
    model_and_sim(g, b3, pg, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=1", &m1, &s1);
    CU_ASSERT(m2 < 0.85 * m1);
    CU_ASSERT(s2 < 0.85 * s1);
    tt_tmpl_free(g);
}

static void test_swizzle(void)
{
    /* GEMM grid (bx = M tiles, by = N tiles), by fastest: B's tile (independent of bx) is
     * re-read m rows later, every n_num blocks; A's (independent of by) by the next block.
     * With panels of w rows (bx fastest inside): B's after 1 block, A's after min(w, m). */
    int64_t g2[2] = {4, 32}, g3[3] = {8, 4, 32};
    CU_ASSERT_DOUBLE_EQUAL(tt__reuse_distance(2, g2, 0, 1), 32, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt__reuse_distance(2, g2, 1, 1), 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt__reuse_distance(2, g2, 0, 2), 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt__reuse_distance(2, g2, 1, 2), 2, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt__reuse_distance(2, g2, 1, 8), 4, 0);     /* capped by m */
    CU_ASSERT_DOUBLE_EQUAL(tt__reuse_distance(3, g3, 0, 1), 128, 0);   /* batch: unchanged */
    CU_ASSERT_DOUBLE_EQUAL(tt__reuse_distance(3, g3, 0, 4), 128, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt__reuse_distance(3, g3, 1, 4), 1, 0);
    /* a wide GEMM (n_num = 64 > 24 cores): B's re-reads come closer, the L2 hit rate rises
     * and the time does not grow */
    tt_template *t = gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    const char *pb = "M=16384,N=16384,K=4096,dtype=float16,out_dtype=float16";
    tt_model_result r1, r4;
    CU_ASSERT_EQUAL_FATAL(predict(t, a3, pb, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2",
                                  NULL, &r1), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, a3, pb, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2,swizzle=4",
                                  NULL, &r4), TT_OK);
    CU_ASSERT(r4.l2_hit > r1.l2_hit);
    CU_ASSERT(r4.time_us <= r1.time_us);
    tt_tmpl_free(t);
}

/* ---- 3c. error band: the family's published residual range, or the calibration's ------- */

static void test_band(void)
{
    tt_template *t = gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    const char *pb = "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16";
    const char *cfg = "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2";
    tt_model_result r;
    CU_ASSERT_EQUAL_FATAL(predict(t, a3, pb, cfg, NULL, &r), TT_OK);
    double lo, hi;
    CU_ASSERT_EQUAL(tt_band_get("gemm", NULL, &lo, &hi), 1);
    CU_ASSERT_DOUBLE_EQUAL(lo, 0.717, 1e-12);             /* band.c's gemm row */
    CU_ASSERT_DOUBLE_EQUAL(hi, 2.207, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.low_us, r.time_us * 0.717, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.high_us, r.time_us * 2.207, 1e-9);
    /* a family without published points gets the pooled range */
    CU_ASSERT_EQUAL(tt_band_get("rms_norm", NULL, &lo, &hi), 0);
    CU_ASSERT(lo <= 0.717 && hi >= 2.207);
    /* a calibration fitted on >= 4 measurements sets the band: exp(-/+ 2 rmse_log) */
    tt_calib c;
    tt_calib_identity(&c);
    c.n = 4;
    c.rmse_log = 0.1;
    tt_model_result rc;
    CU_ASSERT_EQUAL_FATAL(predict(t, a3, pb, cfg, &c, &rc), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(rc.time_us, r.time_us, 1e-9);  /* identity fit: same time */
    CU_ASSERT_DOUBLE_EQUAL(rc.low_us, r.time_us * exp(-0.2), 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(rc.high_us, r.time_us * exp(0.2), 1e-9);
    c.n = 3;                                              /* too few: the table again */
    CU_ASSERT_EQUAL_FATAL(predict(t, a3, pb, cfg, &c, &rc), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(rc.high_us, r.time_us * 2.207, 1e-9);
    tt_tmpl_free(t);
}

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
    tt_template *t = gemm_template();
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
        tt_rc rc = predict(t, a3, problem, cases[i].config, NULL, &r);
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
    tt_template *t = parse(tables_tmpl);
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

/* ---- 5. L2 re-use: a tile re-read by other blocks lowers HBM traffic ------------------- */

static const char *reuse_tmpl =
    "{\"tiletune\":1,\"name\":\"reuse\",\"inputs\":{\"NBX\":\"int\",\"NBY\":\"int\"},\"params\":{\"S\":[1]},"
    "\"tensors\":{\"X\":{\"shape\":[\"NBX*65536\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"X_L1\":{\"scope\":\"L1\",\"shape\":[65536],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"bx\":\"NBX\",\"by\":\"NBY\"},\"cores\":\"cube\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_L1\"],\"along\":[\"bx\"]}]}}";

static void test_l2_reuse(void)
{
    tt_template *t = parse(reuse_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    tt_model_result none, some, more;
    /* 2400 tile reads each time (300 MiB read); 2400, 300 and 100 distinct tiles */
    CU_ASSERT_EQUAL_FATAL(predict(t, a2, "NBX=2400,NBY=1", "S=1", NULL, &none), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, a2, "NBX=300,NBY=8", "S=1", NULL, &some), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, a2, "NBX=100,NBY=24", "S=1", NULL, &more), TT_OK);
    CU_ASSERT(some.gm_bytes < none.gm_bytes);
    CU_ASSERT(more.gm_bytes < some.gm_bytes);
    CU_ASSERT(some.l2_hit > none.l2_hit);
    CU_ASSERT(more.l2_hit >= some.l2_hit);
    CU_ASSERT(some.time_us < none.time_us);
    /* no re-use and a footprint far beyond L2: nearly every byte comes from HBM */
    CU_ASSERT(none.l2_hit < 0.05);
    CU_ASSERT(none.gm_bytes > 0.9 * 2400.0 * 131072);
    CU_ASSERT(none.bound == TT_BOUND_HBM || none.bound == TT_BOUND_L2);
    tt_tmpl_free(t);
}

/* ---- 6. GEMM sanity: more K is more time, flops are 2MNK, calibration applies ---------- */

static void test_gemm_sanity(void)
{
    tt_template *t = gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    const char *cfg = "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2";
    double prev = 0;
    for (int k = 1024; k <= 16384; k *= 2) {
        char pb[128];
        snprintf(pb, sizeof pb, "M=4096,N=4096,K=%d,dtype=float16,out_dtype=float16", k);
        tt_model_result r;
        CU_ASSERT_EQUAL_FATAL(predict(t, a3, pb, cfg, NULL, &r), TT_OK);
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
    CU_ASSERT_EQUAL(predict(t, a3, pb, cfg, NULL, &a), TT_OK);
    tt_calib cal;
    tt_calib_identity(&cal);
    cal.n = 2;
    cal.log_a = log(2.0);
    CU_ASSERT_EQUAL(predict(t, a3, pb, cfg, &cal, &b), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(b.time_us, 2 * a.time_us, 1e-9 * a.time_us);
    tt_calib_identity(&cal);
    cal.unit_scale[TT_UNIT_M] = 2;
    CU_ASSERT_EQUAL(predict(t, a3, pb, cfg, &cal, &c), TT_OK);
    CU_ASSERT(c.time_us > 1.3 * a.time_us);
    CU_ASSERT_DOUBLE_EQUAL(c.busy_us[TT_UNIT_M], 2 * a.busy_us[TT_UNIT_M], 1e-9 * a.time_us);
    /* a target with fewer cores (20) is slower on the same problem */
    CU_ASSERT_EQUAL(predict(t, tt_targets_find(shipped, "Ascend910_9362"), pb, cfg, NULL, &d), TT_OK);
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

    tt_template *t = parse("{\"tiletune\":1,\"name\":\"nokernel\",\"inputs\":{\"N\":\"int\"},"
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


/* ---- 8. the representative block: block indices at the middle of the grid -------------- */

static const char *tri_tmpl =
    "{\"tiletune\":1,\"name\":\"tri\",\"inputs\":{\"NB\":\"int\"},\"params\":{\"S\":[1]},"
    "\"tensors\":{\"X\":{\"shape\":[\"NB*NB*5000\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"X_UB\":{\"scope\":\"UB\",\"shape\":[5000],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"b\":\"NB\"},\"cores\":\"vector\",\"body\":["
    "{\"for\":\"i\",\"trip\":\"b + 1\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_UB\"],\"along\":[\"b\",\"i\"]}]}]}}";

static void test_representative_block(void)
{
    tt_template *t = parse(tri_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* copy: 50 + 10000/100 = 150 cycles per iteration; trip = middle block index + 1 */
    static const struct {
        int nb, trip;
    } cases[] = {{1, 1}, {2, 1}, {3, 2}, {9, 5}, {10, 5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char pb[32];
        snprintf(pb, sizeof pb, "NB=%d", cases[i].nb);
        tt_model_result r;
        CU_ASSERT_EQUAL_FATAL(predict(t, &hand, pb, "S=1", NULL, &r), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(r.time_us, 1.0 + cases[i].trip * 150 / 1000.0, 1e-9);
    }
    tt_tmpl_free(t);
}

/* ---- 9. a MIX kernel: causal attention does about half the work ----------------------- */

static double best_of_space(const tt_template *t, const tt_target *tg, const char *problem,
                            tt_model_result *best)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, problem, slots, &e), TT_OK);
    tt_caps caps;
    tt_target_caps(tg, &caps);
    tt_space *sp = NULL;
    tt_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, slots, &caps, &sp, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_model_new(t, tg, slots, NULL, &m, &e), TT_OK);
    double bt = 0;
    for (uint64_t i = 0; i < tt_space_total(sp); i++) {
        tt_space_decode(sp, i, slots);
        tt_model_result r;
        if (tt_model_eval(m, slots, &r) != TT_OK) continue;
        if (bt == 0 || r.time_us < bt) { bt = r.time_us; *best = r; }
    }
    tt_model_free(m);
    tt_space_free(sp);
    return bt;
}

static void test_mix_causal(void)
{
    tt_template *t = shipped_template("flash_attn_fwd.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    tt_model_result full, causal;
    double tf = best_of_space(t, a3, "B=1,H=8,H_kv=8,S_q=4096,S_kv=4096,D=128,causal=0,dtype=float16", &full);
    double tc = best_of_space(t, a3, "B=1,H=8,H_kv=8,S_q=4096,S_kv=4096,D=128,causal=1,dtype=float16", &causal);
    CU_ASSERT(tf > 0 && tc > 0);
    CU_ASSERT(tc < 0.75 * tf);
    CU_ASSERT(tc > 0.35 * tf);
    CU_ASSERT(tf > a3->launch_us + a3->mix_launch_extra_us);
    CU_ASSERT(full.busy_us[TT_UNIT_M] > 0 && full.busy_us[TT_UNIT_V] > 0);
    /* the useful work: 4 B H S_q S_kv D flops (two GEMMs) */
    CU_ASSERT_DOUBLE_EQUAL(full.flops, 4.0 * 8 * 4096.0 * 4096 * 128, 0.01 * full.flops);
    tt_tmpl_free(t);
}

/* GQA: K/V of flash_attn_fwd are read `along` bh // group: the query heads of a group share
 * one K/V tile, so group = 8 sends ~8x fewer bytes to HBM than group = 1 (K/V dominate at
 * S_q = 128, S_kv = 8192) and the kernel is faster. */
static void test_gqa_along_map(void)
{
    tt_template *t = shipped_template("flash_attn_fwd.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    const char *cfg = "block_M=128,block_N=128,stages=2";
    tt_model_result r1, r8;
    CU_ASSERT_EQUAL_FATAL(predict(t, a3, "B=4,H=32,H_kv=32,S_q=128,S_kv=8192,D=128", cfg, NULL, &r1), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, a3, "B=4,H=32,H_kv=4,S_q=128,S_kv=8192,D=128", cfg, NULL, &r8), TT_OK);
    double ratio = r1.gm_bytes / r8.gm_bytes;
    fprintf(stderr, "[model gqa: HBM %.0f / %.0f bytes = %.2fx, l2_hit %.3f / %.3f, %.1f / %.1f us] ",
            r1.gm_bytes, r8.gm_bytes, ratio, r1.l2_hit, r8.l2_hit, r1.time_us, r8.time_us);
    CU_ASSERT(ratio > 6 && ratio < 12);
    CU_ASSERT(r8.l2_hit > r1.l2_hit);
    CU_ASSERT(r8.time_us < r1.time_us);
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
    tt_template *t = gemm_template();
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

/* ---- 11. MIX loops: the round trip through the cross-core hand-offs (section 2) -------- */

/* One iteration: cube copy (L1->L0A, 2 + 25600/256 = 102 cycles), hand-off (900), vector
 * exp (20 + 10000/50 = 220), hand-off, cube copy (102), hand-off, vector exp (220). */
#define XCHAIN_DOC(PARAMS, EVERY)                                                              \
    "{\"tiletune\":1,\"name\":\"xchain\",\"inputs\":{\"T\":\"int\"},\"params\":" PARAMS ","   \
    "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[12800],\"dtype\":\"float16\"},"        \
    "\"A_L0\":{\"scope\":\"L0A\",\"shape\":[12800],\"dtype\":\"float16\"},"                      \
    "\"B_UB\":{\"scope\":\"UB\",\"shape\":[5000],\"dtype\":\"float16\"}},"                       \
    "\"kernel\":{\"grid\":{\"b\":1},\"cores\":\"mix\",\"body\":["                               \
    "{\"for\":\"i\",\"trip\":\"T\",\"stages\":\"S\",\"body\":["                               \
    "{\"copy\":[\"A_L1\",\"A_L0\"]},"                                                           \
    "{\"sync\":\"cross\",\"from\":\"cube\",\"to\":\"vector\",\"flag\":0" EVERY "},"            \
    "{\"vec\":\"exp\",\"out\":\"B_UB\",\"in\":[\"B_UB\"]},"                                    \
    "{\"sync\":\"cross\",\"from\":\"vector\",\"to\":\"cube\",\"flag\":1" EVERY "},"            \
    "{\"copy\":[\"A_L1\",\"A_L0\"]},"                                                           \
    "{\"sync\":\"cross\",\"from\":\"cube\",\"to\":\"vector\",\"flag\":2" EVERY "},"            \
    "{\"vec\":\"exp\",\"out\":\"B_UB\",\"in\":[\"B_UB\"]}]}]}}"
static const char *xchain_tmpl = XCHAIN_DOC("{\"S\":[1,2,4,8]}", "");

/* T = 10 iterations at stages S: launch + (9 periods + one chain C) on the hand target. */
static tt_model_result mix_predict(const tt_template *t, int s, double period, double C)
{
    char cfg[16];
    snprintf(cfg, sizeof cfg, "S=%d", s);
    tt_model_result r;
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "T=10", cfg, NULL, &r), TT_OK);
    double fixed = hand.launch_us + hand.mix_launch_extra_us;
    CU_ASSERT_DOUBLE_EQUAL(r.time_us, fixed + (9 * period + C) / 1000.0, 1e-9);
    return r;
}

static void test_mix_round_trip(void)
{
    tt_template *t = parse(xchain_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_DOUBLE_EQUAL(hand.cross_sync_cycles, 900, 1e-12);
    double C = 102 + 900 + 220 + 900 + 102 + 900 + 220;   /* one iteration's full chain */
    /* round trips: the cube's, from its first op to its last (102 + 900 + 220 + 900 + 102),
     * and the vector's, from its first op to its last (220 + 900 + 102 + 900 + 220) */
    const double R = 220 + 900 + 102 + 900 + 220;
    double own = 440;   /* the vector side's own work per iteration (the cube's is 204) */
    const struct {
        int s;
        double period;
    } cases[] = {
        {1, R},              /* stages 1: the round trip, not the full chain (3344) */
        {2, R / 2},          /* the round trip over 2 slots */
        {4, R / 4},
        {8, 440},            /* a side's own work bounds it */
    };
    double fixed = hand.launch_us + hand.mix_launch_extra_us;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_model_result r = mix_predict(t, cases[i].s, cases[i].period, C);
        if (cases[i].s == 2) CU_ASSERT_EQUAL(r.bound, TT_BOUND_SYNC);
        CU_ASSERT_DOUBLE_EQUAL(r.busy_us[TT_UNIT_V], 10 * own / 1000.0, 1e-9);
    }
    /* a single iteration is one chain whatever the stages */
    tt_model_result a, b;
    CU_ASSERT_EQUAL(predict(t, &hand, "T=1", "S=1", NULL, &a), TT_OK);
    CU_ASSERT_EQUAL(predict(t, &hand, "T=1", "S=4", NULL, &b), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(a.time_us, fixed + C / 1000.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b.time_us, a.time_us, 1e-12);
    tt_tmpl_free(t);
}

/* ---- 11b. a vector kernel launched as a MIX task pays the MIX launch extra ------------- */

static void test_launch_mix(void)
{
    /* one_copy with "launch": "mix" (TileLang-Ascend launches every kernel as MIX_AIC_1_2) */
    char text[1024];
    const char *at = strstr(one_copy, "\"cores\":\"vector\",");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    snprintf(text, sizeof text, "%.*s\"cores\":\"vector\",\"launch\":\"mix\",%s", (int)(at - one_copy),
             one_copy, at + strlen("\"cores\":\"vector\","));
    tt_template *plain = parse(one_copy), *mix = parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mix);
    CU_ASSERT_FALSE(plain->kernel->launch_mix);
    CU_ASSERT_TRUE(mix->kernel->launch_mix);
    tt_model_result a, b;
    CU_ASSERT_EQUAL_FATAL(predict(plain, &hand, "N=10000", "S=1", NULL, &a), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(mix, &hand, "N=10000", "S=1", NULL, &b), TT_OK);
    CU_ASSERT(hand.mix_launch_extra_us > 0);
    CU_ASSERT_DOUBLE_EQUAL(b.time_us - a.time_us, hand.mix_launch_extra_us, 1e-9);
    /* the simulator charges the same */
    int64_t slots[TT_MAX_SLOTS] = {10000, 1};
    tt_sim_result sa, sb;
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(plain, &hand, slots, NULL, &sa), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(mix, &hand, slots, NULL, &sb), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(sb.time_us - sa.time_us, hand.mix_launch_extra_us, 1e-9);
    tt_sim_result_close(&sa);
    tt_sim_result_close(&sb);
    /* an expression of the problem inputs: MIX where non-zero (a toolchain that builds the
     * same program AIV-only, e.g. Triton-Ascend's mix_mode "aiv", does not pay the extra) */
    snprintf(text, sizeof text, "%.*s\"cores\":\"vector\",\"launch\":\"N > 5000\",%s", (int)(at - one_copy),
             one_copy, at + strlen("\"cores\":\"vector\","));
    tt_template *byx = parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(byx);
    int64_t big[TT_MAX_SLOTS] = {10000, 1}, small[TT_MAX_SLOTS] = {100, 1};
    CU_ASSERT_TRUE(tt_kernel_launch_mix(byx->kernel, big));
    CU_ASSERT_FALSE(tt_kernel_launch_mix(byx->kernel, small));
    tt_model_result c, d, f;
    CU_ASSERT_EQUAL_FATAL(predict(byx, &hand, "N=10000", "S=1", NULL, &c), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(c.time_us, b.time_us, 1e-9);
    CU_ASSERT_EQUAL_FATAL(predict(byx, &hand, "N=100", "S=1", NULL, &d), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(plain, &hand, "N=100", "S=1", NULL, &f), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(d.time_us, f.time_us, 1e-9);
    tt_sim_result sc, sd;
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(byx, &hand, big, NULL, &sc), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(sc.time_us, sb.time_us, 1e-9);
    int64_t small2[TT_MAX_SLOTS] = {100, 1}, small3[TT_MAX_SLOTS] = {100, 1};
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(byx, &hand, small2, NULL, &sd), TT_OK);
    tt_sim_result se;
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(plain, &hand, small3, NULL, &se), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(sd.time_us, se.time_us, 1e-9);
    tt_sim_result_close(&sc);
    tt_sim_result_close(&sd);
    tt_sim_result_close(&se);
    tt_tmpl_free(byx);
    /* an unknown name, or a name that is not a problem input, is refused */
    static const char *const refused[] = {"aiv", "S"};
    for (size_t i = 0; i < 2; i++) {
        tt_template *bad = NULL;
        tt_errinfo e;
        snprintf(text, sizeof text, "%.*s\"cores\":\"vector\",\"launch\":\"%s\",%s", (int)(at - one_copy),
                 one_copy, refused[i], at + strlen("\"cores\":\"vector\","));
        CU_ASSERT_NOT_EQUAL(tt_tmpl_parse_string(text, strlen(text), NULL, &bad, &e), TT_OK);
        CU_ASSERT_STRING_EQUAL(e.path, "kernel.launch");
        CU_ASSERT_PTR_NULL(bad);
        tt_tmpl_free(bad);
    }
    tt_tmpl_free(plain);
    tt_tmpl_free(mix);
}

/* ---- 11c. scalar picks: a T.serial loop of single-element UB reads -------------------------
 * Each `scalar` op costs the class's head per element (the scalar unit waits out the vector
 * pipe), so R more picks cost R x (head + issue + 2 B / rate) cycles, in model and simulator;
 * a "gather" of one element (a vector instruction) is cheaper per element on the shipped A2. */
#define PICK_DOC(OP)                                                                             \
    "{\"tiletune\":1,\"name\":\"pick\",\"inputs\":{\"N\":\"int\",\"R\":\"int\"},\"params\":{\"S\":[1]}," \
    "\"tensors\":{\"X\":{\"shape\":[\"N\"],\"dtype\":\"float16\"}},"                               \
    "\"buffers\":{\"X_UB\":{\"scope\":\"UB\",\"shape\":[\"N\"],\"dtype\":\"float16\"}},"            \
    "\"kernel\":{\"grid\":{\"b\":1},\"cores\":\"vector\",\"body\":["                                 \
    "{\"copy\":[\"gm:X\",\"X_UB\"],\"along\":[\"b\"]},"                                               \
    "{\"for\":\"r\",\"trip\":\"R\",\"body\":[{\"vec\":\"" OP "\",\"out\":\"X_UB\",\"in\":[\"X_UB\"],\"elems\":\"1\"}]}]}}"

static void test_scalar_pick(void)
{
    tt_template *sc = parse(PICK_DOC("scalar")), *ga = parse(PICK_DOC("gather"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ga);
    double head = hand.vec_head_cycles[TT_V_SCALAR];
    CU_ASSERT(head > hand.vec_head_cycles[TT_V_GATHER]);
    tt_model_result a, b;
    CU_ASSERT_EQUAL_FATAL(predict(sc, &hand, "N=1024,R=32", "S=1", NULL, &a), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(sc, &hand, "N=1024,R=96", "S=1", NULL, &b), TT_OK);
    /* hand runs at 1000 MHz: 1 us = 1000 cycles; 64 more picks */
    double per = (b.time_us - a.time_us) * 1000.0 / 64;
    CU_ASSERT(per >= head && per <= head + hand.issue_cycles + 2.0);
    int64_t s32[TT_MAX_SLOTS] = {1024, 32, 1}, s96[TT_MAX_SLOTS] = {1024, 96, 1};
    tt_sim_result sa, sb;
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(sc, &hand, s32, NULL, &sa), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(sc, &hand, s96, NULL, &sb), TT_OK);
    double sper = (sb.time_us - sa.time_us) * 1000.0 / 64;
    CU_ASSERT(sper >= head && sper <= head + hand.issue_cycles + 2.0);
    tt_sim_result_close(&sa);
    tt_sim_result_close(&sb);
    /* the same loop of one-element gathers is cheaper */
    tt_model_result g;
    CU_ASSERT_EQUAL_FATAL(predict(ga, &hand, "N=1024,R=96", "S=1", NULL, &g), TT_OK);
    CU_ASSERT(g.time_us < b.time_us);
    tt_tmpl_free(sc);
    tt_tmpl_free(ga);
}

/* Batched hand-offs (sync "every": E, TileLang's cross_interval): each flag costs 900 / E on
 * one iteration's chain, and the ring of S slots holds S / E batches, so the round trip bounds
 * the period by R / (S / E).  S = 4, E = 2: R = 220 + 450 + 102 + 450 + 220 = 1442, period
 * max(V 440, 1442 / 2 = 721) = 721 (sync); S = 8, E = 2: 1442 / 4 < 440, period 440 (V). */
static const char *xevery_tmpl = XCHAIN_DOC("{\"S\":[4,8],\"E\":[1,2]}", ",\"every\":\"E\"");

static void test_mix_every(void)
{
    tt_template *t = parse(xevery_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    double fixed = hand.launch_us + hand.mix_launch_extra_us;
    const double C = 102 + 450 + 220 + 450 + 102 + 450 + 220;
    tt_model_result r;
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "T=10", "S=4,E=2", NULL, &r), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(r.time_us, fixed + (9 * 721.0 + C) / 1000.0, 1e-9);
    CU_ASSERT_EQUAL(r.bound, TT_BOUND_SYNC);
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "T=10", "S=8,E=2", NULL, &r), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(r.time_us, fixed + (9 * 440.0 + C) / 1000.0, 1e-9);
    /* E = 1 is the plain hand-off of mix_round_trip: 2342 / 4 */
    CU_ASSERT_EQUAL_FATAL(predict(t, &hand, "T=10", "S=4,E=1", NULL, &r), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(r.time_us, fixed + (9 * 2342.0 / 4 + 3344) / 1000.0, 1e-9);
    tt_tmpl_free(t);
}

/* ---- 11c. MIX loops: a modulo-scheduling bound, not a side's chain (section 2) --------- */

/* One iteration: cube copy L1->L0A (MTE1: 2 + 32768/256 = 130 cycles) into a double-buffered
 * L0A, mma 128x128x128 (M: 6 + 8 * 8 * 8 = 518), hand-off (900), vector exp (220).  The cube's
 * part is a chain of 648 cycles, but MTE1 and M overlap across iterations: with stages >= 2
 * the period is the busiest unit (M, 518) plus the flag hand-off of the A_L0 ring (10), not
 * 648.  Latency counts only on true cycles: the A_L0 ring (copy -> mma, 648 over 2 slots)
 * and the round trip (648 over stages). */
static const char *xmod_tmpl =
    "{\"tiletune\":1,\"name\":\"xmod\",\"inputs\":{\"T\":\"int\"},\"params\":{\"S\":[1,2,4]},"
    "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[128,128],\"dtype\":\"float16\"},"
    "\"A_L0\":{\"scope\":\"L0A\",\"shape\":[128,128],\"dtype\":\"float16\",\"copies\":2},"
    "\"B_L0\":{\"scope\":\"L0B\",\"shape\":[128,128],\"dtype\":\"float16\"},"
    "\"C_L0\":{\"scope\":\"L0C\",\"shape\":[128,128],\"dtype\":\"float32\"},"
    "\"B_UB\":{\"scope\":\"UB\",\"shape\":[5000],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"b\":1},\"cores\":\"mix\",\"body\":["
    "{\"for\":\"i\",\"trip\":\"T\",\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"A_L1\",\"A_L0\"]},"
    "{\"mma\":[\"A_L0\",\"B_L0\",\"C_L0\"]},"
    "{\"sync\":\"cross\",\"from\":\"cube\",\"to\":\"vector\",\"flag\":0},"
    "{\"vec\":\"exp\",\"out\":\"B_UB\",\"in\":[\"B_UB\"]}]}]}}";

static void test_mix_modulo(void)
{
    tt_template *t = parse(xmod_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const double C = 130 + 518 + 900 + 220, R = 130 + 518;
    const struct {
        int s;
        double period;
        tt_bound bound;
    } cases[] = {
        {1, R, TT_BOUND_LATENCY},   /* no overlap across iterations: the round trip */
        {2, 518 + 10, TT_BOUND_M},  /* max(M 518 + flag, ring 648 / 2, round trip 648 / 2) */
        {4, 518 + 10, TT_BOUND_M},  /* before: the cube's chain, 648 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_model_result r = mix_predict(t, cases[i].s, cases[i].period, C);
        if (cases[i].s > 1) CU_ASSERT_EQUAL(r.bound, cases[i].bound);
    }
    tt_tmpl_free(t);
}

/* ---- 12. a workspace keeps one slot per block in flight in L2, whatever its ring depth -- */

static const char *ws_tmpl =
    "{\"tiletune\":1,\"name\":\"ws_ring\",\"inputs\":{\"NB\":\"int\",\"D\":\"int\"},\"params\":{\"S\":[1,2]},"
    "\"tensors\":{\"X\":{\"shape\":[\"NB\",16,16384],\"dtype\":\"float16\"},"
    "\"W\":{\"shape\":[\"NB\",\"D\",16384],\"dtype\":\"float32\",\"workspace\":true}},"
    "\"buffers\":{\"X_L1\":{\"scope\":\"L1\",\"shape\":[16384],\"dtype\":\"float16\",\"copies\":\"S\"},"
    "\"C_L0\":{\"scope\":\"L0C\",\"shape\":[16384],\"dtype\":\"float32\"},"
    "\"W_UB\":{\"scope\":\"UB\",\"shape\":[16384],\"dtype\":\"float32\"}},"
    "\"kernel\":{\"grid\":{\"b\":\"NB\"},\"cores\":\"mix\",\"body\":["
    "{\"for\":\"i\",\"trip\":16,\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_L1\"],\"along\":[\"b\",\"i\"]},"
    "{\"copy\":[\"C_L0\",\"gm:W\"],\"along\":[\"b\",\"i\"]},"
    "{\"sync\":\"cross\",\"from\":\"cube\",\"to\":\"vector\",\"flag\":0},"
    "{\"copy\":[\"gm:W\",\"W_UB\"],\"along\":[\"b\",\"i\"]}]}]}}";

static void test_workspace_footprint(void)
{
    tt_template *t = parse(ws_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    for (int s = 1; s <= 2; s++) {
        char cfg[16];
        snprintf(cfg, sizeof cfg, "S=%d", s);
        tt_model_result d2, d64;
        /* a ring of 2 or of 64 slots per block: 3 MB or 100 MB of workspace tensor; the
         * live part is 24 blocks x 64 KiB either way */
        CU_ASSERT_EQUAL_FATAL(predict(t, a2, "NB=24,D=2", cfg, NULL, &d2), TT_OK);
        CU_ASSERT_EQUAL_FATAL(predict(t, a2, "NB=24,D=64", cfg, NULL, &d64), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(d64.l2_hit, d2.l2_hit, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(d64.time_us, d2.time_us, 1e-9 * d2.time_us);
        CU_ASSERT(d2.l2_hit > 0.8);
    }
    tt_tmpl_free(t);
}

/* ---- 13. chip bandwidth is shared by demand, not equally among the movers -------------- */

/* 24 blocks stream 64 KiB tiles GM->L1 (beyond the per-core share of the chip bandwidth);
 * the vector side reads E elements per iteration. */
static const char *share_tmpl =
    "{\"tiletune\":1,\"name\":\"share\",\"inputs\":{\"E\":\"int\"},\"params\":{\"S\":[2]},"
    "\"tensors\":{\"X\":{\"shape\":[24,64,32768],\"dtype\":\"float16\"},"
    "\"Y\":{\"shape\":[24,64,\"E\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"X_L1\":{\"scope\":\"L1\",\"shape\":[32768],\"dtype\":\"float16\",\"copies\":2},"
    "\"Y_UB\":{\"scope\":\"UB\",\"shape\":[\"E\"],\"dtype\":\"float16\",\"copies\":2}},"
    "\"kernel\":{\"grid\":{\"b\":24},\"cores\":\"mix\",\"body\":["
    "{\"for\":\"i\",\"trip\":64,\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_L1\"],\"along\":[\"b\",\"i\"]},"
    "{\"copy\":[\"gm:Y\",\"Y_UB\"],\"along\":[\"b\",\"i\"]}]}]}}";

static const char *stream_tmpl =
    "{\"tiletune\":1,\"name\":\"stream\",\"inputs\":{\"NB\":\"int\"},\"params\":{\"S\":[1,2]},"
    "\"tensors\":{\"X\":{\"shape\":[\"NB\",64,65536],\"dtype\":\"float16\"},"
    "\"Y\":{\"shape\":[\"NB\",64,65536],\"dtype\":\"float16\",\"output\":true}},"
    "\"buffers\":{\"X_UB\":{\"scope\":\"UB\",\"shape\":[32768],\"dtype\":\"float16\",\"copies\":\"S\"}},"
    "\"kernel\":{\"grid\":{\"b\":\"NB\"},\"cores\":\"vector\",\"body\":["
    "{\"for\":\"i\",\"trip\":64,\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_UB\"],\"along\":[\"b\",\"i\"]},"
    "{\"copy\":[\"X_UB\",\"gm:Y\"],\"along\":[\"b\",\"i\"]}]}]}}";

/* ---- nd2nz as an expression of a layout input (conv2d's nz) -------------------------- */

/* conv2d with nz = 1 (NC1HWC0 / Fractal_Z inputs) loads GM->L1 at the plain path rate, not
 * the ND->NZ one: faster in the model and the simulator alike, and the flag follows the
 * problem. */
static void test_nd2nz_layout(void)
{
    tt_template *t = shipped_template("conv2d.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_errinfo e;
    const tt_target *tg = tt_targets_find(shipped, "a2");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tg);
    const tt_op *ld = &t->kernel->body[0].u.loop.body[0];
    CU_ASSERT_EQUAL(ld->u.copy.nd2nz, 2);
    double mt[2], st[2];
    for (int nz = 0; nz < 2; nz++) {
        char pb[160];
        snprintf(pb, sizeof pb, "B=4,C=256,H=12,W=64,OC=3072,KH=3,KW=3,stride=1,padding=1,nz=%d", nz);
        const char *cfg = "block_M=128,block_N=256,block_K=256";
        tt_model_result r;
        CU_ASSERT_EQUAL_FATAL(predict(t, tg, pb, cfg, NULL, &r), TT_OK);
        mt[nz] = r.time_us;
        int64_t slots[TT_MAX_SLOTS] = {0};
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, pb, slots, &e), TT_OK);
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, cfg, slots, &e), TT_OK);
        CU_ASSERT_EQUAL(tt_copy_nd2nz(ld, slots), !nz);
        tt_sim_result sr;
        CU_ASSERT_EQUAL(tt_sim_run(t, tg, slots, NULL, &sr), TT_OK);
        st[nz] = sr.time_us;
        tt_sim_result_close(&sr);
    }
    CU_ASSERT(mt[1] < 0.99 * mt[0]);
    CU_ASSERT(st[1] < 0.99 * st[0]);
    tt_tmpl_free(t);
}

static void test_demand_share(void)
{
    tt_template *t = parse(share_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    tt_model_result small, big;
    CU_ASSERT_EQUAL_FATAL(predict(t, a2, "E=16", "S=2", NULL, &small), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, a2, "E=32768", "S=2", NULL, &big), TT_OK);
    /* the per-core share of the chip bandwidth of the cube's loads (hits at the loaded
     * rate l2_load_gbps), at the kernel's hit rate */
    double miss = a2->l2_gbps / a2->l2_miss_factor < a2->hbm_gbps ? a2->l2_gbps / a2->l2_miss_factor
                                                                 : a2->hbm_gbps;
    double core_bpc = (small.l2_hit * a2->l2_load_gbps + (1 - small.l2_hit) * miss) * 1000.0 /
                      a2->clock_mhz / 24;
    CU_ASSERT(core_bpc < a2->path[TT_PATH_GM_L1].bytes_per_cycle);
    /* a vector side that moves 32 B per iteration hardly competes: the cube's GM->L1
     * transfers run at nearly the whole per-core share (an equal split gave half) */
    double rate = 64.0 * 65536 / (small.busy_us[TT_UNIT_MTE2] * a2->clock_mhz);
    CU_ASSERT(rate > 0.9 * core_bpc);
    CU_ASSERT(rate <= core_bpc * (1 + 1e-9));
    /* two vector cores streaming as much as the cube do compete: each gets less */
    double mte2_big = 64.0 * 65536 * 2 / (big.busy_us[TT_UNIT_MTE2] * a2->clock_mhz);
    CU_ASSERT(mte2_big < 0.6 * core_bpc);
    CU_ASSERT(big.time_us > 1.5 * small.time_us);
    tt_tmpl_free(t);

    /* one side, load then store: with stages = 1 the two transfers of a vector core never
     * run at the same time (only the twin vector core competes: cap B_core / 2); with
     * stages = 2 the store of one iteration overlaps the load of the next */
    t = parse(stream_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_model_result s1, s2;
    CU_ASSERT_EQUAL_FATAL(predict(t, a2, "NB=24", "S=1", NULL, &s1), TT_OK);
    CU_ASSERT_EQUAL_FATAL(predict(t, a2, "NB=24", "S=2", NULL, &s2), TT_OK);
    double bpc1 = (s1.l2_hit * a2->l2_gbps + (1 - s1.l2_hit) * miss) * 1000.0 / a2->clock_mhz / 24;
    double bpc2 = (s2.l2_hit * a2->l2_gbps + (1 - s2.l2_hit) * miss) * 1000.0 / a2->clock_mhz / 24;
    double r1 = 64.0 * 65536 / (s1.busy_us[TT_UNIT_MTE2] * a2->clock_mhz);
    double r2 = 64.0 * 65536 / (s2.busy_us[TT_UNIT_MTE2] * a2->clock_mhz);
    CU_ASSERT_DOUBLE_EQUAL(r1, bpc1 / 2, 1e-6 * bpc1);
    CU_ASSERT(r2 < 0.9 * bpc2 / 2);
    tt_tmpl_free(t);
}

/* ---- issue #10 (fafid): a row reduction is a cascade of group reductions ---------------- */

static const char *red_tmpl =
    "{\"tiletune\":1,\"name\":\"row_reduce\",\"inputs\":{\"R\":\"int\",\"L\":\"int\"},\"params\":{\"S\":[1]},"
    "\"tensors\":{\"X\":{\"shape\":[\"R\",\"L\"],\"dtype\":\"float32\"}},"
    "\"buffers\":{\"X_UB\":{\"scope\":\"UB\",\"shape\":[\"R\",\"L\"],\"dtype\":\"float32\"},"
    "\"m_UB\":{\"scope\":\"UB\",\"shape\":[\"R\"],\"dtype\":\"float32\"}},"
    "\"kernel\":{\"grid\":{\"b\":1},\"cores\":\"vector\",\"body\":["
    "{\"for\":\"i\",\"trip\":8,\"stages\":\"S\",\"body\":["
    "{\"vec\":\"reduce_max\",\"out\":\"m_UB\",\"in\":[\"X_UB\"],\"elems\":\"R * L\"}]}]}}";

/* TileLang-Ascend's reduce_2d_v2 and PTO-ISA's TROWMAX/TROWSUM reduce a row of fp32 in group
 * steps (each 32-B block of 8 values to one, one 256-B repeat per cycle) and finish with a
 * whole reduction of at most 8 values per row.  Hand target: unary 255 B/cycle, reduce 85
 * B/cycle (fp32), head 23.  Before: one pass at the reduce rate (64 x 128: 23 + 32768 / 85 =
 * 408.5 cycles, the FlashAttention softmax tile, now 173.6).  Model and simulator alike. */
static void test_reduce_cascade(void)
{
    tt_template *t = parse(red_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const struct {
        const char *problem;
        double cycles;   /* one reduce_max, hand-computed */
    } cases[] = {
        /* 128 -> 16 -> 2 per row, leaf 64 x 2 values at the reduce rate */
        {"R=64,L=128", 23 + 64 * 128 * 4 / 255.0 + 64 * 16 * 4 / 255.0 + 64 * 2 * 4 / 85.0},
        /* 256 -> 32 -> 4 */
        {"R=32,L=256", 23 + 32 * 256 * 4 / 255.0 + 32 * 32 * 4 / 255.0 + 32 * 4 * 4 / 85.0},
        /* a row of one block: the whole reduction only (as before) */
        {"R=64,L=8", 23 + 64 * 8 * 4 / 85.0},
        /* a single row (a full reduction) of 4096: 4096 -> 512 -> 64 -> 8 */
        {"R=1,L=4096", 23 + (4096 + 512 + 64) * 4 / 255.0 + 8 * 4 / 85.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_model_result r;
        CU_ASSERT_EQUAL_FATAL(predict(t, &hand, cases[i].problem, "S=1", NULL, &r), TT_OK);
        double v = r.busy_us[TT_UNIT_V] * hand.clock_mhz / 8;
        CU_ASSERT_DOUBLE_EQUAL(v, cases[i].cycles, 1e-6 * cases[i].cycles);
        int64_t slots[TT_MAX_SLOTS] = {0};
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, cases[i].problem, slots, &e), TT_OK);
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, "S=1", slots, &e), TT_OK);
        tt_sim_result sr;
        CU_ASSERT_EQUAL_FATAL(tt_sim_run(t, &hand, slots, NULL, &sr), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(sr.busy_cycles[TT_UNIT_V] / 8, cases[i].cycles, 1e-6 * cases[i].cycles);
        tt_sim_result_close(&sr);
    }
    tt_tmpl_free(t);
}

/* Issue #10 (fafid): every GM transfer of a core (the cube's and both vector cores') passes
 * through the core's share of the chip memory, so a pipelined loop's period is at least the
 * bytes of one iteration over that share (each byte at its mover's rate: the cube's loads at
 * l2_load_gbps, the rest at l2_gbps), and the L2 bound charges each byte at the same rate.
 * FlashAttention on 910B2, one head, S_kv = 8192, 128 x 128, stages 6 (the published PTO
 * rows): S_q = 2048 runs 16 blocks that each move 384 KB per KV tile (K, V, the S, P and PV
 * hand-offs); the published time per block is 1.4-1.6x that of one block.  Before: the
 * model 1.04x (each mover capped alone, the steady part only under the L2 bound), the
 * simulator 1.49x; now the model follows the simulator. */
static void test_core_memory_share(void)
{
    tt_template *t = shipped_template("flash_attn_fwd.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    const char *cfg = "block_M=128,block_N=128,stages=6,cross_interval=1";
    const char *probs[] = {"B=1,H=1,H_kv=1,S_q=128,S_kv=8192,D=128,causal=0,dtype=float16",
                           "B=1,H=1,H_kv=1,S_q=2048,S_kv=8192,D=128,causal=0,dtype=float16"};
    double mt[2], st[2];
    for (int i = 0; i < 2; i++) model_and_sim(t, a2, probs[i], cfg, &mt[i], &st[i]);
    double fixed = a2->launch_us + a2->mix_launch_extra_us;
    double rm = (mt[1] - fixed) / (mt[0] - fixed), rs = (st[1] - fixed) / (st[0] - fixed);
    printf("[model %.2fx, simulator %.2fx] ", rm, rs);
    CU_ASSERT(rm > 1.35);
    CU_ASSERT(fabs(rm - rs) < 0.05 * rs);
    tt_model_result r;
    CU_ASSERT_EQUAL_FATAL(predict(t, a2, probs[1], cfg, NULL, &r), TT_OK);
    CU_ASSERT_EQUAL(r.bound, TT_BOUND_L2);
    tt_tmpl_free(t);
}

static const tt_test_case model_cases[] = {
    {"single_copy", test_single_copy}, {"overlap", test_overlap},   {"waves", test_waves},
    {"infeasible", test_infeasible},   {"l2_reuse", test_l2_reuse}, {"gemm_sanity", test_gemm_sanity},
    {"api", test_api},                 {"representative_block", test_representative_block},
    {"mix_causal", test_mix_causal},   {"builtin_templates", test_builtin_templates},
    {"threads", test_threads},         {"mix_round_trip", test_mix_round_trip},
    {"mix_modulo", test_mix_modulo},   {"mix_every", test_mix_every},
    {"workspace_footprint", test_workspace_footprint}, {"demand_share", test_demand_share}, {"nd2nz_layout", test_nd2nz_layout},
    {"fast_tables", test_fast_tables}, {"persistent", test_persistent},
    {"persistent_single_k", test_persistent_single_k}, {"swizzle", test_swizzle},
    {"band", test_band},               {"launch_mix", test_launch_mix},
    {"tail_step_share", test_tail_step_share}, {"grouped_walk", test_grouped_walk},
    {"int8_l0b_ring", test_int8_l0b_ring},
    {"gqa_along_map", test_gqa_along_map}, {"scalar_pick", test_scalar_pick},
    {"reduce_cascade", test_reduce_cascade}, {"core_memory_share", test_core_memory_share},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"model", setup, teardown, model_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

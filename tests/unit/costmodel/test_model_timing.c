/* SPDX-License-Identifier: MIT
 * test_model_timing.c - the analytic cost model's timing rules on hand-computed cases (a
 * "hand" target with round numbers derived from the shipped 910B2 file, tests/helpers/
 * model_fixture): one transfer, overlap by stages, wave quantisation, persistent walks and
 * swizzle, the error band, L2 re-use, the representative block and the MIX launch extra of
 * a vector kernel.
 * Every time checked here is a prediction of the model, compared with its own equations (or
 * with the simulator's, a model too).
 */
#include <math.h>
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

/* ---- 1. one transfer: latency + bytes / rate ------------------------------------------- */

static const char *one_copy =
    "{\"tiletune\":1,\"name\":\"one_copy\",\"inputs\":{\"N\":\"int\"},\"params\":{\"S\":[1]},"
    "\"tensors\":{\"X\":{\"shape\":[\"N\"],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"X_UB\":{\"scope\":\"UB\",\"shape\":[\"N\"],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"b\":1},\"cores\":\"vector\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_UB\"],\"along\":[\"b\"]}]}}";

static void test_single_copy(void)
{
    tt_template *t = tt_mfx_parse(one_copy);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const struct {
        int64_t n;
        double cycles;   /* 50 + 2n / 100 */
    } cases[] = {{10000, 250}, {50000, 1050}, {90000, 1850}, {16, 50.32}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char pb[64];
        snprintf(pb, sizeof pb, "N=%lld", (long long)cases[i].n);
        tt_model_result r;
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, pb, "S=1", NULL, &r), TT_OK);
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
    CU_ASSERT_EQUAL(tt_mfx_predict(t, &hand, "N=90000", "S=1", NULL, &r), TT_OK);
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
    tt_template *t = tt_mfx_parse(two_stage);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* copy: 50 + 10000/100 = 150 cycles (occupancy 100); exp: 20 + 10000/50 = 220 */
    for (int n = 1; n <= 12; n += 11) {
        char pb[32];
        snprintf(pb, sizeof pb, "T=%d", n);
        tt_model_result r1, r2;
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, pb, "S=1", NULL, &r1), TT_OK);
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, pb, "S=2", NULL, &r2), TT_OK);
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
    tt_template *t = tt_mfx_parse(blocks_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_model_result r24, r25, r48, r12;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "NB=24", "S=1", NULL, &r24), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "NB=25", "S=1", NULL, &r25), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "NB=48", "S=1", NULL, &r48), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "NB=12", "S=1", NULL, &r12), TT_OK);
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
    tt_template *t = tt_mfx_parse(persist_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* one grid point: copy 150 cycles (occupancy 100), exp 220; T = 12 iterations at stages 2:
     * (12 - 1) x (220 + 10 flag) + 370 = 2900 cycles, of which the fill/drain is 2900 - 12 x
     * 230 = 140.  Launched as 4 blocks over 8 grid points, each block walks 2 points and
     * pays the fill once: 2900 + 2760 = 5660 cycles; as the grid (P = 0, the default), 4
     * points on 4 cores: 2900. */
    tt_model_result grid4, pers, grid8;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "T=12,NB=4", "S=2", NULL, &grid4), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "T=12,NB=8", "S=2,P=4", NULL, &pers), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "T=12,NB=8", "S=2,P=0", NULL, &grid8), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(grid4.time_us, hand.launch_us + 2.900, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(pers.time_us, hand.launch_us + 5.660, 1e-9);
    CU_ASSERT_EQUAL(pers.cores_used, 4);
    CU_ASSERT_DOUBLE_EQUAL(pers.waves, 2.0 / 24.0 * 4.0, 1e-12);   /* 4 blocks x 2 points */
    CU_ASSERT_EQUAL(grid8.cores_used, 8);                          /* P = 0: the grid */
    CU_ASSERT_DOUBLE_EQUAL(grid8.time_us, hand.launch_us + 2.900, 1e-9);
    tt_tmpl_free(t);
}



/* Issue #10: a persistent GEMM whose K loop runs once per tile (K_L1 = K).  Its walk still
 * pipelines across tiles (double-buffered L1/L0: tile j+1's loads run under tile j's mma),
 * as the simulator runs it; the model once charged every tile its whole chain (the fill of
 * a one-iteration loop counted as steady time) and was 35-55 % above the simulator. */
static void test_persistent_single_k(void)
{
    tt_template *t = tt_mfx_gemm_template();
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
        tt_mfx_model_and_sim(t, a3, cases[i][0], cases[i][1], &mu, &su);
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
    tt_template *t = tt_mfx_gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *b3 = tt_targets_find(shipped, "Ascend910B3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b3);
    const char *cf = "block_M=32,block_N=256,block_K=64,K_L1=256,S1=2,S2=2,core_num=20";
    double m20, s20, m24, s24;
    tt_mfx_model_and_sim(t, b3, "M=20,N=5120,K=16384,dtype=float16,out_dtype=float16", cf, &m20, &s20);
    tt_mfx_model_and_sim(t, b3, "M=20,N=6144,K=16384,dtype=float16,out_dtype=float16", cf, &m24, &s24);
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
    tt_template *t = tt_mfx_shipped_template("grouped_gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *b4 = tt_targets_find(shipped, "Ascend910B4");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b4);
    const char *pb = "batch_count=8,batch_sum=1024,K=512,N=768,balanced=0";
    double mw, sw, mg, sg;
    tt_mfx_model_and_sim(t, b4, pb, "block_M=64,block_N=64,block_K=128,K_L1=256,core_num=20", &mw, &sw);
    tt_mfx_model_and_sim(t, b4, pb, "block_M=64,block_N=64,block_K=128,K_L1=256,core_num=0", &mg, &sg);
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
    tt_template *t = tt_mfx_shipped_template("quant_matmul.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *b3 = tt_targets_find(shipped, "Ascend910B3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b3);
    const char *pb = "M=128,N=256,K=16384,in_dtype=int8,out_dtype=bfloat16";
    double m2, s2, m1, s1;
    tt_mfx_model_and_sim(t, b3, pb, "block_M=128,block_N=256,block_K=128,K_L1=512,S1=2,S2=2,split_k=1", &m2, &s2);
    tt_mfx_model_and_sim(t, b3, pb, "block_M=128,block_N=256,block_K=128,K_L1=512,S1=2,S2=1,split_k=1", &m1, &s1);
    CU_ASSERT(m2 > 0.85 * m1 && m2 <= m1 * 1.001);
    CU_ASSERT(s2 > 0.85 * s1 && s2 <= s1 * 1.001);
    tt_tmpl_free(t);
    tt_template *g = tt_mfx_gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const char *pg = "M=128,N=256,K=16384,dtype=float16,out_dtype=float16";
    tt_mfx_model_and_sim(g, b3, pg, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", &m2, &s2);
    tt_mfx_model_and_sim(g, b3, pg, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=1", &m1, &s1);
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
    tt_template *t = tt_mfx_gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    const char *pb = "M=16384,N=16384,K=4096,dtype=float16,out_dtype=float16";
    tt_model_result r1, r4;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a3, pb, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2",
                                  NULL, &r1), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a3, pb, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2,swizzle=4",
                                  NULL, &r4), TT_OK);
    CU_ASSERT(r4.l2_hit > r1.l2_hit);
    CU_ASSERT(r4.time_us <= r1.time_us);
    tt_tmpl_free(t);
}

/* ---- 3c. error band: the family's published residual range, or the calibration's ------- */

static void test_band(void)
{
    tt_template *t = tt_mfx_gemm_template();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    const char *pb = "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16";
    const char *cfg = "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2";
    tt_model_result r;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a3, pb, cfg, NULL, &r), TT_OK);
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
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a3, pb, cfg, &c, &rc), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(rc.time_us, r.time_us, 1e-9);  /* identity fit: same time */
    CU_ASSERT_DOUBLE_EQUAL(rc.low_us, r.time_us * exp(-0.2), 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(rc.high_us, r.time_us * exp(0.2), 1e-9);
    c.n = 3;                                              /* too few: the table again */
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a3, pb, cfg, &c, &rc), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(rc.high_us, r.time_us * 2.207, 1e-9);
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
    tt_template *t = tt_mfx_parse(reuse_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    tt_model_result none, some, more;
    /* 2400 tile reads each time (300 MiB read); 2400, 300 and 100 distinct tiles */
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "NBX=2400,NBY=1", "S=1", NULL, &none), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "NBX=300,NBY=8", "S=1", NULL, &some), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "NBX=100,NBY=24", "S=1", NULL, &more), TT_OK);
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
    tt_template *t = tt_mfx_parse(tri_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* copy: 50 + 10000/100 = 150 cycles per iteration; trip = middle block index + 1 */
    static const struct {
        int nb, trip;
    } cases[] = {{1, 1}, {2, 1}, {3, 2}, {9, 5}, {10, 5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char pb[32];
        snprintf(pb, sizeof pb, "NB=%d", cases[i].nb);
        tt_model_result r;
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, pb, "S=1", NULL, &r), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(r.time_us, 1.0 + cases[i].trip * 150 / 1000.0, 1e-9);
    }
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
    tt_template *plain = tt_mfx_parse(one_copy), *mix = tt_mfx_parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mix);
    CU_ASSERT_FALSE(plain->kernel->launch_mix);
    CU_ASSERT_TRUE(mix->kernel->launch_mix);
    tt_model_result a, b;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(plain, &hand, "N=10000", "S=1", NULL, &a), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(mix, &hand, "N=10000", "S=1", NULL, &b), TT_OK);
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
    tt_template *byx = tt_mfx_parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(byx);
    int64_t big[TT_MAX_SLOTS] = {10000, 1}, small[TT_MAX_SLOTS] = {100, 1};
    CU_ASSERT_TRUE(tt_kernel_launch_mix(byx->kernel, big));
    CU_ASSERT_FALSE(tt_kernel_launch_mix(byx->kernel, small));
    tt_model_result c, d, f;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(byx, &hand, "N=10000", "S=1", NULL, &c), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(c.time_us, b.time_us, 1e-9);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(byx, &hand, "N=100", "S=1", NULL, &d), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(plain, &hand, "N=100", "S=1", NULL, &f), TT_OK);
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

static const tt_test_case timing_cases[] = {
    {"single_copy", test_single_copy},
    {"overlap", test_overlap},
    {"waves", test_waves},
    {"l2_reuse", test_l2_reuse},
    {"representative_block", test_representative_block},
    {"persistent", test_persistent},
    {"persistent_single_k", test_persistent_single_k},
    {"swizzle", test_swizzle},
    {"band", test_band},
    {"launch_mix", test_launch_mix},
    {"tail_step_share", test_tail_step_share},
    {"grouped_walk", test_grouped_walk},
    {"int8_l0b_ring", test_int8_l0b_ring},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"model_timing", setup, teardown, timing_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_sim_fast_path.c - the simulator's shortcuts against full simulation: determinism and
 * the steady-state shortcut on the hand "chain" template, the fast path on causal
 * FlashAttention (wave shapes, loop marks, a late fit) and the persistent walk shortcut on
 * GEMM.  Fixture: tests/helpers/sim_fixture.  Both sides are the simulator (a model): these
 * tests check that its shortcuts keep its own answers.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_fixture.h"
#include "sim_int.h"
#include "space.h"
#include "target.h"
#include "template.h"
#include "tt_test.h"

static void test_determinism_and_shortcut(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 24);
    tgt.hbm_gbps = 600;
    tgt.l2_gbps = 2000;
    tgt.issue_cycles = 1;
    tgt.flag_cycles = 3;
    tt_template *t = tt_sfx_parse(tt_sfx_chain_tmpl);
    int64_t slots[TT_MAX_SLOTS];
    tt_sim_result a, b, full;
    tt_sfx_mk_slots(t, "K=8192", "S=2", slots);
    tt_sim_opts o = {.trace_core = -1};
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &a), TT_OK);
    tt_sfx_mk_slots(t, "K=8192", "S=2", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &b), TT_OK);
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
    /* 256 iterations x 3 instructions > 4096? no: force the shortcut with a small limit and
     * compare with the full simulation: the steady state is periodic, so linear
     * extrapolation is exact up to rounding. */
    o.shortcut_ops = 64;
    tt_sfx_mk_slots(t, "K=8192", "S=2", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &a), TT_OK);
    CU_ASSERT_EQUAL(a.extrapolated, 1);
    o.shortcut_ops = -1;
    tt_sfx_mk_slots(t, "K=8192", "S=2", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &full), TT_OK);
    CU_ASSERT_EQUAL(full.extrapolated, 0);
    CU_ASSERT(full.events > a.events);
    CU_ASSERT_DOUBLE_EQUAL(a.cycles, full.cycles, 1e-6 * full.cycles);
    for (int u = 0; u < TT_UNIT__COUNT; u++)
        CU_ASSERT_DOUBLE_EQUAL(a.busy_cycles[u], full.busy_cycles[u], 1e-6 * full.cycles);
    tt_tmpl_free(t);
}



/* Simulate one config with the shortcuts (*fast) and without (*full), and check that the
 * fast run extrapolated, the full one did not, and cycles and busy times agree within
 * rtol x the full cycles (all units when all_units, else the cube). */
static void fast_vs_full(const tt_template *t, const tt_target *tgt, const char *prob, const char *cfg,
                         double rtol, int all_units, tt_sim_result *fast, tt_sim_result *full)
{
    int64_t slots[TT_MAX_SLOTS];
    tt_sim_opts o = {.trace_core = -1};
    tt_sfx_mk_slots(t, prob, cfg, slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, tgt, slots, &o, fast), TT_OK);
    o.shortcut_ops = -1;
    tt_sfx_mk_slots(t, prob, cfg, slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, tgt, slots, &o, full), TT_OK);
    CU_ASSERT_EQUAL(fast->extrapolated, 1);
    CU_ASSERT_EQUAL(full->extrapolated, 0);
    double tol = rtol * full->cycles;
    CU_ASSERT_DOUBLE_EQUAL(fast->cycles, full->cycles, tol);
    for (int u = 0; u < TT_UNIT__COUNT; u++)
        if (all_units || u == TT_UNIT_M) CU_ASSERT_DOUBLE_EQUAL(fast->busy_cycles[u], full->busy_cycles[u], tol);
    if (fabs(fast->cycles - full->cycles) > tol)
        fprintf(stderr, "%s: fast %.0f full %.0f cycles\n", cfg, fast->cycles, full->cycles);
}



/* The fast path on causal FlashAttention (blocks differ in their KV trip count, waves mix
 * two trip counts): each wave shape is simulated at a few trip counts and the waves are
 * interpolated (docs/simulator.md, "Steady-state shortcut").  Stated tolerance: kernel
 * cycles and every unit's busy time within 0.1 % of the full simulation (bench_sim --check
 * measures 0.04 % at worst on the S=8192 sample), for far fewer simulated events. */
static void test_fast_path_causal(void)
{
    tt_sfx_fa F;
    CU_ASSERT_FATAL(tt_sfx_fa_load(&F));
    const tt_template *fa = F.fa;
    const tt_target *tgt = F.tgt;
    static const char *const cfgs[] = {"block_M=64,block_N=32,stages=2",
                                       "block_M=64,block_N=64,stages=8"};
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        const char *prob = "B=1,H=16,H_kv=16,S_q=4096,S_kv=4096,D=128,causal=1,dtype=float16";
        tt_sim_result fast, full;
        fast_vs_full(fa, tgt, prob, cfgs[i], 1e-3, 1, &fast, &full);
        CU_ASSERT_EQUAL(fast.waves, full.waves);
        /* deep stages: the two sides run free and settle into a long period, so the shape
         * needs six anchors (a least-squares line) where lock-step needed three: 2x fewer
         * events at this S = 4096 (the gain grows with the sequence) */
        CU_ASSERT(fast.events * (i == 0 ? 3 : 1.5) < full.events);
        tt_sim_result_close(&fast);
        tt_sim_result_close(&full);
    }
    tt_sfx_fa_free(&F);
}

/* Causal FlashAttention S = 8192 on 8 heads (the shipped template, A3): config cfg with the
 * shortcuts within rtol of the full simulation (every unit's busy time too when all_units)
 * and more than `fewer` times fewer events. */
static void fa8k_fast_vs_full(const char *cfg, double rtol, int all_units, double fewer)
{
    tt_sfx_fa F;
    CU_ASSERT_FATAL(tt_sfx_fa_load(&F));
    tt_sim_result fast, full;
    fast_vs_full(F.fa, F.tgt, "B=1,H=8,H_kv=8,S_q=8192,S_kv=8192,D=128,causal=1,dtype=float16",
                 cfg, rtol, all_units, &fast, &full);
    CU_ASSERT(fast.events * fewer < full.events);
    tt_sim_result_close(&fast);
    tt_sim_result_close(&full);
    tt_sfx_fa_free(&F);
}

/* Loop marks (docs/simulator.md): a causal shape whose first three anchors are not collinear
 * (the two sides of a stages 6 pipeline run free) is run once more at 4.25 warm-ups with every
 * iteration's completion recorded; the least-squares rate of the iterations after the
 * warm-up and before the drain extends that run to the longer waves, the line from the
 * anchors to it serves the shorter ones.  Causal S = 8192 on 8 heads, 32 x 64, stages 6:
 * cycles and every unit's busy time within 0.1 % of the full simulation (with anchors only:
 * some busy time 0.1 % off, 65 k events).  The waves between the anchors below the run (the
 * fill regime, tmin 17..31) are the straight line between the two anchors around them
 * (fill_wave): 38.6 k events, 47.9 k when they were simulated in full. */
static void test_fast_path_loop_marks(void)
{
    /* 38.6 k of 488 k events (the anchors: 65 k; fill waves in full: 47.9 k) */
    fa8k_fast_vs_full("block_M=32,block_N=64,stages=6,cross_interval=1", 1e-3, 1, 12);
}

/* A deep cross-core ring settles late: the first anchors of a wave shape may still be in the
 * fill regime, so the straight-line fit is also tried through the later anchors only (at
 * least SHAPE_FIT of them); waves shorter than the first fitted anchor are simulated in full.
 * Causal S = 8192, 48 x 32, stages 14, cross_interval 4 on 8 heads: before, every fit through
 * the second anchor failed and the waves were simulated in full (949 k events, 550 k before
 * the row-reduction rule); now 107 k, within 1 % of the full simulation. */
static void test_fast_path_late_fit(void)
{
    fa8k_fast_vs_full("block_M=48,block_N=32,stages=14,cross_interval=4", 1e-2, 0, 4);
}

/* The walk shortcut: a persistent GEMM whose 24 blocks walk 43 output tiles each is
 * simulated at three short walks and extrapolated; the result matches the full simulation
 * within 0.2 % at a fraction of the events. */
static void test_walk_shortcut(void)
{
    char *tdir = tt_test_src("costmodel/targets");
    char *gpath = tt_test_src("templates/gemm.json");
    tt_targets *ts = NULL;
    tt_template *gemm = NULL;
    tt_errinfo err;
    CU_ASSERT_EQUAL_FATAL(tt_targets_load_dir(tdir, &ts, &err), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(gpath, &gemm, &err), TT_OK);
    const tt_target *tgt = tt_targets_find(ts, "Ascend910_9391");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
    const char *prob = "M=4096,N=4096,K=1024,dtype=float16,out_dtype=float16";
    const char *cfg = "block_M=128,block_N=128,block_K=64,K_L1=256,S1=2,S2=2,core_num=24";
    tt_sim_result fast, full;
    fast_vs_full(gemm, tgt, prob, cfg, 2e-3, 0, &fast, &full);
    CU_ASSERT(fast.events * 5 < full.events);   /* one marked walk of 6 tiles vs 43 */
    tt_sim_result_close(&fast);
    tt_sim_result_close(&full);
    /* walk marks, a walk that settles late into a 2-point period (55197 / 55603 cycles per
     * point from point 6 on, irregular before): points 1, 3 and 5 of the 7-point walk are
     * already collinear (points 0, 2, 4 of a 6-point walk were not, and a 9-point walk
     * followed); cycles and every unit's busy time within 0.2 % of the full walks of 93 tiles */
    prob = "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16";
    cfg = "block_M=16,block_N=448,block_K=16,K_L1=96,S1=2,S2=2,core_num=24,swizzle=2";
    fast_vs_full(gemm, tgt, prob, cfg, 2e-3, 1, &fast, &full);
    CU_ASSERT(fast.events * 4 < full.events);
    tt_sim_result_close(&fast);
    tt_sim_result_close(&full);
    /* a 3-point period: an L1 ring of 3 stages over 22 K slices per tile comes back to the
     * same slot every 3 tiles, so points 2 apart never line up (the walk was simulated in
     * full: 320 k events); points 1, 4, 7 of the 9-point walk do.  275-tile walks. */
    cfg = "block_M=32,block_N=96,block_K=32,K_L1=192,S1=3,S2=2,core_num=20,swizzle=3";
    fast_vs_full(gemm, tgt, prob, cfg, 2e-3, 1, &fast, &full);
    CU_ASSERT(fast.events * 10 < full.events);
    tt_sim_result_close(&fast);
    tt_sim_result_close(&full);
    /* walk marks with the points' K loop (128 K_L1 slices) cut to 16, 24 and 32 slices and
     * extrapolated (walk_marks_loop): 21-tile walks; cycles and every unit's busy time within
     * 0.2 % of the full simulation */
    prob = "M=4096,N=2048,K=4096,dtype=float16,out_dtype=float16";
    cfg = "block_M=128,block_N=128,block_K=16,K_L1=32,S1=2,S2=2,core_num=24";
    fast_vs_full(gemm, tgt, prob, cfg, 2e-3, 1, &fast, &full);
    CU_ASSERT(fast.events * 5 < full.events);   /* 9.5 k of 55 k (whole K loops: 16.7 k) */
    tt_sim_result_close(&fast);
    tt_sim_result_close(&full);
    tt_tmpl_free(gemm);
    tt_targets_free(ts);
    free(gpath);
    free(tdir);
}

static const tt_test_case fast_path_cases[] = {
    {"determinism_and_shortcut", test_determinism_and_shortcut},
    {"fast_path_causal", test_fast_path_causal},
    {"fast_path_late_fit", test_fast_path_late_fit},
    {"walk_shortcut", test_walk_shortcut},
    {"fast_path_loop_marks", test_fast_path_loop_marks},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"sim_fast_path", NULL, NULL, fast_path_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

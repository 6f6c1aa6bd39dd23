/* SPDX-License-Identifier: MIT
 * test_model_mix.c - the analytic cost model's MIX-kernel and memory-sharing rules on
 * hand-computed cases (tests/helpers/model_fixture): causal attention and the GQA `along`
 * map, the cross-core round trip (stages, batched hand-offs, modulo scheduling), scalar
 * picks, a workspace's L2 footprint that does not grow with its ring depth, chip bandwidth
 * shared by demand, nd2nz layouts, row-reduction cascades and the core's memory share.
 * Every time checked here is a prediction of the model, compared with its own equations.
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
    tt_template *t = tt_mfx_shipped_template("flash_attn_fwd.json");
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
    tt_template *t = tt_mfx_shipped_template("flash_attn_fwd.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a3 = tt_targets_find(shipped, "a3");
    const char *cfg = "block_M=128,block_N=128,stages=2";
    tt_model_result r1, r8;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a3, "B=4,H=32,H_kv=32,S_q=128,S_kv=8192,D=128", cfg, NULL, &r1), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a3, "B=4,H=32,H_kv=4,S_q=128,S_kv=8192,D=128", cfg, NULL, &r8), TT_OK);
    double ratio = r1.gm_bytes / r8.gm_bytes;
    fprintf(stderr, "[model gqa: HBM %.0f / %.0f bytes = %.2fx, l2_hit %.3f / %.3f, %.1f / %.1f us] ",
            r1.gm_bytes, r8.gm_bytes, ratio, r1.l2_hit, r8.l2_hit, r1.time_us, r8.time_us);
    CU_ASSERT(ratio > 6 && ratio < 12);
    CU_ASSERT(r8.l2_hit > r1.l2_hit);
    CU_ASSERT(r8.time_us < r1.time_us);
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
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "T=10", cfg, NULL, &r), TT_OK);
    double fixed = hand.launch_us + hand.mix_launch_extra_us;
    CU_ASSERT_DOUBLE_EQUAL(r.time_us, fixed + (9 * period + C) / 1000.0, 1e-9);
    return r;
}

static void test_mix_round_trip(void)
{
    tt_template *t = tt_mfx_parse(xchain_tmpl);
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
    CU_ASSERT_EQUAL(tt_mfx_predict(t, &hand, "T=1", "S=1", NULL, &a), TT_OK);
    CU_ASSERT_EQUAL(tt_mfx_predict(t, &hand, "T=1", "S=4", NULL, &b), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(a.time_us, fixed + C / 1000.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b.time_us, a.time_us, 1e-12);
    tt_tmpl_free(t);
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
    tt_template *sc = tt_mfx_parse(PICK_DOC("scalar")), *ga = tt_mfx_parse(PICK_DOC("gather"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ga);
    double head = hand.vec_head_cycles[TT_V_SCALAR];
    CU_ASSERT(head > hand.vec_head_cycles[TT_V_GATHER]);
    tt_model_result a, b;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(sc, &hand, "N=1024,R=32", "S=1", NULL, &a), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(sc, &hand, "N=1024,R=96", "S=1", NULL, &b), TT_OK);
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
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(ga, &hand, "N=1024,R=96", "S=1", NULL, &g), TT_OK);
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
    tt_template *t = tt_mfx_parse(xevery_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    double fixed = hand.launch_us + hand.mix_launch_extra_us;
    const double C = 102 + 450 + 220 + 450 + 102 + 450 + 220;
    tt_model_result r;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "T=10", "S=4,E=2", NULL, &r), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(r.time_us, fixed + (9 * 721.0 + C) / 1000.0, 1e-9);
    CU_ASSERT_EQUAL(r.bound, TT_BOUND_SYNC);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "T=10", "S=8,E=2", NULL, &r), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(r.time_us, fixed + (9 * 440.0 + C) / 1000.0, 1e-9);
    /* E = 1 is the plain hand-off of mix_round_trip: 2342 / 4 */
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, "T=10", "S=4,E=1", NULL, &r), TT_OK);
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
    tt_template *t = tt_mfx_parse(xmod_tmpl);
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
    tt_template *t = tt_mfx_parse(ws_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    for (int s = 1; s <= 2; s++) {
        char cfg[16];
        snprintf(cfg, sizeof cfg, "S=%d", s);
        tt_model_result d2, d64;
        /* a ring of 2 or of 64 slots per block: 3 MB or 100 MB of workspace tensor; the
         * live part is 24 blocks x 64 KiB either way */
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "NB=24,D=2", cfg, NULL, &d2), TT_OK);
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "NB=24,D=64", cfg, NULL, &d64), TT_OK);
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
    tt_template *t = tt_mfx_shipped_template("conv2d.json");
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
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, tg, pb, cfg, NULL, &r), TT_OK);
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
    tt_template *t = tt_mfx_parse(share_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    tt_model_result small, big;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "E=16", "S=2", NULL, &small), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "E=32768", "S=2", NULL, &big), TT_OK);
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
    t = tt_mfx_parse(stream_tmpl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_model_result s1, s2;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "NB=24", "S=1", NULL, &s1), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, "NB=24", "S=2", NULL, &s2), TT_OK);
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
    tt_template *t = tt_mfx_parse(red_tmpl);
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
        CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, &hand, cases[i].problem, "S=1", NULL, &r), TT_OK);
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
    tt_template *t = tt_mfx_shipped_template("flash_attn_fwd.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_target *a2 = tt_targets_find(shipped, "a2");
    const char *cfg = "block_M=128,block_N=128,stages=6,cross_interval=1";
    const char *probs[] = {"B=1,H=1,H_kv=1,S_q=128,S_kv=8192,D=128,causal=0,dtype=float16",
                           "B=1,H=1,H_kv=1,S_q=2048,S_kv=8192,D=128,causal=0,dtype=float16"};
    double mt[2], st[2];
    for (int i = 0; i < 2; i++) tt_mfx_model_and_sim(t, a2, probs[i], cfg, &mt[i], &st[i]);
    double fixed = a2->launch_us + a2->mix_launch_extra_us;
    double rm = (mt[1] - fixed) / (mt[0] - fixed), rs = (st[1] - fixed) / (st[0] - fixed);
    printf("[model %.2fx, simulator %.2fx] ", rm, rs);
    CU_ASSERT(rm > 1.35);
    CU_ASSERT(fabs(rm - rs) < 0.05 * rs);
    tt_model_result r;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, a2, probs[1], cfg, NULL, &r), TT_OK);
    CU_ASSERT_EQUAL(r.bound, TT_BOUND_L2);
    tt_tmpl_free(t);
}

static const tt_test_case mix_cases[] = {
    {"mix_causal", test_mix_causal},
    {"mix_round_trip", test_mix_round_trip},
    {"mix_modulo", test_mix_modulo},
    {"mix_every", test_mix_every},
    {"workspace_footprint", test_workspace_footprint},
    {"demand_share", test_demand_share},
    {"nd2nz_layout", test_nd2nz_layout},
    {"gqa_along_map", test_gqa_along_map},
    {"scalar_pick", test_scalar_pick},
    {"reduce_cascade", test_reduce_cascade},
    {"core_memory_share", test_core_memory_share},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"model_mix", setup, teardown, mix_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_sim_rules.c - the pipeline simulator's rules on hand-computed cases: a single copy,
 * copy -> mma with stages 1 vs 2, 24 cores sharing HBM (and max-min sharing), a tail wave, a
 * cube -> vector hand-off (set on a pipe, batched `every`), deadlock and event-limit guards,
 * refusals, persistent kernels, block cycles, and the trace.  All expected cycle counts are
 * computed by hand in the comments from a made-up round-number target (1000 MHz, rates
 * 64 B/cycle, latency 100; tests/helpers/sim_fixture): they check the simulator's rules, not
 * the chip (the simulator is a model).
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

#define NEAR(a, b) CU_ASSERT_DOUBLE_EQUAL((a), (b), 1e-6 * (fabs((double)(b)) + 1))

/* One GM->L1 copy per block; the grid has NB blocks. */
static const char *COPY_T =
    "{\"tiletune\":1,\"name\":\"copy1\",\"version\":\"1\","
    "\"inputs\":{\"NB\":{\"type\":\"int\"},\"R\":{\"type\":\"int\"}},"
    "\"params\":{\"S\":[1,2]},"
    "\"tensors\":{\"A\":{\"shape\":[\"NB\",\"R\",64],\"dtype\":\"float16\"}},"
    "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[\"R\",64],\"dtype\":\"float16\",\"copies\":\"S\"}},"
    "\"kernel\":{\"grid\":{\"bx\":\"NB\"},\"cores\":\"cube\",\"body\":["
    "{\"copy\":[\"gm:A\",\"A_L1\"],\"along\":[\"bx\"]}]}}";

static void test_single_copy(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tt_template *t = tt_sfx_parse(COPY_T);
    tt_sim_result r;
    /* 64x64 fp16 = 8192 B: 100 + 8192/64 = 228 cycles = 0.228 us at 1000 MHz */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=1,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 228);
    NEAR(r.time_us, 0.228);
    NEAR(r.busy_cycles[TT_UNIT_MTE2], 228);
    NEAR(r.util[TT_UNIT_MTE2], 1.0);
    NEAR(r.busy_cycles[TT_UNIT_M], 0);
    CU_ASSERT_EQUAL(r.blocks, 1);
    CU_ASSERT_EQUAL(r.waves, 1);
    CU_ASSERT_EQUAL(r.waves_simulated, 1);
    CU_ASSERT(r.events >= 2);
    CU_ASSERT_PTR_NULL(r.trace_json);
    tt_sim_result_close(&r);
    /* launch overhead is added to the time, not to the cycles */
    tgt.launch_us = 3;
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=1,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 228);
    NEAR(r.time_us, 3.228);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}



static void test_chain_stages(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tt_template *t = tt_sfx_parse(tt_sfx_chain_tmpl);
    tt_sim_result r1, r2;
    /* Copy of a 32x32 fp16 tile: latency 100 + 2048/64 = 32 of data.  A transfer's latency
     * may overlap the previous transfer's data phase on the same unit (the next one starts
     * when the previous one starts moving data); data phases are serial.
     * mma: 20 + 10*2*2*2 = 100.  C out: 32x32 fp32 = 4096 B: 100 + 64 = 164.
     * stages 1 (one slot): A_i waits for mma_{i-1} (WAR):
     *   A0 [0,132] B0 [100,232] mma0 [232,332]; A1 [332,464] B1 [432,564] mma1 [564,664];
     *   period 332: mma3 ends 1328, C out [1328,1492].
     *   slot stalls: A1..A3 each wait 332 - 200 = 132 -> 396. */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "K=128", "S=1", -1, &r1), TT_OK);
    NEAR(r1.cycles, 1492);
    NEAR(r1.stall_cycles[TT_STALL_SLOT], 396);
    NEAR(r1.busy_cycles[TT_UNIT_M], 400);
    NEAR(r1.busy_cycles[TT_UNIT_MTE2], 4 * 232);
    NEAR(r1.busy_cycles[TT_UNIT_FIX], 164);
    /* stages 2 (two slots): the copies of i+1 overlap mma i; MTE2 sets the pace at one
     * latency (100) per copy: A_i starts 200 i, B_i ends 232 + 200 i, mma_i [232+200i, 332+200i]:
     * mma3 ends 932, C out [932,1096]. */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "K=128", "S=2", -1, &r2), TT_OK);
    NEAR(r2.cycles, 1096);
    NEAR(r2.stall_cycles[TT_STALL_SLOT], 0);
    CU_ASSERT(r2.cycles < r1.cycles);
    NEAR(r2.util[TT_UNIT_M], 400.0 / 1096);
    NEAR(r2.busy_cycles[TT_UNIT_MTE2], 832);   /* union of [0,132] [100,232] ... [700,832] */
    /* data stalls: mma0 waits [0,232], mma1..3 wait 100 each, C out waits [0,932] */
    NEAR(r2.stall_cycles[TT_STALL_DATA], 232 + 300 + 932);
    tt_sim_result_close(&r1);
    tt_sim_result_close(&r2);
    /* intra-core flag latency (10) on every cross-unit dependency:
     * mma0 [242,342], mma1 [442,542], mma2 [642,742], mma3 [842,942], C out [952,1116] */
    tgt.flag_cycles = 10;
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "K=128", "S=2", -1, &r2), TT_OK);
    NEAR(r2.cycles, 1116);
    tt_sim_result_close(&r2);
    /* default transfer depth (4 in their latency phase at once, data still serial):
     * A0 B0 A1 B1 all start at 0; data A0 [100,132] B0 [132,164] A1 [164,196] B1 [196,228];
     * mma0 [164,264] mma1 [264,364]; A2/B2 wait for mma0 (slot): latency [264,364], data
     * [364,396] [396,428], mma2 [428,528]; A3/B3 wait for mma1: data [464,496] [496,528],
     * mma3 [528,628]; C out [628,792]. */
    tgt.flag_cycles = 0;
    tgt.dma_outstanding = 0;   /* absent: the default */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "K=128", "S=2", -1, &r2), TT_OK);
    NEAR(r2.cycles, 792);
    tt_sim_result_close(&r2);
    tt_tmpl_free(t);
}

static void test_bandwidth_shared(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 24);
    /* chip memory 240 GB/s at 1000 MHz = 240 B/cycle, L2 the same (hits don't matter) */
    tgt.hbm_gbps = 240;
    tgt.l2_gbps = 240;
    tt_template *t = tt_sfx_parse(COPY_T);
    tt_sim_result r;
    /* 24 blocks on 24 cores, 64 KiB each (R=512): each gets 240/24 = 10 B/cycle < 64:
     * 100 + 65536/10 = 6653.6 cycles; bandwidth stall = 6553.6 - 65536/64 = 5529.6 */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=24,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 6653.6);
    NEAR(r.stall_cycles[TT_STALL_BANDWIDTH], 5529.6);
    CU_ASSERT_EQUAL(r.waves, 1);
    tt_sim_result_close(&r);
    /* one block alone is capped by its path: 100 + 1024 = 1124, no bandwidth stall */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=1,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 1124);
    NEAR(r.stall_cycles[TT_STALL_BANDWIDTH], 0);
    tt_sim_result_close(&r);
    /* 3 blocks: 240/3 = 80 > 64, so the path rate still caps: 1124 */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=3,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 1124);
    tt_sim_result_close(&r);
    /* 5 blocks: 48 B/cycle each: 100 + 65536/48 */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=5,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 100 + 65536.0 / 48);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* Max-min fair shares: a transfer capped by its own path leaves its share to the others. */
static void test_bandwidth_maxmin(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tgt.hbm_gbps = tgt.l2_gbps = tgt.hbm_write_gbps = 40;   /* 40 B/cycle chip-wide */
    tgt.path[TT_PATH_L0C_GM] = (tt_pathcost){8, 100};
    tt_template *t = tt_sfx_parse(
        "{\"tiletune\":1,\"name\":\"mm\",\"version\":\"1\","
        "\"inputs\":{\"N\":{\"type\":\"int\"}},\"params\":{\"S\":[1]},"
        "\"tensors\":{\"A\":{\"shape\":[64,64],\"dtype\":\"float16\"},"
        "\"C\":{\"shape\":[32,32],\"dtype\":\"float32\",\"output\":true}},"
        "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[64,64],\"dtype\":\"float16\"},"
        "\"C_L0\":{\"scope\":\"L0C\",\"shape\":[32,32],\"dtype\":\"float32\"}},"
        "\"kernel\":{\"grid\":{\"bx\":1},\"cores\":\"cube\",\"body\":["
        "{\"copy\":[\"gm:A\",\"A_L1\"],\"along\":[\"bx\"]},"
        "{\"copy\":[\"C_L0\",\"gm:C\"],\"along\":[\"bx\"]}]}}");
    tt_sim_result r;
    /* both start moving data at 100.  Fair share 20 each; FIXPIPE is capped at 8, so MTE2
     * gets 40 - 8 = 32: 8192 B in 256 cycles -> [100,356]; FIXPIPE 4096 B at 8 -> [100,612].
     * Bandwidth stall: MTE2 256 - 8192/64 = 128 (FIXPIPE runs at its own cap: 0). */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "N=1", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 612);
    NEAR(r.busy_cycles[TT_UNIT_MTE2], 356);
    NEAR(r.busy_cycles[TT_UNIT_FIX], 612);
    NEAR(r.stall_cycles[TT_STALL_BANDWIDTH], 128);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

static void test_tail_wave(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 24);
    tt_template *t = tt_sfx_parse(COPY_T);
    tt_sim_result r;
    /* no shared limit: every block takes 228; 25 blocks = 2 waves = 456 */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=25,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 456);
    CU_ASSERT_EQUAL(r.blocks, 25);
    CU_ASSERT_EQUAL(r.waves, 2);
    CU_ASSERT_EQUAL(r.waves_simulated, 2);
    tt_sim_result_close(&r);
    /* 72 blocks = 3 identical waves, simulated once */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=72,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 3 * 228);
    CU_ASSERT_EQUAL(r.waves, 3);
    CU_ASSERT_EQUAL(r.waves_simulated, 1);
    /* the representative core is busy in all three waves */
    NEAR(r.busy_cycles[TT_UNIT_MTE2], 3 * 228);
    tt_sim_result_close(&r);
    /* the trace of core 5 shows the folded waves at their start times: 0, 228, 456 cycles */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=72,R=64", "S=1", 5, &r), TT_OK);
    CU_ASSERT_EQUAL(r.waves_simulated, 1);
    json_error_t je;
    json_t *doc = json_loads(r.trace_json ? r.trace_json : "", 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    size_t i, nx = 0;
    json_t *ev;
    json_array_foreach(doc, i, ev) {
        if (strcmp(json_string_value(json_object_get(ev, "ph")), "X") != 0) continue;
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(ev, "pid")), 5);
        CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(ev, "ts")), 0.228 * (double)nx, 1e-6);
        nx++;
    }
    CU_ASSERT_EQUAL(nx, 3);
    json_decref(doc);
    tt_sim_result_close(&r);
    /* with shared bandwidth the tail block runs alone at its path rate:
     * 6653.6 (24 sharing) + 1124 (alone) */
    tgt.hbm_gbps = tgt.l2_gbps = 240;
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=25,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 6653.6 + 1124);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* Cube loads A and writes it to a GM workspace, then flags the vector cores, which read it,
 * apply exp and write O. */
static const char *MIX_T =
    "{\"tiletune\":1,\"name\":\"handoff\",\"version\":\"1\","
    "\"inputs\":{\"NB\":{\"type\":\"int\"}},"
    "\"params\":{\"S\":[1]},"
    "\"tensors\":{\"A\":{\"shape\":[\"NB\",64,64],\"dtype\":\"float16\"},"
    "\"W\":{\"shape\":[\"NB\",64,64],\"dtype\":\"float16\",\"workspace\":true},"
    "\"O\":{\"shape\":[\"NB\",64,64],\"dtype\":\"float16\",\"output\":true}},"
    "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[64,64],\"dtype\":\"float16\"},"
    "\"X_UB\":{\"scope\":\"UB\",\"shape\":[32,64],\"dtype\":\"float16\"}},"
    "\"kernel\":{\"grid\":{\"bx\":\"NB\"},\"cores\":\"mix\",\"body\":["
    "{\"copy\":[\"gm:A\",\"A_L1\"],\"along\":[\"bx\"]},"
    "{\"copy\":[\"A_L1\",\"gm:W\"],\"along\":[\"bx\"]},"
    "{\"sync\":\"cross\",\"from\":\"cube\",\"to\":\"vector\",\"flag\":0},"
    "{\"copy\":[\"gm:W\",\"X_UB\"],\"along\":[\"bx\"]},"
    "{\"vec\":\"exp\",\"out\":\"X_UB\",\"in\":[\"X_UB\"]},"
    "{\"copy\":[\"X_UB\",\"gm:O\"],\"along\":[\"bx\"]}]}}";

static void test_cross_core(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tt_template *t = tt_sfx_parse(MIX_T);
    tt_sim_result r;
    /* cube: A GM->L1 [0,228] (8192 B), L1->GM [228,456], set at 456, visible at 456+50.
     * each vector core takes half the rows (its UB buffer is 32x64 = 4096 B): wait until 506, GM->UB 100+64 = 164
     * [506,670], exp 10 + 4096/32 = 138 [670,808], UB->GM [808,972]. */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=1", "S=1", 0, &r), TT_OK);
    NEAR(r.cycles, 972);
    NEAR(r.busy_cycles[TT_UNIT_V], 138);
    NEAR(r.busy_cycles[TT_UNIT_MTE3], 228);
    /* the vector cores idle for the flag: at least 506 on their scalar unit */
    CU_ASSERT(r.stall_cycles[TT_STALL_FLAG] >= 506 - 1e-6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.trace_json);
    json_error_t je;
    json_t *doc = json_loads(r.trace_json, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT(json_is_array(doc));
    int waits = 0, exps = 0, names = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(doc, i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *nm = json_string_value(json_object_get(ev, "name"));
        CU_ASSERT_PTR_NOT_NULL(ph);
        CU_ASSERT_PTR_NOT_NULL(nm);
        if (!ph || !nm) continue;
        if (strcmp(ph, "M") == 0 && strcmp(nm, "thread_name") == 0) names++;
        if (strcmp(ph, "X") != 0) continue;
        CU_ASSERT(json_is_number(json_object_get(ev, "ts")));
        CU_ASSERT(json_is_number(json_object_get(ev, "dur")));
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(ev, "pid")), 0);
        CU_ASSERT(json_is_integer(json_object_get(json_object_get(ev, "args"), "slot")));
        if (strcmp(nm, "wait cross flag") == 0) {
            waits++;
            /* ends when the flag is visible: 0.506 us */
            CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(ev, "ts")) +
                                       json_number_value(json_object_get(ev, "dur")), 0.506, 1e-3);
        }
        if (strcmp(nm, "exp") == 0) {
            exps++;
            CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(ev, "ts")), 0.670, 1e-3);
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(ev, "args"), "op")),
                                   "kernel.body[4]");
        }
    }
    CU_ASSERT_EQUAL(waits, 2);   /* one per vector core */
    CU_ASSERT_EQUAL(exps, 2);
    CU_ASSERT_EQUAL(names, 3 * TT_UNIT__COUNT);
    json_decref(doc);
    tt_sim_result_close(&r);
    CU_ASSERT_PTR_NULL(r.trace_json);
    /* a core out of range is refused */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=1", "S=1", 5, &r), TT_EINVAL);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* A cross SET goes on the pipe of the write it follows, not on the scalar queue: in a
 * software-pipelined loop the cube's wait for the vector's hand-off (slot 1 issues seg0(1),
 * then seg1(0)) must not sit behind the SET of its next write.  Loop of 2, stages 2, depth-1
 * DMA, flags visible 50 cycles after the SET:
 * cube MTE3: W write(0) (16384 B) [0,356], SET f0(0) -> 406; write(1) [356,712] (its latency
 * no longer hides under write(0)'s data: the SET holds the pipe), SET f0(1) -> 762.
 * vector (8x64 fp16): wait f0(0) 406, exp [406,448], SET f1(0) -> 498; wait f0(1) 762,
 * exp [762,804], SET f1(1) -> 854.
 * cube MTE2 (32768 B each, 612 cycles): wait f1(0) 498, B load(0) [498,1110]; wait f1(1)
 * 854, load(1) [1110,1722]: 1722 cycles.
 * Before, the wait for f1(0) queued behind SET f0(1) (612) on the scalar unit: load(0)
 * [612,1224], load(1) [1224,1836]: 1836 cycles. */
#define SETQ_DOC(EVERY)                                                                       \
    "{\"tiletune\":1,\"name\":\"setq\",\"version\":\"1\","                                     \
    "\"inputs\":{\"NB\":{\"type\":\"int\"}},"                                                 \
    "\"params\":{\"S\":[2]},"                                                                  \
    "\"tensors\":{\"A\":{\"shape\":[\"NB\",2,64,256],\"dtype\":\"float16\"},"                \
    "\"W\":{\"shape\":[\"NB\",2,64,128],\"dtype\":\"float16\",\"workspace\":true}},"         \
    "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[64,128],\"dtype\":\"float16\"},"      \
    "\"B_L1\":{\"scope\":\"L1\",\"shape\":[64,256],\"dtype\":\"float16\"},"                   \
    "\"X_UB\":{\"scope\":\"UB\",\"shape\":[8,64],\"dtype\":\"float16\"}},"                     \
    "\"kernel\":{\"grid\":{\"bx\":\"NB\"},\"cores\":\"mix\",\"body\":["                      \
    "{\"for\":\"i\",\"trip\":2,\"stages\":\"S\",\"body\":["                                  \
    "{\"copy\":[\"A_L1\",\"gm:W\"],\"along\":[\"bx\",\"i\"]},"                               \
    "{\"sync\":\"cross\",\"from\":\"cube\",\"to\":\"vector\",\"flag\":0" EVERY "},"          \
    "{\"vec\":\"exp\",\"out\":\"X_UB\",\"in\":[\"X_UB\"]},"                                  \
    "{\"sync\":\"cross\",\"from\":\"vector\",\"to\":\"cube\",\"flag\":1" EVERY "},"          \
    "{\"copy\":[\"gm:A\",\"B_L1\"],\"along\":[\"bx\",\"i\"]}]}]}}"
static const char *SETQ_T = SETQ_DOC("");

static void test_set_on_pipe(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tt_template *t = tt_sfx_parse(SETQ_T);
    tt_sim_result r;
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=1", "S=2", -1, &r), TT_OK);
    NEAR(r.cycles, 1722);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* Batched hand-offs (SETQ_T with "every": 2 on both syncs): the producer sets after iteration 1
 * (the batch's last) only, the consumer waits before iteration 0 only, so each side has one
 * SET and one WAIT in the trace and nothing deadlocks; with stages 2 and trip 2 the cube's
 * B loads wait for the vector's single P flag, which needs both W writes: later than with
 * a flag per iteration (1722 cycles). */
static const char *SETQ_EVERY_T = SETQ_DOC(",\"every\":2");

static void test_every(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tt_template *t = tt_sfx_parse(SETQ_EVERY_T);
    tt_sim_result r;
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=1", "S=2", 0, &r), TT_OK);
    CU_ASSERT(r.cycles > 1722);
    json_error_t je;
    json_t *tr = json_loads(r.trace_json, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tr);
    int sets = 0, waits = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(tr, i, ev) {
        const char *nm = json_string_value(json_object_get(ev, "name"));
        if (!nm || strcmp(json_string_value(json_object_get(ev, "ph")), "X") != 0) continue;
        if (strcmp(nm, "set cross flag") == 0) sets++;
        if (strcmp(nm, "wait cross flag") == 0) waits++;
    }
    CU_ASSERT_EQUAL(sets, 1 + 2);    /* the cube's, and one per vector core */
    CU_ASSERT_EQUAL(waits, 1 + 2);
    json_decref(tr);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* The engine itself: a vector agent waiting for a flag nobody sets. */
static void test_deadlock(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tt__sim s;
    memset(&s, 0, sizeof s);
    s.tgt = &tgt;
    s.vec_split = 1;
    s.vec_cores = 2;
    s.dma_depth = 1;
    tt__sgroup g;
    memset(&g, 0, sizeof g);
    g.weight = 1;
    tt__sinst ins[2];
    memset(ins, 0, sizeof ins);
    ins[0] = (tt__sinst){.dur = 10, .op = -1, .slot = -1, .unit = TT_UNIT_MTE2, .kind = TT__SI_FIXED};
    ins[1] = (tt__sinst){.op = -1, .slot = -1, .unit = TT_UNIT_S, .kind = TT__SI_WAIT,
                         .flag = 3, .dir = TT__DIR_C2V};
    tt__sinst cube = {.dur = 5, .op = -1, .slot = -1, .unit = TT_UNIT_M, .kind = TT__SI_FIXED};
    g.prog[TT__AG_VEC] = (tt__sprog){.ins = ins, .n = 2};
    g.prog[TT__AG_CUBE] = (tt__sprog){.ins = &cube, .n = 1};
    tt__swave w;
    char reason[160] = "";
    CU_ASSERT_EQUAL(tt__sim_wave(&s, &g, 1, 0, 1000, &w, reason, sizeof reason), TT_EDEADLOCK);
    CU_ASSERT_PTR_NOT_NULL(strstr(reason, "cross flag 3"));
    CU_ASSERT_PTR_NOT_NULL(strstr(reason, "never set"));
    /* with the matching set on the cube side it completes: set at 5, visible 55 */
    tt__sinst cube2[2] = {cube, {.op = -1, .slot = -1, .unit = TT_UNIT_S, .kind = TT__SI_SET,
                                 .flag = 3, .dir = TT__DIR_C2V}};
    uint32_t deps[1] = {TT__DEP_WORD(0, TT__DEP_RAW, 1)};   /* M -> S */
    cube2[1].dep_off = 0;
    cube2[1].ndeps = 1;
    g.prog[TT__AG_CUBE] = (tt__sprog){.ins = cube2, .n = 2, .deps = deps, .ndeps = 1};
    CU_ASSERT_EQUAL(tt__sim_wave(&s, &g, 1, 0, 1000, &w, reason, sizeof reason), TT_OK);
    NEAR(w.cycles, 55);
    tt__swave_free(&w);
}

static void test_limits_and_refusals(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tt_template *t = tt_sfx_parse(tt_sfx_chain_tmpl);
    int64_t slots[TT_MAX_SLOTS];
    tt_sim_result r;
    /* event guard */
    tt_sfx_mk_slots(t, "K=4096", "S=2", slots);
    tt_sim_opts o = {.trace_core = -1, .max_events = 10, .shortcut_ops = -1};
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &r), TT_ELIMIT);
    CU_ASSERT_EQUAL(r.rc, TT_ELIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "max_events"));
    tt_sim_result_close(&r);
    /* a loop of 2^31 trips: its program is refused while it is being built (it would take
     * minutes and gigabytes before the event guard could act), with the default budget too */
    tt_sfx_mk_slots(t, "K=68719476736", "S=2", slots);
    tt_sim_opts big = {.trace_core = -1, .shortcut_ops = -1};
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &big, &r), TT_ELIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "instructions in one core's program"));
    tt_sim_result_close(&r);
    o.max_events = 1000;
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &r), TT_ELIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "more than 1000 instructions"));
    tt_sim_result_close(&r);
    /* infeasible: A_L0 needs 2 x 2048 B with S=2; give L0A 3000 B.  The reason must be the
     * space's own */
    tgt.caps.cap[TT_SCOPE_L0A] = 3000;
    tt_sfx_mk_slots(t, "K=128", "S=2", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, NULL, &r), TT_EINFEASIBLE);
    tt_space *sp = NULL;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, slots, &tgt.caps, &sp, &err), TT_OK);
    CU_ASSERT_EQUAL(tt_space_check(sp, slots, &err), TT_EINFEASIBLE);
    CU_ASSERT_STRING_EQUAL(r.reason, err.msg);
    CU_ASSERT(strlen(r.reason) > 0);
    tt_space_free(sp);
    tt_sim_result_close(&r);
    /* S=1 fits */
    tt_sfx_mk_slots(t, "K=128", "S=1", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, NULL, &r), TT_OK);
    NEAR(r.cycles, 1492);
    tt_sim_result_close(&r);
    /* a template without a kernel */
    tt_template *nk = tt_sfx_parse("{\"tiletune\":1,\"name\":\"nk\",\"version\":\"1\","
                            "\"inputs\":{\"N\":{\"type\":\"int\"}},\"params\":{\"x\":[1,2]}}");
    tt_sfx_mk_slots(nk, "N=4", "x=1", slots);
    CU_ASSERT_EQUAL(tt_sim_run(nk, &tgt, slots, NULL, &r), TT_EUNSUPPORTED);
    CU_ASSERT(strlen(r.reason) > 0);
    tt_tmpl_free(nk);
    CU_ASSERT_EQUAL(tt_sim_run(NULL, &tgt, slots, NULL, &r), TT_EINVAL);
    tt_tmpl_free(t);
}


/* A GEMM trace opens as JSON with one complete event per instruction of the traced core. */
static void test_trace_gemm(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 2);
    tt_template *t = tt_sfx_parse(tt_sfx_chain_tmpl);
    tt_sim_result r;
    json_error_t je;
    /* one block: core 1 idles, its trace has metadata only */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "K=128", "S=2", 1, &r), TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.trace_json);
    json_t *doc = json_loads(r.trace_json, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    size_t nmeta = json_array_size(doc);
    CU_ASSERT(nmeta > 0);
    for (size_t k = 0; k < nmeta; k++)
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(doc, k), "ph")), "M");
    json_decref(doc);
    tt_sim_result_close(&r);
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "K=128", "S=2", 0, &r), TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.trace_json);
    NEAR(r.cycles, 1096);   /* tracing does not change the result */
    doc = json_loads(r.trace_json, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    size_t i, nx = 0, nmma = 0;
    json_t *ev;
    double last_mma_end = 0;
    json_array_foreach(doc, i, ev) {
        if (strcmp(json_string_value(json_object_get(ev, "ph")), "X") != 0) continue;
        nx++;
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(ev, "pid")), 0);
        if (strcmp(json_string_value(json_object_get(ev, "name")), "mma") == 0) {
            nmma++;
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(ev, "tid")), TT_UNIT_M);
            double end = json_number_value(json_object_get(ev, "ts")) +
                         json_number_value(json_object_get(ev, "dur"));
            if (end > last_mma_end) last_mma_end = end;
        }
    }
    CU_ASSERT_EQUAL(nx, 4 * 3 + 1);   /* 4 x (A, B, mma) + C out */
    CU_ASSERT_EQUAL(nmma, 4);
    CU_ASSERT_DOUBLE_EQUAL(last_mma_end, 0.932, 1e-6);   /* 932 cycles at 1000 MHz */
    json_decref(doc);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* Persistent kernels: 2 launched blocks walk 5 grid points (3 and 2) in sequence. */
static void test_persistent(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 24);
    tt_template *t = tt_sfx_parse(
        "{\"tiletune\":1,\"name\":\"pers\",\"version\":\"1\","
        "\"inputs\":{\"NB\":{\"type\":\"int\"},\"P\":{\"type\":\"int\"}},"
        "\"params\":{\"S\":[1,2]},"
        "\"tensors\":{\"A\":{\"shape\":[\"NB\",64,64],\"dtype\":\"float16\"}},"
        "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[64,64],\"dtype\":\"float16\",\"copies\":\"S\"}},"
        "\"kernel\":{\"grid\":{\"bx\":\"NB\"},\"cores\":\"cube\",\"persistent\":\"P\",\"body\":["
        "{\"copy\":[\"gm:A\",\"A_L1\"],\"along\":[\"bx\"]}]}}");
    tt_sim_result r;
    /* one slot: each copy waits for the previous one into the same slot: 3 x 228 */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=5,P=2", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 3 * 228);
    CU_ASSERT_EQUAL(r.blocks, 5);
    CU_ASSERT_EQUAL(r.waves, 1);
    tt_sim_result_close(&r);
    /* two slots: the second copy's latency overlaps the first's data:
     * [0,228], latency [100,200] data [228,356], third (slot 0, after the first) latency
     * [228,328] data [356,484] */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=5,P=2", "S=2", -1, &r), TT_OK);
    NEAR(r.cycles, 484);
    tt_sim_result_close(&r);
    /* 30 launched blocks over 24 cores: two waves, 1 grid point each, the second partial */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=30,P=30", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 2 * 228);
    CU_ASSERT_EQUAL(r.waves, 2);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* Per-block dispatch cost from the target's overheads.block_cycles. */
static void test_block_cycles(void)
{
    tt_target tgt;
    tt_sfx_mk_target(&tgt, 1);
    tgt.block_cycles = 50;
    tt_template *t = tt_sfx_parse(COPY_T);
    tt_sim_result r;
    /* 50 + 228 per block, two blocks on one core = two waves */
    CU_ASSERT_EQUAL(tt_sfx_sim(t, &tgt, "NB=2,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 2 * 278);
    NEAR(r.busy_cycles[TT_UNIT_S], 2 * 50);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

static const tt_test_case rules_cases[] = {
    {"single_copy", test_single_copy},
    {"chain_stages", test_chain_stages},
    {"bandwidth_shared", test_bandwidth_shared},
    {"bandwidth_maxmin", test_bandwidth_maxmin},
    {"tail_wave", test_tail_wave},
    {"cross_core", test_cross_core},
    {"set_on_pipe", test_set_on_pipe},
    {"every", test_every},
    {"deadlock", test_deadlock},
    {"limits_and_refusals", test_limits_and_refusals},
    {"trace_gemm", test_trace_gemm},
    {"persistent", test_persistent},
    {"block_cycles", test_block_cycles},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"sim_rules", NULL, NULL, rules_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

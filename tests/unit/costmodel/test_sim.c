/* SPDX-License-Identifier: MIT
 * test_sim.c - the pipeline simulator on hand-computed cases: a single copy, copy -> mma with
 * stages 1 vs 2, 24 cores sharing HBM, a tail wave, a cube -> vector hand-off, deadlock and
 * event-limit guards, infeasible refusal, determinism, the steady-state shortcut against full
 * simulation, and the trace.  All expected cycle counts are computed by hand in the comments
 * from a made-up round-number target (1000 MHz, rates 64 B/cycle, latency 100): they check
 * the simulator's rules, not the chip (the simulator is a model).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_int.h"
#include "space.h"
#include "target.h"
#include "template.h"
#include "tt_test.h"

#define NEAR(a, b) CU_ASSERT_DOUBLE_EQUAL((a), (b), 1e-6 * (fabs((double)(b)) + 1))

/* Round-number target: 1000 MHz, every path 64 B/cycle + 100 cycles, no shared-memory
 * limit (hbm_gbps = 0) unless a test sets one, no issue/flag/launch overheads, one GM
 * transfer per unit in its latency phase at a time (dma_outstanding 1: keeps the arithmetic
 * short). */
static void mk_target(tt_target *t, int cores)
{
    memset(t, 0, sizeof *t);
    t->dma_outstanding = 1;
    snprintf(t->name, sizeof t->name, "test%d", cores);
    snprintf(t->platform, sizeof t->platform, "A2");
    t->cube_cores = cores;
    t->vector_cores = 2 * cores;
    t->clock_mhz = 1000;
    for (int s = 0; s < TT_SCOPE__COUNT; s++) {
        t->caps.cap[s] = 1 << 20;
        t->caps.align[s] = 32;
    }
    t->caps.cap[TT_SCOPE_L0A] = 65536;
    for (int p = 0; p < TT_PATH__COUNT; p++) t->path[p] = (tt_pathcost){64, 100};
    t->gm_l1_nd2nz = (tt_pathcost){32, 200};
    t->cube_fixed_cycles = 20;
    t->cube_c[TT_DT_FLOAT16] = 10;
    for (int c = 0; c < TT_V__COUNT; c++) {
        t->vec_bytes_per_cycle[c][0] = 32;
        t->vec_bytes_per_cycle[c][1] = 32;
        t->vec_head_cycles[c] = 10;
    }
    t->cross_sync_cycles = 50;
    t->l2_bytes = 1e9;
    t->l2_resident_bytes = 1e9;
}

static tt_template *parse(const char *text)
{
    tt_template *t = NULL;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_tmpl_parse_string(text, strlen(text), NULL, &t, &err);
    if (rc) fprintf(stderr, "template: %s: %s\n", err.path, err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    return t;
}

/* slots from "k=v,..." problem and config strings */
static void mk_slots(const tt_template *t, const char *prob, const char *cfg, int64_t *slots)
{
    tt_errinfo err;
    memset(slots, 0, TT_MAX_SLOTS * sizeof *slots);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, prob, slots, &err), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, cfg, slots, &err), TT_OK);
}

static tt_rc sim(const tt_template *t, const tt_target *tgt, const char *prob, const char *cfg,
                 int trace_core, tt_sim_result *r)
{
    int64_t slots[TT_MAX_SLOTS];
    mk_slots(t, prob, cfg, slots);
    tt_sim_opts o = {.trace_core = trace_core};
    return tt_sim_run(t, tgt, slots, &o, r);
}

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
    mk_target(&tgt, 1);
    tt_template *t = parse(COPY_T);
    tt_sim_result r;
    /* 64x64 fp16 = 8192 B: 100 + 8192/64 = 228 cycles = 0.228 us at 1000 MHz */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=1,R=64", "S=1", -1, &r), TT_OK);
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
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=1,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 228);
    NEAR(r.time_us, 3.228);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* k loop of 4: A and B tiles GM->L0A/L0B (MTE2), mma into C (M), then C -> GM (FIX). */
static const char *CHAIN_T =
    "{\"tiletune\":1,\"name\":\"chain\",\"version\":\"1\","
    "\"inputs\":{\"K\":{\"type\":\"int\"}},"
    "\"params\":{\"S\":[1,2]},"
    "\"tensors\":{\"A\":{\"shape\":[32,\"K\"],\"dtype\":\"float16\"},"
    "\"B\":{\"shape\":[\"K\",32],\"dtype\":\"float16\"},"
    "\"C\":{\"shape\":[32,32],\"dtype\":\"float32\",\"output\":true}},"
    "\"buffers\":{\"A_L0\":{\"scope\":\"L0A\",\"shape\":[32,32],\"dtype\":\"float16\",\"copies\":\"S\"},"
    "\"B_L0\":{\"scope\":\"L0B\",\"shape\":[32,32],\"dtype\":\"float16\",\"copies\":\"S\"},"
    "\"C_L0\":{\"scope\":\"L0C\",\"shape\":[32,32],\"dtype\":\"float32\"}},"
    "\"kernel\":{\"grid\":{\"bx\":1},\"cores\":\"cube\",\"body\":["
    "{\"for\":\"k\",\"trip\":\"K // 32\",\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"gm:A\",\"A_L0\"],\"along\":[\"k\"]},"
    "{\"copy\":[\"gm:B\",\"B_L0\"],\"along\":[\"k\"]},"
    "{\"mma\":[\"A_L0\",\"B_L0\",\"C_L0\"],\"init\":false}]},"
    "{\"copy\":[\"C_L0\",\"gm:C\"],\"along\":[\"bx\"]}]}}";

static void test_chain_stages(void)
{
    tt_target tgt;
    mk_target(&tgt, 1);
    tt_template *t = parse(CHAIN_T);
    tt_sim_result r1, r2;
    /* Copy of a 32x32 fp16 tile: latency 100 + 2048/64 = 32 of data.  A transfer's latency
     * may overlap the previous transfer's data phase on the same unit (the next one starts
     * when the previous one starts moving data); data phases are serial.
     * mma: 20 + 10*2*2*2 = 100.  C out: 32x32 fp32 = 4096 B: 100 + 64 = 164.
     * stages 1 (one slot): A_i waits for mma_{i-1} (WAR):
     *   A0 [0,132] B0 [100,232] mma0 [232,332]; A1 [332,464] B1 [432,564] mma1 [564,664];
     *   period 332: mma3 ends 1328, C out [1328,1492].
     *   slot stalls: A1..A3 each wait 332 - 200 = 132 -> 396. */
    CU_ASSERT_EQUAL(sim(t, &tgt, "K=128", "S=1", -1, &r1), TT_OK);
    NEAR(r1.cycles, 1492);
    NEAR(r1.stall_cycles[TT_STALL_SLOT], 396);
    NEAR(r1.busy_cycles[TT_UNIT_M], 400);
    NEAR(r1.busy_cycles[TT_UNIT_MTE2], 4 * 232);
    NEAR(r1.busy_cycles[TT_UNIT_FIX], 164);
    /* stages 2 (two slots): the copies of i+1 overlap mma i; MTE2 sets the pace at one
     * latency (100) per copy: A_i starts 200 i, B_i ends 232 + 200 i, mma_i [232+200i, 332+200i]:
     * mma3 ends 932, C out [932,1096]. */
    CU_ASSERT_EQUAL(sim(t, &tgt, "K=128", "S=2", -1, &r2), TT_OK);
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
    CU_ASSERT_EQUAL(sim(t, &tgt, "K=128", "S=2", -1, &r2), TT_OK);
    NEAR(r2.cycles, 1116);
    tt_sim_result_close(&r2);
    /* default transfer depth (4 in their latency phase at once, data still serial):
     * A0 B0 A1 B1 all start at 0; data A0 [100,132] B0 [132,164] A1 [164,196] B1 [196,228];
     * mma0 [164,264] mma1 [264,364]; A2/B2 wait for mma0 (slot): latency [264,364], data
     * [364,396] [396,428], mma2 [428,528]; A3/B3 wait for mma1: data [464,496] [496,528],
     * mma3 [528,628]; C out [628,792]. */
    tgt.flag_cycles = 0;
    tgt.dma_outstanding = 0;   /* absent: the default */
    CU_ASSERT_EQUAL(sim(t, &tgt, "K=128", "S=2", -1, &r2), TT_OK);
    NEAR(r2.cycles, 792);
    tt_sim_result_close(&r2);
    tt_tmpl_free(t);
}

static void test_bandwidth_shared(void)
{
    tt_target tgt;
    mk_target(&tgt, 24);
    /* chip memory 240 GB/s at 1000 MHz = 240 B/cycle, L2 the same (hits don't matter) */
    tgt.hbm_gbps = 240;
    tgt.l2_gbps = 240;
    tt_template *t = parse(COPY_T);
    tt_sim_result r;
    /* 24 blocks on 24 cores, 64 KiB each (R=512): each gets 240/24 = 10 B/cycle < 64:
     * 100 + 65536/10 = 6653.6 cycles; bandwidth stall = 6553.6 - 65536/64 = 5529.6 */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=24,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 6653.6);
    NEAR(r.stall_cycles[TT_STALL_BANDWIDTH], 5529.6);
    CU_ASSERT_EQUAL(r.waves, 1);
    tt_sim_result_close(&r);
    /* one block alone is capped by its path: 100 + 1024 = 1124, no bandwidth stall */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=1,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 1124);
    NEAR(r.stall_cycles[TT_STALL_BANDWIDTH], 0);
    tt_sim_result_close(&r);
    /* 3 blocks: 240/3 = 80 > 64, so the path rate still caps: 1124 */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=3,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 1124);
    tt_sim_result_close(&r);
    /* 5 blocks: 48 B/cycle each: 100 + 65536/48 */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=5,R=512", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 100 + 65536.0 / 48);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* Max-min fair shares: a transfer capped by its own path leaves its share to the others. */
static void test_bandwidth_maxmin(void)
{
    tt_target tgt;
    mk_target(&tgt, 1);
    tgt.hbm_gbps = tgt.l2_gbps = tgt.hbm_write_gbps = 40;   /* 40 B/cycle chip-wide */
    tgt.path[TT_PATH_L0C_GM] = (tt_pathcost){8, 100};
    tt_template *t = parse(
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
    CU_ASSERT_EQUAL(sim(t, &tgt, "N=1", "S=1", -1, &r), TT_OK);
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
    mk_target(&tgt, 24);
    tt_template *t = parse(COPY_T);
    tt_sim_result r;
    /* no shared limit: every block takes 228; 25 blocks = 2 waves = 456 */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=25,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 456);
    CU_ASSERT_EQUAL(r.blocks, 25);
    CU_ASSERT_EQUAL(r.waves, 2);
    CU_ASSERT_EQUAL(r.waves_simulated, 2);
    tt_sim_result_close(&r);
    /* 72 blocks = 3 identical waves, simulated once */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=72,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 3 * 228);
    CU_ASSERT_EQUAL(r.waves, 3);
    CU_ASSERT_EQUAL(r.waves_simulated, 1);
    /* the representative core is busy in all three waves */
    NEAR(r.busy_cycles[TT_UNIT_MTE2], 3 * 228);
    tt_sim_result_close(&r);
    /* the trace of core 5 shows the folded waves at their start times: 0, 228, 456 cycles */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=72,R=64", "S=1", 5, &r), TT_OK);
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
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=25,R=512", "S=1", -1, &r), TT_OK);
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
    mk_target(&tgt, 1);
    tt_template *t = parse(MIX_T);
    tt_sim_result r;
    /* cube: A GM->L1 [0,228] (8192 B), L1->GM [228,456], set at 456, visible at 456+50.
     * each vector core takes half the rows (its UB buffer is 32x64 = 4096 B): wait until 506, GM->UB 100+64 = 164
     * [506,670], exp 10 + 4096/32 = 138 [670,808], UB->GM [808,972]. */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=1", "S=1", 0, &r), TT_OK);
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
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=1", "S=1", 5, &r), TT_EINVAL);
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
    mk_target(&tgt, 1);
    tt_template *t = parse(SETQ_T);
    tt_sim_result r;
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=1", "S=2", -1, &r), TT_OK);
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
    mk_target(&tgt, 1);
    tt_template *t = parse(SETQ_EVERY_T);
    tt_sim_result r;
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=1", "S=2", 0, &r), TT_OK);
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
    mk_target(&tgt, 1);
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
    mk_target(&tgt, 1);
    tt_template *t = parse(CHAIN_T);
    int64_t slots[TT_MAX_SLOTS];
    tt_sim_result r;
    /* event guard */
    mk_slots(t, "K=4096", "S=2", slots);
    tt_sim_opts o = {.trace_core = -1, .max_events = 10, .shortcut_ops = -1};
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &r), TT_ELIMIT);
    CU_ASSERT_EQUAL(r.rc, TT_ELIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.reason, "max_events"));
    tt_sim_result_close(&r);
    /* infeasible: A_L0 needs 2 x 2048 B with S=2; give L0A 3000 B.  The reason must be the
     * space's own */
    tgt.caps.cap[TT_SCOPE_L0A] = 3000;
    mk_slots(t, "K=128", "S=2", slots);
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
    mk_slots(t, "K=128", "S=1", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, NULL, &r), TT_OK);
    NEAR(r.cycles, 1492);
    tt_sim_result_close(&r);
    /* a template without a kernel */
    tt_template *nk = parse("{\"tiletune\":1,\"name\":\"nk\",\"version\":\"1\","
                            "\"inputs\":{\"N\":{\"type\":\"int\"}},\"params\":{\"x\":[1,2]}}");
    mk_slots(nk, "N=4", "x=1", slots);
    CU_ASSERT_EQUAL(tt_sim_run(nk, &tgt, slots, NULL, &r), TT_EUNSUPPORTED);
    CU_ASSERT(strlen(r.reason) > 0);
    tt_tmpl_free(nk);
    CU_ASSERT_EQUAL(tt_sim_run(NULL, &tgt, slots, NULL, &r), TT_EINVAL);
    tt_tmpl_free(t);
}

static void test_determinism_and_shortcut(void)
{
    tt_target tgt;
    mk_target(&tgt, 24);
    tgt.hbm_gbps = 600;
    tgt.l2_gbps = 2000;
    tgt.issue_cycles = 1;
    tgt.flag_cycles = 3;
    tt_template *t = parse(CHAIN_T);
    int64_t slots[TT_MAX_SLOTS];
    tt_sim_result a, b, full;
    mk_slots(t, "K=8192", "S=2", slots);
    tt_sim_opts o = {.trace_core = -1};
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &a), TT_OK);
    mk_slots(t, "K=8192", "S=2", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &b), TT_OK);
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
    /* 256 iterations x 3 instructions > 4096? no: force the shortcut with a small limit and
     * compare with the full simulation: the steady state is periodic, so linear
     * extrapolation is exact up to rounding. */
    o.shortcut_ops = 64;
    mk_slots(t, "K=8192", "S=2", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &a), TT_OK);
    CU_ASSERT_EQUAL(a.extrapolated, 1);
    o.shortcut_ops = -1;
    mk_slots(t, "K=8192", "S=2", slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, &tgt, slots, &o, &full), TT_OK);
    CU_ASSERT_EQUAL(full.extrapolated, 0);
    CU_ASSERT(full.events > a.events);
    CU_ASSERT_DOUBLE_EQUAL(a.cycles, full.cycles, 1e-6 * full.cycles);
    for (int u = 0; u < TT_UNIT__COUNT; u++)
        CU_ASSERT_DOUBLE_EQUAL(a.busy_cycles[u], full.busy_cycles[u], 1e-6 * full.cycles);
    tt_tmpl_free(t);
}

/* Fidelity: the published GEMM points of shared/ascend/calibration.json (A3 die, 24 cores,
 * fp16 in, fp32 out, 128x256x64, K_L1 256, double-buffered) against the simulator with the
 * committed A3 target file: within 15 %.  The simulator is a model; these are the chip. */
static void test_calibration_gemm(void)
{
    char *tdir = tt_test_src("costmodel/targets");
    char *gpath = tt_test_src("templates/gemm.json");
    char *cpath = tt_test_shared("ascend/calibration.json");
    tt_targets *ts = NULL;
    tt_template *gemm = NULL;
    tt_errinfo err;
    json_error_t je;
    json_t *doc = json_load_file(cpath, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL_FATAL(tt_targets_load_dir(tdir, &ts, &err), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(gpath, &gemm, &err), TT_OK);
    const tt_target *tgt = tt_targets_find(ts, "Ascend910_9391");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
    CU_ASSERT_EQUAL(tgt->cube_cores, 24);
    int checked = 0;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(doc, "points"), i, p) {
        const char *kern = json_string_value(json_object_get(p, "kernel"));
        if (!kern || strcmp(kern, "gemm") != 0) continue;
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(p, "soc")), "a3-die-24core");
        json_t *pr = json_object_get(p, "problem"), *cf = json_object_get(p, "config");
        char prob[160], cfg[160];
        snprintf(prob, sizeof prob, "M=%lld,N=%lld,K=%lld,dtype=%s,out_dtype=%s",
                 (long long)json_integer_value(json_object_get(pr, "M")),
                 (long long)json_integer_value(json_object_get(pr, "N")),
                 (long long)json_integer_value(json_object_get(pr, "K")),
                 json_string_value(json_object_get(pr, "dtype")),
                 json_string_value(json_object_get(pr, "out")));
        int db = json_is_true(json_object_get(cf, "double_buffer"));
        /* the PTO-ISA kernel runs one block per core, each walking its tiles (core_num) */
        snprintf(cfg, sizeof cfg, "block_M=%lld,block_N=%lld,block_K=%lld,K_L1=%lld,S1=%d,S2=%d,core_num=24",
                 (long long)json_integer_value(json_object_get(cf, "block_M")),
                 (long long)json_integer_value(json_object_get(cf, "block_N")),
                 (long long)json_integer_value(json_object_get(cf, "block_K")),
                 (long long)json_integer_value(json_object_get(cf, "K_L1")), db ? 2 : 1, db ? 2 : 1);
        tt_sim_result r;
        CU_ASSERT_EQUAL(sim(gemm, tgt, prob, cfg, -1, &r), TT_OK);
        double meas = json_number_value(json_object_get(p, "time_us"));
        double rel = (r.time_us - meas) / meas;
        if (fabs(rel) > 0.15)
            fprintf(stderr, "%s: simulated %.1f us, measured %.1f us (%+.1f %%)\n",
                    json_string_value(json_object_get(p, "id")), r.time_us, meas, rel * 100);
        CU_ASSERT(fabs(rel) <= 0.15);
        /* the cube is the busiest unit of a large GEMM, as the published profile says */
        if (json_integer_value(json_object_get(pr, "M")) >= 3072) CU_ASSERT(r.util[TT_UNIT_M] > 0.6);
        tt_sim_result_close(&r);
        checked++;
    }
    CU_ASSERT_EQUAL(checked, 4);
    json_decref(doc);
    tt_tmpl_free(gemm);
    tt_targets_free(ts);
    free(tdir);
    free(gpath);
    free(cpath);
}

/* A GEMM trace opens as JSON with one complete event per instruction of the traced core. */
static void test_trace_gemm(void)
{
    tt_target tgt;
    mk_target(&tgt, 2);
    tt_template *t = parse(CHAIN_T);
    tt_sim_result r;
    json_error_t je;
    /* one block: core 1 idles, its trace has metadata only */
    CU_ASSERT_EQUAL(sim(t, &tgt, "K=128", "S=2", 1, &r), TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.trace_json);
    json_t *doc = json_loads(r.trace_json, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    size_t nmeta = json_array_size(doc);
    CU_ASSERT(nmeta > 0);
    for (size_t k = 0; k < nmeta; k++)
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(doc, k), "ph")), "M");
    json_decref(doc);
    tt_sim_result_close(&r);
    CU_ASSERT_EQUAL(sim(t, &tgt, "K=128", "S=2", 0, &r), TT_OK);
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

/* Table: built-in templates (tests/data/sim/smoke.txt) simulate on the A3 target file,
 * deterministically, with every unit's busy time inside the kernel time, and the traced run
 * (no shortcut) agreeing with the default run. */
static void test_templates_table(void)
{
    char *tdir = tt_test_src("costmodel/targets");
    char *table = tt_test_src("tests/data/sim/smoke.txt");
    char *text = tt_test_read_file(table, NULL);
    tt_targets *ts = NULL;
    tt_errinfo err;
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL_FATAL(tt_targets_load_dir(tdir, &ts, &err), TT_OK);
    const tt_target *tgt = tt_targets_find(ts, "Ascend910_9391");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !line[0]) continue;
        char *f = line, *prob = strchr(f, '|');
        CU_ASSERT_PTR_NOT_NULL_FATAL(prob);
        *prob++ = '\0';
        char *cfg = strchr(prob, '|');
        CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
        *cfg++ = '\0';
        char rel[128];
        snprintf(rel, sizeof rel, "templates/%s", f);
        char *path = tt_test_src(rel);
        tt_template *t = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(path, &t, &err), TT_OK);
        free(path);
        tt_sim_result a, b, c;
        CU_ASSERT_EQUAL(sim(t, tgt, prob, cfg, -1, &a), TT_OK);
        CU_ASSERT_EQUAL(sim(t, tgt, prob, cfg, -1, &b), TT_OK);
        CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
        if (a.rc) fprintf(stderr, "%s %s %s: %s\n", f, prob, cfg, a.reason);
        CU_ASSERT(a.cycles > 0);
        CU_ASSERT(a.time_us > tgt->launch_us);
        CU_ASSERT(a.blocks > 0 && a.waves >= 1 && a.waves_simulated >= 1 && a.waves_simulated <= a.waves);
        for (int u = 0; u < TT_UNIT__COUNT; u++) {
            CU_ASSERT(a.busy_cycles[u] >= 0);
            CU_ASSERT(a.busy_cycles[u] <= a.cycles * (1 + 1e-9));
            CU_ASSERT(a.util[u] >= 0 && a.util[u] <= 1 + 1e-9);
        }
        for (int k = 0; k < TT_STALL__COUNT; k++) CU_ASSERT(a.stall_cycles[k] >= 0);
        CU_ASSERT_EQUAL(sim(t, tgt, prob, cfg, 0, &c), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(c.cycles, a.cycles, 1e-3 * a.cycles);
        CU_ASSERT_PTR_NOT_NULL(c.trace_json);
        json_error_t je;
        json_t *doc = c.trace_json ? json_loads(c.trace_json, 0, &je) : NULL;
        CU_ASSERT(json_is_array(doc) && json_array_size(doc) > TT_UNIT__COUNT);
        json_decref(doc);
        tt_sim_result_close(&a);
        tt_sim_result_close(&b);
        tt_sim_result_close(&c);
        tt_tmpl_free(t);
        rows++;
    }
    CU_ASSERT(rows >= 8);
    free(text);
    free(table);
    free(tdir);
    tt_targets_free(ts);
}

/* Simulate one config with the shortcuts (*fast) and without (*full), and check that the
 * fast run extrapolated, the full one did not, and cycles and busy times agree within
 * rtol x the full cycles (all units when all_units, else the cube). */
static void fast_vs_full(const tt_template *t, const tt_target *tgt, const char *prob, const char *cfg,
                         double rtol, int all_units, tt_sim_result *fast, tt_sim_result *full)
{
    int64_t slots[TT_MAX_SLOTS];
    tt_sim_opts o = {.trace_core = -1};
    mk_slots(t, prob, cfg, slots);
    CU_ASSERT_EQUAL(tt_sim_run(t, tgt, slots, &o, fast), TT_OK);
    o.shortcut_ops = -1;
    mk_slots(t, prob, cfg, slots);
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

/* The shipped targets and templates/flash_attn_fwd.json, with the A3 target Ascend910_9391
 * (fatal when any is missing); free with fa_fixture_free. */
typedef struct fa_fixture {
    tt_targets *ts;
    tt_template *fa;
    const tt_target *tgt;
} fa_fixture;

static int fa_fixture_load(fa_fixture *f)
{
    char *tdir = tt_test_src("costmodel/targets");
    char *fpath = tt_test_src("templates/flash_attn_fwd.json");
    tt_errinfo err;
    memset(f, 0, sizeof *f);
    int ok = tt_targets_load_dir(tdir, &f->ts, &err) == TT_OK &&
             tt_tmpl_parse_file(fpath, &f->fa, &err) == TT_OK &&
             (f->tgt = tt_targets_find(f->ts, "Ascend910_9391")) != NULL;
    free(tdir);
    free(fpath);
    return ok;
}

static void fa_fixture_free(fa_fixture *f)
{
    tt_tmpl_free(f->fa);
    tt_targets_free(f->ts);
}

/* The fast path on causal FlashAttention (blocks differ in their KV trip count, waves mix
 * two trip counts): each wave shape is simulated at a few trip counts and the waves are
 * interpolated (docs/simulator.md, "Steady-state shortcut").  Stated tolerance: kernel
 * cycles and every unit's busy time within 0.1 % of the full simulation (bench_sim --check
 * measures 0.04 % at worst on the S=8192 sample), for far fewer simulated events. */
static void test_fast_path_causal(void)
{
    fa_fixture F;
    CU_ASSERT_FATAL(fa_fixture_load(&F));
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
    fa_fixture_free(&F);
}

/* Causal FlashAttention S = 8192 on 8 heads (the shipped template, A3): config cfg with the
 * shortcuts within rtol of the full simulation (every unit's busy time too when all_units)
 * and more than `fewer` times fewer events. */
static void fa8k_fast_vs_full(const char *cfg, double rtol, int all_units, double fewer)
{
    fa_fixture F;
    CU_ASSERT_FATAL(fa_fixture_load(&F));
    tt_sim_result fast, full;
    fast_vs_full(F.fa, F.tgt, "B=1,H=8,H_kv=8,S_q=8192,S_kv=8192,D=128,causal=1,dtype=float16",
                 cfg, rtol, all_units, &fast, &full);
    CU_ASSERT(fast.events * fewer < full.events);
    tt_sim_result_close(&fast);
    tt_sim_result_close(&full);
    fa_fixture_free(&F);
}

/* Loop marks (docs/simulator.md): a causal shape whose first three anchors are not collinear
 * (the two sides of a stages 6 pipeline run free) is run once more at 4.25 warm-ups with every
 * iteration's completion recorded; the least-squares rate of the iterations after the
 * warm-up and before the drain extends that run to the longer waves, the line from the
 * anchors to it serves the shorter ones.  Causal S = 8192 on 8 heads, 32 x 64, stages 6:
 * cycles and every unit's busy time within 0.1 % of the full simulation (with anchors only:
 * some busy time 0.1 % off, 65 k events). */
static void test_fast_path_loop_marks(void)
{
    /* 48 k of 488 k events (the anchors: 65 k) */
    fa8k_fast_vs_full("block_M=32,block_N=64,stages=6,cross_interval=1", 1e-3, 1, 8);
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
     * point from point 6 on, irregular before): the 6-point walk is not steady, the 9-point
     * one is; cycles and every unit's busy time within 0.2 % of the full walks of 93 tiles */
    prob = "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16";
    cfg = "block_M=16,block_N=448,block_K=16,K_L1=96,S1=2,S2=2,core_num=24,swizzle=2";
    fast_vs_full(gemm, tgt, prob, cfg, 2e-3, 1, &fast, &full);
    CU_ASSERT(fast.events * 4 < full.events);
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

/* Persistent kernels: 2 launched blocks walk 5 grid points (3 and 2) in sequence. */
static void test_persistent(void)
{
    tt_target tgt;
    mk_target(&tgt, 24);
    tt_template *t = parse(
        "{\"tiletune\":1,\"name\":\"pers\",\"version\":\"1\","
        "\"inputs\":{\"NB\":{\"type\":\"int\"},\"P\":{\"type\":\"int\"}},"
        "\"params\":{\"S\":[1,2]},"
        "\"tensors\":{\"A\":{\"shape\":[\"NB\",64,64],\"dtype\":\"float16\"}},"
        "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[64,64],\"dtype\":\"float16\",\"copies\":\"S\"}},"
        "\"kernel\":{\"grid\":{\"bx\":\"NB\"},\"cores\":\"cube\",\"persistent\":\"P\",\"body\":["
        "{\"copy\":[\"gm:A\",\"A_L1\"],\"along\":[\"bx\"]}]}}");
    tt_sim_result r;
    /* one slot: each copy waits for the previous one into the same slot: 3 x 228 */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=5,P=2", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 3 * 228);
    CU_ASSERT_EQUAL(r.blocks, 5);
    CU_ASSERT_EQUAL(r.waves, 1);
    tt_sim_result_close(&r);
    /* two slots: the second copy's latency overlaps the first's data:
     * [0,228], latency [100,200] data [228,356], third (slot 0, after the first) latency
     * [228,328] data [356,484] */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=5,P=2", "S=2", -1, &r), TT_OK);
    NEAR(r.cycles, 484);
    tt_sim_result_close(&r);
    /* 30 launched blocks over 24 cores: two waves, 1 grid point each, the second partial */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=30,P=30", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 2 * 228);
    CU_ASSERT_EQUAL(r.waves, 2);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* Per-block dispatch cost from the target's overheads.block_cycles. */
static void test_block_cycles(void)
{
    tt_target tgt;
    mk_target(&tgt, 1);
    tgt.block_cycles = 50;
    tt_template *t = parse(COPY_T);
    tt_sim_result r;
    /* 50 + 228 per block, two blocks on one core = two waves */
    CU_ASSERT_EQUAL(sim(t, &tgt, "NB=2,R=64", "S=1", -1, &r), TT_OK);
    NEAR(r.cycles, 2 * 278);
    NEAR(r.busy_cycles[TT_UNIT_S], 2 * 50);
    tt_sim_result_close(&r);
    tt_tmpl_free(t);
}

/* GQA: K/V of flash_attn_fwd are read `along` the index map bh // group, so the query heads
 * of a group share one K/V tile: group = 8 sends ~8x fewer K/V bytes to HBM than group = 1
 * (a MODEL figure: the simulator's L2 estimate).  A map of two grid dims, or one that does
 * not compile, is refused at load with the entry's path. */
static void test_gqa_along_map(void)
{
    fa_fixture F;
    CU_ASSERT_FATAL(fa_fixture_load(&F));
    tt_template *t = F.fa;
    const tt_target *tgt = F.tgt;
    tt_errinfo err;
    const char *cfg = "block_M=128,block_N=128,stages=2";
    tt_sim_result r1, r8;
    CU_ASSERT_EQUAL_FATAL(sim(t, tgt, "B=4,H=32,H_kv=32,S_q=128,S_kv=8192,D=128", cfg, -1, &r1), TT_OK);
    CU_ASSERT_EQUAL_FATAL(sim(t, tgt, "B=4,H=32,H_kv=4,S_q=128,S_kv=8192,D=128", cfg, -1, &r8), TT_OK);
    double ratio = r1.hbm_read_bytes / r8.hbm_read_bytes;
    fprintf(stderr, "[sim gqa: HBM reads %.0f / %.0f bytes = %.2fx, %.1f / %.1f us] ",
            r1.hbm_read_bytes, r8.hbm_read_bytes, ratio, r1.time_us, r8.time_us);
    CU_ASSERT(ratio > 6 && ratio < 12);
    CU_ASSERT(r8.time_us < r1.time_us);
    tt_sim_result_close(&r1);
    tt_sim_result_close(&r8);
    /* decode_attn: K/V along bh // (group // heads_per_block): a group of 8 query heads
     * split over 8 blocks of one head each still reads K/V about once from HBM */
    char *fpath = tt_test_src("templates/decode_attn.json");
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(fpath, &t, &err), TT_OK);
    free(fpath);
    const char *pb = "batch=4,heads=32,kv_heads=4,seqlen_kv=32768,dim=128,q_len=1";
    CU_ASSERT_EQUAL_FATAL(sim(t, tgt, pb, "block_N=256,kv_splits=2,heads_per_block=8", -1, &r8), TT_OK);
    CU_ASSERT_EQUAL_FATAL(sim(t, tgt, pb, "block_N=256,kv_splits=2,heads_per_block=1", -1, &r1), TT_OK);
    fprintf(stderr, "[sim decode gqa: HBM reads hpb 8 / 1: %.0f / %.0f bytes] ", r8.hbm_read_bytes,
            r1.hbm_read_bytes);
    CU_ASSERT(r1.hbm_read_bytes < 1.5 * r8.hbm_read_bytes);
    tt_sim_result_close(&r1);
    tt_sim_result_close(&r8);
    tt_tmpl_free(t);            /* decode_attn */
    fa_fixture_free(&F);
    /* refused maps */
    static const char *const bad[][2] = {
        {"bh // bx", "index map \"bh // bx\" must read exactly one grid dim"},
        {"H // 2", "index map \"H // 2\" must read exactly one grid dim"},
        {"bh //", "kernel.body[0].along[0]"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char doc[1024];
        snprintf(doc, sizeof doc,
                 "{\"tiletune\":1,\"name\":\"m\",\"version\":\"1\","
                 "\"inputs\":{\"H\":{\"type\":\"int\"}},\"params\":{\"S\":[1]},"
                 "\"tensors\":{\"A\":{\"shape\":[\"H\",64],\"dtype\":\"float16\"}},"
                 "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[64],\"dtype\":\"float16\"}},"
                 "\"kernel\":{\"grid\":{\"bx\":2,\"bh\":\"H\"},\"cores\":\"cube\",\"body\":["
                 "{\"copy\":[\"gm:A\",\"A_L1\"],\"along\":[\"%s\"]}]}}", bad[i][0]);
        tt_template *b = NULL;
        tt_errinfo_clear(&err);
        tt_rc rc = tt_tmpl_parse_string(doc, strlen(doc), NULL, &b, &err);
        CU_ASSERT_EQUAL(rc, i < 2 ? TT_ETEMPLATE : TT_EEXPR);   /* syntax: the expression's code */
        CU_ASSERT_PTR_NULL(b);
        CU_ASSERT_STRING_EQUAL(err.path, "kernel.body[0].along[0]");
        CU_ASSERT(strstr(err.msg, bad[i][1]) != NULL || strcmp(bad[i][1], err.path) == 0);
        tt_tmpl_free(b);
    }
}

static const tt_test_case sim_cases[] = {
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
    {"determinism_and_shortcut", test_determinism_and_shortcut},
    {"fast_path_causal", test_fast_path_causal},
    {"fast_path_late_fit", test_fast_path_late_fit},
    {"calibration_gemm", test_calibration_gemm},
    {"trace_gemm", test_trace_gemm},
    {"templates_table", test_templates_table},
    {"persistent", test_persistent},
    {"walk_shortcut", test_walk_shortcut},
    {"fast_path_loop_marks", test_fast_path_loop_marks},
    {"block_cycles", test_block_cycles},
    {"gqa_along_map", test_gqa_along_map},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"sim", NULL, NULL, sim_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_alloc_fail_costmodel.c - allocation-failure torture of the cost model's workloads:
 * every allocation of loading the targets directory (costmodel/target.c), the analytic model
 * and the simulator (with and without a trace) on gemm and every template of
 * tests/data/sim/smoke.txt (costmodel/model*.c, costmodel/sim*.c) is made to fail once, and
 * each must then return a clean error with nothing leaked.
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
        h = tt_af_mix_double(tt_af_mix(tt_af_mix_str(h, t->name), (uint64_t)t->cube_cores), t->hbm_gbps);
    }
    h = tt_af_mix(h, tt_targets_find(ts, "a3") != NULL);
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
    *h = tt_af_mix(tt_af_mix_double(tt_af_mix_double(*h, r.time_us), r.gm_bytes), (uint64_t)r.bound);
    return TT_OK;
}

static tt_rc wl_model(uint64_t *digest)
{
    uint64_t h = 4;
    tt_rc rc = model_one(tt_af_gemm, tt_af_a2, tt_af_gemm_slots, &h);
    const tt_target *a3 = tt_targets_find(tt_af_targets, "a3");
    if (!a3) return TT_EINTERNAL;
    for (size_t i = 0; i < tt_af_nsmoke && rc == TT_OK; i++)
        rc = model_one(tt_af_smoke_t[i], a3, tt_af_smoke_slots[i], &h);
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
    *h = tt_af_mix(tt_af_mix_double(*h, r.cycles), (uint64_t)r.events);
    *h = tt_af_mix_str(*h, r.trace_json);
    tt_sim_result_close(&r);
    return TT_OK;
}

static tt_rc wl_sim(uint64_t *digest)
{
    uint64_t h = 5;
    tt_rc rc = sim_one(tt_af_gemm, tt_af_a2, tt_af_gemm_slots, 0, &h);
    if (rc == TT_OK) rc = sim_one(tt_af_gemm, tt_af_a2, tt_af_gemm_slots, 1, &h);
    const tt_target *a3 = tt_targets_find(tt_af_targets, "a3");
    if (!a3) return TT_EINTERNAL;
    for (size_t i = 0; i < tt_af_nsmoke && rc == TT_OK; i++)
        rc = sim_one(tt_af_smoke_t[i], a3, tt_af_smoke_slots[i], 0, &h);
    if (rc != TT_OK) return rc;
    *digest = h;
    return TT_OK;
}

/* 7. T1 import of the convolution space, parse, render a source for its first config; and
 * the gemm source for the gemm config */

static const tt_af_workload W_TARGETS = {"targets", wl_targets, {TT_ETARGET, TT_EIO, TT_OK}};
static const tt_af_workload W_MODEL = {"model", wl_model, {TT_OK}};
static const tt_af_workload W_SIM = {"sim", wl_sim, {TT_OK}};

static void test_targets(void) { tt_af_torture(&W_TARGETS); }
static void test_model(void) { tt_af_torture(&W_MODEL); }
static void test_sim(void) { tt_af_torture(&W_SIM); }

static const tt_test_case cost_cases[] = {
    {"targets", test_targets}, {"model", test_model}, {"sim", test_sim}, {NULL, NULL}};

static const tt_test_suite suites[] = {
    {"alloc_fail_costmodel", tt_af_init, tt_af_cleanup, cost_cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_af_main(argc, argv, suites); }

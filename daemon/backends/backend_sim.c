/* SPDX-License-Identifier: MIT
 * backend_sim.c - the `sim` backend: one deterministic run of the pipeline simulator
 * (costmodel/sim.h), reported as one sample.  A model of the chip, not the chip.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "sim.h"

static tt_rc tt_sim_open(tt_backend *b, const char *arg, tt_errinfo *err)
{
    tt_rc rc = tt__backend_need_kernel(b, arg, "it cannot be simulated", err);
    if (rc != TT_OK) return rc;
    snprintf(b->fingerprint, sizeof b->fingerprint, "sim");
    return TT_OK;
}

static tt_rc tt_sim_measure(tt_backend *b, int64_t *slots, tt_measurement *out)
{
    tt_sim_opts opts = {.trace_core = -1, .max_events = 0};
    tt_sim_result res;
    memset(&res, 0, sizeof res);
    double t0 = tt__backend_now();
    tt_rc rc = tt_sim_run(b->t, b->tgt, slots, &opts, &res);
    out->measure_s = tt__backend_now() - t0;
    tt_sim_result_close(&res);
    return tt__backend_outcome(rc, res.time_us, res.reason, "sim", out);
}

const tt_backend_ops tt__backend_sim_ops = {
    .kind = "sim", .open = tt_sim_open, .measure = tt_sim_measure, .close = NULL,
};

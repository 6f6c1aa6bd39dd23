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
    switch (rc) {
    case TT_OK:
        out->status = TT_OK;
        out->samples_us[0] = res.time_us;
        out->nsamples = 1;
        return TT_OK;
    case TT_EINFEASIBLE: case TT_EOVERFLOW: case TT_EDIVZERO: case TT_EDOMAIN: case TT_ECONFIG:
    case TT_EDEADLOCK:
        out->status = rc == TT_EDEADLOCK ? TT_EDEADLOCK : TT_EINFEASIBLE;
        snprintf(out->error, sizeof out->error, "%s",
                 res.reason[0] ? res.reason : tt_strerror(rc));
        return TT_OK;
    default:
        snprintf(out->error, sizeof out->error, "sim: %s%s%s", tt_strerror(rc),
                 res.reason[0] ? ": " : "", res.reason);
        return rc;
    }
}

const tt_backend_ops tt__backend_sim_ops = {
    .kind = "sim", .open = tt_sim_open, .measure = tt_sim_measure, .close = NULL,
};

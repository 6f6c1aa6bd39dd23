/* SPDX-License-Identifier: MIT
 * backend_model.c - the `model` backend: the analytic cost model's prediction as one sample
 * (a model, not a measurement).
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "model.h"

static tt_rc tt_model_open(tt_backend *b, const char *arg, tt_errinfo *err)
{
    tt_rc rc = tt__backend_need_kernel(b, arg, "the model cannot predict it", err);
    if (rc != TT_OK) return rc;
    tt_model *m = NULL;
    rc = tt_model_new(b->t, b->tgt, b->problem, NULL, &m, err);
    if (rc != TT_OK) return rc;
    b->impl = m;
    snprintf(b->fingerprint, sizeof b->fingerprint, "model");
    return TT_OK;
}

static tt_rc tt_model_measure(tt_backend *b, int64_t *slots, tt_measurement *out)
{
    double t0 = tt__backend_now();
    tt_model_result res;
    memset(&res, 0, sizeof res);
    tt_rc rc = tt_model_eval(b->impl, slots, &res);
    out->measure_s = tt__backend_now() - t0;
    return tt__backend_outcome(rc, res.time_us, res.reason, "model", out);
}

static void tt_model_close(tt_backend *b)
{
    tt_model_free(b->impl);
    b->impl = NULL;
}

const tt_backend_ops tt__backend_model_ops = {
    .kind = "model", .open = tt_model_open, .measure = tt_model_measure, .close = tt_model_close,
};

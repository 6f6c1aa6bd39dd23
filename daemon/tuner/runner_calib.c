/* SPDX-License-Identifier: MIT
 * runner_calib.c - the cost model's calibration fitted from a job's trials (runner_job.c
 * collects the pairs, stores the fit at the job's end and reads the stored one back at its
 * set-up).  Only the job's worker thread touches its tt_fitset.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "runner_int.h"

/* Calibration (costmodel/model.h tt_calib) stored per (target, backend fingerprint).
 * As JSON: {"log_a", "log_b", "unit_scale": [7], "bw_scale", "n", "rmse_log", "mape"}.
 * Fitted at the end of every successful job on its (raw prediction, measured) pairs and
 * applied, when its slope is positive, to the predicted_us recorded by later jobs.  The
 * strategies always rank with the uncalibrated model, so that a calibration stored between
 * a crash and the resume cannot change a job's sequence. */
void tt__fit_add(tt_fitset *f, const tt_model_result *raw, tt_rc status, double us)
{
    if (status != TT_OK || !(us > 0) || !(raw->time_us > 0)) return;
    if (f->n == f->cap) {
        size_t ncap = f->cap ? 2 * f->cap : 64;
        tt_model_result *np = realloc(f->pred, ncap * sizeof *np);
        if (!np) return;
        f->pred = np;
        double *nm = realloc(f->meas, ncap * sizeof *nm);
        if (!nm) return;
        f->meas = nm;
        f->cap = ncap;
    }
    f->pred[f->n] = *raw;
    f->meas[f->n++] = us;
}

void tt__fit_free(tt_fitset *f)
{
    free(f->pred);
    free(f->meas);
    memset(f, 0, sizeof *f);
}

static char *tt_calib_json(const tt_calib *c)
{
    json_t *u = json_array();
    for (int i = 0; u && i < TT_UNIT__COUNT; i++) json_array_append_new(u, json_real(c->unit_scale[i]));
    json_t *o = json_pack("{s:f, s:f, s:o, s:f, s:i, s:f, s:f}", "log_a", c->log_a, "log_b",
                          c->log_b, "unit_scale", u, "bw_scale", c->bw_scale, "n", c->n,
                          "rmse_log", c->rmse_log, "mape", c->mape);
    char *s = o ? tt_json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

int tt__calib_parse(const char *text, tt_calib *c)
{
    json_t *o = json_loads(text, 0, NULL);
    if (!o) return 0;
    tt_calib_identity(c);
    c->log_a = json_number_value(json_object_get(o, "log_a"));
    c->log_b = json_number_value(json_object_get(o, "log_b"));
    c->n = (int)json_integer_value(json_object_get(o, "n"));
    const json_t *bw = json_object_get(o, "bw_scale");
    if (json_is_number(bw) && json_number_value(bw) > 0) c->bw_scale = json_number_value(bw);
    const json_t *u = json_object_get(o, "unit_scale");
    for (int i = 0; i < TT_UNIT__COUNT && json_is_array(u); i++) {
        double v = json_number_value(json_array_get(u, (size_t)i));
        if (v > 0) c->unit_scale[i] = v;
    }
    c->rmse_log = json_number_value(json_object_get(o, "rmse_log"));
    c->mape = json_number_value(json_object_get(o, "mape"));
    int ok = c->n >= 2 && c->log_b > 0 && isfinite(c->log_a) && isfinite(c->log_b);
    json_decref(o);
    return ok;
}

void tt__fit_store(const tt_fitset *f, tt_store *s, const char *target, const char *fp)
{
    tt_calib c;
    if (f->n < 2 || tt_calib_fit(f->pred, f->meas, (int)f->n, &c) != TT_OK) return;
    char *text = tt_calib_json(&c);
    if (text) (void)tt_store_calib_put(s, target, fp, text, c.n, c.rmse_log);
    free(text);
}

/* SPDX-License-Identifier: MIT
 * model.h - the analytic (TileSight/Roller-style) cost model of a template on a target.
 *
 * For one config it predicts the kernel time in microseconds, the bound (the unit or the
 * bandwidth that limits it), per-unit busy time and utilisation, or why it is infeasible.
 * It is a model, not a measurement: every API answer that comes from it says so.
 * See docs/cost-model.md for the equations and their sources.
 *
 * Ownership: tt_model_new() borrows the template and the target (they must outlive the
 * model) and copies the problem.  tt_model_eval() allocates nothing and is thread-safe
 * (each thread passes its own slot vector).
 */
#ifndef TT_MODEL_H
#define TT_MODEL_H

#include <stdint.h>

#include "space.h"
#include "target.h"
#include "template.h"

/* What limits a config. */
typedef enum tt_bound {
    TT_BOUND_MTE2, TT_BOUND_MTE1, TT_BOUND_M, TT_BOUND_V, TT_BOUND_FIX, TT_BOUND_MTE3,
    TT_BOUND_S,               /* the first TT_UNIT__COUNT values mirror tt_unit */
    TT_BOUND_HBM, TT_BOUND_L2, TT_BOUND_LATENCY, TT_BOUND_LAUNCH, TT_BOUND_SYNC,
    TT_BOUND__COUNT
} tt_bound;
const char *tt_bound_name(tt_bound b);  /* "MTE2", ..., "HBM", "L2", "latency", "launch", "sync" */

/* Calibration: efficiency factors fitted from measurements for one (target, backend).
 * Applied as: time' = exp(a) * time^b (least squares on log time), plus per-unit scales. */
typedef struct tt_calib {
    double unit_scale[TT_UNIT__COUNT];   /* multiplies each unit's busy time (1 = none) */
    double bw_scale;                     /* multiplies chip bandwidth (1 = none) */
    double log_a, log_b;                 /* final log-linear correction (0, 1 = none) */
    int n;                               /* points the fit used (0: identity) */
    double rmse_log;                     /* fit error on log time */
    double mape;                         /* mean absolute % error after the fit */
} tt_calib;
void tt_calib_identity(tt_calib *c);

typedef struct tt_model_result {
    tt_rc rc;                 /* TT_OK, or TT_EINFEASIBLE/TT_EOVERFLOW/... with reason */
    char reason[128];         /* why infeasible (same strings as tt_space) */
    double time_us;
    double low_us, high_us;   /* error band: time_us x the family's factors (band.h) */
    tt_bound bound;
    double busy_us[TT_UNIT__COUNT];   /* per core, busiest core */
    double util[TT_UNIT__COUNT];      /* busy / time */
    int64_t blocks;           /* grid points */
    int64_t cores_used;
    double waves;             /* blocks / cores (fractional: a tail wave shows) */
    double gm_bytes;          /* GM traffic of the whole kernel, after re-use */
    double l2_hit;            /* estimated L2 hit rate 0..1 */
    double flops;             /* 2*M*N*K-style useful work, if any */
} tt_model_result;

typedef struct tt_model tt_model;

/* problem_slots[0..ninputs) hold the problem. calib may be NULL (identity). */
tt_rc tt_model_new(const tt_template *t, const tt_target *tgt, const int64_t *problem_slots,
                   const tt_calib *calib, tt_model **out, tt_errinfo *err);
void tt_model_free(tt_model *m);

/* Predict one config: slots hold problem + params (lets are evaluated into slots; the
 * vector must have t->nslots entries).  Fills *out; returns out->rc.  A template without a
 * kernel gives TT_EUNSUPPORTED; a model made with a calibration gives TT_EDOMAIN (reason
 * "calibration: ...") when the calibrated time is not a finite positive number. */
tt_rc tt_model_eval(const tt_model *m, int64_t *slots, tt_model_result *out);

/* Fit a calibration from n (predicted result, measured us) pairs.  Returns TT_EINVAL for
 * n < 2; otherwise fills *c including its error figures. */
tt_rc tt_calib_fit(const tt_model_result *pred, const double *measured_us, int n,
                   tt_calib *c);
/* Apply a calibration to a raw prediction's time (the model does this itself when it was
 * created with calib; exposed for reporting). */
double tt_calib_apply(const tt_calib *c, double time_us);

#endif

/* SPDX-License-Identifier: MIT
 * band.h - the error band of the analytic model's prediction: low_us = time x low factor,
 * high_us = time x high factor, from the residuals published / model of the template's
 * family on shared/ascend/published.json (bench_fidelity prints them), or from the spread of
 * a calibration's own residuals when it was fitted on enough measurements.
 * Pure functions on a static table: thread-safe.
 */
#ifndef TT_BAND_H
#define TT_BAND_H

#include "model.h"

/* Calibrations fitted on at least this many measurements set the band themselves. */
#define TT_BAND_MIN_CALIB 4

/* The band factors (lo <= 1 <= hi is not guaranteed: a model that is biased has a band on
 * one side) for a template name; calib may be NULL.  With calib->n >= TT_BAND_MIN_CALIB:
 * exp(-/+ 2 x calib->rmse_log).  Else the table row of the template, else the pooled range
 * of every family with published points.  Returns 1 when a table row or the calibration
 * was used, 0 for the pooled default. */
int tt_band_get(const char *template_name, const tt_calib *calib, double *lo, double *hi);

#endif

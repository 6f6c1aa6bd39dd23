/* SPDX-License-Identifier: MIT
 * calib.c - calibration of the cost model: a least-squares fit on log time of measured
 * against predicted latencies (log measured = a + b log predicted), its error figures, and
 * its application to later predictions (docs/cost-model.md, section 6).
 */
#include <math.h>
#include <string.h>

#include "model.h"

void tt_calib_identity(tt_calib *c)
{
    if (!c) return;
    memset(c, 0, sizeof *c);
    for (int u = 0; u < TT_UNIT__COUNT; u++) c->unit_scale[u] = 1;
    c->bw_scale = 1;
    c->log_a = 0;
    c->log_b = 1;
}

double tt_calib_apply(const tt_calib *c, double time_us)
{
    if (!c || c->n == 0 || !(time_us > 0)) return time_us;
    return exp(c->log_a + c->log_b * log(time_us));
}

tt_rc tt_calib_fit(const tt_model_result *pred, const double *measured_us, int n, tt_calib *c)
{
    if (!pred || !measured_us || !c || n < 2) return TT_EINVAL;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (pred[i].rc != TT_OK || !(pred[i].time_us > 0) || !(measured_us[i] > 0)) continue;
        double x = log(pred[i].time_us), y = log(measured_us[i]);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
        k++;
    }
    if (k < 2) return TT_EINVAL;
    tt_calib_identity(c);
    double den = k * sxx - sx * sx;
    if (fabs(den) < 1e-12 * (k * sxx + 1)) {
        /* all predictions equal: only a scale can be fitted */
        c->log_b = 1;
        c->log_a = (sy - sx) / k;
    } else {
        c->log_b = (k * sxy - sx * sy) / den;
        c->log_a = (sy - c->log_b * sx) / k;
    }
    c->n = k;
    double se = 0, ape = 0;
    for (int i = 0; i < n; i++) {
        if (pred[i].rc != TT_OK || !(pred[i].time_us > 0) || !(measured_us[i] > 0)) continue;
        double fit = c->log_a + c->log_b * log(pred[i].time_us);
        double r = log(measured_us[i]) - fit;
        se += r * r;
        ape += fabs(exp(fit) - measured_us[i]) / measured_us[i];
    }
    c->rmse_log = sqrt(se / k);
    c->mape = 100.0 * ape / k;
    return TT_OK;
}

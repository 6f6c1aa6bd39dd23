/* SPDX-License-Identifier: MIT
 * band.c - error band of the model's prediction per template family (see band.h).
 */
#include "band.h"

#include <math.h>
#include <string.h>

/* min and max of published / model over the kernel-dominated points of each template
 * (bench_fidelity, "Error band per template", each point compared under its timing method:
 * bench/common/fidelity_timing.h; docs/cost-model.md, "Error band") [fit] */
static const struct {
    const char *tmpl;
    double lo, hi;
    int points;
} g_band[] = {
    {"gemm", 0.717, 2.207, 25},
    {"batch_gemm", 0.717, 2.207, 0},      /* gemm's: the same program per batch entry */
    {"flash_attn_fwd", 0.913, 1.703, 52},
    {"activation", 0.751, 1.060, 10},      /* fla gelu_fwd, sqrelu_fwd rows on A3 (L2 emptied) */
    {"cross_entropy", 0.939, 1.213, 5},    /* TileLang cross-entropy rows (chip not stated) */
    {"quant_matmul", 0.962, 1.155, 12},    /* CATLASS int8 rows on 910B3 */
    {"grouped_gemm", 2.547, 2.797, 11},    /* CATLASS 08_grouped_matmul autotune on 910B4 */
    {"conv2d", 0.862, 0.989, 5},           /* PTO-ISA conv rows on A3 (nz = 1) */
};
/* pooled over every row above with points: the band of a family without published points
 * (or with fewer than 5: gemv has 2, rope 1) */
#define TT_BAND_POOLED_LO 0.717
#define TT_BAND_POOLED_HI 2.797

int tt_band_get(const char *template_name, const tt_calib *calib, double *lo, double *hi)
{
    if (calib && calib->n >= TT_BAND_MIN_CALIB && isfinite(calib->rmse_log)) {
        *lo = exp(-2 * calib->rmse_log);
        *hi = exp(2 * calib->rmse_log);
        return 1;
    }
    for (size_t i = 0; template_name && i < sizeof g_band / sizeof g_band[0]; i++)
        if (strcmp(g_band[i].tmpl, template_name) == 0) {
            *lo = g_band[i].lo;
            *hi = g_band[i].hi;
            return 1;
        }
    *lo = TT_BAND_POOLED_LO;
    *hi = TT_BAND_POOLED_HI;
    return 0;
}

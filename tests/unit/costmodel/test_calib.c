/* SPDX-License-Identifier: MIT
 * test_calib.c - calibration: the log-linear least-squares fit recovers a known (a, b) from
 * synthetic data, reports its error, skips failed predictions, refuses n < 2, and applies.
 */
#include <math.h>
#include <stdlib.h>

#include "model.h"
#include "tt_test.h"

static void fill(tt_model_result *r, int n, double lo, double hi)
{
    for (int i = 0; i < n; i++) {
        r[i].rc = TT_OK;
        r[i].time_us = lo * pow(hi / lo, (double)i / (n - 1));
    }
}

static void test_recovers(void)
{
    static const struct {
        double a, b;
    } cases[] = {{0.0, 1.0}, {0.3, 1.0}, {-0.5, 0.9}, {1.2, 1.1}, {0.1, 0.75}};
    tt_model_result r[16];
    double meas[16];
    fill(r, 16, 5, 5000);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int i = 0; i < 16; i++) meas[i] = exp(cases[c].a) * pow(r[i].time_us, cases[c].b);
        tt_calib cal;
        CU_ASSERT_EQUAL_FATAL(tt_calib_fit(r, meas, 16, &cal), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(cal.log_a, cases[c].a, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(cal.log_b, cases[c].b, 1e-9);
        CU_ASSERT_EQUAL(cal.n, 16);
        CU_ASSERT(cal.rmse_log < 1e-9);
        CU_ASSERT(cal.mape < 1e-6);
        for (int i = 0; i < 16; i++)
            CU_ASSERT_DOUBLE_EQUAL(tt_calib_apply(&cal, r[i].time_us), meas[i], 1e-9 * meas[i]);
        for (int u = 0; u < TT_UNIT__COUNT; u++) CU_ASSERT_DOUBLE_EQUAL(cal.unit_scale[u], 1, 0);
    }
}

static void test_noise_and_skips(void)
{
    tt_model_result r[8];
    double meas[8];
    fill(r, 8, 10, 1000);
    /* +-10 % alternating noise on a 1.5x scale: b stays near 1, the error shows */
    for (int i = 0; i < 8; i++) meas[i] = 1.5 * r[i].time_us * (i % 2 ? 1.1 : 0.9);
    tt_calib cal;
    CU_ASSERT_EQUAL(tt_calib_fit(r, meas, 8, &cal), TT_OK);
    CU_ASSERT(fabs(cal.log_b - 1) < 0.05);
    CU_ASSERT(fabs(cal.log_a - log(1.5)) < 0.3);
    CU_ASSERT(cal.rmse_log > 0.05 && cal.rmse_log < 0.15);
    CU_ASSERT(cal.mape > 5 && cal.mape < 15);
    /* failed predictions and non-positive measurements are skipped */
    r[2].rc = TT_EINFEASIBLE;
    meas[5] = 0;
    CU_ASSERT_EQUAL(tt_calib_fit(r, meas, 8, &cal), TT_OK);
    CU_ASSERT_EQUAL(cal.n, 6);
    /* identical predictions: only a scale is fitted */
    tt_model_result same[3] = {{.rc = TT_OK, .time_us = 100}, {.rc = TT_OK, .time_us = 100},
                               {.rc = TT_OK, .time_us = 100}};
    double m3[3] = {200, 200, 200};
    CU_ASSERT_EQUAL(tt_calib_fit(same, m3, 3, &cal), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(tt_calib_apply(&cal, 100), 200, 1e-9);
}

static void test_errors(void)
{
    tt_model_result r[2];
    double meas[2] = {1, 2};
    fill(r, 2, 1, 2);
    tt_calib cal;
    CU_ASSERT_EQUAL(tt_calib_fit(r, meas, 1, &cal), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_calib_fit(r, meas, 0, &cal), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_calib_fit(NULL, meas, 2, &cal), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_calib_fit(r, NULL, 2, &cal), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_calib_fit(r, meas, 2, NULL), TT_EINVAL);
    r[1].rc = TT_EINFEASIBLE;   /* one usable point left */
    CU_ASSERT_EQUAL(tt_calib_fit(r, meas, 2, &cal), TT_EINVAL);
    /* identity: apply is a no-op */
    tt_calib_identity(&cal);
    CU_ASSERT_EQUAL(cal.n, 0);
    CU_ASSERT_DOUBLE_EQUAL(cal.bw_scale, 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt_calib_apply(&cal, 123.5), 123.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt_calib_apply(NULL, 7), 7, 0);
    tt_calib_identity(NULL);
}

static const tt_test_case calib_cases[] = {{"recovers", test_recovers},
                                           {"noise_and_skips", test_noise_and_skips},
                                           {"errors", test_errors},
                                           {NULL, NULL}};
static const tt_test_suite suites[] = {{"calib", NULL, NULL, calib_cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

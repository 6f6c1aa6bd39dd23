/* SPDX-License-Identifier: MIT
 * test_strategy_bo.c - the bo / model-bo strategy: failures reported, runs from several
 * threads equal to the runs alone, its GP input encoding (scaled positions and the 2-adic
 * dimension), its exploit rounds (through the tt__bo_* hooks of strategy_int.h).  Fixture:
 * tests/helpers/strategy_fixture (the toy space).
 *
 * Objectives here are synthetic functions of the params (not measurements).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "space.h"
#include "strategy.h"
#include "strategy_fixture.h"
#include "strategy_int.h"   /* tt__bo_* test hooks */
#include "target.h"
#include "template.h"
#include "tt_test.h"

static tt_stfx_run_out ra;

/* bo with failures reported (a quarter of the space fails, like recorded runtime failures):
 * every proposal still feasible and new, the budget used, deterministic, and the best a
 * success. */
static int fails(const int64_t *p) { return (p[0] * 3 + p[1]) % 4 == 0; }

static void test_bo_with_failures(void)
{
    for (int rep = 0; rep < 2; rep++) {
        tt_strategy_config c = {.name = "bo", .t = tt_stfx_toy, .space = tt_stfx_toy_space,
                                .problem = tt_stfx_toy_problem, .seed = 7, .budget = 30};
        tt_strategy *st = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_strategy_new(&c, &st, NULL), TT_OK);
        int64_t p[8];
        size_t n, got = 0;
        uint64_t keys[64];
        while (tt_strategy_next(st, 1, p, &n) == TT_OK && n == 1) {
            int64_t slots[TT_MAX_SLOTS];
            slots[0] = tt_stfx_toy_problem[0];
            memcpy(slots + 1, p, 3 * sizeof *p);
            CU_ASSERT_EQUAL(tt_space_check(tt_stfx_toy_space, slots, NULL), TT_OK);
            uint64_t k = tt_space_encode(tt_stfx_toy_space, slots);
            for (size_t j = 0; j < got; j++) CU_ASSERT(keys[j] != k);
            if (rep == 0) keys[got] = k;
            else CU_ASSERT_EQUAL(ra.keys[got], k);
            got++;
            CU_ASSERT_EQUAL(tt_strategy_report(st, p, fails(p) ? TT_ERUN : TT_OK,
                                               tt_stfx_obj_smooth(p)), TT_OK);
        }
        CU_ASSERT_EQUAL(got, 30);
        if (rep == 0) memcpy(ra.keys, keys, got * sizeof *keys);
        int64_t bp[3];
        double b;
        CU_ASSERT(tt_strategy_best(st, bp, &b));
        CU_ASSERT(!fails(bp));
        tt_strategy_free(st);
    }
}


/* bo from several threads at once (the runner's workers): each run equals the same run done
 * alone (OpenBLAS is shared by the process; strategy_bo.c serialises its calls). */
typedef struct bo_thread_arg {
    uint64_t seed;
    uint64_t keys[40];
    size_t n;
} bo_thread_arg;

static void *bo_thread(void *ud)
{
    bo_thread_arg *a = ud;
    tt_space *sp = NULL;
    if (tt_space_new(tt_stfx_toy, tt_stfx_toy_problem, NULL, &sp, NULL) != TT_OK) return NULL;
    tt_strategy_config c = {.name = "bo", .t = tt_stfx_toy, .space = sp, .problem = tt_stfx_toy_problem,
                            .seed = a->seed, .budget = 40};
    tt_strategy *st = NULL;
    if (tt_strategy_new(&c, &st, NULL) == TT_OK) {
        int64_t p[8], slots[TT_MAX_SLOTS];
        size_t n;
        while (tt_strategy_next(st, 1, p, &n) == TT_OK && n == 1 && a->n < 40) {
            slots[0] = tt_stfx_toy_problem[0];
            memcpy(slots + 1, p, 3 * sizeof *p);
            a->keys[a->n++] = tt_space_encode(sp, slots);
            tt_strategy_report(st, p, TT_OK, tt_stfx_obj_smooth(p));
        }
    }
    tt_strategy_free(st);
    tt_space_free(sp);
    return NULL;
}

static void test_bo_threads(void)
{
    enum { NT = 6 };
    bo_thread_arg alone[NT], together[NT];
    memset(alone, 0, sizeof alone);
    memset(together, 0, sizeof together);
    for (int i = 0; i < NT; i++) {
        alone[i].seed = together[i].seed = (uint64_t)i + 1;
        bo_thread(&alone[i]);
    }
    pthread_t th[NT];
    for (int i = 0; i < NT; i++) CU_ASSERT_EQUAL(pthread_create(&th[i], NULL, bo_thread, &together[i]), 0);
    for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NT; i++) {
        CU_ASSERT(alone[i].n > 0);
        CU_ASSERT_EQUAL(alone[i].n, together[i].n);
        CU_ASSERT(memcmp(alone[i].keys, together[i].keys, alone[i].n * sizeof(uint64_t)) == 0);
    }
}


/* bo's GP inputs, table-driven (and their kernel groups): the position of each value in its domain scaled to [0, 1]
 * (params with more than one value: x, y, f; the one-valued z has none), then, for x (at
 * least 8 values), its 2-adic valuation scaled over the domain: 16 = 2^4 ... 128 = 2^7, so
 * 48 and 80 (2^4 * odd) share 16's 0 while 32 and 96 (2^5 * odd) get 1/3, 64 2/3, 128 1. */
static const char *bo_enc_json =
    "{\"tiletune\":1,\"name\":\"enc\",\"version\":\"1\","
    "\"inputs\":{\"N\":{\"type\":\"int\"}},"
    "\"params\":{\"x\":[16,32,48,64,80,96,112,128],\"y\":[1,2,4],\"f\":[0,1],\"z\":[7]}}";

static const struct {
    int64_t x, y, f;
    double in[4];   /* x position, y position, f, 2-adic of x */
} bo_enc_rows[] = {
    {16, 1, 0, {0, 0, 0, 0}},
    {32, 2, 1, {1.0 / 7, 0.5, 1, 1.0 / 3}},
    {48, 4, 0, {2.0 / 7, 1, 0, 0}},
    {64, 1, 1, {3.0 / 7, 0, 1, 2.0 / 3}},
    {80, 2, 0, {4.0 / 7, 0.5, 0, 0}},
    {96, 4, 1, {5.0 / 7, 1, 1, 1.0 / 3}},
    {112, 1, 0, {6.0 / 7, 0, 0, 0}},
    {128, 2, 1, {1, 0.5, 1, 1}},
};

static void test_bo_inputs(void)
{
    tt_template *t = NULL;
    tt_space *sp = NULL;
    tt_errinfo e;
    int64_t prob[TT_MAX_SLOTS] = {1};
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_string(bo_enc_json, strlen(bo_enc_json), NULL, &t, &e),
                          TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, prob, NULL, &sp, &e), TT_OK);
    tt_strategy_config c = {.name = "bo", .t = t, .space = sp, .problem = prob, .seed = 1,
                            .budget = 4};
    tt_strategy *st = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_strategy_new(&c, &st, &e), TT_OK);
    int64_t p[4];
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(tt_strategy_next(st, 1, p, &n), TT_OK);   /* starts the GP */
    /* kernel groups: x (8 values) and its 2-adic input are "big" (> 4 values), y and f small */
    static const int big[4] = {1, 0, 0, 1};
    for (size_t j = 0; j < 4; j++) CU_ASSERT_EQUAL(tt__bo_dim_big(st, j), big[j]);
    for (size_t r = 0; r < sizeof bo_enc_rows / sizeof bo_enc_rows[0]; r++) {
        int64_t slots[TT_MAX_SLOTS] = {1, bo_enc_rows[r].x, bo_enc_rows[r].y, bo_enc_rows[r].f, 7};
        uint64_t idx = tt_space_encode(sp, slots);
        CU_ASSERT_FATAL(idx != UINT64_MAX);
        double in[TT_MAX_SLOTS];
        CU_ASSERT_EQUAL(tt__bo_inputs(st, idx, in), 4);
        for (int j = 0; j < 4; j++) CU_ASSERT_DOUBLE_EQUAL(in[j], bo_enc_rows[r].in[j], 1e-12);
    }
    tt_strategy_free(st);
    tt_space_free(sp);
    tt_tmpl_free(t);
}

/* Hamming distance of two toy configs (all three params have several values). */
static int toy_ham(const int64_t *a, const int64_t *b)
{
    return (a[0] != b[0]) + (a[1] != b[1]) + (a[2] != b[2]);
}

/* bo's exploit rounds: after the initial design, every 3rd round of model-free bo proposes
 * the candidate with the lowest posterior mean (on the toy space every unproposed feasible
 * config is a candidate, in a local round those within Hamming distance 2 of the best); the
 * other GP rounds take the highest expected improvement, which is not always that. */
static void test_bo_exploit_rounds(void)
{
    tt_strategy_config c = {.name = "bo", .t = tt_stfx_toy, .space = tt_stfx_toy_space, .problem = tt_stfx_toy_problem,
                            .seed = 3, .budget = 40};
    tt_strategy *st = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_strategy_new(&c, &st, NULL), TT_OK);
    int64_t p[3], q[3], bestp[3], slots[TT_MAX_SLOTS];
    size_t n, trials = 0, exploits = 0, ei_not_min = 0;
    while (tt_strategy_next(st, 1, p, &n) == TT_OK && n == 1) {
        trials++;
        slots[0] = tt_stfx_toy_problem[0];
        memcpy(slots + 1, p, sizeof p);
        uint64_t pick = tt_space_encode(tt_stfx_toy_space, slots);
        int kind = tt__bo_round(st);
        CU_ASSERT_EQUAL(!!(kind & TT__BO_INIT), trials <= 8);
        CU_ASSERT_EQUAL(!!(kind & TT__BO_EXPLOIT), trials > 8 && trials % 3 == 0);
        double mu_pick, mu, sd;
        int is_min = 1;
        if (kind & TT__BO_GP) {
            CU_ASSERT_FATAL(tt__bo_posterior(st, pick, &mu_pick, &sd));
            tt_strategy_best(st, bestp, NULL);
            for (int64_t a = 1; a <= 8; a++)
                for (int64_t b = 1; b <= 8; b++)
                    for (int64_t f = 0; f <= 1; f++) {
                        q[0] = a, q[1] = b, q[2] = f;
                        memcpy(slots + 1, q, sizeof q);
                        uint64_t k = tt_space_encode(tt_stfx_toy_space, slots);
                        if (k == pick || !tt_stfx_toy_feasible(a, b, f, tt_stfx_toy_problem[0]) ||
                            tt__u64set_has(&st->seen, k) ||
                            ((kind & TT__BO_LOCAL) && toy_ham(q, bestp) > 2))
                            continue;
                        CU_ASSERT_FATAL(tt__bo_posterior(st, k, &mu, &sd));
                        if (mu < mu_pick - 1e-9) is_min = 0;
                    }
            if (kind & TT__BO_EXPLOIT) {
                CU_ASSERT(is_min);
                exploits++;
            } else {
                ei_not_min += !is_min;
            }
        }
        CU_ASSERT_EQUAL(tt_strategy_report(st, p, TT_OK, tt_stfx_obj_rough(p)), TT_OK);
    }
    CU_ASSERT_EQUAL(trials, 40);
    CU_ASSERT_EQUAL(exploits, 11);   /* trials 9, 12, ..., 39 */
    CU_ASSERT(ei_not_min > 0);
    tt_strategy_free(st);
}

static const tt_test_case bo_cases[] = {
    {"bo_with_failures", test_bo_with_failures},
    {"bo_threads", test_bo_threads},
    {"bo_inputs", test_bo_inputs},
    {"bo_exploit_rounds", test_bo_exploit_rounds},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"strategy_bo", tt_stfx_init, tt_stfx_cleanup, bo_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * strategy_fixture.c - the toy space, objectives and strategy driver of the strategy tests.
 */
#include "strategy_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strategy.h"
#include "tt_test.h"

/* a in 1..8, b in 1..8, c in {0,1}; feasible iff a*b <= N and (a+b+c) % 3 != 0. */
static const char *toy_json =
    "{\"tiletune\":1,\"name\":\"toy\",\"version\":\"1\","
    "\"inputs\":{\"N\":{\"type\":\"int\"}},"
    "\"params\":{\"a\":{\"range\":[1,8]},\"b\":[1,2,3,4,5,6,7,8],\"c\":[0,1]},"
    "\"constraints\":[\"a*b <= N\",\"(a + b + c) % 3 != 0\"]}";

tt_template *tt_stfx_toy;
tt_space *tt_stfx_toy_space;
int64_t tt_stfx_toy_problem[TT_MAX_SLOTS];

int tt_stfx_toy_feasible(int64_t a, int64_t b, int64_t c, int64_t n)
{
    return a * b <= n && (a + b + c) % 3 != 0;
}

int tt_stfx_toy_count(int64_t n)
{
    int k = 0;
    for (int a = 1; a <= 8; a++)
        for (int b = 1; b <= 8; b++)
            for (int c = 0; c <= 1; c++) k += tt_stfx_toy_feasible(a, b, c, n);
    return k;
}

int tt_stfx_init(void)
{
    tt_errinfo e;
    if (tt_tmpl_parse_string(toy_json, strlen(toy_json), NULL, &tt_stfx_toy, &e) != TT_OK) return 1;
    tt_stfx_toy_problem[0] = 24;
    return tt_space_new(tt_stfx_toy, tt_stfx_toy_problem, NULL, &tt_stfx_toy_space, &e) != TT_OK;
}

int tt_stfx_cleanup(void)
{
    tt_space_free(tt_stfx_toy_space);
    tt_tmpl_free(tt_stfx_toy);
    return 0;
}

double tt_stfx_obj_smooth(const int64_t *p)
{
    return 1.0 + (double)((p[0] - 6) * (p[0] - 6) + (p[1] - 3) * (p[1] - 3)) + (double)p[2];
}
double tt_stfx_obj_rough(const int64_t *p)
{
    return 1.0 + (double)((p[0] * 7 + p[1] * 13 + p[2] * 5) % 17);
}

void tt_stfx_run(const char *name, uint64_t seed, int64_t budget, size_t cap,
                 double (*f)(const int64_t *), const tt_template *t, tt_space *sp,
                 const int64_t *problem, const tt_model *model, const tt_target *tgt,
                 const json_t *opts, tt_stfx_run_out *out)
{
    memset(out, 0, sizeof *out);
    out->best = INFINITY;
    tt_strategy_config c = {.name = name, .t = t, .tgt = tgt, .space = sp, .model = model,
                            .problem = problem, .seed = seed, .budget = budget, .options = opts};
    tt_strategy *st = NULL;
    tt_errinfo e;
    out->rc = tt_strategy_new(&c, &st, &e);
    CU_ASSERT_EQUAL_FATAL(out->rc, TT_OK);
    int64_t params[16 * 8];
    int64_t slots[TT_MAX_SLOTS];
    for (;;) {
        size_t n = 0;
        out->rc = tt_strategy_next(st, cap, params, &n);
        CU_ASSERT_EQUAL(out->rc, TT_OK);
        if (out->rc != TT_OK || n == 0) break;
        CU_ASSERT(n <= cap);
        for (size_t i = 0; i < n; i++) {
            const int64_t *p = params + i * t->nparams;
            memcpy(slots, problem, t->ninputs * sizeof(int64_t));
            memcpy(slots + t->ninputs, p, t->nparams * sizeof(int64_t));
            uint64_t k = tt_space_encode(sp, slots);
            CU_ASSERT(k != UINT64_MAX);
            CU_ASSERT_EQUAL(tt_space_check(sp, slots, NULL), TT_OK);
            for (size_t j = 0; j < out->n; j++) CU_ASSERT(out->keys[j] != k);
            if (out->n < sizeof out->keys / sizeof out->keys[0]) out->keys[out->n++] = k;
            double v = f(p);
            if (v < out->best) out->best = v;
            CU_ASSERT_EQUAL(tt_strategy_report(st, p, TT_OK, v), TT_OK);
        }
    }
    if (budget > 0) CU_ASSERT((int64_t)out->n <= budget);
    CU_ASSERT_EQUAL(tt_strategy_proposed(st), (int64_t)out->n);
    double b;
    if (out->n) {
        CU_ASSERT(tt_strategy_best(st, NULL, &b));
        CU_ASSERT_DOUBLE_EQUAL(b, out->best, 1e-12);
    }
    tt_strategy_free(st);
}


int tt_stfx_same_seq(const tt_stfx_run_out *a, const tt_stfx_run_out *b)
{
    return a->n == b->n && memcmp(a->keys, b->keys, a->n * sizeof a->keys[0]) == 0;
}

/* SPDX-License-Identifier: MIT
 * test_strategy_seq.c - pinned proposal sequences: the model-free strategies propose exactly
 * the configs they proposed when the table was written (tests/data/strategy/sequences.txt),
 * so that speed work on them (evolution's incremental parent ranking and cached parent
 * positions, feasibility from the enumerated space's bitset, division without a divide
 * instruction) provably changes nothing a job sees: the same trials per seed (a resumed job
 * replays them).
 *
 * Each row: strategy, space, seed, budget, batch size asked per next(), the number of
 * proposals and the FNV-1a hash of their space indices in order.  Spaces: "gemm" (the
 * shipped GEMM template for one shape, constraints only: 1 228 800 configs, 933 888
 * feasible, enumerated),
 * "gemm-sampled" (the same with max_enumerate 1: drawn and checked config by config) and
 * "toy" (128 configs, 59 feasible: budgets past it exhaust the space).  The objective is a
 * synthetic integer function of the params (no model, no floating-point library calls); one
 * config in 13 reports a failure.  Every row runs again with the enumeration cache (a space
 * key: filled, then used) to the same sequence.  Also: the divider behind tt__st_uniform's
 * small ranges (tt__udiv) equals the % operator; space keys ignore a template's name,
 * version and description but not its domains, the problem or the capacities; the cache
 * keeps the most recently used spaces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space.h"
#include "strategy.h"
#include "strategy_int.h"   /* tt__udiv */
#include "template.h"
#include "tt_test.h"

#define TOY_JSON                                                                          \
    "{\"tiletune\":1,\"name\":\"toy\",\"version\":\"1\","                                      \
    "\"inputs\":{\"N\":{\"type\":\"int\"}},"                                                  \
    "\"params\":{\"a\":{\"range\":[1,8]},\"b\":[1,2,3,4,5,6,7,8],\"c\":[0,1]},"             \
    "\"constraints\":[\"a*b <= N\",\"(a + b + c) % 3 != 0\"]}"
static const char *toy_json = TOY_JSON;

typedef struct space_fx {
    tt_template *t;
    tt_space *sp;
    int64_t problem[TT_MAX_SLOTS];
} space_fx;

static space_fx gemm_fx, toy_fx;

static int suite_init(void)
{
    char *tp = tt_test_src("templates/gemm.json");
    tt_errinfo e;
    int bad = tt_tmpl_parse_file(tp, &gemm_fx.t, &e) != TT_OK ||
              tt_tmpl_problem_parse(gemm_fx.t, "M=512,N=768,K=1024,dtype=float16,"
                                    "out_dtype=float16", gemm_fx.problem, &e) != TT_OK ||
              tt_space_new(gemm_fx.t, gemm_fx.problem, NULL, &gemm_fx.sp, &e) != TT_OK;
    free(tp);
    if (bad) return 1;
    toy_fx.problem[0] = 24;
    return tt_tmpl_parse_string(toy_json, strlen(toy_json), NULL, &toy_fx.t, &e) != TT_OK ||
           tt_space_new(toy_fx.t, toy_fx.problem, NULL, &toy_fx.sp, &e) != TT_OK;
}

static int suite_clean(void)
{
    tt_space_free(gemm_fx.sp);
    tt_tmpl_free(gemm_fx.t);
    tt_space_free(toy_fx.sp);
    tt_tmpl_free(toy_fx.t);
    return 0;
}

/* A rough synthetic objective in integer arithmetic: 0 = a failed trial. */
static int64_t objective(const int64_t *p, size_t np)
{
    uint64_t h = 1469598103934665603ULL;
    int64_t smooth = 0;
    for (size_t i = 0; i < np; i++) {
        h = (h ^ (uint64_t)p[i]) * 1099511628211ULL;
        int64_t d = p[i] % 7 - 3;
        smooth += d * d * (int64_t)(i + 1);
    }
    if (h % 13 == 0) return 0;
    return 100 + smooth * 10 + (int64_t)(h % 37);
}

/* Run one row; *n proposals and *fnv their hash.  space_key: the enumeration cache's key
 * (NULL: none). */
static void run_row(const char *strategy, const space_fx *fx, const char *opts, uint64_t seed,
                    int64_t budget, size_t cap, const char *space_key, size_t *n, uint64_t *fnv)
{
    json_t *o = opts ? json_loads(opts, 0, NULL) : NULL;
    tt_strategy_config c = {.name = strategy, .t = fx->t, .space = fx->sp,
                            .problem = fx->problem, .seed = seed, .budget = budget,
                            .options = o, .space_key = space_key};
    tt_strategy *st = NULL;
    tt_errinfo e;
    *n = 0;
    *fnv = 1469598103934665603ULL;
    CU_ASSERT_EQUAL_FATAL(tt_strategy_new(&c, &st, &e), TT_OK);
    size_t np = fx->t->nparams;
    int64_t params[16 * TT_MAX_SLOTS], slots[TT_MAX_SLOTS];
    for (;;) {
        size_t got = 0;
        CU_ASSERT_EQUAL_FATAL(tt_strategy_next(st, cap, params, &got), TT_OK);
        if (got == 0) break;
        for (size_t i = 0; i < got; i++) {
            const int64_t *p = params + i * np;
            memcpy(slots, fx->problem, fx->t->ninputs * sizeof(int64_t));
            memcpy(slots + fx->t->ninputs, p, np * sizeof(int64_t));
            uint64_t k = tt_space_encode(fx->sp, slots);
            for (int b = 0; b < 8; b++) *fnv = (*fnv ^ ((k >> (8 * b)) & 0xff)) * 1099511628211ULL;
            (*n)++;
            int64_t v = objective(p, np);
            CU_ASSERT_EQUAL(tt_strategy_report(st, p, v ? TT_OK : TT_EINTERNAL, (double)v),
                            TT_OK);
        }
    }
    tt_strategy_free(st);
    json_decref(o);
}

static void test_pinned_sequences(void)
{
    char *path = tt_test_src("tests/data/strategy/sequences.txt");
    FILE *f = fopen(path, "r");
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[512];
    int rows = 0, regen = getenv("TT_SEQ_PRINT") != NULL;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char strategy[32], space[32];
        unsigned long long seed, fnv_want;
        long long budget;
        size_t cap, n_want;
        if (sscanf(line, "%31s %31s %llu %lld %zu %zu %llx", strategy, space, &seed, &budget,
                   &cap, &n_want, &fnv_want) != 7) {
            CU_FAIL("malformed row");
            continue;
        }
        const space_fx *fx = strncmp(space, "gemm", 4) == 0 ? &gemm_fx : &toy_fx;
        const char *opts = strcmp(space, "gemm-sampled") == 0 ? "{\"max_enumerate\": 1}" : NULL;
        size_t n;
        uint64_t fnv;
        run_row(strategy, fx, opts, seed, budget, cap, NULL, &n, &fnv);
        if (regen)
            printf("%-10s %-13s %4llu %5lld %2zu %5zu %016llx\n", strategy, space, seed, budget,
                   cap, n, (unsigned long long)fnv);
        if (n != n_want || fnv != fnv_want)
            fprintf(stderr, "row %s %s seed %llu: %zu proposals %016llx, pinned %zu %016llx\n",
                    strategy, space, seed, n, (unsigned long long)fnv, n_want, fnv_want);
        CU_ASSERT_EQUAL(n, n_want);
        CU_ASSERT_EQUAL(fnv, (uint64_t)fnv_want);
        /* the same with the enumeration cache: filled by the first run, used by the second */
        char *key = tt_strategy_space_key(fx->t, fx->problem, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(key);
        for (int k = 0; k < 2; k++) {
            size_t hits = tt__st_enum_hits();
            run_row(strategy, fx, opts, seed, budget, cap, key, &n, &fnv);
            CU_ASSERT_EQUAL(n, n_want);
            CU_ASSERT_EQUAL(fnv, (uint64_t)fnv_want);
            if (k == 1 && !opts) CU_ASSERT(tt__st_enum_hits() > hits);   /* enumerated spaces */
        }
        free(key);
        rows++;
    }
    fclose(f);
    CU_ASSERT(rows >= 10);
}

/* The space key: the same for copies of a template under another name, version or
 * description; another for another problem, other capacities or another domain. */
static void test_space_key(void)
{
    static const char *const docs[] = {
        TOY_JSON,
        "{\"tiletune\":1,\"name\":\"toy2\",\"version\":\"7\",\"description\":\"a copy\","
        "\"inputs\":{\"N\":{\"type\":\"int\"}},"
        "\"params\":{\"a\":{\"range\":[1,8]},\"b\":[1,2,3,4,5,6,7,8],\"c\":[0,1]},"
        "\"constraints\":[\"a*b <= N\",\"(a + b + c) % 3 != 0\"]}",
        "{\"tiletune\":1,\"name\":\"toy\",\"version\":\"1\","
        "\"inputs\":{\"N\":{\"type\":\"int\"}},"
        "\"params\":{\"a\":{\"range\":[1,8]},\"b\":[1,2,3,4,5,6,7,8],\"c\":[0,1,2]},"
        "\"constraints\":[\"a*b <= N\",\"(a + b + c) % 3 != 0\"]}",
    };
    char *k[3];
    for (int i = 0; i < 3; i++) {
        tt_template *t = NULL;
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_string(docs[i], strlen(docs[i]), NULL, &t, &e), TT_OK);
        k[i] = tt_strategy_space_key(t, toy_fx.problem, NULL);
        tt_tmpl_free(t);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k[i]);
    }
    CU_ASSERT_STRING_EQUAL(k[0], k[1]);      /* name, version, description: the same space */
    CU_ASSERT(strcmp(k[0], k[2]) != 0);      /* another domain */
    int64_t other[TT_MAX_SLOTS] = {25};
    char *kp = tt_strategy_space_key(toy_fx.t, other, NULL);
    CU_ASSERT(kp && strcmp(kp, k[0]) != 0);  /* another problem */
    tt_caps caps;
    memset(&caps, 0, sizeof caps);
    caps.cap[0] = 1024;
    char *kc = tt_strategy_space_key(toy_fx.t, toy_fx.problem, &caps);
    CU_ASSERT(kc && strcmp(kc, k[0]) != 0);  /* capacities */
    free(kp);
    free(kc);
    for (int i = 0; i < 3; i++) free(k[i]);
}

/* The cache keeps the TT__ENUM_CACHE_N most recently used spaces: after one more, the
 * oldest is enumerated again, the newest is not; either way the same sequence. */
static void test_enum_cache_lru(void)
{
    char key[TT__ENUM_CACHE_N + 1][32];
    size_t n, n0;
    uint64_t fnv, fnv0;
    run_row("random", &toy_fx, NULL, 5, 30, 1, NULL, &n0, &fnv0);
    for (int i = 0; i <= TT__ENUM_CACHE_N; i++) {
        snprintf(key[i], sizeof key[i], "lru-test %d", i);
        run_row("random", &toy_fx, NULL, 5, 30, 1, key[i], &n, &fnv);
        CU_ASSERT(n == n0 && fnv == fnv0);
    }
    size_t hits = tt__st_enum_hits();
    run_row("random", &toy_fx, NULL, 5, 30, 1, key[0], &n, &fnv);   /* evicted: enumerated */
    CU_ASSERT_EQUAL(tt__st_enum_hits(), hits);
    CU_ASSERT(n == n0 && fnv == fnv0);
    run_row("random", &toy_fx, NULL, 5, 30, 1, key[TT__ENUM_CACHE_N], &n, &fnv);
    CU_ASSERT_EQUAL(tt__st_enum_hits(), hits + 1);
    CU_ASSERT(n == n0 && fnv == fnv0);
}

/* tt__udiv_mod (tt__st_uniform's division by a small n) equals r % n: every n below 200 and
 * some large ones, edge numerators and 4 000 pseudo-random ones each. */
static void test_udiv(void)
{
    static const uint64_t big[] = {(1ULL << 63) + 1, UINT64_MAX, UINT64_MAX - 1, 12157665459056928801ULL,
                                   1000000007ULL, (1ULL << 32) + 1, (1ULL << 32) - 1};
    uint64_t x = 88172645463325252ULL;
    size_t bad = 0, checked = 0;
    for (size_t k = 0; k < 199 + sizeof big / sizeof big[0]; k++) {
        uint64_t n = k < 199 ? k + 1 : big[k - 199];
        tt__udiv d;
        tt__udiv_init(&d, n);
        CU_ASSERT_EQUAL(d.lim, UINT64_MAX - UINT64_MAX % n);
        uint64_t edge[] = {0, 1, n - 1, n, n + 1, 2 * n - 1, 2 * n, UINT64_MAX, UINT64_MAX - 1,
                           d.lim - 1, d.lim, UINT64_MAX / n * n, UINT64_MAX / n * n - 1};
        for (size_t i = 0; i < sizeof edge / sizeof edge[0] + 4000; i++) {
            uint64_t r = edge[0];
            if (i < sizeof edge / sizeof edge[0]) {
                r = edge[i];
            } else {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                r = i & 1 ? x : x >> (i % 64);
            }
            bad += tt__udiv_mod(&d, r) != r % n;
            checked++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(checked > 800000);
}

static const tt_test_case cases[] = {{"pinned_sequences", test_pinned_sequences},
                                     {"udiv", test_udiv},
                                     {"space_key", test_space_key},
                                     {"enum_cache_lru", test_enum_cache_lru},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"strategy_seq", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_space.c - search spaces: hand-computed counts (total, feasible, rejections by reason,
 * partial configs visited), capacities with alignment, expression errors, limits, visitor
 * stop, tt_space_check agreeing with the enumeration, decode/encode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space.h"
#include "tt_test.h"

/* A2 capacities and alignments (ascend/HARDWARE.md); GM unused. */
static const tt_caps a2_caps = {{0, 524288, 65536, 65536, 131072, 196608}, {0, 32, 512, 512, 64, 32}};

static tt_template *parse(const char *doc)
{
    tt_template *t = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, &e);
    if (rc) fprintf(stderr, "parse: %s [%s] %s\n", tt_rc_code(rc), e.path, e.msg);
    return t;
}

static uint64_t rejected(const tt_space_counts *c, const char *reason)
{
    for (size_t i = 0; i < c->nreasons; i++)
        if (strcmp(c->reason[i], reason) == 0) return c->rejected[i];
    return 0;
}

static uint64_t sum_counts(const tt_space_counts *c)
{
    uint64_t s = c->feasible;
    for (size_t i = 0; i < c->nreasons; i++) s += c->rejected[i];
    return s;
}

/* Every config of the product through decode + tt_space_check: the same feasible count and
 * the same reasons as the enumeration. */
static void check_agrees(const tt_space *s, const tt_template *t, const int64_t *problem,
                         const tt_space_counts *c)
{
    uint64_t total = tt_space_total(s), feasible = 0;
    tt_space_counts byc;
    memset(&byc, 0, sizeof byc);
    int64_t slots[TT_MAX_SLOTS] = {0};
    memcpy(slots, problem, t->ninputs * sizeof *slots);
    for (uint64_t i = 0; i < total; i++) {
        tt_space_decode(s, i, slots);
        CU_ASSERT_EQUAL(tt_space_encode(s, slots), i);
        tt_errinfo e;
        tt_rc rc = tt_space_check(s, slots, &e);
        if (rc == TT_OK) {
            feasible++;
            continue;
        }
        CU_ASSERT_EQUAL(rc, TT_EINFEASIBLE);
        /* the counted reason is the message up to a capacity refusal's byte counts */
        char *detail = strstr(e.msg, ": buffers need ");
        if (detail) *detail = '\0';
        size_t k = 0;
        while (k < byc.nreasons && strcmp(byc.reason[k], e.msg) != 0) k++;
        if (k == byc.nreasons) {
            size_t len = strlen(e.msg);
            if (len >= sizeof byc.reason[k]) len = sizeof byc.reason[k] - 1;
            memcpy(byc.reason[k], e.msg, len);
            byc.reason[k][len] = '\0';
            byc.nreasons++;
        }
        byc.rejected[k]++;
    }
    CU_ASSERT_EQUAL(feasible, c->feasible);
    CU_ASSERT_EQUAL(byc.nreasons, c->nreasons);
    for (size_t k = 0; k < byc.nreasons; k++) CU_ASSERT_EQUAL(rejected(c, byc.reason[k]), byc.rejected[k]);
}

/* ---- constraints at three levels --------------------------------------------------------------- */

static const char *T1 =
    "{\"tiletune\":1,\"name\":\"t1\",\"inputs\":{\"N\":\"int\"},"
    "\"params\":{\"a\":[1,2,3,4],\"b\":[1,2,3],\"c\":[10,20]},"
    "\"let\":{\"s\":\"a * b\"},"
    "\"constraints\":[\"a != 3\",\"s <= N\",\"c == 10 or b == 1\"]}";

static int count_visit(void *ud, const int64_t *slots)
{
    (void)slots;
    (*(int *)ud)++;
    return 0;
}

static void test_constraints_by_level(void)
{
    tt_template *t = parse(T1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t p[1] = {6};
    tt_space *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, p, NULL, &s, NULL), TT_OK);
    tt_space_counts c;
    int visits = 0;
    CU_ASSERT_EQUAL(tt_space_enumerate(s, count_visit, &visits, 0, &c), TT_OK);
    /* by hand: a=3 drops 3*2 = 6 configs at level 1; (a,b) in {(4,2),(4,3)} give s > 6 and drop
     * 2*2 = 4 at level 2; 7 pairs remain, 14 configs, of which c=20 with b != 1 drops 4. */
    CU_ASSERT_EQUAL(c.total, 24);
    CU_ASSERT_EQUAL(c.feasible, 10);
    CU_ASSERT_EQUAL(visits, 10);
    CU_ASSERT_EQUAL(c.nreasons, 3);
    CU_ASSERT_EQUAL(rejected(&c, "constraints[0]: a != 3"), 6);
    CU_ASSERT_EQUAL(rejected(&c, "constraints[1]: s <= N"), 4);
    CU_ASSERT_EQUAL(rejected(&c, "constraints[2]: c == 10 or b == 1"), 4);
    CU_ASSERT_EQUAL(c.visited_partial, 1 + 4 + 9 + 14);   /* level 0, 1, 2, 3 */
    CU_ASSERT_EQUAL(c.complete, 1);
    check_agrees(s, t, p, &c);
    /* single checks */
    int64_t sl[TT_MAX_SLOTS] = {6, 3, 1, 10};
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_EINFEASIBLE);
    CU_ASSERT_STRING_EQUAL(e.msg, "constraints[0]: a != 3");
    CU_ASSERT_STRING_EQUAL(e.path, "constraints[0]");
    sl[1] = 2;
    sl[2] = 3;
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_OK);
    CU_ASSERT_EQUAL(sl[4], 6);                             /* the let was evaluated into slots */
    sl[3] = 20;
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_EINFEASIBLE);
    CU_ASSERT_STRING_EQUAL(e.msg, "constraints[2]: c == 10 or b == 1");
    sl[3] = 15;
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_ECONFIG);
    CU_ASSERT_EQUAL(tt_space_encode(s, sl), UINT64_MAX);
    /* a different problem: N = 100 lifts constraint 1 */
    tt_space_free(s);
    p[0] = 100;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, p, NULL, &s, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_space_enumerate(s, NULL, NULL, 0, &c), TT_OK);
    CU_ASSERT_EQUAL(c.feasible, 12);      /* 18 configs with a != 3, minus c=20 & b != 1 (3*2) */
    CU_ASSERT_EQUAL(rejected(&c, "constraints[1]: s <= N"), 0);
    tt_space_free(s);
    /* out-of-range problem */
    p[0] = 0;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_space_new(t, p, NULL, &s, &e), TT_EPROBLEM);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_STRING_EQUAL(e.path, "problem.N");
    tt_tmpl_free(t);
}

/* A constraint on inputs only rejects the whole space at level 0. */
static void test_level0_rejection(void)
{
    tt_template *t = parse("{\"tiletune\":1,\"name\":\"z\",\"inputs\":{\"N\":\"int\"},"
                           "\"params\":{\"a\":{\"range\":[1,100]},\"b\":{\"range\":[1,100]}},"
                           "\"constraints\":[\"N % 2 == 0\"]}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t p[1] = {5};
    tt_space *s;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, p, NULL, &s, NULL), TT_OK);
    tt_space_counts c;
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    CU_ASSERT_EQUAL(c.total, 10000);
    CU_ASSERT_EQUAL(c.feasible, 0);
    CU_ASSERT_EQUAL(c.visited_partial, 1);
    CU_ASSERT_EQUAL(rejected(&c, "constraints[0]: N % 2 == 0"), 10000);
    tt_space_free(s);
    p[0] = 6;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, p, NULL, &s, NULL), TT_OK);
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    CU_ASSERT_EQUAL(c.feasible, 10000);
    CU_ASSERT_EQUAL(c.visited_partial, 1 + 100 + 10000);
    tt_space_free(s);
    tt_tmpl_free(t);
}

/* ---- capacities ----------------------------------------------------------------------------- */

static const char *T2 =
    "{\"tiletune\":1,\"name\":\"t2\",\"inputs\":{\"dtype\":[\"float16\",\"float32\"]},"
    "\"params\":{\"m\":[16,32,64],\"k\":[16,32],\"s\":[1,2]},"
    "\"buffers\":{\"X\":{\"scope\":\"UB\",\"shape\":[\"m\",\"k\"],\"dtype\":\"dtype\",\"copies\":\"s\"},"
    "\"Y\":{\"scope\":\"UB\",\"shape\":[\"m\"],\"dtype\":\"float32\"},"
    "\"Z\":{\"scope\":\"L0C\",\"shape\":[\"m\",\"m\"],\"dtype\":\"float32\"}}}";

static void test_capacity(void)
{
    tt_template *t = parse(T2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_caps caps = a2_caps;
    caps.cap[TT_SCOPE_UB] = 4096;
    caps.cap[TT_SCOPE_L0C] = 8192;
    int64_t p[1] = {TT_DT_FLOAT16};
    tt_space *s;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, p, &caps, &s, NULL), TT_OK);
    tt_space_counts c;
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    /* fp16, by hand: Z = 4 m^2 exceeds 8192 at m=64 (drops 2*2 = 4 at level 1); UB = 4m +
     * s*2mk: only m=32,k=32,s=2 (128 + 4096) exceeds 4096. */
    CU_ASSERT_EQUAL(c.total, 12);
    CU_ASSERT_EQUAL(c.feasible, 7);
    CU_ASSERT_EQUAL(rejected(&c, "L0C capacity"), 4);
    CU_ASSERT_EQUAL(rejected(&c, "UB capacity"), 1);
    CU_ASSERT_EQUAL(c.nreasons, 2);
    CU_ASSERT_EQUAL(c.visited_partial, 1 + 3 + 4 + 8);
    check_agrees(s, t, p, &c);
    tt_space_free(s);
    /* fp32: X doubles; m16k32s2, m32k16s2, m32k32s1, m32k32s2 overflow UB */
    p[0] = TT_DT_FLOAT32;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, p, &caps, &s, NULL), TT_OK);
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    CU_ASSERT_EQUAL(c.feasible, 4);
    CU_ASSERT_EQUAL(rejected(&c, "UB capacity"), 4);
    CU_ASSERT_EQUAL(rejected(&c, "L0C capacity"), 4);
    int64_t sl[TT_MAX_SLOTS] = {TT_DT_FLOAT32, 32, 32, 1};
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_EINFEASIBLE);
    CU_ASSERT_STRING_EQUAL(e.msg, "UB capacity: buffers need 4224 B, the target has 4096 B");
    sl[2] = 16;
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_OK);
    tt_space_free(s);
    /* no caps: no capacity checks */
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, p, NULL, &s, NULL), TT_OK);
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    CU_ASSERT_EQUAL(c.feasible, 12);
    CU_ASSERT_EQUAL(c.nreasons, 0);
    tt_space_free(s);
    tt_tmpl_free(t);
}

/* Alignment: an int8 buffer of n bytes takes align_up(n, 32) per copy. */
static void test_alignment(void)
{
    tt_template *t = parse("{\"tiletune\":1,\"name\":\"al\",\"params\":{\"n\":[1,17,40]},"
                           "\"buffers\":{\"V\":{\"scope\":\"UB\",\"shape\":[\"n\"],"
                           "\"dtype\":\"int8\",\"copies\":2}}}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_caps caps = a2_caps;
    caps.cap[TT_SCOPE_UB] = 100;
    tt_space *s;
    tt_space_counts c;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, (int64_t[]){0}, &caps, &s, NULL), TT_OK);
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    CU_ASSERT_EQUAL(c.feasible, 2);                    /* 2*32, 2*32 fit; 2*64 does not */
    CU_ASSERT_EQUAL(rejected(&c, "UB capacity"), 1);
    tt_space_free(s);
    caps.align[TT_SCOPE_UB] = 1;                       /* 2, 34, 80 bytes: all fit */
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, (int64_t[]){0}, &caps, &s, NULL), TT_OK);
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    CU_ASSERT_EQUAL(c.feasible, 3);
    tt_space_free(s);
    tt_tmpl_free(t);
}

/* ---- expression errors ---------------------------------------------------------------------- */

static void test_expression_errors(void)
{
    tt_template *t = parse("{\"tiletune\":1,\"name\":\"ov\",\"inputs\":{\"N\":{\"type\":\"int\","
                           "\"max\":4294967296}},\"params\":{\"a\":[1,2,3],\"b\":[1,2]},"
                           "\"let\":{\"x\":\"N ** a\",\"y\":\"100 // (b - 1)\"},"
                           "\"constraints\":[\"x > 0\"],"
                           "\"buffers\":{\"B\":{\"scope\":\"UB\",\"shape\":[\"x\",\"x\"],"
                           "\"dtype\":\"int8\"}}}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t p[1] = {(int64_t)1 << 31};
    tt_space *s;
    tt_caps caps = a2_caps;
    caps.cap[TT_SCOPE_UB] = INT64_MAX;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, p, &caps, &s, NULL), TT_OK);
    tt_space_counts c;
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    /* a=3: 2^93 overflows (2 configs); a=2: x*x = 2^124 bytes overflows the buffer (2);
     * a=1, b=1: 100 // 0 (1); a=1, b=2 is the only feasible config. */
    CU_ASSERT_EQUAL(c.feasible, 1);
    CU_ASSERT_EQUAL(rejected(&c, "let x: overflow"), 2);
    CU_ASSERT_EQUAL(rejected(&c, "buffer B: overflow"), 2);
    CU_ASSERT_EQUAL(rejected(&c, "let y: division by zero"), 1);
    CU_ASSERT_EQUAL(sum_counts(&c), 6);
    check_agrees(s, t, p, &c);
    int64_t sl[TT_MAX_SLOTS] = {p[0], 3, 2};
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_EINFEASIBLE);
    CU_ASSERT_STRING_EQUAL(e.msg, "let x: overflow");
    CU_ASSERT_STRING_EQUAL(e.path, "let.x");
    tt_space_free(s);
    tt_tmpl_free(t);

    /* `/` is true division: a let that divides inexactly is a domain error whose reason
     * names the likely cause; `//` and an exact `/` are integers */
    t = parse("{\"tiletune\":1,\"name\":\"td\",\"params\":{\"a\":[2,3,4,6]},"
              "\"let\":{\"h\":\"a / 2\",\"f\":\"a // 4\"},\"constraints\":[\"h + f > 0\"]}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, NULL, NULL, &s, NULL), TT_OK);
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    CU_ASSERT_EQUAL(c.feasible, 3);   /* a = 2, 4, 6 */
    CU_ASSERT_EQUAL(rejected(&c, "let h: domain error (a fraction? `/` is true division, "
                                 "`//` floors)"), 1);
    tt_space_free(s);
    tt_tmpl_free(t);
}

/* ---- size, limits, visitor ---------------------------------------------------------------- */

static int stop_after_5(void *ud, const int64_t *slots)
{
    (void)slots;
    return ++*(int *)ud >= 5;
}

static void test_huge_space_limit(void)
{
    /* 6 params x 100 values = 10^12 configs, all feasible: a limit stops it early */
    tt_template *t = parse("{\"tiletune\":1,\"name\":\"huge\",\"params\":{"
                           "\"a\":{\"range\":[1,100]},\"b\":{\"range\":[1,100]},"
                           "\"c\":{\"range\":[1,100]},\"d\":{\"range\":[1,100]},"
                           "\"e\":{\"range\":[1,100]},\"f\":{\"range\":[1,100]}},"
                           "\"constraints\":[\"a + b + c + d + e + f > 0\"]}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_space *s;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, (int64_t[]){0}, NULL, &s, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_space_total(s), 1000000000000ULL);
    tt_space_counts c;
    CU_ASSERT_EQUAL(tt_space_enumerate(s, NULL, NULL, 1000, &c), TT_OK);
    CU_ASSERT_EQUAL(c.feasible, 1000);
    CU_ASSERT_EQUAL(c.complete, 0);
    CU_ASSERT_EQUAL(c.total, 1000000000000ULL);
    CU_ASSERT(c.visited_partial < 2000);
    int n = 0;
    CU_ASSERT_EQUAL(tt_space_enumerate(s, stop_after_5, &n, 0, &c), TT_OK);
    CU_ASSERT_EQUAL(n, 5);
    CU_ASSERT_EQUAL(c.feasible, 5);
    CU_ASSERT_EQUAL(c.complete, 0);
    /* decode of the last index: every param at its last value */
    int64_t sl[TT_MAX_SLOTS] = {0};
    tt_space_decode(s, 1000000000000ULL - 1, sl);
    for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(sl[i], 100);
    CU_ASSERT_EQUAL(tt_space_encode(s, sl), 1000000000000ULL - 1);
    tt_space_decode(s, 1, sl);                     /* the last param varies fastest */
    CU_ASSERT(sl[0] == 1 && sl[4] == 1 && sl[5] == 2);
    tt_space_free(s);
    tt_tmpl_free(t);

    /* 8 params x 4096 values: the product saturates */
    char doc[1024] = "{\"tiletune\":1,\"name\":\"sat\",\"params\":{";
    for (int i = 0; i < 8; i++)
        snprintf(doc + strlen(doc), sizeof doc - strlen(doc), "%s\"p%d\":{\"range\":[1,4096]}",
                 i ? "," : "", i);
    strcat(doc, "}}");
    t = parse(doc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, (int64_t[]){0}, NULL, &s, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_space_total(s), UINT64_MAX);
    CU_ASSERT(!tt_space_indexed(s));   /* its configs have no 64-bit index */
    tt_space_enumerate(s, NULL, NULL, 10, &c);
    CU_ASSERT_EQUAL(c.feasible, 10);
    tt_space_free(s);
    tt_tmpl_free(t);
}

/* ---- the GEMM template on A2 capacities ------------------------------------------------------ */

static void test_gemm_a2(void)
{
    char *path = tt_test_src("templates/gemm.json");
    tt_template *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(path, &t, NULL), TT_OK);
    free(path);
    int64_t sl[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, "M=4096,N=4096,K=4096,out_dtype=float32", sl, &e), TT_OK);
    tt_space *s;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, sl, &a2_caps, &s, &e), TT_OK);
    tt_space_counts c;
    tt_space_enumerate(s, NULL, NULL, 0, &c);
    CU_ASSERT_EQUAL(c.total, 16 * 16 * 5 * 10 * 4 * 2 * 3 * 4);
    CU_ASSERT_EQUAL(sum_counts(&c), c.total);
    CU_ASSERT(c.feasible > 0 && c.feasible < c.total);
    CU_ASSERT(rejected(&c, "L0C capacity") > 0);
    CU_ASSERT(c.visited_partial < c.total);             /* early rejection did work */
    /* the published intrinsic config (128, 256, 64, 256, 2, 2) is feasible: L1 = 2 * (128*256 +
     * 256*256) * 2 B = 384 KiB, L0A 32 KiB, L0B 64 KiB, L0C 128 KiB */
    CU_ASSERT_EQUAL(tt_tmpl_config_parse(t, "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2",
                                         sl, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_OK);
    /* one more copy in L1 (S1=3: 576 KiB) does not fit */
    sl[t->ninputs + 4] = 3;
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_EINFEASIBLE);
    CU_ASSERT_STRING_EQUAL(e.msg, "L1 capacity: buffers need 589824 B, the target has 524288 B");
    /* 256 x 256 fp32 accumulator = 256 KiB > L0C */
    CU_ASSERT_EQUAL(tt_tmpl_config_parse(t, "block_M=256,block_N=256,block_K=64,K_L1=64,S1=1,S2=1",
                                         sl, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_space_check(s, sl, &e), TT_EINFEASIBLE);
    CU_ASSERT_STRING_EQUAL(e.msg, "L0C capacity: buffers need 262144 B, the target has 131072 B");
    /* visitor sees evaluated lets */
    tt_space_free(s);
    tt_tmpl_free(t);
}

static void test_decode_encode_gemm(void)
{
    char *path = tt_test_src("templates/gemm.json");
    tt_template *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(path, &t, NULL), TT_OK);
    free(path);
    int64_t sl[TT_MAX_SLOTS] = {1024, 1024, 1024, 0, 0};
    tt_space *s;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(t, sl, &a2_caps, &s, NULL), TT_OK);
    uint64_t total = tt_space_total(s), x = 12345;
    for (int i = 0; i < 2000; i++) {
        uint64_t idx = i < 2 ? (uint64_t)i * (total - 1) : (x = x * 6364136223846793005ULL + 1) % total;
        tt_space_decode(s, idx, sl);
        CU_ASSERT_EQUAL(tt_space_encode(s, sl), idx);
    }
    tt_space_decode(s, 0, sl);
    for (size_t i = 0; i < t->nparams; i++) CU_ASSERT_EQUAL(sl[t->ninputs + i], t->params[i].values[0]);
    sl[t->ninputs] = 100;                                /* off-domain block_M */
    CU_ASSERT_EQUAL(tt_space_encode(s, sl), UINT64_MAX);
    tt_space_free(s);
    tt_space_free(NULL);
    tt_tmpl_free(t);
}

static const tt_test_case space_cases[] = {
    {"constraints_by_level", test_constraints_by_level},
    {"level0_rejection", test_level0_rejection},
    {"capacity", test_capacity},
    {"alignment", test_alignment},
    {"expression_errors", test_expression_errors},
    {"huge_space_limit", test_huge_space_limit},
    {"gemm_a2", test_gemm_a2},
    {"decode_encode_gemm", test_decode_encode_gemm},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"space", NULL, NULL, space_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_jsonutil.c - compiler/jsonutil.h: tt_json_real_text and tt_json_reals write exactly the
 * text jansson writes for a real (the runner stores a trial's samples with them), on a table of
 * edge values and on 200 000 seeded values of every magnitude; tt_json_loadb and tt_json_loadf
 * ignore one leading UTF-8 byte order mark and nothing else.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "tt_test.h"

/* 1 when tt_json_real_text(v) equals jansson's dump of json_real(v); prints the difference. */
static int same_as_jansson(double v)
{
    char mine[TT_JSON_REAL_MAX];
    size_t n = tt_json_real_text(v, mine);
    json_t *j = json_real(v);
    char *ref = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    json_decref(j);
    int ok = ref ? n == strlen(ref) && strcmp(mine, ref) == 0 : n == 0;
    if (!ok) fprintf(stderr, "%.17g: tt_json_real_text \"%s\", jansson \"%s\"\n", v, n ? mine : "",
                     ref ? ref : "(refused)");
    free(ref);
    return ok;
}

static void test_edges(void)
{
    static const double v[] = {
        0.0, -0.0, 1.0, -1.0, 10.0, 0.1, 0.5, 1e-4, 9.9999999999999e-5, 1e-5, 1e16, 1e17,
        9.9999999999999999e16, 99999999999999984.0, 1e300, -1e-300, 5e-324, 2.2250738585072014e-308,
        1.7976931348623157e308, 3976.191997528076, 3.8707199096679688, 123456789012345678.0,
        0.30000000000000004, 2.5, 1234.5, 4503599627370496.0, 9007199254740993.0};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) CU_ASSERT(same_as_jansson(v[i]));
    char buf[TT_JSON_REAL_MAX];
    CU_ASSERT_EQUAL(tt_json_real_text(NAN, buf), 0);       /* jansson refuses these too */
    CU_ASSERT_EQUAL(tt_json_real_text(INFINITY, buf), 0);
}

/* xorshift64*: a fixed sequence, the same on every host */
static uint64_t next(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ULL;
}

static void test_seeded(void)
{
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    int bad = 0;
    for (int i = 0; i < 200000 && bad < 10; i++) {
        uint64_t r = next(&x);
        double u = (double)(r >> 11) / 9007199254740992.0, v;
        switch (i % 4) {
        case 0: v = u * pow(10, (double)((int)(r % 30) - 8)); break;   /* every magnitude */
        case 1: v = (double)(float)(u * 10) * 1000.0; break;            /* ms floats in us */
        case 2: v = (double)(r % 100000) / pow(10, (double)(r % 8)); break;   /* short decimals */
        default:   /* neighbours of doubles: the rounding edges */
            memcpy(&v, &r, sizeof v);
            if (!isfinite(v)) v = u;
        }
        if (i % 7 == 0) v = -v;
        if (!same_as_jansson(v)) bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_arrays(void)
{
    const double v[] = {1.5, 2.0, 3976.191997528076};
    char *t = tt_json_reals(v, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(t, "[1.5,2.0,3976.1919975280762]");
    free(t);
    t = tt_json_reals(v, 0);
    CU_ASSERT_STRING_EQUAL(t, "[]");
    free(t);
    const double bad[] = {1.0, NAN};
    CU_ASSERT_PTR_NULL(tt_json_reals(bad, 2));
}

/* A leading UTF-8 byte order mark is skipped by both loaders (text and stream); anything else
 * is jansson's to judge, with jansson's error. */
static void test_bom(void)
{
    static const struct {
        const char *text;
        int ok;          /* 1: loads as {"a": 1} */
        int column;      /* the error's column when not ok */
    } rows[] = {
        {"{\"a\": 1}", 1, 0},
        {"\xEF\xBB\xBF{\"a\": 1}", 1, 0},
        {"\xEF\xBB\xBF  {\"a\": 1}\n", 1, 0},
        {"\xEF\xBB\xBF", 0, 0},                          /* a mark and no JSON */
        {"\xEF\xBB\xBF\xEF\xBB\xBF{\"a\": 1}", 0, 1},       /* only one mark is skipped */
        {"\xEF\xBB{\"a\": 1}", 0, 0},                    /* a cut mark is no mark */
        {"\xEF", 0, 0},
        {"", 0, 0},
        {" \xEF\xBB\xBF{\"a\": 1}", 0, 2},               /* a mark after a blank is not leading */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t len = strlen(rows[i].text);
        for (int stream = 0; stream < 2; stream++) {
            json_error_t je;
            FILE *f = !stream ? NULL
                      : len       ? fmemopen((void *)rows[i].text, len, "rb")
                                  : fopen("/dev/null", "rb");
            json_t *j = stream ? (f ? tt_json_loadf(f, JSON_REJECT_DUPLICATES, &je) : NULL)
                               : tt_json_loadb(rows[i].text, len, JSON_REJECT_DUPLICATES, &je);
            if (f) fclose(f);
            int ok = j && json_integer_value(json_object_get(j, "a")) == 1;
            if (ok != rows[i].ok || (!ok && rows[i].column && je.column != rows[i].column)) {
                fprintf(stderr, "row %zu (%s): ok %d column %d: %s\n", i,
                        stream ? "stream" : "text", ok, j ? 0 : je.column, j ? "" : je.text);
                CU_FAIL("byte order mark");
            }
            json_decref(j);
        }
    }
}

static const tt_test_case cases[] = {
    {"edges", test_edges}, {"seeded", test_seeded}, {"arrays", test_arrays}, {"bom", test_bom},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"jsonutil", NULL, NULL, cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_ci_export_versions.c - GET /v1/export and GET /v1/best after their template changed,
 * called directly on a hand-built tt_server with a temporary SQLite store
 * (tests/helpers/ci_fixture): one row per problem whatever version keyed it, only configs
 * that fit the current version, and best answering as export does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci_fixture.h"
#include "jsonutil.h"
#include "tt_test.h"

static json_t *q_export(const char *fmt, const char *tmpl)
{
    return json_pack("{s:s, s:s, s:s}", "template", tmpl, "target", "a2", "format", fmt);
}

/* Put a version of template "ver" (inputs M[, Z with default 1], param b in 1, 2, 4[, the
 * constraint b <= 2]); *out borrowed from the catalog. */
static void put_ver(int v2, const tt_template **out)
{
    char doc[512];
    snprintf(doc, sizeof doc, "{\"tiletune\": 1, \"name\": \"ver\", \"version\": \"%d\", "
             "\"inputs\": {\"M\": \"int\"%s}, \"params\": {\"b\": [1, 2, 4]}%s}", v2 ? 2 : 1,
             v2 ? ", \"Z\": {\"type\": \"int\", \"min\": 1, \"max\": 8, \"default\": 1}" : "",
             v2 ? ", \"constraints\": [\"b <= 2\"]" : "");
    json_t *d = json_loads(doc, 0, NULL);
    tt_errinfo err;
    tt_errinfo_clear(&err);
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put_as(tt_cfx_srv.catalog, tt_cfx_srv.store, NULL, d,
                                            "tester", 1, out, &err), TT_OK);
    json_decref(d);
}

/* A best row of template t on a2 (sim): problem kv, param b, median us. */
static void record_ver(const tt_template *t, const char *kv, int64_t b, double median)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    char cfg[32];
    tt_errinfo err;
    tt_errinfo_clear(&err);
    snprintf(cfg, sizeof cfg, "b=%lld", (long long)b);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, kv, slots, &err), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, cfg, slots, &err), TT_OK);
    tt_cfx_record(t, slots, "sim", median, 0.0, 0, 0);
}

/* After a template changed, the export still has one row per problem, the fastest whose
 * config fits the current version: version 2 gained an input Z with a default (the rows of
 * version 1, keyed "M=..", are the same problems as version 2's "M=..,Z=1": they used to be
 * exported twice, with one variant_key) and a constraint b <= 2 (a version-1 row with b=4
 * used to be exported although its config is no longer valid).  A problem whose rows all
 * fail says so instead of "nothing tuned"; problem= finds a problem under either key. */
static void test_export_versions(void)
{
    const tt_template *t;
    put_ver(0, &t);
    record_ver(t, "M=4096", 2, 20.0);   /* fastest of M=4096, fits v2 */
    record_ver(t, "M=64", 4, 5.0);      /* fastest of M=64, b=4 breaks v2's constraint */
    record_ver(t, "M=8", 4, 5.0);       /* the only row of M=8 */
    put_ver(1, &t);
    record_ver(t, "M=4096", 1, 30.0);
    record_ver(t, "M=64", 1, 9.0);
    tt_resp r;
    tt_cfx_call(tt_api_export, "GET", NULL, q_export("json", "ver"), &r);
    CU_ASSERT_EQUAL_FATAL(r.status, 200);
    const json_t *recs = json_object_get(r.json, "records");
    CU_ASSERT_EQUAL(json_array_size(recs), 2);
    static const struct {
        const char *vk;
        int64_t b;
        double median;
    } want[] = {{"ver_M4096_Z1", 2, 20.0}, {"ver_M64_Z1", 1, 9.0}};
    for (size_t w = 0; w < 2; w++) {
        int seen = 0;
        size_t i;
        json_t *e;
        json_array_foreach((json_t *)recs, i, e) {
            if (strcmp(tt_cfx_js(json_object_get(e, "variant_key")), want[w].vk)) continue;
            seen++;
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(e, "config"),
                                                               "b")), want[w].b);
            CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(e, "median_us")),
                                   want[w].median, 1e-9);
        }
        if (seen != 1) fprintf(stderr, "versions: %s exported %d times\n", want[w].vk, seen);
        CU_ASSERT_EQUAL(seen, 1);
    }
    tt_cfx_resp_clear(&r);
    /* problem= finds the version-1 row too: M=4096 is M=4096,Z=1 */
    json_t *q = q_export("json", "ver");
    json_object_set_new(q, "problem", json_string("M=4096"));
    tt_cfx_call(tt_api_export, "GET", NULL, q, &r);
    CU_ASSERT_EQUAL_FATAL(r.status, 200);
    recs = json_object_get(r.json, "records");
    CU_ASSERT_EQUAL(json_array_size(recs), 1);
    CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(json_array_get(recs, 0),
                                                             "median_us")), 20.0, 1e-9);
    tt_cfx_resp_clear(&r);
    /* a problem= that no row fits, or that was never tuned, says so in every format (t4
     * said "nothing tuned for ver on <target>" for both, naming no problem) */
    static const struct {
        const char *fmt, *problem, *msg;
    } miss[] = {
        {"c-header", "M=8", "none fits the template's current version"},
        {"t4", "M=8", "none fits the template's current version"},
        {"json", "M=9", "nothing tuned for ver on Ascend910B2 at M=9,Z=1"},
        {"t4", "M=9", "nothing tuned for ver on Ascend910B2 at M=9,Z=1"},
    };
    for (size_t i = 0; i < sizeof miss / sizeof miss[0]; i++) {
        q = q_export(miss[i].fmt, "ver");
        json_object_set_new(q, "problem", json_string(miss[i].problem));
        tt_cfx_call(tt_api_export, "GET", NULL, q, &r);
        const char *msg = tt_cfx_js(json_object_get(json_object_get(r.json, "error"), "message"));
        if (r.status != 404 || !strstr(msg, miss[i].msg) || !strstr(msg, miss[i].problem))
            fprintf(stderr, "versions miss %zu (%s %s): %d %s\n", i, miss[i].fmt,
                    miss[i].problem, r.status, msg);
        CU_ASSERT_EQUAL(r.status, 404);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, miss[i].msg));
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, miss[i].problem));
        tt_cfx_resp_clear(&r);
    }
}

/* Put version v of template "bver": input M (v3: and Z with default 1), param b in 1, 2, 4,
 * from v2 the constraint b <= 2; its hash into hash[17]. */
static void put_bver(int v, char *hash)
{
    char doc[512];
    snprintf(doc, sizeof doc, "{\"tiletune\": 1, \"name\": \"bver\", \"version\": \"%d\", "
             "\"inputs\": {\"M\": \"int\"%s}, \"params\": {\"b\": [1, 2, 4]}%s}", v,
             v >= 3 ? ", \"Z\": {\"type\": \"int\", \"min\": 1, \"max\": 8, \"default\": 1}" : "",
             v >= 2 ? ", \"constraints\": [\"b <= 2\"]" : "");
    json_t *d = json_loads(doc, 0, NULL);
    tt_errinfo err;
    tt_errinfo_clear(&err);
    const tt_template *t;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_put_as(tt_cfx_srv.catalog, tt_cfx_srv.store, NULL, d,
                                            "tester", 1, &t, &err), TT_OK);
    snprintf(hash, 17, "%s", t->hash);
    json_decref(d);
}

/* A best row of bver's current version on a2 under backend fp (one row per version,
 * problem and backend: the fastest). */
static void record_bver(const char *kv, int64_t b, double median, const char *fp)
{
    const tt_template *t;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_template(tt_cfx_srv.catalog, tt_cfx_srv.store, "bver", NULL,
                                              &t, NULL), TT_OK);
    int64_t slots[TT_MAX_SLOTS] = {0};
    char cfg[32];
    snprintf(cfg, sizeof cfg, "b=%lld", (long long)b);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, kv, slots, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, cfg, slots, NULL), TT_OK);
    tt_cfx_record(t, slots, fp, median, 0.0, 0, 0);
}

/* GET /v1/best of bver on a2 at M (extra: "" or "hash=..", "nearest=1", one argument);
 * checks the status and, when 200, config b and the median; on a 404 with msg, its message. */
static void check_best(int line, const char *m, const char *extra, int status, int64_t b,
                       double median, const char *msg)
{
    json_t *q = json_pack("{s:s, s:s, s:s}", "template", "bver", "target", "a2", "M", m);
    char k[32] = "", v[64] = "";
    if (*extra) {
        sscanf(extra, "%31[^=]=%63s", k, v);
        json_object_set_new(q, k, json_string(v));
    }
    tt_resp r;
    tt_cfx_call(tt__api_best, "GET", NULL, q, &r);
    json_t *o = r.json ? json_incref(r.json) : json_loads(r.text ? r.text : "", 0, NULL);
    const char *emsg = tt_cfx_js(json_object_get(json_object_get(o, "error"), "message"));
    int64_t got_b = json_integer_value(json_object_get(json_object_get(o, "config"), "b"));
    double got_m = json_number_value(json_object_get(o, "median_us"));
    int ok = r.status == status &&
             (status != 200 || (got_b == b && got_m == median)) &&
             (!msg || strstr(emsg, msg));
    if (!ok)
        fprintf(stderr, "best line %d (M=%s %s): %d b=%lld median=%g %s\n", line, m, extra,
                r.status, (long long)got_b, got_m, emsg);
    CU_ASSERT(ok);
    json_decref(o);
    tt_cfx_resp_clear(&r);
}
#define CHECK_BEST(...) check_best(__LINE__, __VA_ARGS__)

/* After the template was replaced, GET /v1/best (no hash=) answers the fastest row whose
 * config the current version runs, as the export does: it used to answer an older version's
 * faster config that the new constraint forbids (b=4), from its cache too, right after the
 * PUT; with every row unfit it says so.  hash= names a version, whose own inputs read the
 * problem (it used to be read by the current version's: 404 once an input was added); an
 * empty hash= is no hash (it used to match no row); an unknown one is a 404 naming hash. */
static void test_best_versions(void)
{
    char h1[17], h2[17], h3[17], arg[40];
    put_bver(1, h1);
    record_bver("M=4096", 4, 5.0, "sim");
    record_bver("M=64", 2, 7.0, "model");
    record_bver("M=64", 4, 3.0, "sim");
    CHECK_BEST("4096", "", 200, 4, 5.0, NULL);     /* the cache has it now */
    CHECK_BEST("64", "", 200, 4, 3.0, NULL);
    put_bver(2, h2);                                /* b <= 2: b=4 no longer runs */
    CHECK_BEST("4096", "", 404, 0, 0, "none fits the template's current version");
    CHECK_BEST("64", "", 200, 2, 7.0, NULL);        /* version 1's row that fits */
    /* POST /v1/check against "best" takes the same row: 7 us measured is a pass against b=2's
     * 7 us (it compared with b=4's 3 us, a config the template no longer runs: regressed) */
    tt_resp cr;
    tt_cfx_call(tt_api_check, "POST", "{\"entries\": [{\"template\": \"bver\", \"target\": "
                "\"a2\", \"problem\": \"M=64\", \"samples_us\": [7.0]}]}", NULL, &cr);
    CU_ASSERT_EQUAL(cr.status, 200);
    const json_t *ce = json_array_get(json_object_get(cr.json, "entries"), 0);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(ce, "verdict")), "pass");
    CU_ASSERT_EQUAL(json_number_value(json_object_get(ce, "base_median_us")), 7.0);
    tt_cfx_resp_clear(&cr);
    record_bver("M=4096", 1, 30.0, "sim");
    CHECK_BEST("4096", "", 200, 1, 30.0, NULL);
    CHECK_BEST("4096", "hash=", 200, 1, 30.0, NULL);
    snprintf(arg, sizeof arg, "hash=%s", h1);
    CHECK_BEST("4096", arg, 200, 4, 5.0, NULL);     /* version 1 asked for: its own best */
    CHECK_BEST("4000", "nearest=1", 200, 1, 30.0, NULL);
    CHECK_BEST("4096", "hash=0123456789abcdef", 404, 0, 0, "no version");
    put_bver(3, h3);                                /* gains Z=1: M=64 is M=64,Z=1 */
    CHECK_BEST("64", "", 200, 2, 7.0, NULL);
    CHECK_BEST("64", arg, 200, 4, 3.0, NULL);       /* version 1 reads M=64 as it stored it */
    /* best agrees with the export on every exported problem */
    tt_resp r;
    tt_cfx_call(tt_api_export, "GET", NULL, q_export("json", "bver"), &r);
    CU_ASSERT_EQUAL_FATAL(r.status, 200);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r.json, "records"), i, e) {
        json_t *p = json_object_get(e, "problem");
        char m[32];
        snprintf(m, sizeof m, "%lld", (long long)json_integer_value(json_object_get(p, "M")));
        CHECK_BEST(m, "", 200,
                   json_integer_value(json_object_get(json_object_get(e, "config"), "b")),
                   json_number_value(json_object_get(e, "median_us")), NULL);
    }
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "records")), 2);
    tt_cfx_resp_clear(&r);
}

static const tt_test_case cases[] = {
    {"versions", test_export_versions},
    {"best_versions", test_best_versions},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"ci_export_versions", tt_cfx_init, tt_cfx_cleanup, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

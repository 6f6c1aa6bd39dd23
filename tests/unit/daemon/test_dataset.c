/* SPDX-License-Identifier: MIT
 * test_dataset.c - dataset readers on the real recordings (A100 KT cache vs T4 agree config by
 * config; MI250X loads), gzip detection by content, truncated/corrupt gzip, malformed and
 * wrong-typed documents (tests/data/datasets/bad.json), time units, the T4 writer round trip,
 * the builder and the process-wide cache.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dataset.h"
#include "jsonutil.h"
#include "tt_test.h"

static tt_dataset *g_kt, *g_t4;

static tt_dataset *load_shared(const char *rel)
{
    char *p = tt_test_shared(rel);
    tt_dataset *ds = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_dataset_load_file(p, &ds, &e);
    if (rc != TT_OK) fprintf(stderr, "%s: %s: %s: %s\n", p, tt_strerror(rc), e.path, e.msg);
    free(p);
    return ds;
}

static int setup(void)
{
    g_kt = load_shared("datasets/convolution_A100.kt-cache.json.gz");
    g_t4 = load_shared("datasets/convolution_A100.t4.json.gz");
    return g_kt && g_t4 ? 0 : 1;
}

static int teardown(void)
{
    tt_dataset_free(g_kt);
    tt_dataset_free(g_t4);
    tt_dataset_cache_clear();
    return 0;
}

static int close_rel(double a, double b, double tol)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

static void test_a100_kt(void)
{
    const tt_dataset *ds = g_kt;
    CU_ASSERT_EQUAL(ds->format, TT_DS_FORMAT_KT_CACHE);
    CU_ASSERT_EQUAL(ds->nrecords, 4362);
    CU_ASSERT_EQUAL(ds->count[TT_DS_OK], 4201);
    CU_ASSERT_EQUAL(ds->count[TT_DS_RUNTIME_FAILED], 155);
    CU_ASSERT_EQUAL(ds->count[TT_DS_COMPILE_FAILED], 6);
    CU_ASSERT_EQUAL(ds->count[TT_DS_INVALID], 0);
    CU_ASSERT_EQUAL(ds->nduplicates, 0);
    CU_ASSERT_STRING_EQUAL(ds->device, "NVIDIA A100-PCIE-40GB");
    CU_ASSERT_STRING_EQUAL(ds->kernel, "convolution_kernel");
    CU_ASSERT_EQUAL(ds->nproblem, 2);
    CU_ASSERT_EQUAL(ds->problem[0], 4096);
    CU_ASSERT_EQUAL(ds->nparams, 10);
    CU_ASSERT_STRING_EQUAL(ds->params[0], "block_size_x");
    CU_ASSERT_STRING_EQUAL(ds->params[9], "filter_width");
    CU_ASSERT_EQUAL(ds->ndomain[0], 16);
    CU_ASSERT_EQUAL(ds->domains[0][15], 256);
    CU_ASSERT_EQUAL(ds->ndomain[7], 1);
    CU_ASSERT_EQUAL(strlen(ds->hash), 16);
    CU_ASSERT_NOT_EQUAL(ds->content_hash, 0);
    CU_ASSERT_EQUAL(tt_dataset_param(ds, "tile_size_y"), 3);
    CU_ASSERT_EQUAL(tt_dataset_param(ds, "nope"), -1);

    /* known records (values checked independently with Python) */
    const int64_t ok[] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
    const tt_ds_record *r = tt_dataset_find(ds, ok);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->status, TT_DS_OK);
    CU_ASSERT_EQUAL(r->nsamples, 32);
    CU_ASSERT(close_rel(r->median_us, 3871.74391746521, 1e-12));
    CU_ASSERT(close_rel(r->value_us, 3875.3279224038124, 1e-12));
    CU_ASSERT(close_rel(r->compile_s, 0.9185990339610726, 1e-12));
    CU_ASSERT(close_rel(tt_ds_samples(ds, r)[0], 3976.191997528076, 1e-12));
    CU_ASSERT_STRING_EQUAL(r->timestamp, "2023-12-22 09:54:05.502007+00:00");
    const int64_t rt[] = {32, 16, 2, 4, 1, 0, 0, 1, 15, 15};
    r = tt_dataset_find(ds, rt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->status, TT_DS_RUNTIME_FAILED);
    CU_ASSERT_EQUAL(r->nsamples, 0);
    CU_ASSERT(isnan(r->median_us));
    CU_ASSERT(close_rel(r->compile_s, 3.055960983969271, 1e-12));
    const int64_t cf[] = {80, 8, 3, 4, 0, 1, 1, 1, 15, 15};
    r = tt_dataset_find(ds, cf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->status, TT_DS_COMPILE_FAILED);
    const int64_t absent[] = {32, 1, 1, 1, 0, 1, 1, 1, 15, 15};   /* excluded by the T1 conditions */
    CU_ASSERT_PTR_NULL(tt_dataset_find(ds, absent));
    CU_ASSERT_STRING_EQUAL(tt_ds_status_name(TT_DS_COMPILE_FAILED), "compile_failed");
    CU_ASSERT_STRING_EQUAL(tt_ds_status_name((tt_ds_status)42), "?");
}

/* The KT cache and the T4 file describe the same measurements: check every config. */
static void test_kt_t4_agree(void)
{
    CU_ASSERT_EQUAL_FATAL(g_t4->format, TT_DS_FORMAT_T4);
    CU_ASSERT_EQUAL(g_t4->nrecords, g_kt->nrecords);
    for (int s = 0; s < TT_DS__COUNT; s++) CU_ASSERT_EQUAL(g_t4->count[s], g_kt->count[s]);
    CU_ASSERT_EQUAL_FATAL(g_t4->nparams, g_kt->nparams);
    int map[TT_DATASET_MAX_PARAMS];
    for (size_t p = 0; p < g_kt->nparams; p++) {
        map[p] = tt_dataset_param(g_t4, g_kt->params[p]);
        CU_ASSERT_FATAL(map[p] >= 0);
    }
    CU_ASSERT_NOT_EQUAL(g_t4->content_hash, g_kt->content_hash);
    size_t mismatches = 0, compared = 0;
    for (size_t i = 0; i < g_kt->nrecords; i++) {
        const tt_ds_record *a = &g_kt->records[i];
        int64_t v[TT_DATASET_MAX_PARAMS];
        for (size_t p = 0; p < g_kt->nparams; p++) v[map[p]] = tt_ds_values(g_kt, a)[p];
        const tt_ds_record *b = tt_dataset_find(g_t4, v);
        if (!b) {
            mismatches++;
            continue;
        }
        int same = a->status == b->status && a->nsamples == b->nsamples &&
                   close_rel(a->median_us, b->median_us, 1e-9) &&
                   close_rel(a->compile_s, b->compile_s, 1e-9) &&
                   close_rel(a->value_us, b->value_us, 1e-9);
        for (size_t k = 0; same && k < a->nsamples; k++)
            same = close_rel(tt_ds_samples(g_kt, a)[k], tt_ds_samples(g_t4, b)[k], 1e-9);
        mismatches += !same;
        compared++;
    }
    CU_ASSERT_EQUAL(compared, 4362);
    CU_ASSERT_EQUAL(mismatches, 0);
}

static void test_mi250x(void)
{
    tt_dataset *ds = load_shared("datasets/convolution_MI250X.t4.json.gz");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ds);
    CU_ASSERT_EQUAL(ds->nrecords, 4362);
    CU_ASSERT_EQUAL(ds->count[TT_DS_OK], 4362);
    const int64_t c[] = {16, 1, 1, 1, 0, 0, 0, 1, 15, 15};
    const tt_ds_record *r = tt_dataset_find(ds, c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT(close_rel(r->median_us, 12257.819652557373, 1e-9));
    tt_dataset_free(ds);
}

static unsigned char *read_all(const char *path, size_t *len)
{
    return (unsigned char *)tt_test_read_file(path, len);
}

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* gzip is recognised by its magic, not the name; plain JSON gives the same content hash. */
static void test_gzip_detection(void)
{
    char *gz = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    size_t zlen = 0;
    unsigned char *z = read_all(gz, &zlen);
    CU_ASSERT_PTR_NOT_NULL_FATAL(z);
    /* decompress with zlib's gz* API, independently of the reader */
    gzFile gf = gzopen(gz, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(gf);
    size_t cap = 8 << 20, n = 0;
    char *plain = malloc(cap);
    int r;
    while ((r = gzread(gf, plain + n, (unsigned)(cap - n))) > 0) n += (size_t)r;
    gzclose(gf);
    free(gz);
    char *dir = tt_test_tmpdir("tt-dataset");
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/plain.json.gz", dir);   /* misleading names on purpose */
    snprintf(p2, sizeof p2, "%s/packed.json", dir);
    CU_ASSERT_EQUAL_FATAL(write_file(p1, plain, n), 0);
    CU_ASSERT_EQUAL_FATAL(write_file(p2, z, zlen), 0);
    tt_dataset *a = NULL, *b = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_dataset_load_file(p1, &a, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_dataset_load_file(p2, &b, &e), TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(a->content_hash, g_kt->content_hash);
    CU_ASSERT_EQUAL(b->content_hash, g_kt->content_hash);
    CU_ASSERT_EQUAL(a->nrecords, 4362);
    tt_dataset_free(a);
    tt_dataset_free(b);

    /* truncated gzip: every cut gives TT_EENCODING (a client error), never a crash */
    size_t cuts[] = {1, 2, 10, 100, zlen / 2, zlen - 9, zlen - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        tt_errinfo_clear(&e);
        tt_dataset *d = (tt_dataset *)1;
        tt_rc rc = tt_dataset_load_buffer(z, cuts[i], &d, &e);
        CU_ASSERT(rc == TT_EENCODING || (cuts[i] == 1 && rc == TT_EJSON));
        CU_ASSERT_PTR_NULL(d);
        if (rc == TT_EENCODING && cuts[i] > 100) CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "truncated"));
    }
    /* corrupt deflate data */
    unsigned char *c = malloc(zlen);
    memcpy(c, z, zlen);
    for (size_t i = zlen / 3; i < zlen / 3 + 64; i++) c[i] ^= 0x5a;
    tt_dataset *d = NULL;
    CU_ASSERT_EQUAL(tt_dataset_load_buffer(c, zlen, &d, &e), TT_EENCODING);
    CU_ASSERT_PTR_NULL(d);
    free(c);
    /* empty input and a missing file */
    CU_ASSERT_EQUAL(tt_dataset_load_buffer("", 0, &d, &e), TT_EINVAL);
    snprintf(p1, sizeof p1, "%s/empty.json", dir);
    CU_ASSERT_EQUAL_FATAL(write_file(p1, "", 0), 0);
    CU_ASSERT_EQUAL(tt_dataset_load_file(p1, &d, &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_dataset_load_file("/nonexistent/x.json", &d, &e), TT_EIO);
    CU_ASSERT_STRING_EQUAL(e.path, "/nonexistent/x.json");
    free(plain);
    free(z);
    tt_test_rmrf(dir);
    free(dir);
}

static void test_bad_table(void)
{
    json_t *cases = tt_test_load_json("tests/data/datasets/bad.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cases);
    CU_ASSERT(json_array_size(cases) >= 30);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *why = json_string_value(json_object_get(c, "why"));
        tt_rc want = tt_rc_from_code(json_string_value(json_object_get(c, "rc")));
        const char *wpath = json_string_value(json_object_get(c, "path"));
        char *text = json_object_get(c, "text") ? strdup(json_string_value(json_object_get(c, "text")))
                                                : tt_json_dumps(json_object_get(c, "doc"), JSON_COMPACT);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        tt_dataset *ds = (tt_dataset *)1;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_dataset_load_buffer(text, strlen(text), &ds, &e);
        CU_ASSERT_EQUAL(rc, want);
        CU_ASSERT_PTR_NULL(ds);
        CU_ASSERT_STRING_EQUAL(e.path, wpath);
        CU_ASSERT(e.msg[0] != '\0');
        if (rc != want || strcmp(e.path, wpath) != 0)
            fprintf(stderr, "case %zu (%s): got %s at '%s': %s\n", i, why, tt_rc_code(rc), e.path, e.msg);
        /* the same bytes gzip-compressed fail the same way */
        uLongf zl = compressBound(strlen(text)) + 32;
        unsigned char *zb = malloc(zl);
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        CU_ASSERT_EQUAL_FATAL(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
        zs.next_in = (unsigned char *)text;
        zs.avail_in = (uInt)strlen(text);
        zs.next_out = zb;
        zs.avail_out = (uInt)zl;
        CU_ASSERT_EQUAL(deflate(&zs, Z_FINISH), Z_STREAM_END);
        size_t zn = zs.total_out;
        deflateEnd(&zs);
        CU_ASSERT_EQUAL(tt_dataset_load_buffer(zb, zn, &ds, &e), want);
        free(zb);
        free(text);
    }
    json_decref(cases);
}

static void test_units(void)
{
    json_t *cases = tt_test_load_json("tests/data/datasets/units.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cases);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        /* the compile time as Kernel Tuner writes it, or as the T4 schema names it */
        const char *ck = json_string_value(json_object_get(c, "compile_key"));
        json_t *doc = json_pack("{s:[{s:{s:i},s:{s:O,s:O},s:s}]}", "results", "configuration", "a", 1,
                                "times", "runtimes", json_object_get(c, "runtimes"),
                                ck ? ck : "compilation", json_object_get(c, "compilation"),
                                "invalidity", "correct");
        CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
        if (json_is_string(json_object_get(c, "timeunit")))
            json_object_set_new(doc, "metadata", json_pack("{s:O}", "timeunit", json_object_get(c, "timeunit")));
        char *text = tt_json_dumps(doc, 0);
        json_decref(doc);
        tt_dataset *ds = NULL;
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_dataset_load_buffer(text, strlen(text), &ds, &e), TT_OK);
        free(text);
        const tt_ds_record *r = &ds->records[0];
        CU_ASSERT(close_rel(r->median_us, json_number_value(json_object_get(c, "median_us")), 1e-12));
        CU_ASSERT(close_rel(r->compile_s, json_number_value(json_object_get(c, "compile_s")), 1e-12));
        CU_ASSERT_EQUAL(r->nsamples, json_array_size(json_object_get(c, "runtimes")));
        tt_dataset_free(ds);
    }
    json_decref(cases);
}

static void test_t4_roundtrip(void)
{
    const tt_dataset *src[] = {g_t4, g_kt};
    for (size_t s = 0; s < 2; s++) {
        char *buf = NULL;
        size_t len = 0;
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_dataset_write_t4_buffer(src[s], 0, &buf, &len, &e), TT_OK);
        CU_ASSERT_EQUAL(strlen(buf), len);
        tt_dataset *back = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_dataset_load_buffer(buf, len, &back, &e), TT_OK);
        free(buf);
        CU_ASSERT_EQUAL(back->format, TT_DS_FORMAT_T4);
        CU_ASSERT_EQUAL(back->nrecords, src[s]->nrecords);
        for (int k = 0; k < TT_DS__COUNT; k++) CU_ASSERT_EQUAL(back->count[k], src[s]->count[k]);
        size_t bad = 0;
        for (size_t i = 0; i < src[s]->nrecords; i++) {
            const tt_ds_record *a = &src[s]->records[i], *b = &back->records[i];
            int same = a->status == b->status && a->nsamples == b->nsamples &&
                       memcmp(tt_ds_values(src[s], a), tt_ds_values(back, b),
                              src[s]->nparams * sizeof(int64_t)) == 0 &&
                       close_rel(a->median_us, b->median_us, 1e-12) &&
                       close_rel(a->compile_s, b->compile_s, 1e-12) &&
                       ((a->timestamp == NULL) == (b->timestamp == NULL));
            if (a->status == TT_DS_OK) same = same && close_rel(a->value_us, b->value_us, 1e-12);
            bad += !same;
        }
        CU_ASSERT_EQUAL(bad, 0);
        tt_dataset_free(back);
    }
}

static void test_builder(void)
{
    const char *names[] = {"BLOCK", "MODE"};
    tt_dataset *ds = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_dataset_new(names, 2, &ds, &e), TT_OK);
    const int64_t a[] = {64, 0}, b[] = {16, 1}, c[] = {32, 3};
    const double sa[] = {10.0, 12.0, 11.0};
    CU_ASSERT_EQUAL(tt_dataset_add(ds, a, TT_DS_OK, sa, 3, 0.25, "2026-01-01T00:00:00Z", &e), TT_OK);
    CU_ASSERT_EQUAL(tt_dataset_add(ds, b, TT_DS_COMPILE_FAILED, NULL, 0, 1.0, NULL, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_dataset_add(ds, c, TT_DS_RUNTIME_FAILED, NULL, 0, NAN, NULL, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_dataset_add(ds, a, TT_DS_OK, sa, 1, 0.1, NULL, &e), TT_EEXISTS);
    CU_ASSERT_EQUAL(ds->nrecords, 3);
    CU_ASSERT_EQUAL(ds->nduplicates, 0);
    CU_ASSERT_EQUAL(ds->ndomain[0], 3);
    CU_ASSERT_EQUAL(ds->domains[0][0], 16);
    CU_ASSERT_EQUAL(ds->domains[0][2], 64);
    const tt_ds_record *r = tt_dataset_find(ds, a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT(close_rel(r->median_us, 11.0, 1e-12));
    /* grow past the initial index and record capacity */
    for (int64_t i = 0; i < 1000; i++) {
        int64_t v[] = {1000 + i, 7};
        double smp = (double)i;
        CU_ASSERT_EQUAL(tt_dataset_add(ds, v, TT_DS_OK, &smp, 1, NAN, NULL, &e), TT_OK);
    }
    const int64_t probe[] = {1500, 7};
    r = tt_dataset_find(ds, probe);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT(close_rel(r->median_us, 500.0, 1e-12));
    CU_ASSERT(close_rel(tt_dataset_find(ds, a)->median_us, 11.0, 1e-12));   /* still there */
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(tt_dataset_write_t4(ds, f, 1, &e), TT_OK);
    long sz = ftell(f);
    rewind(f);
    char *text = malloc((size_t)sz + 1);
    CU_ASSERT_EQUAL(fread(text, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    tt_dataset *back = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_dataset_load_buffer(text, (size_t)sz, &back, &e), TT_OK);
    free(text);
    CU_ASSERT_EQUAL(back->nrecords, 1003);
    CU_ASSERT_EQUAL(back->count[TT_DS_COMPILE_FAILED], 1);
    CU_ASSERT_EQUAL(back->count[TT_DS_RUNTIME_FAILED], 1);
    r = tt_dataset_find(back, a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->nsamples, 3);
    CU_ASSERT(close_rel(r->compile_s, 0.25, 1e-12));
    CU_ASSERT_STRING_EQUAL(r->timestamp, "2026-01-01T00:00:00Z");
    CU_ASSERT(isnan(tt_dataset_find(back, c)->compile_s));
    tt_dataset_free(back);
    tt_dataset_free(ds);

    const char *dup[] = {"x", "x"};
    CU_ASSERT_EQUAL(tt_dataset_new(dup, 2, &ds, &e), TT_EINVAL);
    CU_ASSERT_PTR_NULL(ds);
    CU_ASSERT_EQUAL(tt_dataset_new(dup, 0, &ds, &e), TT_EINVAL);
    tt_dataset_free(NULL);
}

static void test_cache(void)
{
    char *p = tt_test_shared("datasets/convolution_A100.t4.json.gz");
    size_t before = tt_dataset_cache_loads();
    const tt_dataset *a = NULL, *b = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_dataset_cache_get(p, &a, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_dataset_cache_get(p, &b, &e), TT_OK);
    CU_ASSERT_PTR_NOT_NULL(a);
    CU_ASSERT_PTR_EQUAL(a, b);
    CU_ASSERT_EQUAL(tt_dataset_cache_loads(), before + 1);
    CU_ASSERT_EQUAL(a->content_hash, g_t4->content_hash);
    CU_ASSERT_EQUAL(tt_dataset_cache_get("/nonexistent/ds.json", &a, &e), TT_EIO);
    CU_ASSERT_PTR_NULL(a);
    tt_dataset_cache_clear();
    CU_ASSERT_EQUAL(tt_dataset_cache_get(p, &a, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_dataset_cache_loads(), before + 2);
    tt_dataset_cache_clear();
    free(p);
}

/* A file replaced on disk is parsed again, and the older parse is freed once the last
 * borrower gives it back (it was kept for the life of the process: one more parse per
 * version of a dataset an operator replaces).  Under ASan a use after free would show. */
static void test_cache_superseded(void)
{
    static const char *const versions[] = {
        "{\"tune_params_keys\": [\"a\"], \"cache\": {\"1\": {\"a\": 1, \"time\": 1.0}}}",
        "{\"tune_params_keys\": [\"a\"], \"cache\": {\"1\": {\"a\": 1, \"time\": 2.5}}}",
        "{\"tune_params_keys\": [\"a\"], \"cache\": {\"2\": {\"a\": 2, \"time\": 3.25}}}"};
    tt_dataset_cache_clear();
    char *dir = tt_test_tmpdir("tt-dscache");
    char path[512], tmp[512];
    snprintf(path, sizeof path, "%s/d.kt-cache.json", dir);
    snprintf(tmp, sizeof tmp, "%s/d.new", dir);
    const tt_dataset *held[3] = {NULL, NULL, NULL};
    tt_errinfo e;
    for (size_t v = 0; v < 3; v++) {   /* written aside and renamed over: a new inode each */
        CU_ASSERT_EQUAL_FATAL(write_file(tmp, versions[v], strlen(versions[v])), 0);
        CU_ASSERT_EQUAL_FATAL(rename(tmp, path), 0);
        CU_ASSERT_EQUAL(tt_dataset_cache_get(path, &held[v], &e), TT_OK);
        CU_ASSERT_PTR_NOT_NULL_FATAL(held[v]);
        CU_ASSERT_EQUAL(tt_dataset_cache_held(), v + 1);   /* older ones are still borrowed */
    }
    const tt_dataset *again = NULL;   /* the current parse: shared, counted */
    CU_ASSERT_EQUAL(tt_dataset_cache_get(path, &again, &e), TT_OK);
    CU_ASSERT_PTR_EQUAL(again, held[2]);
    tt_dataset_cache_release(held[1]);
    CU_ASSERT_EQUAL(tt_dataset_cache_held(), 2);
    tt_dataset_cache_release(held[0]);
    CU_ASSERT_EQUAL(tt_dataset_cache_held(), 1);
    CU_ASSERT_EQUAL(held[2]->records[0].value_us, 3250.0);   /* still valid */
    tt_dataset_cache_release(held[2]);
    tt_dataset_cache_release(again);
    CU_ASSERT_EQUAL(tt_dataset_cache_held(), 1);   /* the current parse stays cached */
    tt_dataset_cache_release(NULL);
    tt_dataset_cache_clear();
    CU_ASSERT_EQUAL(tt_dataset_cache_held(), 0);
    tt_test_rmrf(dir);
    free(dir);
}

/* Deterministic mutations of small valid documents (byte flips, truncations, gzip cuts):
 * every outcome is a result or a clean error, never a crash (run under ASan in CI). */
static void test_mutations(void)
{
    static const char *const docs[] = {
        "{\"metadata\":{\"timeunit\":\"miliseconds\"},\"results\":[{\"configuration\":"
        "{\"a\":1,\"b\":2},\"times\":{\"compilation\":3.5,\"runtimes\":[1.5,2.5]},"
        "\"invalidity\":\"correct\",\"measurements\":[{\"name\":\"time\",\"value\":2}]},"
        "{\"configuration\":{\"a\":2,\"b\":2},\"times\":{},\"invalidity\":\"compile\"}]}",
        "{\"tune_params_keys\":[\"a\",\"b\"],\"tune_params\":{\"a\":[1,2],\"b\":[3]},"
        "\"cache\":{\"1,3\":{\"a\":1,\"b\":3,\"time\":1.25,\"times\":[1.0,1.5],"
        "\"compile_time\":10},\"2,3\":{\"a\":2,\"b\":3,\"time\":\"InvalidConfig\"}}}",
    };
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    size_t ok = 0, failed = 0;
    for (size_t d = 0; d < 2; d++) {
        size_t n = strlen(docs[d]);
        tt_dataset *ds = NULL;
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_dataset_load_buffer(docs[d], n, &ds, &e), TT_OK);
        CU_ASSERT_EQUAL(ds->nrecords, 2);
        tt_dataset_free(ds);
        char *buf = malloc(n);
        for (int it = 0; it < 3000; it++) {
            memcpy(buf, docs[d], n);
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            size_t len = it % 3 == 0 ? seed % (n + 1) : n;   /* truncate */
            for (int k = 0; k < 1 + (int)(seed % 3); k++) {   /* and flip a few bytes */
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                buf[seed % n] = "{}[]\",:0123456789.-eaxtr \\"[(seed >> 20) % 27];
            }
            ds = (tt_dataset *)1;
            tt_rc rc = tt_dataset_load_buffer(buf, len, &ds, &e);
            CU_ASSERT(rc == TT_OK || rc == TT_EJSON || rc == TT_EINVAL || rc == TT_EUNSUPPORTED);
            CU_ASSERT((rc == TT_OK) == (ds != NULL));
            if (rc == TT_OK) {
                ok++;
                for (size_t i = 0; i < ds->nrecords; i++)
                    CU_ASSERT(tt_dataset_find(ds, tt_ds_values(ds, &ds->records[i])) == &ds->records[i] ||
                              ds->nduplicates > 0);
                tt_dataset_free(ds);
            } else {
                failed++;
            }
        }
        free(buf);
        /* the gzip form cut at every length */
        uLongf zl = compressBound(n) + 32;
        unsigned char *zb = malloc(zl);
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        CU_ASSERT_EQUAL_FATAL(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
        zs.next_in = (unsigned char *)docs[d];
        zs.avail_in = (uInt)n;
        zs.next_out = zb;
        zs.avail_out = (uInt)zl;
        CU_ASSERT_EQUAL(deflate(&zs, Z_FINISH), Z_STREAM_END);
        size_t zn = zs.total_out;
        deflateEnd(&zs);
        for (size_t cut = 2; cut < zn; cut++) {
            ds = (tt_dataset *)1;
            CU_ASSERT_EQUAL(tt_dataset_load_buffer(zb, cut, &ds, &e), TT_EENCODING);
            CU_ASSERT_PTR_NULL(ds);
        }
        CU_ASSERT_EQUAL(tt_dataset_load_buffer(zb, zn, &ds, &e), TT_OK);
        tt_dataset_free(ds);
        free(zb);
    }
    CU_ASSERT(ok > 0);
    CU_ASSERT(failed > 0);
}

typedef struct getter {
    const char *path;
    const tt_dataset *got;
    tt_rc rc;
} getter;

static void *get_thread(void *ud)
{
    getter *g = ud;
    tt_errinfo e;
    g->rc = tt_dataset_cache_get(g->path, &g->got, &e);
    return NULL;
}

/* Many first users of one file at once: one parse, one shared dataset. */
static void test_cache_threads(void)
{
    char *p = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    tt_dataset_cache_clear();
    size_t before = tt_dataset_cache_loads();
    enum { N = 4 };
    pthread_t th[N];
    getter g[N];
    for (int i = 0; i < N; i++) {
        g[i] = (getter){.path = p};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, get_thread, &g[i]), 0);
    }
    for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(g[i].rc, TT_OK);
        CU_ASSERT_PTR_EQUAL(g[i].got, g[0].got);
    }
    CU_ASSERT_EQUAL(tt_dataset_cache_loads(), before + 1);
    CU_ASSERT_EQUAL(g[0].got->nrecords, 4362);
    tt_dataset_cache_clear();
    free(p);
}

/* A Kernel Tuner cache left open by an interrupted session (its entries each followed by ",",
 * the cache and the document not closed: kernel_tuner/util.py store_cache) reads as Kernel
 * Tuner reads it: the same records as the closed file; an open cache without entries is an
 * empty cache; broken JSON elsewhere stays a JSON error. */
static void test_kt_open_cache(void)
{
    char *gz = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    gzFile gf = gzopen(gz, "rb");
    free(gz);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gf);
    size_t cap = 8 << 20, n = 0;
    char *text = malloc(cap + 8);
    int r;
    while ((r = gzread(gf, text + n, (unsigned)(cap - n))) > 0) n += (size_t)r;
    gzclose(gf);
    CU_ASSERT_FATAL(n > 3 && memcmp(text + n - 3, "}\n}", 3) == 0);
    /* as Kernel Tuner leaves it: "...<last entry>,"  (and a newline or not) */
    size_t open_len = n - 2;   /* the cache's "}" becomes the entry's "," */
    text[n - 3] = ',';
    static const char *const tails[] = {"", "\n", "  \n"};
    for (size_t k = 0; k < sizeof tails / sizeof *tails; k++) {
        memcpy(text + open_len, tails[k], strlen(tails[k]));
        tt_dataset *d = NULL;
        tt_errinfo e;
        tt_rc rc = tt_dataset_load_buffer(text, open_len + strlen(tails[k]), &d, &e);
        CU_ASSERT_EQUAL(rc, TT_OK);
        if (rc) fprintf(stderr, "open cache: %s\n", e.msg);
        if (!d) continue;
        CU_ASSERT_EQUAL(d->reopened, 1);
        CU_ASSERT_EQUAL(d->nrecords, g_kt->nrecords);
        for (int st = 0; st < TT_DS__COUNT; st++) CU_ASSERT_EQUAL(d->count[st], g_kt->count[st]);
        size_t same = 0;   /* record by record (NaN: a failure, in both) */
        for (size_t i = 0; i < d->nrecords && i < g_kt->nrecords; i++) {
            double x = d->records[i].value_us, y = g_kt->records[i].value_us;
            same += (isnan(x) && isnan(y)) || x == y;
        }
        CU_ASSERT_EQUAL(same, g_kt->nrecords);
        tt_dataset_free(d);
    }
    CU_ASSERT_EQUAL(g_kt->reopened, 0);
    /* the same file without its last comma (Kernel Tuner accepts that too) */
    tt_dataset *d = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_dataset_load_buffer(text, open_len - 1, &d, &e), TT_OK);
    tt_dataset_free(d);
    d = NULL;
    /* the header only: an open cache with no entry is an empty cache */
    char *hdr = strstr(text, "\"cache\": {");
    CU_ASSERT_PTR_NOT_NULL_FATAL(hdr);
    size_t hlen = (size_t)(hdr - text) + strlen("\"cache\": {");
    CU_ASSERT_EQUAL(tt_dataset_load_buffer(text, hlen, &d, &e), TT_EINVAL);
    CU_ASSERT_PTR_NULL(d);
    /* broken in the middle: still a JSON error, with its position */
    text[n / 2] = '#';
    CU_ASSERT_EQUAL(tt_dataset_load_buffer(text, open_len, &d, &e), TT_EJSON);
    CU_ASSERT_PTR_NULL(d);
    free(text);
}

/* An old Kernel Tuner cache (before its typed errors) marks a failed config "time": 1e20 (ms):
 * a failure (invalid), not a 1e20 ms measurement.  A param written as a Python float with an
 * integer value (3.0) is that integer. */
static void test_kt_old_sentinel(void)
{
    static const char *const text =
        "{\"device_name\": \"d\", \"kernel_name\": \"k\", \"problem_size\": [1],"
        " \"tune_params_keys\": [\"x\"], \"tune_params\": {\"x\": [1, 2, 3]},"
        " \"cache\": {\"1\": {\"x\": 1, \"time\": 0.5, \"times\": [0.5, 0.5]},"
        " \"2\": {\"x\": 2, \"time\": 1e20},"
        " \"3\": {\"x\": 3.0, \"time\": 1e20, \"times\": [1e20]}}}";
    tt_dataset *d = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_dataset_load_buffer(text, strlen(text), &d, &e), TT_OK);
    CU_ASSERT_EQUAL(d->nrecords, 3);
    CU_ASSERT_EQUAL(d->count[TT_DS_OK], 1);
    CU_ASSERT_EQUAL(d->count[TT_DS_INVALID], 2);
    int64_t v[1] = {2};
    const tt_ds_record *r = tt_dataset_find(d, v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->status, TT_DS_INVALID);
    CU_ASSERT(isnan(r->value_us));
    CU_ASSERT_EQUAL(r->nsamples, 0);
    v[0] = 1;
    r = tt_dataset_find(d, v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_DOUBLE_EQUAL(r->value_us, 500.0, 1e-9);
    v[0] = 3;
    CU_ASSERT_PTR_NOT_NULL(tt_dataset_find(d, v));
    tt_dataset_free(d);
}

static const tt_test_case cases[] = {
    {"a100_kt", test_a100_kt},
    {"kt_t4_agree", test_kt_t4_agree},
    {"mi250x", test_mi250x},
    {"gzip_detection", test_gzip_detection},
    {"kt_open_cache", test_kt_open_cache},
    {"kt_old_sentinel", test_kt_old_sentinel},
    {"bad_table", test_bad_table},
    {"cache_superseded", test_cache_superseded},
    {"units", test_units},
    {"t4_roundtrip", test_t4_roundtrip},
    {"builder", test_builder},
    {"cache", test_cache},
    {"cache_threads", test_cache_threads},
    {"mutations", test_mutations},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"dataset", setup, teardown, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

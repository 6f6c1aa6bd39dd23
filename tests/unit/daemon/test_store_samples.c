/* SPDX-License-Identifier: MIT
 * test_store_samples.c - the compact samples of schema 005 (trials.samples_z): the codec
 * round-trips every table case bit for bit (and their JSON text byte for byte), rejects
 * malformed text, and a trial recorded from numbers reads back, on both engines, with
 * exactly the samples_json text the runner stored before 005 -- through lookup, the job's
 * trial list, a group-committed batch and a re-measurement; rows written as text (before 005,
 * imports) read as before; a schema-2 database migrates to 005 with its job's links intact
 * (job_trials rebuilt WITHOUT ROWID on SQLite, its trial_id index dropped on both).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "store.h"
#include "store_fixture.h"
#include "store_internal.h"   /* tt__samples_pack / unpack */
#include "tt_test.h"

/* ---- the codec ---------------------------------------------------------------------- */
/* What the recorded GPU datasets hold: float milliseconds x 1000, many repeats. */
static const double ds[] = {1368.0640459060669, 1283.0719947814941, 1276.9279479980469,
                            1276.9279479980469, 1275.9040594100952, 1276.9279479980469,
                            1275.9040594100952, 1275.9040594100952, 1274.880051612854,
                            1271.8080282211304, 1281.0239791870117, 1272.8320360183716};
static const double plain[] = {3.0, 5.25, 1e-300, 4.9e-324, 1.7976931348623157e308, 0.1, 0.3,
                               12345.678901234567, 2.5, 3.0};
static const double zeros[] = {0.0, -0.0, 0.0, -0.0, 1.0};

typedef struct codec_case {
    const char *name;
    const double *v;   /* NULL: n generated values (gen) */
    size_t n;
    int gen;           /* 1: n distinct doubles; 2: n values cycling over 7 float-ms ones */
    size_t max_len;    /* the packed text is at most this long (0: not checked) */
} codec_case;

static const codec_case codec_cases[] = {
    {"dataset-like (float ms x 1000, repeats)", ds, 12, 0, 64},
    {"plain doubles, extremes, subnormal", plain, 10, 0, 0},
    {"signed zeros stay distinct", zeros, 5, 0, 0},
    {"one value", plain + 1, 1, 0, 16},
    {"255 distinct doubles (the dictionary fills up)", NULL, 255, 1, 0},
    {"255 values cycling over 7", NULL, 255, 2, 400},
};

static void gen_values(const codec_case *c, double *v)
{
    for (size_t i = 0; i < c->n; i++)
        v[i] = c->gen == 1 ? 1000.0 + (double)i * 0.123456789 + 1e-9 * (double)(i * i)
                           : (double)(float)((double)(i % 7) * 0.25 + 1.1) * 1000.0;
}

static void test_codec_round_trip(void)
{
    for (size_t k = 0; k < sizeof codec_cases / sizeof codec_cases[0]; k++) {
        const codec_case *c = &codec_cases[k];
        double buf[TT__SAMPLES_Z_MAXN], back[TT__SAMPLES_Z_MAXN];
        const double *v = c->v;
        if (!v) {
            gen_values(c, buf);
            v = buf;
        }
        char z[TT__SAMPLES_Z_CAP(TT__SAMPLES_Z_MAXN)];
        size_t len = tt__samples_pack(v, c->n, z, sizeof z);
        CU_ASSERT(len > 0);
        CU_ASSERT_EQUAL(strlen(z), len);
        if (c->max_len && len > c->max_len) fprintf(stderr, "%s: %zu chars\n", c->name, len);
        if (c->max_len) CU_ASSERT(len <= c->max_len);
        CU_ASSERT_EQUAL(tt__samples_unpack(z, back, TT__SAMPLES_Z_MAXN), c->n);
        CU_ASSERT(memcmp(v, back, c->n * sizeof *v) == 0);
        char *a = tt_json_reals(v, c->n), *b = tt_json_reals(back, c->n);
        CU_ASSERT(a && b && strcmp(a, b) == 0);
        free(a);
        free(b);
        /* too small a destination: refused */
        CU_ASSERT_EQUAL(tt__samples_unpack(z, back, c->n - 1), 0);
    }
    char z[TT__SAMPLES_Z_CAP(TT__SAMPLES_Z_MAXN + 1)];
    double many[TT__SAMPLES_Z_MAXN + 1] = {0};
    CU_ASSERT_EQUAL(tt__samples_pack(many, 0, z, sizeof z), 0);
    CU_ASSERT_EQUAL(tt__samples_pack(many, TT__SAMPLES_Z_MAXN + 1, z, sizeof z), 0);
    CU_ASSERT_EQUAL(tt__samples_pack(many, 4, z, TT__SAMPLES_Z_CAP(4) - 1), 0);
}

static void test_codec_malformed(void)
{
    double one = 2.5, v[8];
    char z[TT__SAMPLES_Z_CAP(1)];
    CU_ASSERT_FATAL(tt__samples_pack(&one, 1, z, sizeof z) > 0);   /* "AQH/..." */
    char trunc[sizeof z];
    snprintf(trunc, sizeof trunc, "%.*s", (int)strlen(z) - 2, z);
    static const char *const bad[] = {"", "A", "AQ", "AQA", "!!!!", "AgH/AAAAAAAABEA",
                                      "AQEA", "AQIAAA"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_EQUAL(tt__samples_unpack(bad[i], v, 8), 0);
    CU_ASSERT_EQUAL(tt__samples_unpack(trunc, v, 8), 0);
    CU_ASSERT_EQUAL(tt__samples_unpack(NULL, v, 8), 0);
    char extra[sizeof z + 4];
    snprintf(extra, sizeof extra, "%sAAAA", z);   /* bytes after the last sample */
    CU_ASSERT_EQUAL(tt__samples_unpack(extra, v, 8), 0);
    CU_ASSERT_EQUAL(tt__samples_unpack(z, v, 8), 1);
    CU_ASSERT_EQUAL(v[0], 2.5);
}

/* ---- through the store, both engines -------------------------------------------------- */
static const tt_trial_key KEY = {"0123456789abcdef", "M=64", "a2", "sim"};

static int64_t new_job(tt_store *s)
{
    tt_job j;
    tt_fx_job(&j, "gemm", "a2", "sim", "random", "", "M=64");
    snprintf(j.template_hash, sizeof j.template_hash, "0123456789abcdef");
    j.problem_json = (char *)"{\"M\":64}";
    CU_ASSERT_EQUAL(tt_store_job_create(s, &j), TT_OK);
    return j.id;
}

/* Record config `hash` at (job, seq) with samples v[0..n) given as numbers, or as text. */
static tt_rc record(tt_store *s, int64_t job, int64_t seq, uint64_t hash, const double *v,
                    size_t n, int as_text)
{
    tt_trial t;
    memset(&t, 0, sizeof t);
    char key[32];
    snprintf(key, sizeof key, "x=%llu", (unsigned long long)hash);
    t.config_key = strdup(key);
    t.config_json = strdup("{}");
    t.config_hash = hash;
    t.status = TT_OK;
    t.median_us = v[0];
    if (as_text) t.samples_json = tt_json_reals(v, n);
    t.samples_us = v;
    t.nsamples = n;
    tt_rc rc = tt_store_trial_record(s, &KEY, "gemm", job, seq, &t);
    if (rc) fprintf(stderr, "record: %s\n", tt_store_errmsg(s));
    tt_trial_clear(&t);
    return rc;
}

/* 1 when the trial under hash reads back with samples_json == the text of v[0..n). */
static int reads_as(tt_store *s, uint64_t hash, const double *v, size_t n)
{
    tt_trial t;
    if (tt_store_trial_lookup(s, &KEY, hash, &t) != TT_OK) return 0;
    char *want = tt_json_reals(v, n);
    int ok = want && t.samples_json && strcmp(want, t.samples_json) == 0;
    free(want);
    tt_trial_clear(&t);
    return ok;
}

static void test_store_round_trip(void)
{
    tt_store *s = tt_fx_open_fresh();
    CU_ASSERT(tt_store_schema_version(s) >= 5);
    int64_t job = new_job(s);
    double big[TT__SAMPLES_Z_MAXN + 5];
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) big[i] = 10.0 + (double)i;
    CU_ASSERT_EQUAL(record(s, job, 1, 1, ds, 12, 0), TT_OK);            /* samples_z */
    CU_ASSERT_EQUAL(record(s, job, 2, 2, plain, 10, 1), TT_OK);         /* text, as before */
    CU_ASSERT_EQUAL(record(s, job, 3, 3, big, sizeof big / sizeof big[0], 0), TT_OK); /* > 255 */
    CU_ASSERT_EQUAL_FATAL(tt_store_batch_begin(s), TT_OK);              /* group commit */
    CU_ASSERT_EQUAL(record(s, job, 4, 4, zeros + 4, 1, 0), TT_OK);
    CU_ASSERT_EQUAL(record(s, job, 5, 5, plain, 3, 0), TT_OK);
    CU_ASSERT_EQUAL(tt_store_batch_commit(s), TT_OK);
    CU_ASSERT(reads_as(s, 1, ds, 12));
    CU_ASSERT(reads_as(s, 2, plain, 10));
    CU_ASSERT(reads_as(s, 3, big, sizeof big / sizeof big[0]));
    CU_ASSERT(reads_as(s, 4, zeros + 4, 1));
    CU_ASSERT(reads_as(s, 5, plain, 3));
    /* the job's list reads the same texts */
    tt_trial *ts = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, job, 0, 10, &ts, &n, NULL), TT_OK);
    CU_ASSERT_EQUAL(n, 5);
    char *t1 = tt_json_reals(ds, 12);
    CU_ASSERT(n >= 1 && ts[0].samples_json && strcmp(ts[0].samples_json, t1) == 0);
    CU_ASSERT(n >= 1 && ts[0].samples_us == NULL && ts[0].nsamples == 0);
    free(t1);
    for (size_t i = 0; i < n; i++) tt_trial_clear(&ts[i]);
    free(ts);
    /* a re-measurement merges into text (samples_z cleared) */
    tt_trial lk, out;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_lookup(s, &KEY, 4, &lk), TT_OK);
    static const double more[] = {3.0, 4.0};
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &KEY, "gemm", job, lk.id, more, 2, &out), TT_OK);
    CU_ASSERT_STRING_EQUAL(out.samples_json ? out.samples_json : "", "[1.0,3.0,4.0]");
    tt_trial_clear(&out);
    tt_trial_clear(&lk);
    static const double merged[] = {1.0, 3.0, 4.0};
    CU_ASSERT(reads_as(s, 4, merged, 3));
    /* a damaged samples_z is an error, never other samples */
    CU_ASSERT(tt_fx_raw_exec("UPDATE trials SET samples_z = 'AQ!!' WHERE config_hash = 5"));
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &KEY, 5, &lk), TT_EDB);
    tt_store_close(s);
}

/* A schema-2 database with a job whose trials hold their samples as text: opening it
 * migrates to 005 (job_trials rebuilt on SQLite) and every link and text stays. */
static void test_migration_005(void)
{
    CU_ASSERT_FATAL(tt_fx_schema_v2_job(2));
    CU_ASSERT_FATAL(tt_fx_raw_exec(
        "INSERT INTO trials (id, template_hash, problem_key, target, backend_fp, config_hash,"
        " config_key, config_json, status, median_us, samples_json, job_id, created_at) VALUES"
        " (1001, '0123456789abcdef', 'M=64', 'a2', 'sim', 1, 'x=1', '{}', 'ok', 3.0,"
        " '[3.0,3.5e-05, 4]', 7, 0),"
        " (1002, '0123456789abcdef', 'M=64', 'a2', 'sim', 2, 'x=2', '{}', 'ok', 5.0, NULL, 7,"
        " 0);"   /* ids above PostgreSQL's sequence, which explicit ids do not move */
        "INSERT INTO job_trials (job_id, seq, trial_id, reused) VALUES (7, 1, 1002, 0),"
        " (7, 2, 1001, 1);"));
    tt_store *s = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(tt_fx_url, &s, &e), TT_OK);
    CU_ASSERT(tt_store_schema_version(s) >= 5);
    tt_trial *ts = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, 7, 0, 10, &ts, &n, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(ts[0].id, 1002);
    CU_ASSERT_PTR_NULL(ts[0].samples_json);
    CU_ASSERT_EQUAL(ts[1].id, 1001);
    CU_ASSERT_EQUAL(ts[1].reused, 1);
    /* text rows read back as they were written, not re-rendered */
    CU_ASSERT_STRING_EQUAL(ts[1].samples_json ? ts[1].samples_json : "", "[3.0,3.5e-05, 4]");
    for (size_t i = 0; i < n; i++) tt_trial_clear(&ts[i]);
    free(ts);
    /* the job goes on at seq 3 in the rebuilt table */
    CU_ASSERT_EQUAL(record(s, 7, 3, 3, ds, 4, 0), TT_OK);
    CU_ASSERT_EQUAL(record(s, 7, 3, 4, ds, 4, 0), TT_OK);   /* seq 3 again: a no-op */
    CU_ASSERT(reads_as(s, 3, ds, 4));
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, 7, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 3);
    tt_job_clear(&j);
    tt_store_close(s);
    /* the index on trial_id is gone (the rebuilt SQLite table has no rowid either) */
    CU_ASSERT(!tt_fx_raw_exec("DROP INDEX job_trials_trial"));
    if (tt_fx_engine == TT_STORE_SQLITE) CU_ASSERT(!tt_fx_raw_exec("SELECT rowid FROM job_trials"));
}

static const tt_test_case codec_cases_t[] = {{"codec_round_trip", test_codec_round_trip},
                                             {"codec_malformed", test_codec_malformed},
                                             {NULL, NULL}};
static const tt_test_case store_cases[] = {{"store_round_trip", test_store_round_trip},
                                           {"migration_005", test_migration_005},
                                           {NULL, NULL}};
static const tt_test_suite suites[] = {
    {"samples_codec", NULL, NULL, codec_cases_t},
    {"samples_sqlite", tt_fx_sqlite_init, tt_fx_sqlite_cleanup, store_cases},
    {"samples_postgres", tt_fx_pg_init, tt_fx_pg_cleanup, store_cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

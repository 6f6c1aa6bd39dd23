/* SPDX-License-Identifier: MIT
 * test_store_trials.c - the store's trials (daemon/store/store.h) on both engines, SQLite in
 * temp files and PostgreSQL in a throwaway cluster: re-use across jobs, seq and best, an
 * atomic record, list statistics, and re-measurement appending samples.
 * Every case opens a fresh database (SQLite: a new file; PostgreSQL: CREATE DATABASE).  The
 * PostgreSQL suite fails (does not skip) when the server binaries are missing.  Fixtures:
 * tests/helpers/store_fixture and store_rows.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pg_cluster.h"
#include "store.h"
#include "store_fixture.h"
#include "store_rows.h"
#include "tt_test.h"

static void test_trials(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t j1 = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
    int64_t j2 = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
    const uint64_t HB = 0xF00DFACE12345678ull;   /* high bit set: signed in the database */
    tt_trial t;
    CU_ASSERT_EQUAL_FATAL(tt_sr_record(s, &tt_sr_key, j1, 0, "A", 1, TT_OK, 10.0, &t), TT_OK);
    CU_ASSERT(t.id > 0);
    CU_ASSERT_EQUAL(t.reused, 0);
    CU_ASSERT_EQUAL(t.job_id, j1);
    int64_t ida = t.id;
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, 1, "B", HB, TT_OK, 8.0, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, 2, "C", 3, TT_EBUILD, 0, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, 3, "D", 4, TT_OK, 12.0, NULL), TT_OK);
    /* resumed job records seq 1 again (with other data): nothing changes */
    CU_ASSERT_EQUAL_FATAL(tt_sr_record(s, &tt_sr_key, j1, 1, "E", 5, TT_OK, 1.0, &t), TT_OK);
    CU_ASSERT_STRING_EQUAL(t.config_key, "B");
    CU_ASSERT_EQUAL(t.median_us, 8.0);
    CU_ASSERT_EQUAL(t.seq, 1);
    tt_trial_clear(&t);
    tt_job j;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, j1, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 4);
    CU_ASSERT_EQUAL(j.best_us, 8.0);
    CU_ASSERT_STRING_EQUAL(j.best_config_json, "{\"cfg\":\"B\"}");
    CU_ASSERT_DOUBLE_EQUAL(j.best_pred_us, 8.8, 1e-9);
    tt_job_clear(&j);
    /* the same config from a second job is reused, filled from the stored measurement */
    CU_ASSERT_EQUAL_FATAL(tt_sr_record(s, &tt_sr_key, j2, 0, "B", HB, TT_OK, 99.0, &t), TT_OK);
    CU_ASSERT_EQUAL(t.reused, 1);
    CU_ASSERT_EQUAL(t.median_us, 8.0);
    CU_ASSERT_EQUAL(t.job_id, j1);
    CU_ASSERT_EQUAL(t.config_hash, HB);
    CU_ASSERT_STRING_EQUAL(t.samples_json, "[1.5,2.5]");
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j2, 1, "C", 3, TT_OK, 1.0, &t), TT_OK);
    CU_ASSERT_EQUAL(t.reused, 1);
    CU_ASSERT_EQUAL(t.status, TT_EBUILD);   /* the recorded failure, not the new claim */
    CU_ASSERT_STRING_EQUAL(t.error, "compiler said no");
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(s, j2, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 2);
    CU_ASSERT_EQUAL(j.best_us, 8.0);
    tt_job_clear(&j);
    /* lookup */
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_lookup(s, &tt_sr_key, 1, &t), TT_OK);
    CU_ASSERT_EQUAL(t.id, ida);
    CU_ASSERT_EQUAL(t.status, TT_OK);
    CU_ASSERT_EQUAL(t.median_us, 10.0);
    CU_ASSERT_DOUBLE_EQUAL(t.spread_us, 0.1, 1e-12);
    CU_ASSERT_EQUAL(t.compile_s, 0.5);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &tt_sr_key, HB, &t), TT_OK);
    CU_ASSERT_STRING_EQUAL(t.config_key, "B");
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &tt_sr_key, 77, &t), TT_ENOTFOUND);
    tt_trial_key other = tt_sr_key;
    other.target = "a3";
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &other, 1, &t), TT_ENOTFOUND);
    /* unknown job: nothing is written (one transaction) */
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, 4242, 0, "Z", 88, TT_OK, 1.0, NULL), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &tt_sr_key, 88, &t), TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_sr_record(s, NULL, j1, 9, "Z", 88, TT_OK, 1.0, NULL), TT_EINVAL);

    /* best: only faster results replace it; any backend vs one backend */
    tt_best_query q = {"gemm", "a2", "M=64", NULL, NULL};
    tt_best b;
    CU_ASSERT_EQUAL_FATAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 8.0);
    CU_ASSERT_STRING_EQUAL(b.config_json, "{\"cfg\":\"B\"}");
    CU_ASSERT_STRING_EQUAL(b.problem_json, "{\"M\":64}");
    CU_ASSERT_STRING_EQUAL(b.backend_fp, "sim");
    CU_ASSERT_EQUAL(b.job_id, j1);
    tt_best_clear(&b);
    tt_trial_key fast = tt_sr_key;
    fast.backend_fp = "cmd:npu@1234";
    CU_ASSERT_EQUAL(tt_sr_record(s, &fast, j2, 2, "A", 1, TT_OK, 5.0, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 5.0);
    CU_ASSERT_STRING_EQUAL(b.backend_fp, "cmd:npu@1234");
    tt_best_clear(&b);
    q.backend_fp = "sim";
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 8.0);
    tt_best_clear(&b);
    q.template_hash = "ffffffffffffffff";
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_ENOTFOUND);
    q.template_hash = NULL;
    q.backend_fp = NULL;
    q.problem_key = "M=128";
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_ENOTFOUND);
    q.problem_key = NULL;
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_EINVAL);
    tt_best *rows = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_best_list(s, &q, &rows, &n), TT_OK);
    CU_ASSERT_EQUAL(n, 2);
    if (n == 2) CU_ASSERT(rows[0].median_us <= rows[1].median_us);
    for (size_t i = 0; i < n; i++) tt_best_clear(&rows[i]);
    free(rows);
    q.backend_fp = "sim";
    CU_ASSERT_EQUAL(tt_store_best_list(s, &q, &rows, &n), TT_OK);
    CU_ASSERT_EQUAL(n, 1);
    for (size_t i = 0; i < n; i++) tt_best_clear(&rows[i]);
    free(rows);
    tt_store_close(s);
}

/* A failure inside tt_store_trial_record (a trigger raising on the job_trials insert)
 * leaves nothing behind: no measurement, no best, no progress. */
static void test_record_atomic(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t j1 = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, 0, "A", 1, TT_OK, 10.0, NULL), TT_OK);
    int ok = tt_fx_engine == TT_STORE_SQLITE
                 ? tt_fx_raw_exec("CREATE TRIGGER boom BEFORE INSERT ON job_trials WHEN NEW.seq = 13 "
                            "BEGIN SELECT RAISE(ABORT, 'injected fault'); END")
                 : tt_fx_raw_exec("CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ "
                            "BEGIN IF NEW.seq = 13 THEN RAISE EXCEPTION 'injected fault'; "
                            "END IF; RETURN NEW; END $$; CREATE TRIGGER boom BEFORE INSERT ON "
                            "job_trials FOR EACH ROW EXECUTE FUNCTION boom()");
    CU_ASSERT_FATAL(ok);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, 13, "F", 6, TT_OK, 1.0, NULL), TT_EDB);
    CU_ASSERT_PTR_NOT_NULL(strstr(tt_store_errmsg(s), "injected fault"));
    tt_trial t;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &tt_sr_key, 6, &t), TT_ENOTFOUND);
    tt_best_query q = {"gemm", "a2", "M=64", NULL, NULL};
    tt_best b;
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 10.0);
    tt_best_clear(&b);
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, j1, &j), TT_OK);
    CU_ASSERT_EQUAL(j.done, 1);
    CU_ASSERT_EQUAL(j.best_us, 10.0);
    tt_job_clear(&j);
    /* the connection is usable after the rollback */
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, 14, "F", 6, TT_OK, 1.0, NULL), TT_OK);
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.median_us, 1.0);
    tt_best_clear(&b);
    tt_store_close(s);
}

static void test_trial_list_stats(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t j1 = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
    for (int i = 0; i < 5; i++) {
        char cfg[8];
        snprintf(cfg, sizeof cfg, "c%d", i);
        CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, j1, i, cfg, (uint64_t)(100 + i),
                               i == 3 ? TT_EINFEASIBLE : TT_OK, 10.0 + i, NULL), TT_OK);
    }
    static const struct {
        int64_t offset, limit;
        size_t n;
        int64_t first_seq;
    } cases[] = {{0, 2, 2, 0}, {2, 2, 2, 2}, {4, 2, 1, 4}, {10, 2, 0, -1}, {0, 0, 5, 0},
                 {-3, 1, 1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_trial *ts = NULL;
        size_t n = 99;
        int64_t total = 0;
        CU_ASSERT_EQUAL(tt_store_trial_list(s, j1, cases[i].offset, cases[i].limit, &ts, &n,
                                            &total), TT_OK);
        CU_ASSERT_EQUAL(total, 5);
        CU_ASSERT_EQUAL(n, cases[i].n);
        if (n) CU_ASSERT_EQUAL(ts[0].seq, cases[i].first_seq);
        for (size_t k = 0; k < n; k++) {
            CU_ASSERT_EQUAL(ts[k].seq, cases[i].first_seq + (int64_t)k);
            CU_ASSERT_EQUAL(ts[k].status, ts[k].seq == 3 ? TT_EINFEASIBLE : TT_OK);
            tt_trial_clear(&ts[k]);
        }
        free(ts);
    }
    tt_trial *ts = NULL;
    size_t n = 0;
    int64_t total = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, 4242, 0, 10, &ts, &n, &total), TT_ENOTFOUND);
    CU_ASSERT_PTR_NULL(ts);
    char *js = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_trial_stats(s, &js), TT_OK);
    json_t *o = json_loads(js, 0, NULL);
    CU_ASSERT_FATAL(json_is_object(o));
    json_t *sim = json_object_get(o, "sim");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(sim, "ok")), 4);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(sim, "infeasible")), 1);
    CU_ASSERT_EQUAL(json_object_size(o), 1);
    json_decref(o);
    free(js);
    tt_store_close(s);
}


/* Re-measurement: samples appended to a trial, median recomputed, best re-evaluated (a
 * re-measured best that got slower loses its place), once per (job, trial). */
static void test_trial_append(void)
{
    tt_store *s = tt_fx_open_fresh();
    int64_t a = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
    tt_trial ta, tb;
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, a, 1, "A", 1, TT_OK, 3.0, &ta), TT_OK);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, a, 2, "B", 2, TT_OK, 5.0, &tb), TT_OK);
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, a, 3, "F", 3, TT_EBUILD, 0, NULL), TT_OK);
    tt_best_query q = {"gemm", "a2", "M=64", NULL, NULL};
    tt_best b;
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.trial_id, ta.id);
    tt_best_clear(&b);
    static const double slow[] = {20, 20, 20};
    tt_trial out;
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &tt_sr_key, "gemm", a, ta.id, slow, 3, &out), TT_OK);
    /* [1.5, 2.5] + [20, 20, 20]: median 20, q25 2.5, q75 20 */
    CU_ASSERT_DOUBLE_EQUAL(out.median_us, 20, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(out.min_us, 1.5, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(out.spread_us, 17.5, 1e-9);
    CU_ASSERT_STRING_EQUAL(out.samples_json ? out.samples_json : "", "[1.5,2.5,20.0,20.0,20.0]");
    tt_trial_clear(&out);
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.trial_id, tb.id);            /* A got slower: B is the best now */
    CU_ASSERT_DOUBLE_EQUAL(b.median_us, 5.0, 1e-9);
    tt_best_clear(&b);
    tt_job j;
    CU_ASSERT_EQUAL(tt_store_job_get(s, a, &j), TT_OK);
    CU_ASSERT_EQUAL(j.best_trial, tb.id);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 5.0, 1e-9);
    tt_job_clear(&j);
    /* once per (job, trial): a resumed job appends nothing more */
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &tt_sr_key, "gemm", a, ta.id, slow, 3, &out), TT_EEXISTS);
    tt_trial lk;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &tt_sr_key, 1, &lk), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(lk.median_us, 20, 1e-9);
    tt_trial_clear(&lk);
    int64_t *ids = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_job_remeasured(s, a, &ids, &n), TT_OK);
    CU_ASSERT_EQUAL(n, 1);
    if (n == 1) CU_ASSERT_EQUAL(ids[0], ta.id);
    free(ids);
    /* bad calls */
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &tt_sr_key, "gemm", a + 100, tb.id, slow, 3, NULL),
                    TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &tt_sr_key, "gemm", a, tb.id + 100, slow, 3, NULL),
                    TT_ENOTFOUND);
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &tt_sr_key, "gemm", a, tb.id, slow, 0, NULL), TT_EINVAL);
    tt_trial tf;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &tt_sr_key, 3, &tf), TT_OK);
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &tt_sr_key, "gemm", a, tf.id, slow, 3, NULL), TT_EINVAL);
    tt_trial_clear(&tf);
    /* another job under the same key re-measures A faster: A is the best again */
    int64_t c = tt_sr_new_job(s, "gemm", "a2", "", "M=64");
    CU_ASSERT_EQUAL(tt_sr_record(s, &tt_sr_key, c, 1, "A", 1, TT_OK, 3.0, NULL), TT_OK);
    static const double fast[] = {1, 1, 1};
    CU_ASSERT_EQUAL(tt_store_trial_append(s, &tt_sr_key, "gemm", c, ta.id, fast, 3, &out), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(out.median_us, 2.0, 1e-9);   /* [1 1 1 1.5 2.5 20 20 20] */
    tt_trial_clear(&out);
    CU_ASSERT_EQUAL(tt_store_best_get(s, &q, &b), TT_OK);
    CU_ASSERT_EQUAL(b.trial_id, ta.id);
    CU_ASSERT_DOUBLE_EQUAL(b.median_us, 2.0, 1e-9);
    tt_best_clear(&b);
    CU_ASSERT_EQUAL(tt_store_job_get(s, c, &j), TT_OK);
    CU_ASSERT_EQUAL(j.best_trial, ta.id);
    CU_ASSERT_DOUBLE_EQUAL(j.best_us, 2.0, 1e-9);
    CU_ASSERT(j.options_json && strstr(j.options_json, "\"remeasured\""));
    tt_job_clear(&j);
    tt_trial_clear(&ta);
    tt_trial_clear(&tb);
    tt_store_close(s);
}

/* A schema-2 database with trials under two measurement keys (config keys that migration
 * 003's rekey leaves as they are, so the hashes stay): opening it migrates to 006
 * (trial_keys; SQLite rebuilds trials and job_trials): every trial keeps its id, key, links
 * and uniqueness, and new keys and trials are stored beside them. */
static void test_migration_006(void)
{
    CU_ASSERT_FATAL(tt_fx_schema_v2_job(3));
    CU_ASSERT_FATAL(tt_fx_raw_exec(
        "INSERT INTO trials (id, template_hash, problem_key, target, backend_fp, config_hash,"
        " config_key, config_json, status, median_us, job_id, created_at) VALUES"
        " (1001, '0123456789abcdef', 'M=64', 'a2', 'sim', 1, 'c1', '{}', 'ok', 3.0, 7, 0),"
        " (1002, '0123456789abcdef', 'M=64', 'a2', 'sim', 2, 'c2', '{}', 'ok', 5.0, 7, 0),"
        " (1003, '0123456789abcdef', 'M=64', 'a2', 'model', 1, 'c1', '{}', 'ok', 4.0, 0, 0);"
        "INSERT INTO job_trials (job_id, seq, trial_id, reused) VALUES (7, 1, 1002, 0),"
        " (7, 2, 1001, 0), (7, 3, 1003, 1);"));
    tt_store *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_store_open(tt_fx_url, &s, NULL), TT_OK);
    CU_ASSERT(tt_store_schema_version(s) >= 6);
    CU_ASSERT_EQUAL(tt_fx_raw_int("SELECT COUNT(*) FROM trial_keys"), 2);
    CU_ASSERT(!tt_fx_raw_exec("SELECT template_hash FROM trials"));   /* the texts moved */
    if (tt_fx_engine == TT_STORE_SQLITE)
        CU_ASSERT_EQUAL(tt_fx_raw_int("SELECT COUNT(*) FROM pragma_foreign_key_check"), 0);
    tt_trial_key other = tt_sr_key;
    other.backend_fp = "model";
    tt_trial t;
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &tt_sr_key, 2, &t), TT_OK);
    CU_ASSERT_EQUAL(t.id, 1002);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &other, 1, &t), TT_OK);
    CU_ASSERT_EQUAL(t.id, 1003);
    CU_ASSERT_DOUBLE_EQUAL(t.median_us, 4.0, 1e-12);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_store_trial_lookup(s, &other, 2, &t), TT_ENOTFOUND);
    tt_trial *ts = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(tt_store_trial_list(s, 7, 0, 10, &ts, &n, NULL), TT_OK);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT(ts[0].id == 1002 && ts[1].id == 1001 && ts[2].id == 1003 && ts[2].reused);
    for (size_t i = 0; i < n; i++) tt_trial_clear(&ts[i]);
    free(ts);
    /* an old key reuses its stored trial, a new key gets its own row */
    CU_ASSERT_EQUAL(tt_sr_record(s, &other, 7, 4, "c1", 1, TT_OK, 9.0, &t), TT_OK);
    CU_ASSERT(t.reused && t.id == 1003);
    tt_trial_clear(&t);
    tt_trial_key fresh = tt_sr_key;
    fresh.problem_key = "M=128";
    CU_ASSERT_EQUAL(tt_sr_record(s, &fresh, 7, 5, "c1", 1, TT_OK, 9.0, &t), TT_OK);
    CU_ASSERT(!t.reused && t.id > 0 && t.id != 1001 && t.id != 1002 && t.id != 1003);
    tt_trial_clear(&t);
    CU_ASSERT_EQUAL(tt_fx_raw_int("SELECT COUNT(*) FROM trial_keys"), 3);
    tt_store_close(s);
}

#define TRIAL_CASES \
    {"trials_reuse_seq_best", test_trials}, \
    {"trial_record_atomic", test_record_atomic}, \
    {"trial_list_stats", test_trial_list_stats}, \
    {"trial_append_remeasure", test_trial_append}, \
    {"migration_006", test_migration_006}

static const tt_test_case cases[] = {TRIAL_CASES, {NULL, NULL}};

static const tt_test_suite suites[] = {TT_FX_BOTH_ENGINES("store_trials", cases, cases)};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

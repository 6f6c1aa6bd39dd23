/* SPDX-License-Identifier: MIT
 * test_bestcache.c - the GET /v1/best cache (daemon/api/bestcache.h) and the store stamp it relies
 * on (tt_store_best_stamp): the stamp moves after a trial record through this process and
 * after a commit by another process that knows nothing of the cache (data_version).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bestcache.h"
#include "store.h"
#include "tt_test.h"

static char *g_tmp;

static int suite_init(void)
{
    g_tmp = tt_test_tmpdir("tt-bestcache");
    return g_tmp ? 0 : -1;
}
static int suite_clean(void)
{
    tt_bestcache_clear();
    tt_test_rmrf(g_tmp);
    free(g_tmp);
    g_tmp = NULL;
    return 0;
}

static const tt_trial_key KEY = {"0123456789abcdef", "M=64", "a2", "sim"};

static tt_rc record(tt_store *s, const char *cfg, uint64_t hash, double us)
{
    tt_trial t;
    memset(&t, 0, sizeof t);
    t.config_key = strdup(cfg);
    t.config_json = strdup("{\"cfg\":1}");
    t.config_hash = hash;
    t.status = TT_OK;
    t.median_us = us;
    tt_rc rc = tt_store_trial_record(s, &KEY, "gemm", 0, 0, &t);
    tt_trial_clear(&t);
    return rc;
}

static int same(const tt_store_stamp *a, const tt_store_stamp *b)
{
    return a->gen == b->gen && a->data_version == b->data_version;
}

static double best_us(tt_store *s)
{
    tt_best_query q = {"gemm", "a2", "M=64", NULL, NULL};
    tt_best b;
    if (tt_store_best_get(s, &q, &b) != TT_OK) return -1;
    double us = b.median_us;
    tt_best_clear(&b);
    return us;
}

/* Another process sets every best row to us with plain SQLite (no generation bump). */
static int foreign_write(const char *path, double us)
{
    pid_t pid = fork();
    if (pid == 0) {
        sqlite3 *db = NULL;
        char sql[80];
        snprintf(sql, sizeof sql, "UPDATE best SET median_us = %g", us);
        int ok = sqlite3_open(path, &db) == SQLITE_OK;
        sqlite3_busy_timeout(db, 5000);
        ok = ok && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
        sqlite3_close(db);
        _exit(ok ? 0 : 1);
    }
    int st = -1;
    if (pid <= 0 || waitpid(pid, &st, 0) != pid) return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_stamp(void)
{
    char url[640], path[600];
    snprintf(path, sizeof path, "%s/stamp.db", g_tmp);
    snprintf(url, sizeof url, "sqlite:%s", path);
    tt_store *s = NULL, *s2 = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s2, &e), TT_OK);
    tt_store_stamp a, b;
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &a), TT_OK);
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &b), TT_OK);
    CU_ASSERT(same(&a, &b));                        /* nothing written: stable */
    /* a record on the same connection (data_version does not see it): the generation does */
    CU_ASSERT_EQUAL(record(s, "A", 1, 10.0), TT_OK);
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &b), TT_OK);
    CU_ASSERT(!same(&a, &b));
    CU_ASSERT_DOUBLE_EQUAL(best_us(s), 10.0, 1e-12);
    /* a record on another connection of this process */
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &a), TT_OK);
    CU_ASSERT_EQUAL(record(s2, "B", 2, 5.0), TT_OK);
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &b), TT_OK);
    CU_ASSERT(!same(&a, &b));
    CU_ASSERT_DOUBLE_EQUAL(best_us(s), 5.0, 1e-12);
    /* another process writes the file with plain SQLite (no generation bump here); with
     * no refresh interval the very next stamp sees it */
    tt_store_set_stamp_refresh(s, 0);
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &a), TT_OK);
    CU_ASSERT(foreign_write(path, 1.0));
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &b), TT_OK);
    CU_ASSERT(a.gen == b.gen);                      /* only data_version saw it */
    CU_ASSERT(a.data_version != b.data_version);
    CU_ASSERT_DOUBLE_EQUAL(best_us(s), 1.0, 1e-12);
    /* closing a store moves the generation */
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &a), TT_OK);
    tt_store_close(s2);
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &b), TT_OK);
    CU_ASSERT(a.gen != b.gen);
    tt_store_close(s);
}

/* Within the refresh interval a stamp reuses the last data_version (no read transaction),
 * but never longer: a foreign commit shows once the interval has passed, and writes through
 * this process show at once. */
static void test_stamp_refresh(void)
{
    char url[640], path[600];
    snprintf(path, sizeof path, "%s/refresh.db", g_tmp);
    snprintf(url, sizeof url, "sqlite:%s", path);
    tt_store *s = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL_FATAL(tt_store_open(url, &s, &e), TT_OK);
    CU_ASSERT_EQUAL(record(s, "A", 1, 10.0), TT_OK);
    const unsigned ms = 1500;
    tt_store_set_stamp_refresh(s, ms);
    tt_store_stamp a, b;
    double t0 = mono_s();
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &a), TT_OK);      /* reads data_version */
    CU_ASSERT(foreign_write(path, 3.0));
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &b), TT_OK);
    if (mono_s() - t0 < ms * 1e-3 * 0.9)                       /* a loaded machine may be slower */
        CU_ASSERT(same(&a, &b));                               /* reused: not seen yet */
    /* a record through this process moves the stamp inside the interval */
    CU_ASSERT_EQUAL(record(s, "B", 2, 20.0), TT_OK);
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &b), TT_OK);
    CU_ASSERT(a.gen != b.gen);
    /* after the interval the foreign commit is seen (a's data_version was read before t0) */
    t0 = mono_s();
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &a), TT_OK);
    CU_ASSERT(foreign_write(path, 4.0));
    while (mono_s() - t0 < ms * 1e-3 + 0.05) usleep(20000);
    CU_ASSERT_EQUAL(tt_store_best_stamp(s, &b), TT_OK);
    CU_ASSERT(a.gen == b.gen);
    CU_ASSERT(a.data_version != b.data_version);
    CU_ASSERT_DOUBLE_EQUAL(best_us(s), 4.0, 1e-12);
    tt_store_close(s);
}

static void test_cache(void)
{
    tt_bestcache_clear();
    tt_store_stamp a = {7, 3}, b = {7, 4}, c = {8, 3};
    CU_ASSERT_PTR_NULL(tt_bestcache_get("k1", &a));
    tt_bestcache_put("k1", &a, "{\"x\":1}\n");
    char *v = tt_bestcache_get("k1", &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_STRING_EQUAL(v, "{\"x\":1}\n");
    free(v);
    CU_ASSERT_PTR_NULL(tt_bestcache_get("k1", &b));  /* other data_version */
    CU_ASSERT_PTR_NULL(tt_bestcache_get("k1", &c));  /* other generation */
    CU_ASSERT_PTR_NULL(tt_bestcache_get("k2", &a));  /* other key */
    tt_bestcache_put("k1", &b, "{\"x\":2}\n");       /* refilled under a new stamp */
    CU_ASSERT_PTR_NULL(tt_bestcache_get("k1", &a));
    v = tt_bestcache_get("k1", &b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_STRING_EQUAL(v, "{\"x\":2}\n");
    free(v);
    /* many keys: direct-mapped slots replace each other, never mix keys up */
    char k[32], body[32];
    for (int i = 0; i < 3 * TT_BESTCACHE_SLOTS; i++) {
        snprintf(k, sizeof k, "key%d", i);
        snprintf(body, sizeof body, "%d", i);
        tt_bestcache_put(k, &a, body);
    }
    for (int i = 0; i < 3 * TT_BESTCACHE_SLOTS; i++) {
        snprintf(k, sizeof k, "key%d", i);
        snprintf(body, sizeof body, "%d", i);
        v = tt_bestcache_get(k, &a);
        if (v) CU_ASSERT_STRING_EQUAL(v, body);
        free(v);
    }
    unsigned long long hits = 0, misses = 0;
    tt_bestcache_counts(&hits, &misses);
    CU_ASSERT(hits >= 2 && misses >= 5);
    tt_bestcache_clear();
    CU_ASSERT_PTR_NULL(tt_bestcache_get("k1", &b));
}

static const tt_test_case cases[] = {
    {"stamp_moves_on_every_writer", test_stamp},
    {"stamp_refresh_interval", test_stamp_refresh},
    {"cache_hits_only_on_same_stamp", test_cache},
    {NULL, NULL}};

static const tt_test_suite suites[] = {{"bestcache", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

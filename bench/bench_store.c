/* SPDX-License-Identifier: MIT
 * bench_store.c - store throughput on SQLite: trial records/s (one transaction each, WAL,
 * synchronous=NORMAL and FULL) and best lookups/s (cached prepared statement), printed as a
 * table.  Usage: bench_store [seconds-per-row, default 1] [dir, default $TMPDIR or /tmp]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define NPROBLEMS 64

/* Trial records for one job until `secs` elapse; returns records/s (or -1). */
static double bench_records(tt_store *s, double secs, int64_t *nrec)
{
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "gemm");
    snprintf(j.template_hash, sizeof j.template_hash, "0123456789abcdef");
    snprintf(j.target, sizeof j.target, "a2");
    snprintf(j.backend, sizeof j.backend, "sim");
    snprintf(j.strategy, sizeof j.strategy, "random");
    j.problem_key = (char *)"M=4096,N=4096,K=4096";
    j.problem_json = (char *)"{\"M\":4096,\"N\":4096,\"K\":4096}";
    if (tt_store_job_create(s, &j) != TT_OK) return -1;
    double t0 = now_s(), t;
    int64_t n = 0;
    do {
        for (int k = 0; k < 16; k++, n++) {
            char cfg[64], json[96], pk[32];
            snprintf(cfg, sizeof cfg, "block_M=%lld,block_N=128", (long long)n);
            snprintf(json, sizeof json, "{\"block_M\":%lld,\"block_N\":128}", (long long)n);
            snprintf(pk, sizeof pk, "M=%d", (int)(n % NPROBLEMS));
            tt_trial_key key = {"0123456789abcdef", pk, "a2", "sim"};
            tt_trial tr;
            memset(&tr, 0, sizeof tr);
            tr.config_key = strdup(cfg);
            tr.config_json = strdup(json);
            tr.config_hash = (uint64_t)n * 0x9E3779B97F4A7C15ull;
            tr.status = TT_OK;
            tr.median_us = 1000.0 - (double)(n % 997);
            tr.samples_json = strdup("[1,2,3]");
            tt_rc rc = tt_store_trial_record(s, &key, "gemm", j.id, n, &tr);
            tt_trial_clear(&tr);
            if (rc != TT_OK) {
                fprintf(stderr, "record: %s: %s\n", tt_strerror(rc), tt_store_errmsg(s));
                return -1;
            }
        }
        t = now_s() - t0;
    } while (t < secs);
    *nrec = n;
    return (double)n / t;
}

static double bench_best(tt_store *s, double secs, int64_t *nq)
{
    double t0 = now_s(), t;
    int64_t n = 0;
    do {
        for (int k = 0; k < 256; k++, n++) {
            char pk[32];
            snprintf(pk, sizeof pk, "M=%d", (int)(n % NPROBLEMS));
            tt_best_query q = {"gemm", "a2", pk, NULL, NULL};
            tt_best b;
            tt_rc rc = tt_store_best_get(s, &q, &b);
            tt_best_clear(&b);
            if (rc != TT_OK) {
                fprintf(stderr, "best_get %s: %s\n", pk, tt_strerror(rc));
                return -1;
            }
        }
        t = now_s() - t0;
    } while (t < secs);
    *nq = n;
    return (double)n / t;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    if (secs <= 0) secs = 1.0;
    const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    printf("| store (SQLite, WAL)          | ops       | rate (/s) |\n");
    printf("|------------------------------|-----------|-----------|\n");
    static const char *const modes[] = {"normal", "full"};
    int status = 0;
    for (int m = 0; m < 2; m++) {
        char path[512], url[600];
        snprintf(path, sizeof path, "%s/bench_store-%d-%s.db", dir, (int)getpid(), modes[m]);
        snprintf(url, sizeof url, "sqlite:%s?synchronous=%s", path, modes[m]);
        tt_store *s = NULL;
        tt_errinfo e;
        if (tt_store_open(url, &s, &e) != TT_OK) {
            fprintf(stderr, "bench_store: %s\n", e.msg);
            return 1;
        }
        int64_t nrec = 0, nq = 0;
        double rec = bench_records(s, secs, &nrec);
        printf("| trial records, sync=%-6s   | %9lld | %9.0f |\n", modes[m], (long long)nrec, rec);
        if (m == 0) {
            double best = bench_best(s, secs, &nq);
            printf("| best lookups (exact shape)   | %9lld | %9.0f |\n", (long long)nq, best);
            if (best < 0) status = 1;
        }
        if (rec < 0) status = 1;
        tt_store_close(s);
        static const char *const sfx[] = {"", "-wal", "-shm"};
        for (int k = 0; k < 3; k++) {
            char p[540];
            snprintf(p, sizeof p, "%s%s", path, sfx[k]);
            unlink(p);
        }
    }
    return status;
}

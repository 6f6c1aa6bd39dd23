/* SPDX-License-Identifier: MIT
 * bench_job.c - a whole tuning run through the real runner and store (SQLite, WAL): an
 * 800-trial `replay:convolution_A100` job (the recorded GPU dataset, 4362 configs) from claim
 * to `done`, with one commit per trial (batch_trials 1) and with group commit (the default
 * batch: runner.h), for the random and evolution strategies.  Prints the median wall time of
 * the runs, the time per trial, the speed-up, the factor against Kernel Tuner's simulation
 * mode (its genetic algorithm took 0.3 s for a run of this budget on this space: issue 13)
 * and the trial sequence's equality.
 *
 *   bench_job [--runs N (5)] [--budget N (800)] [--datasets DIR] [--batch N (default)]
 *             [--group-only] [--keep]
 *
 * --group-only skips the one-commit-per-trial runs (profiling); --keep leaves the databases
 * (runK.db, one per run, numbered in the order of the table) in $TMPDIR/bench_job.XXXXXX and
 * prints where, to compare their rows across builds.
 *
 * The time is the job's own (started_at .. finished_at in the store): claim, strategy,
 * replay lookups, trial records and commits, the end of the job; not the idle poll before the
 * claim.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "runner.h"
#include "store.h"
#include "t1.h"

/* Kernel Tuner 0.4.5's genetic algorithm in simulation mode: one run of this budget on this
 * space (issue 13). */
#define TT_KT_GA_S 0.3

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct run_out {
    double secs;              /* finished_at - started_at */
    char first[256], last[256];   /* config keys of seq 1 and the last seq */
    double best_us;
} run_out;

/* One job on a fresh database; 0 on success. */
static int one_run(const char *dir, int k, tt_catalog *cat, const char *dsdir,
                   const char *strategy, int64_t budget, int64_t batch, run_out *out)
{
    char url[1200];
    snprintf(url, sizeof url, "sqlite:%s/run%d.db", dir, k);
    tt_store *s = NULL;
    tt_errinfo e;
    if (tt_store_open(url, &s, &e) != TT_OK) { fprintf(stderr, "open: %s\n", e.msg); return -1; }
    const tt_template *t = NULL;
    if (tt_catalog_template(cat, NULL, "convolution", NULL, &t, &e) != TT_OK) return -1;
    if (tt_catalog_sync(cat, s) != TT_OK) return -1;
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "convolution");
    snprintf(j.template_hash, sizeof j.template_hash, "%s", t->hash);
    snprintf(j.target, sizeof j.target, "a2");
    snprintf(j.backend, sizeof j.backend, "replay:convolution_A100");
    snprintf(j.strategy, sizeof j.strategy, "%s", strategy);
    j.problem_key = (char *)"";
    j.problem_json = (char *)"{}";
    j.budget_trials = budget;
    j.seed = 11;
    if (tt_store_job_create(s, &j) != TT_OK) return -1;
    tt_runner_config rc = {.db_url = url, .workers = 1, .lease_seconds = 30,
                           .poll_seconds = 0.01, .catalog = cat, .datasets_dir = dsdir,
                           .batch_trials = batch};
    tt_runner *r = NULL;
    if (tt_runner_start(&rc, &r, &e) != TT_OK) { fprintf(stderr, "runner: %s\n", e.msg); return -1; }
    tt_job cur;
    memset(&cur, 0, sizeof cur);
    for (int i = 0; i < 60000; i++) {
        tt_job_clear(&cur);
        if (tt_store_job_get(s, j.id, &cur) == TT_OK && cur.state >= TT_JOB_DONE) break;
        nap(0.005);
    }
    tt_runner_stop(r);
    int ok = cur.state == TT_JOB_DONE && cur.done == budget;
    if (!ok) fprintf(stderr, "job %s: state %s, %lld trials, %s\n", strategy,
                     tt_job_state_name(cur.state), (long long)cur.done, cur.error ? cur.error : "");
    out->secs = cur.finished_at - cur.started_at;
    out->best_us = cur.best_us;
    tt_trial *ts = NULL;
    size_t n = 0;
    out->first[0] = out->last[0] = '\0';
    if (ok && tt_store_trial_list(s, j.id, 0, budget, &ts, &n, NULL) == TT_OK && n) {
        snprintf(out->first, sizeof out->first, "%s", ts[0].config_key);
        snprintf(out->last, sizeof out->last, "%s", ts[n - 1].config_key);
    }
    for (size_t i = 0; i < n; i++) tt_trial_clear(&ts[i]);
    free(ts);
    tt_job_clear(&cur);
    tt_store_close(s);
    return ok ? 0 : -1;
}

static double median_run(const char *dir, int *k, tt_catalog *cat, const char *dsdir,
                         const char *strategy, int64_t budget, int64_t batch, int runs,
                         run_out *last)
{
    double v[64];
    for (int i = 0; i < runs; i++) {
        if (one_run(dir, (*k)++, cat, dsdir, strategy, budget, batch, last) != 0) exit(1);
        v[i] = last->secs;
    }
    qsort(v, (size_t)runs, sizeof v[0], cmp_d);
    return v[runs / 2];
}

int main(int argc, char **argv)
{
    int runs = 5, group_only = 0, keep = 0;
    int64_t budget = 800, batch = 0;
    const char *dsdir = TT_DEFAULT_DATASETS_DIR;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--datasets") && i + 1 < argc) dsdir = argv[++i];
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--group-only")) group_only = 1;
        else if (!strcmp(argv[i], "--keep")) keep = 1;
        else {
            fprintf(stderr, "usage: %s [--runs N] [--budget N] [--datasets DIR] [--batch N] "
                    "[--group-only] [--keep]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 1 || runs > 64 || budget < 1) return 2;
    tt_catalog *cat = NULL;
    tt_errinfo e;
    if (tt_catalog_new(NULL, TT_DEFAULT_TARGETS_DIR, &cat, &e) != TT_OK) {
        fprintf(stderr, "catalog: %s\n", e.msg);
        return 1;
    }
    char t1path[1024];
    snprintf(t1path, sizeof t1path, "%s/convolution.t1.json", dsdir);
    json_t *t1 = json_load_file(t1path, 0, NULL), *doc = NULL;
    if (!t1 || tt_t1_to_template(t1, "convolution", &doc, &e) != TT_OK ||
        tt_catalog_put(cat, NULL, NULL, doc, NULL, &e) != TT_OK) {
        fprintf(stderr, "%s: %s\n", t1path, e.msg);
        return 1;
    }
    json_decref(t1);
    json_decref(doc);
    const char *tmp = getenv("TMPDIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/bench_job.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    printf("whole %lld-trial replay:convolution_A100 run (recorded GPU data, 4362 configs), SQLite "
           "WAL, median of %d runs\n", (long long)budget, runs);
    printf("%-10s | %-22s | %10s | %11s | %8s | %15s | same trials\n", "strategy", "commit",
           "run ms", "us / trial", "speed-up", "vs KT GA 0.3 s");
    static const char *const strategies[] = {"random", "evolution"};
    int k = 0;
    for (size_t si = 0; si < 2; si++) {
        run_out a, b;
        double one = group_only ? 0
                                : median_run(dir, &k, cat, dsdir, strategies[si], budget, 1, runs, &a);
        double grp = median_run(dir, &k, cat, dsdir, strategies[si], budget, batch, runs, &b);
        char label[48];
        snprintf(label, sizeof label, "group (batch %lld)",
                 (long long)(batch > 0 ? batch : TT_RUNNER_BATCH_TRIALS));
        int same = !strcmp(a.first, b.first) && !strcmp(a.last, b.last) && a.best_us == b.best_us;
        if (!group_only)
            printf("%-10s | %-22s | %10.1f | %11.1f | %8s | %14.0fx |\n", strategies[si],
                   "one per trial", one * 1e3, one * 1e6 / (double)budget, "1.0x",
                   TT_KT_GA_S / one);
        char up[16];
        snprintf(up, sizeof up, group_only ? "-" : "%.1fx", one / grp);
        printf("%-10s | %-22s | %10.1f | %11.1f | %8s | %14.0fx | %s\n", strategies[si], label,
               grp * 1e3, grp * 1e6 / (double)budget, up, TT_KT_GA_S / grp,
               group_only ? "-" : same ? "yes" : "NO");
    }
    if (keep) {
        printf("databases kept in %s (run0.db ...)\n", dir);
        k = 0;
    }
    for (int i = 0; i < k; i++) {
        char p[1200];
        static const char *const sfx[] = {"", "-wal", "-shm"};
        for (int x = 0; x < 3; x++) {
            snprintf(p, sizeof p, "%s/run%d.db%s", dir, i, sfx[x]);
            unlink(p);
        }
    }
    if (!keep) rmdir(dir);
    tt_catalog_free(cat);
    return 0;
}

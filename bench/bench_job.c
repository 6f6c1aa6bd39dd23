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
 *             [--group-only] [--keep] [--strategy NAME]
 *
 * --group-only skips the one-commit-per-trial runs (profiling); --keep leaves the databases
 * (runK.db, one per run, numbered in the order of the table) in $TMPDIR/bench_job.XXXXXX and
 * prints where, to compare their rows across builds; --strategy runs only that one of random
 * and evolution (profiling).
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
    double cpu;               /* CPU seconds of the process from the job's creation until it
                                 was seen done (the job's, plus the idle polls around it) */
    char first[256], last[256];   /* config keys of seq 1 and the last seq */
    double best_us;
} run_out;

/* The fingerprint a submission of replay:convolution_A100 records (the runner refuses a job
 * whose recording changed): taken once in main, off the clock. */
static char g_fp[80];

/* Create the job of a run: template t (named name) on the replay dataset. */
static int make_job(tt_store *s, const char *name, const tt_template *t, const char *strategy,
                    int64_t budget, tt_job *j)
{
    memset(j, 0, sizeof *j);
    snprintf(j->backend_fp, sizeof j->backend_fp, "%s", g_fp);
    snprintf(j->template_name, sizeof j->template_name, "%s", name);
    snprintf(j->template_hash, sizeof j->template_hash, "%s", t->hash);
    snprintf(j->target, sizeof j->target, "a2");
    snprintf(j->backend, sizeof j->backend, "replay:convolution_A100");
    snprintf(j->strategy, sizeof j->strategy, "%s", strategy);
    j->problem_key = (char *)"";
    j->problem_json = (char *)"{}";
    j->budget_trials = budget;
    j->seed = 11;
    return tt_store_job_create(s, j) == TT_OK ? 0 : -1;
}

/* Wait for job id to end (polled through s) and fill out; 0 when it is done with every trial. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* cpu0: cpu_now() before the job was created. */
static int wait_job(tt_store *s, int64_t id, const char *strategy, int64_t budget, double cpu0,
                    run_out *out)
{
    tt_job cur;
    memset(&cur, 0, sizeof cur);
    for (int i = 0; i < 600000; i++) {
        tt_job_clear(&cur);
        if (tt_store_job_get(s, id, &cur) == TT_OK && cur.state >= TT_JOB_DONE) break;
        nap(0.005);
    }
    out->cpu = cpu_now() - cpu0;
    int ok = cur.state == TT_JOB_DONE && cur.done == budget;
    if (!ok) fprintf(stderr, "job %s: state %s, %lld trials, %s\n", strategy,
                     tt_job_state_name(cur.state), (long long)cur.done, cur.error ? cur.error : "");
    out->secs = cur.finished_at - cur.started_at;
    out->best_us = cur.best_us;
    tt_trial *ts = NULL;
    size_t n = 0;
    out->first[0] = out->last[0] = '\0';
    if (ok && tt_store_trial_list(s, id, 0, budget, &ts, &n, NULL) == TT_OK && n) {
        snprintf(out->first, sizeof out->first, "%s", ts[0].config_key);
        snprintf(out->last, sizeof out->last, "%s", ts[n - 1].config_key);
    }
    for (size_t i = 0; i < n; i++) tt_trial_clear(&ts[i]);
    free(ts);
    tt_job_clear(&cur);
    return ok ? 0 : -1;
}

static tt_runner *start_runner(const char *url, tt_catalog *cat, const char *dsdir,
                               int64_t batch)
{
    tt_runner_config rc = {.db_url = url, .workers = 1, .lease_seconds = 30,
                           .poll_seconds = 0.01, .catalog = cat, .datasets_dir = dsdir,
                           .batch_trials = batch};
    tt_runner *r = NULL;
    tt_errinfo e;
    if (tt_runner_start(&rc, &r, &e) != TT_OK) fprintf(stderr, "runner: %s\n", e.msg);
    return r;
}

/* One job on a fresh database with a fresh runner (cold: its connection prepares every
 * statement); 0 on success. */
static int one_run(const char *dir, int k, tt_catalog *cat, const char *dsdir,
                   const char *strategy, int64_t budget, int64_t batch, run_out *out)
{
    char url[1200];
    snprintf(url, sizeof url, "sqlite:%s/run%d.db", dir, k);
    tt_store *s = NULL;
    tt_errinfo e;
    if (tt_store_open(url, &s, &e) != TT_OK) { fprintf(stderr, "open: %s\n", e.msg); return -1; }
    const tt_template *t = NULL;
    tt_job j;
    double cpu0 = cpu_now();
    if (tt_catalog_template(cat, NULL, "convolution", NULL, &t, &e) != TT_OK ||
        tt_catalog_sync(cat, s) != TT_OK || make_job(s, "convolution", t, strategy, budget, &j))
        return -1;
    tt_runner *r = start_runner(url, cat, dsdir, batch);
    if (!r) return -1;
    int rc = wait_job(s, j.id, strategy, budget, cpu0, out);
    tt_runner_stop(r);
    tt_store_close(s);
    return rc;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_d);
    return v[n / 2];
}

/* The median wall time of the runs; *cpu the median CPU time. */
static double median_run(const char *dir, int *k, tt_catalog *cat, const char *dsdir,
                         const char *strategy, int64_t budget, int64_t batch, int runs,
                         run_out *last, double *cpu)
{
    double v[64], c[64];
    for (int i = 0; i < runs; i++) {
        if (one_run(dir, (*k)++, cat, dsdir, strategy, budget, batch, last) != 0) exit(1);
        v[i] = last->secs;
        c[i] = last->cpu;
    }
    *cpu = median_of(c, runs);
    return median_of(v, runs);
}

/* Warm daemon: one database (dir/warmK.db) and one runner for all the runs, as in a running
 * tiletuned; run i tunes a copy of the template named convolution_wI -- another template hash,
 * so another measurement key: nothing is reused from the runs before, yet the connection's
 * statements are prepared and the database holds the earlier runs' rows. */
static double median_warm(const char *dir, int *k, tt_catalog *cat, const json_t *doc,
                          const char *dsdir, const char *strategy, int64_t budget,
                          int64_t batch, int runs, run_out *last, double *cpu)
{
    char url[1200];
    snprintf(url, sizeof url, "sqlite:%s/warm%d.db", dir, (*k)++);
    tt_store *s = NULL;
    tt_errinfo e;
    if (tt_store_open(url, &s, &e) != TT_OK) { fprintf(stderr, "open: %s\n", e.msg); exit(1); }
    tt_runner *r = start_runner(url, cat, dsdir, batch);
    if (!r) exit(1);
    double v[64], c[64];
    for (int i = 0; i < runs; i++) {
        char name[64];
        snprintf(name, sizeof name, "convolution_w%s%d", strategy, i);
        json_t *copy = json_deep_copy(doc);
        double cpu0 = cpu_now();
        const tt_template *t = NULL;
        tt_job j;
        if (!copy || json_object_set_new(copy, "name", json_string(name)) ||
            tt_catalog_put(cat, s, NULL, copy, &t, &e) != TT_OK ||
            make_job(s, name, t, strategy, budget, &j) ||
            wait_job(s, j.id, strategy, budget, cpu0, last))
            exit(1);
        json_decref(copy);
        v[i] = last->secs;
        c[i] = last->cpu;
    }
    tt_runner_stop(r);
    tt_store_close(s);
    *cpu = median_of(c, runs);
    return median_of(v, runs);
}

/* One row of the table: speed-up against one (0: this is the baseline); "same trials" when
 * ref is given (x and ref: first/last config and best equal). */
static void print_row(const char *st, const char *label, double secs, double cpu,
                      int64_t budget, double one, const run_out *ref, const run_out *x)
{
    char up[16] = "1.0x", same[8] = "";
    if (one > 0) snprintf(up, sizeof up, "%.1fx", one / secs);
    else if (ref || x) snprintf(up, sizeof up, "-");
    if (ref && x)
        snprintf(same, sizeof same, "%s", !strcmp(ref->first, x->first) &&
                 !strcmp(ref->last, x->last) && ref->best_us == x->best_us ? "yes" : "NO");
    else if (x)
        snprintf(same, sizeof same, "-");
    printf("%-10s | %-22s | %10.1f | %8.1f | %11.1f | %8s | %14.0fx | %s\n", st, label,
           secs * 1e3, cpu * 1e3, secs * 1e6 / (double)budget, up, TT_KT_GA_S / secs, same);
}

int main(int argc, char **argv)
{
    int runs = 5, group_only = 0, keep = 0;
    int64_t budget = 800, batch = 0;
    const char *dsdir = TT_DEFAULT_DATASETS_DIR, *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--datasets") && i + 1 < argc) dsdir = argv[++i];
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) batch = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--group-only")) group_only = 1;
        else if (!strcmp(argv[i], "--keep")) keep = 1;
        else if (!strcmp(argv[i], "--strategy") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--runs N] [--budget N] [--datasets DIR] [--batch N] "
                    "[--group-only] [--keep] [--strategy random|evolution]\n", argv[0]);
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
    const tt_template *conv = NULL;
    tt_runner_config check = {.datasets_dir = dsdir};
    if (tt_catalog_template(cat, NULL, "convolution", NULL, &conv, &e) != TT_OK ||
        tt_runner_check_backend(&check, conv, "replay:convolution_A100", g_fp, &e) != TT_OK) {
        fprintf(stderr, "replay:convolution_A100: %s\n", e.msg);
        return 1;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/bench_job.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    printf("whole %lld-trial replay:convolution_A100 run (recorded GPU data, 4362 configs), SQLite "
           "WAL, median of %d runs\n", (long long)budget, runs);
    printf("%-10s | %-22s | %10s | %8s | %11s | %8s | %15s | same trials\n", "strategy",
           "commit", "run ms", "cpu ms", "us / trial", "speed-up", "vs KT GA 0.3 s");
    static const char *const strategies[] = {"random", "evolution"};
    int k = 0;
    for (size_t si = 0; si < 2; si++) {
        const char *st = strategies[si];
        if (only && strcmp(only, st)) continue;
        run_out a, b, w;
        memset(&a, 0, sizeof a);
        double one = 0, one_cpu = 0, grp_cpu, warm_cpu;
        if (!group_only) one = median_run(dir, &k, cat, dsdir, st, budget, 1, runs, &a, &one_cpu);
        double grp = median_run(dir, &k, cat, dsdir, st, budget, batch, runs, &b, &grp_cpu);
        double warm = median_warm(dir, &k, cat, doc, dsdir, st, budget, batch, runs, &w,
                                  &warm_cpu);
        char label[48];
        snprintf(label, sizeof label, "group (batch %lld)",
                 (long long)(batch > 0 ? batch : TT_RUNNER_BATCH_TRIALS));
        if (!group_only) print_row(st, "one per trial", one, one_cpu, budget, 0, NULL, NULL);
        print_row(st, label, grp, grp_cpu, budget, one, group_only ? NULL : &a, &b);
        print_row(st, "group, warm daemon", warm, warm_cpu, budget, one, &b, &w);
    }
    json_decref(doc);
    if (keep) {
        printf("databases kept in %s (run0.db ...)\n", dir);
        k = 0;
    }
    for (int i = 0; i < k; i++) {
        char p[1200];
        static const char *const sfx[] = {"", "-wal", "-shm"};
        for (int x = 0; x < 6; x++) {
            snprintf(p, sizeof p, "%s/%s%d.db%s", dir, x < 3 ? "run" : "warm", i, sfx[x % 3]);
            unlink(p);
        }
    }
    if (!keep) rmdir(dir);
    tt_catalog_free(cat);
    return 0;
}

/* SPDX-License-Identifier: MIT
 * bench_strategies.c - the autotuning-methodology score of every strategy on the recorded
 * GPU tuning spaces (../shared/datasets: convolution on A100 and MI250X) at three budgets:
 * 40, the budget where random search gets 95 % of the way to the optimum (B95), and B95/2,
 * per space and aggregated over the spaces as the methodology reports a strategy's score;
 * and the CPU time of a strategy run (an 800-trial bo run among them).
 *
 *   bench_strategies [--seeds N (default 50)] [--seed-base N] [--datasets DIR]
 *                    [--strategies a,b] [--budgets a,b,c] [--terms]
 *                    [--space T1FILE DATASET[,DATASET...]]
 *
 * --space scores another recorded space: its T1 search-space file (the template, as
 * `tlctl import` makes it) and one or more recordings of it (Kernel Tuner cache or T4, plain
 * or gzip), instead of ../shared/datasets' convolution files.
 *
 * Objective: each config's recorded objective (Kernel Tuner cache `time`, the mean of its
 * runtimes; T4 `measurements` "time"), as replay uses by default.  Every trial counts as a
 * function evaluation (failed ones too).  Two scores (docs/strategies.md "Measured"):
 *
 * score: the autotuning-methodology performance score (Willemsen et al., FGCS 2024; the
 *   package autotuning_methodology, x-axis in function evaluations).  dist = the sorted
 *   values of the N valid configs (failed configs are left out of it, as there).
 *     base(b)   random search without replacement, calculated: the value of expected rank
 *               (N+1)/(b+1) from the best, i.e. dist_desc[min(N-1, round(b(N+1)/(b+1)))];
 *     curve(b)  dist[round(median over seeds s of rank(f_s(b)))], f_s(b) the best found by
 *               the strategy within its first b trials (run with budget B, seed s), rank its
 *               position in dist (no valid config yet: the worst rank);
 *     score(B) = mean over b = b_start..B of (curve(b) - base(b)) / (f_opt - base(b)),
 *               b_start the cutoff of 1 % (cutoff_percentile_start 0.01): 0 = random
 *               search, 1 = the optimum from the start.
 *   B95 (cutoff_percentile 0.95): ceil(i / (N + 1 - i)), i the first position in dist_desc
 *   with a value <= f_opt + 0.05 (f_median - f_opt).  Budgets: 40, B95/2, B95.
 * --terms prints, for every b of every score, the median rank over seeds, its value, base(b)
 * and the term (where a score is won or lost).
 * mean-score: the stricter variant of earlier versions of this bench: the same ratio with the
 *   exact expected best of random search E_rand(b) for base(b) and each seed's own value
 *   f_s(b) for curve(b), averaged over seeds and b = 1..B (means, so a few bad seeds and
 *   the slow tail of a space weigh in fully).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_objective.h"
#include "dataset.h"
#include "space.h"
#include "strategy.h"
#include "t1.h"
#include "template.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* E_rand(b) for b = 1..B from the sorted values v[0..N). */
static void random_curve(const double *v, size_t N, size_t B, double *out)
{
    for (size_t b = 1; b <= B; b++) {
        if (b >= N) {
            out[b - 1] = v[0];
            continue;
        }
        double acc = 0;
        double lcnb = lgamma((double)N + 1) - lgamma((double)b + 1) - lgamma((double)(N - b) + 1);
        for (size_t i = 1; i + b - 1 <= N; i++) {
            double n1 = (double)(N - i), k1 = (double)(b - 1);
            acc += v[i - 1] * exp(lgamma(n1 + 1) - lgamma(k1 + 1) - lgamma(n1 - k1 + 1) - lcnb);
        }
        out[b - 1] = acc;
    }
}

/* One run: curve[b] = best after b+1 trials; returns the CPU seconds of the strategy calls
 * (the objective lookups are included: a binary search each). */
static double run(const char *name, const tt_template *t, tt_space *sp, uint64_t seed,
                  int64_t budget, const tt_bobj *o, double *curve, const char **ran)
{
    int64_t prob[1] = {0};
    tt_strategy_config c = {.name = name, .t = t, .space = sp, .problem = prob, .seed = seed,
                            .budget = budget};
    tt_errinfo e;
    double t0 = cpu_s();
    if (tt_bobj_run(&c, o, curve, ran, &e) < 0) {
        fprintf(stderr, "strategy %s: %s\n", name, e.msg);
        exit(1);
    }
    return cpu_s() - t0;
}

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!c) break;
        p = c + 1;
    }
    return 0;
}

static int load_space(const tt_template *t, tt_space *sp, const char *path, tt_bobj *o)
{
    tt_dataset *ds = NULL;
    tt_errinfo e;
    if (tt_dataset_load_file(path, &ds, &e) != TT_OK) {
        printf("%s: skipped (%s)\n", path, e.msg);
        return -1;
    }
    int map[TT_MAX_SLOTS];
    for (size_t p = 0; p < t->nparams; p++)
        if ((map[p] = tt_dataset_param(ds, t->params[p].name)) < 0) {
            printf("%s: skipped (the recording has no param %s)\n", path, t->params[p].name);
            tt_dataset_free(ds);
            return -1;
        }
    uint64_t total = tt_space_total(sp);
    o->idx = malloc(total * sizeof *o->idx);
    o->us = malloc(total * sizeof *o->us);
    o->n = 0;
    o->best = INFINITY;
    o->worst = 0;
    int64_t slots[TT_MAX_SLOTS], vals[TT_DATASET_MAX_PARAMS];
    for (uint64_t i = 0; i < total; i++) {
        tt_space_decode(sp, i, slots);
        if (tt_space_check(sp, slots, NULL) != TT_OK) continue;
        for (size_t p = 0; p < t->nparams; p++) vals[map[p]] = slots[t->ninputs + p];
        const tt_ds_record *r = tt_dataset_find(ds, vals);
        double us = r && r->status == TT_DS_OK && isfinite(r->value_us) ? r->value_us : INFINITY;
        o->idx[o->n] = i;
        o->us[o->n++] = us;
        if (us < o->best) o->best = us;
        if (isfinite(us) && us > o->worst) o->worst = us;
    }
    double *ok = malloc(o->n * sizeof *ok);
    size_t m = 0;
    for (size_t i = 0; i < o->n; i++)
        if (isfinite(o->us[i])) ok[m++] = o->us[i];
    qsort(ok, m, sizeof *ok, cmp_d);
    o->median = m ? ok[m / 2] : 0;
    free(ok);
    printf("\n%s: %zu feasible configs, %zu measured, optimum %.2f us (recorded objective), "
           "median %.2f us, device %s\n", path, o->n, m, o->best, o->median,
           ds->device ? ds->device : "?");
    tt_dataset_free(ds);
    return 0;
}

/* ---- the autotuning-methodology score (see the header) ------------------------------ */
typedef struct meth {
    double *dist;    /* the valid values, ascending */
    size_t n;
    double median;
} meth;

static void meth_init(meth *m, const tt_bobj *o)
{
    m->dist = malloc((o->n ? o->n : 1) * sizeof *m->dist);
    m->n = 0;
    for (size_t i = 0; i < o->n; i++)
        if (isfinite(o->us[i])) m->dist[m->n++] = o->us[i];
    qsort(m->dist, m->n, sizeof *m->dist, cmp_d);
    /* numpy.median: the mean of the two middle values for an even count */
    m->median = m->n % 2 ? m->dist[m->n / 2]
                         : 0.5 * (m->dist[m->n / 2 - 1] + m->dist[m->n / 2]);
}

static void meth_free(meth *m) { free(m->dist); }

/* Random search's calculated best after b evaluations (the "red-white" expected rank). */
static double meth_base(const meth *m, size_t b)
{
    size_t N = m->n;
    size_t idx = (size_t)llround((double)b * (double)(N + 1) / (double)(b + 1));
    if (idx > N - 1) idx = N - 1;
    return m->dist[N - 1 - idx];   /* dist_desc[idx] */
}

/* Evaluations random search needs to come `pct` of the way from the median to the optimum. */
static size_t meth_cutoff(const meth *m, double pct)
{
    size_t N = m->n;
    double target = m->dist[0] + (m->median - m->dist[0]) * (1 - pct);
    size_t i = 0;
    while (i < N && m->dist[N - 1 - i] > target) i++;
    size_t d = N + 1 - i, f = (i + d - 1) / d;       /* ceil(i / (N + 1 - i)) */
    return f < 1 ? 1 : f;
}

/* Position of v in dist (searchsorted left); failures and "nothing valid yet": N - 1. */
static size_t meth_rank(const meth *m, double v)
{
    if (!isfinite(v)) return m->n - 1;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->dist[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->n ? lo : m->n - 1;
}

static int cmp_z(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* score(B) from the seeds' best-so-far curves (curves[s * B + b], b = 0..B-1). */
static double meth_score(const meth *m, const double *curves, size_t seeds, size_t B,
                         size_t bstart, const char *terms)
{
    size_t *r = malloc(seeds * sizeof *r);
    double acc = 0;
    size_t cnt = 0;
    if (bstart < 1) bstart = 1;
    for (size_t b = bstart; b <= B; b++) {
        for (size_t s = 0; s < seeds; s++) r[s] = meth_rank(m, curves[s * B + b - 1]);
        qsort(r, seeds, sizeof *r, cmp_z);
        double med = seeds % 2 ? (double)r[seeds / 2]
                               : 0.5 * ((double)r[seeds / 2 - 1] + (double)r[seeds / 2]);
        double curve = m->dist[(size_t)nearbyint(med)];   /* numpy round: half to even */
        double base = meth_base(m, b);
        double term = base > m->dist[0] ? (curve - base) / (m->dist[0] - base) : (curve <= base);
        acc += term;
        if (terms)   /* --terms: where the score is won or lost */
            printf("  %s B=%zu b=%zu median-rank %.1f best %.2f base %.2f term %.3f\n", terms, B, b,
                   med, curve, base, term);
        cnt++;
    }
    free(r);
    return cnt ? acc / (double)cnt : 0;
}

/* "auto" is the default rule (no kernel program here: bo up to 1500 trials); the model
 * strategies run their fallback (bo) on this template and are left out */
static const char *const names[] = {"random", "evolution", "anneal", "bo", "auto"};
enum { NS = sizeof names / sizeof names[0] };

typedef struct bench_opts {
    int seeds;
    uint64_t seed_base;
    const char *only, *budgets_arg;
    int show_terms;
} bench_opts;

/* One strategy at the three budgets of one space: its table line; score[bi] filled. */
static void bench_strategy(const bench_opts *bo, int k, const tt_template *t, tt_space *sp,
                           const tt_bobj *o, const meth *m, const double *er, size_t bmax,
                           const size_t *budgets, size_t bstart, double *curves, double *score)
{
    const char *ran = names[k];
    char line[512], runs[64] = "";
    int len = 0;
    for (int bi = 0; bi < 3; bi++) {
        size_t B = budgets[bi] < bmax ? budgets[bi] : bmax;
        double mscore = 0, fin = 0, cpu = 0;
        for (int s = 0; s < bo->seeds; s++) {
            double *curve = curves + (size_t)s * B;
            cpu += run(names[k], t, sp, bo->seed_base + (uint64_t)s, (int64_t)B, o, curve, &ran);
            for (size_t b = 0; b < B; b++) {
                double den = er[b] - o->best;
                mscore += den > 0 ? (er[b] - curve[b]) / den : 1;
            }
            fin += curve[B - 1];
        }
        score[bi] = meth_score(m, curves, (size_t)bo->seeds, B, bstart,
                               bo->show_terms ? names[k] : NULL);
        if (!strstr(runs, ran))   /* what the name resolved to, per budget if it differs */
            snprintf(runs + strlen(runs), sizeof runs - strlen(runs), "%s%s",
                     runs[0] ? "/" : "", ran);
        len += snprintf(line + len, sizeof line - (size_t)len, " | %10.3f %10.3f %9.2f %7.2f",
                        score[bi], mscore / ((double)bo->seeds * (double)B), fin / bo->seeds,
                        1e3 * cpu / bo->seeds);
    }
    printf("%-10s %-14s%s\n", names[k], runs, line);
    fflush(stdout);
}

/* Every strategy on the space recorded in `path`: its table, scores[k * 3 + bi] filled (NAN
 * for a strategy left out).  0, or -1 when the space cannot be loaded. */
static int bench_space(const bench_opts *bo, const tt_template *t, tt_space *sp,
                       const char *path, double *scores)
{
    tt_bobj o;
    if (load_space(t, sp, path, &o) != 0) return -1;
    double *sorted = malloc(o.n * sizeof *sorted);
    for (size_t i = 0; i < o.n; i++) sorted[i] = isfinite(o.us[i]) ? o.us[i] : o.worst;
    qsort(sorted, o.n, sizeof *sorted, cmp_d);
    size_t bmax = o.n < 2000 ? o.n : 2000;
    double *er = malloc(bmax * sizeof *er);
    random_curve(sorted, o.n, bmax, er);
    meth m;
    meth_init(&m, &o);
    size_t b95 = meth_cutoff(&m, 0.95), bstart = meth_cutoff(&m, 0.01);
    if (b95 > bmax) b95 = bmax;
    size_t budgets[3] = {40, b95 / 2, b95};
    if (bo->budgets_arg) sscanf(bo->budgets_arg, "%zu,%zu,%zu", &budgets[0], &budgets[1], &budgets[2]);
    printf("B95 = %zu trials (random search's expected-rank best %.2f us), start of the "
           "score range %zu; budgets %zu, %zu, %zu\n", b95, meth_base(&m, b95), bstart,
           budgets[0], budgets[1], budgets[2]);
    printf("%-10s %-14s", "strategy", "runs");
    for (int k = 0; k < 3; k++)
        printf(" | score@%-4zu mean-score best@%-4zu ms/run", budgets[k], budgets[k]);
    printf("\n");
    double *curves = malloc((size_t)bo->seeds * bmax * sizeof *curves);
    for (int k = 0; k < NS; k++) {
        for (int bi = 0; bi < 3; bi++) scores[k * 3 + bi] = NAN;
        if (!bo->only || in_list(bo->only, names[k]))
            bench_strategy(bo, k, t, sp, &o, &m, er, bmax, budgets, bstart, curves,
                           scores + k * 3);
    }
    printf("%-10s %-14s", "random(b)", "-");
    for (int k = 0; k < 3; k++) {
        size_t B = budgets[k] < bmax ? budgets[k] : bmax;
        printf(" | %10.3f %10.3f %9.2f %7s", 0.0, 0.0, er[B - 1], "");
    }
    printf("   (best@: E_rand, the exact mean)\n");
    if (!bo->only || in_list(bo->only, "bo")) {   /* the cost of a long BO run */
        double *c800 = malloc(800 * sizeof *c800);
        double s800 = run("bo", t, sp, bo->seed_base, 800, &o, c800, NULL);
        printf("bo, one 800-trial run (seed %llu): %.3f s CPU, best %.2f us (optimum %.2f)\n",
               (unsigned long long)bo->seed_base, s800, c800[799], o.best);
        free(c800);
    }
    free(curves);
    free(er);
    meth_free(&m);
    free(sorted);
    free(o.idx);
    free(o.us);
    return 0;
}

/* The methodology's aggregate (autotuning_methodology's get_strategy_scores): the mean over
 * the spaces of each strategy's standardised curve, so per budget class (40, B95/2, B95 of
 * each space) the mean of the per-space scores.  scores[f * NS * 3 + k * 3 + bi]. */
static void print_aggregate(const bench_opts *bo, const double *scores, size_t nspaces)
{
    printf("\naggregate over the %zu spaces (the methodology's score of a strategy: the mean "
           "of its per-space scores at each budget class)\n", nspaces);
    printf("%-10s | %-10s | %-10s | %-10s\n", "strategy", bo->budgets_arg ? "budget 1" : "40",
           bo->budgets_arg ? "budget 2" : "B95/2", bo->budgets_arg ? "budget 3" : "B95");
    for (int k = 0; k < NS; k++) {
        if (bo->only && !in_list(bo->only, names[k])) continue;
        printf("%-10s", names[k]);
        for (int bi = 0; bi < 3; bi++) {
            double acc = 0;
            for (size_t f = 0; f < nspaces; f++) acc += scores[(f * NS + (size_t)k) * 3 + (size_t)bi];
            printf(" | %10.3f", acc / (double)nspaces);
        }
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    bench_opts bo = {50, 1, NULL, NULL, 0};
    const char *dsdir = TT_DEFAULT_DATASETS_DIR, *space_t1 = NULL, *space_files = NULL;
    for (int i = 1; i < argc; i++) {
        int v = i + 1 < argc;
        if (!strcmp(argv[i], "--seeds") && v) bo.seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed-base") && v) bo.seed_base = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--datasets") && v) dsdir = argv[++i];
        else if (!strcmp(argv[i], "--strategies") && v) bo.only = argv[++i];
        else if (!strcmp(argv[i], "--budgets") && v) bo.budgets_arg = argv[++i];
        else if (!strcmp(argv[i], "--terms")) bo.show_terms = 1;
        else if (!strcmp(argv[i], "--space") && v && i + 2 < argc) {
            space_t1 = argv[++i];
            space_files = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--seeds N] [--seed-base N] [--datasets DIR] "
                    "[--strategies a,b] [--budgets a,b,c] [--terms] "
                    "[--space T1FILE DATASET[,DATASET...]]\n", argv[0]);
            return 2;
        }
    }
    if (bo.seeds < 1) return 2;
    char path[1024];
    if (space_t1) snprintf(path, sizeof path, "%s", space_t1);
    else snprintf(path, sizeof path, "%.900s/convolution.t1.json", dsdir);
    json_t *tdoc = NULL;
    tt_errinfo e;
    tt_template *t = NULL;
    if (tt_t1_file_to_template(path, space_t1 ? NULL : "convolution", &tdoc, &e) != TT_OK ||
        tt_tmpl_parse_json(tdoc, NULL, &t, &e) != TT_OK) {
        printf("skipped: %s: %s: %s\n", path, e.path, e.msg);
        return space_t1 ? 1 : 0;
    }
    json_decref(tdoc);
    int64_t prob[1] = {0};
    tt_space *sp = NULL;
    if (tt_space_new(t, prob, NULL, &sp, &e) != TT_OK) return 1;
    const char *files[16] = {"convolution_A100.kt-cache.json.gz", "convolution_MI250X.t4.json.gz"};
    size_t nfiles = 2, nspaces = 0;
    char *flist = space_files ? strdup(space_files) : NULL;
    if (flist) {
        nfiles = 0;
        for (char *tok = strtok(flist, ","); tok && nfiles < 16; tok = strtok(NULL, ","))
            files[nfiles++] = tok;
    }
    printf("== autotuning-methodology score on recorded GPU spaces (%d seeds from %llu) ==\n",
           bo.seeds, (unsigned long long)bo.seed_base);
    printf("score: autotuning-methodology performance score over function evaluations (median "
           "rank over seeds vs random search's calculated curve, b = start..B); mean-score: "
           "mean over seeds and b = 1..B of (E_rand(b) - f(b)) / (E_rand(b) - f_opt); "
           "strategies run with budget B\n");
    double *scores = malloc(nfiles * NS * 3 * sizeof *scores);
    for (size_t fi = 0; scores && fi < nfiles; fi++) {
        if (flist) snprintf(path, sizeof path, "%s", files[fi]);
        else snprintf(path, sizeof path, "%.900s/%s", dsdir, files[fi]);
        if (!bench_space(&bo, t, sp, path, scores + nspaces * NS * 3)) nspaces++;
    }
    if (nspaces > 1) print_aggregate(&bo, scores, nspaces);
    free(scores);
    tt_space_free(sp);
    tt_tmpl_free(t);
    free(flist);
    return 0;
}

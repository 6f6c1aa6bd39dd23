/* SPDX-License-Identifier: MIT
 * bench_tuning.c - tuning quality of the strategies: (1) on the `sim` backend (a model of
 * the chip, not the chip) for GEMM shapes against the exhaustively simulated best of the
 * space, (2) on the recorded replay datasets (real GPU measurements) as best-found-vs-trials
 * curves and the autotuning-methodology score against random search.
 *
 *   bench_tuning                 short run: GEMM sub-space, 10 shapes, 10 seeds; replay, 200
 *                                seeds (the replay score is noisy: 10 seeds move it by +-0.3)
 *   bench_tuning --full          the whole GEMM space (slow: every feasible config simulated)
 *   options: --shapes N --seeds N (both parts) --replay-seeds N --budget N (sim part)
 *            --replay-budget N --no-sim --no-replay --target NAME --datasets DIR
 *            --curve (print the replay curves) --cache DIR (keep the exhaustive simulations
 *            between runs) --strategies a,b (replay part: only these) --seed-base N (replay
 *            seeds are N..N+seeds-1, default 1: check a change on seeds it was not tuned on)
 *   bench_tuning --library [fam,..]   the kernel library instead (issue 11): for every shape
 *            of tests/data/library/shapes.txt, the exhaustive simulated optimum and the trials
 *            model-refine needs to come within 3 % of it (--library-budget N, default 64)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_objective.h"
#include "dataset.h"
#include "model.h"
#include "sim.h"
#include "space.h"
#include "strategy.h"
#include "t1.h"
#include "target.h"
#include "template.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run strategy `name` with objective o; curve[b] = best-so-far after b+1 trials (failures
 * count as trials; before the first success the curve holds o->worst).  Returns trials. */
static size_t run_strategy(const char *name, const tt_template *t, tt_space *sp,
                           const int64_t *problem, const tt_model *m, const tt_target *tgt,
                           uint64_t seed, int64_t budget, const tt_bobj *o, double *curve)
{
    tt_strategy_config c = {.name = name, .t = t, .tgt = tgt, .space = sp, .model = m,
                            .problem = problem, .seed = seed, .budget = budget};
    tt_errinfo e;
    long n = tt_bobj_run(&c, o, curve, NULL, &e);
    if (n < 0) {
        fprintf(stderr, "strategy %s: %s\n", name, e.msg);
        exit(1);
    }
    return (size_t)n;
}

/* ---- part 1: sim ---------------------------------------------------------------------- */
static const char *const shapes[] = {
    "M=4096,N=4096,K=4096", "M=1024,N=1024,K=1024", "M=2048,N=8192,K=1024",
    "M=8192,N=2048,K=4096", "M=512,N=4096,K=8192",  "M=128,N=12288,K=4096",
    "M=3000,N=5000,K=2000", "M=16384,N=1024,K=512", "M=256,N=256,K=16384",
    "M=1536,N=1536,K=6144",
};

typedef struct sim_ctx {
    const tt_template *t;
    const tt_target *tgt;
    tt_space *sp;
    tt_bobj *o;
    size_t cap;
    int64_t sims;
} sim_ctx;

static int sim_visit(void *ud, const int64_t *slots)
{
    sim_ctx *c = ud;
    int64_t s[TT_MAX_SLOTS];
    memcpy(s, slots, c->t->nslots * sizeof(int64_t));
    tt_sim_opts opts = {.trace_core = -1};
    tt_sim_result r;
    memset(&r, 0, sizeof r);
    double us = tt_sim_run(c->t, c->tgt, s, &opts, &r) == TT_OK ? r.time_us : INFINITY;
    tt_sim_result_close(&r);
    c->sims++;
    if (c->o->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 4096;
        c->o->idx = realloc(c->o->idx, c->cap * sizeof *c->o->idx);
        c->o->us = realloc(c->o->us, c->cap * sizeof *c->o->us);
        if (!c->o->idx || !c->o->us) return 1;
    }
    c->o->idx[c->o->n] = tt_space_encode(c->sp, slots);
    c->o->us[c->o->n++] = us;
    if (us < c->o->best) c->o->best = us;
    if (isfinite(us) && us > c->o->worst) c->o->worst = us;
    return 0;
}

/* --cache DIR: the exhaustive simulation of a shape is saved and re-read (for iterating on
 * strategies; the simulator must not change in between). */
static const char *cache_dir;
static uint64_t seed_base = 1;   /* --seed-base: seeds are seed_base .. seed_base + N - 1 */

static int obj_load(const char *path, tt_bobj *o)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = 0;
    int ok = fread(&n, sizeof n, 1, f) == 1 && n > 0 && n < ((size_t)1 << 32);
    if (ok) {
        o->idx = malloc(n * sizeof *o->idx);
        o->us = malloc(n * sizeof *o->us);
        ok = o->idx && o->us && fread(o->idx, sizeof *o->idx, n, f) == n &&
             fread(o->us, sizeof *o->us, n, f) == n;
    }
    fclose(f);
    if (!ok) {
        free(o->idx);
        free(o->us);
        o->idx = NULL;
        o->us = NULL;
        return 0;
    }
    o->n = n;
    for (size_t i = 0; i < n; i++) {
        if (o->us[i] < o->best) o->best = o->us[i];
        if (isfinite(o->us[i]) && o->us[i] > o->worst) o->worst = o->us[i];
    }
    return 1;
}

static void obj_save(const char *path, const tt_bobj *o)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(&o->n, sizeof o->n, 1, f);
    fwrite(o->idx, sizeof *o->idx, o->n, f);
    fwrite(o->us, sizeof *o->us, o->n, f);
    fclose(f);
}

/* The documented sub-space of the short run (the same for every strategy). */
static void restrict_gemm(json_t *doc)
{
    json_t *p = json_object_get(doc, "params");
    json_object_set_new(p, "block_M", json_pack("[i,i,i,i,i,i,i]", 32, 64, 96, 128, 160, 192, 256));
    json_object_set_new(p, "block_N", json_pack("[i,i,i,i,i,i,i]", 32, 64, 96, 128, 160, 192, 256));
    json_object_set_new(p, "block_K", json_pack("[i,i,i]", 32, 64, 128));
    json_object_set_new(p, "K_L1", json_pack("[i,i,i,i]", 64, 128, 256, 512));
    json_object_set_new(p, "S1", json_pack("[i,i,i]", 1, 2, 3));
}

static void part_sim(const char *src, const char *tgtdir, const char *tname, int full,
                     int nshapes, int seeds, int64_t budget)
{
    char path[1024];
    snprintf(path, sizeof path, "%.900s/templates/gemm.json", src);
    json_t *doc = json_load_file(path, 0, NULL);
    if (!doc) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    if (!full) restrict_gemm(doc);
    tt_template *t = NULL;
    tt_targets *ts = NULL;
    tt_errinfo e;
    if (tt_tmpl_parse_json(doc, NULL, &t, &e) != TT_OK) {
        fprintf(stderr, "gemm: %s: %s\n", e.path, e.msg);
        exit(1);
    }
    json_decref(doc);
    if (tt_targets_load_dir(tgtdir, &ts, &e) != TT_OK) {
        fprintf(stderr, "targets: %s\n", e.msg);
        exit(1);
    }
    const tt_target *tgt = tt_targets_find(ts, tname);
    if (!tgt) { fprintf(stderr, "no target %s\n", tname); exit(1); }
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    printf("== tuning quality on `sim` (the pipeline simulator: a model of the chip, not the "
           "chip) ==\n");
    printf("template gemm (%s), target %s, budget %lld trials, random over %d seeds\n",
           full ? "whole space" : "sub-space: block_M,N in {32,64,96,128,160,192,256}, "
           "block_K in {32,64,128}, K_L1 in {64..512}, S1 in {1,2,3}, S2 in {1,2}",
           tgt->name, (long long)budget, seeds);
    printf("%-24s %8s %10s | %12s %6s %7s | %8s %8s %8s %8s %8s %8s\n", "shape (fp16)",
           "feasible", "opt us", "model-refine", "trials", "gap %", "topk %", "random %",
           "evol %", "anneal %", "mbo %", "bo %");
    static const char *const others[] = {"model-topk", "random", "evolution", "anneal",
                                         "model-bo", "bo"};
    enum { NO = sizeof others / sizeof others[0] };
    double sum_gap = 0, sum_other[NO] = {0}, worst_gap = 0;
    int within = 0;
    double *curve = malloc((size_t)budget * sizeof *curve);
    double t0 = now_s();
    int64_t total_sims = 0;
    for (int si = 0; si < nshapes && si < (int)(sizeof shapes / sizeof shapes[0]); si++) {
        char kv[128];
        snprintf(kv, sizeof kv, "%s,dtype=float16,out_dtype=float16", shapes[si]);
        int64_t prob[TT_MAX_SLOTS];
        if (tt_tmpl_problem_parse(t, kv, prob, &e) != TT_OK) {
            fprintf(stderr, "%s: %s\n", kv, e.msg);
            exit(1);
        }
        tt_space *sp = NULL;
        tt_model *m = NULL;
        if (tt_space_new(t, prob, &caps, &sp, &e) != TT_OK ||
            tt_model_new(t, tgt, prob, NULL, &m, &e) != TT_OK) {
            fprintf(stderr, "%s: %s\n", kv, e.msg);
            exit(1);
        }
        tt_bobj o = {.best = INFINITY, .worst = 0};
        sim_ctx c = {.t = t, .tgt = tgt, .sp = sp, .o = &o};
        char cpath[1200] = "";
        if (cache_dir)
            snprintf(cpath, sizeof cpath, "%.900s/bt-%s-%s-%s.bin", cache_dir, tgt->name,
                     full ? "full" : "sub", shapes[si]);
        if (!cpath[0] || !obj_load(cpath, &o)) {
            tt_space_enumerate(sp, sim_visit, &c, 0, NULL);   /* ascending index order */
            if (cpath[0]) obj_save(cpath, &o);
        }
        total_sims += c.sims;
        size_t n = run_strategy("model-refine", t, sp, prob, m, tgt, 1, budget, &o, curve);
        double got = curve[n ? n - 1 : 0];
        double gap = 100.0 * (got / o.best - 1);
        sum_gap += gap;
        within += gap <= 3.0;
        if (gap > worst_gap) worst_gap = gap;
        double og[NO];
        for (int k = 0; k < NO; k++) {
            int ns = (k == 0) ? 1 : seeds;   /* model-topk ignores the seed */
            double acc = 0;
            for (int s = 0; s < ns; s++) {
                size_t nn = run_strategy(others[k], t, sp, prob, m, tgt, (uint64_t)s + 1,
                                         budget, &o, curve);
                acc += 100.0 * (curve[nn ? nn - 1 : 0] / o.best - 1);
            }
            og[k] = acc / ns;
            sum_other[k] += og[k];
        }
        printf("%-24s %8zu %10.2f | %12.2f %6zu %7.2f | %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n",
               shapes[si], o.n, o.best, got, n, gap, og[0], og[1], og[2], og[3], og[4], og[5]);
        fflush(stdout);
        free(o.idx);
        free(o.us);
        tt_model_free(m);
        tt_space_free(sp);
    }
    int ns = nshapes < (int)(sizeof shapes / sizeof shapes[0]) ? nshapes
                                                               : (int)(sizeof shapes / sizeof shapes[0]);
    printf("%-24s %8s %10s | %12s %6s %7.2f | %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n",
           "mean gap to opt %", "", "", "", "", sum_gap / ns, sum_other[0] / ns,
           sum_other[1] / ns, sum_other[2] / ns, sum_other[3] / ns, sum_other[4] / ns,
           sum_other[5] / ns);
    printf("model-refine within 3 %% of the simulated optimum: %d of %d shapes (worst %.2f %%)\n",
           within, ns, worst_gap);
    printf("(%lld configs simulated exhaustively in %.1f s)\n\n", (long long)total_sims,
           now_s() - t0);
    free(curve);
    tt_targets_free(ts);
    tt_tmpl_free(t);
}

static int in_list(const char *list, const char *name);

/* ---- part 3: the kernel library (issue 11) ------------------------------------------ */
/* For every (family, shape) of tests/data/library/shapes.txt: the exhaustive simulated
 * optimum over the whole feasible space, and the trials model-refine needs until its best is
 * within 3 % of it (the first trial whose best-so-far is <= 1.03 x optimum). */
static int trials_to(const double *curve, size_t n, double target)
{
    for (size_t i = 0; i < n; i++)
        if (curve[i] <= target) return (int)i + 1;
    return -1;
}

typedef struct lib_row {
    char fam[64];
    int shapes, worst, over;     /* over: shapes never within 3 % in the budget */
    double sum_trials, worst_gap32;
    int64_t sims;
} lib_row;

static void lib_shape(const tt_template *t, const tt_target *tgt, const char *problem,
                      int64_t budget, double *curve, lib_row *row)
{
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    int64_t prob[TT_MAX_SLOTS];
    tt_errinfo e;
    tt_space *sp = NULL;
    tt_model *m = NULL;
    if (tt_tmpl_problem_parse(t, problem, prob, &e) != TT_OK || tt_space_new(t, prob, &caps, &sp, &e) != TT_OK ||
        tt_model_new(t, tgt, prob, NULL, &m, &e) != TT_OK) {
        fprintf(stderr, "%s %s: %s\n", t->name, problem, e.msg);
        exit(1);
    }
    tt_bobj o = {.best = INFINITY, .worst = 0};
    sim_ctx c = {.t = t, .tgt = tgt, .sp = sp, .o = &o};
    char cpath[1400] = "";
    if (cache_dir)
        snprintf(cpath, sizeof cpath, "%.900s/lib-%s-%s-%.300s.bin", cache_dir, tgt->name, t->name, problem);
    if (!cpath[0] || !obj_load(cpath, &o)) {
        tt_space_enumerate(sp, sim_visit, &c, 0, NULL);
        if (cpath[0]) obj_save(cpath, &o);
    }
    size_t n = run_strategy("model-refine", t, sp, prob, m, tgt, 1, budget, &o, curve);
    int k = trials_to(curve, n, 1.03 * o.best);
    size_t at32 = n < 32 ? n : 32;
    double gap32 = 100.0 * (curve[at32 ? at32 - 1 : 0] / o.best - 1);
    char kb[32];
    if (k > 0) snprintf(kb, sizeof kb, "%d", k);
    else snprintf(kb, sizeof kb, ">%lld", (long long)n);
    printf("  %-60.60s %8zu %10.2f %8s %8.2f\n", problem, o.n, o.best, kb, gap32);
    fflush(stdout);
    row->shapes++;
    row->sims += c.sims;
    if (k < 0) row->over++;
    else {
        row->sum_trials += k;
        if (k > row->worst) row->worst = k;
    }
    if (gap32 > row->worst_gap32) row->worst_gap32 = gap32;
    free(o.idx);
    free(o.us);
    tt_model_free(m);
    tt_space_free(sp);
}
static void part_library(const char *src, const char *tgtdir, const char *tname, const char *only,
                         int64_t budget)
{
    tt_targets *ts = NULL;
    tt_errinfo e;
    if (tt_targets_load_dir(tgtdir, &ts, &e) != TT_OK) {
        fprintf(stderr, "targets: %s\n", e.msg);
        exit(1);
    }
    const tt_target *tgt = tt_targets_find(ts, tname);
    if (!tgt) { fprintf(stderr, "no target %s\n", tname); exit(1); }
    char path[1024];
    snprintf(path, sizeof path, "%.900s/tests/data/library/shapes.txt", src);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    printf("== kernel library: tuning quality on `sim` (the pipeline simulator: a model of the "
           "chip, not the chip) ==\n");
    printf("target %s; per shape: feasible configs (all simulated), the optimum, the trials "
           "model-refine (seed 1, budget %lld) needs to come within 3 %% of it, its gap after 32 "
           "trials\n", tgt->name, (long long)budget);
    printf("  %-60s %8s %10s %8s %8s\n", "shape", "feasible", "opt us", "trials", "gap@32 %");
    lib_row rows[32];
    int nrows = 0;
    double *curve = malloc((size_t)budget * sizeof *curve);
    tt_template *t = NULL;
    char line[1024], fam[64], problem[512];
    double t0 = now_s();
    while (curve && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "%63s %511s", fam, problem) != 2) continue;
        if (only && !in_list(only, fam)) continue;
        if (!t || strcmp(t->name, fam) != 0) {
            tt_tmpl_free(t);
            snprintf(path, sizeof path, "%.900s/templates/%.60s.json", src, fam);
            if (tt_tmpl_parse_file(path, &t, &e) != TT_OK) {
                fprintf(stderr, "%s: %s: %s\n", path, e.path, e.msg);
                exit(1);
            }
            if (nrows == 32) break;
            memset(&rows[nrows], 0, sizeof rows[nrows]);
            snprintf(rows[nrows].fam, sizeof rows[nrows].fam, "%s", fam);
            nrows++;
            printf("%s\n", fam);
        }
        lib_shape(t, tgt, problem, budget, curve, &rows[nrows - 1]);
    }
    fclose(f);
    tt_tmpl_free(t);
    free(curve);
    printf("\n%-20s %6s %12s %12s %10s %10s %s\n", "family", "shapes", "max trials", "mean trials",
           "gap@32 %", "sims", "<= 32 trials");
    int pass = 0;
    for (int r = 0; r < nrows; r++) {
        const lib_row *w = &rows[r];
        int ok = w->over == 0 && w->worst <= 32;
        pass += ok;
        char mx[48];
        if (w->over) snprintf(mx, sizeof mx, ">%lld (%d)", (long long)budget, w->over);
        else snprintf(mx, sizeof mx, "%d", w->worst);
        int done = w->shapes - w->over;
        printf("%-20s %6d %12s %12.1f %10.2f %10lld %s\n", w->fam, w->shapes, mx,
               done ? w->sum_trials / done : 0.0, w->worst_gap32, (long long)w->sims, ok ? "yes" : "NO");
    }
    printf("families within 3 %% in <= 32 trials on every shape: %d of %d (%.1f s)\n\n", pass, nrows,
           now_s() - t0);
    tt_targets_free(ts);
}

/* ---- part 2: replay datasets ---------------------------------------------------------- */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Expected best of b uniform draws without replacement from the N values v (sorted, failures
 * valued as the worst success): sum_i v_i * C(N-i, b-1) / C(N, b), i = 1..N. */
static double random_expect(const double *v, size_t N, size_t b)
{
    if (b >= N) return v[0];
    double acc = 0, lcnb = lgamma((double)N + 1) - lgamma((double)b + 1) - lgamma((double)(N - b) + 1);
    for (size_t i = 1; i + b - 1 <= N; i++) {
        double n1 = (double)(N - i), k1 = (double)(b - 1);
        double l = lgamma(n1 + 1) - lgamma(k1 + 1) - lgamma(n1 - k1 + 1) - lcnb;
        acc += v[i - 1] * exp(l);
    }
    return acc;
}

/* 1 if name is an item of the comma-separated list */
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

static void part_replay(const char *src, const char *dsdir, int seeds, int64_t budget, int curves,
                        const char *only)
{
    (void)src;
    char t1path[1024];
    snprintf(t1path, sizeof t1path, "%.900s/convolution.t1.json", dsdir);
    json_t *tdoc = NULL;
    tt_errinfo e;
    if (tt_t1_file_to_template(t1path, "convolution", &tdoc, &e) != TT_OK) {
        printf("replay part skipped: %s: %s\n", t1path, e.msg);
        return;
    }
    tt_template *t = NULL;
    if (tt_tmpl_parse_json(tdoc, NULL, &t, &e) != TT_OK) {
        printf("replay part skipped: template: %s: %s\n", e.path, e.msg);
        json_decref(tdoc);
        return;
    }
    json_decref(tdoc);
    static const char *const files[] = {"convolution_A100.kt-cache.json.gz",
                                        "convolution_MI250X.t4.json.gz"};
    static const char *const strategies[] = {"random", "evolution", "anneal", "model-refine",
                                             "model-topk", "bo"};
    enum { NS = sizeof strategies / sizeof strategies[0] };
    printf("== replay datasets (recorded GPU measurements; answers are the recorded medians) ==\n");
    printf("template: T1 import of convolution.t1.json (no kernel: model-* run their "
           "fallback, anneal); budget %lld, seeds %llu..%llu\n", (long long)budget,
           (unsigned long long)seed_base, (unsigned long long)seed_base + (unsigned)seeds - 1);
    printf("score = mean over budgets 1..%lld of (f_random - f_strategy)/(f_random - f_opt), "
           "f_random the exact expectation of random search without replacement\n",
           (long long)budget);
    int64_t prob[1] = {0};
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        char path[1024];
        snprintf(path, sizeof path, "%.900s/%.100s", dsdir, files[fi]);
        tt_dataset *ds = NULL;
        if (tt_dataset_load_file(path, &ds, &e) != TT_OK) {
            printf("%s: skipped (%s)\n", files[fi], e.msg);
            continue;
        }
        tt_space *sp = NULL;
        if (tt_space_new(t, prob, NULL, &sp, &e) != TT_OK) {
            printf("%s: space: %s\n", files[fi], e.msg);
            tt_dataset_free(ds);
            continue;
        }
        /* the objective over the template's feasible configs: the recorded median, or a
         * failure (absent, invalid, compile/runtime failed) */
        int map[TT_MAX_SLOTS];
        int ok = 1;
        for (size_t p = 0; p < t->nparams; p++)
            if ((map[p] = tt_dataset_param(ds, t->params[p].name)) < 0) ok = 0;
        if (!ok || ds->nparams != t->nparams) {
            printf("%s: params differ from the T1 file, skipped\n", files[fi]);
            tt_space_free(sp);
            tt_dataset_free(ds);
            continue;
        }
        uint64_t total = tt_space_total(sp);
        tt_bobj o = {.best = INFINITY, .worst = 0};
        o.idx = malloc(total * sizeof *o.idx);
        o.us = malloc(total * sizeof *o.us);
        int64_t slots[TT_MAX_SLOTS], vals[TT_DATASET_MAX_PARAMS];
        for (uint64_t i = 0; i < total; i++) {
            tt_space_decode(sp, i, slots);
            if (tt_space_check(sp, slots, NULL) != TT_OK) continue;
            for (size_t p = 0; p < t->nparams; p++) vals[map[p]] = slots[t->ninputs + p];
            const tt_ds_record *r = tt_dataset_find(ds, vals);
            double us = r && r->status == TT_DS_OK && isfinite(r->median_us) ? r->median_us
                                                                              : INFINITY;
            o.idx[o.n] = i;
            o.us[o.n++] = us;
            if (us < o.best) o.best = us;
            if (isfinite(us) && us > o.worst) o.worst = us;
        }
        double *sorted = malloc(o.n * sizeof *sorted);
        for (size_t i = 0; i < o.n; i++) sorted[i] = isfinite(o.us[i]) ? o.us[i] : o.worst;
        qsort(sorted, o.n, sizeof *sorted, cmp_double);
        size_t B = (size_t)budget;
        double *frand = malloc(B * sizeof *frand), *curve = malloc(B * sizeof *curve);
        double *mean = calloc(NS * B, sizeof *mean);
        for (size_t b = 0; b < B; b++) frand[b] = random_expect(sorted, o.n, b + 1);
        printf("\n%s: %zu feasible configs (%zu recorded), optimum %.2f us, device %s\n",
               files[fi], o.n, ds->nrecords, o.best, ds->device ? ds->device : "?");
        printf("%-14s %8s %10s %10s %10s\n", "strategy", "score", "best@20", "best@50",
               "best@B");
        for (int k = 0; k < NS; k++) {
            if (only && !in_list(only, strategies[k])) continue;
            double score = 0;
            for (int s = 0; s < seeds; s++) {
                run_strategy(strategies[k], t, sp, prob, NULL, NULL, (uint64_t)s + seed_base, budget,
                             &o, curve);
                for (size_t b = 0; b < B; b++) {
                    mean[k * B + b] += curve[b] / seeds;
                    double den = frand[b] - o.best;
                    score += den > 0 ? (frand[b] - curve[b]) / den : 0;
                }
            }
            score /= (double)seeds * (double)B;
            printf("%-14s %8.3f %10.2f %10.2f %10.2f\n", strategies[k], score,
                   mean[k * B + (B > 20 ? 19 : B - 1)], mean[k * B + (B > 50 ? 49 : B - 1)],
                   mean[k * B + B - 1]);
        }
        printf("%-14s %8.3f %10.2f %10.2f %10.2f\n", "E[random]", 0.0, frand[B > 20 ? 19 : B - 1],
               frand[B > 50 ? 49 : B - 1], frand[B - 1]);
        if (curves) {
            printf("best-found-vs-trials (mean over seeds), us:\ntrials");
            for (int k = 0; k < NS; k++)
                if (!only || in_list(only, strategies[k])) printf(" %12s", strategies[k]);
            printf(" %12s\n", "E[random]");
            for (size_t b = 0; b < B; b++) {
                if (!(b < 10 || (b + 1) % 10 == 0)) continue;
                printf("%6zu", b + 1);
                for (int k = 0; k < NS; k++)
                    if (!only || in_list(only, strategies[k])) printf(" %12.2f", mean[k * B + b]);
                printf(" %12.2f\n", frand[b]);
            }
        }
        free(mean);
        free(frand);
        free(curve);
        free(sorted);
        free(o.idx);
        free(o.us);
        tt_space_free(sp);
        tt_dataset_free(ds);
    }
    tt_tmpl_free(t);
}

int main(int argc, char **argv)
{
    int full = 0, nshapes = 10, seeds = 10, rseeds = 200, do_sim = 1, do_replay = 1, curves = 0;
    int64_t budget = 32, rbudget = 100;
    const char *target = "a2", *dsdir = NULL, *only = NULL, *library = NULL;
    int64_t lib_budget = 64;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--full")) full = 1;
        else if (!strcmp(a, "--no-sim")) do_sim = 0;
        else if (!strcmp(a, "--no-replay")) do_replay = 0;
        else if (!strcmp(a, "--curve")) curves = 1;
        else if (!strcmp(a, "--shapes") && v) nshapes = atoi(argv[++i]);
        else if (!strcmp(a, "--seeds") && v) seeds = rseeds = atoi(argv[++i]);
        else if (!strcmp(a, "--replay-seeds") && v) rseeds = atoi(argv[++i]);
        else if (!strcmp(a, "--budget") && v) budget = atoll(argv[++i]);
        else if (!strcmp(a, "--replay-budget") && v) rbudget = atoll(argv[++i]);
        else if (!strcmp(a, "--target") && v) target = argv[++i];
        else if (!strcmp(a, "--datasets") && v) dsdir = argv[++i];
        else if (!strcmp(a, "--cache") && v) cache_dir = argv[++i];
        else if (!strcmp(a, "--strategies") && v) only = argv[++i];
        else if (!strcmp(a, "--seed-base") && v) seed_base = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--library")) library = v && v[0] != '-' ? argv[++i] : "";
        else if (!strcmp(a, "--library-budget") && v) lib_budget = atoll(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--full] [--shapes N] [--seeds N] [--replay-seeds N] [--budget N] "
                    "[--replay-budget N] [--no-sim] [--no-replay] [--curve] [--target NAME] "
                    "[--datasets DIR] [--cache DIR] [--strategies a,b,...] [--seed-base N] "
                    "[--library [fam,fam]] [--library-budget N]\n", argv[0]);
            return 2;
        }
    }
    if (nshapes < 1 || seeds < 1 || rseeds < 1 || budget < 1 || rbudget < 1 || lib_budget < 32) {
        fprintf(stderr, "counts must be positive\n");
        return 2;
    }
    const char *src = getenv("TT_SOURCE_DIR");
    char srcbuf[1024], tgtdir[1024];
    if (!src) {
        snprintf(srcbuf, sizeof srcbuf, "%s", TT_DEFAULT_TEMPLATES_DIR);
        char *sl = strrchr(srcbuf, '/');
        if (sl) *sl = 0;
        src = srcbuf;
    }
    snprintf(tgtdir, sizeof tgtdir, "%.900s/costmodel/targets", src);
    if (!dsdir) dsdir = TT_DEFAULT_DATASETS_DIR;
    if (library) {   /* the kernel library only */
        part_library(src, tgtdir, target, library[0] ? library : NULL, lib_budget);
        return 0;
    }
    if (do_sim) part_sim(src, tgtdir, target, full, nshapes, seeds, budget);
    if (do_replay) part_replay(src, dsdir, rseeds, rbudget, curves, only);
    return 0;
}

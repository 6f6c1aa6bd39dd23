/* SPDX-License-Identifier: MIT
 * bench_rank.c - the analytic model's ranking of configs against the simulator's, for the
 * GEMM and FlashAttention templates over a sweep of shapes: Spearman rank correlation,
 * top-1 agreement and mean relative difference per shape, then overall.  Both numbers are
 * models of the chip (docs/simulator.md, "Model vs simulator").
 *
 * usage: bench_rank [--target NAME] [--configs N] [--templates DIR] [--targets DIR]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_sample.h"
#include "model.h"
#include "sim.h"
#include "space.h"
#include "target.h"
#include "template.h"

/* Average ranks (1-based, ties share their mean rank). */
static void ranks(const double *v, size_t n, double *r)
{
    size_t *idx = malloc(n * sizeof *idx);
    if (!idx) return;
    for (size_t i = 0; i < n; i++) idx[i] = i;
    for (size_t i = 1; i < n; i++) {          /* insertion sort: n is small */
        size_t x = idx[i], j = i;
        while (j > 0 && v[idx[j - 1]] > v[x]) { idx[j] = idx[j - 1]; j--; }
        idx[j] = x;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[idx[j + 1]] == v[idx[i]]) j++;
        double avg = (double)(i + j) / 2 + 1;
        for (size_t k = i; k <= j; k++) r[idx[k]] = avg;
        i = j + 1;
    }
    free(idx);
}

static double spearman(const double *a, const double *b, size_t n)
{
    if (n < 2) return NAN;
    double *ra = malloc(n * sizeof *ra), *rb = malloc(n * sizeof *rb);
    if (!ra || !rb) { free(ra); free(rb); return NAN; }
    ranks(a, n, ra);
    ranks(b, n, rb);
    double ma = 0, mb = 0;
    for (size_t i = 0; i < n; i++) { ma += ra[i]; mb += rb[i]; }
    ma /= (double)n;
    mb /= (double)n;
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    free(ra);
    free(rb);
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

typedef struct totals {
    double rho_sum, err_sum, loss_sum;
    int shapes, top1;
    size_t points;
} totals;

static int verbose;

static void one_shape(const tt_template *t, const tt_target *tgt, const char *prob, size_t max,
                      totals *tot)
{
    int64_t base[TT_MAX_SLOTS] = {0};
    tt_errinfo err;
    if (tt_tmpl_problem_parse(t, prob, base, &err)) {
        fprintf(stderr, "%s: %s\n", prob, err.msg);
        return;
    }
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    tt_model *m = NULL;
    if (tt_space_new(t, base, &caps, &sp, &err) || tt_model_new(t, tgt, base, NULL, &m, &err)) {
        fprintf(stderr, "%s: %s\n", prob, err.msg);
        tt_space_free(sp);
        return;
    }
    bench_sample c;
    bench_sample_space(sp, t->nslots, max, &c);
    double *mt = malloc((c.cap + 1) * sizeof *mt), *st = malloc((c.cap + 1) * sizeof *st);
    int64_t *w = malloc(t->nslots * sizeof *w);
    if (!c.slots || !mt || !st || !w) goto out;
    size_t n = 0, bm = 0, bs = 0;
    size_t *orig = malloc((c.cap + 1) * sizeof *orig);
    if (!orig) goto out;
    double err_sum = 0;
    for (size_t i = 0; i < c.n; i++) {
        tt_model_result mr;
        tt_sim_result sr;
        memcpy(w, &c.slots[i * c.nslots], c.nslots * sizeof *w);
        if (tt_model_eval(m, w, &mr) != TT_OK) continue;
        memcpy(w, &c.slots[i * c.nslots], c.nslots * sizeof *w);
        if (tt_sim_run(t, tgt, w, NULL, &sr) != TT_OK) {
            tt_sim_result_close(&sr);
            continue;
        }
        mt[n] = mr.time_us;
        st[n] = sr.time_us;
        orig[n] = i;
        err_sum += fabs(mr.time_us - sr.time_us) / sr.time_us;
        if (mt[n] < mt[bm]) bm = n;
        if (st[n] < st[bs]) bs = n;
        n++;
        tt_sim_result_close(&sr);
    }
    if (n >= 2) {
        double rho = spearman(mt, st, n);
        /* top-1: the model's best config is the simulator's best, or within 1 % of it */
        double loss = (st[bm] - st[bs]) / st[bs];
        int top1 = loss <= 0.01;
        printf("%-14s %-58s %5zu %7.3f %5s %7.1f%% %7.1f%%\n", t->name, prob, n, rho,
               top1 ? "yes" : "no", loss * 100, err_sum / (double)n * 100);
        if (!isnan(rho)) {
            tot->rho_sum += rho;
            tot->shapes++;
        }
        tot->top1 += top1;
        tot->err_sum += err_sum;
        tot->loss_sum += loss;
        tot->points += n;
        if (verbose) {
            char k1[256], k2[256];
            tt_tmpl_config_key(t, &c.slots[orig[bm] * c.nslots], k1, sizeof k1);
            tt_tmpl_config_key(t, &c.slots[orig[bs] * c.nslots], k2, sizeof k2);
            printf("    model pick %s: model %.1f us, sim %.1f us\n", k1, mt[bm], st[bm]);
            printf("    sim pick   %s: model %.1f us, sim %.1f us\n", k2, mt[bs], st[bs]);
        }
    }
    free(orig);
out:
    bench_sample_free(&c);
    free(mt);
    free(st);
    free(w);
    tt_model_free(m);
    tt_space_free(sp);
}

int main(int argc, char **argv)
{
    const char *tname = "Ascend910_9391", *tdir = TT_DEFAULT_TARGETS_DIR;
    const char *tpl = TT_DEFAULT_TEMPLATES_DIR;
    size_t nconf = 120;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--target")) tname = argv[i + 1];
        else if (!strcmp(argv[i], "--configs")) nconf = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--templates")) tpl = argv[i + 1];
        else if (!strcmp(argv[i], "--targets")) tdir = argv[i + 1];
        else if (!strcmp(argv[i], "--verbose")) verbose = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: %s [--target NAME] [--configs N] [--templates DIR] [--targets DIR]\n",
                    argv[0]);
            return 2;
        }
    }
    tt_targets *ts = NULL;
    tt_errinfo err;
    if (tt_targets_load_dir(tdir, &ts, &err)) {
        fprintf(stderr, "targets: %s\n", err.msg);
        return 1;
    }
    const tt_target *tgt = tt_targets_find(ts, tname);
    if (!tgt) {
        fprintf(stderr, "no target %s\n", tname);
        tt_targets_free(ts);
        return 1;
    }
    char path[1024];
    tt_template *gemm = NULL, *fa = NULL;
    snprintf(path, sizeof path, "%s/gemm.json", tpl);
    if (tt_tmpl_parse_file(path, &gemm, &err)) fprintf(stderr, "%s: %s\n", path, err.msg);
    snprintf(path, sizeof path, "%s/flash_attn_fwd.json", tpl);
    if (tt_tmpl_parse_file(path, &fa, &err)) fprintf(stderr, "%s: %s\n", path, err.msg);
    printf("analytic model vs pipeline simulator on %s (both are models of the chip);\n"
           "up to %zu configs per shape, sampled evenly over the feasible space\n\n", tgt->name, nconf);
    printf("%-14s %-58s %5s %7s %5s %8s %8s\n", "template", "problem", "n", "spearman", "top1",
           "loss", "mean|d|");
    totals tot = {0};
    clock_t t0 = clock();
    static const char *const gemm_shapes[] = {
        "M=1024,N=1024,K=1024,dtype=float16,out_dtype=float16",
        "M=2048,N=2048,K=2048,dtype=float16,out_dtype=float16",
        "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16",
        "M=8192,N=1024,K=8192,dtype=float16,out_dtype=float16",
        "M=1536,N=1536,K=1536,dtype=float16,out_dtype=float32",
        "M=512,N=4096,K=2048,dtype=bfloat16,out_dtype=bfloat16",
        NULL};
    static const char *const fa_shapes[] = {
        "B=1,H=16,H_kv=16,S_q=2048,S_kv=2048,D=128,causal=0,dtype=float16",
        "B=1,H=16,H_kv=16,S_q=4096,S_kv=4096,D=128,causal=1,dtype=float16",
        "B=2,H=8,H_kv=8,S_q=1024,S_kv=1024,D=64,causal=0,dtype=float16",
        "B=1,H=32,H_kv=8,S_q=8192,S_kv=8192,D=128,causal=0,dtype=bfloat16",
        NULL};
    if (gemm)
        for (int i = 0; gemm_shapes[i]; i++) one_shape(gemm, tgt, gemm_shapes[i], nconf, &tot);
    if (fa)
        for (int i = 0; fa_shapes[i]; i++) one_shape(fa, tgt, fa_shapes[i], nconf / 2, &tot);
    if (tot.shapes)
        printf("\noverall: %d shapes, %zu configs: mean spearman %.3f, top-1 agreement %d/%d, "
               "mean loss of the model's pick %.1f%%, mean |model - sim| / sim %.1f%%  (%.1f s)\n",
               tot.shapes, tot.points, tot.rho_sum / tot.shapes, tot.top1, tot.shapes,
               tot.loss_sum / tot.shapes * 100, tot.err_sum / (double)tot.points * 100,
               (double)(clock() - t0) / CLOCKS_PER_SEC);
    tt_tmpl_free(gemm);
    tt_tmpl_free(fa);
    tt_targets_free(ts);
    return 0;
}

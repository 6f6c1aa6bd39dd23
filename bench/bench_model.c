/* SPDX-License-Identifier: MIT
 * bench_model.c - speed of the analytic cost model on a wide GEMM space (one core), and the
 * fidelity table against the published measurements (--fidelity prints markdown).
 *
 * Usage: bench_model [--problem M=4096,N=4096,K=4096] [--target a3] [--callgrind]
 *        bench_model --fidelity [--calibration FILE]
 * --callgrind runs the model on the feasible configs once, in feasible_pass(), for
 *   valgrind --tool=callgrind --toggle-collect='feasible_pass*' bench_model --callgrind
 * (instructions per config = collected / feasible configs; decoding the index included).
 * The numbers the model prints are predictions of a model, not measurements.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "space.h"
#include "target.h"
#include "template.h"
#include "tt_fidelity.h"

#ifndef TT_DEFAULT_TARGETS_DIR
#define TT_DEFAULT_TARGETS_DIR "costmodel/targets"
#endif
#ifndef TT_DEFAULT_TEMPLATES_DIR
#define TT_DEFAULT_TEMPLATES_DIR "templates"
#endif
#ifndef TT_DEFAULT_DATASETS_DIR
#define TT_DEFAULT_DATASETS_DIR "../shared/datasets"
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int die(const char *what, const tt_errinfo *e)
{
    fprintf(stderr, "bench_model: %s: %s%s%s\n", what, e->path, e->path[0] ? ": " : "", e->msg);
    return 1;
}

/* ---- --fidelity ------------------------------------------------------------------------ */

static int fidelity(const tt_targets *ts, const char *calpath)
{
    json_error_t je;
    json_t *cal = json_load_file(calpath, 0, &je);
    if (!cal) { fprintf(stderr, "bench_model: %s: %s\n", calpath, je.text); return 1; }
    tt_errinfo e;
    tt_template *gemm = NULL, *sr = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/gemm.json", TT_DEFAULT_TEMPLATES_DIR);
    if (tt_tmpl_parse_file(path, &gemm, &e)) { json_decref(cal); return die("gemm.json", &e); }
    if (tt_tmpl_parse_string(tt_fidelity_stream_read_json, strlen(tt_fidelity_stream_read_json), NULL,
                             &sr, &e)) {
        tt_tmpl_free(gemm);
        json_decref(cal);
        return die("stream_read", &e);
    }
    const tt_target *a3 = tt_targets_find(ts, "Ascend910_9382");
    const tt_target *a2 = tt_targets_find(ts, "Ascend910B2");
    if (!a3 || !a2) { fprintf(stderr, "bench_model: targets missing\n"); return 1; }
    printf("| point | target | predicted | published | error | bound |\n");
    printf("|---|---|---|---|---|---|\n");
    const json_t *pts = json_object_get(cal, "points");
    size_t i;
    const json_t *p;
    int bad = 0;
    json_array_foreach(pts, i, p) {
        const char *id = json_string_value(json_object_get(p, "id"));
        const char *kernel = json_string_value(json_object_get(p, "kernel"));
        int64_t slots[TT_MAX_SLOTS] = {0};
        tt_model *m = NULL;
        tt_model_result r;
        if (kernel && strcmp(kernel, "gemm") == 0) {
            tt_fidelity_gemm_slots(gemm, p, slots);
            if (tt_model_new(gemm, a3, slots, NULL, &m, &e)) return die(id, &e);
            tt_model_eval(m, slots, &r);
            double pub = json_number_value(json_object_get(p, "time_us"));
            double err = 100.0 * (r.time_us / pub - 1);
            if (fabs(err) > 15) bad = 1;
            printf("| %s | %s | %.1f us | %.1f us | %+.1f %% | %s |\n", id, a3->name, r.time_us,
                   pub, err, r.rc ? r.reason : tt_bound_name(r.bound));
        } else if (kernel && strcmp(kernel, "copy") == 0 &&
                   json_object_get(p, "bytes") && !strstr(id, "bypass")) {
            double bytes = json_number_value(json_object_get(p, "bytes"));
            slots[0] = (int64_t)(bytes / 2);
            slots[1] = TT_DT_FLOAT16;
            if (tt_model_new(sr, a2, slots, NULL, &m, &e)) return die(id, &e);
            double gbps = tt_fidelity_stream_best(sr, a2, m, slots, bytes, &r, NULL);
            double pub = json_number_value(json_object_get(p, "gbps"));
            double err = 100.0 * (gbps / pub - 1);
            if (fabs(err) > 15) bad = 1;
            printf("| %s | %s | %.0f GB/s | %.0f GB/s | %+.1f %% | %s (h=%.2f) |\n", id, a2->name,
                   gbps, pub, err, r.rc ? r.reason : tt_bound_name(r.bound), r.l2_hit);
        } else {
            printf("| %s | - | not modelled | - | - | - |\n", id ? id : "?");
        }
        tt_model_free(m);
    }
    tt_tmpl_free(gemm);
    tt_tmpl_free(sr);
    json_decref(cal);
    return bad ? 2 : 0;
}

/* ---- ranking speed --------------------------------------------------------------------- */

#define TOPK 8
typedef struct topk {
    double t[TOPK];
    uint64_t idx[TOPK];
    int n;
} topk;

static void topk_add(topk *k, double t, uint64_t idx)
{
    if (k->n == TOPK && t >= k->t[TOPK - 1]) return;
    int i = k->n < TOPK ? k->n++ : TOPK - 1;
    while (i > 0 && k->t[i - 1] > t) { k->t[i] = k->t[i - 1]; k->idx[i] = k->idx[i - 1]; i--; }
    k->t[i] = t;
    k->idx[i] = idx;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct rank_ctx {
    const tt_model *m;
    topk best;
    uint64_t n;
    const tt_space *sp;
    size_t nslots;
    uint64_t *keep;           /* indices of the feasible configs (first run only) */
    uint64_t nkeep;
} rank_ctx;

static int rank_visit(void *ud, const int64_t *slots)
{
    rank_ctx *c = ud;
    int64_t s[TT_MAX_SLOTS];
    memcpy(s, slots, c->nslots * sizeof *s);   /* the visitor's vector has nslots entries */
    tt_model_result r;
    if (tt_model_eval(c->m, s, &r) == TT_OK) {
        uint64_t idx = tt_space_encode(c->sp, s);
        topk_add(&c->best, r.time_us, idx);
        if (c->keep && c->nkeep < 1310720) c->keep[c->nkeep++] = idx;
    }
    c->n++;
    return 0;
}

/* The model alone on the feasible configs, decoded from their index (one pass). */
__attribute__((noinline)) static double feasible_pass(const tt_model *m, const tt_space *sp,
                                                      const uint64_t *keep, uint64_t n,
                                                      int64_t *slots)
{
    double sum = 0;
    tt_model_result r;
    for (uint64_t i = 0; i < n; i++) {
        tt_space_decode(sp, keep[i], slots);
        if (tt_model_eval(m, slots, &r) == TT_OK) sum += r.time_us;
    }
    return sum;
}

static int rank_space(const tt_targets *ts, const char *tname, const char *problem, int cg)
{
    tt_errinfo e;
    char path[4096];
    snprintf(path, sizeof path, "%s/gemm.json", TT_DEFAULT_TEMPLATES_DIR);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc) { fprintf(stderr, "bench_model: %s: %s\n", path, je.text); return 1; }
    /* wide domains: 32 x 32 x 5 x 32 x 4 x 2 = 1 310 720 configs (one block per output
     * tile: core_num 0, swizzle 1, the template's defaults) */
    json_t *params = json_pack("{s:{s:[i,i,i]}, s:{s:[i,i,i]}, s:{s:[i,i]}, s:{s:[i,i,i]},"
                               " s:{s:[i,i,i]}, s:[i,i], s:[i], s:[i]}",
                               "block_M", "range", 16, 512, 16, "block_N", "range", 16, 512, 16,
                               "block_K", "pow2", 16, 256, "K_L1", "range", 32, 1024, 32,
                               "S1", "range", 1, 4, 1, "S2", 1, 2, "core_num", 0, "swizzle", 1);
    json_object_set_new(doc, "params", params);
    tt_template *t = NULL;
    if (tt_tmpl_parse_json(doc, NULL, &t, &e)) { json_decref(doc); return die("wide gemm", &e); }
    json_decref(doc);
    const tt_target *tg = tt_targets_find(ts, tname);
    if (!tg) { fprintf(stderr, "bench_model: no target %s\n", tname); tt_tmpl_free(t); return 1; }
    int64_t slots[TT_MAX_SLOTS] = {0};
    if (tt_tmpl_problem_parse(t, problem, slots, &e)) { tt_tmpl_free(t); return die("problem", &e); }
    tt_model *m = NULL;
    if (tt_model_new(t, tg, slots, NULL, &m, &e)) { tt_tmpl_free(t); return die("model", &e); }
    tt_caps caps;
    tt_target_caps(tg, &caps);
    tt_space *sp = NULL;
    if (tt_space_new(t, slots, &caps, &sp, &e)) { tt_model_free(m); tt_tmpl_free(t); return die("space", &e); }
    uint64_t total = tt_space_total(sp);
    /* (a) rank the space: enumerate the feasible configs, predict each, keep the top k;
     * best of 5 runs (the dev machine is shared) */
    rank_ctx rc;
    double ca = 1e9, ta = 1e9;
    tt_space_counts counts;
    for (int rep = 0; rep < (cg ? 1 : 5); rep++) {
        rank_ctx c1 = {m, {{0}, {0}, 0}, 0, sp, t->nslots, NULL, 0};
        if (rep == 0) c1.keep = malloc(1310720 * sizeof *c1.keep);
        double c0 = cpu_s(), t0 = now_s();
        if (tt_space_enumerate(sp, rank_visit, &c1, 0, &counts)) { fprintf(stderr, "bench_model: enumerate failed\n"); return 1; }
        double cc = cpu_s() - c0, tc = now_s() - t0;
        if (cc < ca) ca = cc;
        if (tc < ta) ta = tc;
        if (rep == 0) rc = c1;
    }
    /* (a') the model alone on the feasible configs (decoded from their index), best of 5 */
    double cm = 1e9;
    for (int rep = 0; rep < 5 && rc.keep; rep++) {
        double c0 = cpu_s();
        feasible_pass(m, sp, rc.keep, rc.nkeep, slots);
        double cc = cpu_s() - c0;
        if (cc < cm) cm = cc;
        if (cg) break;
    }
    if (cg) {
        printf("feasible_pass: %llu feasible configs, once (%.3f s CPU)\n", (unsigned long long)rc.nkeep, cm);
        free(rc.keep);
        tt_space_free(sp);
        tt_model_free(m);
        tt_tmpl_free(t);
        return 0;
    }
    /* (b) the model alone on every config of the cartesian product (refusals included) */
    tt_model_result r;
    uint64_t ok = 0;
    double c0 = cpu_s();
    double t0 = now_s();
    for (uint64_t i = 0; i < total; i++) {
        tt_space_decode(sp, i, slots);
        if (tt_model_eval(m, slots, &r) == TT_OK) ok++;
    }
    double cb = cpu_s() - c0, tb = now_s() - t0;
    topk best = rc.best;
    printf("target %s, problem %s (predictions of a model)\n", tg->name, problem);
    printf("space: %llu configs (cartesian), %llu feasible\n", (unsigned long long)total,
           (unsigned long long)counts.feasible);
    printf("rank the whole space (enumerate + model on the feasible, best of 5): %.3f s CPU"
           " (%.3f s wall)\n", ca, ta);
    printf("model alone on the %llu feasible configs (best of 5): %.3f s CPU, %.2f M configs/s\n",
           (unsigned long long)rc.nkeep, cm, rc.nkeep / cm / 1e6);
    printf("model on every cartesian config (infeasible refused with a reason): %.3f s CPU"
           " (%.3f s wall), %.2f M configs/s CPU, %.2f M/s wall\n", cb, tb, total / cb / 1e6, total / tb / 1e6);
    if (ok != counts.feasible) printf("MISMATCH: model accepted %llu configs\n", (unsigned long long)ok);
    for (int k = 0; k < best.n; k++) {
        tt_space_decode(sp, best.idx[k], slots);
        tt_model_eval(m, slots, &r);
        char key[256];
        tt_tmpl_config_key(t, slots, key, sizeof key);
        printf("  %d. %-60s %9.1f us (model) bound %s\n", k + 1, key, r.time_us, tt_bound_name(r.bound));
    }
    free(rc.keep);
    tt_space_free(sp);
    tt_model_free(m);
    tt_tmpl_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    const char *target = "a3", *problem = "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16";
    const char *cal = TT_DEFAULT_DATASETS_DIR "/../ascend/calibration.json";
    int fid = 0, cg = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fidelity") == 0) fid = 1;
        else if (strcmp(argv[i], "--callgrind") == 0) cg = 1;
        else if (strcmp(argv[i], "--calibration") == 0 && i + 1 < argc) cal = argv[++i];
        else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) target = argv[++i];
        else if (strcmp(argv[i], "--problem") == 0 && i + 1 < argc) problem = argv[++i];
        else {
            fprintf(stderr, "usage: bench_model [--target T] [--problem KV] [--callgrind] | --fidelity [--calibration F]\n");
            return 2;
        }
    }
    tt_targets *ts = NULL;
    tt_errinfo e;
    if (tt_targets_load_dir(TT_DEFAULT_TARGETS_DIR, &ts, &e)) return die("targets", &e);
    int rc = fid ? fidelity(ts, cal) : rank_space(ts, target, problem, cg);
    tt_targets_free(ts);
    return rc;
}

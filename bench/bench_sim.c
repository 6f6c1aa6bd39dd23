/* SPDX-License-Identifier: MIT
 * bench_sim.c - speed of the pipeline simulator: simulated configs per second for GEMM 4096^3
 * and FlashAttention S=8192 on an A3 die, plus the simulator against the published GEMM points
 * of shared/ascend/calibration.json.  Prints a table; no pass/fail (docs/simulator.md).
 *
 * usage: bench_sim [--target NAME] [--configs N] [--templates DIR] [--targets DIR]
 *                  [--calibration FILE] [--only SUBSTR] [--match SUBSTR] [--list] [--check]
 * --only SUBSTR runs only the cases whose label contains SUBSTR (for profiling); --match
 * SUBSTR only the sampled configs whose "name=value,..." contains SUBSTR; --list
 * prints every sampled config; --check also simulates each one in full (no
 * steady-state shortcut, no block-class interpolation) and prints the difference.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_sample.h"
#include "sim.h"
#include "space.h"
#include "target.h"
#include "template.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);   /* CPU time: the dev machine is shared */
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int g_list, g_check;
static const char *g_only;    /* --only SUBSTR: run the cases whose label contains it */
static const char *g_match;   /* --match SUBSTR: run the sampled configs whose "name=value,..." contains it */

static int selected(const char *label)
{
    return !g_only || strstr(label, g_only) != NULL;
}

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--target NAME] [--configs N] [--templates DIR] [--targets DIR] "
                    "[--calibration FILE] [--only SUBSTR] [--match SUBSTR] [--list] [--check]\n", argv0);
    return 2;
}

/* "name=value,..." of the params of a config */
static void cfg_str(const tt_template *t, const int64_t *slots, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t p = 0; p < t->nparams && n < cap; p++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%lld", p ? "," : "", t->params[p].name,
                              (long long)slots[t->ninputs + p]);
}

/* Time the simulator over up to `max` feasible configs of the problem, spread over the space. */
static int bench_space(const tt_template *t, const tt_target *tgt, const char *prob, size_t max,
                       const char *label)
{
    if (!selected(label)) return 0;
    int64_t base[TT_MAX_SLOTS] = {0};
    tt_errinfo err;
    if (tt_tmpl_problem_parse(t, prob, base, &err)) {
        fprintf(stderr, "%s: problem: %s\n", label, err.msg);
        return 1;
    }
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    if (tt_space_new(t, base, &caps, &sp, &err)) {
        fprintf(stderr, "%s: space: %s\n", label, err.msg);
        return 1;
    }
    bench_sample c;
    bench_sample_space(sp, t->nslots, max, &c);
    int64_t *slots = malloc(t->nslots * sizeof *slots);
    if (!c.slots || !slots) {
        bench_sample_free(&c);
        free(slots);
        tt_space_free(sp);
        return 1;
    }
    tt_space_free(sp);
    double t0 = now_s(), worst = 0, sum_events = 0, worst_err = 0, full_s = 0;
    size_t ok = 0, fail = 0, extrap = 0;
    size_t nrun = 0;
    for (size_t i = 0; i < c.n; i++) {
        if (g_match) {
            char cs[256];
            cfg_str(t, &c.slots[i * c.nslots], cs, sizeof cs);
            if (!strstr(cs, g_match)) continue;
        }
        nrun++;
        memcpy(slots, &c.slots[i * c.nslots], c.nslots * sizeof *slots);
        tt_sim_result r;
        double a = now_s();
        tt_rc rc = tt_sim_run(t, tgt, slots, NULL, &r);
        double d = now_s() - a;
        if (d > worst) worst = d;
        if (g_list || g_check) {
            char cs[256];
            cfg_str(t, &c.slots[i * c.nslots], cs, sizeof cs);
            printf("  %-40s %8.3f ms %9lld events %4lld/%-4lld waves  %12.0f cycles", cs,
                   d * 1e3, (long long)r.events, (long long)r.waves_simulated,
                   (long long)r.waves, r.cycles);
            if (g_check && rc == TT_OK) {
                tt_sim_opts fo = {.trace_core = -1, .shortcut_ops = -1};
                tt_sim_result f;
                memcpy(slots, &c.slots[i * c.nslots], c.nslots * sizeof *slots);
                double fa = now_s();
                tt_sim_run(t, tgt, slots, &fo, &f);
                double fd = now_s() - fa;
                full_s += fd;
                double e = f.cycles > 0 ? (r.cycles - f.cycles) / f.cycles : 0;
                if (fabs(e) > worst_err) worst_err = fabs(e);
                printf("  full %12.0f cycles %+.5f%% (%.1f ms)", f.cycles, e * 100, fd * 1e3);
                tt_sim_result_close(&f);
            }
            printf("\n");
            t0 += now_s() - a - d;   /* listing and checking are not timed */
        }
        if (rc == TT_OK) {
            ok++;
            sum_events += (double)r.events;
            extrap += (size_t)r.extrapolated;
        } else {
            fail++;
        }
        tt_sim_result_close(&r);
    }
    double el = now_s() - t0;
    printf("%-34s %8zu %10.1f %10.3f %10.3f %10.0f %6zu %6zu  (of %llu feasible)\n", label, nrun,
           nrun ? nrun / el : 0, nrun ? el / nrun * 1e3 : 0, worst * 1e3,
           ok ? sum_events / ok : 0, extrap, fail, (unsigned long long)c.feasible);
    if (g_check)
        printf("  %s: fast path vs full simulation: worst |error| %.5f%% (full: %.1f ms/config)\n",
               label, worst_err * 100, nrun ? full_s / nrun * 1e3 : 0);
    free(slots);
    bench_sample_free(&c);
    return 0;
}

/* Time one config many times. */
static int bench_one(const tt_template *t, const tt_target *tgt, const char *prob,
                     const char *cfg, int reps, const char *label)
{
    if (!selected(label)) return 0;
    int64_t slots[TT_MAX_SLOTS] = {0}, work[TT_MAX_SLOTS];
    tt_errinfo err;
    if (tt_tmpl_problem_parse(t, prob, slots, &err) || tt_tmpl_config_parse(t, cfg, slots, &err)) {
        fprintf(stderr, "%s: %s\n", label, err.msg);
        return 1;
    }
    tt_sim_result r;
    double t0 = now_s();
    for (int i = 0; i < reps; i++) {
        memcpy(work, slots, sizeof work);
        tt_sim_run(t, tgt, work, NULL, &r);
        if (i + 1 < reps) tt_sim_result_close(&r);
    }
    double el = (now_s() - t0) / reps;
    printf("%-34s %10.3f ms/config %8.0f configs/s  sim %.2f us (model of the chip), rc %s, "
           "blocks %lld waves %lld simulated %lld events %lld%s\n",
           label, el * 1e3, 1 / el, r.time_us, tt_rc_code(r.rc), (long long)r.blocks,
           (long long)r.waves, (long long)r.waves_simulated, (long long)r.events,
           r.extrapolated ? " (steady-state shortcut)" : "");
    tt_sim_result_close(&r);
    return 0;
}

/* The published GEMM points against the simulator. */
static void calibration(const tt_template *gemm, const tt_target *tgt, const char *path)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc) {
        fprintf(stderr, "calibration: %s: %s\n", path, je.text);
        return;
    }
    printf("\npublished GEMM points (A3 die, fp16 in, fp32 out) vs simulator (a model) on %s:\n",
           tgt->name);
    printf("%-16s %12s %12s %8s\n", "point", "measured us", "sim us", "error");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(doc, "points"), i, p) {
        if (strcmp(json_string_value(json_object_get(p, "kernel")) ?: "", "gemm") != 0) continue;
        json_t *pr = json_object_get(p, "problem"), *cf = json_object_get(p, "config");
        char prob[256], cfg[256];
        snprintf(prob, sizeof prob, "M=%lld,N=%lld,K=%lld,dtype=float16,out_dtype=float32",
                 (long long)json_integer_value(json_object_get(pr, "M")),
                 (long long)json_integer_value(json_object_get(pr, "N")),
                 (long long)json_integer_value(json_object_get(pr, "K")));
        snprintf(cfg, sizeof cfg, "block_M=%lld,block_N=%lld,block_K=%lld,K_L1=%lld,S1=2,S2=2,core_num=24",
                 (long long)json_integer_value(json_object_get(cf, "block_M")),
                 (long long)json_integer_value(json_object_get(cf, "block_N")),
                 (long long)json_integer_value(json_object_get(cf, "block_K")),
                 (long long)json_integer_value(json_object_get(cf, "K_L1")));
        int64_t slots[TT_MAX_SLOTS] = {0};
        tt_errinfo err;
        if (tt_tmpl_problem_parse(gemm, prob, slots, &err) || tt_tmpl_config_parse(gemm, cfg, slots, &err)) {
            printf("%-16s %s\n", json_string_value(json_object_get(p, "id")), err.msg);
            continue;
        }
        tt_sim_result r;
        tt_sim_run(gemm, tgt, slots, NULL, &r);
        double meas = json_number_value(json_object_get(p, "time_us"));
        printf("%-16s %12.1f %12.1f %+7.1f%%   M util %.2f MTE2 util %.2f stalls data %.0f slot %.0f bw %.0f\n",
               json_string_value(json_object_get(p, "id")), meas, r.time_us,
               (r.time_us - meas) / meas * 100, r.util[TT_UNIT_M], r.util[TT_UNIT_MTE2],
               r.stall_cycles[TT_STALL_DATA], r.stall_cycles[TT_STALL_SLOT],
               r.stall_cycles[TT_STALL_BANDWIDTH]);
        tt_sim_result_close(&r);
    }
    json_decref(doc);
}

int main(int argc, char **argv)
{
    const char *tname = "Ascend910_9391", *tdir = TT_DEFAULT_TARGETS_DIR;
    const char *tpl = TT_DEFAULT_TEMPLATES_DIR;
    const char *cal = TT_DEFAULT_DATASETS_DIR "/../ascend/calibration.json";
    size_t nconf = 200;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--list")) { g_list = 1; i--; continue; }
        if (!strcmp(argv[i], "--check")) { g_check = 1; i--; continue; }
        if (i + 1 >= argc) return usage(argv[0]);
        if (!strcmp(argv[i], "--target")) tname = argv[i + 1];
        else if (!strcmp(argv[i], "--configs")) nconf = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--templates")) tpl = argv[i + 1];
        else if (!strcmp(argv[i], "--targets")) tdir = argv[i + 1];
        else if (!strcmp(argv[i], "--calibration")) cal = argv[i + 1];
        else if (!strcmp(argv[i], "--only")) g_only = argv[i + 1];
        else if (!strcmp(argv[i], "--match")) g_match = argv[i + 1];
        else return usage(argv[0]);
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
        return 1;
    }
    char path[1024];
    tt_template *gemm = NULL, *fa = NULL;
    snprintf(path, sizeof path, "%s/gemm.json", tpl);
    if (tt_tmpl_parse_file(path, &gemm, &err)) {
        fprintf(stderr, "%s: %s: %s\n", path, err.path, err.msg);
        return 1;
    }
    snprintf(path, sizeof path, "%s/flash_attn_fwd.json", tpl);
    if (tt_tmpl_parse_file(path, &fa, &err)) fprintf(stderr, "%s: %s: %s\n", path, err.path, err.msg);
    printf("simulator speed on %s (one thread, CPU time; the numbers it produces are a model, not the chip)\n",
           tgt->name);
    bench_one(gemm, tgt, "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16",
              "block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", 200, "gemm 4096^3 128x256x64");
    if (fa) {
        bench_one(fa, tgt, "B=1,H=32,H_kv=32,S_q=8192,S_kv=8192,D=128,causal=0,dtype=float16",
                  "block_M=128,block_N=128,stages=2", 20, "fa S=8192 D=128 H=32 128x128");
        bench_one(fa, tgt, "B=1,H=32,H_kv=32,S_q=8192,S_kv=8192,D=128,causal=1,dtype=float16",
                  "block_M=128,block_N=128,stages=2", 5, "fa causal S=8192 128x128");
    }
    printf("\n%-34s %8s %10s %10s %10s %10s %6s %6s\n", "space sample", "configs", "configs/s",
           "ms/config", "worst ms", "events", "extrap", "failed");
    bench_space(gemm, tgt, "M=4096,N=4096,K=4096,dtype=float16,out_dtype=float16", nconf,
                "gemm 4096^3");
    if (fa) {
        bench_space(fa, tgt, "B=1,H=32,H_kv=32,S_q=8192,S_kv=8192,D=128,causal=0,dtype=float16",
                    nconf / 4, "fa S=8192 D=128");
        bench_space(fa, tgt, "B=1,H=32,H_kv=32,S_q=8192,S_kv=8192,D=128,causal=1,dtype=float16",
                    nconf / 10, "fa causal S=8192 D=128");
    }
    if (selected("calibration")) calibration(gemm, tgt, cal);
    tt_tmpl_free(gemm);
    tt_tmpl_free(fa);
    tt_targets_free(ts);
    return 0;
}

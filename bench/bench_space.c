/* SPDX-License-Identifier: MIT
 * bench_space.c - search-space enumeration speed: configs/s (full configs decided, feasible or
 * rejected, per second), feasible/s and partial configs checked/s, on one core.
 *
 * Usage: bench_space [min_cpu_seconds_per_row]   (default 0.5)
 * Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so a busy machine does not
 * dilute the per-core rate.
 * Spaces: the built-in gemm template (templates/gemm.json, 102 400 configs) and a GEMM with
 * wide domains defined here (1 310 720 configs), on A2 capacities, 4096^3 fp16.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "space.h"

/* A2 on-chip capacities and alignments (ascend/HARDWARE.md). */
static const tt_caps a2 = {{0, 524288, 65536, 65536, 131072, 196608}, {0, 32, 512, 512, 64, 32}};

static const char *wide_gemm =
    "{\"tiletune\":1,\"name\":\"gemm_wide\",\"inputs\":{\"M\":\"int\",\"N\":\"int\",\"K\":\"int\","
    "\"dtype\":[\"float16\",\"bfloat16\"]},"
    "\"params\":{\"block_M\":{\"range\":[16,512,16]},\"block_N\":{\"range\":[16,512,16]},"
    "\"block_K\":{\"pow2\":[16,256]},\"K_L1\":{\"range\":[32,1024,32]},\"S1\":{\"range\":[1,4]},"
    "\"S2\":[1,2]},"
    "\"let\":{\"m_num\":\"ceildiv(M, block_M)\",\"n_num\":\"ceildiv(N, block_N)\","
    "\"k_tiles\":\"ceildiv(K, K_L1)\"},"
    "\"constraints\":[\"K_L1 % block_K == 0\",\"block_M <= align_up(M, 16)\","
    "\"block_N <= align_up(N, 16)\",\"K_L1 <= align_up(K, block_K)\"],"
    "\"buffers\":{"
    "\"A_L1\":{\"scope\":\"L1\",\"shape\":[\"block_M\",\"K_L1\"],\"dtype\":\"dtype\",\"copies\":\"S1\"},"
    "\"B_L1\":{\"scope\":\"L1\",\"shape\":[\"K_L1\",\"block_N\"],\"dtype\":\"dtype\",\"copies\":\"S1\"},"
    "\"A_L0\":{\"scope\":\"L0A\",\"shape\":[\"block_M\",\"block_K\"],\"dtype\":\"dtype\",\"copies\":\"S2\"},"
    "\"B_L0\":{\"scope\":\"L0B\",\"shape\":[\"block_K\",\"block_N\"],\"dtype\":\"dtype\",\"copies\":\"S2\"},"
    "\"C_L0\":{\"scope\":\"L0C\",\"shape\":[\"block_M\",\"block_N\"],\"dtype\":\"float32\"}}}";

/* CPU time of this thread: the rate of one core, not diluted when the machine is shared. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int visit_sum(void *ud, const int64_t *slots)
{
    *(int64_t *)ud += slots[4];
    return 0;
}

static int row(const char *label, const tt_template *t, double min_s, int with_visitor)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    if (tt_tmpl_problem_parse(t, "M=4096,N=4096,K=4096,dtype=float16", slots, &e) != TT_OK) {
        fprintf(stderr, "%s: problem: %s\n", label, e.msg);
        return 1;
    }
    tt_space *s;
    if (tt_space_new(t, slots, &a2, &s, &e) != TT_OK) {
        fprintf(stderr, "%s: space: %s\n", label, e.msg);
        return 1;
    }
    tt_space_counts c;
    int64_t sink = 0;
    uint64_t runs = 0, decided = 0, feasible = 0, partial = 0;
    double t0 = now(), dt;
    do {
        tt_space_enumerate(s, with_visitor ? visit_sum : NULL, &sink, 0, &c);
        runs++;
        uint64_t d = c.feasible;
        for (size_t i = 0; i < c.nreasons; i++) d += c.rejected[i];
        decided += d;
        feasible += c.feasible;
        partial += c.visited_partial;
        dt = now() - t0;
    } while (dt < min_s);
    printf("| %-22s | %9llu | %8llu | %5llu | %8.2f | %8.2f | %8.2f | %7.3f |\n", label,
           (unsigned long long)c.total, (unsigned long long)c.feasible, (unsigned long long)runs,
           (double)decided / dt / 1e6, (double)feasible / dt / 1e6, (double)partial / dt / 1e6,
           dt / (double)runs * 1e3);
    tt_space_free(s);
    return sink == -1;
}

int main(int argc, char **argv)
{
    double min_s = argc > 1 ? atof(argv[1]) : 0.5;
    if (min_s <= 0) min_s = 0.5;
    tt_template *gemm = NULL, *wide = NULL;
    tt_errinfo e;
    char path[4096];
    snprintf(path, sizeof path, "%s/gemm.json", TT_DEFAULT_TEMPLATES_DIR);
    if (tt_tmpl_parse_file(path, &gemm, &e) != TT_OK) {
        fprintf(stderr, "%s: %s: %s\n", path, e.path, e.msg);
        return 1;
    }
    if (tt_tmpl_parse_string(wide_gemm, strlen(wide_gemm), NULL, &wide, &e) != TT_OK) {
        fprintf(stderr, "wide gemm: %s: %s\n", e.path, e.msg);
        return 1;
    }
    printf("space enumeration, A2 capacities, M=N=K=4096 fp16, one core (>= %.2f s CPU per row)\n\n",
           min_s);
    printf("| %-22s | %9s | %8s | %5s | %8s | %8s | %8s | %7s |\n", "space", "total", "feasible",
           "runs", "Mcfg/s", "Mfeas/s", "Mpart/s", "ms/run");
    printf("|------------------------|-----------|----------|-------|----------|----------|----------|---------|\n");
    int rc = row("gemm.json", gemm, min_s, 0);
    rc |= row("gemm.json + visitor", gemm, min_s, 1);
    rc |= row("gemm wide", wide, min_s, 0);
    rc |= row("gemm wide + visitor", wide, min_s, 1);
    printf("\nMcfg/s: full configs decided (feasible + rejected, early rejection decides many at "
           "once) per second;\nMpart/s: partial configs actually checked per second.\n");
    tt_tmpl_free(gemm);
    tt_tmpl_free(wide);
    return rc;
}

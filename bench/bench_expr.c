/* SPDX-License-Identifier: MIT
 * bench_expr.c - evaluations per second of compiled Kernel Tuner style constraints on one core.
 *
 * Usage: bench_expr [SECONDS]   (default 1; split evenly across the measurements)
 * Compiles the four Conditions of shared/datasets/convolution.t1.json, builds the slot vectors
 * of that search space (10 240 configs), and evaluates, one core, in a loop:
 *   - each condition alone over all configs (evaluations/s);
 *   - all four per config, stopping at the first that rejects (configs/s), as space
 *     enumeration does.
 * Output: a header line, then one line per measurement:
 *   name  count  wall_s  cpu_s  per_cpu_second  per_wall_second
 * per_cpu_second divides by the CPU time of this thread, so it stays the one-core figure when
 * the machine is shared; per_wall_second is lower when other processes compete for the core.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expr.h"

static const char *const names[] = {"block_size_x", "block_size_y", "tile_size_x", "tile_size_y",
                                    "read_only",    "use_padding",  "use_shmem",   "use_cmem",
                                    "filter_height", "filter_width"};
#define NP 10

static const char *const conds[] = {
    "use_padding==0 or block_size_x % 32 != 0",
    "block_size_x*block_size_y<=1024",
    "use_padding==0 or use_shmem != 0",
    ("use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*"
     "((block_size_y*tile_size_y+(filter_height-1)))) < 12*1024"),
};
#define NC 4

static int resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    for (int i = 0; i < NP; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) return i;
    return -1;
}

static double now(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double budget = argc > 1 ? atof(argv[1]) : 1.0;
    if (budget <= 0) budget = 1.0;
    tt_expr *e[NC];
    for (int i = 0; i < NC; i++) {
        tt_errinfo err;
        if (tt_expr_compile(conds[i], resolve, NULL, &e[i], &err) != TT_OK) {
            fprintf(stderr, "bench_expr: %s: %s at %d\n", conds[i], err.msg, err.pos);
            return 1;
        }
    }
    /* the space: block_size_x 16..256 step 16, block_size_y 1..16 powers of 2, tile 1..4 */
    size_t n = 16 * 5 * 4 * 4 * 2 * 2 * 2, k = 0;
    int64_t *vec = malloc(n * NP * sizeof *vec);
    if (!vec) return 1;
    for (int bx = 16; bx <= 256; bx += 16)
        for (int by = 1; by <= 16; by *= 2)
            for (int tx = 1; tx <= 4; tx++)
                for (int ty = 1; ty <= 4; ty++)
                    for (int ro = 0; ro < 2; ro++)
                        for (int up = 0; up < 2; up++)
                            for (int us = 0; us < 2; us++) {
                                int64_t *v = vec + NP * k++;
                                int64_t row[NP] = {bx, by, tx, ty, ro, up, us, 1, 15, 15};
                                memcpy(v, row, sizeof row);
                            }
    double slice = budget / (NC + 1);
    printf("name\tcount\twall_s\tcpu_s\tper_cpu_second\tper_wall_second\n");
    volatile int64_t sink = 0;
    for (int c = 0; c <= NC; c++) {
        size_t count = 0;
        int64_t acc = 0;
        double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID), t;
        do {
            for (size_t i = 0; i < n; i++) {
                const int64_t *v = vec + NP * i;
                int64_t r = 0;
                if (c < NC) {
                    if (tt_expr_eval(e[c], v, &r) != TT_OK) r = -1;
                } else {
                    r = 1;
                    for (int j = 0; j < NC && r == 1; j++)
                        if (tt_expr_eval(e[j], v, &r) != TT_OK) r = -1;
                }
                acc += r;
            }
            count += n;
            t = now(CLOCK_MONOTONIC) - t0;
        } while (t < slice);
        double cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
        sink += acc;
        char name[32];
        if (c < NC) snprintf(name, sizeof name, "condition%d", c + 1);
        else snprintf(name, sizeof name, "all4_per_config");
        printf("%s\t%zu\t%.3f\t%.3f\t%.0f\t%.0f\n", name, count, t, cpu, (double)count / cpu,
               (double)count / t);
    }
    (void)sink;
    for (int i = 0; i < NC; i++) tt_expr_free(e[i]);
    free(vec);
    return 0;
}

/* SPDX-License-Identifier: MIT
 * bench_sample.h - shared by the bench programs: an even sample of the feasible configs of a
 * search space (every stride-th one in enumeration order).
 *
 * Ownership: the slot array belongs to the bench_sample; free it with bench_sample_free().
 * Not thread-safe (one sample per thread).
 */
#ifndef TT_BENCH_SAMPLE_H
#define TT_BENCH_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "space.h"

typedef struct bench_sample {
    int64_t *slots;           /* n configs of nslots slots each (room for cap + 1) */
    size_t n, cap, nslots;
    uint64_t seen, stride;    /* keep every stride-th feasible config */
    uint64_t feasible;        /* feasible configs in the space */
} bench_sample;

/* Count the feasible configs of `sp`, then keep up to `max` of them (at least 1), spread
 * over the space: cap = min(feasible, max), stride = feasible / max when there are more.
 * Returns 0, or -1 when out of memory (s->slots is NULL then). */
int bench_sample_space(tt_space *sp, size_t nslots, size_t max, bench_sample *s);
void bench_sample_free(bench_sample *s);

#endif

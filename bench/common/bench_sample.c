/* SPDX-License-Identifier: MIT
 * bench_sample.c - even sample of the feasible configs of a search space (see bench_sample.h).
 */
#include "bench_sample.h"

#include <stdlib.h>
#include <string.h>

static int count_visit(void *ud, const int64_t *slots)
{
    (void)slots;
    (*(uint64_t *)ud)++;
    return 0;
}

static int keep_visit(void *ud, const int64_t *slots)
{
    bench_sample *c = ud;
    if (c->seen++ % c->stride) return 0;
    if (c->n == c->cap) return 1;
    memcpy(&c->slots[c->n * c->nslots], slots, c->nslots * sizeof *slots);
    c->n++;
    return 0;
}

int bench_sample_space(tt_space *sp, size_t nslots, size_t max, bench_sample *s)
{
    uint64_t feasible = 0;
    if (max < 1) max = 1;
    tt_space_enumerate(sp, count_visit, &feasible, 0, NULL);
    *s = (bench_sample){NULL, 0, 0, nslots, 0, 1, feasible};
    s->stride = feasible > max ? feasible / max : 1;
    s->cap = feasible < max ? (size_t)feasible : max;
    s->slots = malloc((s->cap + 1) * s->nslots * sizeof *s->slots);
    if (!s->slots) return -1;
    tt_space_enumerate(sp, keep_visit, s, 0, NULL);
    return 0;
}

void bench_sample_free(bench_sample *s)
{
    if (!s) return;
    free(s->slots);
    s->slots = NULL;
    s->n = s->cap = 0;
}

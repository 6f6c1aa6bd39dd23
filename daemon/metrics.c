/* SPDX-License-Identifier: MIT
 * metrics.c - lock-free request counters and latency histograms, Prometheus text output.
 */
#include "metrics.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double tt_metrics_buckets[TT_METRICS_NBUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5, 10};

/* Statuses the API answers with; anything else is counted as "other". */
static const int tt_metrics_statuses[] = {200, 201, 202, 204, 400, 401, 403, 404,
                                          405, 409, 413, 422, 429, 500, 503};
#define TT_NSTATUS (sizeof tt_metrics_statuses / sizeof tt_metrics_statuses[0])

typedef struct tt_route_stats {
    _Atomic uint64_t by_status[TT_NSTATUS + 1];           /* + other */
    _Atomic uint64_t bucket[TT_METRICS_NBUCKETS + 1];     /* + +Inf */
    _Atomic uint64_t sum_ns;
} tt_route_stats;

struct tt_metrics {
    const char *const *names;
    size_t nroutes;
    tt_route_stats *r;        /* nroutes + 1 */
};

tt_metrics *tt_metrics_new(const char *const *route_names, size_t nroutes)
{
    tt_metrics *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->r = calloc(nroutes + 1, sizeof *m->r);
    if (!m->r) { free(m); return NULL; }
    for (size_t i = 0; i <= nroutes; i++) {
        for (size_t s = 0; s <= TT_NSTATUS; s++) atomic_init(&m->r[i].by_status[s], 0);
        for (size_t b = 0; b <= TT_METRICS_NBUCKETS; b++) atomic_init(&m->r[i].bucket[b], 0);
        atomic_init(&m->r[i].sum_ns, 0);
    }
    m->names = route_names;
    m->nroutes = nroutes;
    return m;
}

void tt_metrics_free(tt_metrics *m)
{
    if (!m) return;
    free(m->r);
    free(m);
}

static size_t tt_status_index(int status)
{
    for (size_t i = 0; i < TT_NSTATUS; i++)
        if (tt_metrics_statuses[i] == status) return i;
    return TT_NSTATUS;
}

void tt_metrics_observe(tt_metrics *m, size_t route, int status, double seconds)
{
    if (!m) return;
    if (route > m->nroutes) route = m->nroutes;
    tt_route_stats *r = &m->r[route];
    atomic_fetch_add_explicit(&r->by_status[tt_status_index(status)], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < TT_METRICS_NBUCKETS && seconds > tt_metrics_buckets[b]) b++;
    atomic_fetch_add_explicit(&r->bucket[b], 1, memory_order_relaxed);
    if (seconds < 0) seconds = 0;
    atomic_fetch_add_explicit(&r->sum_ns, (uint64_t)(seconds * 1e9), memory_order_relaxed);
}

uint64_t tt_metrics_count(const tt_metrics *m, size_t route, int status)
{
    if (!m) return 0;
    if (route > m->nroutes) route = m->nroutes;
    tt_route_stats *r = &m->r[route];
    return atomic_load_explicit(&r->by_status[tt_status_index(status)], memory_order_relaxed);
}

int tt_metrics_appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        size_t room = *cap - *len;
        va_list ap;
        va_start(ap, fmt);
        int n = *buf ? vsnprintf(*buf + *len, room, fmt, ap) : -2;
        va_end(ap);
        if (n == -1) return -1;
        if (n >= 0 && (size_t)n < room) { *len += (size_t)n; return 0; }
        size_t nc = *cap ? *cap * 2 : 4096;
        while (n >= 0 && nc - *len <= (size_t)n) nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return -1;
        *buf = nb;
        *cap = nc;
    }
}

int tt_metrics_render(const tt_metrics *m, char **buf, size_t *len, size_t *cap)
{
    if (!m) return 0;
    int e = 0;
    e |= tt_metrics_appendf(buf, len, cap,
                            "# HELP tiletune_http_requests_total HTTP requests by route and "
                            "status.\n# TYPE tiletune_http_requests_total counter\n");
    for (size_t i = 0; i <= m->nroutes; i++) {
        const char *name = i < m->nroutes ? m->names[i] : "unmatched";
        for (size_t s = 0; s <= TT_NSTATUS; s++) {
            uint64_t v = atomic_load_explicit(&m->r[i].by_status[s], memory_order_relaxed);
            if (!v) continue;
            char st[16];
            if (s < TT_NSTATUS) snprintf(st, sizeof st, "%d", tt_metrics_statuses[s]);
            else snprintf(st, sizeof st, "other");
            e |= tt_metrics_appendf(buf, len, cap,
                                    "tiletune_http_requests_total{route=\"%s\",status=\"%s\"} "
                                    "%llu\n", name, st, (unsigned long long)v);
        }
    }
    e |= tt_metrics_appendf(buf, len, cap,
                            "# HELP tiletune_http_request_duration_seconds HTTP request "
                            "latency by route.\n"
                            "# TYPE tiletune_http_request_duration_seconds histogram\n");
    for (size_t i = 0; i <= m->nroutes; i++) {
        const char *name = i < m->nroutes ? m->names[i] : "unmatched";
        uint64_t cum = 0;
        for (size_t b = 0; b <= TT_METRICS_NBUCKETS; b++)
            cum += atomic_load_explicit(&m->r[i].bucket[b], memory_order_relaxed);
        if (!cum) continue;
        uint64_t run = 0;
        for (size_t b = 0; b <= TT_METRICS_NBUCKETS; b++) {
            run += atomic_load_explicit(&m->r[i].bucket[b], memory_order_relaxed);
            char le[32];
            if (b < TT_METRICS_NBUCKETS) snprintf(le, sizeof le, "%g", tt_metrics_buckets[b]);
            else snprintf(le, sizeof le, "+Inf");
            e |= tt_metrics_appendf(buf, len, cap,
                                    "tiletune_http_request_duration_seconds_bucket{route=\"%s\","
                                    "le=\"%s\"} %llu\n", name, le, (unsigned long long)run);
        }
        uint64_t ns = atomic_load_explicit(&m->r[i].sum_ns, memory_order_relaxed);
        e |= tt_metrics_appendf(buf, len, cap,
                                "tiletune_http_request_duration_seconds_sum{route=\"%s\"} %.9f\n"
                                "tiletune_http_request_duration_seconds_count{route=\"%s\"} "
                                "%llu\n", name, (double)ns / 1e9, name,
                                (unsigned long long)run);
    }
    return e ? -1 : 0;
}

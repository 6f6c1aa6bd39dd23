/* SPDX-License-Identifier: MIT
 * metrics.h - request counters and latency histograms for GET /metrics (Prometheus text).
 *
 * One process-wide registry of fixed size: per route (index from the route table, plus
 * one slot for unmatched paths) a counter per HTTP status and a latency histogram with
 * fixed buckets.  Updates are lock-free (C11 relaxed atomics); a scrape reads the counters
 * without stopping writers, so a scrape may see a request counted but its latency not yet.
 *
 * Thread-safe.  Ownership: tt_metrics_new()/tt_metrics_free(); route names are borrowed
 * (static strings of the route table).
 */
#ifndef TT_METRICS_H
#define TT_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tt_metrics tt_metrics;

/* Latency bucket upper bounds in seconds (the last, +Inf, is implicit). */
#define TT_METRICS_NBUCKETS 12
extern const double tt_metrics_buckets[TT_METRICS_NBUCKETS];

/* nroutes route names (e.g. "GET /v1/jobs/{id}"); index nroutes is "unmatched". */
tt_metrics *tt_metrics_new(const char *const *route_names, size_t nroutes);
void tt_metrics_free(tt_metrics *m);

/* Count one request on route (nroutes or out of range: unmatched) with its status and
 * duration.  NULL m is a no-op. */
void tt_metrics_observe(tt_metrics *m, size_t route, int status, double seconds);
/* Count of requests seen on a route with a status (for tests). */
uint64_t tt_metrics_count(const tt_metrics *m, size_t route, int status);

/* Append the Prometheus text exposition of the request metrics to a malloc'd string
 * (buf, len and cap are updated as it grows).  Returns 0, or -1 when out of memory. */
int tt_metrics_render(const tt_metrics *m, char **buf, size_t *len, size_t *cap);

/* printf-append helper used by the renderer and by the /metrics handler. */
int tt_metrics_appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

/* SPDX-License-Identifier: MIT
 * http.h - the HTTP server of tiletuned (libmicrohttpd): parse, limit, authenticate,
 * route, answer; Server-Sent Events for job progress.
 *
 * Threading: MHD_USE_EPOLL_INTERNAL_THREAD with a pool of event loops (one per core by
 * default) and MHD_USE_TURBO.  Handlers of light routes run on the loops; heavy routes
 * (TT__ROUTE_HEAVY) are suspended and run on max_heavy workers (503 busy when all are taken);
 * SSE streams park themselves (suspend) between store polls.  http_conn.c owns the
 * connection list, limits, deadlines and those threads; daemon/README.md argues the choice.
 * The measurement workers never run on these threads (runner.h has its own).
 *
 * Per request: the body is accumulated up to max_body_bytes (a larger one is read and
 * discarded up to a bound, then answered 413; with Expect: 100-continue at once), the
 * route, token and query are checked from the headers (a request refused there that waits
 * for 100-continue is answered at once instead), its JSON nesting is checked against
 * max_json_depth before jansson parses it (400), bearer tokens are hashed with SHA-256 and compared in constant time
 * with the configured tokens only (401 unknown/missing, 403 insufficient scope; the store's
 * copies are a record, so removing a token from the config revokes it), and one line per
 * request is logged: debug for successes, info for refusals (4xx), warning for 5xx.
 *
 * Ownership: tt_http_start() borrows srv and auth (they must outlive the server).
 * tt_http_stop() stops accepting, ends SSE streams, joins every connection thread and frees.
 */
#ifndef TT_HTTP_H
#define TT_HTTP_H

#include "api.h"
#include "auth.h"
#include "tt_err.h"

typedef struct tt_http_opts {
    const char *listen;       /* "127.0.0.1:7878"; port 0 picks a free port */
    int timeout_s;            /* idle connection timeout (no bytes either way) */
    int max_connections;      /* served connections; beyond: 503 busy (reserve routes too) */
    int reserve;              /* extra connections for /healthz, /readyz, /metrics */
    int max_per_ip;           /* connections of one client address; beyond: 503 busy */
    double header_timeout_s;  /* connect (or previous answer) -> end of the request headers */
    double body_timeout_s;    /* end of headers -> end of the request body */
    int threads;              /* event-loop threads; 0: one per core */
    int max_heavy;            /* heavy requests queued or running at once (worker threads) */
    int turbo;                /* MHD_USE_TURBO */
    tt_budget anon, token;    /* request budgets by tier (cancelled/ctx/deadline unused) */
    double seconds_anon, seconds_token;   /* wall time of one request */
} tt_http_opts;

typedef struct tt_http tt_http;

/* Start listening.  TT_EINVAL for a bad address, TT_EIO when it cannot bind (err->msg says
 * why); *out is NULL then. */
tt_rc tt_http_start(tt_server *srv, const tt_auth *auth, const tt_http_opts *o, tt_http **out,
                    tt_errinfo *err);
/* The port actually bound. */
int tt_http_port(const tt_http *h);
/* Stop accepting, hand back in-flight heavy requests (503 unavailable), end SSE streams,
 * wait up to grace_s for the answers to go out, then stop and free (NULL accepted).
 * Returns 0, or -1 when a request still ran after grace_s: then nothing was freed and
 * the caller should exit without releasing what handlers may still use. */
int tt_http_stop(tt_http *h, double grace_s);

/* Deepest nesting of arrays/objects in a JSON text (strings are skipped); stops counting
 * once it exceeds limit and returns limit + 1. */
int tt_json_depth(const char *text, size_t len, int limit);

#endif

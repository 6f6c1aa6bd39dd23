/* SPDX-License-Identifier: MIT
 * http_int.h - internals shared by http.c (request path), http_send.c (answers, SSE streams)
 * and http_conn.c (connections, limits, the heavy-request pool, SSE wake-ups, shutdown); not
 * public.
 *
 * Thread-safety: tt_http.mu guards the connection list, the heavy queue and the list of
 * suspended SSE streams; the counters are atomics.  A tt_hconn belongs to the MHD thread
 * that serves its connection, except while its request is suspended: then the heavy worker
 * owns the request part (task) until it calls MHD_resume_connection().
 */
#ifndef TT_HTTP_INT_H
#define TT_HTTP_INT_H

#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "api_int.h"
#include "budget.h"
#include "http.h"

/* The answer of a heavy request, computed off the event loop (a tt_hconn's task). */
typedef enum { TT_TASK_NONE, TT_TASK_QUEUED, TT_TASK_RUNNING, TT_TASK_DONE } tt_task_state;

/* A Server-Sent Events stream of job progress (one per GET /v1/jobs/{id}/events). */
typedef struct tt_sse {
    struct tt_http *h;
    struct MHD_Connection *c;
    struct tt_sse *wnext;             /* tt_http.sse_wait while parked */
    int64_t id;
    int64_t last_done;
    int last_state;
    int started, ended;
    double last_emit, next_poll;
    char buf[2048];
    size_t blen, boff;
} tt_sse;

typedef struct tt_hconn tt_hconn;
struct tt_hconn {
    tt_hconn *prev, *next;            /* tt_http.conns (under mu) */
    struct tt_http *h;
    struct MHD_Connection *c;
    int fd;
    struct sockaddr_storage addr;
    int over_limit;                   /* 1: per-IP or global soft limit passed at connect */
    _Atomic long long deadline_ms;    /* reaper shuts the socket down after it; 0: none */
    /* the request in progress (reset by tt__hconn_reset after each request) */
    int in_request;
    double t0;
    char *body;
    size_t len, cap;
    int too_big;                      /* 1: discarding the body, answer 413; 2: answered */
    int gate;                         /* route matched and authorized from the headers (>= 0),
                                         or -1: hc->resp holds the refusal, the body is
                                         discarded */
    int acct;                         /* the route a refusal is counted on, or negative */
    /* heavy task */
    _Atomic int task;                 /* tt_task_state */
    tt_hconn *qnext;                  /* heavy queue link */
    size_t route;
    tt_req req;
    tt_resp resp;
    tt_budget budget;
    json_t *query, *jbody;
    char who[64];
    char allow[64];                   /* Allow header of a 405 answer ("GET, HEAD, DELETE") */
    char scratch[1024];
    double next_peek;                 /* next time the socket is checked for a hang-up */
};

struct tt_http {
    struct MHD_Daemon *d;
    tt_server *srv;
    const tt_auth *auth;
    tt_http_opts o;
    int port;
    int keepalive_s;
    _Atomic int stopping;
    _Atomic int nconn;                /* open connections */
    _Atomic int inflight;             /* requests between headers and completion */
    pthread_mutex_t mu;
    pthread_cond_t cv;                /* reaper / SSE ticker wake-up (CLOCK_MONOTONIC) */
    pthread_cond_t qcv;               /* heavy queue */
    int quit;                         /* threads end (under mu) */
    tt_hconn *conns;
    tt_hconn *qhead, *qtail;          /* heavy requests waiting for a worker */
    int heavy_used;                   /* queued + running heavy requests */
    pthread_t *workers;
    int nworkers;
    pthread_t reaper;
    int reaper_started;
    tt_sse *sse_wait;                 /* suspended SSE streams, resumed every tick */
    /* their addresses mark refused requests (con_cls, tt_uri_hook) */
    char many_args, long_uri, nul_byte, nul_query;
};

/* Answers (http_send.c).  tt__send: queue status + body (taken: freed by MHD) with
 * Cache-Control: no-store, Retry-After on 429/503, Allow when allow is non-empty, and the
 * {name, value, ..., NULL} pairs of extra.  tt__send_resp: resp's text, else its JSON
 * (newline-terminated; resp->text is taken).  tt__send_sse: the job's event stream. */
enum MHD_Result tt__send(struct MHD_Connection *c, int status, const char *ctype, char *body,
                         size_t len, int close_after, const char *allow,
                         const char *const *extra);
enum MHD_Result tt__send_resp(struct MHD_Connection *c, tt_resp *resp, int close_after,
                              const char *allow);
enum MHD_Result tt__send_sse(tt_http *h, struct MHD_Connection *c, int64_t id);

/* Connections (http_conn.c). */
void tt__http_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                     enum MHD_ConnectionNotificationCode code);
/* Reset the per-request part of a connection after its request ended. */
void tt__hconn_reset(tt_hconn *hc);
/* 1 when this connection may not be served now (per-IP / global limits). */
int tt__hconn_over_limit(const tt_hconn *hc);
/* Heavy pool: take a slot (TT_EBUSY when max_heavy_requests are queued or running), then,
 * after MHD_suspend_connection(), queue the request; a worker runs its handler and resumes
 * the connection, whose access handler then sends hc->resp. */
tt_rc tt__heavy_reserve(tt_http *h);
void tt__heavy_enqueue(tt_http *h, tt_hconn *hc);
/* The cancellation hook of a heavy request's budget (budget.h). */
int tt__hconn_cancelled(void *ctx, tt_rc *why);
/* Start / stop the reaper + SSE ticker and the heavy workers. */
int tt__http_threads_start(tt_http *h);
void tt__http_threads_stop(tt_http *h);
/* SSE: suspend a stream until the next tick (called by its content reader, which then
 * returns 0).  0 when the server is stopping (the stream must end instead). */
int tt__sse_park(tt_http *h, tt_sse *e);
/* Resume every parked stream (the ticker, and shutdown). */
void tt__sse_wake_all(tt_http *h);

#endif

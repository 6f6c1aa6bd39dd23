/* SPDX-License-Identifier: MIT
 * http_conn.c - the HTTP server's connections: tracking, per-IP and global limits, header
 * and body deadlines (the reaper), the pool that runs heavy requests off the event loop, and
 * the wake-ups of suspended SSE streams.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_int.h"
#include "log.h"

#define TT_TICK_MS 100            /* reaper period; SSE streams are woken every 2 ticks */
#define TT_OVER_LIMIT_HEADER_MS 1000

static long long tt_ms_now(void) { return (long long)(tt_budget_now() * 1000.0); }

static int tt_addr_eq(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) return 0;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->ss_family == AF_INET6)
        return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
    return 0;
}

static void tt_hconn_open(tt_http *h, struct MHD_Connection *c, void **socket_context)
{
    tt_hconn *hc = calloc(1, sizeof *hc);
    *socket_context = hc;
    if (!hc) return;                 /* tt_access refuses the connection */
    hc->h = h;
    hc->c = c;
    hc->fd = -1;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci) hc->fd = ci->connect_fd;
    ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr) {
        size_t n = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                          : sizeof(struct sockaddr_in);
        memcpy(&hc->addr, ci->client_addr, n);
    }
    int total = atomic_fetch_add(&h->nconn, 1) + 1;
    int same = 0;
    pthread_mutex_lock(&h->mu);
    for (const tt_hconn *p = h->conns; p; p = p->next)
        if (tt_addr_eq(&p->addr, &hc->addr)) same++;
    hc->next = h->conns;
    if (h->conns) h->conns->prev = hc;
    h->conns = hc;
    pthread_mutex_unlock(&h->mu);
    hc->over_limit = same >= h->o.max_per_ip || total > h->o.max_connections;
    long long hdr = (long long)(h->o.header_timeout_s * 1000.0);
    if (hc->over_limit && hdr > TT_OVER_LIMIT_HEADER_MS) hdr = TT_OVER_LIMIT_HEADER_MS;
    atomic_store(&hc->deadline_ms, tt_ms_now() + hdr);
}

void tt__http_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                     enum MHD_ConnectionNotificationCode code)
{
    tt_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        tt_hconn_open(h, c, socket_context);
        return;
    }
    tt_hconn *hc = *socket_context;
    if (!hc) return;
    pthread_mutex_lock(&h->mu);      /* after this, the reaper no longer sees the socket */
    if (hc->prev) hc->prev->next = hc->next;
    else h->conns = hc->next;
    if (hc->next) hc->next->prev = hc->prev;
    pthread_mutex_unlock(&h->mu);
    atomic_fetch_sub(&h->nconn, 1);
    tt__hconn_reset(hc);
    free(hc->body);
    free(hc);
    *socket_context = NULL;
}

void tt__hconn_reset(tt_hconn *hc)
{
    if (hc->cap > 65536) {           /* keep a small buffer for the next request only */
        free(hc->body);
        hc->body = NULL;
        hc->cap = 0;
    }
    hc->len = 0;
    hc->too_big = 0;
    json_decref(hc->query);
    json_decref(hc->jbody);
    hc->query = hc->jbody = NULL;
    json_decref(hc->resp.json);
    free(hc->resp.text);
    memset(&hc->resp, 0, sizeof hc->resp);
    memset(&hc->req, 0, sizeof hc->req);
    atomic_store(&hc->task, TT_TASK_NONE);
    hc->who[0] = '\0';
    hc->allow[0] = '\0';
}

int tt__hconn_over_limit(const tt_hconn *hc) { return hc->over_limit; }

int tt__hconn_cancelled(void *ctx, tt_rc *why)
{
    tt_hconn *hc = ctx;
    if (atomic_load(&hc->h->stopping)) {
        *why = TT_EUNAVAILABLE;
        return 1;
    }
    double now = tt_budget_now();
    if (now < hc->next_peek || hc->fd < 0) return 0;
    hc->next_peek = now + 0.02;      /* one poll() per 20 ms at most */
    struct pollfd p = {hc->fd, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
        *why = TT_ECANCELLED;
        return 1;
    }
    return 0;
}

/* ---- heavy requests ----------------------------------------------------------------- */
tt_rc tt__heavy_reserve(tt_http *h)
{
    tt_rc rc = TT_OK;
    pthread_mutex_lock(&h->mu);
    if (h->heavy_used >= h->nworkers) rc = TT_EBUSY;
    else h->heavy_used++;
    pthread_mutex_unlock(&h->mu);
    return rc;
}

void tt__heavy_enqueue(tt_http *h, tt_hconn *hc)
{
    atomic_store(&hc->task, TT_TASK_QUEUED);
    hc->qnext = NULL;
    pthread_mutex_lock(&h->mu);
    if (h->qtail) h->qtail->qnext = hc;
    else h->qhead = hc;
    h->qtail = hc;
    pthread_cond_signal(&h->qcv);
    pthread_mutex_unlock(&h->mu);
}

static void *tt_heavy_main(void *ud)
{
    tt_http *h = ud;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (!h->qhead && !h->quit) pthread_cond_wait(&h->qcv, &h->mu);
        tt_hconn *hc = h->qhead;
        if (!hc) break;
        h->qhead = hc->qnext;
        if (!h->qhead) h->qtail = NULL;
        pthread_mutex_unlock(&h->mu);
        atomic_store(&hc->task, TT_TASK_RUNNING);
        const tt__route *rt = tt__route_at(hc->route);
        tt_errinfo e;
        tt_errinfo_clear(&e);
        hc->resp.status = 200;
        if (tt_budget_check(&hc->budget, &e)) tt_resp_errinfo(&hc->resp, &e);
        else rt->fn(h->srv, &hc->req, &hc->resp);
        atomic_store(&hc->task, TT_TASK_DONE);
        struct MHD_Connection *c = hc->c;
        pthread_mutex_lock(&h->mu);
        h->heavy_used--;
        pthread_mutex_unlock(&h->mu);
        MHD_resume_connection(c);    /* hc belongs to the event loop again */
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* ---- SSE wake-ups ------------------------------------------------------------------- */
int tt__sse_park(tt_http *h, tt_sse *e)
{
    pthread_mutex_lock(&h->mu);
    if (atomic_load(&h->stopping)) {
        pthread_mutex_unlock(&h->mu);
        return 0;
    }
    MHD_suspend_connection(e->c);
    e->wnext = h->sse_wait;
    h->sse_wait = e;
    pthread_mutex_unlock(&h->mu);
    return 1;
}

/* Resume every parked stream.  Take the list first and read each link before resuming its
 * connection: once resumed, the event loop may end the stream and free it (tt_sse_free) at
 * once, while streams not yet resumed stay suspended and so stay allocated. */
static void tt_sse_wake_locked(tt_http *h)
{
    tt_sse *e = h->sse_wait;
    h->sse_wait = NULL;
    while (e) {
        tt_sse *next = e->wnext;
        MHD_resume_connection(e->c);
        e = next;
    }
}

void tt__sse_wake_all(tt_http *h)
{
    pthread_mutex_lock(&h->mu);
    tt_sse_wake_locked(h);
    pthread_mutex_unlock(&h->mu);
}

/* ---- the reaper: header/body deadlines and the SSE tick ------------------------------ */
static void *tt_reaper_main(void *ud)
{
    tt_http *h = ud;
    unsigned tick = 0;
    pthread_mutex_lock(&h->mu);
    while (!h->quit) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += TT_TICK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
        if (h->quit) break;
        long long now = tt_ms_now();
        for (tt_hconn *p = h->conns; p; p = p->next) {
            long long dl = atomic_load(&p->deadline_ms);
            if (dl && now > dl && p->fd >= 0) {
                /* the fd stays valid: MHD closes it only after the CLOSED notification,
                 * which waits for this mutex */
                shutdown(p->fd, SHUT_RDWR);
                atomic_store(&p->deadline_ms, 0);
                tt_debug("http: connection %d closed: %s not received in time", p->fd,
                         p->in_request ? "request body" : "request headers");
            }
        }
        if (++tick % 2 == 0) tt_sse_wake_locked(h);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int tt__http_threads_start(tt_http *h)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_mutex_init(&h->mu, NULL) || pthread_cond_init(&h->cv, &ca) ||
        pthread_cond_init(&h->qcv, NULL)) {
        pthread_condattr_destroy(&ca);
        return -1;
    }
    pthread_condattr_destroy(&ca);
    h->workers = calloc((size_t)h->o.max_heavy, sizeof *h->workers);
    if (!h->workers) return -1;
    for (int i = 0; i < h->o.max_heavy; i++) {
        if (pthread_create(&h->workers[i], NULL, tt_heavy_main, h)) return -1;
        h->nworkers++;
    }
    if (pthread_create(&h->reaper, NULL, tt_reaper_main, h)) return -1;
    h->reaper_started = 1;
    return 0;
}

void tt__http_threads_stop(tt_http *h)
{
    pthread_mutex_lock(&h->mu);
    h->quit = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_cond_broadcast(&h->qcv);
    pthread_mutex_unlock(&h->mu);
    for (int i = 0; i < h->nworkers; i++) pthread_join(h->workers[i], NULL);
    if (h->reaper_started) pthread_join(h->reaper, NULL);
    free(h->workers);
    h->workers = NULL;
    h->nworkers = 0;
    h->reaper_started = 0;
}

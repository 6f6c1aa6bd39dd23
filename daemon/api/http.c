/* SPDX-License-Identifier: MIT
 * http.c - libmicrohttpd glue: body limits, JSON depth, bearer tokens, routing, SSE.
 */
#include "http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api_int.h"
#include "config.h"
#include "jsonutil.h"
#include "log.h"
#include "metrics.h"

struct tt_http {
    struct MHD_Daemon *d;
    tt_server *srv;
    const tt_auth *auth;
    int port;
    _Atomic int stopping;
    int keepalive_s;
};

/* Per-request state (MHD's con_cls). */
typedef struct tt_conn {
    double t0;
    char *body;
    size_t len, cap;
    int too_big;
    int headers_seen;
} tt_conn;

static double tt_now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tt_json_depth(const char *text, size_t len, int limit)
{
    int depth = 0, maxd = 0, in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = 0;
            continue;
        }
        if (c == '"') in_str = 1;
        else if (c == '[' || c == '{') {
            if (++depth > maxd) {
                maxd = depth;
                if (maxd > limit) return limit + 1;
            }
        } else if (c == ']' || c == '}') {
            if (depth > 0) depth--;
        }
    }
    return maxd;
}

/* ---- responses ---------------------------------------------------------------------- */
static enum MHD_Result tt_send(struct MHD_Connection *c, int status, const char *ctype,
                               char *body, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) { free(body); return MHD_NO; }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result tt_send_resp(struct MHD_Connection *c, tt_resp *resp)
{
    if (resp->text) {
        char *t = resp->text;
        resp->text = NULL;
        return tt_send(c, resp->status, resp->content_type ? resp->content_type : "text/plain",
                       t, strlen(t));
    }
    char *s = resp->json ? tt_json_dumps(resp->json, JSON_COMPACT) : strdup("");
    if (!s) s = strdup("{\"error\":{\"code\":\"out_of_memory\",\"message\":\"out of memory\"}}");
    if (!s) return MHD_NO;
    size_t n = strlen(s);
    if (resp->json) {          /* newline-terminated JSON reads better with curl */
        char *s2 = realloc(s, n + 2);
        if (s2) { s = s2; s[n++] = '\n'; s[n] = '\0'; }
    }
    return tt_send(c, resp->status, "application/json", s, n);
}

/* ---- Server-Sent Events ------------------------------------------------------------- */
typedef struct tt_sse {
    tt_http *h;
    int64_t id;
    int64_t last_done;
    int last_state;
    int started, ended;
    double last_emit;
    char buf[2048];
    size_t blen, boff;
} tt_sse;

static ssize_t tt_sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    tt_sse *e = cls;
    if (e->boff < e->blen) {
        size_t n = e->blen - e->boff < max ? e->blen - e->boff : max;
        memcpy(out, e->buf + e->boff, n);
        e->boff += n;
        return (ssize_t)n;
    }
    if (e->ended || atomic_load(&e->h->stopping)) return MHD_CONTENT_READER_END_OF_STREAM;
    if (e->started) {          /* poll the store every ~200 ms (this is our own thread) */
        for (int i = 0; i < 4 && !atomic_load(&e->h->stopping); i++) usleep(50 * 1000);
        if (atomic_load(&e->h->stopping)) return MHD_CONTENT_READER_END_OF_STREAM;
    }
    e->started = 1;
    int finished = 0;
    int n = tt__job_event(e->h->srv->store, e->id, e->buf, sizeof e->buf, &e->last_done,
                          &e->last_state, &finished);
    if (n < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
    e->blen = (size_t)n;
    e->boff = 0;
    if (finished) {
        int m = snprintf(e->buf + e->blen, sizeof e->buf - e->blen,
                         "event: end\ndata: {\"job\":%lld,\"state\":\"%s\"}\n\n",
                         (long long)e->id, tt_job_state_name((tt_job_state)e->last_state));
        if (m > 0 && (size_t)m < sizeof e->buf - e->blen) e->blen += (size_t)m;
        e->ended = 1;
    }
    double now = tt_now_mono();
    if (e->blen == 0 && now - e->last_emit >= e->h->keepalive_s) {
        e->blen = (size_t)snprintf(e->buf, sizeof e->buf, ": keep-alive\n\n");
    }
    if (e->blen == 0) return 0;        /* nothing new: MHD calls again (we slept above) */
    e->last_emit = now;
    size_t k = e->blen < max ? e->blen : max;
    memcpy(out, e->buf, k);
    e->boff = k;
    return (ssize_t)k;
}

static void tt_sse_free(void *cls) { free(cls); }

static enum MHD_Result tt_send_sse(tt_http *h, struct MHD_Connection *c, int64_t id)
{
    tt_sse *e = calloc(1, sizeof *e);
    if (!e) return MHD_NO;
    e->h = h;
    e->id = id;
    e->last_done = -1;
    e->last_state = -1;
    e->last_emit = tt_now_mono();
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, tt_sse_read, e, tt_sse_free);
    if (!r) { free(e); return MHD_NO; }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- request handling --------------------------------------------------------------- */
static enum MHD_Result tt_query_it(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    if (key) json_object_set_new((json_t *)cls, key, json_string(value ? value : ""));
    return MHD_YES;
}

/* Authenticate: fills name/scopes, or returns TT_EUNAUTH for a bad token.  No header:
 * TT_OK with scopes 0. */
static tt_rc tt_authenticate(tt_http *h, struct MHD_Connection *c, char name[64], int *scopes)
{
    name[0] = '\0';
    *scopes = 0;
    const char *hdr = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!hdr) return TT_OK;
    size_t len;
    const char *secret = tt_auth_bearer(hdr, &len);
    if (!secret) return TT_EUNAUTH;
    /* Only the configured tokens count: the copies in the store are a record, so that
     * removing a token from the config and restarting revokes it. */
    if (tt_auth_check(h->auth, secret, len, name, scopes) == TT_OK) return TT_OK;
    name[0] = '\0';
    *scopes = 0;
    return TT_EUNAUTH;
}

static void tt_finish(tt_http *h, struct MHD_Connection *c, tt_conn *cc, const char *method,
                      const char *url, size_t route, int status, const char *who)
{
    (void)c;
    (void)h;
    double dt = tt_now_mono() - cc->t0;
    tt_metrics_observe(tt__api_get_metrics(), route, status, dt);
    if (status >= 500) tt_warning("%s %s %d %.3fms token=%s", method, url, status, dt * 1e3, who);
    else if (status >= 400) tt_info("%s %s %d %.3fms token=%s", method, url, status, dt * 1e3, who);
    else tt_debug("%s %s %d %.3fms token=%s", method, url, status, dt * 1e3, who);
}

static enum MHD_Result tt_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)version;
    tt_http *h = cls;
    tt_server *srv = h->srv;
    tt_conn *cc = *con_cls;
    size_t nroutes = tt__route_count();
    if (!cc) {
        cc = calloc(1, sizeof *cc);
        if (!cc) return MHD_NO;
        cc->t0 = tt_now_mono();
        *con_cls = cc;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > srv->max_body_bytes) {
            tt_resp resp = {0};
            tt_resp_error(&resp, TT_ETOOBIG, NULL, "request body of %s bytes exceeds the "
                          "limit of %zu bytes", cl, srv->max_body_bytes);
            enum MHD_Result ret = tt_send_resp(c, &resp);
            tt_req tmp;
            char scratch[1024];
            int known = 0;
            int ri = tt__route_match(method, url, &tmp, scratch, sizeof scratch, &known);
            tt_finish(h, c, cc, method, url, ri < 0 ? nroutes : (size_t)ri, resp.status, "-");
            json_decref(resp.json);
            cc->too_big = 2;       /* answered */
            return ret;
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (cc->too_big == 2) { *upload_size = 0; return MHD_YES; }
        if (!cc->too_big && cc->len + *upload_size > srv->max_body_bytes) {
            cc->too_big = 1;
            free(cc->body);
            cc->body = NULL;
            cc->len = cc->cap = 0;
        }
        if (!cc->too_big) {
            if (cc->len + *upload_size + 1 > cc->cap) {
                size_t nc = cc->cap ? cc->cap : 4096;
                while (nc < cc->len + *upload_size + 1) nc *= 2;
                char *nb = realloc(cc->body, nc);
                if (!nb) return MHD_NO;
                cc->body = nb;
                cc->cap = nc;
            }
            memcpy(cc->body + cc->len, upload_data, *upload_size);
            cc->len += *upload_size;
            cc->body[cc->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (cc->too_big == 2) return MHD_YES;   /* 413 already queued */

    /* The whole request is here. */
    tt_resp resp = {0};
    tt_req req;
    memset(&req, 0, sizeof req);
    req.method = method;
    req.path = url;
    req.accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    char scratch[1024];
    int path_known = 0;
    int ri = -1;
    char who[64] = "";
    json_t *query = NULL, *body = NULL;
    enum MHD_Result ret;

    if (cc->too_big) {
        tt_resp_error(&resp, TT_ETOOBIG, NULL, "request body exceeds the limit of %zu bytes",
                      srv->max_body_bytes);
        goto send;
    }
    ri = tt__route_match(method, url, &req, scratch, sizeof scratch, &path_known);
    if (ri < 0) {
        if (path_known)
            tt_resp_error(&resp, TT_EMETHOD, NULL, "%s is not allowed on %s", method, url);
        else
            tt_resp_error(&resp, TT_ENOTFOUND, NULL, "no route %s %s", method, url);
        goto send;
    }
    const tt__route *rt = tt__route_at((size_t)ri);
    int scopes = 0;
    if (rt->scope != TT__ROUTE_PUBLIC) {
        if (tt_authenticate(h, c, who, &scopes) != TT_OK) {
            tt_resp_error(&resp, TT_EUNAUTH, NULL, "unknown or malformed bearer token");
            goto send;
        }
        int open = rt->scope == TT_SCOPE_READ && srv->open_reads;
        if (!open && !who[0]) {
            tt_resp_error(&resp, TT_EUNAUTH, NULL,
                          "this route needs a bearer token with scope %s",
                          rt->scope == TT_SCOPE_ADMIN ? "admin"
                          : rt->scope == TT_SCOPE_TUNE ? "tune" : "read");
            goto send;
        }
        if (!open && !(scopes & rt->scope)) {
            tt_resp_error(&resp, TT_EFORBIDDEN, NULL, "token %s lacks scope %s", who,
                          rt->scope == TT_SCOPE_ADMIN ? "admin"
                          : rt->scope == TT_SCOPE_TUNE ? "tune" : "read");
            goto send;
        }
    }
    req.token_name = who;
    req.scopes = scopes;
    query = json_object();
    if (!query) { tt_resp_error(&resp, TT_ENOMEM, NULL, "out of memory"); goto send; }
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, tt_query_it, query);
    req.query = query;
    if (cc->len) {
        req.raw_body = cc->body;
        req.raw_len = cc->len;
        if (!(rt->flags & TT__ROUTE_NOJSON)) {
            if (tt_json_depth(cc->body, cc->len, srv->max_json_depth) > srv->max_json_depth) {
                tt_resp_error(&resp, TT_EJSON, NULL, "JSON nesting deeper than %d",
                              srv->max_json_depth);
                goto send;
            }
            json_error_t je;
            body = json_loadb(cc->body, cc->len, JSON_REJECT_DUPLICATES, &je);
            if (!body) {
                tt_resp_error(&resp, TT_EJSON, NULL, "line %d column %d: %s", je.line,
                              je.column, je.text);
                goto send;
            }
            req.body = body;
        }
    }
    resp.status = 200;
    rt->fn(srv, &req, &resp);
    if ((rt->flags & TT__ROUTE_SSE) && resp.status == 200 && !resp.json && !resp.text) {
        ret = tt_send_sse(h, c, strtoll(req.params[0], NULL, 10));
        tt_finish(h, c, cc, method, url, (size_t)ri, 200, who[0] ? who : "-");
        json_decref(query);
        json_decref(body);
        return ret;
    }
send:
    if (!resp.json && !resp.text && resp.status != 204)
        tt_resp_error(&resp, TT_EINTERNAL, NULL, "handler gave no answer");
    ret = tt_send_resp(c, &resp);
    tt_finish(h, c, cc, method, url, ri < 0 ? nroutes : (size_t)ri, resp.status,
              who[0] ? who : "-");
    json_decref(resp.json);
    free(resp.text);
    json_decref(query);
    json_decref(body);
    return ret;
}

static void tt_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    tt_conn *cc = *con_cls;
    if (!cc) return;
    free(cc->body);
    free(cc);
    *con_cls = NULL;
}

/* libmicrohttpd's error logger: fmt comes from the library, so it is a format by contract. */
__attribute__((format(printf, 2, 0)))
static void tt_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    tt_info("http: %s", msg);
}

tt_rc tt_http_start(tt_server *srv, const tt_auth *auth, const tt_http_opts *o, tt_http **out,
                    tt_errinfo *err)
{
    *out = NULL;
    char host[128];
    int port;
    if (tt_config_split_listen(o->listen, host, sizeof host, &port))
        return tt_errf(err, TT_EINVAL, "listen", "expected HOST:PORT, got \"%.64s\"",
                       o->listen ? o->listen : "");
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int gai = getaddrinfo(host, ps, &hints, &ai);
    if (gai || !ai)
        return tt_errf(err, TT_EINVAL, "listen", "cannot resolve %s: %s", host,
                       gai_strerror(gai));
    tt_http *h = calloc(1, sizeof *h);
    if (!h) { freeaddrinfo(ai); return tt_errf(err, TT_ENOMEM, NULL, "out of memory"); }
    h->srv = srv;
    h->auth = auth;
    h->keepalive_s = o->timeout_s > 10 ? 5 : (o->timeout_s + 1) / 2;
    atomic_init(&h->stopping, 0);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ITC;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    h->d = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, tt_access, h, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)o->max_connections, MHD_OPTION_NOTIFY_COMPLETED, tt_completed, h,
        MHD_OPTION_EXTERNAL_LOGGER, tt_mhd_log, h, MHD_OPTION_LISTEN_BACKLOG_SIZE, 512u,
        MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->d) {
        free(h);
        return tt_errf(err, TT_EIO, "listen", "cannot listen on %s (address in use?)",
                       o->listen);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : port;
    *out = h;
    return TT_OK;
}

int tt_http_port(const tt_http *h) { return h ? h->port : 0; }

void tt_http_stop(tt_http *h)
{
    if (!h) return;
    atomic_store(&h->stopping, 1);
    MHD_socket s = MHD_quiesce_daemon(h->d);   /* stop accepting first */
    MHD_stop_daemon(h->d);                     /* joins the connection threads */
    if (s != MHD_INVALID_SOCKET) close(s);
    free(h);
}

/* SPDX-License-Identifier: MIT
 * http.c - libmicrohttpd glue: the request path (URI and header limits, body, JSON depth,
 * bearer tokens, routing, the heavy pool hand-off); answers and SSE are in http_send.c.
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

#include "config.h"
#include "http_int.h"
#include "jsonutil.h"
#include "log.h"
#include "metrics.h"

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

/* ---- request handling --------------------------------------------------------------- */
typedef struct tt_query_acc {
    json_t *q;
    int bad;                    /* an argument was not valid UTF-8 */
    char dup[64];               /* the first argument given twice ("" when none) */
} tt_query_acc;

static enum MHD_Result tt_query_it(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    tt_query_acc *a = cls;
    int rc = key ? tt__query_add(a->q, key, value) : 0;
    if (rc < 0) a->bad = 1;
    else if (rc > 0 && !a->dup[0]) snprintf(a->dup, sizeof a->dup, "%s", key);
    return MHD_YES;
}

static enum MHD_Result tt_auth_header_count(void *cls, enum MHD_ValueKind kind,
                                            const char *key, const char *value)
{
    (void)kind;
    (void)value;
    if (key && !strcasecmp(key, "Authorization")) (*(unsigned *)cls)++;
    return MHD_YES;
}

/* Authenticate: fills name/scopes, or returns TT_EUNAUTH for a bad token with *why set.  No
 * header: TT_OK with scopes 0.  Two Authorization headers are refused, as a repeated query
 * argument is: neither token may win silently. */
static tt_rc tt_authenticate(tt_http *h, struct MHD_Connection *c, char name[64], int *scopes,
                             const char **why)
{
    name[0] = '\0';
    *scopes = 0;
    *why = "unknown or malformed bearer token";
    unsigned n = 0;
    MHD_get_connection_values(c, MHD_HEADER_KIND, tt_auth_header_count, &n);
    if (n > 1) {
        *why = "the Authorization header is given more than once: send one bearer token";
        return TT_EUNAUTH;
    }
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

static void tt_finish(const tt_hconn *hc, const char *method, const char *url, size_t route,
                      int status, const char *who)
{
    double dt = tt_now_mono() - hc->t0;
    tt_metrics_observe(tt__api_get_metrics(), route, status, dt);
    if (status >= 500) tt_warning("%s %s %d %.3fms token=%s", method, url, status, dt * 1e3, who);
    else if (status >= 400) tt_info("%s %s %d %.3fms token=%s", method, url, status, dt * 1e3, who);
    else tt_debug("%s %s %d %.3fms token=%s", method, url, status, dt * 1e3, who);
}

/* Answer an error now (before the body is read: too_big = 2 marks it answered). */
static enum MHD_Result tt_refuse(tt_hconn *hc, struct MHD_Connection *c, const char *method,
                                 const char *url, tt_rc rc, int close_after, const char *msg)
{
    tt_resp resp = {0};
    tt_resp_error(&resp, rc, NULL, "%s", msg);
    tt__ui_refusal(hc->h->srv, url, &resp);
    enum MHD_Result ret = tt__send_resp(c, &resp, close_after, NULL);
    tt_req tmp;
    int known = 0;
    int ri = tt__route_match(method, url, &tmp, hc->scratch, sizeof hc->scratch, &known);
    tt_finish(hc, method, url, ri < 0 ? tt__route_count() : (size_t)ri, resp.status, "-");
    json_decref(resp.json);
    hc->too_big = 2;
    return ret;
}

static int tt_reserved_path(const char *url)
{
    return !strcmp(url, "/healthz") || !strcmp(url, "/readyz") || !strcmp(url, "/metrics");
}

#define TT_MAX_QUERY_ARGS 256
#define TT_MAX_URI 8192
#define TT_MAX_HEADER_BYTES 16384   /* header fields of one request, names + values */
#define TT_MAX_HEADERS 100

typedef struct tt_header_sum {
    size_t bytes;
    unsigned n;
} tt_header_sum;

static enum MHD_Result tt_header_add(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    tt_header_sum *sum = cls;
    sum->bytes += (key ? strlen(key) : 0) + (value ? strlen(value) : 0) + 4;   /* ": ", CRLF */
    sum->n++;
    return MHD_YES;
}

/* 1 when the raw (still %-encoded) bytes [p, end) hold "%00": MHD decodes it into a NUL
 * byte, which ends the C string of the path or argument, so "/v1/jobs/1%00x" would read as
 * job 1. */
static int tt_has_nul(const char *p, const char *end)
{
    for (p = strchr(p, '%'); p && p < end; p = strchr(p + 1, '%'))
        if (p[1] == '0' && p[2] == '0') return 1;
    return 0;
}

/* MHD's URI hook runs before it files the query arguments in the connection's 32 KiB pool;
 * past ~500 arguments that pool overflows and MHD 0.9.75 then hangs instead of answering.
 * So the raw query string is cut after TT_MAX_QUERY_ARGS arguments here (MHD's own buffer,
 * which it modifies itself right after this call), and the request is marked: the value
 * returned becomes its con_cls, and tt_begin answers 400.  A URI with an encoded NUL byte
 * (%00) is marked too (400 bad_encoding): decoded, it would cut the path or argument short.
 * The probes (/healthz, /readyz, /metrics) ignore their query arguments, so tt_begin lets
 * them pass marks 1 and 4, and an over-long query of theirs is cut here, not refused. */
static void *tt_uri_hook(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)c;
    tt_http *h = cls;
    const char *q = strchr(uri, '?');
    size_t plen = q ? (size_t)(q - uri) : strlen(uri);
    if (strlen(uri) > TT_MAX_URI) {     /* MHD's pool would be too full to answer at all */
        if (q) *(char *)(q + 1) = '\0';  /* MHD parses what follows '?' next */
        char path[16];
        if (plen < sizeof path) {
            memcpy(path, uri, plen);
            path[plen] = '\0';
            if (tt_reserved_path(path)) return NULL;
        }
        *(char *)uri = '\0';
        return &h->long_uri;
    }
    if (tt_has_nul(uri, uri + plen)) return &h->nul_byte;
    if (q && tt_has_nul(q, q + strlen(q))) return &h->nul_query;
    int n = 1;
    for (const char *p = q; p && *p; p++) {
        if (*p == '&' && ++n > TT_MAX_QUERY_ARGS) {
            *(char *)p = '\0';
            return &h->many_args;
        }
    }
    return NULL;
}

typedef struct tt_framing {
    unsigned ncl, nte;
    const char *cl, *te;        /* the first of each */
    int cl_differ;              /* a later Content-Length differs from the first */
} tt_framing;

static enum MHD_Result tt_framing_add(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    (void)kind;
    tt_framing *f = cls;
    if (!key) return MHD_YES;
    if (!value) value = "";
    if (!strcasecmp(key, "Content-Length")) {
        if (f->ncl++ == 0) f->cl = value;
        else if (strcmp(f->cl, value)) f->cl_differ = 1;
    } else if (!strcasecmp(key, "Transfer-Encoding")) {
        if (f->nte++ == 0) f->te = value;
    }
    return MHD_YES;
}

/* How the body is delimited must be unambiguous (RFC 9112 6.3): MHD reads the first of two
 * Content-Length headers, and a proxy in front may read the other one, or Content-Length
 * where MHD reads chunks, and a body MHD cannot delimit (Transfer-Encoding: gzip) made it
 * wait for body_timeout without an answer.  NULL, or why the request is refused (400). */
static const char *tt_framing_error(struct MHD_Connection *c)
{
    tt_framing f = {0, 0, NULL, NULL, 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, tt_framing_add, &f);
    if (f.cl_differ) return "Content-Length is given more than once with different values";
    if (f.nte && f.ncl) return "both Content-Length and Transfer-Encoding are given";
    if (f.nte > 1) return "Transfer-Encoding is given more than once";
    if (f.nte && strcasecmp(f.te, "chunked"))
        return "Transfer-Encoding must be chunked (no other transfer coding is supported)";
    return NULL;
}

/* First call of a request: the headers are in.  Limits that need no body are checked here. */
static enum MHD_Result tt_begin(tt_http *h, tt_hconn *hc, struct MHD_Connection *c,
                                const char *url, const char *method, void **con_cls,
                                int marked)
{
    tt_server *srv = h->srv;
    *con_cls = hc;
    hc->in_request = 1;
    atomic_fetch_add(&h->inflight, 1);
    hc->t0 = tt_now_mono();
    atomic_store(&hc->deadline_ms, (long long)((hc->t0 + h->o.body_timeout_s) * 1000.0));
    char msg[200];
    if (atomic_load(&h->stopping))
        return tt_refuse(hc, c, method, url, TT_EUNAVAILABLE, 1, "the server is shutting down");
    if (hc->over_limit && !tt_reserved_path(url)) {
        snprintf(msg, sizeof msg, "too many connections (max_connections %d, "
                 "max_connections_per_ip %d); retry later", h->o.max_connections,
                 h->o.max_per_ip);
        return tt_refuse(hc, c, method, url, TT_EBUSY, 1, msg);
    }
    if ((marked == 1 || marked == 4) && tt_reserved_path(url)) marked = 0;
    if (marked == 1) {
        snprintf(msg, sizeof msg, "more than %d query arguments", TT_MAX_QUERY_ARGS);
        return tt_refuse(hc, c, method, url, TT_EINVAL, 1, msg);
    }
    if (marked == 2) {
        snprintf(msg, sizeof msg, "the URI is longer than %d bytes", TT_MAX_URI);
        return tt_refuse(hc, c, method, url, TT_EURITOOLONG, 1, msg);
    }
    if (marked == 3 || marked == 4)
        return tt_refuse(hc, c, method, url, TT_EENCODING, 1,
                         "the path or a query argument holds an encoded NUL byte (%00)");
    /* headers MHD could still hold in its 32 KiB pool, but more than we serve: the JSON
     * 431 (beyond the pool MHD answers with its own HTML, daemon/README.md) */
    tt_header_sum hs = {0, 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, tt_header_add, &hs);
    if (hs.bytes > TT_MAX_HEADER_BYTES || hs.n > TT_MAX_HEADERS) {
        snprintf(msg, sizeof msg, "%u header fields of %zu bytes; at most %d fields of %d "
                 "bytes in all", hs.n, hs.bytes, TT_MAX_HEADERS, TT_MAX_HEADER_BYTES);
        return tt_refuse(hc, c, method, url, TT_EHEADERS, 1, msg);
    }
    const char *framing = tt_framing_error(c);
    if (framing) return tt_refuse(hc, c, method, url, TT_EINVAL, 1, framing);
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
    if (n > srv->max_body_bytes) {
        /* Read and discard a body up to a bound, then answer (the client sees the 413
         * instead of a reset); larger ones, or a client that waits for 100-continue, get
         * the answer at once. */
        const char *expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Expect");
        size_t bound = srv->max_body_bytes * 8 > (16u << 20) ? srv->max_body_bytes * 8
                                                              : (16u << 20);
        if ((expect && !strcasecmp(expect, "100-continue")) || n > bound) {
            snprintf(msg, sizeof msg, "request body of %s bytes exceeds the limit of %zu bytes",
                     cl, srv->max_body_bytes);
            return tt_refuse(hc, c, method, url, TT_ETOOBIG, 1, msg);
        }
        hc->too_big = 1;
    }
    return MHD_YES;
}

static enum MHD_Result tt_upload(tt_http *h, tt_hconn *hc, const char *upload_data,
                                 size_t *upload_size)
{
    size_t max = h->srv->max_body_bytes;
    if (!hc->too_big && hc->len + *upload_size > max) hc->too_big = 1;
    if (!hc->too_big && hc->gate >= 0) {    /* else discarded: the answer is a refusal */
        if (hc->len + *upload_size + 1 > hc->cap) {
            size_t nc = hc->cap ? hc->cap : 4096;
            while (nc < hc->len + *upload_size + 1) nc *= 2;
            char *nb = realloc(hc->body, nc);
            if (!nb) return MHD_NO;
            hc->body = nb;
            hc->cap = nc;
        }
        memcpy(hc->body + hc->len, upload_data, *upload_size);
        hc->len += *upload_size;
        hc->body[hc->len] = '\0';
    }
    *upload_size = 0;
    return MHD_YES;
}

/* Send the answer of a request and account for it (close_after: Connection: close). */
static enum MHD_Result tt_answer(tt_hconn *hc, struct MHD_Connection *c, const char *method,
                                 const char *url, int route, int close_after)
{
    tt_resp *resp = &hc->resp;
    if (!resp->json && !resp->text && resp->status != 204)
        tt_resp_error(resp, TT_EINTERNAL, NULL, "handler gave no answer");
    tt__ui_refusal(hc->h->srv, url, resp);
    enum MHD_Result ret =
        tt__send_resp(c, resp, close_after, resp->status == 405 ? hc->allow : NULL);
    tt_finish(hc, method, url, route < 0 ? tt__route_count() : (size_t)route, resp->status,
              hc->who[0] ? hc->who : "-");
    return ret;
}

/* Route, authenticate and read the query arguments of a request into hc->req, from its
 * headers alone (tt_begin, before any of the body is read).  Returns the route, or -1 with
 * hc->resp holding the refusal; hc->acct is the route the request is counted on in
 * /metrics (its path and method matched one, even when it is refused), or negative. */
static int tt_gate(tt_http *h, tt_hconn *hc, struct MHD_Connection *c, const char *method,
                   const char *url)
{
    tt_server *srv = h->srv;
    tt_req *req = &hc->req;
    tt_resp *resp = &hc->resp;
    memset(req, 0, sizeof *req);
    hc->allow[0] = '\0';
    resp->status = 200;
    req->method = method;
    req->path = url;
    req->accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    int path_known = 0;
    int ri = tt__route_match(method, url, req, hc->scratch, sizeof hc->scratch, &path_known);
    hc->acct = ri;              /* a refusal below still counts on its route (/metrics) */
    if (ri < 0) {
        if (ri == TT__ROUTE_BADTEXT) {
            tt_resp_error(resp, TT_EENCODING, NULL, "the path is not valid UTF-8");
        } else if (path_known) {
            tt__route_allow(url, hc->allow, sizeof hc->allow);
            tt_resp_error(resp, TT_EMETHOD, NULL, "%s is not allowed on %s (allowed: %s)",
                          method, url, hc->allow);
        } else {
            tt_resp_error(resp, TT_ENOTFOUND, NULL, "no route %s %s", method, url);
        }
        return -1;
    }
    const tt__route *rt = tt__route_at((size_t)ri);
    int scopes = 0;
    if (rt->scope != TT__ROUTE_PUBLIC) {
        const char *sc = rt->scope == TT_SCOPE_ADMIN  ? "admin"
                         : rt->scope == TT_SCOPE_TUNE ? "tune" : "read";
        const char *why = NULL;
        if (tt_authenticate(h, c, hc->who, &scopes, &why) != TT_OK) {
            tt_resp_error(resp, TT_EUNAUTH, NULL, "%s", why);
            return -1;
        }
        int open = rt->scope == TT_SCOPE_READ && srv->open_reads;
        if (!open && !hc->who[0]) {
            /* a server started without tokens refuses every write: say how to give it one */
            tt_resp_error(resp, TT_EUNAUTH, NULL, "this route needs a bearer token with scope %s%s",
                          sc, tt_auth_count(h->auth) ? "" : " (this server has no tokens: start "
                          "it with --tokens or \"tokens\" in its config file; README, \"Quick tour\")");
            return -1;
        }
        if (!open && !(scopes & rt->scope)) {
            tt_resp_error(resp, TT_EFORBIDDEN, NULL, "token %s lacks scope %s", hc->who, sc);
            return -1;
        }
    }
    req->token_name = hc->who;
    req->scopes = scopes;
    hc->query = json_object();
    if (!hc->query) { tt_resp_error(resp, TT_ENOMEM, NULL, "out of memory"); return -1; }
    req->query = hc->query;
    if (tt_reserved_path(url)) return ri;   /* probes: their query arguments are ignored */
    tt_query_acc qa = {hc->query, 0, ""};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, tt_query_it, &qa);
    if (qa.bad) {
        tt_resp_error(resp, TT_EENCODING, NULL, "a query argument is not valid UTF-8");
        return -1;
    }
    if (qa.dup[0]) {            /* as duplicate JSON keys: neither value may win silently */
        tt_resp_error(resp, TT_EINVAL, qa.dup, "query argument \"%s\" given twice", qa.dup);
        return -1;
    }
    tt_errinfo qerr;
    tt_errinfo_clear(&qerr);
    if (tt__route_query_check(rt, req->query, &qerr)) {
        tt_resp_errinfo(resp, &qerr);
        return -1;
    }
    return ri;
}

/* Finish a complete request that passed tt_gate (route ri): the body's limits and JSON, the
 * budget.  Returns ri, or -1 with hc->resp holding the refusal. */
static int tt_prepare(tt_http *h, tt_hconn *hc, int ri)
{
    tt_server *srv = h->srv;
    tt_req *req = &hc->req;
    tt_resp *resp = &hc->resp;
    if (hc->too_big) {
        tt_resp_error(resp, TT_ETOOBIG, NULL, "request body exceeds the limit of %zu bytes",
                      srv->max_body_bytes);
        return -1;
    }
    if (ri < 0) return -1;      /* refused by tt_gate */
    const tt__route *rt = tt__route_at((size_t)ri);
    if (hc->len) {
        req->raw_body = hc->body;
        req->raw_len = hc->len;
        if (!(rt->flags & TT__ROUTE_NOJSON)) {
            if (tt_json_depth(hc->body, hc->len, srv->max_json_depth) > srv->max_json_depth) {
                tt_resp_error(resp, TT_EJSON, NULL, "JSON nesting deeper than %d",
                              srv->max_json_depth);
                return -1;
            }
            json_error_t je;
            hc->jbody = tt_json_loadb(hc->body, hc->len, JSON_REJECT_DUPLICATES, &je);
            if (!hc->jbody) {
                tt_resp_error(resp, TT_EJSON, NULL, "line %d column %d: %s", je.line,
                              je.column, je.text);
                return -1;
            }
            req->body = hc->jbody;
        }
    }
    /* the budget: anonymous requests get the smaller one */
    hc->budget = hc->who[0] ? h->o.token : h->o.anon;
    hc->budget.deadline = hc->t0 + (hc->who[0] ? h->o.seconds_token : h->o.seconds_anon);
    hc->budget.cancelled = tt__hconn_cancelled;
    hc->budget.ctx = hc;
    hc->next_peek = 0;
    req->budget = &hc->budget;
    return ri;
}

/* Last call: the whole request is here (or a heavy request's worker resumed us). */
static enum MHD_Result tt_final(tt_http *h, tt_hconn *hc, struct MHD_Connection *c,
                                const char *method, const char *url)
{
    if (hc->too_big == 2) return MHD_YES;   /* answered already */
    if (atomic_load(&hc->task) == TT_TASK_DONE)
        return tt_answer(hc, c, method, url, (int)hc->route, 0);
    atomic_store(&hc->deadline_ms, 0);       /* no deadline while we work on it */
    int ri = tt_prepare(h, hc, hc->gate);
    if (ri < 0) return tt_answer(hc, c, method, url, hc->acct, 0);
    const tt__route *rt = tt__route_at((size_t)ri);
    hc->route = (size_t)ri;
    if (rt->flags & TT__ROUTE_HEAVY) {
        if (tt__heavy_reserve(h) != TT_OK) {
            tt_resp_error(&hc->resp, TT_EBUSY, NULL, "%d heavy requests (predict, simulate, "
                          "import, check) are running; retry later (max_heavy_requests)",
                          h->o.max_heavy);
            return tt_answer(hc, c, method, url, ri, 0);
        }
        MHD_suspend_connection(c);
        tt__heavy_enqueue(h, hc);
        return MHD_YES;
    }
    rt->fn(h->srv, &hc->req, &hc->resp);
    if ((rt->flags & TT__ROUTE_SSE) && hc->resp.status == 200 && !hc->resp.json &&
        !hc->resp.text) {
        if (!strcmp(method, "HEAD")) {       /* the stream's headers, no stream */
            char *empty = strdup("");
            if (!empty) return MHD_NO;
            enum MHD_Result ret = tt__send(c, 200, "text/event-stream", empty, 0, 0, NULL, NULL);
            tt_finish(hc, method, url, (size_t)ri, 200, hc->who[0] ? hc->who : "-");
            return ret;
        }
        enum MHD_Result ret = tt__send_sse(h, c, strtoll(hc->req.params[0], NULL, 10));
        tt_finish(hc, method, url, (size_t)ri, 200, hc->who[0] ? hc->who : "-");
        return ret;
    }
    return tt_answer(hc, c, method, url, ri, 0);
}

/* 1 when the request's "Expect: 100-continue" asks to hear whether to send a body at all
 * (a body follows: a Content-Length above 0, or chunked). */
static int tt_expects_continue(struct MHD_Connection *c)
{
    const char *expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Expect");
    if (!expect || strcasecmp(expect, "100-continue")) return 0;
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl) return strtoull(cl, NULL, 10) > 0;
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding") != NULL;
}

/* Still the first call, the headers passed tt_begin: route, authenticate and check the
 * query now.  A refused request that waits for "100 Continue" is answered at once, and the
 * connection closed (its unsent body would follow): MHD sends "100 Continue" only when this
 * first call queues no answer, so a client with a wrong token no longer uploads its whole
 * body to hear 401.  Without Expect the body is read and discarded, then refused (tt_final),
 * so the client, still sending, reads the answer instead of a reset. */
static enum MHD_Result tt_begin_route(tt_http *h, tt_hconn *hc, struct MHD_Connection *c,
                                      const char *url, const char *method)
{
    hc->gate = tt_gate(h, hc, c, method, url);
    if (hc->gate >= 0 || hc->too_big || !tt_expects_continue(c)) return MHD_YES;
    hc->too_big = 2;                         /* answered */
    return tt_answer(hc, c, method, url, hc->acct, 1);
}

/* What tt_uri_hook left in a request's con_cls before tt_begin: 0 nothing, 1 too many
 * arguments, 2 URI too long, 3 encoded NUL byte in the path, 4 in the query; -1 when it is
 * already the connection. */
static int tt_uri_mark(const tt_http *h, const void *con_cls)
{
    if (!con_cls) return 0;
    if (con_cls == &h->many_args) return 1;
    if (con_cls == &h->long_uri) return 2;
    if (con_cls == &h->nul_byte) return 3;
    if (con_cls == &h->nul_query) return 4;
    return -1;
}

static enum MHD_Result tt_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_size, void **con_cls)
{
    (void)version;
    tt_http *h = cls;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    tt_hconn *hc = ci ? ci->socket_context : NULL;
    if (!hc) return MHD_NO;                  /* out of memory at connect */
    int mark = tt_uri_mark(h, *con_cls);
    if (mark >= 0) {
        enum MHD_Result ret = tt_begin(h, hc, c, url, method, con_cls, mark);
        if (ret != MHD_YES || hc->too_big == 2) return ret;
        return tt_begin_route(h, hc, c, url, method);
    }
    if (*upload_size) {
        if (hc->too_big == 2) { *upload_size = 0; return MHD_YES; }
        return tt_upload(h, hc, upload_data, upload_size);
    }
    return tt_final(h, hc, c, method, url);
}

static void tt_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    tt_http *h = cls;
    tt_hconn *hc = *con_cls;
    *con_cls = NULL;
    if (tt_uri_mark(h, hc) >= 0) return;          /* never reached tt_begin */
    tt__hconn_reset(hc);
    hc->in_request = 0;
    atomic_fetch_sub(&h->inflight, 1);
    /* the next request's headers (or an idle keep-alive connection) have header_timeout */
    atomic_store(&hc->deadline_ms,
                 (long long)((tt_now_mono() + h->o.header_timeout_s) * 1000.0));
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
    h->o = *o;
    if (h->o.max_heavy < 1) h->o.max_heavy = 1;
    if (h->o.max_per_ip < 1) h->o.max_per_ip = h->o.max_connections;
    h->keepalive_s = o->timeout_s > 10 ? 5 : (o->timeout_s + 1) / 2;
    atomic_init(&h->stopping, 0);
    atomic_init(&h->nconn, 0);
    atomic_init(&h->inflight, 0);
    if (tt__http_threads_start(h)) {
        tt__http_threads_stop(h);
        free(h);
        freeaddrinfo(ai);
        return tt_errf(err, TT_ENOMEM, NULL, "cannot start the HTTP helper threads");
    }
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = (unsigned)(o->threads > 0 ? o->threads : nc > 0 ? nc : 1);
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
    if (o->turbo) flags |= MHD_USE_TURBO;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    unsigned limit = (unsigned)(o->max_connections + o->reserve);
    if (limit < threads) limit = threads;
    h->d = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, tt_access, h, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)o->timeout_s, MHD_OPTION_CONNECTION_LIMIT, limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
        MHD_OPTION_URI_LOG_CALLBACK, tt_uri_hook, h,
        MHD_OPTION_NOTIFY_COMPLETED, tt_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
        tt__http_notify, h, MHD_OPTION_EXTERNAL_LOGGER, tt_mhd_log, h,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->d) {
        tt__http_threads_stop(h);
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

int tt_http_stop(tt_http *h, double grace_s)
{
    if (!h) return 0;
    /* No MHD_quiesce_daemon: on an epoll daemon with its own threads it races with the event
     * loop, which may take the listen socket out of its epoll set at the same moment; the
     * loser's epoll_ctl gets ENOENT and libmicrohttpd aborts the process ("Failed to remove
     * listen FD from epoll set", an open libmicrohttpd defect; seen once in CI as exit 134 on
     * SIGTERM).  The listen socket stays open until MHD_stop_daemon instead, and every
     * request that arrives meanwhile is answered 503 "the server is shutting down". */
    pthread_mutex_lock(&h->mu);
    atomic_store(&h->stopping, 1);              /* new requests 503; heavy ones at their next check */
    pthread_mutex_unlock(&h->mu);
    tt__sse_wake_all(h);                        /* parked SSE streams end */
    double until = tt_now_mono() + grace_s;
    int left;
    while ((left = atomic_load(&h->inflight)) > 0 && tt_now_mono() < until) {
        tt__sse_wake_all(h);
        usleep(10 * 1000);
    }
    pthread_mutex_lock(&h->mu);
    int heavy = h->heavy_used;
    pthread_mutex_unlock(&h->mu);
    if (heavy > 0) {
        /* a handler is still running (it cannot be interrupted): its connection is
         * suspended, and MHD_stop_daemon must not run with suspended connections */
        tt_warning("http: %d request(s) still running after the %.1f s grace period; "
                   "exiting without waiting", heavy, grace_s);
        return -1;
    }
    if (left > 0) tt_info("http: %d request(s) still open after the grace period", left);
    tt__sse_wake_all(h);
    MHD_stop_daemon(h->d);                     /* closes the listen socket, joins the threads */
    tt__http_threads_stop(h);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    pthread_cond_destroy(&h->qcv);
    free(h);
    return 0;
}

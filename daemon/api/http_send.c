/* SPDX-License-Identifier: MIT
 * http_send.c - sending answers: a handler's JSON or text response with its headers (no-store,
 * Retry-After, Allow, the handler's own), and the Server-Sent Events stream of a job.
 */
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "jsonutil.h"

/* ---- responses ---------------------------------------------------------------------- */
/* allow: the Allow header of a 405 (NULL or "": none); extra: {name, value, ..., NULL} or
 * NULL. */
enum MHD_Result tt__send(struct MHD_Connection *c, int status, const char *ctype,
                         char *body, size_t len, int close_after, const char *allow,
                         const char *const *extra)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) { free(body); return MHD_NO; }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    /* not on 429 (too many jobs of the token): when a slot frees depends on when a job ends */
    if (status == 503) MHD_add_response_header(r, "Retry-After", "1");
    if (close_after) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (allow && *allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    for (; extra && extra[0] && extra[1]; extra += 2) MHD_add_response_header(r, extra[0], extra[1]);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A HEAD request gets the same answer: libmicrohttpd sends its headers (Content-Length
 * included) and leaves the body out by itself. */
enum MHD_Result tt__send_resp(struct MHD_Connection *c, tt_resp *resp, int close_after,
                              const char *allow)
{
    if (resp->text) {
        char *t = resp->text;
        resp->text = NULL;
        return tt__send(c, resp->status, resp->content_type ? resp->content_type : "text/plain",
                       t, strlen(t), close_after, allow, resp->headers);
    }
    char *s = resp->json ? tt_json_dumps(resp->json, JSON_COMPACT) : strdup("");
    if (!s) s = strdup("{\"error\":{\"code\":\"out_of_memory\",\"message\":\"out of memory\"}}");
    if (!s) return MHD_NO;
    size_t n = strlen(s);
    if (resp->json) {          /* newline-terminated JSON reads better with curl */
        char *s2 = realloc(s, n + 2);
        if (s2) { s = s2; s[n++] = '\n'; s[n] = '\0'; }
    }
    return tt__send(c, resp->status, "application/json", s, n, close_after, allow, resp->headers);
}

/* ---- Server-Sent Events ------------------------------------------------------------- */
/* The content reader never blocks: with nothing new it parks the connection (suspended)
 * until the next tick of the reaper thread (~200 ms), then polls the store again. */
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
    double now = tt_budget_now();
    if (e->started && now < e->next_poll)
        return tt__sse_park(e->h, e) ? 0 : MHD_CONTENT_READER_END_OF_STREAM;
    e->started = 1;
    e->next_poll = now + 0.15;
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
    if (e->blen == 0 && now - e->last_emit >= e->h->keepalive_s) {
        e->blen = (size_t)snprintf(e->buf, sizeof e->buf, ": keep-alive\n\n");
    }
    if (e->blen == 0)          /* nothing new: sleep until the next tick */
        return tt__sse_park(e->h, e) ? 0 : MHD_CONTENT_READER_END_OF_STREAM;
    e->last_emit = now;
    size_t k = e->blen < max ? e->blen : max;
    memcpy(out, e->buf, k);
    e->boff = k;
    return (ssize_t)k;
}

static void tt_sse_free(void *cls) { free(cls); }

enum MHD_Result tt__send_sse(tt_http *h, struct MHD_Connection *c, int64_t id)
{
    tt_sse *e = calloc(1, sizeof *e);
    if (!e) return MHD_NO;
    e->h = h;
    e->c = c;
    e->id = id;
    e->last_done = -1;
    e->last_state = -1;
    e->last_emit = tt_budget_now();
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

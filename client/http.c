/* SPDX-License-Identifier: MIT
 * http.c - tlctl's libcurl wrapper: base URL, bearer token, timeouts, JSON in and out, error
 * answers mapped to exit codes, and a Server-Sent Events reader for job progress.
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "jsonutil.h"
#include "tlctl.h"

typedef struct tl_buf {
    char *p;
    size_t n;
} tl_buf;

static size_t tl_write_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
    tl_buf *b = ud;
    size_t k = size * nmemb;
    char *np = realloc(b->p, b->n + k + 1);
    if (!np) return 0;
    memcpy(np + b->n, ptr, k);
    b->n += k;
    np[b->n] = '\0';
    b->p = np;
    return k;
}

/* 1 when a URL host is this machine's loopback: localhost (or *.localhost), 127.0.0.0/8 or
 * [::1].  A proxy cannot reach it, so it is asked directly whatever http_proxy and no_proxy
 * say (a corporate host's http_proxy without 127.0.0.1 in no_proxy sent every request for a
 * local daemon to the proxy: "cannot reach", exit 3, with the daemon up). */
static int tl_host_loopback(const char *host)
{
    size_t n = strlen(host);
    while (n && host[n - 1] == '.') n--;
    return (n == 9 && !strncasecmp(host, "localhost", 9)) ||
           (n > 10 && !strncasecmp(host + n - 10, ".localhost", 10)) ||
           !strncmp(host, "127.", 4) || !strcmp(host, "[::1]");
}

/* 0 when the server URL is http:// or https:// with a host and no query or fragment (libcurl's
 * URL parser decides; *direct: 1 when that host is the loopback), else TL_EXIT_USAGE after one line naming where the URL came from.  A
 * URL such as "ftp://h" or "h:7878" used to be tried as it was (libcurl would speak FTP, or
 * guess) and end as "cannot reach" (exit 3), as if a good server were down. */
static int tl_url_check(const tl_ctx *c, int *direct)
{
    *direct = 0;
    CURLU *u = curl_url();
    if (!u) return TL_EXIT_USAGE;
    char *scheme = NULL, *host = NULL, *rest = NULL;
    const char *why = NULL;
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, c->url, CURLU_NON_SUPPORT_SCHEME);
    if (uc == CURLUE_BAD_SCHEME) why = "the scheme must be http:// or https://";
    else if (uc != CURLUE_OK) why = curl_url_strerror(uc);
    else if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
             (strcmp(scheme, "http") && strcmp(scheme, "https")))
        why = "the scheme must be http:// or https://";
    else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
        why = "no host";
    else if (curl_url_get(u, CURLUPART_QUERY, &rest, 0) == CURLUE_OK ||
             curl_url_get(u, CURLUPART_FRAGMENT, &rest, 0) == CURLUE_OK)
        why = "a server URL has no ?query or #fragment";
    else *direct = tl_host_loopback(host);
    if (why)
        fprintf(stderr, "tlctl: bad server URL \"%s\" (from %s): %s\n", c->url,
                c->url_src ? c->url_src : "default", why);
    curl_free(scheme);
    curl_free(host);
    curl_free(rest);
    curl_url_cleanup(u);
    return why ? TL_EXIT_USAGE : 0;
}

static CURL *tl_easy(const tl_ctx *c, int direct, const char *method, const char *path,
                     struct curl_slist **hdrs, char *url, size_t ucap)
{
    CURL *h = curl_easy_init();
    if (!h) return NULL;
    size_t n = strlen(c->url);
    while (n && c->url[n - 1] == '/') n--;
    snprintf(url, ucap, "%.*s%s", (int)n, c->url, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "tlctl/" TT_VERSION);
    if (direct) curl_easy_setopt(h, CURLOPT_PROXY, "");   /* "": no proxy (tl_host_loopback) */
    if (c->token[0]) {
        char auth[320];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
        *hdrs = curl_slist_append(*hdrs, auth);
    }
    return h;
}

/* One attempt; *retry_after gets the answer's Retry-After seconds (0 when none). */
static int tl_http_once(const tl_ctx *c, int direct, const char *method, const char *path,
                        const char *ctype, const char *body, size_t len, long timeout_s,
                        tl_resp *r, long *retry_after)
{
    memset(r, 0, sizeof *r);
    *retry_after = 0;
    struct curl_slist *hdrs = NULL;
    char url[2048];
    CURL *h = tl_easy(c, direct, method, path, &hdrs, url, sizeof url);
    if (!h) {
        fprintf(stderr, "tlctl: cannot initialise libcurl\n");
        return TL_EXIT_UNREACHABLE;
    }
    tl_buf b = {NULL, 0};
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, tl_write_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
    if (!strcmp(method, "HEAD")) curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    if (body) {
        char ct[128];
        snprintf(ct, sizeof ct, "Content-Type: %s", ctype ? ctype : "application/json");
        hdrs = curl_slist_append(hdrs, ct);
        hdrs = curl_slist_append(hdrs, "Expect:");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    CURLcode cc = curl_easy_perform(h);
    int rc = 0;
    if (cc != CURLE_OK) {
        fprintf(stderr, "tlctl: cannot reach %s: %s\n", c->url, curl_easy_strerror(cc));
        free(b.p);
        rc = TL_EXIT_UNREACHABLE;
    } else {
        curl_off_t ra = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
        if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
            *retry_after = ra > 3600 ? 3600 : (long)ra;
        r->body = b.p ? b.p : strdup("");
        r->len = b.n;
        r->json = b.n ? json_loadb(r->body, b.n, 0, NULL) : NULL;
    }
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return rc;
}

static double tl_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 1 when r is the server's "503 busy": it refused the request before doing any of it (all
 * max_heavy_requests workers, or its connection limit, taken), so sending it again is safe
 * for every method, a POST included. */
static int tl_is_busy(const tl_resp *r)
{
    const char *code = json_string_value(json_object_get(json_object_get(r->json, "error"),
                                                         "code"));
    return r->status == 503 && code && !strcmp(code, "busy");
}

/* Like tl_http_once, but a "503 busy" answer is retried after its Retry-After (1 s when
 * none) for as long as --timeout allows in total; a note on stderr says so once.  When the
 * time is spent the last busy answer is returned for the caller to report. */
int tl_http(const tl_ctx *c, const char *method, const char *path, const char *ctype,
            const char *body, size_t len, tl_resp *r)
{
    memset(r, 0, sizeof *r);
    int direct, bad = tl_url_check(c, &direct);
    if (bad) return bad;
    double deadline = tl_mono() + (double)c->timeout_s;
    for (int attempt = 0;; attempt++) {
        long left = (long)(deadline - tl_mono() + 0.5), wait;
        int rc = tl_http_once(c, direct, method, path, ctype, body, len, left > 0 ? left : 1, r,
                              &wait);
        if (rc || !tl_is_busy(r)) return rc;
        if (wait < 1) wait = 1;
        if (tl_mono() + (double)wait >= deadline) {
            if (attempt)
                fprintf(stderr, "tlctl: the server stayed busy for the whole --timeout (%ld s)\n",
                        c->timeout_s);
            return 0;
        }
        if (!attempt)
            fprintf(stderr, "tlctl: the server is busy; retrying every %ld s for up to "
                    "--timeout (%ld s)\n", wait, c->timeout_s);
        tl_resp_free(r);
        struct timespec ts = {wait, 0};
        nanosleep(&ts, NULL);                  /* a signal only makes the retry sooner */
    }
}

void tl_resp_free(tl_resp *r)
{
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

int tl_resp_fail(const tl_resp *r)
{
    const json_t *e = json_object_get(r->json, "error");
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *path = json_string_value(json_object_get(e, "path"));
    if (msg) {   /* the server's text, made safe for a terminal */
        char *sp = tl_safe_dup(path), *sm = tl_safe_dup(msg), sc[64];
        fprintf(stderr, "tlctl: %s%s%s (%s, HTTP %ld)\n", sp ? sp : "", sp && *sp ? ": " : "",
                sm ? sm : "?", code ? tl_safe(code, sc, sizeof sc) : "error", r->status);
        free(sp);
        free(sm);
    } else
        fprintf(stderr, "tlctl: the server answered HTTP %ld\n", r->status);
    if (r->status == 401 || r->status == 403) return TL_EXIT_AUTH;
    /* the input could not be decoded (corrupt gzip, invalid UTF-8): the caller's file or
     * argument is unreadable, as when tlctl itself cannot read it */
    if (code && !strcmp(code, "bad_encoding")) return TL_EXIT_USAGE;
    return TL_EXIT_SERVER;
}

int tl_call(const tl_ctx *c, const char *method, const char *path, json_t *body, json_t **out)
{
    *out = NULL;
    char *text = body ? tt_json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    tl_resp r;
    int rc = tl_http(c, method, path, "application/json", text, text ? strlen(text) : 0, &r);
    free(text);
    if (rc) return rc;
    if (r.status < 200 || r.status >= 300) {
        rc = tl_resp_fail(&r);
    } else if (!r.json) {
        fprintf(stderr, "tlctl: the server's answer is not JSON (HTTP %ld)\n", r.status);
        rc = TL_EXIT_SERVER;
    } else {
        *out = json_incref(r.json);
    }
    tl_resp_free(&r);
    return rc;
}

void tl_query_add(char *buf, size_t cap, const char *k, const char *v)
{
    char *ek = curl_easy_escape(NULL, k, 0), *ev = curl_easy_escape(NULL, v, 0);
    size_t n = strlen(buf);
    if (ek && ev) snprintf(buf + n, cap - n, "%c%s=%s", strchr(buf, '?') ? '&' : '?', ek, ev);
    curl_free(ek);
    curl_free(ev);
}

/* ---- Server-Sent Events ------------------------------------------------------------- */
typedef struct tl_sse_st {
    tl_buf line;              /* pending bytes */
    char event[64];
    tl_buf data;
    tl_sse_fn fn;
    void *ud;
    volatile const int *stop;
    int done;
    CURL *h;
    tl_buf raw;               /* the body of a non-200 answer */
} tl_sse_st;

static void tl_sse_dispatch(tl_sse_st *s)
{
    if (s->data.n || s->event[0]) {
        if (s->fn(s->event[0] ? s->event : "message", s->data.p ? s->data.p : "", s->ud))
            s->done = 1;
    }
    s->event[0] = '\0';
    free(s->data.p);
    s->data.p = NULL;
    s->data.n = 0;
}

static size_t tl_sse_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
    tl_sse_st *s = ud;
    size_t k = size * nmemb;
    long status = 0;
    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) return tl_write_cb(ptr, 1, k, &s->raw);
    if (!tl_write_cb(ptr, 1, k, &s->line)) return 0;
    char *start = s->line.p, *nl;
    while (!s->done && (nl = memchr(start, '\n', s->line.n - (size_t)(start - s->line.p)))) {
        *nl = '\0';
        if (nl > start && nl[-1] == '\r') nl[-1] = '\0';
        if (!*start) tl_sse_dispatch(s);
        else if (!strncmp(start, "event:", 6)) {
            const char *v = start + 6 + (start[6] == ' ');
            snprintf(s->event, sizeof s->event, "%s", v);
        } else if (!strncmp(start, "data:", 5)) {
            const char *v = start + 5 + (start[5] == ' ');
            if (s->data.n) tl_write_cb("\n", 1, 1, &s->data);
            tl_write_cb((char *)v, 1, strlen(v), &s->data);
        }   /* ":" comments (keep-alive) and other fields are ignored */
        start = nl + 1;
    }
    size_t rest = s->line.n - (size_t)(start - s->line.p);
    memmove(s->line.p, start, rest);
    s->line.n = rest;
    s->line.p[rest] = '\0';
    return s->done ? 0 : k;   /* returning short ends the transfer */
}

static int tl_sse_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a; (void)b; (void)c; (void)d;
    tl_sse_st *s = ud;
    return s->stop && *s->stop ? 1 : 0;
}

int tl_sse(const tl_ctx *c, const char *path, tl_sse_fn fn, void *ud, volatile const int *stop)
{
    struct curl_slist *hdrs = NULL;
    char url[2048];
    int direct, bad = tl_url_check(c, &direct);
    if (bad) return bad;
    CURL *h = tl_easy(c, direct, "GET", path, &hdrs, url, sizeof url);
    if (!h) return TL_EXIT_UNREACHABLE;
    hdrs = curl_slist_append(hdrs, "Accept: text/event-stream");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    tl_sse_st s;
    memset(&s, 0, sizeof s);
    s.fn = fn;
    s.ud = ud;
    s.stop = stop;
    s.h = h;
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, tl_sse_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, tl_sse_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &s);
    /* a stalled stream (no keep-alive for a minute) is a dead server */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    CURLcode cc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    int rc = 0;
    if (stop && *stop) {
        rc = 1;
    } else if (status && status != 200) {
        tl_resp r = {status, s.raw.p, s.raw.n, s.raw.p ? json_loads(s.raw.p, 0, NULL) : NULL};
        rc = tl_resp_fail(&r);
        json_decref(r.json);
    } else if (cc != CURLE_OK && !(cc == CURLE_WRITE_ERROR && s.done)) {
        fprintf(stderr, "tlctl: lost the event stream from %s: %s\n", c->url,
                curl_easy_strerror(cc));
        rc = TL_EXIT_UNREACHABLE;
    } else if (!s.done) {
        fprintf(stderr, "tlctl: lost the event stream from %s: it ended before the job did\n",
                c->url);
        rc = TL_EXIT_UNREACHABLE;
    }
    free(s.raw.p);
    free(s.line.p);
    free(s.data.p);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return rc;
}

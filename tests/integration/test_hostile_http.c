/* SPDX-License-Identifier: MIT
 * test_hostile_http.c - requests a careless or hostile client sends below the JSON layer,
 * over raw sockets: ambiguous body framing (two different Content-Length headers,
 * Content-Length with Transfer-Encoding, a transfer coding other than chunked) is refused
 * with a JSON 400 at once, never read one way while a proxy reads it another, nor left
 * waiting for body_timeout; an encoded NUL byte (%00) in a path or query argument is
 * 400 bad_encoding, never cut short ("/v1/jobs/1%00x" is not job 1: DELETE left it
 * alone); and refusals of a known route (413 after the body was read, 401, malformed JSON)
 * are counted on that route in /metrics, not as "unmatched"; integers in query arguments
 * and path segments are digits only ("+5", " 5" refused, as in JSON and problem strings);
 * a request with Expect: 100-continue that is refused from its headers hears so before it
 * sends its body (not "100 Continue"); /healthz, /readyz and /metrics ignore any query.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonutil.h"
#include "tt_daemon.h"
#include "tt_rawhttp.h"
#include "tt_test.h"

static tt_daemon D;
static long long g_job;          /* a queued job (no workers) */

static int suite_init(void)
{
    if (tt_daemon_start(&D, "{\"workers\": 0, \"body_timeout\": 20}")) return 1;
    g_job = tt_daemon_submit(&D, "{\"template\":\"gemm\",\"problem\":{\"M\":512,\"N\":512,"
                                 "\"K\":512},\"target\":\"a2\",\"budget\":{\"trials\":4}}");
    return g_job > 0 ? 0 : 1;
}

static int suite_clean(void)
{
    int st = tt_daemon_stop(&D);
    tt_daemon_cleanup(&D);
    return st != 0;
}

/* Send a raw request on a fresh connection and read the answer (until close or timeout_s)
 * into resp (cap bytes). */
static void raw_exchange(const char *req, size_t len, char *resp, size_t cap, double timeout_s)
{
    resp[0] = '\0';
    int fd = tt_raw_connect(D.port, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(tt_raw_send(fd, req, len), 0);
    int closed = 0;
    tt_raw_read(fd, resp, cap - 1, timeout_s, &closed);
    close(fd);
}

/* The JSON error of a raw answer: code and message, or "" each. */
static void raw_error(const char *resp, char code[64], char msg[256])
{
    code[0] = msg[0] = '\0';
    json_t *j = json_loads(tt_raw_body(resp), 0, NULL);
    const json_t *e = json_object_get(j, "error");
    const char *c = json_string_value(json_object_get(e, "code"));
    const char *m = json_string_value(json_object_get(e, "message"));
    snprintf(code, 64, "%s", c ? c : "");
    snprintf(msg, 256, "%s", m ? m : "");
    json_decref(j);
}

static void test_ambiguous_framing(void)
{
    static const struct {
        const char *name, *headers, *body;
        int status;
        const char *code, *msg;
    } cases[] = {
        {"two Content-Length, the first small", "Content-Length: 2\r\nContent-Length: 300\r\n",
         "{}", 400, "invalid_argument", "Content-Length is given more than once"},
        {"two Content-Length, the first large", "Content-Length: 300\r\nContent-Length: 2\r\n",
         "{}", 400, "invalid_argument", "Content-Length is given more than once"},
        {"Content-Length and chunked", "Content-Length: 2000000\r\n"
         "Transfer-Encoding: chunked\r\n", "2\r\n{}\r\n0\r\n\r\n", 400, "invalid_argument",
         "both Content-Length and Transfer-Encoding"},
        {"Content-Length and chunked, small", "Content-Length: 5\r\n"
         "Transfer-Encoding: chunked\r\n", "2\r\n{}\r\n0\r\n\r\n", 400, "invalid_argument",
         "both Content-Length and Transfer-Encoding"},
        {"gzip transfer coding", "Transfer-Encoding: gzip\r\n", "{}", 400, "invalid_argument",
         "Transfer-Encoding must be chunked"},
        {"gzip, chunked", "Transfer-Encoding: gzip, chunked\r\n", "2\r\n{}\r\n0\r\n\r\n", 400,
         "invalid_argument", "Transfer-Encoding must be chunked"},
        {"two Transfer-Encoding", "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
         "2\r\n{}\r\n0\r\n\r\n", 400, "invalid_argument", "given more than once"},
        /* unambiguous framings are read as before (the body then fails validation) */
        {"one Content-Length", "Content-Length: 2\r\n", "{}", 422, "invalid_target", NULL},
        {"the same Content-Length twice", "Content-Length: 2\r\nContent-Length: 2\r\n", "{}",
         422, "invalid_target", NULL},
        {"chunked", "Transfer-Encoding: chunked\r\n", "2\r\n{}\r\n0\r\n\r\n", 422,
         "invalid_target", NULL},
        {"Chunked", "Transfer-Encoding: Chunked\r\n", "2\r\n{}\r\n0\r\n\r\n", 422,
         "invalid_target", NULL},
    };
    static char resp[65536];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char req[1024], code[64], msg[256];
        int n = snprintf(req, sizeof req, "POST /v1/predict HTTP/1.1\r\nHost: x\r\n"
                         "Connection: close\r\n%s\r\n%s", cases[i].headers, cases[i].body);
        /* an answer must come well before body_timeout (20 s) */
        raw_exchange(req, (size_t)n, resp, sizeof resp, tt_daemon_slow(8));
        raw_error(resp, code, msg);
        int ok = tt_raw_status(resp) == cases[i].status && !strcmp(code, cases[i].code) &&
                 (!cases[i].msg || strstr(msg, cases[i].msg));
        if (!ok) fprintf(stderr, "\nframing case \"%s\": %.400s\n", cases[i].name, resp);
        CU_ASSERT(ok);
    }
}

static void test_encoded_nul(void)
{
    static const struct {
        const char *method, *path;
        int status;
    } cases[] = {
        {"GET", "/v1/templates/gemm%00x", 400},
        {"GET", "/v1/templates/%00", 400},
        {"GET", "/v1/jobs?state=queued%00junk", 400},
        {"GET", "/v1/jobs?li%00mit=5", 400},
        {"GET", "/v1/best?template=gemm%00&target=a2&M=512&N=512&K=512", 400},
        {"HEAD", "/v1/jobs/{job}%00", 400},
        {"DELETE", "/v1/jobs/{job}%00", 400},
        {"GET", "/v1/templates/gemm%2500", 404},     /* "%00" as text: just a name */
        {"GET", "/v1/jobs/{job}", 200},
    };
    static char resp[65536];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256], req[1024], code[64], msg[256];
        tt_path_job(path, sizeof path, cases[i].path, g_job);
        int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                         "Authorization: Bearer " TT_TOKEN_TUNE "\r\n\r\n", cases[i].method,
                         path);
        raw_exchange(req, (size_t)n, resp, sizeof resp, tt_daemon_slow(8));
        raw_error(resp, code, msg);
        int ok = tt_raw_status(resp) == cases[i].status &&
                 (cases[i].status != 400 || (!strcmp(code, "bad_encoding") &&
                                             strstr(msg, "NUL byte")) ||
                  !strcmp(cases[i].method, "HEAD"));
        if (!ok) fprintf(stderr, "\nNUL case %s %s: %.400s\n", cases[i].method, path, resp);
        CU_ASSERT(ok);
    }
    /* the DELETE of "1%00" did not cancel job 1 */
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", g_job);
    tt_hres r;
    CU_ASSERT_EQUAL_FATAL(tt_daemon_req(&D, "GET", path, NULL, NULL, 0, &r), 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "state")), "queued");
    tt_hres_free(&r);
}

/* An integer in a query argument or a path segment is spelled as in JSON and in problem
 * strings ("M=+512" is refused there): strtoll also took "+5", " 5" and "%205". */
static void test_strict_integers(void)
{
    static const struct {
        const char *path;
        long status;
        const char *code, *epath;
    } cases[] = {
        {"/v1/jobs?limit=+5", 400, "invalid_argument", "limit"},
        {"/v1/jobs?limit=%205", 400, "invalid_argument", "limit"},
        {"/v1/jobs?limit=5", 200, NULL, NULL},
        {"/v1/jobs?limit=-5", 400, "invalid_argument", "limit"},
        {"/v1/jobs/+{job}", 404, "not_found", NULL},
        {"/v1/jobs/%20{job}", 404, "not_found", NULL},
        {"/v1/jobs/{job}/trials?offset=+0", 400, "invalid_argument", "offset"},
        {"/v1/best?template=gemm&target=a2&M=+512&N=512&K=512", 422, "invalid_problem", "M"},
        {"/v1/best?template=gemm&target=a2&M=%20512&N=512&K=512", 422, "invalid_problem", "M"},
        {"/v1/best?template=gemm&target=a2&M=512&N=512&K=512", 404, "not_found", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        tt_path_job(path, sizeof path, cases[i].path, g_job);
        tt_hres r;
        CU_ASSERT_EQUAL_FATAL(tt_daemon_req(&D, "GET", path, NULL, NULL, 0, &r), 0);
        const json_t *e = json_object_get(r.json, "error");
        const char *p = json_string_value(json_object_get(e, "path"));
        int ok = r.status == cases[i].status &&
                 (!cases[i].code || !strcmp(tt_hres_code(&r), cases[i].code)) &&
                 (!cases[i].epath || (p && !strcmp(p, cases[i].epath)));
        if (!ok) fprintf(stderr, "\n%s: %ld %.300s\n", path, r.status, r.body ? r.body : "");
        CU_ASSERT(ok);
        tt_hres_free(&r);
    }
}

/* The value of one tiletune_http_requests_total series, 0 when absent. */
static long metric_count(const char *route, int status)
{
    tt_hres r;
    long v = 0;
    if (tt_daemon_req(&D, "GET", "/metrics", NULL, NULL, 0, &r) == 0 && r.body) {
        char key[160];
        snprintf(key, sizeof key, "tiletune_http_requests_total{route=\"%s\",status=\"%d\"} ",
                 route, status);
        const char *p = strstr(r.body, key);
        if (p) v = strtol(p + strlen(key), NULL, 10);
    }
    tt_hres_free(&r);
    return v;
}

static void test_refusals_counted_on_route(void)
{
    static const struct {
        const char *route, *request;
        size_t body;                  /* bytes of body to send after the request */
        int status;
    } cases[] = {
        /* without Expect: the body is read (and discarded), then 413 */
        {"POST /v1/import", "POST /v1/import?format=t4&template=gemm HTTP/1.1\r\nHost: x\r\n"
         "Authorization: Bearer " TT_TOKEN_TUNE "\r\nContent-Length: 1100000\r\n"
         "Connection: close\r\n\r\n", 1100000, 413},
        {"POST /v1/tune", "POST /v1/tune HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
         "Connection: close\r\n\r\n", 2, 401},
        {"POST /v1/tune", "POST /v1/tune HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
         TT_TOKEN_TUNE "\r\nContent-Length: 2\r\nConnection: close\r\n\r\n", 2, 400},
        {"GET /v1/jobs/{id}", "GET /v1/jobs/1?x=1 HTTP/1.1\r\nHost: x\r\n"
         "Connection: close\r\n\r\n", 0, 400},
    };
    static char body[1100000 + 1];
    memset(body, ' ', sizeof body - 1);
    body[0] = '{';                    /* "{   ...": malformed JSON when it is read */
    static char resp[65536];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long before = metric_count(cases[i].route, cases[i].status);
        long unmatched = metric_count("unmatched", cases[i].status);
        int fd = tt_raw_connect(D.port, NULL);
        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_EQUAL(tt_raw_send(fd, cases[i].request, strlen(cases[i].request)), 0);
        if (cases[i].body) CU_ASSERT_EQUAL(tt_raw_send(fd, body, cases[i].body), 0);
        int closed = 0;
        tt_raw_read(fd, resp, sizeof resp - 1, tt_daemon_slow(10), &closed);
        close(fd);
        CU_ASSERT_EQUAL(tt_raw_status(resp), cases[i].status);
        long after = metric_count(cases[i].route, cases[i].status);
        if (after != before + 1)
            fprintf(stderr, "\n%s %d: counted %ld -> %ld (unmatched %ld -> %ld)\n",
                    cases[i].route, cases[i].status, before, after, unmatched,
                    metric_count("unmatched", cases[i].status));
        CU_ASSERT_EQUAL(after, before + 1);
        CU_ASSERT_EQUAL(metric_count("unmatched", cases[i].status), unmatched);
    }
}

/* A request that waits for "100 Continue" and will be refused anyway (bad or missing token,
 * too weak a scope, no such path, wrong method) hears its refusal before it sends any of its
 * body, and the connection closes (the body would follow); the old daemon said
 * "100 Continue" and refused only after the whole body came. */
static void test_expect_refused_early(void)
{
    static const struct {
        const char *line, *token;
        int status;
    } cases[] = {
        {"POST /v1/import?format=t4&template=gemm", "wrong-secret", 401},
        {"POST /v1/import?format=t4&template=gemm", NULL, 401},
        {"POST /v1/import?format=t4&template=gemm", TT_TOKEN_READ, 403},
        {"POST /v1/no-such-route", TT_TOKEN_TUNE, 404},
        {"PUT /v1/import", TT_TOKEN_TUNE, 405},
        {"POST /v1/tune?x=1", TT_TOKEN_TUNE, 400},       /* /v1/tune takes no arguments */
    };
    static char resp[65536];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char req[512], auth[128] = "";
        if (cases[i].token)
            snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", cases[i].token);
        int n = snprintf(req, sizeof req, "%s HTTP/1.1\r\nHost: x\r\n%sExpect: 100-continue\r\n"
                         "Content-Length: 500000\r\n\r\n", cases[i].line, auth);
        int fd = tt_raw_connect(D.port, NULL);
        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_EQUAL(tt_raw_send(fd, req, (size_t)n), 0);    /* no body byte is sent */
        int closed = 0;
        tt_raw_read(fd, resp, sizeof resp - 1, tt_daemon_slow(5), &closed);
        close(fd);
        int ok = tt_raw_status(resp) == cases[i].status && tt_raw_status_lines(resp) == 1 &&
                 closed && strstr(resp, "Connection: close");
        if (!ok) fprintf(stderr, "\nExpect case %s: %.300s\n", cases[i].line, resp);
        CU_ASSERT(ok);
    }
}

/* A request that will be accepted still gets "100 Continue", then its answer. */
static void test_expect_accepted(void)
{
    static const char body[] = "{\"template\":\"gemm\",\"problem\":{\"M\":256,\"N\":256,\"K\":256},"
                               "\"target\":\"a2\",\"budget\":{\"trials\":2}}";
    char req[512];
    int n = snprintf(req, sizeof req, "POST /v1/tune HTTP/1.1\r\nHost: x\r\nAuthorization: "
                     "Bearer " TT_TOKEN_TUNE "\r\nExpect: 100-continue\r\nContent-Type: "
                     "application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                     sizeof body - 1);
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    static char resp[65536];
    int fd = tt_raw_connect(D.port, NULL);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(tt_raw_send(fd, req, (size_t)n), 0);
    int closed = 0;
    tt_raw_read(fd, resp, sizeof cont - 1, tt_daemon_slow(5), &closed);
    CU_ASSERT_STRING_EQUAL(resp, cont);
    CU_ASSERT_EQUAL(tt_raw_send(fd, body, sizeof body - 1), 0);
    tt_raw_read(fd, resp, sizeof resp - 1, tt_daemon_slow(10), &closed);
    close(fd);
    CU_ASSERT_EQUAL(tt_raw_status(resp), 202);
    json_t *j = json_loads(tt_raw_body(resp), 0, NULL);
    CU_ASSERT(json_integer_value(json_object_get(j, "job")) > 0);
    json_decref(j);
}

/* /healthz, /readyz and /metrics ignore their query arguments, whatever they are: a probe
 * with an odd query string never fails (bad UTF-8 and %00 were 400 bad_encoding, a repeated
 * argument 400, 300 arguments 400, a 9 KiB query 414); /v1/ routes still refuse them. */
static void test_probes_ignore_query(void)
{
    static char many[2200], longq[9300];
    strcpy(many, "/healthz?a=1");
    for (int i = 0; i < 299; i++) strcat(many, "&a=1");
    strcpy(longq, "/metrics?x=");
    memset(longq + strlen(longq), 'y', 9000);
    static const struct {
        const char *method, *uri;
        int status;
    } cases[] = {
        {"GET", "/metrics?x=%FF", 200},
        {"GET", "/healthz?%FF=1", 200},
        {"HEAD", "/readyz?x=%C3", 200},
        {"GET", "/metrics?x=%00", 200},
        {"GET", "/readyz?a=1&a=2", 200},
        {"GET", many, 200},
        {"GET", longq, 200},
        {"GET", "/v1/jobs?state=%FF", 400},
        {"GET", "/v1/jobs?state=queued%00", 400},
        {"GET", "/metrics%00x", 400},                 /* a NUL byte in the path still is */
    };
    static char req[12000], resp[65536];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                         "\r\n", cases[i].method, cases[i].uri);
        raw_exchange(req, (size_t)n, resp, sizeof resp, tt_daemon_slow(8));
        int ok = tt_raw_status(resp) == cases[i].status;
        if (!ok) fprintf(stderr, "\nprobe case %.40s: %.300s\n", cases[i].uri, resp);
        CU_ASSERT(ok);
    }
}

static void test_still_up(void)
{
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", "/healthz", NULL, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_hres_free(&r);
    CU_ASSERT(tt_daemon_alive(&D));
}

static const tt_test_case cases[] = {{"ambiguous_framing", test_ambiguous_framing},
                                     {"encoded_nul", test_encoded_nul},
                                     {"refusals_counted_on_route", test_refusals_counted_on_route},
                                     {"strict_integers", test_strict_integers},
                                     {"expect_refused_early", test_expect_refused_early},
                                     {"expect_accepted", test_expect_accepted},
                                     {"probes_ignore_query", test_probes_ignore_query},
                                     {"still_up", test_still_up},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"hostile_http", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

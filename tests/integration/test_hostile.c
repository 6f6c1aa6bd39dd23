/* SPDX-License-Identifier: MIT
 * test_hostile.c - a battery of hostile requests (malformed, truncated, huge, deeply nested,
 * wrong-typed, unknown fields, overflowing expressions, 10^12-config spaces, bad tokens,
 * too many jobs, unknown routes and methods).  Each must get its documented status and
 * error code; afterwards the daemon is still up and the jobs made before are intact.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "tt_daemon.h"
#include "tt_rawhttp.h"
#include "tt_test.h"

static tt_daemon D;
static json_t *g_gemm;           /* the built-in gemm document */
static json_t *g_before[2];      /* jobs created before the battery */
static long long g_ids[2];

static int suite_init(void)
{
    /* no workers: jobs stay queued, so the per-token limit is deterministic */
    if (tt_daemon_start(&D, "{\"workers\": 0, \"max_jobs_per_token\": 2, \"max_space\": 1e7, "
                                "\"request_timeout\": 2}"))
        return 1;
    tt_hres r;
    if (tt_daemon_req(&D, "GET", "/v1/templates/gemm", NULL, NULL, 0, &r) || r.status != 200) {
        tt_hres_free(&r);
        return 1;
    }
    g_gemm = json_incref(json_object_get(r.json, "document"));
    tt_hres_free(&r);
    return g_gemm ? 0 : 1;
}

static int suite_clean(void)
{
    int st = tt_daemon_stop(&D);
    tt_daemon_cleanup(&D);
    json_decref(g_gemm);
    for (int i = 0; i < 2; i++) json_decref(g_before[i]);
    return st != 0;
}

static const char *TUNE = "{\"template\":\"gemm\",\"problem\":{\"M\":512,\"N\":512,\"K\":512},"
                          "\"target\":\"a2\",\"budget\":{\"trials\":4},\"seed\":%d}";

static void test_setup_jobs(void)
{
    for (int i = 0; i < 2; i++) {
        char body[512];
        snprintf(body, sizeof body, "{\"template\":\"gemm\",\"problem\":{\"M\":512,\"N\":512,"
                 "\"K\":512},\"target\":\"a2\",\"budget\":{\"trials\":4},\"seed\":%d}", i);
        tt_hres r;
        CU_ASSERT_EQUAL_FATAL(tt_daemon_req(&D, "POST", "/v1/tune", TT_TOKEN_TUNE, body,
                                            strlen(body), &r), 0);
        CU_ASSERT_EQUAL(r.status, 202);
        g_ids[i] = (long long)json_integer_value(json_object_get(r.json, "job"));
        tt_hres_free(&r);
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", g_ids[i]);
        CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", path, NULL, NULL, 0, &r), 0);
        CU_ASSERT_EQUAL(r.status, 200);
        g_before[i] = json_incref(r.json);
        tt_hres_free(&r);
    }
    (void)TUNE;
}

/* Inline template bodies built from the gemm document. */
static char *gemm_variant(const char *member, json_t *value, const char *extra_param,
                          json_t *pvalue)
{
    json_t *d = json_deep_copy(g_gemm);
    json_object_set_new(d, "name", json_string("hostile"));
    if (member) json_object_set_new(d, member, value);
    if (extra_param) json_object_set_new(json_object_get(d, "params"), extra_param, pvalue);
    char *s = tt_json_dumps(d, JSON_COMPACT);
    json_decref(d);
    return s;
}

static char *tune_with(const char *tmpl_json, const char *strategy, const char *problem)
{
    size_t n = strlen(tmpl_json) + 512;
    char *s = malloc(n);
    snprintf(s, n, "{\"template\":%s,\"problem\":%s,\"target\":\"a2\",\"backend\":\"model\","
             "\"strategy\":\"%s\",\"budget\":{\"trials\":4}}", tmpl_json, problem, strategy);
    return s;
}

typedef struct hcase {
    const char *name;
    const char *method, *path, *token;
    char *body;                 /* owned (may be NULL) */
    long status;
    const char *code;           /* NULL: any */
    const char *path_prefix;    /* error.path must start with this (NULL: not checked) */
} hcase;

static char *dupstr(const char *s) { return s ? strdup(s) : NULL; }

static char *repeat(char c, size_t n, const char *tail)
{
    char *s = malloc(n + strlen(tail) + 1);
    memset(s, c, n);
    strcpy(s + n, tail);
    return s;
}

static void run_case(const hcase *c)
{
    tt_hres r;
    int rc = tt_daemon_req(&D, c->method, c->path, c->token, c->body,
                           c->body ? strlen(c->body) : 0, &r);
    CU_ASSERT_EQUAL(rc, 0);
    if (r.status != c->status || (c->code && strcmp(tt_hres_code(&r), c->code)))
        fprintf(stderr, "\n[%s] got %ld %s, want %ld %s: %.300s\n", c->name, r.status,
                tt_hres_code(&r), c->status, c->code ? c->code : "*", r.body);
    CU_ASSERT_EQUAL(r.status, c->status);
    if (c->code) CU_ASSERT_STRING_EQUAL(tt_hres_code(&r), c->code);
    if (c->status >= 400) CU_ASSERT_PTR_NOT_NULL(json_object_get(r.json, "error"));
    if (c->path_prefix) {
        const char *p = json_string_value(json_object_get(json_object_get(r.json, "error"), "path"));
        if (!p || strncmp(p, c->path_prefix, strlen(c->path_prefix)))
            fprintf(stderr, "\n[%s] error path %s, want prefix %s\n", c->name, p ? p : "(none)",
                    c->path_prefix);
        CU_ASSERT(p && !strncmp(p, c->path_prefix, strlen(c->path_prefix)));
    }
    tt_hres_free(&r);
}

static void test_battery(void)
{
    const char *T = TT_TOKEN_ADMIN;   /* admin: not subject to the tuner's job limit */
    char *deep = malloc(20001);
    memset(deep, '[', 10000);
    memset(deep + 10000, ']', 10000);
    deep[20000] = '\0';
    char *big = repeat(' ', 2 * 1024 * 1024, "{}");
    /* 10^12 configs: gemm's 1228800 x 1000 x 4000 x 3 values of unused params */
    json_t *d = json_deep_copy(g_gemm);
    json_object_set_new(d, "name", json_string("huge_space"));
    json_t *ps = json_object_get(d, "params");
    json_object_set_new(ps, "p1", json_pack("{s:[i,i,i]}", "range", 1, 1000, 1));
    json_object_set_new(ps, "p2", json_pack("{s:[i,i,i]}", "range", 1, 4000, 1));
    json_object_set_new(ps, "p3", json_pack("[i,i,i]", 1, 2, 3));
    char *huge = tt_json_dumps(d, JSON_COMPACT);
    json_decref(d);
    char *overflow = gemm_variant("let", json_pack("{s:s, s:s, s:s, s:s, s:s}", "m_num",
                                  "ceildiv(M, block_M) * 9223372036854775807", "n_num",
                                  "ceildiv(N, block_N)", "k_tiles", "ceildiv(K, K_L1)",
                                  "kk_tiles", "K_L1 // block_K", "zero", "M // (M - M)"),
                                  NULL, NULL);
    char *badexpr = gemm_variant("constraints", json_pack("[s]", "block_M <= (M +"), NULL, NULL);
    char *p1 = tune_with(huge, "model-topk", "{\"M\":4096,\"N\":4096,\"K\":4096}");
    char *p2 = tune_with(huge, "exhaustive", "{\"M\":4096,\"N\":4096,\"K\":4096}");
    char *p3 = tune_with(badexpr, "random", "{\"M\":4096,\"N\":4096,\"K\":4096}");
    size_t pn = strlen(overflow) + 256;
    char *pred_over = malloc(pn);
    snprintf(pred_over, pn, "{\"template\":%s,\"target\":\"a2\",\"problem\":{\"M\":4096,"
             "\"N\":4096,\"K\":4096},\"top\":3}", overflow);
    pn = strlen(huge) + 256;
    char *pred_huge = malloc(pn);
    snprintf(pred_huge, pn, "{\"template\":%s,\"target\":\"a2\",\"problem\":{\"M\":4096,"
             "\"N\":4096,\"K\":4096},\"top\":3}", huge);

    hcase cases[] = {
        {"malformed", "POST", "/v1/tune", T, dupstr("{\"template\": gemm}"), 400, "malformed_json", NULL},
        {"truncated", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":{\"M\":1"), 400, "malformed_json", NULL},
        {"empty body", "POST", "/v1/tune", T, NULL, 400, "invalid_argument", NULL},
        {"not an object", "POST", "/v1/tune", T, dupstr("[1,2,3]"), 400, "invalid_argument", NULL},
        {"non-utf8", "POST", "/v1/predict", T, dupstr("{\"template\":\"\xff\xfe\"}"), 400, "malformed_json", NULL},
        {"2 MB body", "POST", "/v1/predict", T, big, 413, "too_large", NULL},
        {"depth 10000", "POST", "/v1/predict", T, deep, 400, "malformed_json", NULL},
        {"duplicate keys", "POST", "/v1/predict", T, dupstr("{\"top\":1,\"top\":2}"), 400, "malformed_json", NULL},
        {"template wrong type", "POST", "/v1/tune", T, dupstr("{\"template\":42,\"problem\":{},\"target\":\"a2\"}"), 400, "invalid_argument", "template"},
        {"problem wrong type", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":{\"M\":\"big\",\"N\":1,\"K\":1},\"target\":\"a2\"}"), 422, "invalid_problem", "problem"},
        {"problem list", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":[1],\"target\":\"a2\"}"), 422, "invalid_problem", "problem"},
        {"budget wrong type", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"budget\":\"lots\"}"), 400, "invalid_argument", "budget"},
        {"budget negative", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"budget\":{\"trials\":-5}}"), 400, "invalid_argument", "budget.trials"},
        {"budget unknown member", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"budget\":{\"trials\":2,\"hours\":1}}"), 400, "invalid_argument", "budget.hours"},
        {"remeasure out of range", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"options\":{\"remeasure\":-1}}"), 400, "invalid_argument", "options.remeasure"},
        {"remeasured is reserved", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"options\":{\"remeasured\":[1]}}"), 400, "invalid_argument", "options.remeasured"},
        {"seed wrong type", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"seed\":\"x\"}"), 400, "invalid_argument", "seed"},
        {"unknown field", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"colour\":\"red\"}"), 400, "invalid_argument", "colour"},
        {"missing target", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\"}"), 400, "invalid_argument", "target"},
        {"unknown target", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"h100\"}"), 422, "invalid_target", "target"},
        {"unknown template", "POST", "/v1/tune", T, dupstr("{\"template\":\"nope\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\"}"), 404, "not_found", "template"},
        {"unknown strategy", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"strategy\":\"guess\"}"), 400, "invalid_argument", "strategy"},
        {"unknown backend", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"backend\":\"quantum\"}"), 0, NULL, "backend"},
        {"unknown toolchain", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":\"M=64,N=64,K=64\",\"target\":\"a2\",\"backend\":\"cmd:nope\"}"), 0, NULL, "backend"},
        {"huge integer", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":{\"M\":99999999999999999999999,\"N\":1,\"K\":1},\"target\":\"a2\"}"), 400, "malformed_json", NULL},
        {"huge real", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":{\"M\":1e400,\"N\":1,\"K\":1},\"target\":\"a2\"}"), 400, "malformed_json", NULL},
        {"int64 max", "POST", "/v1/tune", T, dupstr("{\"template\":\"gemm\",\"problem\":{\"M\":9223372036854775807,\"N\":1,\"K\":1},\"target\":\"a2\"}"), 422, "invalid_problem", "problem"},
        {"negative size", "POST", "/v1/predict", T, dupstr("{\"template\":\"gemm\",\"problem\":{\"M\":-4,\"N\":1,\"K\":1},\"target\":\"a2\"}"), 422, "invalid_problem", "problem"},
        {"10^12 space model-topk", "POST", "/v1/tune", T, p1, 422, "unsupported", "strategy"},
        {"10^12 space exhaustive", "POST", "/v1/tune", T, p2, 422, "unsupported", "strategy"},
        {"10^12 space predict", "POST", "/v1/predict", T, pred_huge, 422, "unsupported", NULL},
        {"bad expression", "POST", "/v1/tune", T, p3, 422, NULL, "template.constraints[0]"},
        {"overflow/div0 lets", "POST", "/v1/predict", T, pred_over, 200, NULL, NULL},
        {"no token", "POST", "/v1/tune", NULL, dupstr("{}"), 401, "unauthorized", NULL},
        {"wrong token", "POST", "/v1/tune", "not-a-token", dupstr("{}"), 401, "unauthorized", NULL},
        {"wrong token on open read", "GET", "/v1/jobs", "not-a-token", NULL, 401, "unauthorized", NULL},
        {"read token on write", "POST", "/v1/tune", TT_TOKEN_READ, dupstr("{}"), 403, "forbidden", NULL},
        {"read token on cancel", "DELETE", "/v1/jobs/1", TT_TOKEN_READ, NULL, 403, "forbidden", NULL},
        {"unknown route", "GET", "/v1/nothing", NULL, NULL, 404, "not_found", NULL},
        {"unknown deep route", "GET", "/v1/jobs/1/trials/7", NULL, NULL, 404, "not_found", NULL},
        {"path traversal", "GET", "/v1/templates/..%2F..%2Fetc%2Fpasswd", NULL, NULL, 404, "not_found", NULL},
        {"wrong method", "PUT", "/v1/tune", T, dupstr("{}"), 405, "method_not_allowed", NULL},
        {"wrong method 2", "DELETE", "/v1/templates", T, NULL, 405, "method_not_allowed", NULL},
        {"bad job id", "GET", "/v1/jobs/-1", NULL, NULL, 404, "not_found", NULL},
        {"bad limit", "GET", "/v1/jobs?limit=1000000", NULL, NULL, 400, "invalid_argument", "limit"},
        {"bad query", "GET", "/v1/jobs?evil=1", NULL, NULL, 400, "invalid_argument", "evil"},
    };
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        if (cases[i].status == 0) {   /* unknown backend: 400/404/422 are all documented */
            tt_hres r;
            CU_ASSERT_EQUAL(tt_daemon_req(&D, cases[i].method, cases[i].path, cases[i].token,
                                          cases[i].body, strlen(cases[i].body), &r), 0);
            CU_ASSERT(r.status == 400 || r.status == 404 || r.status == 422);
            CU_ASSERT_PTR_NOT_NULL(json_object_get(r.json, "error"));
            tt_hres_free(&r);
        } else {
            run_case(&cases[i]);
        }
        free(cases[i].body);
    }
    free(huge);
    free(overflow);
    free(badexpr);
}

typedef struct chunk_src {
    size_t left;
} chunk_src;

static size_t chunk_read(char *buf, size_t size, size_t nitems, void *ud)
{
    chunk_src *c = ud;
    size_t n = size * nitems < c->left ? size * nitems : c->left;
    memset(buf, ' ', n);
    c->left -= n;
    return n;
}

static void test_chunked_too_big(void)
{
    /* no Content-Length: the body is discarded once it passes the limit, then 413 */
    CURL *c = curl_easy_init();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char url[128];
    snprintf(url, sizeof url, "%s/v1/predict", D.url);
    chunk_src src = {3 * 1024 * 1024};
    struct curl_slist *h = curl_slist_append(NULL, "Transfer-Encoding: chunked");
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, chunk_read);
    curl_easy_setopt(c, CURLOPT_READDATA, &src);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    FILE *devnull = fopen("/dev/null", "w");
    curl_easy_setopt(c, CURLOPT_WRITEDATA, devnull);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    CU_ASSERT_EQUAL(rc, CURLE_OK);
    CU_ASSERT_EQUAL(status, 413);
    fclose(devnull);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
}

static void test_stalled_request(void)
{
    /* a client that never finishes its headers is disconnected after request_timeout (2 s) */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)D.port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CU_ASSERT_FATAL(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    const char *part = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    CU_ASSERT(send(fd, part, strlen(part), 0) == (ssize_t)strlen(part));
    struct timeval tv = {15, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CU_ASSERT(n <= 0);                  /* closed (0) or reset, not answered */
    CU_ASSERT(el >= 1.0 && el < 12.0);
    close(fd);
}

/* Two Authorization headers are refused (401), whichever token comes first: the first used
 * to win silently, so a read token followed by an admin one was judged by the read token and
 * an admin token followed by anything passed. */
static void test_duplicate_authorization(void)
{
    static const struct {
        const char *method, *path, *headers;
        int status;
    } cases[] = {
        {"POST", "/v1/tune", "Authorization: Bearer " TT_TOKEN_ADMIN "\r\n"
                             "Authorization: Bearer " TT_TOKEN_READ "\r\n", 401},
        {"POST", "/v1/tune", "Authorization: Bearer " TT_TOKEN_READ "\r\n"
                             "authorization: Bearer " TT_TOKEN_ADMIN "\r\n", 401},
        {"GET", "/v1/jobs", "Authorization: Bearer " TT_TOKEN_READ "\r\n"
                            "Authorization: Bearer " TT_TOKEN_READ "\r\n", 401},
        {"GET", "/v1/jobs", "Authorization: Bearer " TT_TOKEN_READ "\r\n", 200},
        {"GET", "/healthz", "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n", 200},
    };
    static char resp[65536];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = tt_raw_connect(D.port, NULL);
        CU_ASSERT_FATAL(fd >= 0);
        char req[1024];
        int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                         "%sContent-Length: 2\r\n\r\n{}", cases[i].method, cases[i].path,
                         cases[i].headers);
        CU_ASSERT_EQUAL(tt_raw_send(fd, req, (size_t)n), 0);
        int closed = 0;
        tt_raw_read(fd, resp, sizeof resp - 1, 10.0, &closed);
        close(fd);
        if (tt_raw_status(resp) != cases[i].status)
            fprintf(stderr, "duplicate authorization case %zu: %s\n", i, resp);
        CU_ASSERT_EQUAL(tt_raw_status(resp), cases[i].status);
        if (cases[i].status == 401)
            CU_ASSERT_PTR_NOT_NULL(strstr(tt_raw_body(resp), "given more than once"));
    }
}

static void test_overflow_is_infeasible(void)
{
    /* the overflowing / dividing lets make every config infeasible, with that reason */
    json_t *d = json_deep_copy(g_gemm);
    json_object_set_new(d, "name", json_string("hostile"));
    json_object_set_new(json_object_get(d, "let"), "zero", json_string("M // (M - M)"));
    char *tj = tt_json_dumps(d, JSON_COMPACT);
    json_decref(d);
    size_t n = strlen(tj) + 256;
    char *body = malloc(n);
    snprintf(body, n, "{\"template\":%s,\"target\":\"a2\",\"problem\":{\"M\":256,\"N\":256,"
             "\"K\":256},\"top\":3}", tj);
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/predict", NULL, body, strlen(body), &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    json_t *sp = json_object_get(r.json, "space");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(sp, "feasible")), 0);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "results")), 0);
    char *rej = tt_json_dumps(json_object_get(sp, "rejected"), 0);
    CU_ASSERT(rej && strstr(rej, "zero") != NULL);
    free(rej);
    tt_hres_free(&r);
    free(body);
    free(tj);
}

static void test_job_limit(void)
{
    /* the tuner already has 2 queued jobs (limit 2): a third is refused, another token is not */
    const char *body = "{\"template\":\"gemm\",\"problem\":\"M=256,N=256,K=256\",\"target\":\"a2\"}";
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/tune", TT_TOKEN_TUNE, body, strlen(body), &r), 0);
    CU_ASSERT_EQUAL(r.status, 429);
    CU_ASSERT_STRING_EQUAL(tt_hres_code(&r), "limit_exceeded");
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/tune", TT_TOKEN_TUNE2, body, strlen(body), &r), 0);
    CU_ASSERT_EQUAL(r.status, 202);
    long long id = (long long)json_integer_value(json_object_get(r.json, "job"));
    tt_hres_free(&r);
    /* cancelling frees a slot */
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", g_ids[0]);
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "DELETE", path, TT_TOKEN_TUNE, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/tune", TT_TOKEN_TUNE, body, strlen(body), &r), 0);
    CU_ASSERT_EQUAL(r.status, 202);
    tt_hres_free(&r);
    (void)id;
}

static void test_still_up(void)
{
    CU_ASSERT(tt_daemon_alive(&D));
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", "/healthz", NULL, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_hres_free(&r);
    /* the jobs made before the battery: job 2 unchanged, job 1 only cancelled */
    for (int i = 0; i < 2; i++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", g_ids[i]);
        CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", path, NULL, NULL, 0, &r), 0);
        CU_ASSERT_EQUAL(r.status, 200);
        if (i == 1) {
            CU_ASSERT(json_equal(r.json, g_before[i]));
        } else {
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r.json, "state")), "cancelled");
            CU_ASSERT(json_equal(json_object_get(r.json, "problem"),
                                 json_object_get(g_before[i], "problem")));
            CU_ASSERT(json_equal(json_object_get(r.json, "seed"), json_object_get(g_before[i], "seed")));
        }
        tt_hres_free(&r);
    }
    /* metrics counted the refusals */
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", "/metrics", NULL, NULL, 0, &r), 0);
    CU_ASSERT(strstr(r.body, "status=\"413\"") != NULL);
    CU_ASSERT(strstr(r.body, "route=\"POST /v1/tune\",status=\"429\"} 1") != NULL);
    tt_hres_free(&r);
}

static const tt_test_case cases[] = {{"setup_jobs", test_setup_jobs},
                                     {"battery", test_battery},
                                     {"chunked_too_big", test_chunked_too_big},
                                     {"stalled_request", test_stalled_request},
                                     {"duplicate_authorization", test_duplicate_authorization},
                                     {"overflow_is_infeasible", test_overflow_is_infeasible},
                                     {"job_limit", test_job_limit},
                                     {"still_up", test_still_up},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"hostile", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_http_routes.c - pieces of the HTTP layer without sockets: the route table
 * (tests/data/http/routes.txt; HEAD, the Allow list of a 405, query arguments a route
 * refuses), the JSON depth pre-check, the metrics registry and its
 * Prometheus text, error responses from the error table, and the log levels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_int.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "tt_test.h"

static void test_routes(void)
{
    char *path = tt_test_src("tests/data/http/routes.txt");
    char *text = tt_test_read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char *f[4] = {line, NULL, NULL, NULL};
        for (int i = 1; i < 4; i++) {
            f[i] = f[i - 1] ? strchr(f[i - 1], '\t') : NULL;
            if (f[i]) *f[i]++ = '\0';
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(f[2]);
        tt_req req;
        memset(&req, 0, sizeof req);
        char scratch[256];
        int known = 0;
        int ri = tt__route_match(f[0], f[1], &req, scratch, sizeof scratch, &known);
        if (!strcmp(f[2], "404")) {
            CU_ASSERT_EQUAL(ri, -1);
            CU_ASSERT_EQUAL(known, 0);
        } else if (!strcmp(f[2], "405")) {
            CU_ASSERT_EQUAL(ri, -1);
            CU_ASSERT_EQUAL(known, 1);
        } else {
            CU_ASSERT_FATAL(ri >= 0);
            if (strcmp(tt__route_at((size_t)ri)->name, f[2]))
                fprintf(stderr, "\n%s %s -> %s, want %s\n", f[0], f[1],
                        tt__route_at((size_t)ri)->name, f[2]);
            CU_ASSERT_STRING_EQUAL(tt__route_at((size_t)ri)->name, f[2]);
            const char *want = f[3] ? f[3] : "";
            CU_ASSERT_EQUAL(req.nparams, *want ? 1 : 0);
            if (*want && req.nparams) CU_ASSERT_STRING_EQUAL(req.params[0], want);
        }
        n++;
    }
    CU_ASSERT(n >= 30);
    /* every route in the table is reachable and named "METHOD /path" */
    for (size_t i = 0; i < tt__route_count(); i++) {
        const tt__route *r = tt__route_at(i);
        CU_ASSERT(!strncmp(r->name, r->method, strlen(r->method)));
        CU_ASSERT_PTR_NOT_NULL(r->fn);
        CU_ASSERT_STRING_EQUAL(tt__route_names()[i], r->name);
    }
    CU_ASSERT_PTR_NULL(tt__route_at(tt__route_count()));
    /* a path longer than the scratch buffer never matches */
    tt_req req;
    char small[8];
    int known;
    CU_ASSERT_EQUAL(tt__route_match("GET", "/v1/templates", &req, small, sizeof small, &known), -1);
    free(text);
    free(path);
}

/* HEAD is served by the GET route of a path; other methods the path lacks stay 405. */
static const struct {
    const char *method, *path, *want;   /* route name, "404" or "405" */
} head_cases[] = {
    {"HEAD", "/healthz", "GET /healthz"},
    {"HEAD", "/v1/jobs/7", "GET /v1/jobs/{id}"},
    {"HEAD", "/v1/jobs/7/events", "GET /v1/jobs/{id}/events"},
    {"HEAD", "/ui/assets/app.js", "GET /ui/assets/{name}"},
    {"HEAD", "/v1/tune", "405"},
    {"HEAD", "/v1/templates/gemm/validate", "405"},
    {"HEAD", "/v1/nope", "404"},
    {"OPTIONS", "/v1/jobs", "405"},
};

/* The Allow header of a 405: the path's methods in table order, HEAD after GET. */
static const struct {
    const char *path;
    size_t cap;                         /* 0: the full 64 bytes */
    const char *want;
    size_t count;
} allow_cases[] = {
    {"/healthz", 0, "GET, HEAD", 2},
    {"/v1/jobs/7", 0, "GET, HEAD, DELETE", 3},
    {"/v1/templates/gemm", 0, "GET, HEAD, PUT", 3},
    {"/v1/templates/gemm/validate", 0, "POST", 1},
    {"/v1/tune", 0, "POST", 1},
    {"/v1/nope", 0, "", 0},
    {"/v1/jobs/7", 8, "GET", 1},        /* what does not fit is left out, never cut */
};

static void test_methods(void)
{
    for (size_t i = 0; i < sizeof head_cases / sizeof head_cases[0]; i++) {
        tt_req req;
        memset(&req, 0, sizeof req);
        char scratch[256];
        int known = 0;
        int ri = tt__route_match(head_cases[i].method, head_cases[i].path, &req, scratch,
                                 sizeof scratch, &known);
        const char *want = head_cases[i].want;
        const char *got = ri >= 0 ? tt__route_at((size_t)ri)->name : known ? "405" : "404";
        if (strcmp(got, want))
            fprintf(stderr, "\n%s %s -> %s, want %s\n", head_cases[i].method,
                    head_cases[i].path, got, want);
        CU_ASSERT_STRING_EQUAL(got, want);
    }
    for (size_t i = 0; i < sizeof allow_cases / sizeof allow_cases[0]; i++) {
        char buf[64];
        memset(buf, 'x', sizeof buf);
        size_t cap = allow_cases[i].cap ? allow_cases[i].cap : sizeof buf;
        size_t n = tt__route_allow(allow_cases[i].path, buf, cap);
        if (strcmp(buf, allow_cases[i].want))
            fprintf(stderr, "\nAllow %s -> \"%s\", want \"%s\"\n", allow_cases[i].path, buf,
                    allow_cases[i].want);
        CU_ASSERT_STRING_EQUAL(buf, allow_cases[i].want);
        CU_ASSERT_EQUAL(n, allow_cases[i].count);
    }
    /* every path of the table has an Allow list naming its own method */
    for (size_t i = 0; i < tt__route_count(); i++) {
        const tt__route *r = tt__route_at(i);
        char path[128], buf[64];
        size_t k = 0;
        for (const char *p = r->pattern; *p && k + 2 < sizeof path; p++) {
            if (p[0] == '{' && p[1] == '}') { path[k++] = 'x'; p++; }
            else path[k++] = *p;
        }
        path[k] = '\0';
        CU_ASSERT(tt__route_allow(path, buf, sizeof buf) >= 1);
        CU_ASSERT(strstr(buf, r->method) != NULL);
    }
}

/* Query arguments: a repeated one is reported (the first value stays, nothing is
 * overwritten); routes marked TT__ROUTE_NOQUERY refuse any argument, others leave them to
 * their handler (GET /v1/best takes the template's inputs as free-form arguments). */
static size_t route_named(const char *name)
{
    for (size_t i = 0; i < tt__route_count(); i++)
        if (!strcmp(tt__route_at(i)->name, name)) return i;
    CU_FAIL("no such route");
    return 0;
}

static const struct {
    const char *route, *query;   /* query: JSON object of the arguments */
    tt_rc rc;
    const char *path;
} noquery_cases[] = {
    {"GET /v1/jobs/{id}", "{\"verbose\": \"1\"}", TT_EINVAL, "verbose"},
    {"GET /v1/templates", "{\"x\": \"\"}", TT_EINVAL, "x"},
    {"GET /v1/targets/{name}", "{\"x\": \"1\"}", TT_EINVAL, "x"},
    {"GET /v1/config", "{\"x\": \"1\"}", TT_EINVAL, "x"},
    {"POST /v1/tune", "{\"dry\": \"1\"}", TT_EINVAL, "dry"},
    {"GET /v1/targets/{name}", "{}", TT_OK, ""},
    {"GET /v1/best", "{\"M\": \"1\", \"dtype\": \"float16\"}", TT_OK, ""},
    {"GET /v1/jobs", "{\"state\": \"done\"}", TT_OK, ""},   /* the handler checks */
    {"GET /healthz", "{\"x\": \"1\"}", TT_OK, ""},          /* probes never fail on them */
};

static void test_query_args(void)
{
    json_t *q = json_object();
    CU_ASSERT_EQUAL(tt__query_add(q, "M", "1024"), 0);
    CU_ASSERT_EQUAL(tt__query_add(q, "M", "2048"), 1);
    CU_ASSERT_EQUAL(tt__query_add(q, "flag", NULL), 0);
    CU_ASSERT_EQUAL(tt__query_add(q, "flag", NULL), 1);
    CU_ASSERT_EQUAL(tt__query_add(q, "bad", "\xff"), -1);
    CU_ASSERT_EQUAL(tt__query_add(q, "\xff", "x"), -1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(q, "M")), "1024");
    CU_ASSERT_EQUAL(json_object_size(q), 2);
    json_decref(q);
    for (size_t i = 0; i < sizeof noquery_cases / sizeof noquery_cases[0]; i++) {
        json_t *args = json_loads(noquery_cases[i].query, 0, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(args);
        tt_errinfo err;
        tt_errinfo_clear(&err);
        const tt__route *rt = tt__route_at(route_named(noquery_cases[i].route));
        tt_rc rc = tt__route_query_check(rt, args, &err);
        CU_ASSERT_EQUAL(rc, noquery_cases[i].rc);
        if (rc) {
            CU_ASSERT_STRING_EQUAL(err.path, noquery_cases[i].path);
            CU_ASSERT(strstr(err.msg, noquery_cases[i].path) != NULL);
        }
        json_decref(args);
    }
    CU_ASSERT_EQUAL(tt__route_query_check(tt__route_at(0), NULL, NULL), TT_OK);
}

static const struct {
    const char *text;
    int depth;
} depth_cases[] = {
    {"1", 0},
    {"{}", 1},
    {"[[[]]]", 3},
    {"{\"a\": [1, {\"b\": [2]}]}", 4},
    {"\"[[[[[[\"", 0},                 /* brackets inside strings do not count */
    {"[\"\\\"[[[\", [1]]", 2},          /* escaped quote inside a string */
    {"]]]][[", 2},                      /* unbalanced: counts what opens */
};

static void test_json_depth(void)
{
    for (size_t i = 0; i < sizeof depth_cases / sizeof depth_cases[0]; i++)
        CU_ASSERT_EQUAL(tt_json_depth(depth_cases[i].text, strlen(depth_cases[i].text), 64),
                        depth_cases[i].depth);
    char deep[20001];
    memset(deep, '[', 10000);
    memset(deep + 10000, ']', 10000);
    deep[20000] = '\0';
    CU_ASSERT_EQUAL(tt_json_depth(deep, 20000, 64), 65);   /* stops at limit + 1 */
    CU_ASSERT_EQUAL(tt_json_depth(deep, 20000, 100000), 10000);
}

static void test_metrics(void)
{
    static const char *const names[] = {"GET /a", "POST /b"};
    tt_metrics *m = tt_metrics_new(names, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    tt_metrics_observe(m, 0, 200, 0.0002);
    tt_metrics_observe(m, 0, 200, 0.003);
    tt_metrics_observe(m, 1, 422, 20.0);       /* beyond the last bucket: +Inf only */
    tt_metrics_observe(m, 99, 404, 0.001);     /* unmatched */
    tt_metrics_observe(m, 0, 299, 0.001);      /* an unusual status: "other" */
    CU_ASSERT_EQUAL(tt_metrics_count(m, 0, 200), 2);
    CU_ASSERT_EQUAL(tt_metrics_count(m, 1, 422), 1);
    CU_ASSERT_EQUAL(tt_metrics_count(m, 2, 404), 1);
    CU_ASSERT_EQUAL(tt_metrics_count(m, 1, 200), 0);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    CU_ASSERT_EQUAL(tt_metrics_render(m, &buf, &len, &cap), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    CU_ASSERT_EQUAL(strlen(buf), len);
    CU_ASSERT(strstr(buf, "tiletune_http_requests_total{route=\"GET /a\",status=\"200\"} 2\n") != NULL);
    CU_ASSERT(strstr(buf, "tiletune_http_requests_total{route=\"GET /a\",status=\"other\"} 1\n") != NULL);
    CU_ASSERT(strstr(buf, "tiletune_http_requests_total{route=\"unmatched\",status=\"404\"} 1\n") != NULL);
    /* cumulative buckets: 0.0002 <= 0.00025; 0.003 <= 0.005 */
    CU_ASSERT(strstr(buf, "route=\"GET /a\",le=\"0.0001\"} 0\n") != NULL);
    CU_ASSERT(strstr(buf, "route=\"GET /a\",le=\"0.00025\"} 1\n") != NULL);
    CU_ASSERT(strstr(buf, "route=\"GET /a\",le=\"0.005\"} 3\n") != NULL);
    CU_ASSERT(strstr(buf, "route=\"POST /b\",le=\"10\"} 0\n") != NULL);
    CU_ASSERT(strstr(buf, "route=\"POST /b\",le=\"+Inf\"} 1\n") != NULL);
    CU_ASSERT(strstr(buf, "tiletune_http_request_duration_seconds_count{route=\"GET /a\"} 3\n") != NULL);
    free(buf);
    tt_metrics_free(m);
    tt_metrics_free(NULL);
    tt_metrics_observe(NULL, 0, 200, 1);
}

static void test_resp_error(void)
{
    tt_resp r = {0};
    tt_resp_error(&r, TT_ETEMPLATE, "params.block_M[2]", "not an %s", "integer");
    CU_ASSERT_EQUAL(r.status, 422);
    json_t *e = json_object_get(r.json, "error");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "code")), "invalid_template");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "message")), "not an integer");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(e, "path")), "params.block_M[2]");
    /* every code of the table maps to its status and code string */
    for (int rc = 1; rc < TT_RC__COUNT; rc++) {
        tt_resp_error(&r, (tt_rc)rc, NULL, "x");
        CU_ASSERT_EQUAL(r.status, tt_rc_http_status((tt_rc)rc));
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(r.json, "error"), "code")),
                               tt_rc_code((tt_rc)rc));
        CU_ASSERT_PTR_NULL(json_object_get(json_object_get(r.json, "error"), "path"));
    }
    tt_errinfo ei;
    tt_errinfo_clear(&ei);
    tt_errf(&ei, TT_EEXPR, "constraints[0]", "unexpected end");
    ei.pos = 12;
    tt_resp_errinfo(&r, &ei);
    CU_ASSERT_EQUAL(r.status, 422);
    CU_ASSERT(strstr(json_string_value(json_object_get(json_object_get(r.json, "error"), "message")),
                     "offset 12") != NULL);
    tt_resp_json(&r, 201, json_pack("{s:i}", "x", 1));
    CU_ASSERT_EQUAL(r.status, 201);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(r.json, "x")), 1);
    tt_resp_json(&r, 200, NULL);                  /* out of memory building a body */
    CU_ASSERT_EQUAL(r.status, 503);
    json_decref(r.json);
}

static void test_log(void)
{
    CU_ASSERT_EQUAL(tt_log_level_parse("debug"), TT_LOG_DEBUG);
    CU_ASSERT_EQUAL(tt_log_level_parse("WARNING"), TT_LOG_WARNING);
    CU_ASSERT_EQUAL(tt_log_level_parse("warn"), TT_LOG_WARNING);
    CU_ASSERT_EQUAL(tt_log_level_parse("loud"), -1);
    CU_ASSERT_STRING_EQUAL(tt_log_level_name(TT_LOG_FATAL), "fatal");
    char *dir = tt_test_tmpdir("tt-log");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/log", dir);
    CU_ASSERT_EQUAL(tt_log_open(path, TT_LOG_NOTICE), 0);
    tt_info("hidden %d", 1);
    tt_notice("shown %d", 2);
    tt_error("multi\nline %s", "x");
    tt_log_close();
    CU_ASSERT_EQUAL(tt_log_open("/nonexistent/dir/log", TT_LOG_INFO), -1);
    tt_log_threshold = TT_LOG_INFO;
    char *text = tt_test_read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT(strstr(text, "hidden") == NULL);
    CU_ASSERT(strstr(text, "notice  shown 2\n") != NULL);
    CU_ASSERT(strstr(text, "error   multi line x\n") != NULL);   /* one event, one line */
    free(text);
    tt_test_rmrf(dir);
    free(dir);
}

static const tt_test_case cases[] = {{"routes", test_routes},         {"json_depth", test_json_depth},
                                     {"metrics", test_metrics},       {"resp_error", test_resp_error},
                                     {"log", test_log},               {"methods", test_methods},
                                     {"query_args", test_query_args}, {NULL, NULL}};
static const tt_test_suite suites[] = {{"http_routes", NULL, NULL, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_ui_http.c - the web view (/ui/) over HTTP, without a browser: a request for a page
 * that is refused before or by its handler (a query argument that is not UTF-8 or given
 * twice, a path that is not UTF-8 or holds %00, an unknown page or asset, a method other than
 * GET/HEAD) is answered as the view's HTML error page with the API's status and message
 * (escaped), not as the API's JSON; the /v1/ routes keep their JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "tt_daemon.h"
#include "tt_test.h"

static tt_daemon D;
static long long g_job;          /* a queued job (no workers) */

static int suite_init(void)
{
    if (tt_daemon_start(&D, "{\"workers\": 0}")) return 1;
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

/* pattern with "{job}" replaced by the queued job's id */
static void job_path(char *out, size_t cap, const char *pattern)
{
    const char *at = strstr(pattern, "{job}");
    if (at)
        snprintf(out, cap, "%.*s%lld%s", (int)(at - pattern), pattern, g_job, at + 5);
    else
        snprintf(out, cap, "%s", pattern);
}

static void test_refusals_are_pages(void)
{
    static const struct {
        const char *method, *path;
        long status;
        int html;                 /* 1: the view's error page; 0: the API's JSON */
        const char *says;         /* in the page's error paragraph, or the JSON's code */
    } cases[] = {
        {"GET", "/ui/?x=%FF", 400, 1, "a query argument is not valid UTF-8"},
        {"GET", "/ui/shapes?template=%FF&target=a2", 400, 1, "not valid UTF-8"},
        {"GET", "/ui/?x=1&x=2", 400, 1, "query argument &quot;x&quot; given twice"},
        {"GET", "/ui/jobs/%FF", 400, 1, "the path is not valid UTF-8"},
        {"GET", "/ui/jobs/{job}%00", 400, 1, "encoded NUL byte"},
        {"GET", "/ui/nope", 404, 1, "no route GET /ui/nope"},
        {"GET", "/ui/jobs/{job}/trials", 404, 1, "no route GET /ui/jobs/"},
        {"GET", "/ui/%3Cb%3Ebold%3C%2Fb%3E", 404, 1, "/ui/&lt;b&gt;bold&lt;/b&gt;"},
        {"GET", "/ui/assets/nope.js", 404, 1, "no such asset"},
        {"POST", "/ui/", 405, 1, "POST is not allowed on /ui/ (allowed: GET, HEAD)"},
        {"DELETE", "/ui/jobs/{job}", 405, 1, "DELETE is not allowed on /ui/jobs/"},
        {"GET", "/ui/jobs/999999", 404, 1, "no job 999999"},     /* as before: the handler's */
        /* the API and paths that only begin like the view's keep their JSON */
        {"GET", "/v1/jobs?x=%FF", 400, 0, "bad_encoding"},
        {"GET", "/uix", 404, 0, "not_found"},
        {"POST", "/v1/jobs", 405, 0, "method_not_allowed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        job_path(path, sizeof path, cases[i].path);
        tt_hres r;
        CU_ASSERT_EQUAL_FATAL(tt_daemon_req(&D, cases[i].method, path, TT_TOKEN_TUNE, NULL, 0,
                                            &r), 0);
        const char *body = r.body ? r.body : "";
        const char *err = strstr(body, "<p class=\"error\" id=\"error\">");
        int ok = r.status == cases[i].status;
        if (cases[i].html)
            ok = ok && !strcmp(r.content_type, "text/html; charset=utf-8") &&
                 !strncmp(body, "<!doctype html>", 15) && err && strstr(err, cases[i].says) &&
                 !strstr(body, "<b>");
        else
            ok = ok && !strcmp(r.content_type, "application/json") &&
                 !strcmp(tt_hres_code(&r), cases[i].says);
        if (!ok)
            fprintf(stderr, "\n%s %s: %ld %s %.400s\n", cases[i].method, path, r.status,
                    r.content_type, body);
        CU_ASSERT(ok);
        tt_hres_free(&r);
    }
}

static const tt_test_case cases[] = {{"refusals_are_pages", test_refusals_are_pages},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"ui_http", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

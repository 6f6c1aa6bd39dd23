/* SPDX-License-Identifier: MIT
 * test_ui_http.c - the web view (/ui/) over HTTP, without a browser: a request for a page
 * that is refused before or by its handler (a query argument that is not UTF-8 or given
 * twice, a path that is not UTF-8 or holds %00, an unknown page or asset, a method other than
 * GET/HEAD) is answered as the view's HTML error page with the API's status and message
 * (escaped), not as the API's JSON; the /v1/ routes keep their JSON.  The jobs list shows
 * 100 jobs a page, newest first, with links to the older and newer pages (?offset=): with
 * more than 100 jobs the oldest were listed nowhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "tt_daemon.h"
#include "tt_test.h"

static tt_daemon D;
static long long g_job;          /* the first of NJOBS queued jobs (no workers) */
#define NJOBS 101                /* one more than a page of the jobs list */

static int suite_init(void)
{
    if (tt_daemon_start(&D, "{\"workers\": 0, \"max_jobs_per_token\": 1000}")) return 1;
    for (int i = 0; i < NJOBS; i++) {
        char body[256];
        snprintf(body, sizeof body, "{\"template\":\"gemm\",\"problem\":{\"M\":%d,\"N\":512,"
                 "\"K\":512},\"target\":\"a2\",\"budget\":{\"trials\":4}}", 64 * (i + 1));
        long long id = tt_daemon_submit(&D, body);
        if (id <= 0) return 1;
        if (i == 0) g_job = id;
    }
    return 0;
}

static int suite_clean(void)
{
    int st = tt_daemon_stop(&D);
    tt_daemon_cleanup(&D);
    return st != 0;
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
        {"GET", "/ui/?offset=abc", 400, 1, "offset: must be an integer"},    /* the path */
        {"GET", "/ui/shapes?template=gemm&target=zz", 404, 1, "nothing tuned for gemm on zz"},
        /* the API and paths that only begin like the view's keep their JSON */
        {"GET", "/v1/jobs?x=%FF", 400, 0, "bad_encoding"},
        {"GET", "/uix", 404, 0, "not_found"},
        {"POST", "/v1/jobs", 405, 0, "method_not_allowed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        tt_path_job(path, sizeof path, cases[i].path, g_job);
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

/* Rows of a jobs-list page: the first and last job id and their count. */
static int job_rows(const char *html, long long *first, long long *last)
{
    int n = 0;
    for (const char *p = strstr(html, "<tr data-job=\""); p; p = strstr(p + 1, "<tr data-job=\"")) {
        long long id = strtoll(p + 14, NULL, 10);
        if (!n) *first = id;
        *last = id;
        n++;
    }
    return n;
}

static void test_jobs_pages(void)
{
    static const struct {
        const char *query;
        int rows;
        long long first, last;       /* offsets from the newest job (g_job + NJOBS - 1) */
        const char *has, *hasnt;
    } cases[] = {
        {"", 100, 0, 99, "<a id=\"jobs-older\" href=\"/ui/?offset=100\">", "jobs-newer"},
        {"?offset=100", 1, 100, 100, "<a id=\"jobs-newer\" href=\"/ui/?offset=0\">",
         "href=\"/ui/?offset=200\">"},
        {"?offset=1", 100, 1, 100, "<a id=\"jobs-newer\" href=\"/ui/?offset=0\">",
         "href=\"/ui/?offset=101\">"},
        {"?offset=500", 0, 0, 0, "No jobs this far back.", "jobs-empty\" hidden"},
    };
    long long newest = g_job + NJOBS - 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[64];
        snprintf(path, sizeof path, "/ui/%s", cases[i].query);
        tt_hres r;
        CU_ASSERT_EQUAL_FATAL(tt_daemon_req(&D, "GET", path, NULL, NULL, 0, &r), 0);
        const char *body = r.body ? r.body : "";
        long long first = 0, last = 0;
        int rows = job_rows(body, &first, &last);
        int ok = r.status == 200 && rows == cases[i].rows &&
                 (!rows || (first == newest - cases[i].first && last == newest - cases[i].last)) &&
                 strstr(body, cases[i].has) && !strstr(body, cases[i].hasnt);
        if (!ok)
            fprintf(stderr, "\n%s: %ld, %d rows %lld..%lld (newest %lld)\n", path, r.status, rows,
                    first, last, newest);
        CU_ASSERT(ok);
        tt_hres_free(&r);
    }
}

static const tt_test_case cases[] = {{"refusals_are_pages", test_refusals_are_pages},
                                     {"jobs_pages", test_jobs_pages},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"ui_http", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

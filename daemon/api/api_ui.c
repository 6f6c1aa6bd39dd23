/* SPDX-License-Identifier: MIT
 * api_ui.c - the read-only web view at /ui/: server-rendered pages (jobs list, job page,
 * shape page) built on the API's own handlers, and the static assets (CSS, our own JS that
 * draws the plots as SVG and follows running jobs over SSE) compiled into the binary.
 *
 * Every page is complete without JavaScript (tables rendered here); the script only adds the
 * plots and live updates.  Pages call the v1 handlers with a sub-request, so they show exactly
 * what the API answers.  Text from the store is always HTML-escaped.
 * Thread-safety: as every handler (no state of its own).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_int.h"
#include "ui_assets.h"

/* ---- HTML writing ------------------------------------------------------------------- */

/* Escaped text (NULL prints as "-"). */
static void ui_esc(FILE *f, const char *s)
{
    if (!s) {
        fputc('-', f);
        return;
    }
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* A JSON scalar as escaped text (numbers %g, strings raw, null "-"). */
static void ui_jesc(FILE *f, const json_t *v)
{
    char b[64];
    if (json_is_string(v)) ui_esc(f, json_string_value(v));
    else if (json_is_integer(v)) fprintf(f, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) {
        snprintf(b, sizeof b, "%.6g", json_real_value(v));
        ui_esc(f, b);
    } else if (json_is_boolean(v)) fputs(json_is_true(v) ? "true" : "false", f);
    else fputc('-', f);
}

/* Microseconds as "12.3 us" / "1.23 ms" (a cell: "-" when absent). */
static void ui_us(FILE *f, const json_t *v)
{
    if (!json_is_number(v)) {
        fputc('-', f);
        return;
    }
    double us = json_number_value(v);
    if (us >= 1000) fprintf(f, "%.3g ms", us / 1000);
    else fprintf(f, "%.3g us", us);
}

/* A config object as "k=v, k=v". */
static void ui_config(FILE *f, const json_t *cfg)
{
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach((json_t *)cfg, k, v) {
        if (!first) fputs(", ", f);
        ui_esc(f, k);
        fputc('=', f);
        ui_jesc(f, v);
        first = 0;
    }
    if (first) fputc('-', f);
}

/* A member by dotted path ("template.name"), borrowed; NULL when absent. */
static const json_t *ui_get(const json_t *j, const char *path)
{
    char key[64];
    while (j && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key) return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        j = json_object_get(j, key);
        path += n + (dot ? 1 : 0);
    }
    return j;
}

/* Literal text and escaped string members in turn: {text, path} pairs (path NULL: text only). */
typedef struct ui_part {
    const char *text;
    const char *path;
} ui_part;

static void ui_parts(FILE *f, const json_t *j, const ui_part *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs(parts[i].text, f);
        if (parts[i].path) ui_esc(f, json_string_value(ui_get(j, parts[i].path)));
    }
}

static void ui_head(FILE *f, const char *title, const char *page)
{
    fputs("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
          "<link rel=\"icon\" href=\"data:,\"><title>", f);
    ui_esc(f, title);
    fputs(" - tiletune</title><link rel=\"stylesheet\" href=\"/ui/assets/style.css\"></head>\n"
          "<body data-page=\"", f);
    ui_esc(f, page);
    fputs("\"><header><a class=\"brand\" href=\"/ui/\">tiletune</a><nav>"
          "<a href=\"/ui/\">jobs</a><a href=\"/ui/shapes\">shapes</a></nav></header>\n<main>\n",
          f);
}

static void ui_foot(FILE *f)
{
    fputs("</main>\n<footer>Numbers from the <code>model</code> and <code>sim</code> backends "
          "come from tiletune's cost model and pipeline simulator: models of the chip, not "
          "measurements.</footer>\n<script src=\"/ui/assets/app.js\"></script>\n</body></html>\n",
          f);
}

/* Response headers of every /ui/ answer: the pages run our one script and stylesheet and talk
 * only to this daemon; nothing may frame them, sniff their type or learn where they link. */
static const char *const ui_headers[] = {
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options", "nosniff",
    "X-Frame-Options", "DENY",
    "Referrer-Policy", "no-referrer",
    NULL};

/* The API's error in resp (left by a sub-request) as a paragraph of a page: its path (the
 * argument or member it names, as tlctl prints it), message, code and status. */
static void ui_error_text(FILE *f, const tt_resp *err)
{
    const json_t *e = json_object_get(err->json, "error");
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *path = json_string_value(json_object_get(e, "path"));
    fputs("<p class=\"error\" id=\"error\">", f);
    if (path && *path) {        /* where the message applies: "offset: must be an integer" */
        ui_esc(f, path);
        fputs(": ", f);
    }
    ui_esc(f, msg ? msg : "error");
    fputs(" <span class=\"note\">(", f);
    ui_esc(f, json_string_value(json_object_get(e, "code")));
    fprintf(f, ", HTTP %d)</span></p>\n", err->status);
}

/* A page in place of the API's error (same status): the message and the way back. */
static void ui_error_page(FILE *f, const tt_resp *err)
{
    ui_head(f, "error", "error");
    fputs(err->status == 404 ? "<h1>Not found</h1>\n" : "<h1>Error</h1>\n", f);
    ui_error_text(f, err);
    fputs("<p><a href=\"/ui/\">all jobs</a></p>\n", f);
    ui_foot(f);
}

void tt__ui_refusal(const tt_server *srv, const char *path, tt_resp *resp)
{
    int ours = path && !strncmp(path, "/ui", 3) && (path[3] == '\0' || path[3] == '/');
    if (!srv->ui || !ours || resp->text || resp->status < 400 ||
        !json_is_object(json_object_get(resp->json, "error")))
        return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    ui_error_page(f, resp);
    if (fclose(f) != 0) {
        free(buf);
        return;
    }
    json_decref(resp->json);
    resp->json = NULL;
    resp->text = buf;
    resp->content_type = "text/html; charset=utf-8";
    resp->headers = ui_headers;
}

/* Answer a page written by fn(f) -> 0 (status 200, or the error status fn left in resp->status
 * for a page that shows an error itself); -1: the API's error in resp, answered as an error
 * page with its status.  resp->json is never the answer. */
typedef int (*ui_page_fn)(tt_server *srv, const tt_req *req, tt_resp *resp, FILE *f);

static void ui_answer(tt_server *srv, const tt_req *req, tt_resp *resp, ui_page_fn fn)
{
    if (!srv->ui) {
        tt_resp_error(resp, TT_ENOTFOUND, NULL, "the web view is off (config: ui = false)");
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        tt_resp_error(resp, TT_ENOMEM, NULL, "out of memory");
        return;
    }
    resp->status = 0;
    int rc = fn(srv, req, resp, f);
    if (rc && resp->json) ui_error_page(f, resp);   /* fn wrote nothing before its error */
    if (fclose(f) != 0 || (rc && !resp->json)) {
        free(buf);
        if (!resp->json) tt_resp_error(resp, TT_ENOMEM, NULL, "out of memory");
        return;
    }
    json_decref(resp->json);
    resp->json = NULL;
    if (!resp->status) resp->status = 200;
    resp->text = buf;
    resp->content_type = "text/html; charset=utf-8";
    resp->headers = ui_headers;
}

/* Call a v1 handler with a sub-request (same caller, new path parameters and query).
 * Returns the answer's JSON (new reference) on 2xx; else NULL with the error left in resp. */
static json_t *ui_sub(tt_server *srv, const tt_req *req, tt_handler_fn fn, const char *param,
                      json_t *query_stolen, tt_resp *resp)
{
    tt_req sub = *req;
    sub.method = "GET";
    sub.nparams = param ? 1 : 0;
    sub.params[0] = param;
    sub.query = query_stolen;
    sub.body = NULL;
    sub.raw_body = NULL;
    sub.raw_len = 0;
    tt_resp r = {0};
    fn(srv, &sub, &r);
    json_decref(query_stolen);
    if (r.status >= 200 && r.status < 300 && r.json) {
        free(r.text);
        return r.json;
    }
    *resp = r;
    if (!resp->json && !resp->text) tt_resp_error(resp, TT_EINTERNAL, NULL, "no answer");
    return NULL;
}

static void ui_age(FILE *f, double t)
{
    double age = (double)time(NULL) - t;
    if (t <= 0) fputc('-', f);
    else if (age < 120) fprintf(f, "%.0f s", age < 0 ? 0 : age);
    else if (age < 7200) fprintf(f, "%.0f min", age / 60);
    else if (age < 172800) fprintf(f, "%.0f h", age / 3600);
    else fprintf(f, "%.0f d", age / 86400);
}

/* ---- jobs list ---------------------------------------------------------------------- */

static void ui_job_row(FILE *f, const json_t *j)
{
    const json_t *pr = json_object_get(j, "progress"), *best = json_object_get(j, "best");
    long long id = (long long)json_integer_value(json_object_get(j, "id"));
    fprintf(f, "<tr data-job=\"%lld\"><td><a href=\"/ui/jobs/%lld\">%lld</a></td>", id, id, id);
    static const ui_part cells[] = {{"<td><span class=\"state ", "state"}, {"\">", "state"},
                                    {"</span></td><td>", "template.name"},
                                    {"</td><td class=\"shape\">", "problem_key"},
                                    {"</td><td>", "target"}, {"</td><td>", "backend_fp"},
                                    {"</td><td>", "strategy"}};
    ui_parts(f, j, cells, sizeof cells / sizeof cells[0]);
    fprintf(f, "</td><td>%lld/%lld</td><td>",
            (long long)json_integer_value(json_object_get(pr, "done")),
            (long long)json_integer_value(json_object_get(pr, "planned")));
    ui_us(f, json_object_get(best, "measured_us"));
    fputs("</td><td>", f);
    ui_age(f, json_number_value(json_object_get(json_object_get(j, "timings"), "created_at")));
    fputs("</td></tr>\n", f);
}

#define UI_JOBS_PAGE 100      /* jobs per page of the list, newest first */

/* Links to the newer and older pages of the list (?offset=); the older one is hidden while
 * there is none (app.js shows it when new jobs push one there). */
static void ui_jobs_nav(FILE *f, long long offset, int more)
{
    fputs("<p class=\"pages\" id=\"jobs-pages\">", f);
    if (offset > 0)
        fprintf(f, "<a id=\"jobs-newer\" href=\"/ui/?offset=%lld\">newer jobs</a> ",
                offset > UI_JOBS_PAGE ? offset - UI_JOBS_PAGE : 0);
    fprintf(f, "<a id=\"jobs-older\" href=\"/ui/?offset=%lld\"%s>older jobs</a></p>\n",
            offset + UI_JOBS_PAGE, more ? "" : " hidden");
}

/* One page of the jobs list: ?offset= as GET /v1/jobs takes it (its 400 is the page's). */
static int ui_index_page(tt_server *srv, const tt_req *req, tt_resp *resp, FILE *f)
{
    const char *off = json_string_value(json_object_get(req->query, "offset"));
    char lim[16];
    snprintf(lim, sizeof lim, "%d", UI_JOBS_PAGE + 1);    /* one more: is there an older page */
    json_t *out = ui_sub(srv, req, tt__api_jobs_list, NULL,
                         json_pack("{s:s, s:s}", "limit", lim, "offset", off ? off : "0"), resp);
    if (!out) return -1;
    long long offset = (long long)json_integer_value(json_object_get(out, "offset"));
    const json_t *jobs = json_object_get(out, "jobs");
    ui_head(f, "jobs", "jobs");
    fprintf(f, "<h1>Jobs</h1>\n<table id=\"jobs\" class=\"list\" data-offset=\"%lld\"><thead><tr>"
            "<th>id</th><th>state</th><th>template</th><th>shape</th><th>target</th>"
            "<th>backend</th><th>strategy</th><th>trials</th><th>best</th><th>age</th></tr>"
            "</thead>\n<tbody>\n", offset);
    for (size_t i = 0; i < json_array_size(jobs) && i < UI_JOBS_PAGE; i++)
        ui_job_row(f, json_array_get(jobs, i));
    fprintf(f, "</tbody></table>\n<p class=\"empty\" id=\"jobs-empty\"%s>%s</p>\n",
            json_array_size(jobs) ? " hidden" : "",
            offset ? "No jobs this far back."
                   : "No jobs yet: submit one with <code>tlctl tune</code>.");
    ui_jobs_nav(f, offset, json_array_size(jobs) > UI_JOBS_PAGE);
    ui_foot(f);
    json_decref(out);
    return 0;
}

void tt__ui_index(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    ui_answer(srv, req, resp, ui_index_page);
}

/* ---- job page ----------------------------------------------------------------------- */

static void ui_field(FILE *f, const char *name, const json_t *v)
{
    fputs("<tr><th>", f);
    ui_esc(f, name);
    fputs("</th><td>", f);
    ui_jesc(f, v);
    fputs("</td></tr>\n", f);
}

static void ui_job_summary(FILE *f, const json_t *j)
{
    const json_t *pr = json_object_get(j, "progress"), *best = json_object_get(j, "best");
    fputs("<table class=\"fields\" id=\"summary\">\n", f);
    ui_field(f, "state", json_object_get(j, "state"));
    ui_field(f, "template", json_object_get(json_object_get(j, "template"), "name"));
    ui_field(f, "shape", json_object_get(j, "problem_key"));
    ui_field(f, "target", json_object_get(j, "target"));
    ui_field(f, "backend", json_object_get(j, "backend_fp"));
    ui_field(f, "strategy", json_object_get(j, "strategy"));
    fprintf(f, "<tr><th>trials</th><td id=\"progress\">%lld/%lld</td></tr>\n",
            (long long)json_integer_value(json_object_get(pr, "done")),
            (long long)json_integer_value(json_object_get(pr, "planned")));
    if (json_is_object(best)) {
        fputs("<tr><th>best</th><td id=\"best-time\">", f);
        ui_us(f, json_object_get(best, "measured_us"));
        fputs(" <span class=\"note\">(", f);
        ui_esc(f, json_string_value(json_object_get(best, "measured_by")));
        fputs(")</span></td></tr>\n<tr><th>predicted</th><td>", f);
        ui_us(f, json_object_get(best, "predicted_us"));
        fputs(" <span class=\"note\">(cost model)</span></td></tr>\n", f);
    }
    if (json_is_string(json_object_get(j, "error"))) ui_field(f, "error", json_object_get(j, "error"));
    fputs("</table>\n", f);
}

/* The best config as `tlctl best --format args` prints it, with a copy button. */
static void ui_best_args(FILE *f, const json_t *best)
{
    fputs("<section id=\"best\">", f);
    if (!json_is_object(best)) {
        fputs("</section>\n", f);
        return;
    }
    fputs("<h2>Best config</h2>\n<div class=\"copy\"><code id=\"best-args\">", f);
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach(json_object_get(best, "config"), k, v) {
        fputs(first ? "--" : " --", f);
        ui_esc(f, k);
        fputc('=', f);
        ui_jesc(f, v);
        first = 0;
    }
    fputs("</code><button type=\"button\" data-copy=\"best-args\">copy</button></div>\n"
          "<p class=\"note\">as <code>tlctl best --format args</code> prints it</p></section>\n",
          f);
}

static void ui_trial_rows(FILE *f, long long job, const json_t *tr)
{
    const json_t *trials = json_object_get(tr, "trials");
    long long total = (long long)json_integer_value(json_object_get(tr, "total"));
    long long shown = (long long)json_array_size(trials);
    fputs("<div id=\"trial-list\">", f);
    if (total > shown)
        fprintf(f, "<p class=\"note\" id=\"trials-more\">The first %lld of %lld trials are "
                "listed; all of them: <a href=\"/v1/jobs/%lld/trials?offset=%lld&amp;limit=1000\">"
                "GET /v1/jobs/%lld/trials</a> (offset, limit).</p>\n", shown, total, job, shown,
                job);
    fputs("<table id=\"trials\" class=\"list\"><thead><tr><th>seq</th><th>status</th>"
          "<th>median</th><th>spread</th><th>predicted</th><th>config</th></tr></thead>\n"
          "<tbody>\n", f);
    size_t i;
    json_t *t;
    json_array_foreach(trials, i, t) {
        fprintf(f, "<tr><td>%lld</td><td>", (long long)json_integer_value(json_object_get(t, "seq")));
        ui_esc(f, json_string_value(json_object_get(t, "status")));
        fputs("</td><td>", f);
        ui_us(f, json_object_get(t, "median_us"));
        fputs("</td><td>", f);
        ui_us(f, json_object_get(t, "spread_us"));
        fputs("</td><td>", f);
        ui_us(f, json_object_get(t, "predicted_us"));
        fputs("</td><td class=\"cfg\">", f);
        ui_config(f, json_object_get(t, "config"));
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

static int ui_job_page(tt_server *srv, const tt_req *req, tt_resp *resp, FILE *f)
{
    const char *id = req->nparams ? req->params[0] : "";
    json_t *j = ui_sub(srv, req, tt__api_job_get, id, json_object(), resp);
    if (!j) return -1;
    json_t *tr = ui_sub(srv, req, tt__api_job_trials, id, json_pack("{s:s}", "limit", "1000"), resp);
    if (!tr) {
        json_decref(j);
        return -1;
    }
    long long jid = (long long)json_integer_value(json_object_get(j, "id"));
    char title[64];
    snprintf(title, sizeof title, "job %lld", jid);
    ui_head(f, title, "job");
    fprintf(f, "<h1>Job %lld</h1>\n<div id=\"job\" data-job=\"%lld\"", jid, jid);
    static const ui_part attrs[] = {{" data-state=\"", "state"},
                                    {"\" data-template=\"", "template.name"},
                                    {"\" data-target=\"", "target"},
                                    {"\" data-backend=\"", "backend_fp"},
                                    {"\" data-problem=\"", "problem_key"}, {"\">\n", NULL}};
    ui_parts(f, j, attrs, sizeof attrs / sizeof attrs[0]);
    ui_job_summary(f, j);
    ui_best_args(f, json_object_get(j, "best"));
    fputs("<div id=\"trace\"></div>\n"
          "<section class=\"plots\">\n"
          "<figure><figcaption>Convergence: best so far (line) and every trial (dots)"
          "</figcaption><div class=\"plot\" id=\"plot-convergence\"></div></figure>\n"
          "<figure><figcaption>Cost model prediction vs measurement</figcaption>"
          "<div class=\"plot\" id=\"plot-scatter\"></div></figure>\n"
          "<figure class=\"wide\"><figcaption>Per-parameter effect: best time seen per value"
          "</figcaption><div class=\"plot\" id=\"plot-params\"></div></figure>\n"
          "</section>\n<noscript><p class=\"note\">The plots need JavaScript; the tables "
          "below do not.</p></noscript>\n<h2>Trials</h2>\n", f);
    ui_trial_rows(f, jid, tr);
    fputs("</div>\n", f);
    ui_foot(f);
    json_decref(tr);
    json_decref(j);
    return 0;
}

void tt__ui_job(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    ui_answer(srv, req, resp, ui_job_page);
}

/* ---- shape page --------------------------------------------------------------------- */

/* The template/target chooser (a GET form: works without JavaScript). */
static void ui_shape_form(tt_server *srv, FILE *f, const char *tname, const char *target)
{
    fputs("<form class=\"chooser\" method=\"get\" action=\"/ui/shapes\"><label>template "
          "<input name=\"template\" list=\"templates\" value=\"", f);
    ui_esc(f, tname ? tname : "");
    fputs("\"></label> <label>target <input name=\"target\" value=\"", f);
    ui_esc(f, target ? target : "a2");
    fputs("\"></label> <button type=\"submit\">show</button></form>\n", f);
    (void)srv;
}

static void ui_checks_cell(FILE *f, const json_t *checks, const char *pkey)
{
    size_t i, shown = 0;
    json_t *c;
    json_array_foreach(checks, i, c) {
        const char *ck = json_string_value(json_object_get(c, "problem_key"));
        if (!ck || strcmp(ck, pkey)) continue;
        const char *v = json_string_value(json_object_get(c, "verdict"));
        fputs("<span class=\"verdict ", f);
        ui_esc(f, v);
        fputs("\" title=\"", f);
        ui_age(f, json_number_value(json_object_get(c, "created_at")));
        fputs(" ago, ratio ", f);
        ui_jesc(f, json_object_get(json_object_get(c, "entry"), "ratio"));
        fputs("\">", f);
        ui_esc(f, v);
        fputs("</span> ", f);
        if (++shown == 20) break;
    }
    if (!shown) fputc('-', f);
}

/* Best per shape (the export's records) with each shape's CI verdicts. */
static void ui_shapes_table(FILE *f, const json_t *ex, const json_t *ch)
{
    fputs("<table id=\"shapes\" class=\"list\"><thead><tr><th>shape</th><th>best</th>"
          "<th>measured by</th><th>config</th><th>job</th><th>CI checks (newest first)</th>"
          "</tr></thead>\n<tbody>\n", f);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(ex, "records"), i, r) {
        const char *pkey = json_string_value(json_object_get(r, "problem_key"));
        fputs("<tr><td class=\"shape\">", f);
        ui_esc(f, pkey);
        fputs("</td><td>", f);
        ui_us(f, json_object_get(r, "median_us"));
        fputs("</td><td>", f);
        ui_esc(f, json_string_value(json_object_get(r, "measured_by")));
        fputs("</td><td class=\"cfg\">", f);
        ui_config(f, json_object_get(r, "config"));
        fputs("</td><td>", f);
        if (json_is_integer(json_object_get(r, "job")))
            fprintf(f, "<a href=\"/ui/jobs/%lld\">%lld</a>",
                    (long long)json_integer_value(json_object_get(r, "job")),
                    (long long)json_integer_value(json_object_get(r, "job")));
        else fputc('-', f);
        fputs("</td><td>", f);
        ui_checks_cell(f, json_object_get(ch, "checks"), pkey ? pkey : "");
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    if (!json_array_size(json_object_get(ex, "records")))
        fputs("<p class=\"empty\">No tuned shapes for this template and target.</p>\n", f);
}

static int ui_shapes_page(tt_server *srv, const tt_req *req, tt_resp *resp, FILE *f)
{
    const char *tname = json_string_value(json_object_get(req->query, "template"));
    const char *target = json_string_value(json_object_get(req->query, "target"));
    json_t *ex = NULL, *ch = NULL;
    if (tname && *tname) {
        const char *tg = target && *target ? target : "a2";
        ex = ui_sub(srv, req, tt_api_export, NULL,
                    json_pack("{s:s, s:s, s:s}", "template", tname, "target", tg, "format",
                              "json"), resp);
        if (ex)
            ch = ui_sub(srv, req, tt_api_checks, NULL,
                        json_pack("{s:s, s:s, s:s}", "template", tname, "target", tg, "limit",
                                  "1000"), resp);
    }
    ui_head(f, "shapes", "shapes");
    fputs("<h1>Best per shape</h1>\n", f);
    ui_shape_form(srv, f, tname, target);
    if (resp->json) {        /* the API's answer to this template and target: on the page */
        ui_error_text(f, resp);
        json_decref(resp->json);
        resp->json = NULL;
    } else if (ex && ch) {
        ui_shapes_table(f, ex, ch);
    }
    ui_foot(f);
    json_decref(ex);
    json_decref(ch);
    return 0;
}

void tt__ui_shapes(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    ui_answer(srv, req, resp, ui_shapes_page);
}

/* ---- assets ------------------------------------------------------------------------- */

void tt__ui_asset(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    const tt_ui_asset *a = req->nparams ? tt_ui_asset_find(req->params[0]) : NULL;
    if (!srv->ui || !a) {
        tt_resp_error(resp, TT_ENOTFOUND, NULL, "no such asset");
        return;
    }
    char *copy = malloc(a->len + 1);
    if (!copy) {
        tt_resp_error(resp, TT_ENOMEM, NULL, "out of memory");
        return;
    }
    memcpy(copy, a->data, a->len);
    copy[a->len] = '\0';
    resp->status = 200;
    resp->text = copy;
    resp->content_type = a->content_type;
    resp->headers = ui_headers;
}

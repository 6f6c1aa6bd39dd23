/* SPDX-License-Identifier: MIT
 * api.c - the route table of API v1, route matching, error/JSON responses and the request
 * helpers shared by the handlers (template, target, problem, config members).
 */
#include "api_int.h"
#include "jsonutil.h"
#include "runner.h"
#include "space.h"
#include "suggest.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* The one route table.  Scope: what a token needs (0: public).  Reads (TT_SCOPE_READ) are
 * open without a token when the config says open_reads; POSTs that only compute (predict,
 * simulate, validate) count as reads because they change nothing.  TT__ROUTE_NOQUERY: the
 * route takes no query argument, so any is refused before its handler runs; the other routes
 * check theirs in the handler (tt__parse with TT__PARSE_QUERY).  /healthz, /readyz, /metrics
 * and the web view ignore query arguments, so probes and scrapers never fail on them.
 * Every GET route also answers HEAD (tt__route_match). */
static const tt__route tt_routes[] = {
    {"POST", "/v1/tune", tt__api_tune, TT_SCOPE_TUNE, TT__ROUTE_NOQUERY, "POST /v1/tune"},
    {"GET", "/v1/jobs", tt__api_jobs_list, TT_SCOPE_READ, 0, "GET /v1/jobs"},
    {"GET", "/v1/jobs/{}", tt__api_job_get, TT_SCOPE_READ, TT__ROUTE_NOQUERY, "GET /v1/jobs/{id}"},
    {"DELETE", "/v1/jobs/{}", tt__api_job_cancel, TT_SCOPE_TUNE, TT__ROUTE_NOQUERY,
     "DELETE /v1/jobs/{id}"},
    {"GET", "/v1/jobs/{}/trials", tt__api_job_trials, TT_SCOPE_READ, 0,
     "GET /v1/jobs/{id}/trials"},
    {"GET", "/v1/jobs/{}/events", tt__api_job_events, TT_SCOPE_READ,
     TT__ROUTE_SSE | TT__ROUTE_NOQUERY, "GET /v1/jobs/{id}/events"},
    {"POST", "/v1/predict", tt__api_predict, TT_SCOPE_READ, TT__ROUTE_HEAVY | TT__ROUTE_NOQUERY,
     "POST /v1/predict"},
    {"POST", "/v1/simulate", tt__api_simulate, TT_SCOPE_READ, TT__ROUTE_HEAVY | TT__ROUTE_NOQUERY,
     "POST /v1/simulate"},
    {"GET", "/v1/best", tt__api_best, TT_SCOPE_READ, 0, "GET /v1/best"},
    {"GET", "/v1/templates", tt__api_templates_list, TT_SCOPE_READ, TT__ROUTE_NOQUERY,
     "GET /v1/templates"},
    {"GET", "/v1/templates/{}", tt__api_template_get, TT_SCOPE_READ, 0,
     "GET /v1/templates/{name}"},
    {"PUT", "/v1/templates/{}", tt__api_template_put, TT_SCOPE_TUNE, TT__ROUTE_NOQUERY,
     "PUT /v1/templates/{name}"},
    {"POST", "/v1/templates/{}/validate", tt__api_template_validate, TT_SCOPE_READ, 0,
     "POST /v1/templates/{name}/validate"},
    {"GET", "/v1/targets", tt__api_targets_list, TT_SCOPE_READ, TT__ROUTE_NOQUERY,
     "GET /v1/targets"},
    {"GET", "/v1/targets/{}", tt__api_target_get, TT_SCOPE_READ, TT__ROUTE_NOQUERY,
     "GET /v1/targets/{name}"},
    {"GET", "/v1/config", tt__api_config, TT_SCOPE_ADMIN, TT__ROUTE_NOQUERY, "GET /v1/config"},
    /* CI / data exchange (api_ci*.c); import bodies may be gzip, so they are not parsed */
    {"POST", "/v1/check", tt_api_check, TT_SCOPE_TUNE, TT__ROUTE_HEAVY | TT__ROUTE_NOQUERY,
     "POST /v1/check"},
    {"GET", "/v1/export", tt_api_export, TT_SCOPE_READ, 0, "GET /v1/export"},
    {"GET", "/v1/checks", tt_api_checks, TT_SCOPE_READ, 0, "GET /v1/checks"},
    {"POST", "/v1/import", tt_api_import, TT_SCOPE_TUNE, TT__ROUTE_NOJSON | TT__ROUTE_HEAVY,
     "POST /v1/import"},
    {"GET", "/healthz", tt__api_healthz, TT__ROUTE_PUBLIC, 0, "GET /healthz"},
    {"GET", "/readyz", tt__api_readyz, TT__ROUTE_PUBLIC, 0, "GET /readyz"},
    {"GET", "/metrics", tt__api_metrics, TT_SCOPE_READ, 0, "GET /metrics"},
    /* the read-only web view (api_ui.c; off with config ui = false) */
    {"GET", "/ui", tt__ui_index, TT_SCOPE_READ, 0, "GET /ui"},
    {"GET", "/ui/", tt__ui_index, TT_SCOPE_READ, 0, "GET /ui/"},
    {"GET", "/ui/jobs/{}", tt__ui_job, TT_SCOPE_READ, 0, "GET /ui/jobs/{id}"},
    {"GET", "/ui/shapes", tt__ui_shapes, TT_SCOPE_READ, 0, "GET /ui/shapes"},
    {"GET", "/ui/assets/{}", tt__ui_asset, TT_SCOPE_READ, 0, "GET /ui/assets/{name}"},
};
#define TT_NROUTES (sizeof tt_routes / sizeof tt_routes[0])

static const char *tt_route_names_arr[TT_NROUTES];
static pthread_once_t tt_route_names_once = PTHREAD_ONCE_INIT;

static void tt_route_names_init(void)
{
    for (size_t i = 0; i < TT_NROUTES; i++) tt_route_names_arr[i] = tt_routes[i].name;
}

size_t tt__route_count(void) { return TT_NROUTES; }
const tt__route *tt__route_at(size_t i) { return i < TT_NROUTES ? &tt_routes[i] : NULL; }
const char *const *tt__route_names(void)
{
    pthread_once(&tt_route_names_once, tt_route_names_init);
    return tt_route_names_arr;
}

/* Match path segments against pattern; captured segments point into scratch. */
static int tt_pattern_match(const char *pattern, char *scratch, const char **params, int *np)
{
    const char *p = pattern;
    char *s = scratch;
    *np = 0;
    while (*p && *s) {
        if (*p != '/' || *s != '/') return 0;
        p++;
        s++;
        const char *pe = strchr(p, '/');
        size_t pl = pe ? (size_t)(pe - p) : strlen(p);
        char *se = strchr(s, '/');
        size_t sl = se ? (size_t)(se - s) : strlen(s);
        if (pl == 2 && p[0] == '{' && p[1] == '}') {
            if (sl == 0 || *np >= 4) return 0;
            params[(*np)++] = s;
        } else if (pl != sl || strncmp(p, s, pl) != 0) {
            return 0;
        }
        p += pl;
        s += sl;
    }
    return *p == '\0' && *s == '\0';
}

/* 1 when a request with method `method` is served by a route of method `route_method`:
 * HEAD is served wherever GET is (the GET's answer without its body, which libmicrohttpd
 * leaves out for HEAD itself). */
static int tt_method_is(const char *route_method, const char *method)
{
    return !strcmp(route_method, method) ||
           (!strcmp(method, "HEAD") && !strcmp(route_method, "GET"));
}

int tt__route_match(const char *method, const char *path, tt_req *req, char *scratch,
                    size_t cap, int *path_known)
{
    *path_known = 0;
    size_t n = strlen(path);
    if (!tt_utf8_valid(path, n)) return TT__ROUTE_BADTEXT;
    if (n + 1 > cap) return -1;
    for (size_t i = 0; i < TT_NROUTES; i++) {
        memcpy(scratch, path, n + 1);
        const char *params[4];
        int np;
        if (!tt_pattern_match(tt_routes[i].pattern, scratch, params, &np)) continue;
        if (!tt_method_is(tt_routes[i].method, method)) {
            *path_known = 1;
            continue;
        }
        /* terminate captured segments in scratch */
        for (int k = 0; k < np; k++) {
            char *slash = strchr((char *)params[k], '/');
            if (slash) *slash = '\0';
            req->params[k] = params[k];
        }
        req->nparams = np;
        return (int)i;
    }
    return -1;
}

size_t tt__route_allow(const char *path, char *buf, size_t cap)
{
    size_t n = strlen(path), count = 0, len = 0;
    if (cap) buf[0] = '\0';
    char *scratch = malloc(n + 1);
    if (!scratch || !cap) { free(scratch); return 0; }
    for (size_t i = 0; i < TT_NROUTES; i++) {
        memcpy(scratch, path, n + 1);
        const char *params[4];
        int np;
        if (!tt_pattern_match(tt_routes[i].pattern, scratch, params, &np)) continue;
        const char *m[2] = {tt_routes[i].method, !strcmp(tt_routes[i].method, "GET") ? "HEAD"
                                                                                    : NULL};
        for (int k = 0; k < 2 && m[k]; k++) {
            size_t ml = strlen(m[k]);
            if (len + ml + 3 > cap) break;   /* ", " + NUL */
            if (count) { memcpy(buf + len, ", ", 2); len += 2; }
            memcpy(buf + len, m[k], ml + 1);
            len += ml;
            count++;
        }
    }
    free(scratch);
    return count;
}

tt_rc tt__route_query_check(const tt__route *rt, const json_t *query, tt_errinfo *err)
{
    if (!rt || !(rt->flags & TT__ROUTE_NOQUERY) || !json_object_size(query)) return TT_OK;
    /* an empty member table: the first argument is "unknown member", as on other routes */
    return tt__parse(query, NULL, 0, TT__PARSE_QUERY, NULL, NULL, err);
}

int tt__query_add(json_t *query, const char *key, const char *value)
{
    if (!value) value = "";
    if (!tt_utf8_valid(key, strlen(key)) || !tt_utf8_valid(value, strlen(value))) return -1;
    if (json_object_get(query, key)) return 1;   /* a repeated argument: never the last wins */
    return json_object_set_new(query, key, json_string(value)) ? -1 : 0;
}

/* ---- runtime hooks ------------------------------------------------------------------ */
static _Atomic(tt_metrics *) tt_g_metrics = NULL;
static _Atomic int tt_g_runner = 0;
static _Atomic(const tt_runner *) tt_g_runner_ptr = NULL;

void tt__api_set_metrics(tt_metrics *m) { atomic_store(&tt_g_metrics, m); }
tt_metrics *tt__api_get_metrics(void) { return atomic_load(&tt_g_metrics); }
void tt__api_set_runner_state(int alive) { atomic_store(&tt_g_runner, alive); }
int tt__api_runner_state(void) { return atomic_load(&tt_g_runner); }
void tt__api_set_runner(const tt_runner *r) { atomic_store(&tt_g_runner_ptr, r); }
const tt_runner *tt__api_get_runner(void) { return atomic_load(&tt_g_runner_ptr); }

/* ---- responses ---------------------------------------------------------------------- */
static void tt_resp_reset(tt_resp *r)
{
    json_decref(r->json);
    r->json = NULL;
    free(r->text);
    r->text = NULL;
    r->content_type = NULL;
}

/* msg and path may hold user text cut anywhere: made valid UTF-8 here (tt_utf8_fix), so an
 * error answer is never lost to a JSON encoding failure. */
static void tt_resp_error_msg(tt_resp *r, tt_rc rc, const char *path, const char *msg)
{
    tt_resp_reset(r);
    if (rc == TT_OK) rc = TT_EINTERNAL;
    char m[512], p[sizeof ((tt_errinfo *)0)->path];
    snprintf(m, sizeof m, "%s", msg && *msg ? msg : tt_strerror(rc));
    snprintf(p, sizeof p, "%s", path ? path : "");
    tt_utf8_fix(m);
    tt_utf8_fix(p);
    json_t *e = json_pack("{s:s, s:s}", "code", tt_rc_code(rc), "message", m);
    if (e && *p) json_object_set_new(e, "path", json_string(p));
    r->status = tt_rc_http_status(rc);
    r->json = e ? json_pack("{s:o}", "error", e) : NULL;
}

void tt_resp_error(tt_resp *r, tt_rc rc, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tt_resp_error_msg(r, rc, path, msg);
}

void tt_resp_errinfo(tt_resp *r, const tt_errinfo *e)
{
    if (!e) { tt_resp_error_msg(r, TT_EINTERNAL, NULL, NULL); return; }
    char msg[512];
    if (e->pos >= 0 && e->msg[0])
        snprintf(msg, sizeof msg, "%s (at offset %d)", e->msg, e->pos);
    else
        snprintf(msg, sizeof msg, "%s", e->msg);
    tt_resp_error_msg(r, e->rc, e->path, msg);
}

void tt_resp_json(tt_resp *r, int status, json_t *body)
{
    tt_resp_reset(r);
    r->status = body ? status : 503;
    r->json = body ? body
                   : json_pack("{s:{s:s, s:s}}", "error", "code", tt_rc_code(TT_ENOMEM),
                               "message", tt_strerror(TT_ENOMEM));
}

/* TT_ENOTFOUND "unknown template", naming the nearest known template when one is close. */
static tt_rc tt_unknown_template(tt_server *srv, const char *name, tt_errinfo *err)
{
    json_t *list = tt_catalog_list(srv->catalog, srv->store);
    size_t n = json_array_size(list);
    const char **names = calloc(n ? n : 1, sizeof *names);
    const char *hint = NULL;
    if (names) {
        for (size_t i = 0; i < n; i++)
            names[i] = json_string_value(json_object_get(json_array_get(list, i), "name"));
        hint = tt_suggest(name, strlen(name), names, n);
    }
    char ph[96];
    tt_rc rc = tt_errf(err, TT_ENOTFOUND, "template", "unknown template \"%.64s\"%s", name,
                       tt_suggest_phrase(ph, sizeof ph, hint, NULL));
    free(names);
    json_decref(list);
    return rc;
}

/* ---- request helpers ---------------------------------------------------------------- */
tt_rc tt__req_template(tt_server *srv, const json_t *v, const tt_req *store_as,
                       tt__tmpl_ref *ref, tt_errinfo *err)
{
    ref->t = NULL;
    ref->owned = NULL;
    if (json_is_string(v)) {
        const char *name = json_string_value(v);
        tt_rc rc = tt_catalog_template(srv->catalog, srv->store, name, NULL, &ref->t, err);
        if (rc == TT_ENOTFOUND) return tt_unknown_template(srv, name, err);
        if (rc && err && !err->path[0]) snprintf(err->path, sizeof err->path, "template");
        return rc;
    }
    if (!json_is_object(v))
        return tt_errf(err, TT_EINVAL, "template",
                       "need a template name (string) or an inline template (object)");
    tt_rc rc;
    if (store_as)
        rc = tt_catalog_put_as(srv->catalog, srv->store, NULL, v,
                               store_as->token_name ? store_as->token_name : "",
                               (store_as->scopes & TT_SCOPE_ADMIN) != 0, &ref->t, err);
    else {
        rc = tt_tmpl_parse_json(v, NULL, &ref->owned, err);
        ref->t = ref->owned;
    }
    if (rc) {
        tt__err_prefix(err, "template");
        ref->t = NULL;
        ref->owned = NULL;
    }
    return rc;
}

void tt__tmpl_ref_close(tt__tmpl_ref *ref)
{
    if (!ref) return;
    tt_tmpl_free(ref->owned);
    ref->owned = NULL;
    ref->t = NULL;
}

tt_rc tt__req_target(tt_server *srv, const json_t *v, const tt_target **out, tt_errinfo *err)
{
    if (!json_is_string(v))
        return tt_errf(err, TT_ETARGET, "target", "need a target name such as \"a2\"");
    const tt_target *t = tt_catalog_target(srv->catalog, json_string_value(v));
    if (!t)
        return tt_errf(err, TT_ETARGET, "target", "unknown target \"%.64s\" (GET /v1/targets)",
                       json_string_value(v));
    *out = t;
    return TT_OK;
}

tt_rc tt__req_target_name(tt_server *srv, const json_t *v, char *name, int *configured,
                          tt_errinfo *err)
{
    if (!json_is_string(v))
        return tt_errf(err, TT_ETARGET, "target", "need a target name such as \"a2\"");
    const char *s = json_string_value(v);
    const tt_target *t = tt_catalog_target(srv->catalog, s);
    *configured = t != NULL;
    if (!t && !tt_target_name_ok(s))
        return tt_errf(err, TT_ETARGET, "target", "unknown target \"%.64s\" (GET /v1/targets; "
                       "imported data: 1..63 of [A-Za-z0-9._-])", s);
    snprintf(name, 64, "%s", t ? t->name : s);
    return TT_OK;
}

const char *tt__target_note(tt_server *srv, const char *name, int configured, char *buf,
                            size_t cap)
{
    buf[0] = '\0';
    if (configured) return buf;
    const tt_targets *ts = tt_catalog_targets(srv->catalog);
    const char *names[128];   /* each target's name and aliases ("a2") */
    size_t n = 0;
    for (size_t i = 0; i < tt_targets_count(ts); i++) {
        const tt_target *t = tt_targets_at(ts, i);
        if (n < 128) names[n++] = t->name;
        for (int k = 0; k < t->naliases && n < 128; k++) names[n++] = t->aliases[k];
    }
    const char *hint = tt_suggest(name, strlen(name), names, n);
    snprintf(buf, cap, " (\"%s\" is not a configured target%s%s%s)", name,
             hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
    return buf;
}

tt_rc tt__req_problem(const tt_template *t, const json_t *v, int64_t *slots, tt_errinfo *err)
{
    tt_rc rc;
    if (!v) rc = tt_tmpl_problem_parse(t, "", slots, err);   /* absent: every input's default */
    else if (json_is_object(v)) rc = tt_tmpl_problem_from_json(t, v, slots, err);
    else if (json_is_string(v)) rc = tt_tmpl_problem_parse(t, json_string_value(v), slots, err);
    else
        return tt_errf(err, TT_EPROBLEM, "problem",
                       "need an object such as {\"M\": 4096, \"dtype\": \"float16\"}");
    if (rc) {
        if (rc != TT_ENOMEM) err->rc = rc = TT_EPROBLEM;
        tt__err_rebase(err, "problem", "problem");
    }
    return rc;
}

tt_rc tt__req_config(const tt_template *t, const json_t *v, const char *path, int64_t *slots,
                     tt_errinfo *err)
{
    tt_rc rc;
    if (json_is_object(v)) rc = tt_tmpl_config_from_json(t, v, slots, err);
    else if (json_is_string(v)) rc = tt_tmpl_config_parse(t, json_string_value(v), slots, err);
    else return tt_errf(err, TT_ECONFIG, path, "need an object of param values");
    if (rc) {
        if (rc != TT_ENOMEM) err->rc = rc = TT_ECONFIG;
        tt__err_rebase(err, "config", path);
    }
    return rc;
}

tt_rc tt__req_backend(tt_server *srv, const tt_template *t, const char *spec, char *fp,
                      tt_errinfo *err)
{
    if (!spec) return TT_OK;
    tt_rc rc = tt_runner_check_backend(&srv->runner_cfg, t, spec, fp, err);
    if (rc && err && !err->path[0]) snprintf(err->path, sizeof err->path, "backend");
    return rc;
}

tt_rc tt__req_template_name(tt_server *srv, const char *name, const tt_template **out,
                            tt_errinfo *err)
{
    if (!name) return tt_errf(err, TT_EINVAL, "template", "need a template name");
    tt_rc rc = tt_catalog_template(srv->catalog, srv->store, name, NULL, out, err);
    if (rc == TT_ENOTFOUND) return tt_unknown_template(srv, name, err);
    if (rc && err && !err->path[0]) snprintf(err->path, sizeof err->path, "template");
    return rc;
}

int tt__best_rows(tt_server *srv, const tt_best_query *q, tt_best **rows, size_t *n,
                  tt_resp *resp)
{
    *rows = NULL;
    *n = 0;
    tt_rc rc = tt_store_best_list(srv->store, q, rows, n);
    if (!rc || rc == TT_ENOTFOUND) return 0;
    tt_resp_error(resp, rc, NULL, "cannot read best: %s", tt_store_errmsg(srv->store));
    return -1;
}

tt_rc tt__best_row_problem(const tt_template *t, const tt_best *b, int64_t *slots)
{
    memset(slots, 0, TT_MAX_SLOTS * sizeof *slots);
    if (!b->problem_json) return tt_tmpl_problem_parse(t, b->problem_key ? b->problem_key : "",
                                                       slots, NULL);
    json_t *p = json_loads(b->problem_json, 0, NULL);
    tt_rc rc = p ? tt_tmpl_problem_from_json(t, p, slots, NULL) : TT_EPROBLEM;
    json_decref(p);
    return rc;
}

int tt__best_row_fits(const tt_template *t, const tt_best *b, int64_t *slots)
{
    json_t *c = json_loads(b->config_json ? b->config_json : "", 0, NULL);
    int ok = c && tt_tmpl_config_from_json(t, c, slots, NULL) == TT_OK;
    json_decref(c);
    if (!ok) return 0;
    int64_t s[TT_MAX_SLOTS];
    memcpy(s, slots, sizeof s);
    tt_space *sp = NULL;
    ok = tt_space_new(t, s, NULL, &sp, NULL) == TT_OK && tt_space_check(sp, s, NULL) == TT_OK;
    tt_space_free(sp);
    return ok;
}

tt_rc tt__best_fitting(tt_server *srv, const tt_template *t, const tt_best_query *bq,
                       const int64_t *slots, tt_best *out, size_t *nrows)
{
    tt_best_query all = *bq;
    all.problem_key = NULL;
    tt_best *rows = NULL;
    size_t n = 0, bi;
    *nrows = 0;
    tt_rc rc = tt_store_best_list(srv->store, &all, &rows, &n);
    if (rc && rc != TT_ENOTFOUND) return rc;
    bi = n;
    for (size_t i = 0; i < n; i++) {
        int64_t s[TT_MAX_SLOTS];
        if (tt__best_row_problem(t, &rows[i], s) || memcmp(s, slots, t->ninputs * sizeof *s))
            continue;
        (*nrows)++;
        if (tt__best_row_fits(t, &rows[i], s) &&
            (bi == n || rows[i].median_us < rows[bi].median_us))
            bi = i;
    }
    if (bi < n) {
        *out = rows[bi];                        /* taken: its heap fields are out's now */
        memset(&rows[bi], 0, sizeof rows[bi]);
    }
    for (size_t i = 0; i < n; i++) tt_best_clear(&rows[i]);
    free(rows);
    return bi < n ? TT_OK : TT_ENOTFOUND;
}

tt_rc tt__req_body(const tt_req *req, const tt__member *tab, size_t n, void *dst,
                   tt_errinfo *err)
{
    if (!json_is_object(req->body))
        return tt_errf(err, TT_EINVAL, NULL, "the body must be a JSON object");
    return tt__parse(req->body, tab, n, 0, NULL, dst, err);
}

const char *tt__space_size(uint64_t total, char *buf, size_t cap)
{
    if (total == UINT64_MAX)   /* tt_space_total() saturates: the product overflowed */
        snprintf(buf, cap, "more than 2^64 configs");
    else
        snprintf(buf, cap, "%.3g configs, 10^%.0f", (double)total,
                 total ? floor(log10((double)total)) : 0.0);
    return buf;
}

int tt__strategy_enumerates(const char *strategy)
{
    return strategy && (!strcmp(strategy, "exhaustive") || !strcmp(strategy, "model-topk") ||
                        !strcmp(strategy, "model-refine"));
}

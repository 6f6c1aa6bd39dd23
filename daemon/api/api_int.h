/* SPDX-License-Identifier: MIT
 * api_int.h - internals shared by the API files (api*.c, http.c, main.c); not public.
 *
 * The route table (api.c) maps method + pattern to a handler and the scope it needs.
 * Patterns are literal segments and "{}" for one captured segment.  Request helpers here
 * turn the JSON members common to several routes (template, target, problem, config) into
 * library objects, with errors that name the JSON path of the request.
 *
 * Thread-safety: the table is static and read-only; the runtime hooks are atomics set once
 * by main.  Ownership as stated per function.
 */
#ifndef TT_API_INT_H
#define TT_API_INT_H

#include <jansson.h>
#include <stdint.h>

#include "api.h"
#include "api_parse.h"
#include "metrics.h"
#include "model.h"
#include "target.h"
#include "template.h"

enum {
    TT__ROUTE_PUBLIC = 0,      /* scope 0: no token ever needed (healthz, readyz) */
    TT__ROUTE_SSE = 1,         /* flag: the answer is a Server-Sent Events stream */
    TT__ROUTE_NOJSON = 2,      /* flag: the body is not parsed as JSON (raw_body only) */
    TT__ROUTE_HEAVY = 4,       /* flag: runs on the heavy-request pool (max_heavy_requests) */
    TT__ROUTE_NOQUERY = 8      /* flag: takes no query argument; any is 400 invalid_argument */
};

typedef struct tt__route {
    const char *method;
    const char *pattern;       /* "/v1/jobs/{}/trials" */
    tt_handler_fn fn;
    int scope;                 /* TT_SCOPE_* needed, 0 for public routes */
    int flags;
    const char *name;          /* "GET /v1/jobs/{id}/trials", for logs and metrics */
} tt__route;

size_t tt__route_count(void);
const tt__route *tt__route_at(size_t i);
/* Route names array (tt__route_count() entries, static) for the metrics registry. */
const char *const *tt__route_names(void);
/* Match method + path: returns the route index and fills req->params / nparams (pointers
 * into `scratch`, which must hold a copy of path: cap >= strlen(path) + 1); HEAD matches the
 * GET route of a path.  -1 when no route
 * matches; then *path_known is 1 when another method would have matched (405).
 * TT__ROUTE_BADTEXT when the (decoded) path is not valid UTF-8: answer 400 bad_encoding, so
 * no handler ever sees such a path. */
#define TT__ROUTE_BADTEXT (-2)
int tt__route_match(const char *method, const char *path, tt_req *req, char *scratch,
                    size_t cap, int *path_known);
/* Add a decoded query argument to the query object: -1 (nothing added) when key or value is
 * not valid UTF-8 (answer 400 bad_encoding: an argument is never dropped silently) or on
 * allocation failure; 1 (nothing added) when key is already in the query: a repeated
 * argument (answer 400 invalid_argument naming it; no route takes one twice, and neither
 * the first nor the last value may win silently). */
int tt__query_add(json_t *query, const char *key, const char *value);
/* The methods allowed on path, for the Allow header of a 405: "GET, HEAD, DELETE" (route
 * table order, HEAD after every GET) into buf (always NUL-terminated when cap > 0; methods
 * that do not fit are left out).  Returns how many were written (0: no route has path). */
size_t tt__route_allow(const char *path, char *buf, size_t cap);
/* TT_OK, or TT_EINVAL "unknown member" naming the first query argument when route rt
 * (TT__ROUTE_NOQUERY) takes none; query borrowed (NULL: none). */
tt_rc tt__route_query_check(const tt__route *rt, const json_t *query, tt_errinfo *err);

/* Runtime hooks set by the daemon's main (NULL / 0 in tests that call handlers). */
void tt__api_set_metrics(tt_metrics *m);
tt_metrics *tt__api_get_metrics(void);
/* 1 when the runner is started (or the process runs without workers on purpose). */
void tt__api_set_runner_state(int alive);
int tt__api_runner_state(void);
/* The daemon's runner (borrowed; NULL when none), for /readyz: tt_runner_alive(). */
void tt__api_set_runner(const tt_runner *r);
const tt_runner *tt__api_get_runner(void);

/* A template named in a request: a name (from the catalog/store), or an inline document.
 * Inline documents are stored in the catalog on behalf of the token of `store_as` when it is
 * not NULL (tune: TT_EFORBIDDEN for a built-in's name or another token's template), else
 * parsed privately and owned here.  Release with tt__tmpl_ref_close(). */
typedef struct tt__tmpl_ref {
    const tt_template *t;
    tt_template *owned;
} tt__tmpl_ref;
tt_rc tt__req_template(tt_server *srv, const json_t *v, const tt_req *store_as,
                       tt__tmpl_ref *ref, tt_errinfo *err);
void tt__tmpl_ref_close(tt__tmpl_ref *ref);
/* Target by name or alias; TT_ETARGET with path "target" when unknown or not a string. */
tt_rc tt__req_target(tt_server *srv, const json_t *v, const tt_target **out, tt_errinfo *err);
/* The target of a route that only reads stored rows (best, export): a configured target's
 * name (aliases resolved), else the name data were imported under (any name of 1..63
 * [A-Za-z0-9._-], as POST /v1/import takes it) into name[cap >= 64]; TT_ETARGET otherwise.
 * *configured tells which. */
tt_rc tt__req_target_name(tt_server *srv, const json_t *v, char *name, int *configured,
                          tt_errinfo *err);
/* What a "nothing stored" answer appends for a target name that is not configured: "" when
 * configured, else ` ("a22" is not a configured target; did you mean "a2"?)` or the same
 * without the suggestion, into buf (returned). */
const char *tt__target_note(tt_server *srv, const char *name, int configured, char *buf,
                            size_t cap);
/* Problem (object or "M=..,N=.." string; NULL when absent: every input's default) into
 * slots[0..ninputs); path "problem.M". */
tt_rc tt__req_problem(const tt_template *t, const json_t *v, int64_t *slots, tt_errinfo *err);
/* Config (object or "block_M=..,.." string) into the param slots; `path` is where it sits
 * in the request ("config", "configs[3]"): errors name e.g. "configs[3].block_N". */
tt_rc tt__req_config(const tt_template *t, const json_t *v, const char *path, int64_t *slots,
                     tt_errinfo *err);
/* A backend spec ("sim", "cmd:NAME", ...) checked for template t, fingerprint into fp
 * (>= 80 bytes); spec NULL is TT_OK (fp untouched).  Errors name path "backend". */
tt_rc tt__req_backend(tt_server *srv, const tt_template *t, const char *spec, char *fp,
                      tt_errinfo *err);
/* A stored or built-in template by name (query arguments, CI entries): TT_EINVAL when name
 * is NULL, TT_ENOTFOUND "unknown template"; path "template". */
tt_rc tt__req_template_name(tt_server *srv, const char *name, const tt_template **out,
                            tt_errinfo *err);
/* The best rows matching q (none is not an error); -1 with the store error answered. */
int tt__best_rows(tt_server *srv, const tt_best_query *q, tt_best **rows, size_t *n,
                  tt_resp *resp);
/* Best row b's problem as template t reads it, into slots[TT_MAX_SLOTS] (zeroed first): from
 * its stored JSON, else its key (rows recorded outside a job have no JSON).  TT_OK, or the
 * error of a problem t cannot read (an input it lacks, a value it refuses). */
tt_rc tt__best_row_problem(const tt_template *t, const tt_best *b, int64_t *slots);
/* 1 when best row b runs on t's current version: its config, read by t into slots (which
 * hold its problem: tt__best_row_problem), has every param in its domain and meets every
 * constraint, the problem within the inputs' ranges; else 0.  Capacities are the target's,
 * not checked: the config was measured there.  Used by GET /v1/best and GET /v1/export, so
 * both answer the same config for a problem after the template changed. */
int tt__best_row_fits(const tt_template *t, const tt_best *b, int64_t *slots);
/* Without hash=: the fastest of bq's rows of any version (their stored key aside) whose
 * problem, as t reads it, is slots' and whose config runs on t (tt__best_row_fits), into
 * *out (caller clears); *nrows counts the rows of that problem.  TT_ENOTFOUND when none fits;
 * a store error otherwise. */
tt_rc tt__best_fitting(tt_server *srv, const tt_template *t, const tt_best_query *bq,
                       const int64_t *slots, tt_best *out, size_t *nrows);
/* The request body must be a JSON object checked by the member table (tt__parse). */
tt_rc tt__req_body(const tt_req *req, const tt__member *tab, size_t n, void *dst,
                   tt_errinfo *err);
#define TT__REQ_BODY(req, tab, dst, err) \
    tt__req_body((req), (tab), sizeof(tab) / sizeof((tab)[0]), (dst), (err))

/* The model's answer for a problem: space counts, and either the given configs (configs:
 * a JSON array, borrowed) or the top `top` of the space.  max_space caps enumeration.
 * Returns a new JSON object {"source":"model", "space":{...}, "results":[...]} or NULL with
 * err set (TT_ETOOBIG when the space is too large to rank, TT_EUNSUPPORTED without a kernel).
 * Shared by POST /v1/predict and `tiletuned predict`. */
json_t *tt__model_predict(const tt_template *t, const tt_target *tgt, const int64_t *problem,
                          const json_t *configs, int top, double max_space,
                          const tt_budget *budget, tt_errinfo *err);
/* The simulator's answer for one config (new JSON object, "source":"sim"), with the Chrome
 * trace of core trace_core (>= 0) as a parsed "trace" member.  NULL with err on failure. */
json_t *tt__sim_run(const tt_template *t, const tt_target *tgt, const int64_t *slots,
                    int trace_core, const tt_budget *budget, tt_errinfo *err);
/* Human-readable tables of those answers (malloc'd text, caller frees). */
char *tt__predict_text(const json_t *answer);
char *tt__sim_text(const json_t *answer);
/* Space counts of a template for one problem (new JSON object {"total","feasible",...}),
 * enumerating at most limit configs (complete=false beyond). */
json_t *tt__space_json(const tt_template *t, const tt_target *tgt, const int64_t *problem,
                       double limit, tt_errinfo *err);

/* A job as the API shows it (new reference). */
json_t *tt__job_json(const tt_job *j);
/* One SSE frame of progress for job id into buf ("event: progress\ndata: {...}\n\n").
 * Returns its length, 0 when unchanged since the last done count and state (no frame), -1 on a
 * store error.  *finished is 1 when the job reached a final state. */
int tt__job_event(tt_store *s, int64_t id, char *buf, size_t cap, int64_t *last_done,
                  int *last_state, int *finished);

/* Handlers (api_jobs.c, api_model.c, api_meta.c). */
void tt__api_tune(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_jobs_list(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_job_get(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_job_trials(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_job_events(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_job_cancel(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_predict(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_simulate(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_best(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_templates_list(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_template_get(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_template_put(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_template_validate(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_targets_list(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_target_get(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_config(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_healthz(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_readyz(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__api_metrics(tt_server *srv, const tt_req *req, tt_resp *resp);
/* The web view (api_ui.c): HTML pages and the assets compiled into the binary. */
void tt__ui_index(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__ui_job(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__ui_shapes(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt__ui_asset(tt_server *srv, const tt_req *req, tt_resp *resp);
/* A refusal of a web-view request (path "/ui" or under "/ui/"; resp a JSON error of status
 * >= 400 given before or by its handler: bad encoding, repeated argument, unknown page or
 * asset, method, limits) becomes the view's HTML error page with the same status and
 * message, as the pages answer their own errors.  resp is left as it was when the view is
 * off, the path is not the view's, resp is not such an error, or memory runs out. */
void tt__ui_refusal(const tt_server *srv, const char *path, tt_resp *resp);

/* A space size for messages: "1.23e+12 configs, 10^12", or "more than 2^64 configs" when
 * the count saturated.  Returns buf. */
const char *tt__space_size(uint64_t total, char *buf, size_t cap);
/* A space size as a JSON integer: saturated at INT64_MAX (the API's integer range). */
#define TT__SPACE_JSON(total) ((json_int_t)((total) > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(total)))

/* Strategies that enumerate the whole space (and so obey max_space). */
int tt__strategy_enumerates(const char *strategy);

#endif

/* SPDX-License-Identifier: MIT
 * api_jobs.c - job routes: POST /v1/tune, GET /v1/jobs[/{id}[/trials|/events]],
 * DELETE /v1/jobs/{id}.  Jobs live in the store; the runner's workers execute them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "jsonutil.h"
#include "runner.h"
#include "space.h"

#define TT_MAX_BUDGET_TRIALS 1000000
#define TT_DEFAULT_BUDGET_TRIALS 32

static int tt_parse_id(const char *s, int64_t *id)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x <= 0) return -1;
    *id = x;
    return 0;
}

static json_t *tt_json_text(const char *text)
{
    if (!text || !*text) return json_null();
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
    return j ? j : json_string(text);
}

static json_t *tt_num_or_null(double x) { return x > 0 ? json_real(x) : json_null(); }

json_t *tt__job_json(const tt_job *j)
{
    char base[64];
    snprintf(base, sizeof base, "/v1/jobs/%lld", (long long)j->id);
    json_t *best = json_null();
    if (j->best_trial > 0) {
        best = json_pack("{s:I, s:o, s:o, s:o, s:s}", "trial", (json_int_t)j->best_trial,
                         "config", tt_json_text(j->best_config_json), "measured_us",
                         tt_num_or_null(j->best_us), "predicted_us",
                         tt_num_or_null(j->best_pred_us), "measured_by", j->backend_fp);
        if (best && j->best_us > 0 && j->best_pred_us > 0)
            json_object_set_new(best, "prediction_error_pct",
                                json_real(100.0 * (j->best_pred_us - j->best_us) / j->best_us));
    }
    double end = j->finished_at > 0 ? j->finished_at : 0;
    json_t *o = json_pack(
        "{s:I, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:o, s:s, s:{s:I, s:f}, s:I,"
        " s:{s:I, s:I}, s:o, s:o, s:s, s:{s:o, s:o, s:o}, s:{s:s, s:s, s:s}}",
        "id", (json_int_t)j->id, "state", tt_job_state_name(j->state), "template", "name",
        j->template_name, "hash", j->template_hash, "target", j->target, "backend", j->backend,
        "backend_fp", j->backend_fp, "strategy", j->strategy, "problem",
        tt_json_text(j->problem_json), "problem_key", j->problem_key ? j->problem_key : "",
        "budget", "trials", (json_int_t)j->budget_trials, "seconds", j->budget_seconds, "seed",
        (json_int_t)j->seed, "progress", "done", (json_int_t)j->done, "planned",
        (json_int_t)j->planned, "best", best, "error",
        j->error ? json_string(j->error) : json_null(), "owner", j->owner, "timings",
        "created_at", tt_num_or_null(j->created_at), "started_at",
        tt_num_or_null(j->started_at), "finished_at", tt_num_or_null(end), "links", "self",
        base, "trials", "", "events", "");
    if (!o) return NULL;
    char l[96];
    snprintf(l, sizeof l, "%s/trials", base);
    json_object_set_new(json_object_get(o, "links"), "trials", json_string(l));
    snprintf(l, sizeof l, "%s/events", base);
    json_object_set_new(json_object_get(o, "links"), "events", json_string(l));
    if (j->options_json) json_object_set_new(o, "options", tt_json_text(j->options_json));
    if (j->state == TT_JOB_RUNNING) {   /* which worker holds it, until when (unix s) */
        json_object_set_new(o, "lease_owner", json_string(j->lease_owner));
        json_object_set_new(o, "lease_expires", tt_num_or_null(j->lease_expires));
    }
    if (j->started_at > 0) {
        double stop = end > 0 ? end : 0;
        if (stop > 0)
            json_object_set_new(json_object_get(o, "timings"), "elapsed_s",
                                json_real(stop - j->started_at));
    }
    return o;
}

/* ---- POST /v1/tune ------------------------------------------------------------------ */
static const char *const tt_tune_members[] = {"template", "problem",  "target", "backend",
                                              "strategy", "budget",   "seed",   "options",
                                              NULL};

void tt__api_tune(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    const json_t *b = req->body;
    if (tt__req_body(req, tt_tune_members, &err)) { tt_resp_errinfo(resp, &err); return; }
    /* cheap checks first */
    const json_t *jb = json_object_get(b, "backend");
    const json_t *js = json_object_get(b, "strategy");
    if (jb && !json_is_string(jb)) {
        tt_resp_error(resp, TT_EINVAL, "backend", "must be a string such as \"sim\"");
        return;
    }
    if (js && !json_is_string(js)) {
        tt_resp_error(resp, TT_EINVAL, "strategy", "must be a string such as \"model-refine\"");
        return;
    }
    const char *backend = jb ? json_string_value(jb) : "sim";
    const char *strategy = js ? json_string_value(js) : "model-refine";
    if (!tt_runner_strategy_known(strategy)) {
        tt_resp_error(resp, TT_EINVAL, "strategy",
                      "unknown strategy \"%.32s\" (model-topk, model-refine, evolution, "
                      "anneal, random, exhaustive)", strategy);
        return;
    }
    int64_t trials = TT_DEFAULT_BUDGET_TRIALS;
    double seconds = 0;
    const json_t *bud = json_object_get(b, "budget");
    if (json_is_integer(bud)) {
        trials = json_integer_value(bud);
    } else if (json_is_object(bud)) {
        static const char *const bm[] = {"trials", "seconds", NULL};
        if (tt__req_known_members(bud, bm, &err)) {
            char p[sizeof err.path];
            snprintf(p, sizeof p, "budget.%.100s", err.path);
            memcpy(err.path, p, sizeof p);
            tt_resp_errinfo(resp, &err);
            return;
        }
        const json_t *t = json_object_get(bud, "trials"), *s = json_object_get(bud, "seconds");
        if (t && !json_is_integer(t)) {
            tt_resp_error(resp, TT_EINVAL, "budget.trials", "must be an integer");
            return;
        }
        if (s && !json_is_number(s)) {
            tt_resp_error(resp, TT_EINVAL, "budget.seconds", "must be a number");
            return;
        }
        if (t) trials = json_integer_value(t);
        if (s) seconds = json_number_value(s);
    } else if (bud) {
        tt_resp_error(resp, TT_EINVAL, "budget", "must be {\"trials\": N, \"seconds\": S}");
        return;
    }
    if (trials < 1 || trials > TT_MAX_BUDGET_TRIALS) {
        tt_resp_error(resp, TT_EINVAL, "budget.trials", "must be in 1..%d",
                      TT_MAX_BUDGET_TRIALS);
        return;
    }
    if (!(seconds >= 0 && seconds <= 7 * 86400.0)) {
        tt_resp_error(resp, TT_EINVAL, "budget.seconds", "must be in 0..604800");
        return;
    }
    const json_t *jseed = json_object_get(b, "seed");
    if (jseed && !json_is_integer(jseed)) {
        tt_resp_error(resp, TT_EINVAL, "seed", "must be an integer");
        return;
    }
    const json_t *opts = json_object_get(b, "options");
    if (opts && !json_is_object(opts)) {
        tt_resp_error(resp, TT_EINVAL, "options", "must be an object");
        return;
    }
    if (opts) {
        const json_t *rm = json_object_get(opts, "remeasure");
        if (rm && (!json_is_integer(rm) || json_integer_value(rm) < 0 ||
                   json_integer_value(rm) > 1024)) {
            tt_resp_error(resp, TT_EINVAL, "options.remeasure", "must be an integer in 0..1024");
            return;
        }
        if (json_object_get(opts, "remeasured")) {   /* the runner's own bookkeeping */
            tt_resp_error(resp, TT_EINVAL, "options.remeasured", "is reserved");
            return;
        }
    }
    if (!json_object_get(b, "template") || !json_object_get(b, "problem") ||
        !json_object_get(b, "target")) {
        const char *miss = !json_object_get(b, "template") ? "template"
                           : !json_object_get(b, "problem") ? "problem" : "target";
        tt_resp_error(resp, TT_EINVAL, miss, "missing member \"%s\"", miss);
        return;
    }
    /* target before template: an inline template is stored only for a valid request */
    const tt_target *tgt;
    if (tt__req_target(srv, json_object_get(b, "target"), &tgt, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    /* per-token limit */
    int64_t counts[TT_JOB__COUNT] = {0};
    if (tt_store_job_counts(srv->store, req->token_name, counts) != TT_OK) {
        tt_resp_error(resp, TT_EDB, NULL, "cannot count jobs: %s", tt_store_errmsg(srv->store));
        return;
    }
    if (counts[TT_JOB_QUEUED] + counts[TT_JOB_RUNNING] >= srv->max_jobs_per_token) {
        tt_resp_error(resp, TT_ELIMIT, NULL,
                      "token %s already has %lld queued or running jobs (limit %d)",
                      req->token_name, (long long)(counts[TT_JOB_QUEUED] + counts[TT_JOB_RUNNING]),
                      srv->max_jobs_per_token);
        return;
    }
    tt__tmpl_ref ref;
    tt_space *sp = NULL;
    char *pkey = NULL, *pjson = NULL, *ojson = NULL;
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    if (tt__req_template(srv, json_object_get(b, "template"), 1, &ref, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    const tt_template *t = ref.t;
    if (tt__req_problem(t, json_object_get(b, "problem"), slots, &err)) {
        tt_resp_errinfo(resp, &err);
        goto out;
    }
    char fp[80] = "";
    tt_rc rc = tt_runner_check_backend(&srv->runner_cfg, t, backend, fp, &err);
    if (rc) {
        if (!err.path[0]) snprintf(err.path, sizeof err.path, "backend");
        tt_resp_errinfo(resp, &err);
        goto out;
    }
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    rc = tt_space_new(t, slots, &caps, &sp, &err);
    if (rc) {
        if (rc == TT_EPROBLEM && !err.path[0]) snprintf(err.path, sizeof err.path, "problem");
        tt_resp_errinfo(resp, &err);
        goto out;
    }
    uint64_t total = tt_space_total(sp);
    if (tt__strategy_enumerates(strategy) && (double)total > srv->max_space) {
        tt_resp_error(resp, TT_EUNSUPPORTED, "strategy",
                      "space too large (%.3g configs, 10^%.0f) for strategy %s (limit %.3g); "
                      "use evolution/anneal/random", (double)total, floor(log10((double)total)),
                      strategy, srv->max_space);
        goto out;
    }
    size_t need = tt_tmpl_problem_key(t, slots, NULL, 0) + 1;
    pkey = malloc(need);
    json_t *pj = tt_tmpl_problem_json(t, slots);
    pjson = pj ? tt_json_dumps(pj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(pj);
    ojson = opts ? tt_json_dumps(opts, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (!pkey || !pjson || (opts && !ojson)) {
        tt_resp_error(resp, TT_ENOMEM, NULL, "out of memory");
        goto out;
    }
    tt_tmpl_problem_key(t, slots, pkey, need);
    tt_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.template_name, sizeof j.template_name, "%s", t->name);
    snprintf(j.template_hash, sizeof j.template_hash, "%s", t->hash);
    snprintf(j.target, sizeof j.target, "%s", tgt->name);
    snprintf(j.backend, sizeof j.backend, "%s", backend);
    snprintf(j.backend_fp, sizeof j.backend_fp, "%s", fp);
    snprintf(j.strategy, sizeof j.strategy, "%s", strategy);
    snprintf(j.owner, sizeof j.owner, "%s", req->token_name ? req->token_name : "");
    j.problem_key = pkey;
    j.problem_json = pjson;
    j.options_json = ojson;
    pkey = pjson = ojson = NULL;    /* owned by j now */
    j.budget_trials = trials;
    j.budget_seconds = seconds;
    j.seed = jseed ? json_integer_value(jseed) : 0;
    j.planned = (int64_t)((uint64_t)trials < total ? (uint64_t)trials : total);
    j.state = TT_JOB_QUEUED;
    rc = tt_store_job_create(srv->store, &j);
    if (rc) {
        tt_resp_error(resp, rc, NULL, "cannot create the job: %s", tt_store_errmsg(srv->store));
        tt_job_clear(&j);
        goto out;
    }
    char self[64], ev[80], tr[80];
    snprintf(self, sizeof self, "/v1/jobs/%lld", (long long)j.id);
    snprintf(ev, sizeof ev, "%s/events", self);
    snprintf(tr, sizeof tr, "%s/trials", self);
    tt_resp_json(resp, 202,
                 json_pack("{s:I, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:I, s:{s:s, s:s, s:s}}",
                           "job", (json_int_t)j.id, "state", "queued", "template", "name",
                           t->name, "hash", t->hash, "target", tgt->name, "backend_fp", fp,
                           "problem_key", j.problem_key, "space_total", (json_int_t)total,
                           "links", "self", self, "events", ev, "trials", tr));
    tt_job_clear(&j);
out:
    free(pkey);
    free(pjson);
    free(ojson);
    tt_space_free(sp);
    tt__tmpl_ref_close(&ref);
}

/* ---- GET /v1/jobs ------------------------------------------------------------------- */
void tt__api_jobs_list(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    static const char *const allowed[] = {"state", "template", "target", "owner",
                                          "limit", "offset",   NULL};
    if (tt__req_known_members(req->query, allowed, &err)) { tt_resp_errinfo(resp, &err); return; }
    tt_job_filter f = {-1, NULL, NULL, NULL, 100, 0};
    const char *st = json_string_value(json_object_get(req->query, "state"));
    if (st) {
        f.state = tt_job_state_parse(st);
        if (f.state < 0) {
            tt_resp_error(resp, TT_EINVAL, "state",
                          "unknown state \"%.32s\" (queued, running, done, failed, cancelled)",
                          st);
            return;
        }
    }
    f.template_name = json_string_value(json_object_get(req->query, "template"));
    f.target = json_string_value(json_object_get(req->query, "target"));
    f.owner = json_string_value(json_object_get(req->query, "owner"));
    if (f.target) {
        const tt_target *tg = tt_catalog_target(srv->catalog, f.target);
        if (tg) f.target = tg->name;
    }
    if (tt__query_int(req->query, "limit", 100, 1, 1000, &f.limit, &err) ||
        tt__query_int(req->query, "offset", 0, 0, INT64_MAX / 2, &f.offset, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    tt_job *jobs = NULL;
    size_t n = 0;
    tt_rc rc = tt_store_job_list(srv->store, &f, &jobs, &n);
    if (rc) {
        tt_resp_error(resp, rc, NULL, "cannot list jobs: %s", tt_store_errmsg(srv->store));
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(arr, tt__job_json(&jobs[i]));
        tt_job_clear(&jobs[i]);
    }
    free(jobs);
    tt_resp_json(resp, 200, json_pack("{s:o, s:I, s:I}", "jobs", arr, "limit",
                                      (json_int_t)f.limit, "offset", (json_int_t)f.offset));
}

static int tt_job_from_path(tt_server *srv, const tt_req *req, tt_resp *resp, tt_job *j)
{
    int64_t id;
    if (req->nparams < 1 || tt_parse_id(req->params[0], &id)) {
        tt_resp_error(resp, TT_ENOTFOUND, NULL, "no job \"%.32s\" (ids are positive integers)",
                      req->nparams ? req->params[0] : "");
        return -1;
    }
    memset(j, 0, sizeof *j);
    tt_rc rc = tt_store_job_get(srv->store, id, j);
    if (rc == TT_ENOTFOUND) {
        tt_resp_error(resp, TT_ENOTFOUND, NULL, "no job %lld", (long long)id);
        return -1;
    }
    if (rc) {
        tt_resp_error(resp, rc, NULL, "cannot read job %lld: %s", (long long)id,
                      tt_store_errmsg(srv->store));
        return -1;
    }
    return 0;
}

void tt__api_job_get(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_job j;
    if (tt_job_from_path(srv, req, resp, &j)) return;
    tt_resp_json(resp, 200, tt__job_json(&j));
    tt_job_clear(&j);
}

static json_t *tt_trial_json(const tt_trial *t)
{
    json_t *o = json_pack("{s:I, s:I, s:o, s:s, s:s, s:b}", "id", (json_int_t)t->id, "seq",
                          (json_int_t)t->seq, "config", tt_json_text(t->config_json), "status",
                          t->status == TT_OK ? "ok" : tt_rc_code(t->status), "config_key",
                          t->config_key ? t->config_key : "", "reused", t->reused);
    if (!o) return NULL;
    if (t->error) json_object_set_new(o, "error", json_string(t->error));
    if (t->status == TT_OK) {
        json_object_set_new(o, "median_us", json_real(t->median_us));
        json_object_set_new(o, "spread_us", json_real(t->spread_us));
        json_object_set_new(o, "min_us", json_real(t->min_us));
    }
    if (t->samples_json) json_object_set_new(o, "samples_us", tt_json_text(t->samples_json));
    json_object_set_new(o, "predicted_us", tt_num_or_null(t->predicted_us));
    json_object_set_new(o, "compile_s", json_real(t->compile_s));
    json_object_set_new(o, "measure_s", json_real(t->measure_s));
    json_object_set_new(o, "created_at", tt_num_or_null(t->created_at));
    /* the worker (lease owner) that measured it: trials.measured_by; null when unknown */
    json_object_set_new(o, "worker", t->measured_by[0] ? json_string(t->measured_by)
                                                       : json_null());
    return o;
}

void tt__api_job_trials(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    int64_t limit, offset;
    if (tt__query_int(req->query, "limit", 100, 1, 1000, &limit, &err) ||
        tt__query_int(req->query, "offset", 0, 0, INT64_MAX / 2, &offset, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    tt_job j;
    if (tt_job_from_path(srv, req, resp, &j)) return;
    tt_trial *trials = NULL;
    size_t n = 0;
    int64_t total = 0;
    tt_rc rc = tt_store_trial_list(srv->store, j.id, offset, limit, &trials, &n, &total);
    if (rc) {
        tt_resp_error(resp, rc, NULL, "cannot list trials: %s", tt_store_errmsg(srv->store));
        tt_job_clear(&j);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(arr, tt_trial_json(&trials[i]));
        tt_trial_clear(&trials[i]);
    }
    free(trials);
    tt_resp_json(resp, 200,
                 json_pack("{s:I, s:s, s:I, s:I, s:I, s:o}", "job", (json_int_t)j.id,
                           "measured_by", j.backend_fp, "total", (json_int_t)total, "offset",
                           (json_int_t)offset, "limit", (json_int_t)limit, "trials", arr));
    tt_job_clear(&j);
}

void tt__api_job_events(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_job j;
    if (tt_job_from_path(srv, req, resp, &j)) return;
    tt_job_clear(&j);
    resp->status = 200;     /* http.c turns this into the event stream */
    resp->json = NULL;
}

int tt__job_event(tt_store *s, int64_t id, char *buf, size_t cap, int64_t *last_done,
                  int *last_state, int *finished)
{
    tt_job j;
    memset(&j, 0, sizeof j);
    *finished = 0;
    if (tt_store_job_get(s, id, &j) != TT_OK) return -1;
    int n = 0;
    if (j.done != *last_done || (int)j.state != *last_state) {
        char best[32] = "null";
        if (j.best_us > 0) snprintf(best, sizeof best, "%.6g", j.best_us);
        n = snprintf(buf, cap,
                     "event: progress\ndata: {\"job\":%lld,\"done\":%lld,\"planned\":%lld,"
                     "\"best_us\":%s,\"state\":\"%s\"}\n\n",
                     (long long)id, (long long)j.done, (long long)j.planned, best,
                     tt_job_state_name(j.state));
        if (n < 0 || (size_t)n >= cap) n = 0;
        *last_done = j.done;
        *last_state = (int)j.state;
    }
    *finished = j.state == TT_JOB_DONE || j.state == TT_JOB_FAILED ||
                j.state == TT_JOB_CANCELLED;
    tt_job_clear(&j);
    return n;
}

void tt__api_job_cancel(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_job j;
    if (tt_job_from_path(srv, req, resp, &j)) return;
    if (!(req->scopes & TT_SCOPE_ADMIN) && strcmp(j.owner, req->token_name ? req->token_name : "")) {
        tt_resp_error(resp, TT_EFORBIDDEN, NULL,
                      "job %lld belongs to %s; cancelling it needs scope admin",
                      (long long)j.id, j.owner[0] ? j.owner : "(anonymous)");
        tt_job_clear(&j);
        return;
    }
    tt_rc rc = tt_store_job_cancel(srv->store, j.id);
    if (rc == TT_EEXISTS)
        tt_resp_error(resp, TT_EEXISTS, NULL, "job %lld already finished (%s)",
                      (long long)j.id, tt_job_state_name(j.state));
    else if (rc)
        tt_resp_error(resp, rc, NULL, "cannot cancel job %lld: %s", (long long)j.id,
                      tt_store_errmsg(srv->store));
    else
        tt_resp_json(resp, 200, json_pack("{s:I, s:s}", "job", (json_int_t)j.id, "state",
                                          "cancelled"));
    tt_job_clear(&j);
}

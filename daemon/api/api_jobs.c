/* SPDX-License-Identifier: MIT
 * api_jobs.c - job routes: POST /v1/tune, GET /v1/jobs[/{id}[/trials|/events]],
 * DELETE /v1/jobs/{id}.  Jobs live in the store; the runner's workers execute them.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "backend.h"
#include "jsonutil.h"
#include "catalog.h"
#include "runner.h"
#include "space.h"
#include "strategy.h"

#define TT_MAX_BUDGET_TRIALS 1000000
#define TT_DEFAULT_BUDGET_TRIALS 32

static int tt_parse_id(const char *s, int64_t *id)
{
    long long x;
    if (tt__parse_int(s, &x) || x <= 0) return -1;
    *id = x;
    return 0;
}

static json_t *tt_json_text(const char *text)
{
    if (!text || !*text) return json_null();
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
    return j ? j : json_string(text);
}

/* A positive finite number, else null (0: not set; an infinity left by an older daemon
 * must not make json_real fail and with it the whole answer). */
static json_t *tt_num_or_null(double x)
{
    return x > 0 && isfinite(x) ? json_real(x) : json_null();
}

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

/* "strategy_ran": which strategy the job runs and why (docs/strategies.md).  A pure function
 * of the asked name, whether the template has a kernel program (the model) and the budget,
 * so it is shown for every job, queued or finished.  Omitted when the template is gone. */
static json_t *tt_job_json_full(tt_server *srv, const tt_job *j)
{
    json_t *o = tt__job_json(j);
    const tt_template *t = NULL;
    tt_strategy_choice ch;
    if (o && tt_catalog_template(srv->catalog, srv->store, j->template_name, j->template_hash,
                                 &t, NULL) == TT_OK &&
        tt_strategy_resolve(j->strategy, t->kernel != NULL, j->budget_trials, &ch) == TT_OK)
        json_object_set_new(o, "strategy_ran",
                            json_pack("{s:s, s:b, s:b, s:s}", "name", ch.name, "default",
                                      ch.is_default, "fallback", ch.fallback, "reason",
                                      ch.reason));
    return o;
}

/* ---- POST /v1/tune ------------------------------------------------------------------ */
typedef struct tt_tune_args {
    const json_t *tmpl, *problem, *target, *budget, *options;
    const char *backend, *strategy;
    int64_t seed, trials;
    double seconds;
} tt_tune_args;

#define TT_TA(f) offsetof(tt_tune_args, f)
static const tt__member tt_tune_members[] = {
    {"template", TT__P_ANY, TT__M_REQUIRED, 0, 0, TT_TA(tmpl), NULL},
    {"problem", TT__P_ANY, 0, 0, 0, TT_TA(problem), NULL},
    {"target", TT__P_ANY, TT__M_REQUIRED, 0, 0, TT_TA(target), NULL},
    {"backend", TT__P_STRING, 0, 0, 0, TT_TA(backend), "must be a string such as \"sim\""},
    {"strategy", TT__P_STRING, 0, 0, 0, TT_TA(strategy),
     "must be a string such as \"bo\""},
    {"budget", TT__P_ANY, 0, 0, 0, TT_TA(budget), NULL},
    {"seed", TT__P_INT, 0, 0, 0, TT_TA(seed), NULL},
    {"options", TT__P_OBJECT, 0, 0, 0, TT_TA(options), NULL},
};
static const tt__member tt_budget_members[] = {
    {"trials", TT__P_INT, TT__M_RANGE, 1, TT_MAX_BUDGET_TRIALS, TT_TA(trials), NULL},
    {"seconds", TT__P_NUMBER, TT__M_RANGE, 0, 7 * 86400.0, TT_TA(seconds), NULL},
};
/* Every option a job reads, checked at submission so that a job never fails on its options
 * (docs/strategies.md "Options").  The ranges are tt_strategy_new()'s (strategy.c), which
 * reads the strategy options again when the job starts (test_api_handlers `tune_options_agree`
 * checks that the two agree at every bound); remeasure and objective are the runner's
 * (runner_job.c).  The values are only checked here: the job keeps the object as given. */
#define TT_OBJECTIVE_HINT "must be \"median\", \"mean\", \"min\" or (replay: only) \"recorded\""
typedef struct tt_tune_opts {
    int64_t n;                  /* each integer option in turn */
    const char *objective;
} tt_tune_opts;
#define TT_TO(f) offsetof(tt_tune_opts, f)
static const tt__member tt_options_members[] = {
    {"topk", TT__P_INT, TT__M_RANGE, 1, 1 << 20, TT_TO(n), NULL},
    {"round", TT__P_INT, TT__M_RANGE, 1, 1 << 16, TT_TO(n), NULL},
    {"population", TT__P_INT, TT__M_RANGE, 2, 1 << 16, TT_TO(n), NULL},
    {"neighbours", TT__P_INT, TT__M_RANGE, 0, 1 << 10, TT_TO(n), NULL},
    {"sample", TT__P_INT, TT__M_RANGE, 1, 1 << 24, TT_TO(n), NULL},
    {"patience", TT__P_INT, TT__M_RANGE, 1, 1 << 10, TT_TO(n), NULL},
    {"init", TT__P_INT, TT__M_RANGE, 1, 1 << 10, TT_TO(n), NULL},
    {"max_enumerate", TT__P_INT, TT__M_RANGE, 1, (double)INT64_MAX, TT_TO(n), NULL},
    {"remeasure", TT__P_INT, TT__M_RANGE, 0, 1024, TT_TO(n), NULL},
    {"objective", TT__P_STRING, 0, 0, 0, TT_TO(objective), TT_OBJECTIVE_HINT},
    {"remeasured", TT__P_RESERVED, 0, 0, 0, 0, NULL},   /* the runner's own bookkeeping */
};

/* The options object: known members only, each of its type and range; "objective" one of the
 * statistics, "recorded" only on a replay: backend.  TT_OK or err filled (path options.X). */
static tt_rc tt_tune_options(const json_t *options, const char *backend, tt_errinfo *err)
{
    tt_tune_opts o = {0, NULL};
    tt_rc rc = TT__PARSE(options, tt_options_members, 0, "options", &o, err);
    tt_objective obj;
    if (rc || !o.objective) return rc;
    if (tt_objective_parse(o.objective, &obj))
        return tt_errf(err, TT_EINVAL, "options.objective", TT_OBJECTIVE_HINT " (got \"%.32s\")",
                       o.objective);
    if (obj == TT_OBJ_RECORDED && strncmp(backend, "replay:", 7) != 0)
        return tt_errf(err, TT_EINVAL, "options.objective", "\"recorded\" is the dataset's own "
                       "objective: only on a replay: backend (this job's is %s)", backend);
    return TT_OK;
}

/* The members of a tune request (a.* borrowed from the body); TT_OK or err filled. */
static tt_rc tt_tune_parse(const tt_req *req, tt_tune_args *a, tt_errinfo *err)
{
    memset(a, 0, sizeof *a);
    a->backend = "sim";
    a->strategy = "auto";   /* the default rule (tt_strategy_resolve) */
    a->trials = TT_DEFAULT_BUDGET_TRIALS;
    tt_rc rc = TT__REQ_BODY(req, tt_tune_members, a, err);
    if (rc) return rc;
    if (!*a->strategy) a->strategy = "auto";   /* "" is the default too */
    if (!tt_runner_strategy_known(a->strategy))
        return tt_errf(err, TT_EINVAL, "strategy", "unknown strategy \"%s\" (auto, bo, "
                       "model-bo, model-topk, model-refine, evolution, anneal, random, "
                       "exhaustive)", a->strategy);
    if (json_is_integer(a->budget)) {   /* "budget": N is {"trials": N} */
        json_t *o = json_pack("{s:O}", "trials", a->budget);
        rc = o ? TT__PARSE(o, tt_budget_members, 0, "budget", a, err)
               : tt_errf(err, TT_ENOMEM, NULL, "out of memory");
        json_decref(o);
        if (rc == TT_EINVAL) snprintf(err->path, sizeof err->path, "budget");
    } else if (json_is_object(a->budget)) {
        rc = TT__PARSE(a->budget, tt_budget_members, 0, "budget", a, err);
    } else if (a->budget) {   /* 1e18 and 32.0 are JSON reals */
        rc = tt_errf(err, TT_EINVAL, "budget", "must be an integer number of trials in 1..%d, "
                     "or {\"trials\": N, \"seconds\": S}", TT_MAX_BUDGET_TRIALS);
    }
    if (!rc && a->options) rc = tt_tune_options(a->options, a->backend, err);
    return rc;
}

/* The per-token limit of queued + running jobs, checked early (before parsing a template):
 * 0, or -1 with the error answered.  tt_tune_create checks it again atomically. */
static int tt_tune_limit(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    int64_t counts[TT_JOB__COUNT] = {0};
    if (tt_store_job_counts(srv->store, req->token_name ? req->token_name : "", counts) !=
        TT_OK) {
        tt_resp_error(resp, TT_EDB, NULL, "cannot count jobs: %s", tt_store_errmsg(srv->store));
        return -1;
    }
    if (counts[TT_JOB_QUEUED] + counts[TT_JOB_RUNNING] >= srv->max_jobs_per_token) {
        tt_resp_error(resp, TT_ELIMIT, NULL,
                      "token %s already has %lld queued or running jobs (limit %d)",
                      req->token_name, (long long)(counts[TT_JOB_QUEUED] + counts[TT_JOB_RUNNING]),
                      srv->max_jobs_per_token);
        return -1;
    }
    return 0;
}

static int tt_stop_first(void *ud, const int64_t *slots)
{
    (void)ud;
    (void)slots;
    return 1;
}

/* A job whose space has no feasible config (a `let` that overflows or divides by zero for
 * this problem, constraints no config meets) is refused now, with the reasons predict gives,
 * rather than accepted and failed later.  Enumerates until the first feasible config. */
static tt_rc tt_tune_feasible(tt_space *sp, tt_errinfo *err)
{
    tt_space_counts c;
    memset(&c, 0, sizeof c);
    if (tt_space_enumerate(sp, tt_stop_first, NULL, 1, &c) != TT_OK || c.feasible ||
        !c.complete)
        return TT_OK;
    char why[200] = "";
    size_t w = 0;
    for (size_t i = 0; i < c.nreasons && i < TT_SPACE_MAX_REASONS && w < sizeof why - 1; i++) {
        if (!c.rejected[i]) continue;
        int k = snprintf(why + w, sizeof why - w, "%s%s (%llu)", w ? "; " : "", c.reason[i],
                         (unsigned long long)c.rejected[i]);
        w = k < 0 ? w : w + (size_t)k;
    }
    return tt_errf(err, TT_EINFEASIBLE, "problem",
                   "no config of the space is feasible for this problem: %s",
                   why[0] ? why : "every config was rejected");
}

/* The space of the problem: its size, refused when the strategy must enumerate it all. */
static tt_rc tt_tune_space(tt_server *srv, const tt_template *t, const tt_target *tgt,
                           const int64_t *slots, const char *strategy, uint64_t *total,
                           tt_errinfo *err)
{
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    tt_rc rc = tt_space_new(t, slots, &caps, &sp, err);
    if (rc) {
        if (rc == TT_EPROBLEM && !err->path[0]) snprintf(err->path, sizeof err->path, "problem");
        return rc;
    }
    *total = tt_space_total(sp);
    char size[64];
    if (!tt_space_indexed(sp))
        rc = tt_errf(err, TT_EUNSUPPORTED, "template.params", "%s", TT_STRATEGY_HUGE_SPACE);
    else if (tt__strategy_enumerates(strategy) && (double)*total > srv->max_space)
        rc = tt_errf(err, TT_EUNSUPPORTED, "strategy",
                     "space too large (%s) for strategy %s (limit %.3g); "
                     "use evolution/anneal/random", tt__space_size(*total, size, sizeof size),
                     strategy, srv->max_space);
    else if ((double)*total <= srv->max_space)
        rc = tt_tune_feasible(sp, err);
    tt_space_free(sp);
    return rc;
}

/* Fill and insert the job row (j->id set); the strings j owns are freed by tt_job_clear. */
static tt_rc tt_tune_create(tt_server *srv, const tt_req *req, const tt_tune_args *a,
                            const tt_template *t, const tt_target *tgt, const int64_t *slots,
                            const char *fp, uint64_t total, tt_job *j, tt_errinfo *err)
{
    memset(j, 0, sizeof *j);
    size_t need = tt_tmpl_problem_key(t, slots, NULL, 0) + 1;
    j->problem_key = malloc(need);
    json_t *pj = tt_tmpl_problem_json(t, slots);
    j->problem_json = pj ? tt_json_dumps(pj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(pj);
    j->options_json = a->options ? tt_json_dumps(a->options, JSON_COMPACT | JSON_SORT_KEYS)
                                 : NULL;
    if (!j->problem_key || !j->problem_json || (a->options && !j->options_json))
        return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    tt_tmpl_problem_key(t, slots, j->problem_key, need);
    snprintf(j->template_name, sizeof j->template_name, "%s", t->name);
    snprintf(j->template_hash, sizeof j->template_hash, "%s", t->hash);
    snprintf(j->target, sizeof j->target, "%s", tgt->name);
    snprintf(j->backend, sizeof j->backend, "%s", a->backend);
    snprintf(j->backend_fp, sizeof j->backend_fp, "%s", fp);
    snprintf(j->strategy, sizeof j->strategy, "%s", a->strategy);
    snprintf(j->owner, sizeof j->owner, "%s", req->token_name ? req->token_name : "");
    j->budget_trials = a->trials;
    j->budget_seconds = a->seconds;
    j->seed = a->seed;
    j->planned = (int64_t)((uint64_t)a->trials < total ? (uint64_t)a->trials : total);
    j->state = TT_JOB_QUEUED;
    /* the limit again, atomically with the insert (tt_tune_limit is only the cheap refusal):
     * concurrent submissions of one token can never pass it together */
    int64_t active = 0;
    tt_rc rc = tt_store_job_create_capped(srv->store, j, srv->max_jobs_per_token, &active);
    if (rc == TT_ELIMIT)
        return tt_errf(err, rc, NULL, "token %s already has %lld queued or running jobs "
                       "(limit %d)", j->owner, (long long)active, srv->max_jobs_per_token);
    if (rc) return tt_errf(err, rc, NULL, "cannot create the job: %s", tt_store_errmsg(srv->store));
    return TT_OK;
}

static json_t *tt_tune_answer(const tt_job *j, const tt_template *t, uint64_t total)
{
    char self[64], ev[80], tr[80];
    snprintf(self, sizeof self, "/v1/jobs/%lld", (long long)j->id);
    snprintf(ev, sizeof ev, "%s/events", self);
    snprintf(tr, sizeof tr, "%s/trials", self);
    return json_pack("{s:I, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:I, s:{s:s, s:s, s:s}}", "job",
                     (json_int_t)j->id, "state", "queued", "template", "name", t->name, "hash",
                     t->hash, "target", j->target, "backend_fp", j->backend_fp, "problem_key",
                     j->problem_key, "space_total", TT__SPACE_JSON(total), "links", "self", self,
                     "events", ev, "trials", tr);
}

void tt__api_tune(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_tune_args a;
    const tt_target *tgt;
    /* target before template: an inline template is stored only for a valid request */
    if (tt_tune_parse(req, &a, &err) || tt__req_target(srv, a.target, &tgt, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    if (tt_tune_limit(srv, req, resp)) return;
    tt__tmpl_ref ref;
    if (tt__req_template(srv, a.tmpl, req, &ref, &err)) { tt_resp_errinfo(resp, &err); return; }
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    char fp[80] = "";
    uint64_t total = 0;
    tt_job j;
    memset(&j, 0, sizeof j);
    if (tt__req_problem(ref.t, a.problem, slots, &err) ||
        tt__req_backend(srv, ref.t, a.backend, fp, &err) ||
        tt_tune_space(srv, ref.t, tgt, slots, a.strategy, &total, &err) ||
        tt_tune_create(srv, req, &a, ref.t, tgt, slots, fp, total, &j, &err))
        tt_resp_errinfo(resp, &err);
    else
        tt_resp_json(resp, 202, tt_tune_answer(&j, ref.t, total));
    tt_job_clear(&j);
    tt__tmpl_ref_close(&ref);
}

/* ---- GET /v1/jobs ------------------------------------------------------------------- */
typedef struct tt_list_args {
    const char *state, *tmpl, *target, *owner;
    int64_t limit, offset;
} tt_list_args;
#define TT_LA(f) offsetof(tt_list_args, f)
#define TT_PAGE_MEMBERS                                                                    \
    {"limit", TT__P_INT, TT__M_RANGE, 1, 1000, TT_LA(limit), NULL},                        \
    {"offset", TT__P_INT, TT__M_RANGE, 0, (double)(INT64_MAX / 2), TT_LA(offset), NULL}
static const tt__member tt_list_members[] = {
    {"state", TT__P_STRING, 0, 0, 0, TT_LA(state), NULL},
    {"template", TT__P_STRING, 0, 0, 0, TT_LA(tmpl), NULL},
    {"target", TT__P_STRING, 0, 0, 0, TT_LA(target), NULL},
    {"owner", TT__P_STRING, 0, 0, 0, TT_LA(owner), NULL},
    TT_PAGE_MEMBERS,
};
static const tt__member tt_page_members[] = {TT_PAGE_MEMBERS};

void tt__api_jobs_list(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_list_args a = {.limit = 100};
    if (TT__PARSE(req->query, tt_list_members, TT__PARSE_QUERY, NULL, &a, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    tt_job_filter f = {-1, a.tmpl, a.target, a.owner, a.limit, a.offset};
    if (a.state && (f.state = tt_job_state_parse(a.state)) < 0) {
        tt_resp_error(resp, TT_EINVAL, "state",
                      "unknown state \"%s\" (queued, running, done, failed, cancelled)",
                      a.state);
        return;
    }
    if (f.target) {
        const tt_target *tg = tt_catalog_target(srv->catalog, f.target);
        if (tg) f.target = tg->name;
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
        json_array_append_new(arr, tt_job_json_full(srv, &jobs[i]));
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
    tt_resp_json(resp, 200, tt_job_json_full(srv, &j));
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
    tt_list_args a = {.limit = 100};
    if (TT__PARSE(req->query, tt_page_members, TT__PARSE_QUERY, NULL, &a, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    int64_t limit = a.limit, offset = a.offset;
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

/* SPDX-License-Identifier: MIT
 * api_model.c - answers that come from the cost model and the simulator (POST /v1/predict,
 * POST /v1/simulate, shared with `tiletuned predict|simulate`) and GET /v1/best.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "bestcache.h"
#include "jsonutil.h"
#include "metrics.h"
#include "runner.h"
#include "sim.h"
#include "space.h"

#define TT_MAX_TOP 1000

/* ---- space counts ------------------------------------------------------------------- */
static json_t *tt_counts_json(const tt_space_counts *c, uint64_t total, int enumerated)
{
    json_t *rej = json_object();
    if (enumerated)
        for (size_t i = 0; i < c->nreasons && i < TT_SPACE_MAX_REASONS; i++)
            if (c->rejected[i])
                json_object_set_new(rej, c->reason[i], json_integer((json_int_t)c->rejected[i]));
    return json_pack("{s:I, s:o, s:o, s:b}", "total",
                     TT__SPACE_JSON(total),
                     "feasible",
                     enumerated ? json_integer((json_int_t)c->feasible) : json_null(),
                     "rejected", rej, "complete", enumerated && c->complete);
}

typedef struct tt_topk {
    const tt_model *m;
    const tt_template *t;
    int k, n;
    double *time;
    int64_t *cfg;             /* k x nparams */
    uint64_t model_infeasible;
    const tt_budget *budget;  /* checked every 4096 visits; a refusal stops the enumeration */
    unsigned visits;
    tt_rc stop;
    tt_errinfo *err;
} tt_topk;

static int tt_visit_budget(tt_topk *tk)
{
    if (!tk->budget || (++tk->visits & 4095u)) return 0;
    tk->stop = tt_budget_check(tk->budget, tk->err);
    return tk->stop != TT_OK;
}

static int tt_topk_visit(void *ud, const int64_t *slots)
{
    tt_topk *tk = ud;
    if (tt_visit_budget(tk)) return 1;
    int64_t buf[TT_MAX_SLOTS];
    memcpy(buf, slots, tk->t->nslots * sizeof *buf);
    tt_model_result r;
    if (tt_model_eval(tk->m, buf, &r) != TT_OK) { tk->model_infeasible++; return 0; }
    size_t np = tk->t->nparams, base = tk->t->ninputs;
    if (tk->n == tk->k && r.time_us >= tk->time[tk->n - 1]) return 0;
    int pos = tk->n < tk->k ? tk->n++ : tk->k - 1;
    while (pos > 0 && tk->time[pos - 1] > r.time_us) {   /* stable: ties keep space order */
        tk->time[pos] = tk->time[pos - 1];
        memcpy(tk->cfg + (size_t)pos * np, tk->cfg + (size_t)(pos - 1) * np, np * sizeof(int64_t));
        pos--;
    }
    tk->time[pos] = r.time_us;
    memcpy(tk->cfg + (size_t)pos * np, slots + base, np * sizeof(int64_t));
    return 0;
}

static json_t *tt_units_json(const double *v, double scale)
{
    json_t *o = json_object();
    for (int u = 0; u < TT_UNIT__COUNT; u++)
        json_object_set_new(o, tt_unit_name((tt_unit)u), json_real(v[u] * scale));
    return o;
}

static json_t *tt_result_json(const tt_template *t, const int64_t *slots,
                              const tt_model_result *r)
{
    json_t *o = json_pack("{s:o}", "config", tt_tmpl_config_json(t, slots));
    if (!o) return NULL;
    if (r->rc != TT_OK) {
        json_object_set_new(o, "feasible", json_false());
        json_object_set_new(o, "code", json_string(tt_rc_code(r->rc)));
        json_object_set_new(o, "reason", json_string(r->reason));
        return o;
    }
    json_object_set_new(o, "feasible", json_true());
    json_object_set_new(o, "time_us", json_real(r->time_us));
    json_object_set_new(o, "low_us", json_real(r->low_us));
    json_object_set_new(o, "high_us", json_real(r->high_us));
    json_object_set_new(o, "bound", json_string(tt_bound_name(r->bound)));
    json_object_set_new(o, "blocks", json_integer(r->blocks));
    json_object_set_new(o, "cores_used", json_integer(r->cores_used));
    json_object_set_new(o, "waves", json_real(r->waves));
    json_object_set_new(o, "gm_bytes", json_real(r->gm_bytes));
    json_object_set_new(o, "l2_hit", json_real(r->l2_hit));
    if (r->flops > 0 && r->time_us > 0)
        json_object_set_new(o, "tflops", json_real(r->flops / r->time_us * 1e-6));
    json_object_set_new(o, "busy_us", tt_units_json(r->busy_us, 1));
    json_object_set_new(o, "util", tt_units_json(r->util, 1));
    return o;
}

static int tt_count_only(void *ud, const int64_t *slots)
{
    (void)slots;
    return ud ? tt_visit_budget(ud) : 0;
}

json_t *tt__space_json(const tt_template *t, const tt_target *tgt, const int64_t *problem,
                       double limit, tt_errinfo *err)
{
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    if (tt_space_new(t, problem, &caps, &sp, err)) return NULL;
    uint64_t total = tt_space_total(sp);
    tt_space_counts c;
    memset(&c, 0, sizeof c);
    int en = (double)total <= limit;
    if (en && tt_space_enumerate(sp, tt_count_only, NULL, 0, &c)) en = 0;
    tt_space_free(sp);
    return tt_counts_json(&c, total, en);
}

/* The model's answer for each given config (the space's reason first when infeasible),
 * appended to results.  TT_OK, or err filled (a config that does not parse, out of budget). */
static tt_rc tt_predict_configs(const tt_template *t, const tt_model *m, const tt_space *sp,
                                const int64_t *problem, const json_t *configs,
                                const tt_budget *budget, json_t *results, tt_errinfo *err)
{
    size_t i;
    json_t *cj;
    json_array_foreach(configs, i, cj) {
        int64_t slots[TT_MAX_SLOTS];
        memset(slots, 0, sizeof slots);
        memcpy(slots, problem, t->ninputs * sizeof *slots);
        char path[32];
        snprintf(path, sizeof path, "configs[%zu]", i);
        tt_rc rc = tt__req_config(t, cj, path, slots, err);
        if (!rc && (i & 63) == 63) rc = tt_budget_check(budget, err);
        if (rc) return rc;
        tt_model_result r;
        memset(&r, 0, sizeof r);
        tt_errinfo ce;
        tt_errinfo_clear(&ce);
        if (tt_space_check(sp, slots, &ce) != TT_OK) {   /* the space's reason first */
            r.rc = ce.rc;
            snprintf(r.reason, sizeof r.reason, "%.127s", ce.msg);
        } else {
            tt_model_eval(m, slots, &r);
        }
        json_array_append_new(results, tt_result_json(t, slots, &r));
    }
    return TT_OK;
}

/* The tk->k fastest configs of the space by the model, ranked, appended to results (tk->time
 * and tk->cfg allocated here, freed by the caller).  TT_OK, or err filled. */
static tt_rc tt_predict_topk(tt_topk *tk, tt_space *sp, const int64_t *problem,
                             tt_space_counts *c, json_t *results, tt_errinfo *err)
{
    const tt_template *t = tk->t;
    tk->time = calloc((size_t)tk->k, sizeof *tk->time);
    tk->cfg = calloc((size_t)tk->k * (t->nparams ? t->nparams : 1), sizeof *tk->cfg);
    if (!tk->time || !tk->cfg) return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    if (tt_space_enumerate(sp, tt_topk_visit, tk, 0, c))
        return tt_errf(err, TT_EINTERNAL, NULL, "enumeration failed");
    if (tk->stop) return tk->stop;   /* out of budget, client gone or shutting down */
    for (int i = 0; i < tk->n; i++) {
        int64_t slots[TT_MAX_SLOTS];
        memset(slots, 0, sizeof slots);
        memcpy(slots, problem, t->ninputs * sizeof *slots);
        memcpy(slots + t->ninputs, tk->cfg + (size_t)i * t->nparams, t->nparams * sizeof *slots);
        tt_model_result r;
        tt_model_eval(tk->m, slots, &r);
        json_t *rj = tt_result_json(t, slots, &r);
        if (rj) json_object_set_new(rj, "rank", json_integer(i + 1));
        json_array_append_new(results, rj);
    }
    return TT_OK;
}

json_t *tt__model_predict(const tt_template *t, const tt_target *tgt, const int64_t *problem,
                          const json_t *configs, int top, double max_space,
                          const tt_budget *budget, tt_errinfo *err)
{
    if (!t->kernel) {
        tt_errf(err, TT_EUNSUPPORTED, "template",
                "template %s has no kernel: the model cannot predict it (use a replay: or "
                "cmd: backend)", t->name);
        return NULL;
    }
    tt_model *m = NULL;
    tt_space *sp = NULL;
    json_t *out = NULL, *results = json_array();
    tt_topk tk;
    memset(&tk, 0, sizeof tk);
    if (!results) { tt_errf(err, TT_ENOMEM, NULL, "out of memory"); return NULL; }
    if (tt_model_new(t, tgt, problem, NULL, &m, err)) goto fail;
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    if (tt_space_new(t, problem, &caps, &sp, err)) goto fail;
    uint64_t total = tt_space_total(sp);
    tt_space_counts c;
    memset(&c, 0, sizeof c);
    int enumerate = (double)total <= max_space;
    tk.budget = budget;
    tk.err = err;
    if (tt_budget_predict(budget, ((configs ? (double)json_array_size(configs) : 0) +
                                   (enumerate ? (double)total : 0)) *
                                      (double)(t->nconstraints + 1), err))
        goto fail;
    if (configs) {
        if (tt_predict_configs(t, m, sp, problem, configs, budget, results, err)) goto fail;
        if (enumerate && tt_space_enumerate(sp, tt_count_only, &tk, 0, &c)) enumerate = 0;
        if (tk.stop) goto fail;
    } else {
        if (!enumerate) {
            char size[64];
            tt_errf(err, TT_EUNSUPPORTED, "top",
                    "space too large to rank (%s; limit %.3g); give \"configs\"",
                    tt__space_size(total, size, sizeof size), max_space);
            goto fail;
        }
        tk.m = m;
        tk.t = t;
        tk.k = top < 1 ? 1 : top > TT_MAX_TOP ? TT_MAX_TOP : top;
        if (tt_predict_topk(&tk, sp, problem, &c, results, err)) goto fail;
    }
    json_t *space = tt_counts_json(&c, total, enumerate);
    if (space && !configs) json_object_set_new(space, "model_infeasible",
                                               json_integer((json_int_t)tk.model_infeasible));
    char key[1024];
    tt_tmpl_problem_key(t, problem, key, sizeof key);
    out = json_pack("{s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:o, s:o, s:o}", "source", "model",
                    "note", "analytic cost-model predictions (uncalibrated), not measurements",
                    "target", tgt->name, "template", "name", t->name, "hash", t->hash,
                    "problem_key", key, "problem", tt_tmpl_problem_json(t, problem), "space",
                    space ? space : json_null(), "results", results);
    results = NULL;
    if (!out) tt_errf(err, TT_ENOMEM, NULL, "out of memory");
fail:
    json_decref(results);
    free(tk.time);
    free(tk.cfg);
    tt_space_free(sp);
    tt_model_free(m);
    return out;
}

/* The simulator's cancel hook: the request's budget check (client gone, wall time spent,
 * server stopping), with the first failure kept in err. */
typedef struct tt_sim_stop {
    const tt_budget *budget;
    tt_rc rc;
    tt_errinfo *err;
} tt_sim_stop;

static int tt_sim_should_stop(void *ctx)
{
    tt_sim_stop *st = ctx;
    if (!st->rc) st->rc = tt_budget_check(st->budget, st->err);
    return st->rc != TT_OK;
}

json_t *tt__sim_run(const tt_template *t, const tt_target *tgt, const int64_t *slots_in,
                    int trace_core, const tt_budget *budget, tt_errinfo *err)
{
    if (tt_budget_check(budget, err)) return NULL;
    int64_t slots[TT_MAX_SLOTS];
    memcpy(slots, slots_in, t->nslots * sizeof *slots);
    tt_sim_opts o;
    memset(&o, 0, sizeof o);
    o.trace_core = trace_core;
    if (budget && budget->sim_events > 0) o.max_events = budget->sim_events;
    tt_sim_stop stop = {budget, TT_OK, err};
    if (budget) {
        o.cancel = tt_sim_should_stop;
        o.cancel_ctx = &stop;
    }
    tt_sim_result r;
    memset(&r, 0, sizeof r);
    tt_rc rc = tt_sim_run(t, tgt, slots, &o, &r);
    if (rc == TT_ECANCELLED && stop.rc) {      /* err says why (client, deadline, shutdown) */
        tt_sim_result_close(&r);
        return NULL;
    }
    if (rc == TT_ELIMIT && budget && budget->sim_events > 0) {
        tt_errf(err, TT_EBUDGET, "budget", "the simulation needs more than %lld events, the "
                "budget of %s requests (simulate_events_%s)", (long long)budget->sim_events,
                budget->tier && budget->tier[0] == 't' ? "token" : "anonymous",
                budget->tier ? budget->tier : "anon");
        tt_sim_result_close(&r);
        return NULL;
    }
    if (rc != TT_OK) {
        tt_errf(err, rc, "config", "%s", r.reason[0] ? r.reason : tt_strerror(rc));
        tt_sim_result_close(&r);
        return NULL;
    }
    json_t *stalls = json_object();
    for (int s = 0; s < TT_STALL__COUNT; s++)
        json_object_set_new(stalls, tt_stall_name((tt_stall)s), json_real(r.stall_cycles[s]));
    char key[1024];
    tt_tmpl_problem_key(t, slots, key, sizeof key);
    json_t *out = json_pack(
        "{s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:o, s:f, s:f, s:o, s:o, s:o, s:I, s:I, s:I, s:I}",
        "source", "sim", "note", "simulated by the built-in pipeline simulator, not measured "
        "on hardware", "target", tgt->name, "template", "name", t->name, "hash", t->hash,
        "problem_key", key, "config", tt_tmpl_config_json(t, slots), "time_us", r.time_us,
        "cycles", r.cycles, "busy_cycles", tt_units_json(r.busy_cycles, 1), "util",
        tt_units_json(r.util, 1), "stall_cycles", stalls, "blocks", (json_int_t)r.blocks,
        "waves", (json_int_t)r.waves, "waves_simulated", (json_int_t)r.waves_simulated,
        "events", (json_int_t)r.events);
    if (out && trace_core >= 0 && r.trace_json) {
        size_t kept = 0, total = 0, len = strlen(r.trace_json);
        if (budget && budget->trace_bytes > 0 && len > budget->trace_bytes) {
            tt_budget_trace_cut(r.trace_json, len, budget->trace_bytes, &kept, &total);
            char note[160];
            snprintf(note, sizeof note, "trace cut to its first %zu of %zu events (%zu of %zu "
                     "bytes; max_trace_bytes)", kept, total, strlen(r.trace_json), len);
            json_object_set_new(out, "trace_note", json_string(note));
            json_object_set_new(out, "trace_truncated", json_true());
        }
        json_t *tr = json_loads(r.trace_json, 0, NULL);
        json_object_set_new(out, "trace", tr ? tr : json_null());
    }
    tt_sim_result_close(&r);
    if (!out) tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    return out;
}

/* ---- text forms for the CLI --------------------------------------------------------- */
char *tt__predict_text(const json_t *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    const json_t *sp = json_object_get(a, "space");
    fprintf(f, "template %s on %s, problem %s\n",
            json_string_value(json_object_get(json_object_get(a, "template"), "name")),
            json_string_value(json_object_get(a, "target")),
            json_string_value(json_object_get(a, "problem_key")));
    fprintf(f, "space: total %lld", (long long)json_integer_value(json_object_get(sp, "total")));
    if (json_is_integer(json_object_get(sp, "feasible")))
        fprintf(f, ", feasible %lld\n",
                (long long)json_integer_value(json_object_get(sp, "feasible")));
    else
        fprintf(f, " (not enumerated: above max_space)\n");
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(sp, "rejected"), k, v)
        fprintf(f, "  rejected %10lld  %s\n", (long long)json_integer_value(v), k);
    fprintf(f, "predictions (source: analytic model, not measured):\n");
    fprintf(f, "  %4s %12s %23s %-8s %s\n", "rank", "time_us", "band low..high us", "bound", "config");
    size_t i;
    json_array_foreach(json_object_get(a, "results"), i, v) {
        char *cfg = tt_json_dumps(json_object_get(v, "config"), JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (json_is_true(json_object_get(v, "feasible")))
            fprintf(f, "  %4zu %12.3f %11.3f..%-11.3f %-8s %s\n", i + 1,
                    json_number_value(json_object_get(v, "time_us")),
                    json_number_value(json_object_get(v, "low_us")),
                    json_number_value(json_object_get(v, "high_us")),
                    json_string_value(json_object_get(v, "bound")), cfg ? cfg : "");
        else
            fprintf(f, "  %4zu %12s %23s %-8s %s (%s)\n", i + 1, "-", "-", "infeasible", cfg ? cfg : "",
                    json_string_value(json_object_get(v, "reason")));
        free(cfg);
    }
    fclose(f);
    return buf;
}

char *tt__sim_text(const json_t *a)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    char *cfg = tt_json_dumps(json_object_get(a, "config"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    fprintf(f, "template %s on %s, problem %s\nconfig %s\n",
            json_string_value(json_object_get(json_object_get(a, "template"), "name")),
            json_string_value(json_object_get(a, "target")),
            json_string_value(json_object_get(a, "problem_key")), cfg ? cfg : "");
    free(cfg);
    fprintf(f, "simulated time: %.3f us (%.0f cycles; source: simulator, not hardware)\n",
            json_number_value(json_object_get(a, "time_us")),
            json_number_value(json_object_get(a, "cycles")));
    fprintf(f, "blocks %lld, waves %lld (simulated %lld), events %lld\n",
            (long long)json_integer_value(json_object_get(a, "blocks")),
            (long long)json_integer_value(json_object_get(a, "waves")),
            (long long)json_integer_value(json_object_get(a, "waves_simulated")),
            (long long)json_integer_value(json_object_get(a, "events")));
    fprintf(f, "  %-6s %14s %6s\n", "unit", "busy_cycles", "util");
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(a, "busy_cycles"), k, v)
        fprintf(f, "  %-6s %14.0f %5.1f%%\n", k, json_number_value(v),
                100.0 * json_number_value(json_object_get(json_object_get(a, "util"), k)));
    fprintf(f, "stalls:");
    json_object_foreach(json_object_get(a, "stall_cycles"), k, v)
        fprintf(f, " %s=%.0f", k, json_number_value(v));
    fprintf(f, "\n");
    fclose(f);
    return buf;
}

/* ---- POST /v1/predict, POST /v1/simulate -------------------------------------------- */
typedef struct tt_model_args {
    const json_t *tmpl, *target, *problem, *configs, *config;
    int64_t top, trace_core;
    int trace;
} tt_model_args;
#define TT_MA(f) offsetof(tt_model_args, f)
static const tt__member tt_predict_members[] = {
    {"template", TT__P_ANY, 0, 0, 0, TT_MA(tmpl), NULL},
    {"target", TT__P_ANY, 0, 0, 0, TT_MA(target), NULL},
    {"problem", TT__P_ANY, 0, 0, 0, TT_MA(problem), NULL},
    {"configs", TT__P_ARRAY, TT__M_RANGE, 0, 10000, TT_MA(configs),
     "must be an array of at most 10000 configs"},
    {"config", TT__P_ANY, 0, 0, 0, TT_MA(config), NULL},
    {"top", TT__P_INT, TT__M_RANGE, 1, TT_MAX_TOP, TT_MA(top), NULL},
};
static const tt__member tt_simulate_members[] = {
    {"template", TT__P_ANY, 0, 0, 0, TT_MA(tmpl), NULL},
    {"target", TT__P_ANY, 0, 0, 0, TT_MA(target), NULL},
    {"problem", TT__P_ANY, 0, 0, 0, TT_MA(problem), NULL},
    {"config", TT__P_ANY, TT__M_REQUIRED, 0, 0, TT_MA(config), NULL},
    {"trace", TT__P_BOOL, 0, 0, 0, TT_MA(trace), NULL},
    {"trace_core", TT__P_INT, TT__M_RANGE, 0, 1024, TT_MA(trace_core), "must be a core index"},
};

/* Target, template (never stored) and problem of a model request; ref closed by the caller. */
static tt_rc tt_model_resolve(tt_server *srv, const tt_model_args *a, const tt_target **tgt,
                              tt__tmpl_ref *ref, int64_t *slots, tt_errinfo *err)
{
    memset(slots, 0, TT_MAX_SLOTS * sizeof *slots);
    tt_rc rc = tt__req_target(srv, a->target, tgt, err);
    if (!rc) rc = tt__req_template(srv, a->tmpl, NULL, ref, err);
    if (!rc) rc = tt__req_problem(ref->t, a->problem, slots, err);
    return rc;
}

void tt__api_predict(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_model_args a = {.top = 10};
    if (TT__REQ_BODY(req, tt_predict_members, &a, &err) ||
        (a.config && a.configs &&
         tt_errf(&err, TT_EINVAL, "config", "give \"config\" or \"configs\", not both"))) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    json_t *tmp = a.config && !a.configs ? json_pack("[O]", a.config) : NULL;
    const tt_target *tgt;
    tt__tmpl_ref ref = {0};
    int64_t slots[TT_MAX_SLOTS];
    json_t *ans = NULL;
    if (!tt_model_resolve(srv, &a, &tgt, &ref, slots, &err))
        ans = tt__model_predict(ref.t, tgt, slots, tmp ? tmp : a.configs, (int)a.top,
                                srv->max_space, req->budget, &err);
    if (ans) tt_resp_json(resp, 200, ans);
    else tt_resp_errinfo(resp, &err);
    json_decref(tmp);
    tt__tmpl_ref_close(&ref);
}

void tt__api_simulate(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_model_args a = {0};
    if (TT__REQ_BODY(req, tt_simulate_members, &a, &err)) { tt_resp_errinfo(resp, &err); return; }
    const tt_target *tgt;
    tt__tmpl_ref ref = {0};
    int64_t slots[TT_MAX_SLOTS];
    json_t *ans = NULL;
    if (!tt_model_resolve(srv, &a, &tgt, &ref, slots, &err) &&
        !tt__req_config(ref.t, a.config, "config", slots, &err))
        ans = tt__sim_run(ref.t, tgt, slots, a.trace ? (int)a.trace_core : -1, req->budget,
                          &err);
    if (ans) tt_resp_json(resp, 200, ans);
    else tt_resp_errinfo(resp, &err);
    tt__tmpl_ref_close(&ref);
}

/* ---- GET /v1/best ------------------------------------------------------------------- */
/* Distance between two problems of one template (docs/api.md, "nearest"):
 *   sum over int inputs of |log2(a / b)|; dtype inputs must be equal (else -1). */
static double tt_problem_distance(const tt_template *t, const int64_t *a, const int64_t *b)
{
    double d = 0;
    for (size_t i = 0; i < t->ninputs; i++) {
        if (t->inputs[i].kind == TT_INPUT_DTYPE) {
            if (a[i] != b[i]) return -1;
        } else {
            if (a[i] <= 0 || b[i] <= 0) { if (a[i] != b[i]) return -1; continue; }
            d += fabs(log2((double)a[i] / (double)b[i]));
        }
    }
    return d;
}

static json_t *tt_best_json(const tt_best *b, const char *target)
{
    json_t *pj = json_loads(b->problem_json ? b->problem_json : "null", JSON_DECODE_ANY, NULL);
    json_t *cj = json_loads(b->config_json ? b->config_json : "null", JSON_DECODE_ANY, NULL);
    const char *kind = strncmp(b->backend_fp, "sim", 3) == 0      ? "simulated"
                       : strncmp(b->backend_fp, "model", 5) == 0  ? "predicted"
                       : strncmp(b->backend_fp, "replay", 6) == 0 ? "replayed"
                                                                  : "measured";
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:f, s:f, s:o, s:I, s:I, s:f, s:s}",
                     "template", b->template_name, "template_hash", b->template_hash, "target",
                     target, "measured_by", b->backend_fp, "problem", pj ? pj : json_null(),
                     "problem_key", b->problem_key ? b->problem_key : "", "config",
                     cj ? cj : json_null(), "median_us", b->median_us, "spread_us",
                     b->spread_us, "predicted_us",
                     b->predicted_us > 0 && isfinite(b->predicted_us)
                         ? json_real(b->predicted_us) : json_null(), "trial",
                     (json_int_t)b->trial_id, "job", (json_int_t)b->job_id, "updated_at",
                     b->updated_at, "time_kind", kind);
}

/* A finished JSON body (malloc'd, ends in a newline; taken) as a 200 answer. */
static void tt_best_resp_text(tt_resp *resp, char *body)
{
    json_decref(resp->json);
    free(resp->text);
    resp->json = NULL;
    resp->status = 200;
    resp->text = body;
    resp->content_type = "application/json";
}

typedef struct tt_best_args {
    const char *tmpl, *backend, *hash;
    const json_t *target;
    int nearest;
} tt_best_args;
#define TT_BA(f) offsetof(tt_best_args, f)
static const tt__member tt_best_members[] = {   /* every other argument is an input */
    {"nearest", TT__P_BOOL, 0, 0, 0, TT_BA(nearest), "must be 0 or 1"},
    {"template", TT__P_STRING, TT__M_REQUIRED, 0, 0, TT_BA(tmpl),
     "the query needs template= and target="},
    {"target", TT__P_ANY, TT__M_REQUIRED, 0, 0, TT_BA(target),
     "the query needs template= and target="},
    {"backend", TT__P_STRING, 0, 0, 0, TT_BA(backend), NULL},
    {"hash", TT__P_STRING, 0, 0, 0, TT_BA(hash), NULL},
};

/* The query arguments that are not members of tt_best_members, as template t's problem. */
static tt_rc tt_best_problem(const tt_template *t, const json_t *q, int64_t *slots,
                             tt_errinfo *err)
{
    json_t *prob = json_object();
    const char *k;
    json_t *v;
    tt_rc rc = prob ? TT_OK : tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    json_object_foreach((json_t *)q, k, v) {
        size_t m = 0, nm = sizeof tt_best_members / sizeof tt_best_members[0];
        while (m < nm && strcmp(tt_best_members[m].name, k)) m++;
        if (rc || m < nm) continue;
        int slot = tt_tmpl_slot_of(t, k);
        if (slot < 0 || (size_t)slot >= t->ninputs) {
            rc = tt_errf(err, TT_EPROBLEM, k, "\"%s\" is not an input of %s", k, t->name);
            continue;
        }
        const char *s = json_string_value(v);
        long long x = 0;
        if (t->inputs[slot].kind != TT_INPUT_INT)
            json_object_set_new(prob, k, json_string(s));
        else if (tt__parse_int(s, &x))
            rc = tt_errf(err, TT_EPROBLEM, k, "%s must be an integer", k);
        else
            json_object_set_new(prob, k, json_integer(x));
    }
    memset(slots, 0, TT_MAX_SLOTS * sizeof *slots);
    if (!rc) rc = tt__req_problem(t, prob, slots, err);
    json_decref(prob);
    return rc;
}

/* The cache key of an answer: the store's address, then each part as its length and bytes
 * ('-' for a NULL part), so no two different part lists give the same key.  1, or 0 when
 * it does not fit.  No printf: this runs on every GET /v1/best (see template_values.c). */
static int tt_best_cache_key(const tt_server *srv, const char *const *part, size_t n,
                             char *key, size_t cap)
{
    size_t len = 0;
    uintptr_t a = (uintptr_t)srv->store;
    if (cap < 2 * sizeof a + 1) return 0;
    for (size_t i = 0; i < 2 * sizeof a; i++, a >>= 4) key[len++] = "0123456789abcdef"[a & 15];
    for (size_t i = 0; i < n; i++) {
        size_t pl = part[i] ? strlen(part[i]) : 0;
        if (len + pl + 24 > cap) return 0;
        key[len++] = '|';
        if (!part[i]) { key[len++] = '-'; continue; }
        for (size_t m = pl; ; m /= 10) {        /* the length, least digit first, then ':' */
            key[len++] = (char)('0' + m % 10);
            if (m < 10) break;
        }
        key[len++] = ':';
        memcpy(key + len, part[i], pl);
        len += pl;
    }
    key[len] = '\0';
    return 1;
}

/* The exact answer, through the read-through cache (bestcache.h) when the store gives a
 * stamp (SQLite; taken before the store is read): with hash=, that version's row; without,
 * the fastest row that fits t, the current version (tt__best_fitting; t's hash is part of
 * the cache key, so replacing the template changes the key).  TT_ENOTFOUND with nothing
 * answered when there is no row (*nrows: how many rows of the problem did not fit); else
 * resp is filled (200 or an error). */
static tt_rc tt_best_exact(tt_server *srv, const tt_template *t, const tt_best_query *bq,
                           const int64_t *slots, int nearest, tt_resp *resp, size_t *nrows)
{
    tt_store_stamp st;
    char ckey[1400];
    int cacheable = tt_store_best_stamp(srv->store, &st) == TT_OK;
    const char *fp = bq->backend_fp, *hash = bq->template_hash;
    *nrows = 0;
    if (cacheable) {
        const char *part[] = {bq->template_name, bq->target, bq->problem_key, fp, hash,
                              nearest ? "1" : "0", t->hash};
        cacheable = tt_best_cache_key(srv, part, sizeof part / sizeof *part, ckey, sizeof ckey);
    }
    char *body = cacheable ? tt_bestcache_get(ckey, &st) : NULL;
    if (body) { tt_best_resp_text(resp, body); return TT_OK; }
    tt_best b;
    memset(&b, 0, sizeof b);
    tt_rc rc = hash ? tt_store_best_get(srv->store, bq, &b)
                    : tt__best_fitting(srv, t, bq, slots, &b, nrows);
    if (rc == TT_ENOTFOUND) return rc;
    if (rc) {
        tt_resp_error(resp, rc, NULL, "cannot read best: %s", tt_store_errmsg(srv->store));
        return rc;
    }
    json_t *o = tt_best_json(&b, bq->target);
    if (o) {
        json_object_set_new(o, "exact", json_true());
        if (nearest) json_object_set_new(o, "distance", json_real(0));
    }
    tt_best_clear(&b);
    char *text = o && cacheable ? tt_json_dumps(o, JSON_COMPACT) : NULL;
    size_t n = text ? strlen(text) : 0;
    body = text ? realloc(text, n + 2) : NULL;
    if (!body) {          /* not cacheable (or out of memory): http.c dumps the JSON */
        free(text);
        tt_resp_json(resp, 200, o);
        return TT_OK;
    }
    body[n] = '\n';       /* the same bytes as http.c's JSON answers */
    body[n + 1] = '\0';
    json_decref(o);
    tt_bestcache_put(ckey, &st, body);
    tt_best_resp_text(resp, body);
    return TT_OK;
}

/* The closest stored problem of the same template, target, backend and dtypes: with hash=
 * among that version's rows, else among the rows of any version whose config fits t. */
static void tt_best_nearest(tt_server *srv, const tt_template *t, tt_best_query bq,
                            const int64_t *slots, const char *note, tt_resp *resp)
{
    const char *key = bq.problem_key;
    bq.problem_key = NULL;
    tt_best *rows = NULL;
    size_t n = 0, unfit = 0;
    if (tt__best_rows(srv, &bq, &rows, &n, resp)) return;
    double bestd = -1;
    size_t bi = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t other[TT_MAX_SLOTS];
        if (tt__best_row_problem(t, &rows[i], other)) continue;
        double d = tt_problem_distance(t, slots, other);
        if (d < 0) continue;
        if (!bq.template_hash && !tt__best_row_fits(t, &rows[i], other)) { unfit++; continue; }
        if (bestd < 0 || d < bestd || (d == bestd && rows[i].median_us < rows[bi].median_us)) {
            bestd = d;
            bi = i;
        }
    }
    if (bestd < 0) {
        char why[160] = "";
        if (unfit)
            snprintf(why, sizeof why, " (%zu row(s) whose config does not fit its current "
                     "version, hash %s, left out)", unfit, t->hash);
        tt_resp_error(resp, TT_ENOTFOUND, NULL,
                      "no tuned config for %s on %s with matching dtypes%s%s", t->name,
                      bq.target, why, note);
    } else {
        json_t *o = tt_best_json(&rows[bi], bq.target);
        if (o) {
            json_object_set_new(o, "exact", json_false());
            json_object_set_new(o, "distance", json_real(bestd));
            json_object_set_new(o, "requested_problem_key", json_string(key));
        }
        tt_resp_json(resp, 200, o);
    }
    for (size_t i = 0; i < n; i++) tt_best_clear(&rows[i]);
    free(rows);
}

/* The template of GET /v1/best: the version of hash= (an empty one is none), whose inputs
 * read the problem, else the current one of the name.  *hash becomes NULL when empty. */
static tt_rc tt_best_template(tt_server *srv, const char *name, const char **hash,
                              const tt_template **t, tt_errinfo *err)
{
    if (*hash && !**hash) *hash = NULL;
    const tt_template *cur;
    tt_rc rc = tt__req_template_name(srv, name, &cur, err);
    *t = cur;
    if (rc || !*hash) return rc;
    rc = tt_catalog_template(srv->catalog, srv->store, name, *hash, t, err);
    if (rc == TT_ENOTFOUND)
        return tt_errf(err, rc, "hash", "template %s has no version with hash %.64s (its "
                       "current one is %s: GET /v1/templates/%s)", name, *hash, cur->hash, name);
    return rc;
}

void tt__api_best(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_best_args a = {0};
    const tt_template *t;
    int64_t slots[TT_MAX_SLOTS];
    char fp[80] = "", key[1024], target[64], note[160];
    int configured;
    if (TT__PARSE(req->query, tt_best_members, TT__PARSE_QUERY | TT__PARSE_OPEN, NULL, &a,
                  &err) ||
        tt__req_target_name(srv, a.target, target, &configured, &err) ||
        tt_best_template(srv, a.tmpl, &a.hash, &t, &err) ||
        tt_best_problem(t, req->query, slots, &err) ||
        tt__req_backend(srv, t, a.backend, fp, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    tt_tmpl_problem_key(t, slots, key, sizeof key);
    tt_best_query bq = {t->name, target, key, a.backend ? fp : NULL, a.hash};
    size_t unfit = 0;
    tt_rc rc = tt_best_exact(srv, t, &bq, slots, a.nearest, resp, &unfit);
    if (rc != TT_ENOTFOUND) return;
    tt__target_note(srv, target, configured, note, sizeof note);
    if (a.nearest) tt_best_nearest(srv, t, bq, slots, note, resp);
    else if (unfit)
        tt_resp_error(resp, TT_ENOTFOUND, NULL,
                      "%zu best row(s) of %s on %s at %s, but none fits the template's current "
                      "version (hash %s): config outside the params' domains or constraints, "
                      "or problem outside the inputs' ranges; tune again, or ask for the "
                      "version that tuned it with hash=", unfit, t->name, target, key, t->hash);
    else
        tt_resp_error(resp, TT_ENOTFOUND, NULL,
                      "no tuned config for %s on %s%s%s%s (nearest=1 takes the closest tuned "
                      "shape; tlctl best --nearest)", t->name, target, *key ? " at " : "", key,
                      note);
}

/* SPDX-License-Identifier: MIT
 * api_meta.c - templates, targets, config, health, readiness and Prometheus metrics routes.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "metrics.h"
#include "space.h"

#ifndef TT_VERSION
#define TT_VERSION "0.0.0"
#endif

/* ---- templates ---------------------------------------------------------------------- */
void tt__api_templates_list(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    (void)req;
    json_t *arr = tt_catalog_list(srv->catalog, srv->store);
    if (!arr) { tt_resp_error(resp, TT_EDB, NULL, "cannot list templates"); return; }
    tt_resp_json(resp, 200, json_pack("{s:o}", "templates", arr));
}

static json_t *tt_template_summary(const tt_template *t)
{
    json_t *inputs = json_array(), *params = json_array();
    for (size_t i = 0; i < t->ninputs; i++) {
        const tt_input *in = &t->inputs[i];
        json_t *o = json_pack("{s:s, s:s}", "name", in->name, "type",
                              in->kind == TT_INPUT_INT ? "int" : "dtype");
        if (in->kind == TT_INPUT_DTYPE) {
            json_t *dts = json_array();
            for (size_t d = 0; d < in->ndtypes; d++)
                json_array_append_new(dts, json_string(tt_dtype_name(in->dtypes[d])));
            json_object_set_new(o, "values", dts);
            if (in->has_default)
                json_object_set_new(o, "default", json_string(tt_dtype_name((tt_dtype)in->def)));
        } else {
            json_object_set_new(o, "min", json_integer(in->min));
            json_object_set_new(o, "max", json_integer(in->max));
            if (in->has_default) json_object_set_new(o, "default", json_integer(in->def));
        }
        json_array_append_new(inputs, o);
    }
    for (size_t i = 0; i < t->nparams; i++) {
        const tt_param *p = &t->params[i];
        json_t *vals = json_array();
        for (size_t k = 0; k < p->nvalues; k++)
            json_array_append_new(vals, json_integer(p->values[k]));
        json_t *o = json_pack("{s:s, s:o}", "name", p->name, "values", vals);
        if (p->has_default) json_object_set_new(o, "default", json_integer(p->def));
        json_array_append_new(params, o);
    }
    double total = 1;
    for (size_t i = 0; i < t->nparams; i++) total *= (double)t->params[i].nvalues;
    return json_pack("{s:s, s:s, s:s, s:b, s:o, s:o, s:f}", "name", t->name, "version",
                     t->version ? t->version : "", "hash", t->hash, "has_kernel",
                     t->kernel != NULL, "inputs", inputs, "params", params, "space_product",
                     total);
}

void tt__api_template_get(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    static const tt__member tab[] = {{"hash", TT__P_STRING, 0, 0, 0, 0, NULL}};
    const char *hash = NULL;
    if (TT__PARSE(req->query, tab, TT__PARSE_QUERY, NULL, &hash, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    const tt_template *t;
    tt_rc rc = tt_catalog_template(srv->catalog, srv->store, req->params[0], hash, &t, &err);
    if (rc == TT_ENOTFOUND) {
        tt_resp_error(resp, TT_ENOTFOUND, NULL, "no template \"%.64s\"%s", req->params[0],
                      hash ? " with that hash" : "");
        return;
    }
    if (rc) { tt_resp_errinfo(resp, &err); return; }
    json_t *o = tt_template_summary(t);
    if (o) json_object_set_new(o, "document", t->doc ? json_incref(t->doc) : json_null());
    tt_resp_json(resp, 200, o);
}

/* The body of PUT / validate: a template document whose name (if any) is the URL's. */
static int tt_doc_check(const tt_req *req, tt_resp *resp)
{
    if (!json_is_object(req->body)) {
        tt_resp_error(resp, TT_EINVAL, NULL, "the body must be a template document (object)");
        return -1;
    }
    const char *dn = json_string_value(json_object_get(req->body, "name"));
    if (dn && strcmp(dn, req->params[0]) != 0) {
        tt_resp_error(resp, TT_EINVAL, "name", "the document is named \"%.64s\", the URL "
                      "says \"%.64s\"", dn, req->params[0]);
        return -1;
    }
    return 0;
}

void tt__api_template_put(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    if (tt_doc_check(req, resp)) return;
    const tt_template *t;
    tt_rc rc = tt_catalog_put_as(srv->catalog, srv->store, req->params[0], req->body,
                                 req->token_name ? req->token_name : "",
                                 (req->scopes & TT_SCOPE_ADMIN) != 0, &t, &err);
    if (rc) { tt_resp_errinfo(resp, &err); return; }
    tt_resp_json(resp, 201, tt_template_summary(t));
}

typedef struct tt_validate_query {
    const char *target, *problem;
} tt_validate_query;
static const tt__member tt_validate_members[] = {
    {"target", TT__P_STRING, 0, 0, 0, offsetof(tt_validate_query, target), NULL},
    {"problem", TT__P_STRING, 0, 0, 0, offsetof(tt_validate_query, problem), NULL},
};

void tt__api_template_validate(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    if (tt_doc_check(req, resp)) return;
    /* optional: counts of the space for ?target=..&problem=M=..,N=.. */
    tt_validate_query q = {0};
    if (TT__PARSE(req->query, tt_validate_members, TT__PARSE_QUERY, NULL, &q, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    tt_template *t = NULL;
    tt_rc rc = tt_tmpl_parse_json(req->body, NULL, &t, &err);
    if (rc) { tt_resp_errinfo(resp, &err); return; }
    json_t *o = tt_template_summary(t);
    if (o) json_object_set_new(o, "valid", json_true());
    const char *tg = q.target, *pb = q.problem;
    if (o && tg && pb) {
        const tt_target *tgt = tt_catalog_target(srv->catalog, tg);
        int64_t slots[TT_MAX_SLOTS];
        memset(slots, 0, sizeof slots);
        json_t *sp = NULL;
        if (!tgt) rc = tt_errf(&err, TT_ETARGET, "target", "unknown target \"%.64s\"", tg);
        else if (!(rc = tt_tmpl_problem_parse(t, pb, slots, &err)))
            sp = tt__space_json(t, tgt, slots, srv->max_space, &err);
        if (!rc && !sp) rc = err.rc ? err.rc : TT_EINTERNAL;
        if (rc) {
            json_decref(o);
            o = NULL;
            tt_resp_errinfo(resp, &err);
        } else {
            json_object_set_new(o, "space", sp);
        }
    }
    if (o) tt_resp_json(resp, 200, o);
    tt_tmpl_free(t);
}

/* ---- targets ------------------------------------------------------------------------ */
static json_t *tt_target_summary(const tt_target *t)
{
    json_t *al = json_array();
    for (int i = 0; i < t->naliases; i++) json_array_append_new(al, json_string(t->aliases[i]));
    return json_pack("{s:s, s:o, s:s, s:i, s:i, s:f, s:f, s:f}", "name", t->name, "aliases",
                     al, "platform", t->platform, "cube_cores", t->cube_cores, "vector_cores",
                     t->vector_cores, "clock_mhz", t->clock_mhz, "hbm_gbps", t->hbm_gbps,
                     "l2_bytes", t->l2_bytes);
}

void tt__api_targets_list(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    (void)req;
    const tt_targets *ts = tt_catalog_targets(srv->catalog);
    json_t *arr = json_array();
    for (size_t i = 0; i < tt_targets_count(ts); i++)
        json_array_append_new(arr, tt_target_summary(tt_targets_at(ts, i)));
    tt_resp_json(resp, 200, json_pack("{s:o}", "targets", arr));
}

void tt__api_target_get(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    const tt_target *t = tt_catalog_target(srv->catalog, req->params[0]);
    if (!t) {
        tt_resp_error(resp, TT_ENOTFOUND, NULL, "no target \"%.64s\"", req->params[0]);
        return;
    }
    json_t *o = tt_target_summary(t);
    if (o) json_object_set_new(o, "document", t->doc ? json_incref(t->doc) : json_null());
    tt_resp_json(resp, 200, o);
}

/* ---- operations --------------------------------------------------------------------- */
void tt__api_config(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    (void)req;
    if (!srv->config) { tt_resp_error(resp, TT_ENOTFOUND, NULL, "no configuration"); return; }
    tt_resp_json(resp, 200, json_pack("{s:O}", "config", srv->config));
}

void tt__api_healthz(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    (void)srv;
    (void)req;
    tt_resp_json(resp, 200, json_pack("{s:s, s:s}", "status", "ok", "version", TT_VERSION));
}

void tt__api_readyz(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    (void)req;
    tt_rc st = tt_store_ping(srv->store);
    int runner = tt__api_runner_state();
    int alive = runner <= 0 || tt_runner_alive(tt__api_get_runner());
    if (st != TT_OK || !runner || !alive) {
        tt_resp_error(resp, TT_EUNAVAILABLE, NULL, "not ready: store %s, runner %s",
                      st == TT_OK ? "ok" : tt_store_errmsg(srv->store),
                      !runner ? "not running" : alive ? "ok" : "workers stopped");
        return;
    }
    tt_resp_json(resp, 200, json_pack("{s:b, s:{s:s, s:s}}", "ready", 1, "checks", "store",
                                      "ok", "runner", runner > 0 ? "ok" : "disabled"));
}

void tt__api_metrics(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    (void)req;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int e = tt_metrics_appendf(&buf, &len, &cap,
                               "# HELP tiletune_build_info Version of tiletuned.\n"
                               "# TYPE tiletune_build_info gauge\n"
                               "tiletune_build_info{version=\"%s\"} 1\n", TT_VERSION);
    e |= tt_metrics_render(tt__api_get_metrics(), &buf, &len, &cap);
    int64_t counts[TT_JOB__COUNT] = {0};
    if (tt_store_job_counts(srv->store, NULL, counts) == TT_OK) {
        e |= tt_metrics_appendf(&buf, &len, &cap,
                                "# HELP tiletune_jobs Jobs by state.\n# TYPE tiletune_jobs gauge\n");
        for (int s = 0; s < TT_JOB__COUNT; s++)
            e |= tt_metrics_appendf(&buf, &len, &cap, "tiletune_jobs{state=\"%s\"} %lld\n",
                                    tt_job_state_name((tt_job_state)s), (long long)counts[s]);
        e |= tt_metrics_appendf(&buf, &len, &cap,
                                "# HELP tiletune_queue_depth Jobs waiting for a worker.\n"
                                "# TYPE tiletune_queue_depth gauge\ntiletune_queue_depth %lld\n",
                                (long long)counts[TT_JOB_QUEUED]);
    }
    char *stats = NULL;
    if (tt_store_trial_stats(srv->store, &stats) == TT_OK && stats) {
        json_t *o = json_loads(stats, 0, NULL);
        e |= tt_metrics_appendf(&buf, &len, &cap,
                                "# HELP tiletune_trials_total Trials by backend and outcome.\n"
                                "# TYPE tiletune_trials_total counter\n");
        const char *bk, *st;
        json_t *bo, *n;
        json_object_foreach(o, bk, bo) {
            json_object_foreach(bo, st, n) {
                char safe[96];
                snprintf(safe, sizeof safe, "%s", bk);
                for (char *p = safe; *p; p++)
                    if (*p == '"' || *p == '\\' || *p == '\n') *p = '_';
                e |= tt_metrics_appendf(&buf, &len, &cap,
                                        "tiletune_trials_total{backend=\"%s\",outcome=\"%s\"} "
                                        "%lld\n", safe, st, (long long)json_integer_value(n));
            }
        }
        json_decref(o);
    }
    free(stats);
    if (e || !buf) {
        free(buf);
        tt_resp_error(resp, TT_ENOMEM, NULL, "out of memory");
        return;
    }
    resp->status = 200;
    resp->text = buf;
    resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

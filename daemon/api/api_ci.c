/* SPDX-License-Identifier: MIT
 * api_ci.c - the CI and data-exchange routes: POST /v1/check (regression verdicts against the
 * stored best or a pinned baseline), GET /v1/export (JSON, T4, SPECIALIZATIONS, C header) and
 * POST /v1/import (T4, Kernel Tuner cache, T1 search spaces).
 *
 * The verdict rule (docs/ci.md): with tolerance tol, base median b and spread sb (the
 * inter-quartile range recorded with the baseline), new median n and spread sn,
 *   slack     = 2 * max(sb, sn)
 *   regressed when n > b * (1 + tol) + slack
 *   improved  when n < b * (1 - tol) - slack
 *   pass      otherwise; missing when there is no baseline for the entry;
 *   error     when a re-measurement failed (counts as a failure, like regressed).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "backend.h"
#include "dataset.h"
#include "jsonutil.h"
#include "store_internal.h"
#include "t1.h"

#define TT_CI_MAX_ENTRIES 10000

/* ---- POST /v1/check --------------------------------------------------------------- */
typedef struct tt_ci_base {
    int found;
    double median_us, spread_us;
    char template_hash[17];
    char backend_fp[80];
    char *config_json;
    int64_t trial_id;
} tt_ci_base;

/* Take the found row b (a tt_best or a tt_baseline: the same member names) into out. */
#define TT_CI_BASE_TAKE(out, b)                                                            \
    do {                                                                                   \
        (out)->found = 1;                                                                  \
        (out)->median_us = (b).median_us;                                                  \
        (out)->spread_us = (b).spread_us;                                                  \
        snprintf((out)->template_hash, sizeof (out)->template_hash, "%s", (b).template_hash); \
        snprintf((out)->backend_fp, sizeof (out)->backend_fp, "%s", (b).backend_fp);       \
        (out)->config_json = (b).config_json;                                              \
        (b).config_json = NULL;                                                            \
        (out)->trial_id = (b).trial_id;                                                    \
    } while (0)

/* The baseline of an entry: "best" is the fastest stored row whose config the template's
 * current version can run (tt__best_fitting, as GET /v1/best answers); a pinned one is the
 * row pinned under that name for the problem key. */
static tt_rc tt_ci_base_get(tt_server *srv, const char *baseline, const tt_template *t,
                            const char *tgt, const char *pkey, const int64_t *slots,
                            const char *fp, tt_ci_base *out)
{
    memset(out, 0, sizeof *out);
    tt_rc rc;
    if (!strcmp(baseline, "best")) {
        tt_best_query q = {t->name, tgt, pkey, fp, NULL};
        tt_best b;
        memset(&b, 0, sizeof b);
        size_t nrows = 0;
        rc = tt__best_fitting(srv, t, &q, slots, &b, &nrows);
        if (rc == TT_OK) TT_CI_BASE_TAKE(out, b);
        tt_best_clear(&b);
    } else {
        tt_baseline b;
        memset(&b, 0, sizeof b);
        rc = tt_store_baseline_get(srv->store, baseline, t->name, pkey, tgt, fp, &b);
        if (rc == TT_OK) TT_CI_BASE_TAKE(out, b);
        tt_baseline_clear(&b);
    }
    return rc == TT_ENOTFOUND ? TT_OK : rc;
}

/* Re-measure the baseline's config on backend spec.  Fills m; TT_OK when the backend ran
 * (m->status says how the config fared). */
static tt_rc tt_ci_remeasure(tt_server *srv, const tt_template *t, const tt_target *tgt,
                             int64_t *slots, const char *config_json, const char *spec,
                             tt_measurement *m, tt_errinfo *err)
{
    json_t *cj = json_loads(config_json ? config_json : "", 0, NULL);
    tt_rc rc = cj ? tt_tmpl_config_from_json(t, cj, slots, err)
                  : tt_errf(err, TT_ECONFIG, "config", "stored config is not JSON");
    json_decref(cj);
    if (rc) return rc;
    tt_backend_env env = {srv->runner_cfg.datasets_dir, srv->runner_cfg.toolchains,
                          srv->runner_cfg.work_dir,
                          srv->runner_cfg.repeats > 0 ? srv->runner_cfg.repeats : 1, NULL};
    tt_backend *b = NULL;
    rc = tt_backend_open(spec, &env, t, tgt, slots, &b, err);
    if (rc) return rc;
    memset(m, 0, sizeof *m);
    rc = tt_backend_measure(b, slots, m);
    if (rc) tt_errf(err, rc, "backend", "backend %s failed: %s", spec, tt_strerror(rc));
    tt_backend_close(b);
    return rc;
}

/* New median/spread from "samples_us" or "median_us" (+ "spread_us").  1 when present,
 * 0 when neither member exists, -1 with err on a malformed value. */
static int tt_ci_samples(const json_t *e, tt_measurement *m, tt_errinfo *err)
{
    const json_t *s = json_object_get(e, "samples_us"), *md = json_object_get(e, "median_us");
    memset(m, 0, sizeof *m);
    if (s && (md || json_object_get(e, "spread_us"))) {   /* one would be ignored */
        tt_errf(err, TT_EINVAL, md ? "median_us" : "spread_us", "give \"samples_us\" or "
                "\"median_us\" (+ \"spread_us\"), not both");
        return -1;
    }
    if (s) {
        size_t n = json_array_size(s);
        if (!json_is_array(s) || n < 1 || n > TT_MAX_SAMPLES) {
            tt_errf(err, TT_EINVAL, "samples_us", "must be an array of 1..%d latencies (us)",
                    TT_MAX_SAMPLES);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            const json_t *v = json_array_get(s, i);
            double x = json_number_value(v);
            if (!json_is_number(v) || !(x > 0) || !isfinite(x)) {
                tt_errf(err, TT_EINVAL, "samples_us", "[%zu] must be a positive number", i);
                return -1;
            }
            m->samples_us[m->nsamples++] = x;
        }
        tt_measurement_summarise(m);
        return 1;
    }
    if (md) {
        const json_t *sp = json_object_get(e, "spread_us");
        if (!json_is_number(md) || !(json_number_value(md) > 0) ||
            (sp && (!json_is_number(sp) || json_number_value(sp) < 0))) {
            tt_errf(err, TT_EINVAL, "median_us", "median_us > 0 and spread_us >= 0 (numbers)");
            return -1;
        }
        m->median_us = m->min_us = json_number_value(md);
        m->spread_us = sp ? json_number_value(sp) : 0;
        return 1;
    }
    return 0;
}

static const char *tt_ci_verdict(double base, double base_spread, double now, double now_spread,
                           double tol)
{
    double slack = 2 * (base_spread > now_spread ? base_spread : now_spread);
    if (now > base * (1 + tol) + slack) return "regressed";
    if (now < base * (1 - tol) - slack) return "improved";
    return "pass";
}

/* The members of a check request and of each entry (borrowed from the body). */
typedef struct tt_ci_args {
    const json_t *entries, *pin;
    const char *baseline, *backend;
    double tolerance;
    int remeasure, fail_on_missing;
} tt_ci_args;
typedef struct tt_ci_eargs {
    const char *tmpl, *backend, *name;
    const json_t *target, *problem, *samples;
    double median, spread;
} tt_ci_eargs;

#define TT_CA(f) offsetof(tt_ci_args, f)
static const tt__member tt_check_members[] = {
    {"entries", TT__P_ARRAY, TT__M_REQUIRED | TT__M_RANGE, 1, TT_CI_MAX_ENTRIES, TT_CA(entries),
     "must be an array of 1..10000 entries"},
    {"baseline", TT__P_STRING, TT__M_RANGE, 1, 63, TT_CA(baseline),
     "\"best\" or a pinned baseline name"},
    {"tolerance", TT__P_NUMBER, TT__M_RANGE, 0, 10, TT_CA(tolerance),
     "must be a number in 0..10 (0.05 = 5%)"},
    {"remeasure", TT__P_BOOL, 0, 0, 0, TT_CA(remeasure), NULL},
    {"backend", TT__P_STRING, 0, 0, 0, TT_CA(backend), "must be a string such as \"sim\""},
    {"pin", TT__P_ANY, 0, 0, 0, TT_CA(pin), NULL},
    {"fail_on_missing", TT__P_BOOL, 0, 0, 0, TT_CA(fail_on_missing), NULL},
};
#define TT_CE(f) offsetof(tt_ci_eargs, f)
static const tt__member tt_entry_members[] = {
    {"template", TT__P_STRING, 0, 0, 0, TT_CE(tmpl), "need a template name"},
    {"target", TT__P_ANY, 0, 0, 0, TT_CE(target), NULL},
    {"problem", TT__P_ANY, 0, 0, 0, TT_CE(problem), NULL},
    {"samples_us", TT__P_ANY, 0, 0, 0, TT_CE(samples), NULL},
    {"median_us", TT__P_NUMBER, 0, 0, 0, TT_CE(median),
     "median_us > 0 and spread_us >= 0 (numbers)"},
    {"spread_us", TT__P_NUMBER, 0, 0, 0, TT_CE(spread),
     "median_us > 0 and spread_us >= 0 (numbers)"},
    {"backend", TT__P_STRING, 0, 0, 0, TT_CE(backend), "must be a string such as \"sim\""},
    {"name", TT__P_STRING, 0, 0, 0, TT_CE(name), NULL},
};

/* What one entry names, resolved: template, target, problem key, backend fingerprint. */
typedef struct tt_ci_what {
    const tt_template *t;
    const tt_target *tgt;
    int64_t slots[TT_MAX_SLOTS];
    char pkey[1024], fp[80];
    const char *backend;        /* NULL: any backend */
} tt_ci_what;

/* The problem of an entry into slots: a template without inputs (e.g. imported from a T1
 * file) has one problem, named by an absent problem, {} or ""; one with inputs needs it. */
static tt_rc tt_ci_problem(const tt_template *t, const json_t *v, int64_t *slots,
                           tt_errinfo *err)
{
    int empty = !v || (json_is_object(v) && !json_object_size(v)) ||
                (json_is_string(v) && !json_string_length(v));
    if (empty && !t->ninputs) return TT_OK;
    if (!v) {
        char names[200] = "";
        size_t w = 0;
        for (size_t i = 0; i < t->ninputs && w < sizeof names; i++) {
            int k = snprintf(names + w, sizeof names - w, "%s%s", i ? ", " : "",
                             t->inputs[i].name);
            w = k < 0 ? w : w + (size_t)k;
        }
        return tt_errf(err, TT_EPROBLEM, "problem", "template %s has inputs (%s): add "
                       "\"problem\"", t->name, names);
    }
    return tt__req_problem(t, v, slots, err);
}

/* Check entry e against the table and resolve what it names (the problem only when given or
 * need_problem).  TT_OK or err filled (path relative to the entry). */
static tt_rc tt_ci_resolve(tt_server *srv, const json_t *e, const char *top_backend,
                           int need_problem, tt_ci_eargs *ea, tt_ci_what *w, tt_errinfo *err)
{
    memset(ea, 0, sizeof *ea);
    memset(w, 0, sizeof *w);
    if (!json_is_object(e))
        return tt_errf(err, TT_EINVAL, NULL, "each entry is an object {template, target, "
                       "problem, samples_us}");
    tt_rc rc;
    if ((rc = TT__PARSE(e, tt_entry_members, 0, NULL, ea, err)) ||
        (rc = tt__req_target(srv, ea->target, &w->tgt, err)) ||
        (rc = tt__req_template_name(srv, ea->tmpl, &w->t, err)))
        return rc;
    if ((need_problem || ea->problem) && (rc = tt_ci_problem(w->t, ea->problem, w->slots, err)))
        return rc;
    if (need_problem || ea->problem) tt_tmpl_problem_key(w->t, w->slots, w->pkey, sizeof w->pkey);
    w->backend = ea->backend ? ea->backend : top_backend;
    return tt__req_backend(srv, w->t, w->backend, w->fp, err);
}

/* The comparison part of an entry's answer: base, new, verdict; counts bumped. */
static void tt_ci_compare(tt_server *srv, const tt_ci_what *w, const tt_ci_base *base, int have,
                          tt_measurement *m, double tol, json_t *o, int counts[5])
{
    const char *verdict = "missing";
    if (base->found) {
        json_object_set_new(o, "base_median_us", json_real(base->median_us));
        json_object_set_new(o, "base_spread_us", json_real(base->spread_us));
        json_object_set_new(o, "base_measured_by", json_string(base->backend_fp));
        json_t *cj = json_loads(base->config_json ? base->config_json : "", 0, NULL);
        json_object_set_new(o, "config", cj ? cj : json_null());
        json_object_set_new(o, "measured_by", json_string(have ? "client" : w->backend));
        if (!have) {   /* remeasure */
            tt_errinfo me;
            tt_errinfo_clear(&me);
            int64_t slots[TT_MAX_SLOTS];
            memcpy(slots, w->slots, sizeof slots);
            tt_rc mrc = tt_ci_remeasure(srv, w->t, w->tgt, slots, base->config_json, w->backend,
                                        m, &me);
            if (mrc == TT_OK && m->status == TT_OK && m->median_us > 0) {
                have = 1;
            } else {
                verdict = "error";
                json_object_set_new(o, "error", json_string(
                    mrc ? (me.msg[0] ? me.msg : tt_strerror(mrc))
                        : (m->error[0] ? m->error : tt_strerror(m->status))));
            }
        }
        if (have) {
            verdict = tt_ci_verdict(base->median_us, base->spread_us, m->median_us,
                                    m->spread_us, tol);
            double slack = 2 * (base->spread_us > m->spread_us ? base->spread_us : m->spread_us);
            json_object_set_new(o, "ratio", json_real(m->median_us / base->median_us));
            json_object_set_new(o, "delta_pct", json_real(100.0 * (m->median_us - base->median_us)
                                                          / base->median_us));
            json_object_set_new(o, "limit_us", json_real(base->median_us * (1 + tol) + slack));
        }
    }
    if (have) {
        json_object_set_new(o, "new_median_us", json_real(m->median_us));
        json_object_set_new(o, "new_spread_us", json_real(m->spread_us));
    }
    json_object_set_new(o, "verdict", json_string(verdict));
    static const char *const names[5] = {"pass", "regressed", "improved", "missing", "error"};
    for (int k = 0; k < 5; k++)
        if (!strcmp(verdict, names[k])) counts[k]++;
}

/* One entry: appends its result object to arr and bumps counts.  TT_OK or a request error. */
static tt_rc tt_ci_entry(tt_server *srv, const json_t *e, size_t i, const tt_ci_args *a,
                         json_t *arr, int counts[5], tt_errinfo *err)
{
    char pre[32];
    snprintf(pre, sizeof pre, "entries[%zu]", i);
    /* a re-measurement is compared with rows of the same backend only */
    const char *top = a->backend ? a->backend : a->remeasure ? "sim" : NULL;
    tt_ci_eargs ea;
    tt_ci_what w;
    tt_measurement m;
    tt_rc rc = tt_ci_resolve(srv, e, top, 1, &ea, &w, err);
    int have = rc ? -1 : tt_ci_samples(e, &m, err);
    if (!rc && have < 0) rc = err->rc;
    if (!rc && !have && !a->remeasure)
        rc = tt_errf(err, TT_EINVAL, "samples_us",
                     "give measured samples_us (or median_us), or \"remeasure\": true");
    if (rc) {
        tt__err_prefix(err, pre);
        return rc;
    }
    tt_ci_base base;
    rc = tt_ci_base_get(srv, a->baseline, w.t, w.tgt->name, w.pkey, w.slots,
                        w.backend ? w.fp : NULL, &base);
    if (rc) return tt_errf(err, rc, pre, "cannot read the baseline: %s",
                           tt_store_errmsg(srv->store));
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "template", w.t->name, "target", w.tgt->name,
                          "problem_key", w.pkey, "baseline", a->baseline);
    if (ea.name) json_object_set_new(o, "name", json_string(ea.name));
    tt_ci_compare(srv, &w, &base, have, &m, a->tolerance, o, counts);
    free(base.config_json);
    json_array_append_new(arr, o);
    return TT_OK;
}

/* Keep every verdict of a check in the store's history (GET /v1/checks, the web view).  The
 * verdicts stand whether or not they could be recorded; the answer says which (new JSON
 * value: true, or the reason as a string). */
static json_t *tt_ci_record(tt_server *srv, const tt_req *req, const json_t *entries)
{
    size_t i;
    const json_t *e;
    json_array_foreach(entries, i, e) {
        char *text = tt_json_dumps(e, JSON_COMPACT);
        tt_rc rc = text ? tt_store_check_add(srv->store,
                                            json_string_value(json_object_get(e, "template")),
                                            json_string_value(json_object_get(e, "target")),
                                            json_string_value(json_object_get(e, "problem_key")),
                                            json_string_value(json_object_get(e, "verdict")),
                                            req->token_name, text)
                        : TT_ENOMEM;
        free(text);
        if (rc) {
            char msg[320];
            snprintf(msg, sizeof msg, "not recorded: %s", rc == TT_ENOMEM ? tt_strerror(rc)
                                                                       : tt_store_errmsg(srv->store));
            return json_string(msg);
        }
    }
    return json_true();
}

/* {"pin": NAME, "entries": [{template, target[, problem][, backend]}]}: copy best rows. */
static void tt_ci_pin(tt_server *srv, const tt_ci_args *a, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    const char *name = json_string_value(a->pin);
    size_t len = name ? strlen(name) : 0;
    if (!len || len > 63 || !strcmp(name, "best")) {
        tt_resp_error(resp, TT_EINVAL, "pin", "a baseline name of 1..63 characters, not \"best\"");
        return;
    }
    json_t *out = json_array();
    size_t total = 0;
    for (size_t i = 0; i < json_array_size(a->entries); i++) {
        char pre[32];
        snprintf(pre, sizeof pre, "entries[%zu]", i);
        tt_ci_eargs ea;
        tt_ci_what w;
        tt_rc rc = tt_ci_resolve(srv, json_array_get(a->entries, i), a->backend, 0, &ea, &w,
                                 &err);
        tt_best_query q = {w.t ? w.t->name : NULL, w.tgt ? w.tgt->name : NULL,
                           ea.problem ? w.pkey : NULL, w.backend ? w.fp : NULL, NULL};
        size_t n = 0;
        if (rc) tt__err_prefix(&err, pre);
        else if ((rc = tt_store_baseline_put(srv->store, name, &q, &n)) && rc != TT_ENOTFOUND)
            tt_errf(&err, rc, pre, "cannot pin: %s", tt_store_errmsg(srv->store));
        else rc = TT_OK;
        if (rc) {
            tt_resp_errinfo(resp, &err);
            json_decref(out);
            return;
        }
        total += n;
        json_array_append_new(out, json_pack("{s:s, s:s, s:s?, s:I}", "template", w.t->name,
                                             "target", w.tgt->name, "problem_key", q.problem_key,
                                             "pinned", (json_int_t)n));
    }
    if (!total) {
        json_decref(out);
        tt_resp_error(resp, TT_ENOTFOUND, "entries", "no best rows to pin under \"%s\"", name);
        return;
    }
    tt_resp_json(resp, 200, json_pack("{s:s, s:I, s:o}", "pin", name, "pinned",
                                      (json_int_t)total, "entries", out));
}

/* Whether any row is pinned under name (1), none is (0), or the store cannot tell (-1): a
 * check against a misspelt name otherwise reads as "every entry missing", which passes. */
static int tt_ci_pinned(tt_server *srv, const char *name)
{
    tt_baseline *rows = NULL;
    size_t n = 0;
    if (tt_store_baseline_list(srv->store, name, &rows, &n) != TT_OK) return -1;
    for (size_t i = 0; i < n; i++) tt_baseline_clear(&rows[i]);
    free(rows);
    return n > 0;
}

void tt_api_check(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_ci_args a = {.baseline = "best", .tolerance = 0.05};
    if (TT__REQ_BODY(req, tt_check_members, &a, &err)) { tt_resp_errinfo(resp, &err); return; }
    if (a.pin) { tt_ci_pin(srv, &a, resp); return; }
    int counts[5] = {0};
    json_t *arr = json_array();
    for (size_t i = 0; i < json_array_size(a.entries); i++) {
        if (tt_ci_entry(srv, json_array_get(a.entries, i), i, &a, arr, counts, &err)) {
            json_decref(arr);
            tt_resp_errinfo(resp, &err);
            return;
        }
    }
    int fail = counts[1] || counts[4] || (a.fail_on_missing && counts[3]);
    json_t *history = tt_ci_record(srv, req, arr);
    int pinned = strcmp(a.baseline, "best") ? tt_ci_pinned(srv, a.baseline) : -1;
    json_t *ans = json_pack("{s:s, s:s, s:f, s:s, s:{s:i, s:i, s:i, s:i, s:i}, s:o, s:o}",
                            "verdict", fail ? "regressed" : "pass", "baseline", a.baseline,
                            "tolerance", a.tolerance, "rule", "regressed when new_median > "
                            "base_median*(1+tolerance) + 2*max(base_spread, new_spread)",
                            "counts", "pass", counts[0], "regressed", counts[1], "improved",
                            counts[2], "missing", counts[3], "error", counts[4], "entries", arr,
                            "history", history);
    if (ans && pinned >= 0) json_object_set_new(ans, "baseline_pinned", json_boolean(pinned));
    tt_resp_json(resp, 200, ans);
}

/* GET /v1/checks?template=T&target=X[&problem=K][&limit=N]: the verdicts recorded by
 * POST /v1/check for a template on a target, newest first. */
typedef struct tt_checks_args {
    const char *template_name, *problem;
    const json_t *target;
    int64_t limit;
} tt_checks_args;

void tt_api_checks(tt_server *srv, const tt_req *req, tt_resp *resp)
{
#define TT_KA(f) offsetof(tt_checks_args, f)
    static const tt__member members[] = {
        {"template", TT__P_STRING, TT__M_REQUIRED, 0, 0, TT_KA(template_name), NULL},
        {"target", TT__P_ANY, TT__M_REQUIRED, 0, 0, TT_KA(target), NULL},
        {"problem", TT__P_STRING, 0, 0, 0, TT_KA(problem), NULL},
        {"limit", TT__P_INT, TT__M_RANGE, 1, 1000, TT_KA(limit), NULL}};
#undef TT_KA
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_checks_args a = {NULL, NULL, NULL, 100};
    const tt_target *tgt = NULL;
    if (TT__PARSE(req->query, members, TT__PARSE_QUERY, NULL, &a, &err) ||
        tt__req_target(srv, a.target, &tgt, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    const char *tname = a.template_name;
    tt_check_rec *rows = NULL;
    size_t n = 0;
    tt_rc rc = tt_store_check_list(srv->store, tname, tgt->name, a.problem, a.limit, &rows, &n);
    if (rc) {
        tt_resp_error(resp, rc, NULL, "cannot list checks: %s", tt_store_errmsg(srv->store));
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_loads(rows[i].entry_json, 0, NULL);
        json_array_append_new(arr, json_pack("{s:I, s:f, s:s, s:s, s:s, s:s, s:s, s:o}", "id",
                                             (json_int_t)rows[i].id, "created_at",
                                             rows[i].created_at, "template", rows[i].template_name,
                                             "target", rows[i].target, "problem_key",
                                             rows[i].problem_key, "verdict", rows[i].verdict,
                                             "token", rows[i].token_name, "entry",
                                             e ? e : json_null()));
        tt_check_rec_clear(&rows[i]);
    }
    free(rows);
    tt_resp_json(resp, 200, json_pack("{s:s, s:s, s:o}", "template", tname, "target", tgt->name,
                                      "checks", arr));
}

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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "backend.h"
#include "dataset.h"
#include "store_internal.h"
#include "t1.h"

#define TT_CI_MAX_ENTRIES 10000

/* Prefix err->path with "entries[i]." (or just the prefix when empty). */
static void tt_ci_prefix(tt_errinfo *e, const char *prefix)
{
    char p[sizeof e->path + 40];
    if (e->path[0]) snprintf(p, sizeof p, "%.30s.%s", prefix, e->path);
    else snprintf(p, sizeof p, "%.30s", prefix);
    snprintf(e->path, sizeof e->path, "%.159s", p);
}

/* ---- POST /v1/check --------------------------------------------------------------- */
typedef struct tt_ci_base {
    int found;
    double median_us, spread_us;
    char template_hash[17];
    char backend_fp[80];
    char *config_json;
    int64_t trial_id;
} tt_ci_base;

static tt_rc tt_ci_base_get(tt_server *srv, const char *baseline, const tt_template *t,
                            const char *tgt, const char *pkey, const char *fp,
                            tt_ci_base *out)
{
    memset(out, 0, sizeof *out);
    tt_rc rc;
    if (!strcmp(baseline, "best")) {
        tt_best_query q = {t->name, tgt, pkey, fp, NULL};
        tt_best b;
        memset(&b, 0, sizeof b);
        rc = tt_store_best_get(srv->store, &q, &b);
        if (rc == TT_OK) {
            out->found = 1;
            out->median_us = b.median_us;
            out->spread_us = b.spread_us;
            snprintf(out->template_hash, sizeof out->template_hash, "%s", b.template_hash);
            snprintf(out->backend_fp, sizeof out->backend_fp, "%s", b.backend_fp);
            out->config_json = b.config_json;
            b.config_json = NULL;
            out->trial_id = b.trial_id;
        }
        tt_best_clear(&b);
    } else {
        tt_baseline b;
        memset(&b, 0, sizeof b);
        rc = tt_store_baseline_get(srv->store, baseline, t->name, pkey, tgt, fp, &b);
        if (rc == TT_OK) {
            out->found = 1;
            out->median_us = b.median_us;
            out->spread_us = b.spread_us;
            snprintf(out->template_hash, sizeof out->template_hash, "%s", b.template_hash);
            snprintf(out->backend_fp, sizeof out->backend_fp, "%s", b.backend_fp);
            out->config_json = b.config_json;
            b.config_json = NULL;
            out->trial_id = b.trial_id;
        }
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
                          srv->runner_cfg.repeats > 0 ? srv->runner_cfg.repeats : 1};
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

static const char *const tt_check_members[] = {"entries", "baseline", "tolerance", "remeasure",
                                               "backend", "pin", "fail_on_missing", NULL};
static const char *const tt_entry_members[] = {"template", "target", "problem", "samples_us",
                                               "median_us", "spread_us", "backend", "name",
                                               NULL};

/* One entry: appends its result object to arr and bumps counts.  TT_OK or a request error. */
static tt_rc tt_ci_entry(tt_server *srv, const json_t *e, size_t i, const char *baseline,
                         double tol, int remeasure, const char *top_backend, json_t *arr,
                         int counts[5], tt_errinfo *err)
{
    char pre[32];
    snprintf(pre, sizeof pre, "entries[%zu]", i);
    tt_rc rc;
    if (!json_is_object(e)) {
        return tt_errf(err, TT_EINVAL, pre, "each entry is an object {template, target, "
                       "problem, samples_us}");
    }
    if ((rc = tt__req_known_members(e, tt_entry_members, err))) goto fail;
    const tt_target *tgt;
    if ((rc = tt__req_target(srv, json_object_get(e, "target"), &tgt, err))) goto fail;
    const char *tname = json_string_value(json_object_get(e, "template"));
    if (!tname) { rc = tt_errf(err, TT_EINVAL, "template", "need a template name"); goto fail; }
    const tt_template *t;
    if ((rc = tt_catalog_template(srv->catalog, srv->store, tname, NULL, &t, err))) {
        rc = tt_errf(err, rc, "template", "unknown template \"%.64s\"", tname);
        goto fail;
    }
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    if ((rc = tt__req_problem(t, json_object_get(e, "problem"), slots, err))) goto fail;
    const char *backend = json_string_value(json_object_get(e, "backend"));
    if (!backend) backend = top_backend;
    /* a re-measurement is compared with rows of the same backend only */
    if (!backend && remeasure) backend = "sim";
    char fp[80] = "";
    if (backend && (rc = tt_runner_check_backend(&srv->runner_cfg, t, backend, fp, err))) {
        if (!err->path[0]) snprintf(err->path, sizeof err->path, "backend");
        goto fail;
    }
    tt_measurement m;
    int have = tt_ci_samples(e, &m, err);
    if (have < 0) { rc = err->rc; goto fail; }
    if (!have && !remeasure) {
        rc = tt_errf(err, TT_EINVAL, "samples_us",
                     "give measured samples_us (or median_us), or \"remeasure\": true");
        goto fail;
    }
    char pkey[1024];
    tt_tmpl_problem_key(t, slots, pkey, sizeof pkey);
    tt_ci_base base;
    rc = tt_ci_base_get(srv, baseline, t, tgt->name, pkey, backend ? fp : NULL, &base);
    if (rc) {
        rc = tt_errf(err, rc, NULL, "cannot read the baseline: %s", tt_store_errmsg(srv->store));
        goto fail;
    }
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "template", t->name, "target", tgt->name,
                          "problem_key", pkey, "baseline", baseline);
    const char *name = json_string_value(json_object_get(e, "name"));
    if (name) json_object_set_new(o, "name", json_string(name));
    const char *verdict = "missing";
    if (base.found) {
        json_object_set_new(o, "base_median_us", json_real(base.median_us));
        json_object_set_new(o, "base_spread_us", json_real(base.spread_us));
        json_object_set_new(o, "base_measured_by", json_string(base.backend_fp));
        json_t *cj = json_loads(base.config_json ? base.config_json : "", 0, NULL);
        json_object_set_new(o, "config", cj ? cj : json_null());
        if (!have) {   /* remeasure */
            tt_errinfo me;
            tt_errinfo_clear(&me);
            const char *spec = backend;
            tt_rc mrc = tt_ci_remeasure(srv, t, tgt, slots, base.config_json, spec, &m, &me);
            json_object_set_new(o, "measured_by", json_string(spec));
            if (mrc == TT_OK && m.status == TT_OK && m.median_us > 0) {
                have = 1;
            } else {
                verdict = "error";
                json_object_set_new(o, "error", json_string(
                    mrc ? (me.msg[0] ? me.msg : tt_strerror(mrc))
                        : (m.error[0] ? m.error : tt_strerror(m.status))));
            }
        } else {
            json_object_set_new(o, "measured_by", json_string("client"));
        }
        if (have) {
            verdict = tt_ci_verdict(base.median_us, base.spread_us, m.median_us, m.spread_us, tol);
            double slack = 2 * (base.spread_us > m.spread_us ? base.spread_us : m.spread_us);
            json_object_set_new(o, "new_median_us", json_real(m.median_us));
            json_object_set_new(o, "new_spread_us", json_real(m.spread_us));
            json_object_set_new(o, "ratio", json_real(m.median_us / base.median_us));
            json_object_set_new(o, "delta_pct",
                                json_real(100.0 * (m.median_us - base.median_us) / base.median_us));
            json_object_set_new(o, "limit_us", json_real(base.median_us * (1 + tol) + slack));
        }
    } else if (have) {
        json_object_set_new(o, "new_median_us", json_real(m.median_us));
        json_object_set_new(o, "new_spread_us", json_real(m.spread_us));
    }
    free(base.config_json);
    json_object_set_new(o, "verdict", json_string(verdict));
    static const char *const names[5] = {"pass", "regressed", "improved", "missing", "error"};
    for (int k = 0; k < 5; k++)
        if (!strcmp(verdict, names[k])) counts[k]++;
    json_array_append_new(arr, o);
    return TT_OK;
fail:
    tt_ci_prefix(err, pre);
    return rc ? rc : TT_EINVAL;
}

/* {"pin": NAME, "entries": [{template, target[, problem][, backend]}]}: copy best rows. */
static void tt_ci_pin(tt_server *srv, const json_t *b, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    const char *name = json_string_value(json_object_get(b, "pin"));
    size_t len = name ? strlen(name) : 0;
    if (!len || len > 63 || !strcmp(name, "best")) {
        tt_resp_error(resp, TT_EINVAL, "pin", "a baseline name of 1..63 characters, not \"best\"");
        return;
    }
    const json_t *entries = json_object_get(b, "entries");
    json_t *out = json_array();
    size_t total = 0;
    for (size_t i = 0; i < json_array_size(entries); i++) {
        const json_t *e = json_array_get(entries, i);
        char pre[32];
        snprintf(pre, sizeof pre, "entries[%zu]", i);
        const tt_target *tgt;
        const tt_template *t;
        const char *tname = json_string_value(json_object_get(e, "template"));
        tt_rc rc = tt__req_target(srv, json_object_get(e, "target"), &tgt, &err);
        if (!rc && !tname) rc = tt_errf(&err, TT_EINVAL, "template", "need a template name");
        if (!rc && tt_catalog_template(srv->catalog, srv->store, tname, NULL, &t, &err))
            rc = tt_errf(&err, TT_ENOTFOUND, "template", "unknown template \"%.64s\"", tname);
        char pkey[1024] = "", fp[80] = "";
        const json_t *pj = json_object_get(e, "problem");
        if (!rc && pj) {
            int64_t slots[TT_MAX_SLOTS];
            memset(slots, 0, sizeof slots);
            rc = tt__req_problem(t, pj, slots, &err);
            if (!rc) tt_tmpl_problem_key(t, slots, pkey, sizeof pkey);
        }
        const char *be = json_string_value(json_object_get(e, "backend"));
        if (!be) be = json_string_value(json_object_get(b, "backend"));
        if (!rc && be) rc = tt_runner_check_backend(&srv->runner_cfg, t, be, fp, &err);
        if (rc) {
            tt_ci_prefix(&err, pre);
            tt_resp_errinfo(resp, &err);
            json_decref(out);
            return;
        }
        tt_best_query q = {t->name, tgt->name, pj ? pkey : NULL, be ? fp : NULL, NULL};
        size_t n = 0;
        rc = tt_store_baseline_put(srv->store, name, &q, &n);
        if (rc && rc != TT_ENOTFOUND) {
            tt_resp_error(resp, rc, pre, "cannot pin: %s", tt_store_errmsg(srv->store));
            json_decref(out);
            return;
        }
        total += n;
        json_array_append_new(out, json_pack("{s:s, s:s, s:s?, s:I}", "template", t->name,
                                             "target", tgt->name, "problem_key",
                                             pj ? pkey : NULL, "pinned", (json_int_t)n));
    }
    if (!total) {
        json_decref(out);
        tt_resp_error(resp, TT_ENOTFOUND, "entries", "no best rows to pin under \"%s\"", name);
        return;
    }
    tt_resp_json(resp, 200, json_pack("{s:s, s:I, s:o}", "pin", name, "pinned",
                                      (json_int_t)total, "entries", out));
}

void tt_api_check(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    const json_t *b = req->body;
    if (tt__req_body(req, tt_check_members, &err)) { tt_resp_errinfo(resp, &err); return; }
    const json_t *entries = json_object_get(b, "entries");
    if (!json_is_array(entries) || json_array_size(entries) < 1 ||
        json_array_size(entries) > TT_CI_MAX_ENTRIES) {
        tt_resp_error(resp, TT_EINVAL, "entries", "must be an array of 1..%d entries",
                      TT_CI_MAX_ENTRIES);
        return;
    }
    if (json_object_get(b, "pin")) { tt_ci_pin(srv, b, resp); return; }
    const json_t *jb = json_object_get(b, "baseline"), *jt = json_object_get(b, "tolerance");
    const json_t *jr = json_object_get(b, "remeasure"), *jbe = json_object_get(b, "backend");
    const json_t *jfm = json_object_get(b, "fail_on_missing");
    if ((jb && (!json_is_string(jb) || !json_string_length(jb) || json_string_length(jb) > 63))) {
        tt_resp_error(resp, TT_EINVAL, "baseline", "\"best\" or a pinned baseline name");
        return;
    }
    double tol = jt ? json_number_value(jt) : 0.05;
    if (jt && (!json_is_number(jt) || !(tol >= 0 && tol <= 10))) {
        tt_resp_error(resp, TT_EINVAL, "tolerance", "must be a number in 0..10 (0.05 = 5%%)");
        return;
    }
    if ((jr && !json_is_boolean(jr)) || (jfm && !json_is_boolean(jfm))) {
        tt_resp_error(resp, TT_EINVAL, jr && !json_is_boolean(jr) ? "remeasure" : "fail_on_missing",
                      "must be true or false");
        return;
    }
    if (jbe && !json_is_string(jbe)) {
        tt_resp_error(resp, TT_EINVAL, "backend", "must be a string such as \"sim\"");
        return;
    }
    const char *baseline = jb ? json_string_value(jb) : "best";
    int counts[5] = {0};
    json_t *arr = json_array();
    for (size_t i = 0; i < json_array_size(entries); i++) {
        if (tt_ci_entry(srv, json_array_get(entries, i), i, baseline, tol, json_is_true(jr),
                        json_string_value(jbe), arr, counts, &err)) {
            json_decref(arr);
            tt_resp_errinfo(resp, &err);
            return;
        }
    }
    int fail = counts[1] || counts[4] || (json_is_true(jfm) && counts[3]);
    tt_resp_json(resp, 200,
                 json_pack("{s:s, s:s, s:f, s:s, s:{s:i, s:i, s:i, s:i, s:i}, s:o}", "verdict",
                           fail ? "regressed" : "pass", "baseline", baseline, "tolerance", tol,
                           "rule", "regressed when new_median > base_median*(1+tolerance) + "
                           "2*max(base_spread, new_spread)",
                           "counts", "pass", counts[0], "regressed", counts[1], "improved",
                           counts[2], "missing", counts[3], "error", counts[4], "entries", arr));
}

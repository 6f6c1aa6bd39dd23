/* SPDX-License-Identifier: MIT
 * api_ci_import.c - POST /v1/import: recorded tuning data (T4 results, Kernel Tuner cache;
 * gzip accepted) becomes trials of a `done` job with strategy "import", and a T1 search-space
 * file becomes a template.  Idempotent: a record already stored under the same measurement
 * key is skipped, an identical template is skipped; the answer counts added / skipped /
 * rejected (config outside the template's domains).
 *
 * Query: format=t4|kt-cache|t1 (default: recognised from the content), template=NAME
 * (required for data; for T1 it overrides the name), target=NAME (default: the recording's
 * device, e.g. "nvidia-a100-pcie-40gb"; a name not in the catalog is kept as given, since
 * recordings of other devices are data, not Ascend targets), problem=M=..,N=.. (required when
 * the template has inputs), file=NAME (recorded in the job's options).
 *
 * Atomic: the whole import -- the job row (inserted `running`, leased to this request), every
 * record and the job's end (`done`) -- is ONE transaction (a store batch) on a connection of
 * its own, so a crash (kill -9) in the middle leaves nothing of it, and no other connection
 * ever sees the job unfinished (workers never claim imports anyway: store.h).  Other writers
 * wait for it (SQLite's single writer); readers do not.
 */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "backend.h"
#include "dataset.h"
#include "jsonutil.h"
#include "t1.h"

#define TT_IMPORT_LEASE_S 3600.0

static tt_rc tt_status_of(tt_ds_status s)
{
    switch (s) {
    case TT_DS_OK: return TT_OK;
    case TT_DS_INVALID: return TT_EINFEASIBLE;
    case TT_DS_COMPILE_FAILED: return TT_EBUILD;
    default: return TT_ERUN;
    }
}

/* Fill a trial from a record (config slots already in slots). */
static tt_rc tt_import_trial(const tt_template *t, const tt_dataset *ds, const tt_ds_record *r,
                             const int64_t *slots, tt_trial *tr)
{
    memset(tr, 0, sizeof *tr);
    size_t need = tt_tmpl_config_key(t, slots, NULL, 0) + 1;
    tr->config_key = malloc(need);
    if (tr->config_key) tt_tmpl_config_key(t, slots, tr->config_key, need);
    tr->config_hash = tt_tmpl_config_hash(t, slots);
    json_t *cj = tt_tmpl_config_json(t, slots);
    tr->config_json = cj ? tt_json_dumps(cj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(cj);
    tr->status = tt_status_of(r->status);
    if (r->status != TT_DS_OK) tr->error = strdup(tt_ds_status_name(r->status));
    tt_measurement m;
    memset(&m, 0, sizeof m);
    json_t *sa = json_array();
    const double *smp = tt_ds_samples(ds, r);
    for (size_t k = 0; k < r->nsamples; k++) {
        if (m.nsamples < TT_MAX_SAMPLES) m.samples_us[m.nsamples++] = smp[k];
        json_array_append_new(sa, json_real(smp[k]));
    }
    if (tr->status == TT_OK) {
        tt_measurement_summarise(&m);
        double med = !isnan(r->median_us) ? r->median_us : r->value_us;
        if (!(med > 0)) tr->status = TT_ERUN;   /* recorded ok without a usable time */
        tr->median_us = med > 0 ? med : 0;
        tr->spread_us = m.spread_us;
        tr->min_us = m.nsamples ? m.min_us : tr->median_us;
        if (r->nsamples) tr->samples_json = tt_json_dumps(sa, JSON_COMPACT);
    }
    json_decref(sa);
    tr->compile_s = isnan(r->compile_s) ? 0 : r->compile_s;
    if (!tr->config_key || !tr->config_json) { tt_trial_clear(tr); return TT_ENOMEM; }
    return TT_OK;
}

static void tt_import_t1(tt_server *srv, const tt_req *req, const char *name, const json_t *doc,
                         tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    json_t *tdoc = NULL;
    if (tt_t1_to_template(doc, name, &tdoc, &err)) { tt_resp_errinfo(resp, &err); return; }
    tt_template *parsed = NULL;
    if (tt_tmpl_parse_json(tdoc, NULL, &parsed, &err)) {
        json_decref(tdoc);
        tt_resp_errinfo(resp, &err);
        return;
    }
    const tt_template *old = NULL, *t = NULL;
    int exists = tt_catalog_template(srv->catalog, srv->store, parsed->name, parsed->hash, &old,
                                     NULL) == TT_OK;
    tt_rc rc = exists ? TT_OK
                      : tt_catalog_put_as(srv->catalog, srv->store, NULL, tdoc,
                                          req->token_name ? req->token_name : "",
                                          (req->scopes & TT_SCOPE_ADMIN) != 0, &t, &err);
    if (rc == TT_EFORBIDDEN && !name) {   /* the file's own name is a built-in's */
        tt_errf(&err, TT_EFORBIDDEN, "name", "the T1 file names its template '%.64s', a "
                "built-in's name (built-ins are read-only): import it under another name "
                "(template=NAME; tlctl import -T NAME)", parsed->name);
        tt_resp_errinfo(resp, &err);
    } else if (rc) {
        tt_resp_errinfo(resp, &err);
    } else {
        size_t np = parsed->nparams;
        tt_resp_json(resp, exists ? 200 : 201,
                     json_pack("{s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:i}", "kind", "template",
                               "template", parsed->name, "hash", parsed->hash, "params",
                               (json_int_t)np, "constraints", (json_int_t)parsed->nconstraints,
                               "added", !exists, "skipped", exists, "rejected", 0));
    }
    tt_tmpl_free(parsed);
    json_decref(tdoc);
}

typedef struct tt_import_args {
    const char *format, *tmpl, *target, *file;
    const json_t *problem;
} tt_import_args;
#define TT_IA(f) offsetof(tt_import_args, f)
static const tt__member tt_import_members[] = {
    {"format", TT__P_STRING, 0, 0, 0, TT_IA(format), NULL},
    {"template", TT__P_STRING, 0, 0, 0, TT_IA(tmpl), NULL},
    {"target", TT__P_STRING, 0, 0, 0, TT_IA(target), NULL},
    {"problem", TT__P_ANY, 0, 0, 0, TT_IA(problem), NULL},
    {"file", TT__P_STRING, 0, 0, 0, TT_IA(file), NULL},
};

/* What a data import goes into: template, target, problem, measurement key. */
typedef struct tt_import_ctx {
    const tt_template *t;
    char target[64], pkey[1024], fp[80], owner[96];
    int dsmap[TT_MAX_SLOTS];          /* template param i -> dataset param */
    int64_t slots[TT_MAX_SLOTS];
    size_t added, skipped, rejected;
    size_t linked;                    /* the job's trials: added, and any found under it */
    tt_job job;                       /* created at the first new record (id 0 before) */
    tt_store *st;                     /* the import's connection, inside its batch */
} tt_import_ctx;

/* The target: the query's (a catalog name, or any safe name), else the file's device (its
 * catalog name when the catalog knows it, so that best, export and check find the rows;
 * lower-cased otherwise). */
static tt_rc tt_import_target(tt_server *srv, const char *tgq, const tt_dataset *ds,
                              char *target, size_t cap, tt_errinfo *err)
{
    if (tgq) {
        const tt_target *tg = tt_catalog_target(srv->catalog, tgq);
        if (!tg && !tt_target_name_ok(tgq))
            return tt_errf(err, TT_ETARGET, "target", "target names are 1..63 of [A-Za-z0-9._-]");
        snprintf(target, cap, "%s", tg ? tg->name : tgq);
        return TT_OK;
    }
    if (!ds->device || !*ds->device)
        return tt_errf(err, TT_ETARGET, "target", "the file names no device: add target=NAME");
    const tt_target *known = tt_catalog_target(srv->catalog, ds->device);
    if (known) {
        snprintf(target, cap, "%s", known->name);
        return TT_OK;
    }
    size_t k = 0;
    for (const char *p = ds->device; *p && k + 1 < cap; p++)
        target[k++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '-';
    target[k] = '\0';
    return TT_OK;
}

/* Template, target, problem and the param mapping of a data import; TT_OK or err filled. */
static tt_rc tt_import_resolve(tt_server *srv, const tt_req *req, const tt_import_args *a,
                               const tt_dataset *ds, tt_import_ctx *c, tt_errinfo *err)
{
    const char *dsfmt = ds->format == TT_DS_FORMAT_T4 ? "t4" : "kt-cache";
    if (a->format && strcmp(a->format, dsfmt))
        return tt_errf(err, TT_EUNSUPPORTED, "format", "the file is %s, not %s", dsfmt,
                       a->format);
    if (!a->tmpl)
        return tt_errf(err, TT_EINVAL, "template", "importing data needs template=NAME "
                       "(import the T1 search space first for kernels without one)");
    tt_rc rc = tt__req_template_name(srv, a->tmpl, &c->t, err);
    if (!rc) rc = tt_import_target(srv, a->target, ds, c->target, sizeof c->target, err);
    if (rc) return rc;
    const tt_template *t = c->t;
    if (a->problem ? tt__req_problem(t, a->problem, c->slots, err)
                   : (t->ninputs && tt_tmpl_problem_parse(t, "", c->slots, err)))
        return a->problem ? err->rc : tt_errf(err, TT_EPROBLEM, "problem", "template %s has "
                                              "inputs: add problem=M=..,N=..", t->name);
    /* params: the file's and the template's must be the same set */
    for (size_t i = 0; i < t->nparams; i++) {
        c->dsmap[i] = tt_dataset_param(ds, t->params[i].name);
        if (c->dsmap[i] < 0)
            return tt_errf(err, TT_EUNSUPPORTED, "template", "the file has no param \"%s\" of "
                           "template %s", t->params[i].name, t->name);
    }
    if (ds->nparams != t->nparams)
        return tt_errf(err, TT_EUNSUPPORTED, "template", "the file has %zu params, template %s "
                       "has %zu", ds->nparams, t->name, t->nparams);
    tt_tmpl_problem_key(t, c->slots, c->pkey, sizeof c->pkey);
    snprintf(c->fp, sizeof c->fp, "import:%s", ds->hash);
    snprintf(c->owner, sizeof c->owner, "import:%s", req->token_name ? req->token_name : "");
    return TT_OK;
}

/* The import job, inserted already running and leased to this request. */
static tt_rc tt_import_job(tt_server *srv, const tt_req *req, const tt_import_args *a,
                           const tt_dataset *ds, tt_import_ctx *c, tt_errinfo *err)
{
    const tt_template *t = c->t;
    tt_job *j = &c->job;
    const char *dsfmt = ds->format == TT_DS_FORMAT_T4 ? "t4" : "kt-cache";
    snprintf(j->template_name, sizeof j->template_name, "%s", t->name);
    snprintf(j->template_hash, sizeof j->template_hash, "%s", t->hash);
    snprintf(j->target, sizeof j->target, "%s", c->target);
    snprintf(j->backend, sizeof j->backend, "%s", c->fp);
    snprintf(j->backend_fp, sizeof j->backend_fp, "%s", c->fp);
    snprintf(j->strategy, sizeof j->strategy, "import");
    snprintf(j->owner, sizeof j->owner, "%s", req->token_name ? req->token_name : "");
    j->problem_key = strdup(c->pkey);
    json_t *pj = tt_tmpl_problem_json(t, c->slots);
    j->problem_json = pj ? tt_json_dumps(pj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(pj);
    json_t *oj = json_pack("{s:s, s:s, s:s?, s:s?}", "format", dsfmt, "hash", ds->hash, "file",
                           a->file, "device", ds->device);
    j->options_json = oj ? tt_json_dumps(oj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(oj);
    j->budget_trials = (int64_t)ds->nrecords;
    if (!j->problem_key || !j->problem_json || !j->options_json)
        return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    (void)srv;
    tt_rc rc = tt_store_job_create_running(c->st, j, c->owner, TT_IMPORT_LEASE_S);
    if (rc) return tt_errf(err, rc, NULL, "cannot create the import job: %s",
                           tt_store_errmsg(c->st));
    return TT_OK;
}

/* Store the records (those already stored skipped, off-domain ones rejected). */
static tt_rc tt_import_records(tt_server *srv, const tt_req *req, const tt_import_args *a,
                               const tt_dataset *ds, tt_import_ctx *c, tt_errinfo *err)
{
    const tt_template *t = c->t;
    tt_trial_key key = {t->hash, c->pkey, c->target, c->fp};
    for (size_t r = 0; r < ds->nrecords; r++) {
        const tt_ds_record *rec = &ds->records[r];
        const int64_t *v = tt_ds_values(ds, rec);
        int ok = 1;
        for (size_t i = 0; i < t->nparams && ok; i++) {
            int64_t x = v[c->dsmap[i]];
            ok = 0;
            for (size_t k = 0; k < t->params[i].nvalues; k++)
                if (t->params[i].values[k] == x) { ok = 1; break; }
            c->slots[tt_tmpl_param_slot(t, i)] = x;
        }
        if (!ok) { c->rejected++; continue; }
        tt_trial tr;
        tt_rc rc = tt_store_trial_lookup(c->st, &key, tt_tmpl_config_hash(t, c->slots), &tr);
        if (rc == TT_OK) { tt_trial_clear(&tr); c->skipped++; continue; }
        if (rc != TT_ENOTFOUND)
            return tt_errf(err, rc, NULL, "store: %s", tt_store_errmsg(c->st));
        if (!c->job.id && (rc = tt_import_job(srv, req, a, ds, c, err))) return rc;
        if ((rc = tt_import_trial(t, ds, rec, c->slots, &tr)) ||
            (rc = tt_store_trial_record(c->st, &key, t->name, c->job.id,
                                        (int64_t)c->linked + 1, &tr))) {
            tt_trial_clear(&tr);   /* the caller rolls the whole import back */
            return tt_errf(err, rc, NULL, "cannot store record %zu: %s", r,
                           tt_store_errmsg(c->st));
        }
        /* reused: a concurrent import of the same record committed it after the look-up
         * above (PostgreSQL; SQLite's one writer serialises imports) */
        if (tr.reused) c->skipped++;
        else c->added++;
        c->linked++;
        tt_trial_clear(&tr);
    }
    if (!c->job.id) return TT_OK;
    tt_rc rc = tt_store_job_progress(c->st, c->job.id, (int64_t)c->linked, (int64_t)c->linked);
    if (!rc) rc = tt_store_job_finish(c->st, c->job.id, c->owner, TT_JOB_DONE, NULL);
    if (rc) return tt_errf(err, rc, NULL, "cannot finish the import job: %s",
                           tt_store_errmsg(c->st));
    return TT_OK;
}

/* Run the records in ONE transaction (a batch) on a connection of its own (the shared one
 * when the database URL is unknown): all of them are stored, or none. */
static tt_rc tt_import_atomic(tt_server *srv, const tt_req *req, const tt_import_args *a,
                              const tt_dataset *ds, tt_import_ctx *c, tt_errinfo *err)
{
    tt_store *own = NULL;
    if (srv->runner_cfg.db_url) {
        tt_errinfo oe;
        tt_errinfo_clear(&oe);
        if (tt_store_open(srv->runner_cfg.db_url, &own, &oe) != TT_OK)
            return tt_errf(err, oe.rc ? oe.rc : TT_EDB, NULL, "cannot open the database: %s",
                           oe.msg);
    }
    c->st = own ? own : srv->store;
    tt_rc rc = tt_store_batch_begin(c->st);
    if (rc) tt_errf(err, rc, NULL, "cannot start the import: %s", tt_store_errmsg(c->st));
    if (!rc && !(rc = tt_import_records(srv, req, a, ds, c, err)) &&
        (rc = tt_store_batch_commit(c->st)))
        tt_errf(err, rc, NULL, "cannot commit the import: %s", tt_store_errmsg(c->st));
    tt_store_batch_rollback(c->st);   /* after an error; a no-op after the commit */
    tt_store_close(own);
    c->st = NULL;
    return rc;
}

/* The most bytes a body of this request may inflate to (max_import_bytes[_admin]). */
static size_t tt_import_max(const tt_server *srv, const tt_req *req)
{
    return (req->scopes & TT_SCOPE_ADMIN) ? srv->max_import_bytes_admin : srv->max_import_bytes;
}

/* err after a TT_ETOOBIG: the message names the key that sets the limit. */
static void tt_import_limit_note(const tt_req *req, tt_errinfo *err)
{
    if (err->rc != TT_ETOOBIG) return;
    snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg), " (%s)",
             (req->scopes & TT_SCOPE_ADMIN) ? "max_import_bytes_admin"
                                            : "max_import_bytes; admin tokens may import more");
}

/* A gzip body inflated into *plain of *len bytes (caller frees); a plain body leaves *plain
 * NULL and *len its length.  TT_OK, or err filled (bad_encoding, too_large). */
static tt_rc tt_import_inflate(const tt_server *srv, const tt_req *req, char **plain,
                               size_t *len, tt_errinfo *err)
{
    const unsigned char *b = (const unsigned char *)req->raw_body;
    *plain = NULL;
    *len = req->raw_len;
    if (req->raw_len < 2 || b[0] != 0x1f || b[1] != 0x8b) return TT_OK;
    tt_rc rc = tt_dataset_gunzip(b, req->raw_len, tt_import_max(srv, req), plain, len, err);
    tt_import_limit_note(req, err);
    return rc;
}

/* A T4 / Kernel Tuner cache body (plain bytes): records become trials of a done import job. */
static void tt_import_data(tt_server *srv, const tt_req *req, const tt_import_args *a,
                           const char *body, size_t len, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_dataset *ds = NULL;
    if (tt_dataset_load_buffer_max(body, len, tt_import_max(srv, req), &ds, &err)) {
        tt_import_limit_note(req, &err);
        tt_resp_errinfo(resp, &err);
        return;
    }
    tt_import_ctx *c = calloc(1, sizeof *c);
    if (!c) tt_errf(&err, TT_ENOMEM, NULL, "out of memory");
    if (!c || tt_import_resolve(srv, req, a, ds, c, &err) ||
        tt_import_atomic(srv, req, a, ds, c, &err)) {
        tt_resp_errinfo(resp, &err);
    } else {
        tt_resp_json(resp, c->added ? 201 : 200,
                     json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I}",
                               "kind", "data", "format",
                               ds->format == TT_DS_FORMAT_T4 ? "t4" : "kt-cache", "template",
                               c->t->name, "target", c->target, "problem_key", c->pkey,
                               "measured_by", c->fp, "job",
                               c->job.id ? json_integer((json_int_t)c->job.id) : json_null(),
                               "records", (json_int_t)ds->nrecords, "added",
                               (json_int_t)c->added, "skipped", (json_int_t)c->skipped,
                               "rejected", (json_int_t)c->rejected, "duplicates",
                               (json_int_t)ds->nduplicates));
    }
    if (c) tt_job_clear(&c->job);
    free(c);
    tt_dataset_free(ds);
}

/* A T1 body (format=t1, or a JSON object with a ConfigurationSpace) imported as a template:
 * returns 1 with the answer set; 0 for data (nothing answered). */
static int tt_import_try_t1(tt_server *srv, const tt_req *req, const tt_import_args *a,
                            const char *body, size_t len, tt_resp *resp)
{
    if (a->format && strcmp(a->format, "t1")) return 0;
    json_error_t je;
    json_t *doc = tt_json_loadb(body, len, 0, &je);
    int t1 = a->format || json_object_get(doc, "ConfigurationSpace");
    if (t1 && !doc)
        tt_resp_error(resp, TT_EJSON, NULL, "T1 file: line %d column %d: %s", je.line, je.column,
                      je.text);
    else if (t1)
        tt_import_t1(srv, req, a->tmpl, doc, resp);
    json_decref(doc);
    return t1;
}

void tt_api_import(tt_server *srv, const tt_req *req, tt_resp *resp)
{
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_import_args a = {0};
    if (TT__PARSE(req->query, tt_import_members, TT__PARSE_QUERY, NULL, &a, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    const char *fmt = a.format;
    if (fmt && strcmp(fmt, "t4") && strcmp(fmt, "kt-cache") && strcmp(fmt, "t1")) {
        tt_resp_error(resp, TT_EINVAL, "format", "unknown format \"%s\" (t4, kt-cache, t1)",
                      fmt);
        return;
    }
    if (!req->raw_body || !req->raw_len) {
        tt_resp_error(resp, TT_EINVAL, NULL, "the body must be a T4, Kernel Tuner cache or T1 "
                      "file (gzip accepted)");
        return;
    }
    char *plain = NULL;
    size_t len = 0;
    if (tt_import_inflate(srv, req, &plain, &len, &err)) {
        tt_resp_errinfo(resp, &err);
        return;
    }
    const char *body = plain ? plain : req->raw_body;
    if (!tt_import_try_t1(srv, req, &a, body, len, resp))
        tt_import_data(srv, req, &a, body, len, resp);
    free(plain);
}

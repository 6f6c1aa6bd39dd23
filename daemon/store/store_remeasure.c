/* SPDX-License-Identifier: MIT
 * store_remeasure.c - re-measurement appends of tt_store (store.h): the samples of a trial
 * measured again are merged into it, the job notes it in its options (so a crash between the
 * two is not applied twice), and the key's best and the job's best are recomputed from the
 * stored trials.  Trial rows and helpers: store_trials.c, store_trials_int.h.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "store_q.h"
#include "store_trials_int.h"

enum {
    Q_JOB_OPTIONS, Q_TRIAL_BY_ID, Q_TRIAL_SAMPLES, Q_JOB_OPTIONS_SET, Q_KEY_FASTEST,
    Q_BEST_SET, Q_JOB_FASTEST, Q_JOB_BEST_SET,
    Q__COUNT
};
_Static_assert(TT__Q_STORE_REMEASURE + Q__COUNT <= TT__Q_STORE_BEST,
               "store_best.c query ids start there");

static const tt__qdef tt_q[Q__COUNT] = {
    [Q_JOB_OPTIONS] = {"SELECT options_json, problem_json FROM jobs WHERE id = $1",
                       "SELECT options_json, problem_json FROM jobs WHERE id = $1 FOR UPDATE"},
    [Q_TRIAL_BY_ID] = {"SELECT " TRIAL_COLS " FROM trials t JOIN trial_keys k ON k.id = "
                       "t.key_id WHERE t.id = $1 AND k.template_hash = $2 AND k.problem_key "
                       "= $3 AND k.target = $4 AND k.backend_fp = $5", NULL},
    [Q_TRIAL_SAMPLES] = {"UPDATE trials SET samples_json = $2, samples_z = NULL, median_us = "
                         "$3, spread_us = $4, min_us = $5 WHERE id = $1", NULL},
    [Q_JOB_OPTIONS_SET] = {"UPDATE jobs SET options_json = $2 WHERE id = $1", NULL},
    [Q_KEY_FASTEST] = {"SELECT t.id, t.job_id, t.config_json, t.median_us, t.spread_us, "
                       "t.predicted_us FROM trial_keys k JOIN trials t ON t.key_id = k.id "
                       "WHERE k.template_hash = $1 AND k.problem_key = $2 AND k.target = $3 "
                       "AND k.backend_fp = $4 AND t.status = $5 AND t.median_us > 0 ORDER BY "
                       "t.median_us, t.id LIMIT 1", NULL},
    [Q_BEST_SET] = {BEST_PUT, NULL},
    [Q_JOB_FASTEST] = {"SELECT t.id, t.median_us, t.predicted_us, t.config_json FROM "
                       "job_trials jt JOIN trials t ON t.id = jt.trial_id WHERE "
                       "jt.job_id = $1 AND t.status = $2 AND t.median_us > 0 ORDER BY "
                       "t.median_us, jt.seq LIMIT 1", NULL},
    [Q_JOB_BEST_SET] = {"UPDATE jobs SET best_trial = $2, best_us = $3, best_pred_us = $4, "
                        "best_config_json = $5 WHERE id = $1", NULL},
};

#define TT__Q_BASE TT__Q_STORE_REMEASURE   /* this file's first query id (store_q.h) */

static int tt_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics of sorted v[0..n): the rule of
 * tt_measurement_summarise (daemon/backends/backend.c), so a merged trial reads like a measured one. */
static double tt_quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1) return v[n - 1];
    return v[lo] + (v[lo + 1] - v[lo]) * (pos - (double)lo);
}

/* 1 when ids (a JSON array) holds id. */
static int tt_ids_has(const json_t *ids, int64_t id)
{
    size_t i;
    const json_t *v;
    json_array_foreach(ids, i, v)
        if (json_is_integer(v) && json_integer_value(v) == id) return 1;
    return 0;
}

tt_rc tt_store_job_remeasured(tt_store *s, int64_t job_id, int64_t **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    char *opts = NULL;
    tt__param p[] = {PI(job_id)};
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = q_first(s, Q_JOB_OPTIONS, p, NP(p), &r);
    if (rc == TT_ENOTFOUND)
        rc = tt__store_fail(s, TT_ENOTFOUND, "job %lld not found", (long long)job_id);
    if (rc) return tt__store_unlock(s, rc);
    int oom = 0;
    opts = tt__dup(C_T(&r, 0), &oom);
    rc = tt__q_end(&r);
    tt__store_unlock(s, rc);
    if (!rc && oom) rc = TT_ENOMEM;
    json_t *o = !rc && opts ? json_loads(opts, 0, NULL) : NULL;
    free(opts);
    const json_t *a = json_object_get(o, "remeasured");
    size_t na = json_is_array(a) ? json_array_size(a) : 0;
    if (!rc && na) {
        *ids = calloc(na, sizeof **ids);
        if (!*ids) rc = TT_ENOMEM;
        for (size_t i = 0; !rc && i < na; i++) {
            const json_t *v = json_array_get(a, i);
            if (json_is_integer(v)) (*ids)[(*n)++] = json_integer_value(v);
        }
    }
    json_decref(o);
    return rc;
}

/* Recompute `best` for (template_name, k) and job_id's best-so-far from the stored trials
 * (inside the caller's transaction). */
static tt_rc tt_best_recompute(tt_store *s, const tt_trial_key *k, const char *template_name,
                               const char *problem_json, int64_t job_id)
{
    const char *okc = tt_rc_code(TT_OK);
    tt__param pk[] = {PT(k->template_hash), PT(k->problem_key), PT(k->target),
                      PT(k->backend_fp), PT(okc)};
    tt__res r;
    tt_rc rc = q_first(s, Q_KEY_FASTEST, pk, NP(pk), &r);
    if (rc == TT_OK) {
        tt__param b[] = {PT(template_name), PT(k->template_hash), PT(k->problem_key),
                         PT(problem_json), PT(k->target), PT(k->backend_fp), PI(C_I(&r, 0)),
                         PI(C_I(&r, 1)), PT(C_T(&r, 2)), PF(C_F(&r, 3)), PF(C_F(&r, 4)),
                         PF(C_F(&r, 5))};
        rc = q_exec(s, Q_BEST_SET, b, NP(b), NULL);
        tt_rc rc2 = tt__q_end(&r);
        if (!rc) rc = rc2;
    } else if (rc == TT_ENOTFOUND) {
        rc = TT_OK;
    }
    if (rc || job_id <= 0) return rc;
    tt__param pj[] = {PI(job_id), PT(okc)};
    rc = q_first(s, Q_JOB_FASTEST, pj, NP(pj), &r);
    if (rc == TT_ENOTFOUND) return TT_OK;
    if (rc) return rc;
    tt__param jb[] = {PI(job_id), PI(C_I(&r, 0)), PF(C_F(&r, 1)), PF(C_F(&r, 2)),
                      PT(C_T(&r, 3))};
    rc = q_exec(s, Q_JOB_BEST_SET, jb, NP(jb), NULL);
    tt_rc rc2 = tt__q_end(&r);
    return rc ? rc : rc2;
}

/* The trial's samples (or its median when none were kept) and the new ones: *merged is the
 * JSON array text (malloc'd) and t's min, median and spread are recomputed.  TT_ENOMEM. */
static tt_rc tt_samples_merge(tt_trial *t, const double *samples, size_t nsamples,
                              char **merged)
{
    json_t *arr = t->samples_json ? json_loads(t->samples_json, 0, NULL) : json_array();
    if (!json_is_array(arr)) {
        json_decref(arr);
        arr = json_array();
    }
    if (!arr) return TT_ENOMEM;
    tt_rc rc = TT_OK;
    if (json_array_size(arr) == 0 && t->median_us > 0)   /* no samples kept: the median */
        json_array_append_new(arr, json_real(t->median_us));
    for (size_t i = 0; i < nsamples; i++)
        if (json_array_append_new(arr, json_real(samples[i]))) rc = TT_ENOMEM;
    size_t n = json_array_size(arr), m = 0;
    double *v = rc ? NULL : malloc(n * sizeof *v);
    if (!rc && !v) rc = TT_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        const json_t *x = json_array_get(arr, i);
        if (json_is_number(x) && json_number_value(x) > 0) v[m++] = json_number_value(x);
    }
    if (!rc) {
        qsort(v, m, sizeof *v, tt_cmp_double);
        t->min_us = v[0];
        t->median_us = tt_quantile(v, m, 0.5);
        t->spread_us = tt_quantile(v, m, 0.75) - tt_quantile(v, m, 0.25);
        *merged = tt_json_dumps(arr, JSON_COMPACT);
    }
    free(v);
    json_decref(arr);
    return rc;
}


tt_rc tt_store_trial_append(tt_store *s, const tt_trial_key *k, const char *template_name,
                            int64_t job_id, int64_t trial_id, const double *samples,
                            size_t nsamples, tt_trial *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!tt__key_ok(k) || !template_name || job_id <= 0 || trial_id <= 0 || !samples ||
        nsamples == 0)
        return TT_EINVAL;
    for (size_t i = 0; i < nsamples; i++)
        if (!(samples[i] > 0) || !isfinite(samples[i])) return TT_EINVAL;
    tt_trial t = {0};
    char *opts = NULL, *problem_json = NULL, *merged = NULL, *newopts = NULL;
    json_t *oj = NULL;
    tt_rc rc = tt__store_tx_begin(s);
    if (rc) return rc;
    tt__param pj[] = {PI(job_id)};
    tt__res r;
    rc = q_first(s, Q_JOB_OPTIONS, pj, NP(pj), &r);
    if (rc == TT_ENOTFOUND)
        rc = tt__store_fail(s, TT_ENOTFOUND, "job %lld not found", (long long)job_id);
    if (rc) return tt__store_tx_end(s, rc);
    int oom = 0;
    opts = tt__dup(C_T(&r, 0), &oom);
    problem_json = tt__dup(C_T(&r, 1), &oom);
    rc = tt__q_end(&r);
    if (!rc && oom) rc = TT_ENOMEM;
    if (rc) goto out;
    oj = opts && *opts ? json_loads(opts, 0, NULL) : json_object();
    if (!json_is_object(oj)) {
        json_decref(oj);
        oj = json_object();   /* malformed options: the runner fails such jobs anyway */
    }
    if (!oj) {
        rc = TT_ENOMEM;
        goto out;
    }
    json_t *done = json_object_get(oj, "remeasured");
    if (done && !json_is_array(done)) {
        rc = tt__store_fail(s, TT_EINVAL, "job %lld: option 'remeasured' is not an array",
                            (long long)job_id);
        goto out;
    }
    if (done && tt_ids_has(done, trial_id)) {   /* appended before a crash: nothing to do */
        rc = TT_EEXISTS;
        goto out;
    }
    tt__param pt[] = {PI(trial_id), PT(k->template_hash), PT(k->problem_key), PT(k->target),
                      PT(k->backend_fp)};
    rc = q_first(s, Q_TRIAL_BY_ID, pt, NP(pt), &r);
    if (rc == TT_ENOTFOUND)
        rc = tt__store_fail(s, TT_ENOTFOUND, "trial %lld not found under the key",
                            (long long)trial_id);
    if (rc) goto out;
    rc = tt__trial_from_row(&r, &t);
    tt_rc rc2 = tt__q_end(&r);
    if (!rc) rc = rc2;
    if (rc) goto out;
    if (t.status != TT_OK) {
        rc = tt__store_fail(s, TT_EINVAL, "trial %lld did not succeed: nothing to re-measure",
                            (long long)trial_id);
        goto out;
    }
    if ((rc = tt_samples_merge(&t, samples, nsamples, &merged))) goto out;
    if (!done) {
        done = json_array();
        if (!done || json_object_set_new(oj, "remeasured", done)) rc = TT_ENOMEM;
    }
    if (!rc && json_array_append_new(done, json_integer(trial_id))) rc = TT_ENOMEM;
    newopts = rc ? NULL : tt_json_dumps(oj, JSON_COMPACT);
    if (!rc && (!merged || !newopts)) rc = TT_ENOMEM;
    if (rc) goto out;
    free(t.samples_json);
    t.samples_json = merged;
    merged = NULL;
    tt__param us[] = {PI(trial_id), PT(t.samples_json), PF(t.median_us), PF(t.spread_us),
                      PF(t.min_us)};
    tt__param uo[] = {PI(job_id), PT(newopts)};
    if ((rc = q_exec(s, Q_TRIAL_SAMPLES, us, NP(us), NULL)) ||
        (rc = q_exec(s, Q_JOB_OPTIONS_SET, uo, NP(uo), NULL)))
        goto out;
    rc = tt_best_recompute(s, k, template_name, problem_json, job_id);
out:
    json_decref(oj);
    free(opts);
    free(problem_json);
    free(merged);
    free(newopts);
    rc = tt__store_tx_end(s, rc);
    if (rc == TT_OK && out) {
        *out = t;
        memset(&t, 0, sizeof t);
    }
    tt_trial_clear(&t);
    tt__store_best_touch();
    return rc;
}

/* SPDX-License-Identifier: MIT
 * backend_replay.c - the replay:<dataset> backend: answers from a recorded full measurement.
 *
 * The dataset is found as <datasets_dir>/<name>.t4.json[.gz], <name>.kt-cache.json[.gz] or
 * <name>.json[.gz] (first match), parsed once per process (tt_dataset_cache_get) and shared
 * read-only by every job; each open backend holds one reference, given back at close.  The template's params must be exactly the dataset's params (by
 * name; order may differ).  A replayed trial reports the recorded runtimes as its samples;
 * recorded failures and configs absent from the recording come back as failed trials.
 * The problem is not checked: a recording is one problem (docs/datasets.md).
 * tt_backend_replay_fps lists the fingerprints of every dataset a directory holds (a team
 * worker claims a replay: job only when it has the job's).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "backend.h"
#include "dataset.h"

typedef struct tt_replay {
    const tt_dataset *ds;                 /* borrowed from the process-wide cache */
    size_t tparam[TT_DATASET_MAX_PARAMS]; /* dataset param p is template param tparam[p] */
} tt_replay;

int tt_dataset_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || strstr(s, "..") || s[0] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

/* Append ", name" (or "name") to buf. */
static void tt_list_add(char *buf, size_t cap, const char *name)
{
    size_t n = strlen(buf);
    if (n + 1 < cap) snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", name);
}

/* "replay:<name>@<first 8 hex digits of the content hash>": the fingerprint of a dataset. */
static void tt_replay_fp(const char *name, const char *hash, char *out, size_t cap)
{
    snprintf(out, cap, "replay:%s@%.8s", name, hash);
}

/* Append the fingerprint of dataset `name` when the file it opens in dir is dir/<file>
 * (so a file reached by two names, x.t4.json as "x" and as "x.t4", is listed under each
 * name that opens it, and a name is listed once, by the file it opens). */
static tt_rc tt_replay_fp_add(const char *dir, const char *file, const char *name, char **out,
                              size_t *len, size_t *cap)
{
    char path[4096], hash[17];
    if (!tt_dataset_name_ok(name) || !tt_dataset_path(dir, name, path, sizeof path)) return TT_OK;
    const char *base = strrchr(path, '/');
    if (strcmp(base ? base + 1 : path, file) != 0) return TT_OK;
    tt_rc rc = tt_dataset_file_hash(path, hash);
    if (rc == TT_ENOMEM) return rc;
    if (rc != TT_OK) return TT_OK;   /* unreadable: no job of it can run here */
    char fp[96];
    tt_replay_fp(name, hash, fp, sizeof fp);
    size_t need = *len + strlen(fp) + 2;
    if (need > *cap) {
        size_t nc = need * 2;
        char *nb = realloc(*out, nc);
        if (!nb) return TT_ENOMEM;
        *out = nb;
        *cap = nc;
    }
    *len += (size_t)snprintf(*out + *len, *cap - *len, "%s,", fp);
    return TT_OK;
}

tt_rc tt_backend_replay_fps(const char *dir, char **out)
{
    size_t len = 1, cap = 256;
    *out = malloc(cap);
    if (!*out) return TT_ENOMEM;
    strcpy(*out, ",");
    DIR *d = dir && *dir ? opendir(dir) : NULL;
    struct dirent *de;
    tt_rc rc = TT_OK;
    while (d && rc == TT_OK && (de = readdir(d))) {
        size_t fl = strlen(de->d_name);
        for (size_t i = 0; rc == TT_OK && tt_dataset_suffix(i); i++) {
            const char *sfx = tt_dataset_suffix(i);
            size_t sl = strlen(sfx);
            if (fl <= sl || fl - sl > 63 || strcmp(de->d_name + fl - sl, sfx) != 0) continue;
            char name[64];
            memcpy(name, de->d_name, fl - sl);
            name[fl - sl] = '\0';
            rc = tt_replay_fp_add(dir, de->d_name, name, out, &len, &cap);
        }
    }
    if (d) closedir(d);
    if (rc != TT_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* The samples of a successful record as a replayed trial reports them, into out->samples_us,
 * nsamples and measure_s.  More samples than a measurement holds: keep evenly spaced order
 * statistics, which keeps the median (exactly for odd counts of kept samples, closely
 * otherwise). */
static tt_rc replay_samples(const tt_dataset *ds, const tt_ds_record *rec, tt_measurement *out)
{
    const double *s = tt_ds_samples(ds, rec);
    size_t n = rec->nsamples;
    double total = 0;
    for (size_t i = 0; i < n; i++) total += s[i];
    if (n <= TT_MAX_SAMPLES) {
        memcpy(out->samples_us, s, n * sizeof *s);
        out->nsamples = (int)n;
    } else {
        double *sorted = malloc(n * sizeof *sorted);
        if (!sorted) return TT_ENOMEM;
        memcpy(sorted, s, n * sizeof *s);
        for (size_t i = 1; i < n; i++) {   /* insertion sort: rare path, small n */
            double x = sorted[i];
            size_t j = i;
            while (j > 0 && sorted[j - 1] > x) {
                sorted[j] = sorted[j - 1];
                j--;
            }
            sorted[j] = x;
        }
        int k = TT_MAX_SAMPLES - 1;   /* odd: the middle one is the median order statistic */
        for (int i = 0; i < k; i++)
            out->samples_us[i] = sorted[(size_t)((double)i * (double)(n - 1) / (k - 1) + 0.5)];
        out->nsamples = k;
        free(sorted);
    }
    out->measure_s = total * 1e-6;
    return TT_OK;
}

/* Summarise every successful record's runtimes once per process -- median, spread, min and
 * mean of every recorded runtime, also where replay_samples keeps fewer (the runner stores
 * them with each trial and ranks by them) -- at the dataset's first replay_open.  Out of
 * memory: none (then each trial is summarised from its kept samples as it comes). */
#define TT_REPLAY_NSUM 4
static pthread_mutex_t tt_replay_sum_mu = PTHREAD_MUTEX_INITIALIZER;
static void replay_summaries_once(const tt_dataset *cds)
{
    tt_dataset *ds = (tt_dataset *)cds;   /* replay_sum is this file's, written once here */
    pthread_mutex_lock(&tt_replay_sum_mu);
    if (!ds->replay_sum && ds->nrecords) {
        double *sum = malloc(TT_REPLAY_NSUM * ds->nrecords * sizeof *sum);
        for (size_t i = 0; sum && i < ds->nrecords; i++) {
            const tt_ds_record *rec = &ds->records[i];
            double *o = sum + TT_REPLAY_NSUM * i;
            o[0] = NAN;
            if (rec->status != TT_DS_OK ||
                tt_samples_stats(tt_ds_samples(ds, rec), rec->nsamples, &o[0], &o[1], &o[2],
                                 &o[3]) != TT_OK)
                o[0] = NAN;
        }
        ds->replay_sum_n = sum ? ds->nrecords : 0;
        ds->replay_sum = sum;
    }
    pthread_mutex_unlock(&tt_replay_sum_mu);
}

static tt_rc replay_open(tt_backend *b, const char *arg, tt_errinfo *err)
{
    if (!tt_dataset_name_ok(arg))
        return tt_errf(err, TT_EINVAL, "backend",
                       "bad dataset name '%.64s' (letters, digits, '_', '-', '.'; no '/' or '..')",
                       arg);
    const char *dir = b->env ? b->env->datasets_dir : NULL;
    if (!dir || !*dir)
        return tt_errf(err, TT_ENOTFOUND, "backend", "no datasets directory is configured");
    char path[4096];
    int found = tt_dataset_path(dir, arg, path, sizeof path);
    if (!found)
        return tt_errf(err, TT_ENOTFOUND, "backend",
                       "dataset '%s' not found (no %s.{t4,kt-cache}.json[.gz] or %s.json[.gz] in "
                       "the datasets directory)", arg, arg, arg);
    const tt_dataset *ds = NULL;
    tt_rc rc = tt_dataset_cache_get(path, &ds, err);
    if (rc != TT_OK) return rc;

    /* the param sets must be equal */
    const tt_template *t = b->t;
    char lacks_t[160] = "", lacks_d[160] = "";
    size_t tparam[TT_DATASET_MAX_PARAMS];
    for (size_t p = 0; p < ds->nparams; p++) {
        size_t i = 0;
        while (i < t->nparams && strcmp(t->params[i].name, ds->params[p]) != 0) i++;
        if (i == t->nparams) tt_list_add(lacks_t, sizeof lacks_t, ds->params[p]);
        tparam[p] = i;
    }
    for (size_t i = 0; i < t->nparams; i++)
        if (tt_dataset_param(ds, t->params[i].name) < 0)
            tt_list_add(lacks_d, sizeof lacks_d, t->params[i].name);
    if (lacks_t[0] || lacks_d[0]) {
        tt_dataset_cache_release(ds);
        return tt_errf(err, TT_EUNSUPPORTED, "backend",
                       "dataset '%s' and template '%s' have different params (template lacks: "
                       "%s; dataset lacks: %s)", arg, t->name ? t->name : "?",
                       lacks_t[0] ? lacks_t : "none", lacks_d[0] ? lacks_d : "none");
    }
    tt_replay *r = calloc(1, sizeof *r);
    if (!r) {
        tt_dataset_cache_release(ds);
        return tt_errf(err, TT_ENOMEM, "backend", "out of memory");
    }
    replay_summaries_once(ds);
    r->ds = ds;
    memcpy(r->tparam, tparam, ds->nparams * sizeof tparam[0]);
    b->impl = r;
    tt_replay_fp(arg, ds->hash, b->fingerprint, sizeof b->fingerprint);
    return TT_OK;
}

static tt_rc replay_measure(tt_backend *b, int64_t *slots, tt_measurement *out)
{
    const tt_replay *r = b->impl;
    const tt_dataset *ds = r->ds;
    int64_t v[TT_DATASET_MAX_PARAMS];
    for (size_t p = 0; p < ds->nparams; p++) v[p] = slots[tt_tmpl_param_slot(b->t, r->tparam[p])];
    const tt_ds_record *rec = tt_dataset_find(ds, v);
    if (!rec) {
        out->status = TT_EINFEASIBLE;
        snprintf(out->error, sizeof out->error, "not in dataset");
        return TT_OK;
    }
    out->compile_s = isnan(rec->compile_s) ? 0 : rec->compile_s;
    switch (rec->status) {
    case TT_DS_OK:
        break;
    case TT_DS_INVALID:
        out->status = TT_EINFEASIBLE;
        snprintf(out->error, sizeof out->error, "recorded as an invalid config");
        return TT_OK;
    case TT_DS_COMPILE_FAILED:
        out->status = TT_EBUILD;
        snprintf(out->error, sizeof out->error, "recorded compile failure");
        return TT_OK;
    default:
        out->status = TT_ERUN;
        snprintf(out->error, sizeof out->error, "recorded runtime failure");
        return TT_OK;
    }
    if (replay_samples(ds, rec, out) != TT_OK) return TT_ENOMEM;
    const double *sum =
        rec->index < ds->replay_sum_n ? ds->replay_sum + TT_REPLAY_NSUM * rec->index : NULL;
    if (sum && !isnan(sum[0])) {
        out->median_us = sum[0];
        out->spread_us = sum[1];
        out->min_us = sum[2];
        out->mean_us = sum[3];
        out->summarised = 1;
    }
    out->recorded_us = rec->value_us;   /* the dataset's own objective (NAN: not numeric) */
    out->status = TT_OK;
    return TT_OK;
}

static void replay_close(tt_backend *b)
{
    if (b->impl) tt_dataset_cache_release(((tt_replay *)b->impl)->ds);
    free(b->impl);
    b->impl = NULL;
}

const tt_backend_ops tt__backend_replay_ops = {
    .kind = "replay", .open = replay_open, .measure = replay_measure, .close = replay_close};

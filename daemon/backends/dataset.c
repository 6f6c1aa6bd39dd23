/* SPDX-License-Identifier: MIT
 * dataset.c - Kernel Tuner cache / T4 readers (gzip by magic), the builder and the config index.
 * The T4 writer is in dataset_write.c, the process-wide cache in dataset_cache.c, files on
 * disk (reading one, its hash, which file a name opens) in dataset_files.c.
 */
#include "dataset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Kernel Tuner before its typed errors (its issue #140, 2022) recorded a failed config as
 * "time": 1e20 (ms) instead of a failure string: such an entry is a failure (invalid), not a
 * measurement. */
#define TT_KT_FAILED_MS 1e20

#define TT_FNV_OFF 14695981039346656037ULL
#define TT_FNV_PRIME 1099511628211ULL

static const char *const tt_status_names[TT_DS__COUNT] = {"ok", "invalid", "compile_failed",
                                                          "runtime_failed"};

const char *tt_ds_status_name(tt_ds_status s)
{
    return (unsigned)s < TT_DS__COUNT ? tt_status_names[s] : "?";
}

static tt_rc tt_oom(tt_errinfo *err) { return tt_errf(err, TT_ENOMEM, "", "out of memory"); }

static uint64_t tt_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= TT_FNV_PRIME;
    }
    return h;
}

/* ---- building -------------------------------------------------------------------------- */

void tt_dataset_free(tt_dataset *ds)
{
    if (!ds) return;
    free(ds->device);
    free(ds->kernel);
    free(ds->problem);
    for (size_t i = 0; i < ds->nparams; i++) {
        free(ds->params[i]);
        if (ds->domains) free(ds->domains[i]);
    }
    free(ds->params);
    free(ds->domains);
    free(ds->ndomain);
    for (size_t i = 0; i < ds->nrecords; i++) free(ds->records[i].timestamp);
    free(ds->records);
    free(ds->values);
    free(ds->samples);
    free(ds->index);
    free(ds->replay_sum);
    free(ds);
}

tt_rc tt_dataset_new(const char *const *params, size_t nparams, tt_dataset **out,
                     tt_errinfo *err)
{
    *out = NULL;
    if (nparams == 0 || nparams > TT_DATASET_MAX_PARAMS)
        return tt_errf(err, TT_EINVAL, "params", "%zu params (1 to %d supported)", nparams,
                       TT_DATASET_MAX_PARAMS);
    tt_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return tt_oom(err);
    ds->format = TT_DS_FORMAT_BUILT;
    ds->params = calloc(nparams, sizeof *ds->params);
    ds->domains = calloc(nparams, sizeof *ds->domains);
    ds->ndomain = calloc(nparams, sizeof *ds->ndomain);
    if (!ds->params || !ds->domains || !ds->ndomain) {
        tt_dataset_free(ds);
        return tt_oom(err);
    }
    ds->nparams = nparams;
    for (size_t i = 0; i < nparams; i++) {
        for (size_t j = 0; j < i; j++)
            if (strcmp(params[i], params[j]) == 0) {
                tt_dataset_free(ds);
                return tt_errf(err, TT_EINVAL, "params", "repeated param \"%s\"", params[i]);
            }
        if (!(ds->params[i] = strdup(params[i]))) {
            tt_dataset_free(ds);
            return tt_oom(err);
        }
    }
    snprintf(ds->hash, sizeof ds->hash, "%016llx", 0ULL);
    *out = ds;
    return TT_OK;
}

/* Hash of a config's values for the in-memory index (never stored): a word at a time, then
 * the murmur3 finaliser, since replay looks one up per trial. */
static uint64_t tt_values_hash(const int64_t *v, size_t n)
{
    uint64_t h = TT_FNV_OFF;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint64_t)v[i]) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    return h;
}

/* Slot of values in the index: where it is, or the empty slot where it would go. */
static size_t tt_index_slot(const tt_dataset *ds, const int64_t *values)
{
    size_t mask = ds->index_cap - 1;
    size_t h = (size_t)tt_values_hash(values, ds->nparams) & mask;
    for (;;) {
        size_t r = ds->index[h];
        if (r == 0 || memcmp(ds->values + (r - 1) * ds->nparams, values,
                             ds->nparams * sizeof *values) == 0)
            return h;
        h = (h + 1) & mask;
    }
}

static int tt_index_grow(tt_dataset *ds)
{
    size_t cap = ds->index_cap ? ds->index_cap * 2 : 64;
    size_t *idx = calloc(cap, sizeof *idx);
    if (!idx) return -1;
    free(ds->index);
    ds->index = idx;
    ds->index_cap = cap;
    for (size_t i = 0; i < ds->nrecords; i++)
        ds->index[tt_index_slot(ds, ds->values + i * ds->nparams)] = i + 1;
    return 0;
}

const tt_ds_record *tt_dataset_find(const tt_dataset *ds, const int64_t *values)
{
    if (!ds || ds->index_cap == 0) return NULL;
    size_t r = ds->index[tt_index_slot(ds, values)];
    return r ? &ds->records[r - 1] : NULL;
}

int tt_dataset_param(const tt_dataset *ds, const char *name)
{
    for (size_t i = 0; i < ds->nparams; i++)
        if (strcmp(ds->params[i], name) == 0) return (int)i;
    return -1;
}

static int tt_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double tt_median(const double *v, size_t n)
{
    if (n == 0) return NAN;
    double stack[64], *s = n <= 64 ? stack : malloc(n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, tt_cmp_double);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    if (s != stack) free(s);
    return m;
}

/* Insert v into the sorted domain of param p (no duplicates). */
static int tt_domain_add(tt_dataset *ds, size_t p, int64_t v)
{
    int64_t *d = ds->domains[p];
    size_t n = ds->ndomain[p], lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    if (lo < n && d[lo] == v) return 0;
    int64_t *nd = realloc(d, (n + 1) * sizeof *nd);
    if (!nd) return -1;
    memmove(nd + lo + 1, nd + lo, (n - lo) * sizeof *nd);
    nd[lo] = v;
    ds->domains[p] = nd;
    ds->ndomain[p] = n + 1;
    return 0;
}

/* The common insertion; keep_domains: the domains came from the file (KT tune_params). */
static tt_rc tt_add(tt_dataset *ds, const int64_t *values, tt_ds_status status,
                    const double *samples, size_t ns, double value_us, double compile_s,
                    const char *timestamp, int keep_domains, tt_errinfo *err)
{
    if ((unsigned)status >= TT_DS__COUNT) return tt_errf(err, TT_EINVAL, "status", "bad status");
    if ((ds->nrecords + 1) * 2 > ds->index_cap && tt_index_grow(ds) != 0) return tt_oom(err);
    size_t slot = tt_index_slot(ds, values);
    if (ds->index[slot]) {
        ds->nduplicates++;
        return TT_EEXISTS;
    }
    if (ds->nrecords == ds->cap_records) {
        size_t cap = ds->cap_records ? ds->cap_records * 2 : 256;
        tt_ds_record *r = realloc(ds->records, cap * sizeof *r);
        if (!r) return tt_oom(err);
        ds->records = r;
        int64_t *v = realloc(ds->values, cap * ds->nparams * sizeof *v);
        if (!v) return tt_oom(err);
        ds->values = v;
        ds->cap_records = cap;
    }
    if (ds->nsamples_total + ns > ds->cap_samples) {
        size_t cap = ds->cap_samples ? ds->cap_samples : 1024;
        while (cap < ds->nsamples_total + ns) cap *= 2;
        double *s = realloc(ds->samples, cap * sizeof *s);
        if (!s) return tt_oom(err);
        ds->samples = s;
        ds->cap_samples = cap;
    }
    if (!keep_domains)
        for (size_t p = 0; p < ds->nparams; p++)
            if (tt_domain_add(ds, p, values[p]) != 0) return tt_oom(err);
    char *ts = NULL;
    if (timestamp && !(ts = strdup(timestamp))) return tt_oom(err);
    size_t i = ds->nrecords;
    memcpy(ds->values + i * ds->nparams, values, ds->nparams * sizeof *values);
    if (ns) memcpy(ds->samples + ds->nsamples_total, samples, ns * sizeof *samples);
    ds->records[i] = (tt_ds_record){.index = i, .status = status, .sample_off = ds->nsamples_total,
                                    .nsamples = ns, .median_us = tt_median(samples, ns),
                                    .value_us = value_us, .compile_s = compile_s, .timestamp = ts};
    ds->nsamples_total += ns;
    ds->nrecords++;
    ds->count[status]++;
    ds->index[slot] = i + 1;
    return TT_OK;
}

tt_rc tt_dataset_add(tt_dataset *ds, const int64_t *values, tt_ds_status status,
                     const double *samples_us, size_t nsamples, double compile_s,
                     const char *timestamp, tt_errinfo *err)
{
    double med = tt_median(samples_us, nsamples);
    tt_rc rc = tt_add(ds, values, status, samples_us, nsamples, med, compile_s, timestamp, 0, err);
    if (rc == TT_EEXISTS) {
        ds->nduplicates--;   /* a refused add is not a duplicate of the data */
        return tt_errf(err, TT_EEXISTS, "configuration", "config already in the dataset");
    }
    return rc;
}

/* ---- reading bytes --------------------------------------------------------------------- */

/* Decompress a gzip buffer (several members allowed) into a new buffer. */
static tt_rc tt_gunzip(const unsigned char *in, size_t len, size_t max, char **out,
                       size_t *outlen, tt_errinfo *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return tt_oom(err);
    size_t cap = len * 4 + 4096, n = 0;
    if (cap > max) cap = max;
    char *buf = malloc(cap);
    tt_rc rc = TT_OK;
    if (!buf) {
        inflateEnd(&z);
        return tt_oom(err);
    }
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
    for (;;) {
        if (n == cap) {
            if (cap >= max) {
                rc = tt_errf(err, TT_ETOOBIG, "", "more than %zu bytes once decompressed", max);
                break;
            }
            cap = cap * 2 > max ? max : cap * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                rc = tt_oom(err);
                break;
            }
            buf = nb;
        }
        z.next_out = (unsigned char *)buf + n;
        z.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
        int zr = inflate(&z, Z_NO_FLUSH);
        n = (size_t)((char *)z.next_out - buf);
        if (zr == Z_STREAM_END) {
            if (z.avail_in == 0) break;
            if (inflateReset(&z) != Z_OK) {   /* another gzip member follows */
                rc = tt_errf(err, TT_EENCODING, "", "corrupt gzip data");
                break;
            }
            continue;
        }
        if (zr == Z_BUF_ERROR && z.avail_in == 0 && z.avail_out > 0) {
            rc = tt_errf(err, TT_EENCODING, "", "truncated gzip data (after %zu bytes)", n);
            break;
        }
        if (zr == Z_MEM_ERROR) {   /* inflate() allocates its window on first use */
            rc = tt_oom(err);
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = tt_errf(err, TT_EENCODING, "", "corrupt gzip data: %s", z.msg ? z.msg : "inflate error");
            break;
        }
    }
    inflateEnd(&z);
    if (rc != TT_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = n;
    return TT_OK;
}

/* ---- parsing --------------------------------------------------------------------------- */

/* A param value: integer or boolean. */
static int tt_json_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) *out = (int64_t)json_integer_value(v);
    else if (json_is_boolean(v)) *out = json_is_true(v);
    else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
             fabs(json_real_value(v)) < 9.0e15)
        *out = (int64_t)json_real_value(v);   /* 16.0: a Python float that is an integer */
    else return 0;
    return 1;
}

/* The largest time a record may hold, in µs: Kernel Tuner's failure sentinel (1e20 ms).
 * Beyond it a time is no measurement, and sums or means of such times overflow to infinity,
 * which the store cannot hold (a job failed with "NOT NULL constraint failed"). */
#define TT_DS_MAX_US (TT_KT_FAILED_MS * 1e3)

/* A recorded time (runtime or objective) converted to µs into *us; 0 when it is not one:
 * not a number, negative (a job never ranks it, so a negative objective put another config
 * first: a wrong best), or not below TT_DS_MAX_US. */
static int tt_time_us(const json_t *v, double factor, double *us)
{
    double d = json_is_number(v) ? json_number_value(v) * factor : NAN;
    *us = d;
    return isfinite(d) && d >= 0 && d < TT_DS_MAX_US;
}

/* Runtimes array (times factor) into buf; returns count or -1 with err set. */
static tt_rc tt_samples(const json_t *arr, double factor, const char *path, double **buf,
                        size_t *cap, size_t *n, tt_errinfo *err)
{
    if (!json_is_array(arr)) return tt_errf(err, TT_EINVAL, path, "expected an array of numbers");
    size_t k = json_array_size(arr);
    if (k > *cap) {
        double *nb = realloc(*buf, k * sizeof *nb);
        if (!nb) return tt_oom(err);
        *buf = nb;
        *cap = k;
    }
    for (size_t i = 0; i < k; i++) {
        if (!tt_time_us(json_array_get(arr, i), factor, &(*buf)[i])) {
            char ep[200];
            snprintf(ep, sizeof ep, "%s[%zu]", path, i);
            return tt_errf(err, TT_EINVAL, ep, "not a runtime (a number from 0 to 1e20 ms)");
        }
    }
    *n = k;
    return TT_OK;
}

/* A recorded compile time (v times factor gives seconds) into *s: NAN when none is recorded
 * or it is not a number; TT_EINVAL at ep when it is a number that is not a time (negative,
 * or not below 1e20 ms), which a trial's compile_s would otherwise carry into the store. */
static tt_rc tt_compile_s(const json_t *v, double factor, const char *ep, double *s,
                          tt_errinfo *err)
{
    *s = NAN;
    if (!json_is_number(v)) return TT_OK;
    double us;
    if (!tt_time_us(v, factor * 1e6, &us))
        return tt_errf(err, TT_EINVAL, ep, "not a compile time (a number from 0 to 1e20 ms)");
    *s = us * 1e-6;
    return TT_OK;
}

/* Only the objective was recorded: one sample. */
static tt_rc tt_one_sample(double v, double **buf, size_t *cap, size_t *n, tt_errinfo *err)
{
    if (*cap < 1) {
        double *nb = realloc(*buf, sizeof *nb);
        if (!nb) return tt_oom(err);
        *buf = nb;
        *cap = 1;
    }
    (*buf)[0] = v;
    *n = 1;
    return TT_OK;
}

static double tt_num_or_nan(const json_t *v, double factor)
{
    return json_is_number(v) ? json_number_value(v) * factor : NAN;
}

static tt_rc tt_set_params(tt_dataset **dsp, const char *const *names, size_t n, const char *path,
                           tt_errinfo *err)
{
    if (n == 0) return tt_errf(err, TT_EINVAL, path, "no tuning parameters");
    tt_rc rc = tt_dataset_new(names, n, dsp, err);
    if (rc != TT_OK && err) snprintf(err->path, sizeof err->path, "%s", path);
    return rc;
}

static tt_rc tt_parse_kt(const json_t *doc, tt_dataset **out, tt_errinfo *err)
{
    const json_t *keys = json_object_get(doc, "tune_params_keys");
    const json_t *cache = json_object_get(doc, "cache");
    if (!json_is_array(keys)) return tt_errf(err, TT_EINVAL, "tune_params_keys", "expected an array");
    if (!json_is_object(cache)) return tt_errf(err, TT_EINVAL, "cache", "expected an object");
    size_t np = json_array_size(keys);
    if (np > TT_DATASET_MAX_PARAMS)
        return tt_errf(err, TT_EUNSUPPORTED, "tune_params_keys", "more than %d params",
                       TT_DATASET_MAX_PARAMS);
    const char *names[TT_DATASET_MAX_PARAMS];
    for (size_t i = 0; i < np; i++)
        if (!(names[i] = json_string_value(json_array_get(keys, i)))) {
            char ep[64];
            snprintf(ep, sizeof ep, "tune_params_keys[%zu]", i);
            return tt_errf(err, TT_EINVAL, ep, "not a string");
        }
    tt_dataset *ds = NULL;
    tt_rc rc = tt_set_params(&ds, names, np, "tune_params_keys", err);
    if (rc != TT_OK) return rc;
    ds->format = TT_DS_FORMAT_KT_CACHE;
    const char *dev = json_string_value(json_object_get(doc, "device_name"));
    const char *ker = json_string_value(json_object_get(doc, "kernel_name"));
    if ((dev && !(ds->device = strdup(dev))) || (ker && !(ds->kernel = strdup(ker)))) {
        tt_dataset_free(ds);
        return tt_oom(err);
    }
    const json_t *ps = json_object_get(doc, "problem_size");   /* [4096, 4096] or 4096 */
    size_t nps = json_is_array(ps) ? json_array_size(ps) : json_is_integer(ps);
    if (nps && !(ds->problem = calloc(nps, sizeof *ds->problem))) {
        tt_dataset_free(ds);
        return tt_oom(err);
    }
    for (size_t i = 0; i < nps; i++)
        if (tt_json_int(json_is_array(ps) ? json_array_get(ps, i) : ps, &ds->problem[ds->nproblem]))
            ds->nproblem++;
    /* domains from tune_params when every value is an integer */
    const json_t *tp = json_object_get(doc, "tune_params");
    int keep = json_is_object(tp);
    for (size_t p = 0; keep && p < np; p++) {
        const json_t *arr = json_object_get(tp, names[p]);
        keep = json_is_array(arr) && json_array_size(arr) > 0;
        for (size_t i = 0; keep && i < json_array_size(arr); i++) {
            int64_t v;
            keep = tt_json_int(json_array_get(arr, i), &v) && tt_domain_add(ds, p, v) == 0;
        }
    }
    if (!keep)
        for (size_t p = 0; p < np; p++) {
            free(ds->domains[p]);
            ds->domains[p] = NULL;
            ds->ndomain[p] = 0;
        }
    double *buf = NULL;
    size_t cap = 0;
    const char *key;
    const json_t *e;
    json_object_foreach((json_t *)cache, key, e) {
        char path[160], ep[200];
        snprintf(path, sizeof path, "cache[\"%.100s\"]", key);
        if (!json_is_object(e)) {
            rc = tt_errf(err, TT_EINVAL, path, "expected an object");
            break;
        }
        int64_t vals[TT_DATASET_MAX_PARAMS];
        for (size_t p = 0; p < np && rc == TT_OK; p++) {
            snprintf(ep, sizeof ep, "%s.%s", path, names[p]);
            const json_t *v = json_object_get(e, names[p]);
            if (!v) rc = tt_errf(err, TT_EINVAL, ep, "missing");
            else if (!tt_json_int(v, &vals[p]))
                rc = tt_errf(err, TT_EUNSUPPORTED, ep, "not an integer (only integer params are "
                             "supported)");
            else if (keep && tt_domain_add(ds, p, vals[p]) != 0)
                rc = tt_oom(err);
        }
        if (rc != TT_OK) break;
        const json_t *t = json_object_get(e, "time");
        tt_ds_status st = TT_DS_OK;
        size_t ns = 0;
        snprintf(ep, sizeof ep, "%s.time", path);
        if (json_is_string(t)) {
            const char *s = json_string_value(t);
            if (strcmp(s, "InvalidConfig") == 0) st = TT_DS_INVALID;
            else if (strcmp(s, "CompilationFailedConfig") == 0) st = TT_DS_COMPILE_FAILED;
            else if (strcmp(s, "RuntimeFailedConfig") == 0) st = TT_DS_RUNTIME_FAILED;
            else rc = tt_errf(err, TT_EINVAL, ep, "unknown failure \"%.40s\"", s);
        } else if (!json_is_number(t)) {
            rc = tt_errf(err, TT_EINVAL, ep, "expected a number (ms) or a failure string");
        } else if (json_number_value(t) >= TT_KT_FAILED_MS) {
            st = TT_DS_INVALID;   /* Kernel Tuner before its typed errors: the 1e20 sentinel */
        } else if (!tt_time_us(t, 1000.0, &(double){0})) {
            rc = tt_errf(err, TT_EINVAL, ep, "not a time (a number from 0 to 1e20 ms)");
        }
        if (rc == TT_OK && st == TT_DS_OK) {
            const json_t *times = json_object_get(e, "times");
            snprintf(ep, sizeof ep, "%s.times", path);
            if (times) rc = tt_samples(times, 1000.0, ep, &buf, &cap, &ns, err);
            else rc = tt_one_sample(json_number_value(t) * 1000.0, &buf, &cap, &ns, err);
        }
        double cs = NAN;
        snprintf(ep, sizeof ep, "%s.compile_time", path);
        if (rc == TT_OK) rc = tt_compile_s(json_object_get(e, "compile_time"), 1e-3, ep, &cs, err);
        if (rc != TT_OK) break;
        rc = tt_add(ds, vals, st, buf, ns, st == TT_DS_OK ? tt_num_or_nan(t, 1000.0) : NAN, cs,
                    json_string_value(json_object_get(e, "timestamp")), keep, err);
        if (rc == TT_EEXISTS) rc = TT_OK;
        if (rc != TT_OK) break;
    }
    free(buf);
    if (rc == TT_OK && ds->nrecords == 0) rc = tt_errf(err, TT_EINVAL, "cache", "no records");
    if (rc != TT_OK) {
        tt_dataset_free(ds);
        return rc;
    }
    *out = ds;
    return TT_OK;
}

/* Microseconds per unit of a T4 "timeunit". */
static double tt_t4_factor(const char *u)
{
    static const struct {
        const char *name;
        double f;
    } units[] = {{"miliseconds", 1e3}, {"milliseconds", 1e3}, {"ms", 1e3},
                 {"microseconds", 1.0}, {"us", 1.0},       {"seconds", 1e6},
                 {"s", 1e6},            {"nanoseconds", 1e-3}, {"ns", 1e-3}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].name) == 0) return units[i].f;
    return 0;
}

static int tt_t4_status(const char *s, tt_ds_status *st)
{
    static const struct {
        const char *name;
        tt_ds_status st;
    } map[] = {{"correct", TT_DS_OK},           {"compile", TT_DS_COMPILE_FAILED},
               {"runtime", TT_DS_RUNTIME_FAILED}, {"timeout", TT_DS_RUNTIME_FAILED},
               {"correctness", TT_DS_RUNTIME_FAILED}, {"constraints", TT_DS_INVALID}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i].name) == 0) {
            *st = map[i].st;
            return 1;
        }
    return 0;
}

/* The compile time of a result's `times`: "compilation" as Kernel Tuner writes it, or
 * "compilation_time" as the T4 results schema (TuningSchema results-schema.json) names it. */
static const json_t *tt_t4_compile(const json_t *times)
{
    const json_t *c = json_object_get(times, "compilation");
    return c ? c : json_object_get(times, "compilation_time");
}

/* measurements[] entry named "time": its numeric value in µs into *us (NAN when there is
 * none or it is not a number).  A number that is not a time (0 or less, beyond 1e20 ms):
 * TT_EINVAL at results[i].measurements[j].value of a result that is `ok`. */
static tt_rc tt_t4_measured(const json_t *r, const char *path, int ok, double factor,
                            double *us, tt_errinfo *err)
{
    size_t i;
    const json_t *m;
    *us = NAN;
    json_array_foreach(json_object_get(r, "measurements"), i, m) {
        const char *n = json_string_value(json_object_get(m, "name"));
        const json_t *v = json_object_get(m, "value");
        if (!n || strcmp(n, "time") != 0) continue;
        if (json_is_number(v) && ok && !tt_time_us(v, factor, us)) {
            char ep[200];
            snprintf(ep, sizeof ep, "%s.measurements[%zu].value", path, i);
            return tt_errf(err, TT_EINVAL, ep, "not a time (a number from 0 to 1e20 ms)");
        }
        *us = tt_num_or_nan(v, factor);
        return TT_OK;
    }
    return TT_OK;
}

static tt_rc tt_parse_t4(const json_t *doc, tt_dataset **out, tt_errinfo *err)
{
    const json_t *res = json_object_get(doc, "results");
    double factor = 1e3;
    const json_t *tu = json_object_get(json_object_get(doc, "metadata"), "timeunit");
    if (tu && !json_is_string(tu)) return tt_errf(err, TT_EINVAL, "metadata.timeunit", "not a string");
    if (tu && !(factor = tt_t4_factor(json_string_value(tu))))
        return tt_errf(err, TT_EUNSUPPORTED, "metadata.timeunit", "unknown time unit \"%.40s\"",
                       json_string_value(tu));
    if (!json_is_array(res)) return tt_errf(err, TT_EINVAL, "results", "expected an array");
    if (json_array_size(res) == 0) return tt_errf(err, TT_EINVAL, "results", "no results");
    const json_t *c0 = json_object_get(json_array_get(res, 0), "configuration");
    if (!json_is_object(c0))
        return tt_errf(err, TT_EINVAL, "results[0].configuration", "expected an object");
    const char *names[TT_DATASET_MAX_PARAMS];
    size_t np = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)c0, k, v) {
        if (np == TT_DATASET_MAX_PARAMS)
            return tt_errf(err, TT_EUNSUPPORTED, "results[0].configuration", "more than %d params",
                           TT_DATASET_MAX_PARAMS);
        names[np++] = k;
    }
    tt_dataset *ds = NULL;
    tt_rc rc = tt_set_params(&ds, names, np, "results[0].configuration", err);
    if (rc != TT_OK) return rc;
    ds->format = TT_DS_FORMAT_T4;
    double *buf = NULL;
    size_t cap = 0, i;
    const json_t *r;
    json_array_foreach(res, i, r) {
        char path[64], ep[200];
        snprintf(path, sizeof path, "results[%zu]", i);
        const json_t *c = json_object_get(r, "configuration");
        snprintf(ep, sizeof ep, "%s.configuration", path);
        if (!json_is_object(c)) {
            rc = tt_errf(err, TT_EINVAL, json_is_object(r) ? ep : path, "expected an object");
            break;
        }
        if (json_object_size(c) != np) {
            rc = tt_errf(err, TT_EINVAL, ep, "%zu params where results[0] has %zu",
                         json_object_size(c), np);
            break;
        }
        int64_t vals[TT_DATASET_MAX_PARAMS];
        for (size_t p = 0; p < np && rc == TT_OK; p++) {
            snprintf(ep, sizeof ep, "%s.configuration.%s", path, names[p]);
            const json_t *pv = json_object_get(c, names[p]);
            if (!pv) rc = tt_errf(err, TT_EINVAL, ep, "missing (results[0] has it)");
            else if (!tt_json_int(pv, &vals[p]))
                rc = tt_errf(err, TT_EUNSUPPORTED, ep, "not an integer (only integer params are "
                             "supported)");
        }
        if (rc != TT_OK) break;
        const json_t *inv = json_object_get(r, "invalidity");
        const json_t *times = json_object_get(r, "times");
        const json_t *rt = json_object_get(times, "runtimes");
        tt_ds_status st = TT_DS_OK;
        snprintf(ep, sizeof ep, "%s.invalidity", path);
        if (inv && !json_is_string(inv)) rc = tt_errf(err, TT_EINVAL, ep, "not a string");
        else if (inv && !tt_t4_status(json_string_value(inv), &st))
            rc = tt_errf(err, TT_EINVAL, ep, "unknown value \"%.40s\"", json_string_value(inv));
        else if (!inv && !rt) rc = tt_errf(err, TT_EINVAL, ep, "missing (and no runtimes)");
        if (rc == TT_OK && times && !json_is_object(times)) {
            snprintf(ep, sizeof ep, "%s.times", path);
            rc = tt_errf(err, TT_EINVAL, ep, "expected an object");
        }
        if (rc != TT_OK) break;
        size_t ns = 0;
        double measured;
        rc = tt_t4_measured(r, path, st == TT_DS_OK, factor, &measured, err);
        if (rc == TT_OK && st == TT_DS_OK) {
            snprintf(ep, sizeof ep, "%s.times.runtimes", path);
            if (rt) rc = tt_samples(rt, factor, ep, &buf, &cap, &ns, err);
            if (rc == TT_OK && ns == 0) {
                if (isnan(measured))
                    rc = tt_errf(err, TT_EINVAL, ep, "a correct result without runtimes or a "
                                 "\"time\" measurement");
                else rc = tt_one_sample(measured, &buf, &cap, &ns, err);
            }
        }
        double cs = NAN;
        snprintf(ep, sizeof ep, "%s.times.%s", path,
                 json_object_get(times, "compilation") ? "compilation" : "compilation_time");
        if (rc == TT_OK) rc = tt_compile_s(tt_t4_compile(times), factor * 1e-6, ep, &cs, err);
        if (rc != TT_OK) break;
        rc = tt_add(ds, vals, st, buf, ns, measured, cs,
                    json_string_value(json_object_get(r, "timestamp")), 0, err);
        if (rc == TT_EEXISTS) rc = TT_OK;
        if (rc != TT_OK) break;
    }
    free(buf);
    if (rc != TT_OK) {
        tt_dataset_free(ds);
        return rc;
    }
    *out = ds;
    return TT_OK;
}

/* Kernel Tuner appends each result to its cache file as it goes (an entry and a ","), and
 * closes the two objects only when the session ends; a session that was killed leaves the
 * file open, and Kernel Tuner reads such a file by dropping the trailing comma and closing
 * them (kernel_tuner/util.py, correct_open_cache).  The same here, for text that failed to
 * parse and has a Kernel Tuner header; NULL when it is not that (the first error stands). */
static json_t *tt_kt_reopen(const char *text, size_t len)
{
    size_t head = len < 65536 ? len : 65536;
    if (!memmem(text, head, "\"tune_params_keys\"", 18) || !memmem(text, len, "\"cache\"", 7))
        return NULL;
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\n' || text[len - 1] == '\r' ||
                   text[len - 1] == '\t'))
        len--;
    if (len && text[len - 1] == ',') len--;
    char *buf = malloc(len + 3);
    if (!buf) return NULL;
    memcpy(buf, text, len);
    memcpy(buf + len, "}\n}", 3);
    json_error_t je;
    json_t *doc = json_loadb(buf, len + 3, 0, &je);
    free(buf);
    return doc;
}

tt_rc tt_dataset_load_buffer(const void *data, size_t len, tt_dataset **out, tt_errinfo *err)
{
    return tt_dataset_load_buffer_max(data, len, TT_DATASET_MAX_BYTES, out, err);
}

tt_rc tt_dataset_gunzip(const void *data, size_t len, size_t max_bytes, char **out,
                        size_t *outlen, tt_errinfo *err)
{
    *out = NULL;
    if (max_bytes == 0 || max_bytes > TT_DATASET_MAX_BYTES) max_bytes = TT_DATASET_MAX_BYTES;
    return tt_gunzip(data, len, max_bytes, out, outlen, err);
}

tt_rc tt_dataset_load_buffer_max(const void *data, size_t len, size_t max_bytes,
                                 tt_dataset **out, tt_errinfo *err)
{
    *out = NULL;
    if (max_bytes == 0 || max_bytes > TT_DATASET_MAX_BYTES) max_bytes = TT_DATASET_MAX_BYTES;
    if (!data || len == 0) return tt_errf(err, TT_EINVAL, "", "empty input");
    const unsigned char *b = data;
    char *plain = NULL;
    size_t plen = len;
    if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        tt_rc rc = tt_gunzip(b, len, max_bytes, &plain, &plen, err);
        if (rc != TT_OK) return rc;
    } else if (len > max_bytes) {
        return tt_errf(err, TT_ETOOBIG, "", "more than %zu bytes", max_bytes);
    }
    const char *text = plain ? plain : (const char *)data;
    uint64_t h = tt_fnv(TT_FNV_OFF, text, plen);
    json_error_t je;
    json_t *doc = json_loadb(text, plen, 0, &je);
    int reopened = 0;
    if (!doc && json_error_code(&je) != json_error_out_of_memory)
        reopened = (doc = tt_kt_reopen(text, plen)) != NULL;
    free(plain);
    if (!doc && json_error_code(&je) == json_error_out_of_memory)
        return tt_errf(err, TT_ENOMEM, "", "out of memory");
    if (!doc)
        return tt_errf(err, TT_EJSON, "", "not JSON: line %d column %d: %s", je.line, je.column,
                       je.text);
    tt_rc rc;
    if (!json_is_object(doc))
        rc = tt_errf(err, TT_EINVAL, "", "expected a JSON object (Kernel Tuner cache or T4 results)");
    else if (json_object_get(doc, "cache") || json_object_get(doc, "tune_params_keys"))
        rc = tt_parse_kt(doc, out, err);
    else if (json_object_get(doc, "results"))
        rc = tt_parse_t4(doc, out, err);
    else
        rc = tt_errf(err, TT_EINVAL, "", "neither a Kernel Tuner cache (\"cache\") nor T4 results "
                     "(\"results\")");
    json_decref(doc);
    if (rc == TT_OK) {
        (*out)->reopened = reopened;
        (*out)->content_hash = h;
        snprintf((*out)->hash, sizeof (*out)->hash, "%016llx", (unsigned long long)h);
    }
    return rc;
}

uint64_t tt_dataset_content_hash(const void *data, size_t len)
{
    return tt_fnv(TT_FNV_OFF, data, len);
}

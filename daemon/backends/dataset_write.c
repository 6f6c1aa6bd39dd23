/* SPDX-License-Identifier: MIT
 * dataset_write.c - the T4 results writer of datasets (export): JSON document, text, stream.
 */
#include "dataset.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"

static tt_rc tt_oom(tt_errinfo *err) { return tt_errf(err, TT_ENOMEM, "", "out of memory"); }

static json_t *tt_t4_result(const tt_dataset *ds, const tt_ds_record *r)
{
    static const char *const inval[TT_DS__COUNT] = {"correct", "constraints", "compile", "runtime"};
    static const char *const kt[TT_DS__COUNT] = {"", "InvalidConfig", "CompilationFailedConfig",
                                                 "RuntimeFailedConfig"};
    json_t *o = json_object(), *conf = json_object(), *times = json_object();
    json_t *meas = json_array(), *m = json_object(), *obj = json_array();
    int bad = !o || !conf || !times || !meas || !m || !obj;
    const int64_t *v = tt_ds_values(ds, r);
    for (size_t p = 0; p < ds->nparams && !bad; p++)
        bad |= json_object_set_new(conf, ds->params[p], json_integer((json_int_t)v[p]));
    if (!isnan(r->compile_s)) bad |= json_object_set_new(times, "compilation", json_real(r->compile_s * 1e6));
    if (r->nsamples) {
        json_t *rt = json_array();
        const double *s = tt_ds_samples(ds, r);
        for (size_t i = 0; rt && i < r->nsamples; i++) bad |= json_array_append_new(rt, json_real(s[i]));
        bad |= json_object_set_new(times, "runtimes", rt);
    }
    if (r->timestamp) bad |= json_object_set_new(o, "timestamp", json_string(r->timestamp));
    bad |= json_object_set_new(o, "configuration", conf);
    bad |= json_object_set_new(o, "times", times);
    bad |= json_object_set_new(o, "invalidity", json_string(inval[r->status]));
    bad |= json_object_set_new(o, "correctness", json_integer(r->status == TT_DS_OK));
    bad |= json_object_set_new(m, "name", json_string("time"));
    double val = !isnan(r->value_us) ? r->value_us : r->median_us;
    bad |= json_object_set_new(m, "value", r->status == TT_DS_OK && !isnan(val) ? json_real(val)
                                                                                : json_string(kt[r->status]));
    bad |= json_object_set_new(m, "unit", json_string("us"));
    bad |= json_array_append_new(meas, m);
    bad |= json_object_set_new(o, "measurements", meas);
    bad |= json_array_append_new(obj, json_string("time"));
    bad |= json_object_set_new(o, "objectives", obj);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *tt_dataset_t4_json(const tt_dataset *ds)
{
    json_t *doc = json_object(), *meta = json_object(), *res = json_array();
    int bad = !doc || !meta || !res;
    bad |= json_object_set_new(meta, "timeunit", json_string("microseconds"));
    bad |= json_object_set_new(doc, "schema_version", json_string("1.0.0"));
    bad |= json_object_set_new(doc, "metadata", meta);
    for (size_t i = 0; i < ds->nrecords && !bad; i++)
        bad |= json_array_append_new(res, tt_t4_result(ds, &ds->records[i]));
    bad |= json_object_set_new(doc, "results", res);
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

tt_rc tt_dataset_write_t4_buffer(const tt_dataset *ds, int pretty, char **out, size_t *len,
                                 tt_errinfo *err)
{
    *out = NULL;
    json_t *doc = tt_dataset_t4_json(ds);
    if (!doc) return tt_oom(err);
    char *s = tt_json_dumps(doc, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(17));
    json_decref(doc);
    if (!s) return tt_oom(err);
    *out = s;
    if (len) *len = strlen(s);
    return TT_OK;
}

tt_rc tt_dataset_write_t4(const tt_dataset *ds, FILE *f, int pretty, tt_errinfo *err)
{
    char *s = NULL;
    size_t n = 0;
    tt_rc rc = tt_dataset_write_t4_buffer(ds, pretty, &s, &n, err);
    if (rc != TT_OK) return rc;
    if (fwrite(s, 1, n, f) != n || fputc('\n', f) == EOF || fflush(f) != 0)
        rc = tt_errf(err, TT_EIO, "", "write error: %s", strerror(errno));
    free(s);
    return rc;
}

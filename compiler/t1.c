/* SPDX-License-Identifier: MIT
 * t1.c - T1 search-space file -> tiletune template document (params and constraints).
 */
#include "t1.h"
#include "t1_int.h"
#include "jsonutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tt_rc tt_oom(tt_errinfo *err) { return tt_errf(err, TT_ENOMEM, "", "out of memory"); }

/* Values given as a JSON array: integers only (a copy; a repeated value kept once, at its
 * first place, as in the string form). */
static tt_rc tt_copy_int_array(const json_t *a, const char *path, json_t **out, tt_errinfo *err)
{
    *out = NULL;
    if (json_array_size(a) > TT_T1_MAX_VALUES)
        return tt_errf(err, TT_EUNSUPPORTED, path, "more than %d values", TT_T1_MAX_VALUES);
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) {
        if (!json_is_integer(v) && !json_is_boolean(v)) {
            char ep[200];
            snprintf(ep, sizeof ep, "%s[%zu]", path, i);
            return tt_errf(err, TT_EUNSUPPORTED, ep, "not an integer");
        }
    }
    json_t *arr = json_array();
    if (!arr) return tt_oom(err);
    json_array_foreach(a, i, v) {   /* true / false are 1 / 0, as in the recordings */
        json_int_t x = json_is_boolean(v) ? json_is_true(v) : json_integer_value(v);
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) {
            const json_t *w = json_array_get(a, j);
            seen = (json_is_boolean(w) ? json_is_true(w) : json_integer_value(w)) == x;
        }
        if (!seen && json_array_append_new(arr, json_integer(x)) != 0) {
            json_decref(arr);
            return tt_oom(err);
        }
    }
    *out = arr;
    return TT_OK;
}

static tt_rc tt_t1_params(const json_t *tps, json_t *params, tt_errinfo *err)
{
    const char *base = "ConfigurationSpace.TuningParameters";
    if (!json_is_array(tps))
        return tt_errf(err, TT_EINVAL, base, "expected an array of tuning parameters");
    if (json_array_size(tps) == 0) return tt_errf(err, TT_EINVAL, base, "no tuning parameters");
    size_t i;
    const json_t *tp;
    json_array_foreach(tps, i, tp) {
        char path[128], ep[160];
        snprintf(path, sizeof path, "%s[%zu]", base, i);
        if (!json_is_object(tp)) return tt_errf(err, TT_EINVAL, path, "expected an object");
        const char *name = json_string_value(json_object_get(tp, "Name"));
        snprintf(ep, sizeof ep, "%s.Name", path);
        if (!name || !*name) return tt_errf(err, TT_EINVAL, ep, "missing or not a string");
        if (json_object_get(params, name))
            return tt_errf(err, TT_EINVAL, ep, "duplicate parameter \"%s\"", name);
        const json_t *type = json_object_get(tp, "Type");
        snprintf(ep, sizeof ep, "%s.Type", path);
        if (type && !json_is_string(type)) return tt_errf(err, TT_EINVAL, ep, "not a string");
        int is_bool = type && strcmp(json_string_value(type), "bool") == 0;
        if (type && !is_bool && strcmp(json_string_value(type), "int") != 0)
            return tt_errf(err, TT_EUNSUPPORTED, ep,
                           "parameter \"%s\" has type \"%s\": only int and bool parameters "
                           "are supported", name, json_string_value(type));
        const json_t *vals = json_object_get(tp, "Values");
        snprintf(ep, sizeof ep, "%s.Values", path);
        json_t *arr = NULL;
        tt_rc rc;
        if (json_is_string(vals))
            rc = tt__t1_values(json_string_value(vals), ep, &arr, err);
        else if (json_is_array(vals))
            rc = tt_copy_int_array(vals, ep, &arr, err);
        else
            rc = tt_errf(err, TT_EINVAL, ep, "missing, or neither a list string nor an array");
        if (rc != TT_OK) return rc;
        if (json_array_size(arr) == 0) {
            json_decref(arr);
            return tt_errf(err, TT_EINVAL, ep, "empty list of values");
        }
        size_t k;
        const json_t *bv;
        json_array_foreach(arr, k, bv) {
            json_int_t x = json_integer_value(bv);
            if (is_bool && x != 0 && x != 1) {
                json_decref(arr);
                return tt_errf(err, TT_EUNSUPPORTED, ep, "a bool parameter takes True/False "
                               "(1/0), not %lld", (long long)x);
            }
        }
        if (json_object_set_new(params, name, arr) != 0) return tt_oom(err);
    }
    return TT_OK;
}

static tt_rc tt_t1_conditions(const json_t *conds, json_t *constraints, tt_errinfo *err)
{
    const char *base = "ConfigurationSpace.Conditions";
    if (!conds) return TT_OK;
    if (!json_is_array(conds)) return tt_errf(err, TT_EINVAL, base, "expected an array");
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c) {
        char path[128];
        snprintf(path, sizeof path, "%s[%zu].Expression", base, i);
        const char *ex = json_string_value(json_object_get(c, "Expression"));
        if (!ex) return tt_errf(err, TT_EINVAL, path, "missing or not a string");
        if (json_array_append_new(constraints, json_string(ex)) != 0) return tt_oom(err);
    }
    return TT_OK;
}

tt_rc tt_t1_to_template(const json_t *t1, const char *name, json_t **out, tt_errinfo *err)
{
    *out = NULL;
    if (!json_is_object(t1)) return tt_errf(err, TT_EINVAL, "", "a T1 document is a JSON object");
    const json_t *cs = json_object_get(t1, "ConfigurationSpace");
    if (!json_is_object(cs))
        return tt_errf(err, TT_EINVAL, "ConfigurationSpace", "missing or not an object");
    const char *bench = json_string_value(json_object_get(json_object_get(t1, "General"),
                                                          "BenchmarkName"));
    const json_t *ks = json_object_get(t1, "KernelSpecification");
    const char *kname = json_string_value(json_object_get(ks, "KernelName"));
    const char *lang = json_string_value(json_object_get(ks, "Language"));
    const char *tname = name && *name ? name : bench ? bench : kname;
    if (!tname || !*tname)
        return tt_errf(err, TT_EINVAL, "General.BenchmarkName",
                       "no template name given and none in the file");

    json_t *doc = json_object(), *params = json_object(), *cons = json_array();
    if (!doc || !params || !cons) {
        json_decref(doc);
        json_decref(params);
        json_decref(cons);
        return tt_oom(err);
    }
    tt_rc rc = tt_t1_params(json_object_get(cs, "TuningParameters"), params, err);
    if (rc == TT_OK) rc = tt_t1_conditions(json_object_get(cs, "Conditions"), cons, err);
    if (rc != TT_OK) {
        json_decref(doc);
        json_decref(params);
        json_decref(cons);
        return rc;
    }
    char desc[512];
    snprintf(desc, sizeof desc,
             "Imported from a T1 search-space file (benchmark %s%s%s%s%s): params from "
             "ConfigurationSpace.TuningParameters, constraints from its Conditions. No tile "
             "program: only the replay: and cmd: backends apply.",
             bench ? bench : "?", kname ? ", kernel " : "", kname ? kname : "",
             lang ? ", language " : "", lang ? lang : "");
    int bad = json_object_set_new(doc, "tiletune", json_integer(1));
    bad |= json_object_set_new(doc, "name", json_string(tname));
    bad |= json_object_set_new(doc, "version", json_string("1"));
    bad |= json_object_set_new(doc, "description", json_string(desc));
    bad |= json_object_set_new(doc, "inputs", json_object());
    bad |= json_object_set_new(doc, "params", params);
    bad |= json_object_set_new(doc, "constraints", cons);
    if (bad) {
        json_decref(doc);
        return tt_oom(err);
    }
    *out = doc;
    return TT_OK;
}

tt_rc tt_t1_file_to_template(const char *path, const char *name, json_t **out, tt_errinfo *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)   /* fopen() allocates: ENOMEM is out of memory, not an I/O error */
        return tt_errf(err, errno == ENOMEM ? TT_ENOMEM : TT_EIO, path, "cannot open: %s",
                       strerror(errno));
    json_error_t je;
    json_t *doc = tt_json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!doc && json_error_code(&je) == json_error_out_of_memory)
        return tt_errf(err, TT_ENOMEM, path, "out of memory");
    if (!doc)
        return tt_errf(err, TT_EJSON, path, "line %d column %d: %s", je.line, je.column, je.text);
    tt_rc rc = tt_t1_to_template(doc, name, out, err);
    json_decref(doc);
    return rc;
}

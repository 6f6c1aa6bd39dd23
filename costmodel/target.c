/* SPDX-License-Identifier: MIT
 * target.c - loads and validates chip description files (the *.json of costmodel/targets).
 *
 * The file format (every field, its unit and its source) is in costmodel/targets/README.md.
 * Validation rejects a missing field, a wrong type, a number outside [TT_TARGET_NUM_MIN,
 * TT_TARGET_NUM_MAX], an alignment above its capacity, an unknown key, a file that is not a
 * regular file and an alias that two files share; every error names the file and the JSON path.
 */
#include "target.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct tt_targets {
    tt_target *v;
    size_t n;
};

/* ---- small JSON helpers: each fills err with the path on failure ---------------------- */

static tt_rc tgt_keys(const json_t *obj, const char *path, const char *const *keys,
                      tt_errinfo *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        int ok = 0;
        for (size_t i = 0; keys[i]; i++)
            if (strcmp(keys[i], k) == 0) { ok = 1; break; }
        if (!ok) return tt_errf(err, TT_ETARGET, path, "unknown key \"%s\"", k);
    }
    return TT_OK;
}

/* "ppath.key" (or "key" at the top) into path[cap]; a path too long for the buffer is cut:
 * it only names the field in an error message. */
static void tgt_path(char *path, size_t cap, const char *ppath, const char *key)
{
    int n = snprintf(path, cap, "%s%s%s", ppath, *ppath ? "." : "", key);
    if (n < 0 && cap) path[0] = '\0';
}

static tt_rc tgt_obj(const json_t *parent, const char *key, const char *ppath, char *path,
                     size_t cap, const json_t **out, tt_errinfo *err)
{
    tgt_path(path, cap, ppath, key);
    const json_t *v = json_object_get(parent, key);
    if (!v) return tt_errf(err, TT_ETARGET, path, "missing field");
    if (!json_is_object(v)) return tt_errf(err, TT_ETARGET, path, "not an object");
    *out = v;
    return TT_OK;
}

/* A positive number (integer or real). */
static tt_rc tgt_num(const json_t *parent, const char *key, const char *ppath, double *out,
                     tt_errinfo *err)
{
    char path[160];
    tgt_path(path, sizeof path, ppath, key);
    const json_t *v = json_object_get(parent, key);
    if (!v) return tt_errf(err, TT_ETARGET, path, "missing field");
    if (!json_is_number(v)) return tt_errf(err, TT_ETARGET, path, "not a number");
    double d = json_number_value(v);
    if (!(d > 0)) return tt_errf(err, TT_ETARGET, path, "must be positive");
    if (d < TT_TARGET_NUM_MIN || d > TT_TARGET_NUM_MAX)
        return tt_errf(err, TT_ETARGET, path, "%g is outside [%g, %g]", d, TT_TARGET_NUM_MIN,
                       TT_TARGET_NUM_MAX);
    *out = d;
    return TT_OK;
}

/* A positive integer that fits an int64. */
static tt_rc tgt_int(const json_t *parent, const char *key, const char *ppath, int64_t *out,
                     tt_errinfo *err)
{
    char path[160];
    tgt_path(path, sizeof path, ppath, key);
    const json_t *v = json_object_get(parent, key);
    if (!v) return tt_errf(err, TT_ETARGET, path, "missing field");
    if (!json_is_integer(v)) return tt_errf(err, TT_ETARGET, path, "not an integer");
    json_int_t i = json_integer_value(v);
    if (i <= 0) return tt_errf(err, TT_ETARGET, path, "must be positive");
    if ((double)i > TT_TARGET_NUM_MAX)
        return tt_errf(err, TT_ETARGET, path, "%lld is larger than %g", (long long)i,
                       TT_TARGET_NUM_MAX);
    *out = (int64_t)i;
    return TT_OK;
}

static tt_rc tgt_str(const json_t *parent, const char *key, const char *ppath, char *out,
                     size_t cap, tt_errinfo *err)
{
    char path[160];
    tgt_path(path, sizeof path, ppath, key);
    const json_t *v = json_object_get(parent, key);
    if (!v) return tt_errf(err, TT_ETARGET, path, "missing field");
    if (!json_is_string(v)) return tt_errf(err, TT_ETARGET, path, "not a string");
    const char *s = json_string_value(v);
    if (!*s || strlen(s) >= cap) return tt_errf(err, TT_ETARGET, path, "empty or longer than %zu bytes", cap - 1);
    memcpy(out, s, strlen(s) + 1);
    return TT_OK;
}

static tt_rc tgt_pathcost(const json_t *parent, const char *key, const char *ppath,
                          tt_pathcost *out, tt_errinfo *err)
{
    static const char *const keys[] = {"bytes_per_cycle", "latency_cycles", NULL};
    char path[160];
    const json_t *o = NULL;
    tt_rc rc = tgt_obj(parent, key, ppath, path, sizeof path, &o, err);
    if (!rc) rc = tgt_keys(o, path, keys, err);
    if (!rc) rc = tgt_num(o, "bytes_per_cycle", path, &out->bytes_per_cycle, err);
    if (!rc) rc = tgt_num(o, "latency_cycles", path, &out->latency_cycles, err);
    return rc;
}

/* ---- sections ------------------------------------------------------------------------- */

int tt_target_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.') return 0;
    return 1;
}

static tt_rc tgt_identity(const json_t *doc, const char *name, tt_target *t, tt_errinfo *err)
{
    const json_t *ver = json_object_get(doc, "tiletune_target");
    if (!ver) return tt_errf(err, TT_ETARGET, "tiletune_target", "missing field");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        return tt_errf(err, TT_ETARGET, "tiletune_target", "unsupported version (this code reads 1)");
    if (json_object_get(doc, "name")) {
        tt_rc rc = tgt_str(doc, "name", "", t->name, sizeof t->name, err);
        if (rc) return rc;
    } else {
        if (!name || !*name || strlen(name) >= sizeof t->name)
            return tt_errf(err, TT_ETARGET, "name", "missing field");
        memcpy(t->name, name, strlen(name) + 1);
    }
    if (!tt_target_name_ok(t->name))
        return tt_errf(err, TT_ETARGET, "name", "\"%s\" is not 1..63 of [A-Za-z0-9._-]%s",
                       t->name, json_object_get(doc, "name") ? "" : " (the file stem)");
    const json_t *al = json_object_get(doc, "aliases");
    if (al) {
        if (!json_is_array(al)) return tt_errf(err, TT_ETARGET, "aliases", "not an array");
        if (json_array_size(al) > TT_TARGET_MAX_ALIASES)
            return tt_errf(err, TT_ETARGET, "aliases", "more than %d aliases", TT_TARGET_MAX_ALIASES);
        for (size_t i = 0; i < json_array_size(al); i++) {
            char p[32];
            snprintf(p, sizeof p, "aliases[%zu]", i);
            const json_t *a = json_array_get(al, i);
            if (!json_is_string(a)) return tt_errf(err, TT_ETARGET, p, "not a string");
            const char *s = json_string_value(a);
            if (!*s || strlen(s) >= sizeof t->aliases[0])
                return tt_errf(err, TT_ETARGET, p, "empty or longer than %zu bytes",
                               sizeof t->aliases[0] - 1);
            if (!tt_target_name_ok(s))
                return tt_errf(err, TT_ETARGET, p, "\"%s\" is not of [A-Za-z0-9._-]", s);
            for (int j = 0; j < t->naliases; j++)
                if (strcasecmp(t->aliases[j], s) == 0)
                    return tt_errf(err, TT_ETARGET, p, "duplicate alias \"%s\"", s);
            if (strcasecmp(t->name, s) == 0)
                return tt_errf(err, TT_ETARGET, p, "alias \"%s\" repeats the name", s);
            memcpy(t->aliases[t->naliases++], s, strlen(s) + 1);
        }
    }
    tt_rc rc = tgt_str(doc, "platform", "", t->platform, sizeof t->platform, err);
    if (rc) return rc;
    if (strcmp(t->platform, "A2") != 0 && strcmp(t->platform, "A3") != 0)
        return tt_errf(err, TT_ETARGET, "platform", "must be \"A2\" or \"A3\"");
    int64_t cc, vc;
    if ((rc = tgt_int(doc, "cube_cores", "", &cc, err))) return rc;
    if ((rc = tgt_int(doc, "vector_cores", "", &vc, err))) return rc;
    if (cc > 4096) return tt_errf(err, TT_ETARGET, "cube_cores", "implausible core count (> 4096)");
    if (vc > 8192)
        return tt_errf(err, TT_ETARGET, "vector_cores", "implausible core count (> 8192)");
    t->cube_cores = (int)cc;
    t->vector_cores = (int)vc;
    return tgt_num(doc, "clock_mhz", "", &t->clock_mhz, err);
}

static const char *const tgt_scope_keys[] = {"L1", "L0A", "L0B", "L0C", "UB", NULL};

static tt_rc tgt_caps(const json_t *doc, tt_target *t, tt_errinfo *err)
{
    static const char *const secs[2] = {"capacity_bytes", "align_bytes"};
    for (int s = 0; s < 2; s++) {
        char path[160];
        const json_t *o = NULL;
        tt_rc rc = tgt_obj(doc, secs[s], "", path, sizeof path, &o, err);
        if (!rc) rc = tgt_keys(o, path, tgt_scope_keys, err);
        if (rc) return rc;
        for (size_t i = 0; tgt_scope_keys[i]; i++) {
            int sc = tt_scope_parse(tgt_scope_keys[i]);
            int64_t v;
            if ((rc = tgt_int(o, tgt_scope_keys[i], path, &v, err))) return rc;
            if (s == 1 && (v & (v - 1)))
                return tt_errf(err, TT_ETARGET, path, "%s: alignment must be a power of two",
                               tgt_scope_keys[i]);
            if (s == 1 && v > t->caps.cap[sc])
                return tt_errf(err, TT_ETARGET, path, "%s: alignment %lld is larger than "
                               "capacity_bytes.%s", tgt_scope_keys[i], (long long)v,
                               tgt_scope_keys[i]);
            if (s == 0) t->caps.cap[sc] = v;
            else t->caps.align[sc] = v;
        }
    }
    return TT_OK;
}

static tt_rc tgt_paths(const json_t *doc, tt_target *t, tt_errinfo *err)
{
    const char *keys[TT_PATH__COUNT + 1];
    for (int p = 0; p < TT_PATH__COUNT; p++) keys[p] = tt_path_name((tt_path)p);
    keys[TT_PATH__COUNT] = NULL;
    char path[160];
    const json_t *o = NULL;
    tt_rc rc = tgt_obj(doc, "paths", "", path, sizeof path, &o, err);
    if (!rc) rc = tgt_keys(o, path, keys, err);
    for (int p = 0; !rc && p < TT_PATH__COUNT; p++)
        rc = tgt_pathcost(o, keys[p], path, &t->path[p], err);
    if (!rc) rc = tgt_pathcost(doc, "gm_l1_nd2nz", "", &t->gm_l1_nd2nz, err);
    return rc;
}

static tt_rc tgt_cube_vector(const json_t *doc, tt_target *t, tt_errinfo *err)
{
    static const char *const ckeys[] = {"fixed_cycles", "c", NULL};
    char path[160], cpath[160];
    const json_t *o = NULL, *c = NULL;
    tt_rc rc = tgt_obj(doc, "cube", "", path, sizeof path, &o, err);
    if (!rc) rc = tgt_keys(o, path, ckeys, err);
    if (!rc) rc = tgt_num(o, "fixed_cycles", path, &t->cube_fixed_cycles, err);
    if (!rc) rc = tgt_obj(o, "c", path, cpath, sizeof cpath, &c, err);
    if (rc) return rc;
    const char *k;
    json_t *v;
    int any = 0;
    json_object_foreach((json_t *)c, k, v) {
        int dt = tt_dtype_parse(k, strlen(k));
        if (dt < 0) return tt_errf(err, TT_ETARGET, cpath, "unknown dtype \"%s\"", k);
        if ((rc = tgt_num(c, k, cpath, &t->cube_c[dt], err))) return rc;
        any = 1;
    }
    if (!any) return tt_errf(err, TT_ETARGET, cpath, "no dtype");

    const char *vkeys[TT_V__COUNT + 1];
    for (int i = 0; i < TT_V__COUNT; i++) vkeys[i] = tt_vclass_name((tt_vclass)i);
    vkeys[TT_V__COUNT] = NULL;
    if ((rc = tgt_obj(doc, "vector", "", path, sizeof path, &o, err))) return rc;
    if ((rc = tgt_keys(o, path, vkeys, err))) return rc;
    for (int i = 0; i < TT_V__COUNT; i++) {
        static const char *const ekeys[] = {"bytes_per_cycle", "head_cycles", NULL};
        const json_t *e = NULL;
        if ((rc = tgt_obj(o, vkeys[i], path, cpath, sizeof cpath, &e, err))) return rc;
        if ((rc = tgt_keys(e, cpath, ekeys, err))) return rc;
        if ((rc = tgt_num(e, "head_cycles", cpath, &t->vec_head_cycles[i], err))) return rc;
        const json_t *b = json_object_get(e, "bytes_per_cycle");
        char bpath[192];
        snprintf(bpath, sizeof bpath, "%s.bytes_per_cycle", cpath);
        if (!b) return tt_errf(err, TT_ETARGET, bpath, "missing field");
        if (!json_is_array(b) || json_array_size(b) != 2)
            return tt_errf(err, TT_ETARGET, bpath, "not an array of 2 numbers [2-byte, 4-byte]");
        for (size_t j = 0; j < 2; j++) {
            const json_t *x = json_array_get(b, j);
            double d = json_is_number(x) ? json_number_value(x) : -1;
            if (!json_is_number(x)) return tt_errf(err, TT_ETARGET, bpath, "[%zu]: not a number", j);
            if (!(d > 0)) return tt_errf(err, TT_ETARGET, bpath, "[%zu]: must be positive", j);
            if (d < TT_TARGET_NUM_MIN || d > TT_TARGET_NUM_MAX)
                return tt_errf(err, TT_ETARGET, bpath, "[%zu]: %g is outside [%g, %g]", j, d,
                               TT_TARGET_NUM_MIN, TT_TARGET_NUM_MAX);
            t->vec_bytes_per_cycle[i][j] = d;
        }
    }
    return TT_OK;
}

/* An optional positive number: *out keeps def when the key is absent. */
static tt_rc tgt_opt_num(const json_t *o, const char *key, const char *path, double def,
                         double *out, tt_errinfo *err)
{
    *out = def;
    if (!json_object_get(o, key)) return TT_OK;
    return tgt_num(o, key, path, out, err);
}

/* An optional integer in [lo, hi]: *out keeps def when the key is absent. */
static tt_rc tgt_opt_int(const json_t *o, const char *key, const char *path, int lo, int hi,
                         int def, int *out, tt_errinfo *err)
{
    *out = def;
    if (!json_object_get(o, key)) return TT_OK;
    int64_t v = 0;
    tt_rc rc = tgt_int(o, key, path, &v, err);
    if (rc) return rc;
    if (v < lo || v > hi) {
        char full[352];
        snprintf(full, sizeof full, "%.160s.%.160s", path, key);
        return tt_errf(err, TT_ETARGET, full, "must be %d..%d", lo, hi);
    }
    *out = (int)v;
    return TT_OK;
}

static tt_rc tgt_memory(const json_t *doc, tt_target *t, tt_errinfo *err)
{
    static const char *const mkeys[] = {"hbm_gbps", "hbm_bypass_gbps", "hbm_write_gbps",
                                        "l2_bytes", "l2_gbps", "l2_miss_factor",
                                        "l2_resident_bytes", "l2_load_gbps", NULL};
    static const char *const okeys[] = {"launch_us", "issue_cycles", "flag_cycles",
                                        "cross_sync_cycles", "mix_launch_extra_us",
                                        "block_cycles", "dma_outstanding", NULL};
    char path[160];
    const json_t *o = NULL;
    tt_rc rc = tgt_obj(doc, "memory", "", path, sizeof path, &o, err);
    if (!rc) rc = tgt_keys(o, path, mkeys, err);
    if (!rc) rc = tgt_num(o, "hbm_gbps", path, &t->hbm_gbps, err);
    if (!rc) rc = tgt_num(o, "hbm_bypass_gbps", path, &t->hbm_bypass_gbps, err);
    if (!rc) rc = tgt_num(o, "hbm_write_gbps", path, &t->hbm_write_gbps, err);
    if (!rc) rc = tgt_num(o, "l2_bytes", path, &t->l2_bytes, err);
    if (!rc) rc = tgt_num(o, "l2_gbps", path, &t->l2_gbps, err);
    if (!rc) rc = tgt_num(o, "l2_miss_factor", path, &t->l2_miss_factor, err);
    if (!rc) rc = tgt_opt_num(o, "l2_resident_bytes", path, t->l2_bytes, &t->l2_resident_bytes, err);
    if (!rc) rc = tgt_opt_num(o, "l2_load_gbps", path, t->l2_gbps, &t->l2_load_gbps, err);
    if (!rc && t->l2_miss_factor < 1)
        rc = tt_errf(err, TT_ETARGET, "memory.l2_miss_factor", "must be >= 1");
    if (rc) return rc;
    if ((rc = tgt_obj(doc, "overheads", "", path, sizeof path, &o, err))) return rc;
    if ((rc = tgt_keys(o, path, okeys, err))) return rc;
    if (!rc) rc = tgt_num(o, "launch_us", path, &t->launch_us, err);
    if (!rc) rc = tgt_num(o, "issue_cycles", path, &t->issue_cycles, err);
    if (!rc) rc = tgt_num(o, "flag_cycles", path, &t->flag_cycles, err);
    if (!rc) rc = tgt_num(o, "cross_sync_cycles", path, &t->cross_sync_cycles, err);
    if (!rc) rc = tgt_num(o, "mix_launch_extra_us", path, &t->mix_launch_extra_us, err);
    if (!rc) rc = tgt_opt_num(o, "block_cycles", path, 0, &t->block_cycles, err);
    if (!rc)
        rc = tgt_opt_int(o, "dma_outstanding", path, 1, TT_TARGET_DMA_OUTSTANDING_MAX,
                         TT_TARGET_DMA_OUTSTANDING, &t->dma_outstanding, err);
    return rc;
}

static const char *const tgt_top_keys[] = {
    "tiletune_target", "name",        "aliases",     "platform", "cube_cores",
    "vector_cores",    "clock_mhz",   "capacity_bytes", "align_bytes", "paths",
    "gm_l1_nd2nz",     "cube",        "vector",      "memory",   "overheads",
    "sources",         "description", NULL};

tt_rc tt_target_from_json(const json_t *doc, const char *name, tt_target *out, tt_errinfo *err)
{
    if (!out) return tt_errf(err, TT_EINVAL, "", "no output");
    memset(out, 0, sizeof *out);
    if (!doc || !json_is_object(doc)) return tt_errf(err, TT_ETARGET, "", "not a JSON object");
    tt_rc rc = tgt_keys(doc, "", tgt_top_keys, err);
    if (!rc) rc = tgt_identity(doc, name, out, err);
    if (!rc) rc = tgt_caps(doc, out, err);
    if (!rc) rc = tgt_paths(doc, out, err);
    if (!rc) rc = tgt_cube_vector(doc, out, err);
    if (!rc) rc = tgt_memory(doc, out, err);
    if (!rc) {
        const json_t *s = json_object_get(doc, "sources");
        if (!s) rc = tt_errf(err, TT_ETARGET, "sources", "missing field");
        else if (!json_is_object(s)) rc = tt_errf(err, TT_ETARGET, "sources", "not an object");
    }
    if (rc) { memset(out, 0, sizeof *out); return rc; }
    out->doc = json_incref((json_t *)doc);
    return TT_OK;
}

void tt_target_close(tt_target *t)
{
    if (!t) return;
    json_decref(t->doc);
    t->doc = NULL;
}

void tt_target_caps(const tt_target *t, tt_caps *caps)
{
    *caps = t->caps;
}

/* ---- sets ------------------------------------------------------------------------------ */

void tt_targets_free(tt_targets *ts)
{
    if (!ts) return;
    for (size_t i = 0; i < ts->n; i++) tt_target_close(&ts->v[i]);
    free(ts->v);
    free(ts);
}

size_t tt_targets_count(const tt_targets *ts) { return ts ? ts->n : 0; }

const tt_target *tt_targets_at(const tt_targets *ts, size_t i)
{
    return (ts && i < ts->n) ? &ts->v[i] : NULL;
}

static int tgt_matches(const tt_target *t, const char *name)
{
    if (strcasecmp(t->name, name) == 0) return 1;
    for (int i = 0; i < t->naliases; i++)
        if (strcasecmp(t->aliases[i], name) == 0) return 1;
    return 0;
}

const tt_target *tt_targets_find(const tt_targets *ts, const char *name)
{
    if (!ts || !name) return NULL;
    for (size_t i = 0; i < ts->n; i++)
        if (tgt_matches(&ts->v[i], name)) return &ts->v[i];
    return NULL;
}

static int tgt_cmp(const void *a, const void *b)
{
    return strcmp(((const tt_target *)a)->name, ((const tt_target *)b)->name);
}

static int tgt_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int tgt_is_json(const char *f)
{
    size_t n = strlen(f);
    return n > 5 && f[0] != '.' && strcmp(f + n - 5, ".json") == 0;
}

/* Prefix err->msg with the file and the JSON path (the header's documented form). */
static tt_rc tgt_file_err(tt_errinfo *err, tt_rc rc, const char *file)
{
    if (!err) return rc;
    char msg[sizeof err->msg + sizeof err->path + 256];
    snprintf(msg, sizeof msg, "%s: %s: %s", file, err->path[0] ? err->path : "(document)", err->msg);
    snprintf(err->msg, sizeof err->msg, "%.*s", (int)sizeof err->msg - 1, msg);
    err->path[0] = '\0';   /* in msg now, after the file: a caller printing "path: msg" repeated it */
    err->rc = rc;
    return rc;
}

static tt_rc tgt_load_file(const char *dir, const char *file, tt_target *t, tt_errinfo *err)
{
    char full[4096], stem[64];
    snprintf(full, sizeof full, "%s/%s", dir, file);
    size_t n = strlen(file) - 5;
    if (n >= sizeof stem) n = sizeof stem - 1;
    memcpy(stem, file, n);
    stem[n] = 0;
    /* O_NONBLOCK: a FIFO named *.json must not block the load (it did: serve hung at
     * start); only a regular file (also behind a symlink) is read */
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        tt_errf(err, TT_EIO, "", "cannot read: %s", strerror(errno));
        return tgt_file_err(err, TT_EIO, file);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        tt_errf(err, TT_ETARGET, "", "not a regular file");
        return tgt_file_err(err, TT_ETARGET, file);
    }
    json_error_t je;
    json_t *doc = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    close(fd);
    if (!doc) {
        if (json_error_code(&je) == json_error_out_of_memory) {
            tt_errf(err, TT_ENOMEM, "", "out of memory");
            return tgt_file_err(err, TT_ENOMEM, file);
        }
        tt_errf(err, TT_ETARGET, "", "not JSON: line %d column %d: %s", je.line, je.column, je.text);
        return tgt_file_err(err, TT_ETARGET, file);
    }
    tt_rc rc = tt_target_from_json(doc, stem, t, err);
    json_decref(doc);
    if (rc) return tgt_file_err(err, rc, file);
    return TT_OK;
}

/* The target just loaded (the last of the set) may not answer to a name that an earlier
 * one answers to (names and aliases, case-insensitive). */
static tt_rc tgt_check_unique(const tt_targets *ts, const char *file, tt_errinfo *err)
{
    const tt_target *a = &ts->v[ts->n - 1];
    for (size_t j = 0; j + 1 < ts->n; j++) {
        const tt_target *b = &ts->v[j];
        const char *clash = NULL;
        int idx = -1;
        if (tgt_matches(b, a->name)) clash = a->name;
        for (int k = 0; !clash && k < a->naliases; k++)
            if (tgt_matches(b, a->aliases[k])) { clash = a->aliases[k]; idx = k; }
        if (clash) {
            char path[32];
            if (idx >= 0) snprintf(path, sizeof path, "aliases[%d]", idx);
            else snprintf(path, sizeof path, "name");
            tt_errf(err, TT_ETARGET, path, "\"%s\" is already used by target %s", clash, b->name);
            return tgt_file_err(err, TT_ETARGET, file);
        }
    }
    return TT_OK;
}

tt_rc tt_targets_load_dir(const char *dir, tt_targets **out, tt_errinfo *err)
{
    if (!out) return tt_errf(err, TT_EINVAL, "", "no output");
    *out = NULL;
    if (!dir) return tt_errf(err, TT_EINVAL, "", "no directory");
    DIR *d = opendir(dir);
    if (!d) return tt_errf(err, TT_EIO, "", "%s: %s", dir, strerror(errno));
    char **files = NULL;
    size_t nf = 0, capf = 0;
    tt_rc rc = TT_OK;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!tgt_is_json(de->d_name)) continue;
        if (nf == capf) {
            size_t nc = capf ? 2 * capf : 16;
            char **nfiles = realloc(files, nc * sizeof *files);
            if (!nfiles) { rc = TT_ENOMEM; break; }
            files = nfiles;
            capf = nc;
        }
        if (!(files[nf] = strdup(de->d_name))) { rc = TT_ENOMEM; break; }
        nf++;
    }
    closedir(d);
    tt_targets *ts = NULL;
    if (!rc && !(ts = calloc(1, sizeof *ts))) rc = TT_ENOMEM;
    if (!rc && nf && !(ts->v = calloc(nf, sizeof *ts->v))) rc = TT_ENOMEM;
    if (rc == TT_ENOMEM) tt_errf(err, rc, "", "out of memory loading %s", dir);
    /* in name order, so that the file reported for a clash does not depend on readdir */
    if (nf) qsort(files, nf, sizeof *files, tgt_cmp_str);
    for (size_t i = 0; !rc && i < nf; i++) {
        rc = tgt_load_file(dir, files[i], &ts->v[ts->n], err);
        if (!rc) ts->n++;
        if (!rc) rc = tgt_check_unique(ts, files[i], err);
    }
    for (size_t i = 0; i < nf; i++) free(files[i]);
    free(files);
    if (!rc && ts->n) qsort(ts->v, ts->n, sizeof *ts->v, tgt_cmp);
    if (rc) { tt_targets_free(ts); return rc; }
    *out = ts;
    return TT_OK;
}

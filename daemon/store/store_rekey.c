/* SPDX-License-Identifier: MIT
 * store_rekey.c - the data step of migration 003: every stored trial gets its config key,
 * hash and JSON in the canonical form of compiler/template_values.c (params in byte order of
 * their names), and trials that were stored twice for one config under two orders are merged.
 *
 * Before 003 a config's key followed the template's declared param order, which changed when a
 * stored template was reloaded (sorted keys) after a restart: the same config was then stored
 * again under a second key.  Here a trial whose key is not canonical is either rewritten in
 * place, or, when the canonical row of its measurement key exists already, merged into it:
 * every reference (job_trials, best, jobs.best_trial, baselines) moves to the kept row and the
 * duplicate is deleted.  Runs inside the migration's transaction (all or nothing); written
 * once for both engines.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "store_q.h"


typedef struct tt_rk_row {
    int64_t id, hash;
    char *thash, *pkey, *target, *fp, *ckey;
} tt_rk_row;

typedef struct tt_rk_seg {
    const char *name;
    size_t nlen;
    int64_t value;
} tt_rk_seg;

static int tt_rk_cmp(const void *a, const void *b)
{
    const tt_rk_seg *x = a, *y = b;
    size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
    int c = memcmp(x->name, y->name, n);
    if (c) return c;
    return (x->nlen > y->nlen) - (x->nlen < y->nlen);
}

/* Split "a=1,b=2" into segments sorted by name; 0 on success, -1 when a segment is not
 * name=integer (such a row is left as it is). */
static int tt_rk_split(const char *key, tt_rk_seg *seg, size_t cap, size_t *n)
{
    *n = 0;
    const char *p = key;
    while (*p) {
        const char *eq = strchr(p, '=');
        const char *comma = strchr(p, ',');
        if (!eq || (comma && comma < eq) || eq == p || *n == cap) return -1;
        char *end;
        long long v = strtoll(eq + 1, &end, 10);
        if (end == eq + 1 || (*end && *end != ',')) return -1;
        seg[*n] = (tt_rk_seg){p, (size_t)(eq - p), (int64_t)v};
        (*n)++;
        p = *end ? end + 1 : end;
    }
    qsort(seg, *n, sizeof *seg, tt_rk_cmp);
    return *n ? 0 : -1;
}

/* Canonical key, hash (as tt_tmpl_config_hash) and JSON of sorted segments. */
static tt_rc tt_rk_canon(const tt_rk_seg *seg, size_t n, char **key, uint64_t *hash,
                         char **json)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++) len += seg[i].nlen + 24;
    *key = malloc(len);
    json_t *o = json_object();
    if (!*key || !o) {
        json_decref(o);
        return TT_ENOMEM;
    }
    uint64_t h = 14695981039346656037ULL;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        at += (size_t)snprintf(*key + at, len - at, "%s%.*s=%lld", i ? "," : "",
                               (int)seg[i].nlen, seg[i].name, (long long)seg[i].value);
        uint64_t v = (uint64_t)seg[i].value;
        for (int b = 0; b < 8; b++) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 1099511628211ULL;
        }
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)seg[i].nlen, seg[i].name);
        json_object_set_new(o, name, json_integer((json_int_t)seg[i].value));
    }
    *hash = h;
    *json = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return *json ? TT_OK : TT_ENOMEM;
}

static void tt_rk_free(tt_rk_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].thash);
        free(rows[i].pkey);
        free(rows[i].target);
        free(rows[i].fp);
        free(rows[i].ckey);
    }
    free(rows);
}

static tt_rc tt_rk_row_of(tt__res *r, void *e)
{
    tt_rk_row *w = e;
    int oom = 0;
    w->id = TT__CI(r, 0);
    w->thash = tt__dup(TT__CT(r, 1), &oom);
    w->pkey = tt__dup(TT__CT(r, 2), &oom);
    w->target = tt__dup(TT__CT(r, 3), &oom);
    w->fp = tt__dup(TT__CT(r, 4), &oom);
    w->ckey = tt__dup(TT__CT(r, 5), &oom);
    w->hash = TT__CI(r, 6);
    return oom ? TT_ENOMEM : TT_OK;
}
static void tt_rk_row_clear(void *e)
{
    tt_rk_row *w = e;
    free(w->thash);
    free(w->pkey);
    free(w->target);
    free(w->fp);
    free(w->ckey);
}

/* Move every reference of trial dup to keep, then delete dup. */
static tt_rc tt_rk_merge(tt_store *s, int64_t dup, int64_t keep)
{
    static const char *const sql[] = {
        "UPDATE job_trials SET trial_id = $2 WHERE trial_id = $1",
        "UPDATE jobs SET best_trial = $2 WHERE best_trial = $1",
        "UPDATE best SET trial_id = $2 WHERE trial_id = $1",
        "UPDATE baselines SET trial_id = $2 WHERE trial_id = $1",
    };
    tt__param p[] = {PI(dup), PI(keep)};
    tt_rc rc = TT_OK;
    for (size_t i = 0; i < sizeof sql / sizeof sql[0] && !rc; i++)
        rc = tt__q_exec(s, -1, sql[i], NULL, p, NP(p), NULL);
    if (!rc) rc = tt__q_exec(s, -1, "DELETE FROM trials WHERE id = $1", NULL, p, 1, NULL);
    return rc;
}

static tt_rc tt_rk_one(tt_store *s, const tt_rk_row *w, size_t *merged)
{
    tt_rk_seg seg[256];
    size_t n;
    if (tt_rk_split(w->ckey, seg, sizeof seg / sizeof seg[0], &n) != 0) return TT_OK;
    char *key = NULL, *json = NULL;
    uint64_t h;
    tt_rc rc = tt_rk_canon(seg, n, &key, &h, &json);
    int64_t hs;
    memcpy(&hs, &h, sizeof hs);
    if (rc || (strcmp(key, w->ckey) == 0 && hs == w->hash)) goto out;
    tt__param pf[] = {PT(w->thash), PT(w->pkey), PT(w->target), PT(w->fp), PI(hs), PI(w->id)};
    tt__res r;
    rc = tt__q_first(s, -1, "SELECT id FROM trials WHERE template_hash = $1 AND "
                     "problem_key = $2 AND target = $3 AND backend_fp = $4 AND "
                     "config_hash = $5 AND id <> $6", NULL, pf, NP(pf), &r);
    if (rc == TT_OK) {
        int64_t keep = TT__CI(&r, 0);
        if (!(rc = tt__q_end(&r))) rc = tt_rk_merge(s, w->id, keep);
        if (!rc) (*merged)++;
    } else if (rc == TT_ENOTFOUND) {
        tt__param pu[] = {PI(w->id), PT(key), PI(hs), PT(json)};
        rc = tt__q_exec(s, -1, "UPDATE trials SET config_key = $2, config_hash = $3, "
                        "config_json = $4 WHERE id = $1", NULL, pu, NP(pu), NULL);
    }
out:
    free(key);
    free(json);
    return rc;
}

tt_rc tt__store_rekey(tt_store *s, size_t *merged)
{
    *merged = 0;
    tt__res r;
    tt_rc rc = tt__q_start(s, -1, "SELECT id, template_hash, problem_key, target, backend_fp, "
                           "config_key, config_hash FROM trials ORDER BY id", NULL, NULL, 0, &r);
    if (rc) return rc;
    void *v = NULL;
    size_t n = 0;
    rc = tt__store_collect(s, &r, sizeof(tt_rk_row), tt_rk_row_of, tt_rk_row_clear, &v, &n);
    tt_rk_row *rows = v;
    for (size_t i = 0; i < n && !rc; i++) rc = tt_rk_one(s, &rows[i], merged);
    tt_rk_free(rows, n);
    return rc;
}

/* SPDX-License-Identifier: MIT
 * store_meta.c - tt_store calibrations, API tokens and named baselines (pinned best rows for
 * CI regression checks); helpers in store_internal.h.
 */
#include <stdlib.h>
#include <string.h>

#include "store_q.h"

#define BASE_COLS                                                                         \
    "name, template_name, template_hash, target, backend_fp, problem_key, problem_json, "   \
    "config_json, trial_id, median_us, spread_us, created_at"

enum {
    Q_CALIB_PUT, Q_CALIB_GET, Q_TOKEN_UNNAME, Q_TOKEN_PUT, Q_TOKEN_FIND, Q_BASE_DEL, Q_BASE_INS, Q_BASE_GET,
    Q_BASE_LIST,
    Q__COUNT
};
_Static_assert(TT__Q_STORE_META + Q__COUNT <= TT__Q_MAX, "raise TT__Q_MAX");

static const tt__qdef tt_q[Q__COUNT] = {
    [Q_CALIB_PUT] = {"INSERT INTO calibrations (target, backend_fp, calib_json, npoints, "
                     "error, updated_at) VALUES ($1, $2, $3, $4, $5, tt_now()) ON CONFLICT "
                     "(target, backend_fp) DO UPDATE SET calib_json = excluded.calib_json, "
                     "npoints = excluded.npoints, error = excluded.error, "
                     "updated_at = excluded.updated_at", NULL},
    [Q_CALIB_GET] = {"SELECT calib_json FROM calibrations WHERE target = $1 AND "
                     "backend_fp = $2", NULL},
    [Q_TOKEN_UNNAME] = {"DELETE FROM tokens WHERE sha256 = $2 AND name <> $1", NULL},
    [Q_TOKEN_PUT] = {"INSERT INTO tokens (name, sha256, scopes, created_at) VALUES ($1, $2, "
                     "$3, tt_now()) ON CONFLICT (name) DO UPDATE SET sha256 = "
                     "excluded.sha256, scopes = excluded.scopes", NULL},
    [Q_TOKEN_FIND] = {"SELECT name, scopes FROM tokens WHERE sha256 = $1", NULL},
    [Q_BASE_DEL] = {"DELETE FROM baselines WHERE name = $1 AND template_name = $2 AND "
                    "target = $3 AND ($4 IS NULL OR problem_key = $4) AND ($5 IS NULL OR "
                    "backend_fp = $5)", NULL},
    [Q_BASE_INS] = {"INSERT INTO baselines (name, template_name, template_hash, target, "
                    "backend_fp, problem_key, problem_json, config_json, trial_id, median_us, "
                    "spread_us, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
                    "$11, tt_now()) ON CONFLICT DO NOTHING", NULL},
    [Q_BASE_GET] = {"SELECT " BASE_COLS " FROM baselines WHERE name = $1 AND "
                    "template_name = $2 AND problem_key = $3 AND target = $4 AND "
                    "($5 IS NULL OR backend_fp = $5) ORDER BY median_us LIMIT 1", NULL},
    [Q_BASE_LIST] = {"SELECT " BASE_COLS " FROM baselines WHERE name = $1 ORDER BY "
                     "template_name, target, problem_key, backend_fp", NULL},
};

#define TT__Q_BASE TT__Q_STORE_META   /* this file's first query id (store_q.h) */

/* ---- calibrations ------------------------------------------------------------------- */
tt_rc tt_store_calib_put(tt_store *s, const char *target, const char *backend_fp,
                         const char *calib_json, int npoints, double error)
{
    if (!target || !backend_fp || !calib_json) return TT_EINVAL;
    tt__param p[] = {PT(target), PT(backend_fp), PT(calib_json), PI(npoints), PF(error)};
    tt__store_lock(s);
    return tt__store_unlock(s, q_exec(s, Q_CALIB_PUT, p, NP(p), NULL));
}

/* A single text column of a one-row query, malloc'd into *out. */
static tt_rc tt_text1(tt_store *s, int id, const tt__param *p, int np, char **out)
{
    *out = NULL;
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = q_first(s, id, p, np, &r);
    if (rc) return tt__store_unlock(s, rc);
    int oom = 0;
    *out = tt__dup(C_T(&r, 0), &oom);
    rc = tt__q_end(&r);
    if (!rc && oom) rc = TT_ENOMEM;
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return tt__store_unlock(s, rc);
}

tt_rc tt_store_calib_get(tt_store *s, const char *target, const char *backend_fp,
                         char **calib_json)
{
    *calib_json = NULL;
    if (!target || !backend_fp) return TT_EINVAL;
    tt__param p[] = {PT(target), PT(backend_fp)};
    return tt_text1(s, Q_CALIB_GET, p, NP(p), calib_json);
}

/* ---- tokens ------------------------------------------------------------------------- */
tt_rc tt_store_token_put(tt_store *s, const char *name, const char *sha256_hex,
                         const char *scopes)
{
    if (!name || !*name || !sha256_hex || !*sha256_hex) return TT_EINVAL;
    tt__param p[] = {PT(name), PT(sha256_hex), PT(scopes ? scopes : "")};
    tt__store_lock(s);
    /* a secret renamed in the config: the old name's row goes (the secret is unique) */
    tt_rc rc = q_exec(s, Q_TOKEN_UNNAME, p, 2, NULL);
    if (!rc) rc = q_exec(s, Q_TOKEN_PUT, p, NP(p), NULL);
    return tt__store_unlock(s, rc);
}

tt_rc tt_store_token_find(tt_store *s, const char *sha256_hex, char name[64], char scopes[64])
{
    if (!sha256_hex) return TT_EINVAL;
    tt__param p[] = {PT(sha256_hex)};
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = q_first(s, Q_TOKEN_FIND, p, NP(p), &r);
    if (rc) return tt__store_unlock(s, rc);
    if (name) tt__cpy(name, 64, C_T(&r, 0));
    if (scopes) tt__cpy(scopes, 64, C_T(&r, 1));
    return tt__store_unlock(s, tt__q_end(&r));
}

/* ---- baselines ---------------------------------------------------------------------- */
void tt_baseline_clear(tt_baseline *b)
{
    if (!b) return;
    tt__key_free(TT__KEY_OF(b));
    memset(b, 0, sizeof *b);
}

static tt_rc tt_baseline_from_row(tt__res *r, tt_baseline *b)
{
    int oom = 0;
    memset(b, 0, sizeof *b);
    tt__cpy(b->name, sizeof b->name, C_T(r, 0));
    tt__key_from_row(r, 1, TT__KEY_OF(b), &oom);
    b->created_at = C_F(r, 11);
    if (oom) {
        tt_baseline_clear(b);
        return TT_ENOMEM;
    }
    return TT_OK;
}

tt_rc tt_store_baseline_put(tt_store *s, const char *name, const tt_best_query *q,
                            size_t *npinned)
{
    if (npinned) *npinned = 0;
    if (!name || !*name || !q || !q->template_name || !q->target) return TT_EINVAL;
    tt_best *rows = NULL;
    size_t n = 0;
    tt_rc rc = tt__store_tx_begin(s);
    if (rc) return rc;
    if ((rc = tt__store_best_rows(s, q, &rows, &n))) return tt__store_tx_end(s, rc);
    if (n == 0) {
        tt__store_fail(s, TT_ENOTFOUND, "no best row to pin");
        return tt__store_tx_end(s, TT_ENOTFOUND);
    }
    tt__param d[] = {PT(name), PT(q->template_name), PT(q->target), PT(q->problem_key),
                     PT(q->backend_fp)};
    rc = q_exec(s, Q_BASE_DEL, d, NP(d), NULL);
    size_t pinned = 0;
    /* rows come fastest first per problem: the first of a key wins, later hashes are
     * skipped by ON CONFLICT DO NOTHING */
    for (size_t i = 0; !rc && i < n; i++) {
        const tt_best *b = &rows[i];
        tt__param p[] = {PT(name), PT(b->template_name), PT(b->template_hash), PT(b->target),
                         PT(b->backend_fp), PT(b->problem_key), PT(b->problem_json),
                         PT(b->config_json), PI(b->trial_id), PF(b->median_us),
                         PF(b->spread_us)};
        int64_t ch = 0;
        rc = q_exec(s, Q_BASE_INS, p, NP(p), &ch);
        pinned += (size_t)ch;
    }
    for (size_t i = 0; i < n; i++) tt_best_clear(&rows[i]);
    free(rows);
    if (!rc && npinned) *npinned = pinned;
    return tt__store_tx_end(s, rc);
}

tt_rc tt_store_baseline_get(tt_store *s, const char *name, const char *template_name,
                            const char *problem_key, const char *target,
                            const char *backend_fp, tt_baseline *out)
{
    memset(out, 0, sizeof *out);
    if (!name || !template_name || !problem_key || !target) return TT_EINVAL;
    tt__param p[] = {PT(name), PT(template_name), PT(problem_key), PT(target),
                     PT(backend_fp)};
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = q_first(s, Q_BASE_GET, p, NP(p), &r);
    if (rc) return tt__store_unlock(s, rc);
    rc = tt_baseline_from_row(&r, out);
    tt_rc rc2 = tt__q_end(&r);
    if (!rc && rc2) tt_baseline_clear(out);
    return tt__store_unlock(s, rc ? rc : rc2);
}

static tt_rc tt_baseline_row(tt__res *r, void *e) { return tt_baseline_from_row(r, e); }
static void tt_baseline_clear_v(void *e) { tt_baseline_clear(e); }

tt_rc tt_store_baseline_list(tt_store *s, const char *name, tt_baseline **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    if (!name) return TT_EINVAL;
    tt__param p[] = {PT(name)};
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = q_start(s, Q_BASE_LIST, p, NP(p), &r);
    if (rc) return tt__store_unlock(s, rc);
    void *v = NULL;
    rc = tt__store_collect(s, &r, sizeof(tt_baseline), tt_baseline_row, tt_baseline_clear_v,
                           &v, n);
    *rows = v;
    return tt__store_unlock(s, rc);
}

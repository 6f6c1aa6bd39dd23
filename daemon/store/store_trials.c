/* SPDX-License-Identifier: MIT
 * store_trials.c - tt_store measurements: trial record/lookup/list/stats, group commit and
 * the best row's writes (the queries of store.h after jobs; re-measurement appends are
 * store_remeasure.c, reading the best rows store_best.c, calibrations, tokens and baselines
 * store_meta.c; helpers in store_internal.h and store_trials_int.h).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "store_q.h"
#include "store_trials_int.h"

#define TRIAL_INSERT                                                                      \
    "INSERT INTO trials (key_id, config_hash, config_key, config_json, status, error, "     \
    "median_us, spread_us, min_us, samples_json, predicted_us, compile_s, measure_s, "      \
    "job_id, measured_by, samples_z, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "  \
    "$9, $10, $11, $12, $13, $14, $15, $16, "
#define TRIAL_UNIQUE "(key_id, config_hash)"
enum {
    Q_TRIAL_LOOKUP, Q_JT_GET, Q_JOB_PROBLEM, Q_TRIAL_INSERT, Q_JT_INSERT, Q_JOB_DONE,
    Q_JOB_BEST, Q_BEST_UPSERT, Q_TRIAL_LIST, Q_TRIAL_COUNT, Q_JOB_EXISTS, Q_TRIAL_STATS,
    Q_JOB_BEST_SET, Q_JT_MAX, Q_JT_INSERT_N, Q_KEY_GET, Q_KEY_PUT,
    Q__COUNT
};
_Static_assert(TT__Q_STORE_TRIALS + Q__COUNT <= TT__Q_STORE_REMEASURE,
               "store_remeasure.c query ids start there");

static const tt__qdef tt_q[Q__COUNT] = {
    [Q_TRIAL_LOOKUP] = {"SELECT " TRIAL_COLS " FROM trial_keys k JOIN trials t ON t.key_id = "
                        "k.id WHERE k.template_hash = $1 AND k.problem_key = $2 AND k.target "
                        "= $3 AND k.backend_fp = $4 AND t.config_hash = $5", NULL},
    [Q_JT_GET] = {"SELECT " TRIAL_COLS ", jt.seq, jt.reused FROM job_trials jt JOIN trials t "
                  "ON t.id = jt.trial_id WHERE jt.job_id = $1 AND jt.seq = $2", NULL},
    /* PostgreSQL: lock the job row first, so that concurrent records for one job serialise
     * and each counts the other's job_trials rows (SQLite has one writer anyway). */
    [Q_JOB_PROBLEM] = {"SELECT problem_json FROM jobs WHERE id = $1",
                       "SELECT problem_json FROM jobs WHERE id = $1 FOR UPDATE"},
    /* SQLite: no RETURNING (it costs an ephemeral table per row): the rowid and the
     * clock ($17, tt_now() of this process) are known without it */
    [Q_TRIAL_INSERT] = {TRIAL_INSERT "$17) ON CONFLICT " TRIAL_UNIQUE " DO NOTHING",
                        TRIAL_INSERT "tt_now()) ON CONFLICT " TRIAL_UNIQUE " DO NOTHING "
                        "RETURNING id, created_at"},
    [Q_JT_INSERT] = {"INSERT INTO job_trials (job_id, seq, trial_id, reused) VALUES "
                     "($1, $2, $3, $4) ON CONFLICT (job_id, seq) DO NOTHING", NULL},
    [Q_JOB_DONE] = {"UPDATE jobs SET done = (SELECT COUNT(*) FROM job_trials WHERE "
                    "job_id = $1) WHERE id = $1", NULL},
    [Q_JOB_BEST] = {"UPDATE jobs SET best_trial = $2, best_us = $3, best_pred_us = $4, "
                    "best_config_json = $5 WHERE id = $1 AND (best_trial = 0 OR best_us > $3)",
                    NULL},
    [Q_BEST_UPSERT] = {BEST_PUT " WHERE excluded.median_us < best.median_us", NULL},
    [Q_TRIAL_LIST] = {"SELECT " TRIAL_COLS ", jt.seq, jt.reused FROM job_trials jt JOIN "
                      "trials t ON t.id = jt.trial_id WHERE jt.job_id = $1 ORDER BY jt.seq "
                      "LIMIT $2 OFFSET $3", NULL},
    [Q_TRIAL_COUNT] = {"SELECT COUNT(*) FROM job_trials WHERE job_id = $1", NULL},
    [Q_JOB_EXISTS] = {"SELECT id FROM jobs WHERE id = $1", NULL},
    [Q_TRIAL_STATS] = {"SELECT COALESCE(j.backend, k.backend_fp), t.status, COUNT(*) FROM "
                       "trials t JOIN trial_keys k ON k.id = t.key_id LEFT JOIN jobs j ON "
                       "j.id = t.job_id GROUP BY 1, 2 ORDER BY 1, 2", NULL},
    [Q_JOB_BEST_SET] = {"UPDATE jobs SET best_trial = $2, best_us = $3, best_pred_us = $4, "
                        "best_config_json = $5 WHERE id = $1", NULL},
    [Q_JT_MAX] = {"SELECT COALESCE(MAX(seq), 0) FROM job_trials WHERE job_id = $1", NULL},
    /* a batch's links, TT_PEND_LINKS at a time: $1 the job, then (seq, trial_id, reused) */
    [Q_JT_INSERT_N] = {"INSERT INTO job_trials (job_id, seq, trial_id, reused) VALUES "
                       "($1, $2, $3, $4), ($1, $5, $6, $7), ($1, $8, $9, $10), "
                       "($1, $11, $12, $13), ($1, $14, $15, $16), ($1, $17, $18, $19), "
                       "($1, $20, $21, $22), ($1, $23, $24, $25), ($1, $26, $27, $28), "
                       "($1, $29, $30, $31) ON CONFLICT (job_id, seq) DO NOTHING", NULL},
    [Q_KEY_GET] = {"SELECT id FROM trial_keys WHERE template_hash = $1 AND problem_key = $2 "
                   "AND target = $3 AND backend_fp = $4", NULL},
    [Q_KEY_PUT] = {"INSERT INTO trial_keys (template_hash, problem_key, target, backend_fp) "
                   "VALUES ($1, $2, $3, $4) ON CONFLICT (template_hash, problem_key, target, "
                   "backend_fp) DO NOTHING", NULL},
};

#define TT__Q_BASE TT__Q_STORE_TRIALS   /* this file's first query id (store_q.h) */

static int64_t tt_u2s(uint64_t u)
{
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static uint64_t tt_s2u(int64_t v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* ---- trials ------------------------------------------------------------------------- */
void tt_trial_clear(tt_trial *t)
{
    if (!t) return;
    free(t->config_key);
    free(t->config_json);
    free(t->error);
    free(t->samples_json);
    memset(t, 0, sizeof *t);
}

/* t->samples_json from the compact samples z (schema 005): their JSON text. */
static tt_rc tt_trial_samples_text(tt_trial *t, const char *z)
{
    double v[TT__SAMPLES_Z_MAXN];
    size_t n = tt__samples_unpack(z, v, TT__SAMPLES_Z_MAXN);
    if (n == 0) return TT_EDB;
    t->samples_json = tt_json_reals(v, n);
    return t->samples_json ? TT_OK : TT_ENOMEM;
}

/* Declared in store_trials_int.h. */
tt_rc tt__trial_from_row(tt__res *r, tt_trial *t)
{
    int oom = 0;
    memset(t, 0, sizeof *t);
    t->id = C_I(r, 0);
    t->job_id = C_I(r, 1);
    t->config_key = tt__dup(C_T(r, 2), &oom);
    t->config_hash = tt_s2u(C_I(r, 3));
    t->config_json = tt__dup(C_T(r, 4), &oom);
    const char *st = C_T(r, 5);
    t->status = st ? tt_rc_from_code(st) : TT_EINTERNAL;
    t->error = tt__dup(C_T(r, 6), &oom);
    t->median_us = C_F(r, 7);
    t->spread_us = C_F(r, 8);
    t->min_us = C_F(r, 9);
    t->samples_json = tt__dup(C_T(r, 10), &oom);
    t->predicted_us = C_F(r, 11);
    t->compile_s = C_F(r, 12);
    t->measure_s = C_F(r, 13);
    t->created_at = C_F(r, 14);
    tt__cpy(t->measured_by, sizeof t->measured_by, C_T(r, 15));
    const char *z = C_T(r, 16);
    tt_rc rc = oom ? TT_ENOMEM : !t->samples_json && z ? tt_trial_samples_text(t, z) : TT_OK;
    if (rc) {
        tt_trial_clear(t);
        return rc == TT_EDB ? tt__store_fail(r->s, rc, "trial %lld: malformed samples_z",
                                             (long long)C_I(r, 0))
                            : rc;
    }
    return TT_OK;
}

int tt__key_ok(const tt_trial_key *k)
{
    return k && k->template_hash && k->problem_key && k->target && k->backend_fp;
}

/* The measurement under (k, hash) into *out: TT_OK, TT_ENOTFOUND or an error. */
static tt_rc tt_trial_find(tt_store *s, const tt_trial_key *k, uint64_t config_hash,
                           tt_trial *out)
{
    tt__param p[] = {PT(k->template_hash), PT(k->problem_key), PT(k->target),
                     PT(k->backend_fp), PI(tt_u2s(config_hash))};
    tt__res r;
    tt_rc rc = q_first(s, Q_TRIAL_LOOKUP, p, NP(p), &r);
    if (rc) return rc;
    rc = tt__trial_from_row(&r, out);
    tt_rc rc2 = tt__q_end(&r);
    if (!rc && rc2) tt_trial_clear(out);
    return rc ? rc : rc2;
}

tt_rc tt_store_trial_lookup(tt_store *s, const tt_trial_key *k, uint64_t config_hash,
                            tt_trial *out)
{
    memset(out, 0, sizeof *out);
    if (!tt__key_ok(k)) return TT_EINVAL;
    tt__store_lock_raw(s);   /* reads trials only: the batch's deferred updates may wait */
    return tt__store_unlock(s, tt_trial_find(s, k, config_hash, out));
}

/* The trial already linked at (job, seq), for a resumed job: TT_OK / TT_ENOTFOUND / error. */
static tt_rc tt_trial_at(tt_store *s, int64_t job_id, int64_t seq, tt_trial *out)
{
    tt__param p[] = {PI(job_id), PI(seq)};
    tt__res r;
    tt_rc rc = q_first(s, Q_JT_GET, p, NP(p), &r);
    if (rc) return rc;
    rc = tt__trial_from_row(&r, out);
    if (!rc) {
        out->seq = C_I(&r, TRIAL_NCOLS);
        out->reused = (int)C_I(&r, TRIAL_NCOLS + 1);
    }
    tt_rc rc2 = tt__q_end(&r);
    if (!rc && rc2) tt_trial_clear(out);
    return rc ? rc : rc2;
}

/* ---- measurement keys (schema 006: trial_keys) ---------------------------------------- */
void tt__store_key_forget(tt_store *s)
{
    free(s->kid_text);
    s->kid_text = NULL;
    s->kid = 0;
}

/* The four texts of k, in the order kid_text holds them. */
#define TT_KEY_FIELDS(k) {(k)->template_hash, (k)->problem_key, (k)->target, (k)->backend_fp}

/* 1 when the cached id is k's: its four texts, back to back, equal k's. */
static int tt_key_cached(const tt_store *s, const tt_trial_key *k)
{
    const char *p = s->kid_text;
    if (!p) return 0;
    const char *f[] = TT_KEY_FIELDS(k);
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(p, f[i]) != 0) return 0;
        p += strlen(p) + 1;
    }
    return 1;
}

static void tt_key_remember(tt_store *s, const tt_trial_key *k, int64_t id)
{
    const char *f[] = TT_KEY_FIELDS(k);
    size_t l[4], n = 0;
    for (size_t i = 0; i < 4; i++) n += (l[i] = strlen(f[i])) + 1;
    char *t = malloc(n);
    tt__store_key_forget(s);
    if (!t) return;           /* no cache: the next record looks the key up again */
    s->kid_text = t;
    s->kid = id;
    for (size_t i = 0; i < 4; i++) {
        memcpy(t, f[i], l[i] + 1);
        t += l[i] + 1;
    }
}

/* k's trial_keys id into *id, the row inserted first when k is new (inside the caller's
 * transaction: a rollback takes it back, and forgets the cached id with it). */
static tt_rc tt_key_id(tt_store *s, const tt_trial_key *k, int64_t *id)
{
    if (tt_key_cached(s, k)) {
        *id = s->kid;
        return TT_OK;
    }
    tt__param p[] = {PT(k->template_hash), PT(k->problem_key), PT(k->target),
                     PT(k->backend_fp)};
    tt__res r;
    tt_rc rc = q_first(s, Q_KEY_GET, p, NP(p), &r);
    if (rc == TT_ENOTFOUND) {   /* new: insert it (a concurrent writer may have, too) */
        if ((rc = q_exec(s, Q_KEY_PUT, p, NP(p), NULL))) return rc;
        rc = q_first(s, Q_KEY_GET, p, NP(p), &r);
        if (rc == TT_ENOTFOUND)
            return tt__store_fail(s, TT_EDB, "trial key inserted but not found");
    }
    if (rc) return rc;
    *id = C_I(&r, 0);
    if ((rc = tt__q_end(&r))) return rc;
    tt_key_remember(s, k, *id);
    return TT_OK;
}

/* Insert t under k, or find the row a concurrent writer inserted first (look first: look
 * it up before trying the insert).  On TT_OK either t->id is set (new), or *stored holds the
 * existing measurement (stored->id != 0). */
static tt_rc tt_trial_insert(tt_store *s, const tt_trial_key *k, int64_t job_id, tt_trial *t,
                             tt_trial *stored, int look_first)
{
    tt_rc rc = look_first ? tt_trial_find(s, k, t->config_hash, stored) : TT_ENOTFOUND;
    if (rc != TT_ENOTFOUND) return rc;
    int64_t key_id = 0;
    if ((rc = tt_key_id(s, k, &key_id))) return rc;
    int ok = t->status == TT_OK, pg = s->engine == TT_STORE_POSTGRES;
    double now = pg ? 0 : tt__store_now();
    char z[TT__SAMPLES_Z_CAP(TT__SAMPLES_Z_MAXN)];
    char *text = NULL;   /* samples too many for samples_z: their JSON text */
    const char *sj = t->samples_json, *sz = NULL;
    if (!sj && t->nsamples > 0 && t->samples_us) {
        if (tt__samples_pack(t->samples_us, t->nsamples, z, sizeof z)) sz = z;
        else if (!(sj = text = tt_json_reals(t->samples_us, t->nsamples))) return TT_ENOMEM;
    }
    /* the texts stay valid until the insert's finish below: bound without a copy */
    tt__param p[] = {PI(key_id), PI(tt_u2s(t->config_hash)), TT__PTK(t->config_key),
                     TT__PTK(t->config_json), TT__PTK(tt_rc_code(t->status)), TT__PTK(t->error),
                     PF(ok ? t->median_us : 0), PF(t->spread_us), PF(t->min_us),
                     TT__PTK(sj), PF(t->predicted_us), PF(t->compile_s),
                     PF(t->measure_s), PI(job_id), TT__PTK(t->measured_by), TT__PTK(sz),
                     PF(now)};
    tt__res r;
    rc = q_start(s, Q_TRIAL_INSERT, p, pg ? NP(p) - 1 : NP(p), &r);
    if (rc) {
        free(text);
        return rc;
    }
    int k1 = tt__q_step(&r, &rc), inserted = k1 == 1 || (k1 == 0 && !pg && r.changes == 1);
    if (k1 == 1) {            /* PostgreSQL: the RETURNING row */
        t->id = C_I(&r, 0);
        t->created_at = C_F(&r, 1);
        rc = tt__q_end(&r);
    } else {
        if (inserted) {       /* SQLite */
            t->id = r.last_id;
            t->created_at = now;
        }
        s->eng->finish(&r);
    }
    free(text);
    if (rc) return rc;
    if (!inserted) return tt_trial_find(s, k, t->config_hash, stored);
    t->job_id = job_id;
    if (!ok) t->median_us = 0;
    return TT_OK;
}

/* ---- group commit: a batch's trial records defer their job and best updates ----------
 * Inside a batch nothing is visible to other connections before the commit, so the job's
 * done counter, its best-so-far and the `best` row need to be written only once, at the
 * commit (or before any other call on the store reads them: tt__store_lock), from the
 * fastest successful trial of the batch: since both updates keep the strictly faster row,
 * that gives the rows every trial would have written one by one.  One job and key at a time:
 * a record for another one writes the pending updates first. */
#define TT_PEND_LINKS 10      /* rows of Q_JT_INSERT_N (1 + 3 x 10 = 31 params <= TT__PMAP) */
typedef struct tt__pend {
    int active;
    tt_rc rc;                 /* a failed flush, kept until the drop */
    int64_t job_id;
    char *template_name, *template_hash, *problem_key, *target, *backend_fp, *problem_json;
    int64_t max_seq;          /* the job's highest job_trials seq (read once per batch) */
    int done_dirty;           /* a job_trials row was added */
    int64_t link[TT_PEND_LINKS][3];   /* job_trials rows not written yet: seq, trial, reused */
    int nlink;
    int has_best;             /* the fastest successful trial of the batch so far: */
    int64_t b_trial, b_job;
    double b_median, b_spread, b_pred;
    char *b_config;
} tt__pend;

void tt__store_pend_drop(tt_store *s)
{
    tt__pend *p = s->pend;
    if (!p) return;
    free(p->template_name);
    free(p->template_hash);
    free(p->problem_key);
    free(p->target);
    free(p->backend_fp);
    free(p->problem_json);
    free(p->b_config);
    memset(p, 0, sizeof *p);
}

/* Write the pending job_trials rows: TT_PEND_LINKS in one INSERT, fewer one by one. */
static tt_rc tt_pend_links(tt_store *s, tt__pend *p)
{
    tt_rc rc = TT_OK;
    if (p->nlink == TT_PEND_LINKS) {
        tt__param v[1 + 3 * TT_PEND_LINKS];
        v[0] = (tt__param)PI(p->job_id);
        for (int i = 0; i < TT_PEND_LINKS; i++)
            for (int k = 0; k < 3; k++) v[1 + 3 * i + k] = (tt__param)PI(p->link[i][k]);
        rc = q_exec(s, Q_JT_INSERT_N, v, NP(v), NULL);
    } else {
        for (int i = 0; !rc && i < p->nlink; i++) {
            tt__param jt[] = {PI(p->job_id), PI(p->link[i][0]), PI(p->link[i][1]),
                              PI(p->link[i][2])};
            rc = q_exec(s, Q_JT_INSERT, jt, NP(jt), NULL);
        }
    }
    if (!rc) p->nlink = 0;
    return rc;
}

tt_rc tt__store_pend_flush(tt_store *s)
{
    tt__pend *p = s->pend;
    if (!p || !p->active || p->rc) return p ? p->rc : TT_OK;
    tt_rc rc = tt_pend_links(s, p);
    tt__param jd[] = {PI(p->job_id)};
    if (!rc && p->done_dirty) rc = q_exec(s, Q_JOB_DONE, jd, NP(jd), NULL);
    tt__param jb[] = {PI(p->job_id), PI(p->b_trial), PF(p->b_median), PF(p->b_pred),
                      PT(p->b_config)};
    if (!rc && p->has_best) rc = q_exec(s, Q_JOB_BEST, jb, NP(jb), NULL);
    tt__param b[] = {PT(p->template_name), PT(p->template_hash), PT(p->problem_key),
                     PT(p->problem_json), PT(p->target), PT(p->backend_fp), PI(p->b_trial),
                     PI(p->b_job), PT(p->b_config), PF(p->b_median), PF(p->b_spread),
                     PF(p->b_pred)};
    if (!rc && p->has_best) rc = q_exec(s, Q_BEST_UPSERT, b, NP(b), NULL);
    if (rc) {
        p->rc = rc;
        return rc;
    }
    /* written: keep the job and key (the next record of the batch reuses them) */
    p->done_dirty = 0;
    p->has_best = 0;
    free(p->b_config);
    p->b_config = NULL;
    return TT_OK;
}

static int tt_str_eq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Make s->pend the deferral of (job_id, k, template_name), writing another one's first.
 * TT_ENOTFOUND when there is no such job. */
static tt_rc tt_pend_open(tt_store *s, const tt_trial_key *k, const char *template_name,
                          int64_t job_id)
{
    tt__pend *p = s->pend;
    if (p && p->active && p->job_id == job_id && tt_str_eq(p->template_name, template_name) &&
        tt_str_eq(p->template_hash, k->template_hash) &&
        tt_str_eq(p->problem_key, k->problem_key) && tt_str_eq(p->target, k->target) &&
        tt_str_eq(p->backend_fp, k->backend_fp))
        return p->rc;
    if (!p && !(p = s->pend = calloc(1, sizeof *p))) return TT_ENOMEM;
    tt_rc rc = tt__store_pend_flush(s);
    if (rc) return rc;
    tt__store_pend_drop(s);
    tt__param pj[] = {PI(job_id)};
    tt__res r;
    rc = q_first(s, Q_JOB_PROBLEM, pj, NP(pj), &r);
    if (rc == TT_ENOTFOUND)
        return tt__store_fail(s, TT_ENOTFOUND, "job %lld not found", (long long)job_id);
    if (rc) return rc;
    int oom = 0;
    p->problem_json = tt__dup(C_T(&r, 0), &oom);
    if ((rc = tt__q_end(&r))) goto fail;
    if ((rc = q_first(s, Q_JT_MAX, pj, NP(pj), &r))) goto fail;
    p->max_seq = C_I(&r, 0);
    if ((rc = tt__q_end(&r))) goto fail;
    p->template_name = tt__dup(template_name, &oom);
    p->template_hash = tt__dup(k->template_hash, &oom);
    p->problem_key = tt__dup(k->problem_key, &oom);
    p->target = tt__dup(k->target, &oom);
    p->backend_fp = tt__dup(k->backend_fp, &oom);
    if (oom) {
        rc = TT_ENOMEM;
        goto fail;
    }
    p->job_id = job_id;
    p->active = 1;
    return TT_OK;
fail:
    tt__store_pend_drop(s);
    return rc;
}

/* tt_store_trial_record inside a batch (s locked, no savepoint): the measurement and its
 * job_trials row now, the rest deferred.  A failure may leave the measurement row without
 * its job_trials row: a valid measurement under its key, which a later trial reuses. */
static tt_rc tt_trial_record_batched(tt_store *s, const tt_trial_key *k,
                                     const char *template_name, int64_t job_id, int64_t seq,
                                     tt_trial *t)
{
    tt_rc rc = tt_pend_open(s, k, template_name, job_id);
    if (rc) return rc;
    tt__pend *p = s->pend;
    tt_trial stored = {0};
    if (seq <= p->max_seq) {          /* recorded before a crash: nothing to change */
        if (p->nlink && (rc = tt_pend_links(s, p))) return p->rc = rc;
        rc = tt_trial_at(s, job_id, seq, &stored);
        if (rc == TT_OK) {
            tt_trial_clear(t);
            *t = stored;
            return TT_OK;
        }
        if (rc != TT_ENOTFOUND) return rc;
    }
    /* no look-up first: the insert finds an earlier measurement under the key itself */
    if ((rc = tt_trial_insert(s, k, job_id, t, &stored, 0))) return rc;
    t->reused = stored.id != 0;
    if (t->reused) {
        tt_trial_clear(t);
        *t = stored;
        t->reused = 1;
    }
    t->seq = seq;
    /* its job_trials row goes with the next TT_PEND_LINKS - 1, or at the flush */
    int64_t *l = p->link[p->nlink++];
    l[0] = seq;
    l[1] = t->id;
    l[2] = t->reused;
    if (p->nlink == TT_PEND_LINKS && (rc = tt_pend_links(s, p))) return p->rc = rc;
    if (seq > p->max_seq) p->max_seq = seq;
    p->done_dirty = 1;
    if (t->status == TT_OK && t->median_us > 0 && (!p->has_best || t->median_us < p->b_median)) {
        char *cfg = strdup(t->config_json);
        if (!cfg) return TT_ENOMEM;
        free(p->b_config);
        p->b_config = cfg;
        p->has_best = 1;
        p->b_trial = t->id;
        p->b_job = t->job_id;
        p->b_median = t->median_us;
        p->b_spread = t->spread_us;
        p->b_pred = t->predicted_us;
    }
    return TT_OK;
}

tt_rc tt_store_trial_record(tt_store *s, const tt_trial_key *k, const char *template_name,
                            int64_t job_id, int64_t seq, tt_trial *t)
{
    if (!tt__key_ok(k) || !template_name || !t || !t->config_key || !t->config_json ||
        job_id < 0)
        return TT_EINVAL;
    if (job_id > 0) {
        tt__store_lock_raw(s);
        if (s->batch) {
            tt_rc rc = tt_trial_record_batched(s, k, template_name, job_id, seq, t);
            return tt__store_unlock(s, rc);   /* `best` moves at the commit (its touch) */
        }
        tt__store_unlock(s, TT_OK);
    }
    tt_trial stored = {0};
    char *problem_json = NULL;
    tt_rc rc = tt__store_tx_begin(s);
    if (rc) return rc;
    if (job_id > 0) {
        tt__param p[] = {PI(job_id)};
        tt__res r;
        rc = q_first(s, Q_JOB_PROBLEM, p, NP(p), &r);
        if (rc == TT_ENOTFOUND)
            rc = tt__store_fail(s, TT_ENOTFOUND, "job %lld not found", (long long)job_id);
        if (rc) return tt__store_tx_end(s, rc);
        int oom = 0;
        problem_json = tt__dup(C_T(&r, 0), &oom);
        rc = tt__q_end(&r);
        if (!rc && oom) rc = TT_ENOMEM;
        if (rc) goto out;
        rc = tt_trial_at(s, job_id, seq, &stored);
        if (rc == TT_OK) {          /* recorded before a crash: nothing to change */
            tt_trial_clear(t);
            *t = stored;
            memset(&stored, 0, sizeof stored);
            goto out;
        }
        if (rc != TT_ENOTFOUND) goto out;
    }
    if ((rc = tt_trial_insert(s, k, job_id, t, &stored, 1))) goto out;
    if (stored.id) {                /* measured before under the same key: reuse it */
        tt_trial_clear(t);
        *t = stored;
        memset(&stored, 0, sizeof stored);
        t->reused = 1;
    } else {
        t->reused = 0;
    }
    t->seq = seq;
    int ok = t->status == TT_OK && t->median_us > 0;
    if (job_id > 0) {
        tt__param jt[] = {PI(job_id), PI(seq), PI(t->id), PI(t->reused)};
        tt__param jd[] = {PI(job_id)};
        if ((rc = q_exec(s, Q_JT_INSERT, jt, NP(jt), NULL)) ||
            (rc = q_exec(s, Q_JOB_DONE, jd, NP(jd), NULL)))
            goto out;
        tt__param jb[] = {PI(job_id), PI(t->id), PF(t->median_us), PF(t->predicted_us),
                          PT(t->config_json)};
        if (ok && (rc = q_exec(s, Q_JOB_BEST, jb, NP(jb), NULL))) goto out;
    }
    if (ok) {
        tt__param b[] = {PT(template_name), PT(k->template_hash), PT(k->problem_key),
                         PT(problem_json), PT(k->target), PT(k->backend_fp), PI(t->id),
                         PI(t->job_id), PT(t->config_json), PF(t->median_us),
                         PF(t->spread_us), PF(t->predicted_us)};
        rc = q_exec(s, Q_BEST_UPSERT, b, NP(b), NULL);
    }
out:
    free(problem_json);
    tt_trial_clear(&stored);
    rc = tt__store_tx_end(s, rc);
    tt__store_best_touch();   /* after the commit: a reader that saw the old row misses */
    return rc;
}

/* A trial row of Q_TRIAL_LIST, followed by its job_trials seq and reused flag. */
static tt_rc tt_trial_list_row(tt__res *r, void *e)
{
    tt_trial *t = e;
    tt_rc rc = tt__trial_from_row(r, t);
    if (!rc) {
        t->seq = C_I(r, TRIAL_NCOLS);
        t->reused = (int)C_I(r, TRIAL_NCOLS + 1);
    }
    return rc;
}
static void tt_trial_clear_v(void *e) { tt_trial_clear(e); }

tt_rc tt_store_trial_list(tt_store *s, int64_t job_id, int64_t offset, int64_t limit,
                          tt_trial **trials, size_t *n, int64_t *total)
{
    *trials = NULL;
    *n = 0;
    if (total) *total = 0;
    if (limit <= 0) limit = 100;
    if (offset < 0) offset = 0;
    tt__param pj[] = {PI(job_id)};
    tt__param pl[] = {PI(job_id), PI(limit), PI(offset)};
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = q_first(s, Q_JOB_EXISTS, pj, NP(pj), &r);
    if (rc == TT_ENOTFOUND)
        rc = tt__store_fail(s, TT_ENOTFOUND, "job %lld not found", (long long)job_id);
    if (!rc) rc = tt__q_end(&r);
    if (!rc && !(rc = q_first(s, Q_TRIAL_COUNT, pj, NP(pj), &r))) {
        if (total) *total = C_I(&r, 0);
        rc = tt__q_end(&r);
    }
    if (!rc) rc = q_start(s, Q_TRIAL_LIST, pl, NP(pl), &r);
    if (rc) return tt__store_unlock(s, rc);
    void *v = NULL;
    rc = tt__store_collect(s, &r, sizeof(tt_trial), tt_trial_list_row, tt_trial_clear_v,
                           &v, n);
    *trials = v;
    return tt__store_unlock(s, rc);
}

/* One (backend, status, count) row into {"sim":{"ok":12,...},...}. */
static tt_rc tt_trial_stats_row(tt__res *r, json_t *o)
{
    const char *backend = C_T(r, 0), *status = C_T(r, 1);
    json_t *b = json_object_get(o, backend ? backend : "");
    if (!b && (!(b = json_object()) || json_object_set_new(o, backend ? backend : "", b)))
        return TT_ENOMEM;
    return json_object_set_new(b, status ? status : "", json_integer(C_I(r, 2))) ? TT_ENOMEM
                                                                                 : TT_OK;
}

tt_rc tt_store_trial_stats(tt_store *s, char **json)
{
    return tt__store_json_query(s, TT__Q_BASE + Q_TRIAL_STATS, tt_q[Q_TRIAL_STATS].sql,
                                tt_q[Q_TRIAL_STATS].pg, NULL, 0, json_object(),
                                tt_trial_stats_row, json);
}

tt_rc tt_store_job_best_set(tt_store *s, int64_t job_id, int64_t trial_id, double value_us,
                            double pred_us, const char *config_json)
{
    tt__param jb[] = {PI(job_id), PI(trial_id), PF(value_us), PF(pred_us), PT(config_json)};
    tt__store_lock(s);   /* inside a batch: the deferred best first, then this one over it */
    return tt__store_unlock(s, q_exec(s, Q_JOB_BEST_SET, jb, NP(jb), NULL));
}

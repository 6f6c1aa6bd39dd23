/* SPDX-License-Identifier: MIT
 * store_best.c - reading the best rows (tt_store_best_get/list, the rows helper the checks
 * use) and the SQLite change stamp that lets GET /v1/best answer from its cache
 * (tt_store_best_stamp); the best rows are written by store_trials.c.
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "store_q.h"

#define BEST_COLS                                                                         \
    "template_name, template_hash, target, backend_fp, problem_key, problem_json, "         \
    "config_json, trial_id, median_us, spread_us, job_id, predicted_us, updated_at"
enum { Q_BEST_GET, Q_BEST_LIST, Q_DATA_VERSION, Q__COUNT };
_Static_assert(TT__Q_STORE_BEST + Q__COUNT <= TT__Q_STORE_META, "store_meta.c query ids start there");

static const tt__qdef tt_q[Q__COUNT] = {
    [Q_BEST_GET] = {"SELECT " BEST_COLS " FROM best WHERE template_name = $1 AND target = $2 "
                    "AND problem_key = $3 AND ($4 IS NULL OR backend_fp = $4) AND "
                    "($5 IS NULL OR template_hash = $5) ORDER BY median_us LIMIT 1", NULL},
    [Q_BEST_LIST] = {"SELECT " BEST_COLS " FROM best WHERE template_name = $1 AND "
                     "target = $2 AND ($3 IS NULL OR problem_key = $3) AND ($4 IS NULL OR "
                     "backend_fp = $4) AND ($5 IS NULL OR template_hash = $5) "
                     "ORDER BY problem_key, median_us, backend_fp", NULL},
    [Q_DATA_VERSION] = {"PRAGMA data_version", NULL},   /* SQLite only */
};

#define TT__Q_BASE TT__Q_STORE_BEST   /* this file's first query id (store_q.h) */

void tt_best_clear(tt_best *b)
{
    if (!b) return;
    tt__key_free(TT__KEY_OF(b));
    memset(b, 0, sizeof *b);
}

static tt_rc tt_best_from_row(tt__res *r, tt_best *b)
{
    int oom = 0;
    memset(b, 0, sizeof *b);
    tt__key_from_row(r, 0, TT__KEY_OF(b), &oom);
    b->job_id = C_I(r, 10);
    b->predicted_us = C_F(r, 11);
    b->updated_at = C_F(r, 12);
    if (oom) {
        tt_best_clear(b);
        return TT_ENOMEM;
    }
    return TT_OK;
}

tt_rc tt_store_best_get(tt_store *s, const tt_best_query *q, tt_best *out)
{
    memset(out, 0, sizeof *out);
    if (!q || !q->template_name || !q->target || !q->problem_key) return TT_EINVAL;
    tt__param p[] = {PT(q->template_name), PT(q->target), PT(q->problem_key),
                     PT(q->backend_fp), PT(q->template_hash)};
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = q_first(s, Q_BEST_GET, p, NP(p), &r);
    if (rc) return tt__store_unlock(s, rc);
    rc = tt_best_from_row(&r, out);
    tt_rc rc2 = tt__q_end(&r);
    if (!rc && rc2) tt_best_clear(out);
    return tt__store_unlock(s, rc ? rc : rc2);
}

static int64_t tt_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The data_version read less than dv_refresh_ns ago, without the store mutex: 1 and *dv,
 * or 0 (never read, too old, or a writer is filling it right now). */
static int tt_dv_recent(tt_store *s, int64_t now, int64_t *dv)
{
    uint64_t q = atomic_load(&s->dv_seq);
    if (q & 1) return 0;
    int64_t at = atomic_load(&s->dv_at_ns), v = atomic_load(&s->dv_value);
    if (atomic_load(&s->dv_seq) != q) return 0;
    if (at == 0 || now - at >= atomic_load(&s->dv_refresh_ns)) return 0;
    *dv = v;
    return 1;
}

tt_rc tt_store_best_stamp(tt_store *s, tt_store_stamp *out)
{
    memset(out, 0, sizeof *out);
    if (s->engine != TT_STORE_SQLITE) return TT_EUNSUPPORTED;
    /* the generation first: a commit after this point changes it or data_version */
    out->gen = tt__store_best_gen();
    int64_t now = tt_mono_ns();
    if (tt_dv_recent(s, now, &out->data_version)) return TT_OK;
    tt__res r;
    tt__store_lock(s);
    now = tt_mono_ns();       /* the PRAGMA sees every commit finished before this instant */
    tt_rc rc = q_first(s, Q_DATA_VERSION, NULL, 0, &r);
    if (rc) return tt__store_unlock(s, rc);
    out->data_version = C_I(&r, 0);
    atomic_fetch_add(&s->dv_seq, 1);          /* odd: readers fall back to the mutex */
    atomic_store(&s->dv_value, out->data_version);
    atomic_store(&s->dv_at_ns, now);
    atomic_fetch_add(&s->dv_seq, 1);
    return tt__store_unlock(s, tt__q_end(&r));
}

void tt_store_set_stamp_refresh(tt_store *s, unsigned ms)
{
    if (s) atomic_store(&s->dv_refresh_ns, (int64_t)ms * 1000000);
}

static tt_rc tt_best_row(tt__res *r, void *e) { return tt_best_from_row(r, e); }
static void tt_best_clear_v(void *e) { tt_best_clear(e); }

/* Rows of a best-shaped query into a malloc'd array (lock held by the caller). */
tt_rc tt__store_best_rows(tt_store *s, const tt_best_query *q, tt_best **rows, size_t *n)
{
    tt__param p[] = {PT(q->template_name), PT(q->target), PT(q->problem_key),
                     PT(q->backend_fp), PT(q->template_hash)};
    tt__res r;
    tt_rc rc = q_start(s, Q_BEST_LIST, p, NP(p), &r);
    if (rc) return rc;
    void *v = NULL;
    rc = tt__store_collect(s, &r, sizeof(tt_best), tt_best_row, tt_best_clear_v, &v, n);
    *rows = v;
    return rc;
}

tt_rc tt_store_best_list(tt_store *s, const tt_best_query *q, tt_best **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    if (!q || !q->template_name || !q->target) return TT_EINVAL;
    tt__store_lock(s);
    return tt__store_unlock(s, tt__store_best_rows(s, q, rows, n));
}

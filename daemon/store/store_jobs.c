/* SPDX-License-Identifier: MIT
 * store_jobs.c - tt_store jobs: create (capped per owner), get, list, counts, claim with a
 * lease, renew, progress, finish, cancel, release; written once for both engines (SQLite
 * and PostgreSQL dialects side by side) and run through store_internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "store_q.h"

#define JOB_COLS                                                                          \
    "id, template_name, template_hash, target, backend, backend_fp, strategy, problem_key, " \
    "problem_json, options_json, budget_trials, budget_seconds, seed, state, planned, "     \
    "done, best_trial, best_us, best_pred_us, best_config_json, error, owner, lease_owner, " \
    "lease_expires, created_at, started_at, finished_at, claimed_from"
/* $3: the fingerprints of what the worker can run, ",cmd:a@1234abcd,replay:d@89abcdef,..,"
 * (NULL: any job); a cmd: or replay: job is picked only when its backend_fp is among them
 * (tt_store_job_claim_for).  CLAIMABLE: the states a claim takes; PINNED: the jobs that only
 * a worker with their fingerprint may run. */
#define CLAIMABLE "(state = 'queued' OR (state = 'running' AND lease_expires < tt_now()))"
#define HAS_FP(INSTR, P) INSTR "(" P ", ',' || backend_fp || ',') > 0"
#define PINNED "(backend LIKE 'cmd:%' OR backend LIKE 'replay:%')"
#define CLAIM_PICK(INSTR, TEXT)                                                           \
    "SELECT id FROM jobs WHERE strategy <> 'import' AND " CLAIMABLE " AND ($3" TEXT        \
    " IS NULL OR NOT " PINNED " OR " HAS_FP(INSTR, "$3" TEXT) ") ORDER BY id LIMIT 1"
/* The oldest job after id $1 that CLAIM_PICK leaves to another worker ($2: its $3). */
#define WAITING(INSTR, TEXT)                                                              \
    "SELECT " JOB_COLS " FROM jobs WHERE id > $1 AND strategy <> 'import' AND " CLAIMABLE  \
    " AND " PINNED " AND NOT " HAS_FP(INSTR, "$2" TEXT) " ORDER BY id LIMIT 1"
#define CLAIM_SET                                                                         \
    "UPDATE jobs SET state = 'running', lease_owner = $1, lease_expires = tt_now() + $2, "  \
    "claimed_from = CASE WHEN state = 'running' THEN lease_owner ELSE NULL END, "          \
    "started_at = CASE WHEN started_at = 0 THEN tt_now() ELSE started_at END WHERE id = ("

enum {
    Q_JOB_CREATE, Q_JOB_CREATE_RUNNING, Q_JOB_GET, Q_JOB_LIST, Q_JOB_COUNTS, Q_JOB_CLAIM, Q_JOB_RENEW, Q_JOB_STATE, Q_JOB_PROGRESS, Q_JOB_FINISH, Q_JOB_CANCEL, Q_JOB_RELEASE, Q_JOB_ACTIVE,
    Q_JOB_RELEASE_ONE, Q_JOB_WAITING,
    Q__COUNT
};
_Static_assert(TT__Q_STORE_JOBS + Q__COUNT <= TT__Q_STORE_TRIALS, "store_trials.c query ids start there");

static const tt__qdef tt_q[Q__COUNT] = {
    [Q_JOB_CREATE] = {"INSERT INTO jobs (template_name, template_hash, target, backend, "
                      "backend_fp, strategy, problem_key, problem_json, options_json, "
                      "budget_trials, budget_seconds, seed, owner, created_at) VALUES ($1, $2, "
                      "$3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, tt_now()) "
                      "RETURNING id, created_at", NULL},
    [Q_JOB_CREATE_RUNNING] = {"INSERT INTO jobs (template_name, template_hash, target, "
                              "backend, backend_fp, strategy, problem_key, problem_json, "
                              "options_json, budget_trials, budget_seconds, seed, owner, "
                              "state, lease_owner, lease_expires, created_at, started_at) "
                              "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
                              "'running', $14, tt_now() + $15, tt_now(), tt_now()) "
                              "RETURNING id, created_at, lease_expires", NULL},
    [Q_JOB_GET] = {"SELECT " JOB_COLS " FROM jobs WHERE id = $1", NULL},
    [Q_JOB_LIST] = {"SELECT " JOB_COLS " FROM jobs WHERE ($1 IS NULL OR state = $1) AND "
                    "($2 IS NULL OR template_name = $2) AND ($3 IS NULL OR target = $3) AND "
                    "($4 IS NULL OR owner = $4) ORDER BY id DESC LIMIT $5 OFFSET $6", NULL},
    [Q_JOB_COUNTS] = {"SELECT state, COUNT(*) FROM jobs WHERE ($1 IS NULL OR owner = $1) "
                      "GROUP BY state", NULL},
    /* SQLite: one UPDATE statement holds the database's single write lock throughout.
     * PostgreSQL: rows another worker is claiming are skipped, not waited for. */
    [Q_JOB_CLAIM] = {CLAIM_SET CLAIM_PICK("instr", "") ") RETURNING " JOB_COLS,
                     CLAIM_SET CLAIM_PICK("strpos", "::text")
                     " FOR UPDATE SKIP LOCKED) RETURNING " JOB_COLS},
    [Q_JOB_RENEW] = {"UPDATE jobs SET lease_expires = tt_now() + $3 WHERE id = $1 AND "
                     "state = 'running' AND lease_owner = $2", NULL},
    [Q_JOB_STATE] = {"SELECT state FROM jobs WHERE id = $1", NULL},
    [Q_JOB_PROGRESS] = {"UPDATE jobs SET planned = $2, done = $3 WHERE id = $1", NULL},
    [Q_JOB_FINISH] = {"UPDATE jobs SET state = $3, error = $4, finished_at = tt_now(), "
                      "lease_owner = '', lease_expires = 0 WHERE id = $1 AND "
                      "state = 'running' AND lease_owner = $2", NULL},
    [Q_JOB_CANCEL] = {"UPDATE jobs SET state = 'cancelled', finished_at = tt_now(), "
                      "lease_owner = '', lease_expires = 0 WHERE id = $1 AND "
                      "state IN ('queued', 'running')", NULL},
    [Q_JOB_RELEASE] = {"UPDATE jobs SET lease_owner = '', lease_expires = 0 "
                       "WHERE state = 'running' AND strategy <> 'import'", NULL},
    [Q_JOB_ACTIVE] = {"SELECT COUNT(*) FROM jobs WHERE owner = $1 AND "
                      "state IN ('queued', 'running')", NULL},
    [Q_JOB_RELEASE_ONE] = {"UPDATE jobs SET lease_owner = '', lease_expires = 0 WHERE id = $1 "
                           "AND state = 'running' AND lease_owner = $2", NULL},
    [Q_JOB_WAITING] = {WAITING("instr", ""), WAITING("strpos", "::text")},
};

#define TT__Q_BASE TT__Q_STORE_JOBS   /* this file's first query id (store_q.h) */

/* ---- jobs --------------------------------------------------------------------------- */
static const char *const tt_job_states[TT_JOB__COUNT] = {"queued", "running", "done",
                                                           "failed", "cancelled"};

const char *tt_job_state_name(tt_job_state st)
{
    return (int)st >= 0 && st < TT_JOB__COUNT ? tt_job_states[st] : "unknown";
}

int tt_job_state_parse(const char *name)
{
    for (int i = 0; name && i < TT_JOB__COUNT; i++)
        if (strcmp(name, tt_job_states[i]) == 0) return i;
    return -1;
}

void tt_job_clear(tt_job *j)
{
    if (!j) return;
    free(j->problem_key);
    free(j->problem_json);
    free(j->options_json);
    free(j->best_config_json);
    free(j->error);
    memset(j, 0, sizeof *j);
}

static tt_rc tt_job_from_row(tt__res *r, tt_job *j)
{
    int oom = 0;
    memset(j, 0, sizeof *j);
    j->id = C_I(r, 0);
    tt_cpy(j->template_name, sizeof j->template_name, C_T(r, 1));
    tt_cpy(j->template_hash, sizeof j->template_hash, C_T(r, 2));
    tt_cpy(j->target, sizeof j->target, C_T(r, 3));
    tt_cpy(j->backend, sizeof j->backend, C_T(r, 4));
    tt_cpy(j->backend_fp, sizeof j->backend_fp, C_T(r, 5));
    tt_cpy(j->strategy, sizeof j->strategy, C_T(r, 6));
    j->problem_key = tt_dup(C_T(r, 7), &oom);
    j->problem_json = tt_dup(C_T(r, 8), &oom);
    j->options_json = tt_dup(C_T(r, 9), &oom);
    j->budget_trials = C_I(r, 10);
    j->budget_seconds = C_F(r, 11);
    j->seed = C_I(r, 12);
    int st = tt_job_state_parse(C_T(r, 13));
    j->state = st < 0 ? TT_JOB_FAILED : (tt_job_state)st;
    j->planned = C_I(r, 14);
    j->done = C_I(r, 15);
    j->best_trial = C_I(r, 16);
    j->best_us = C_F(r, 17);
    j->best_pred_us = C_F(r, 18);
    j->best_config_json = tt_dup(C_T(r, 19), &oom);
    j->error = tt_dup(C_T(r, 20), &oom);
    tt_cpy(j->owner, sizeof j->owner, C_T(r, 21));
    tt_cpy(j->lease_owner, sizeof j->lease_owner, C_T(r, 22));
    j->lease_expires = C_F(r, 23);
    j->created_at = C_F(r, 24);
    j->started_at = C_F(r, 25);
    j->finished_at = C_F(r, 26);
    const char *from = C_T(r, 27);
    j->claimed_running = from != NULL;
    tt_cpy(j->claimed_from, sizeof j->claimed_from, from);
    if (oom) {
        tt_job_clear(j);
        return TT_ENOMEM;
    }
    return TT_OK;
}

/* Insert j as a queued job (lock held by the caller). */
static tt_rc tt_job_insert(tt_store *s, tt_job *j)
{
    tt__param p[] = {PT(j->template_name), PT(j->template_hash), PT(j->target),
                     PT(j->backend), PT(j->backend_fp[0] ? j->backend_fp : j->backend),
                     PT(j->strategy), PT(j->problem_key),
                     PT(j->problem_json ? j->problem_json : "{}"), PT(j->options_json),
                     PI(j->budget_trials), PF(j->budget_seconds), PI(j->seed), PT(j->owner)};
    tt__res r;
    tt_rc rc = q_first(s, Q_JOB_CREATE, p, NP(p), &r);
    if (rc == TT_ENOTFOUND) rc = tt__store_fail(s, TT_EDB, "job insert returned no id");
    if (rc) return rc;
    j->id = C_I(&r, 0);
    j->created_at = C_F(&r, 1);
    j->state = TT_JOB_QUEUED;
    j->planned = j->done = j->best_trial = 0;
    j->best_us = j->best_pred_us = 0;
    j->lease_owner[0] = '\0';
    j->lease_expires = j->started_at = j->finished_at = 0;
    return q_end(&r);
}

static int tt_job_valid(const tt_job *j)
{
    return j->template_name[0] && j->target[0] && j->backend[0] && j->problem_key;
}

tt_rc tt_store_job_create(tt_store *s, tt_job *j)
{
    if (!tt_job_valid(j)) return TT_EINVAL;
    tt_store_lock(s);
    return tt_store_unlock(s, tt_job_insert(s, j));
}

tt_rc tt_store_job_create_capped(tt_store *s, tt_job *j, int64_t max_active, int64_t *active)
{
    if (active) *active = 0;
    if (!tt_job_valid(j)) return TT_EINVAL;
    if (max_active <= 0) return tt_store_job_create(s, j);
    tt_rc rc = tt__store_tx_begin(s);
    if (rc) return rc;
    tt__param p[] = {PT(j->owner)};
    tt__res r;
    rc = tt__store_owner_lock(s, TT_LOCK_JOBS, j->owner);
    if (!rc && !(rc = q_first(s, Q_JOB_ACTIVE, p, NP(p), &r))) {
        int64_t n = C_I(&r, 0);
        if (active) *active = n;
        if (!(rc = q_end(&r)) && n >= max_active)
            rc = tt__store_fail(s, TT_ELIMIT, "owner '%s' has %lld queued or running jobs "
                                "(limit %lld)", j->owner, (long long)n, (long long)max_active);
    }
    if (!rc) rc = tt_job_insert(s, j);
    return tt__store_tx_end(s, rc);
}

tt_rc tt_store_job_create_running(tt_store *s, tt_job *j, const char *owner,
                                  double lease_seconds)
{
    if (!tt_job_valid(j) || !owner || !*owner || !(lease_seconds > 0))
        return TT_EINVAL;
    tt__param p[] = {PT(j->template_name), PT(j->template_hash), PT(j->target),
                     PT(j->backend), PT(j->backend_fp[0] ? j->backend_fp : j->backend),
                     PT(j->strategy), PT(j->problem_key),
                     PT(j->problem_json ? j->problem_json : "{}"), PT(j->options_json),
                     PI(j->budget_trials), PF(j->budget_seconds), PI(j->seed), PT(j->owner),
                     PT(owner), PF(lease_seconds)};
    tt__res r;
    tt_store_lock(s);
    tt_rc rc = q_first(s, Q_JOB_CREATE_RUNNING, p, NP(p), &r);
    if (rc == TT_ENOTFOUND) rc = tt__store_fail(s, TT_EDB, "job insert returned no id");
    if (rc) return tt_store_unlock(s, rc);
    j->id = C_I(&r, 0);
    j->created_at = j->started_at = C_F(&r, 1);
    j->lease_expires = C_F(&r, 2);
    j->state = TT_JOB_RUNNING;
    j->planned = j->done = j->best_trial = 0;
    j->best_us = j->best_pred_us = 0;
    tt_cpy(j->lease_owner, sizeof j->lease_owner, owner);
    j->finished_at = 0;
    j->claimed_running = 0;
    j->claimed_from[0] = '\0';
    return tt_store_unlock(s, q_end(&r));
}

/* One job row from a query that returns JOB_COLS. */
static tt_rc tt_job_one(tt_store *s, int id, const tt__param *p, int np, tt_job *out)
{
    tt__res r;
    tt_rc rc = q_first(s, id, p, np, &r);
    if (rc) return rc;
    rc = tt_job_from_row(&r, out);
    tt_rc rc2 = q_end(&r);
    if (!rc && rc2) tt_job_clear(out);
    return rc ? rc : rc2;
}

tt_rc tt_store_job_get(tt_store *s, int64_t id, tt_job *out)
{
    memset(out, 0, sizeof *out);
    tt__param p[] = {PI(id)};
    tt_store_lock(s);
    return tt_store_unlock(s, tt_job_one(s, Q_JOB_GET, p, NP(p), out));
}

static tt_rc tt_job_row(tt__res *r, void *e) { return tt_job_from_row(r, e); }
static void tt_job_clear_v(void *e) { tt_job_clear(e); }

tt_rc tt_store_job_list(tt_store *s, const tt_job_filter *f, tt_job **jobs, size_t *n)
{
    *jobs = NULL;
    *n = 0;
    int64_t limit = f && f->limit > 0 ? f->limit : 100;
    int64_t offset = f && f->offset > 0 ? f->offset : 0;
    const char *state = f && f->state >= 0 ? tt_job_state_name((tt_job_state)f->state) : NULL;
    tt__param p[] = {PT(state), PT(f ? f->template_name : NULL), PT(f ? f->target : NULL),
                     PT(f ? f->owner : NULL), PI(limit), PI(offset)};
    tt__res r;
    tt_store_lock(s);
    tt_rc rc = q_start(s, Q_JOB_LIST, p, NP(p), &r);
    if (rc) return tt_store_unlock(s, rc);
    void *v = NULL;
    rc = tt__store_collect(s, &r, sizeof(tt_job), tt_job_row, tt_job_clear_v, &v, n);
    *jobs = v;
    return tt_store_unlock(s, rc);
}

tt_rc tt_store_job_counts(tt_store *s, const char *owner, int64_t counts[TT_JOB__COUNT])
{
    memset(counts, 0, sizeof(int64_t) * TT_JOB__COUNT);
    tt__param p[] = {PT(owner)};
    tt__res r;
    tt_store_lock(s);
    tt_rc rc = q_start(s, Q_JOB_COUNTS, p, NP(p), &r);
    if (rc) return tt_store_unlock(s, rc);
    while (q_step(&r, &rc) == 1) {
        int st = tt_job_state_parse(C_T(&r, 0));
        if (st >= 0) counts[st] = C_I(&r, 1);
    }
    s->eng->finish(&r);
    return tt_store_unlock(s, rc);
}

tt_rc tt_store_job_claim(tt_store *s, const char *owner, double lease_seconds, tt_job *out)
{
    return tt_store_job_claim_for(s, owner, lease_seconds, NULL, out);
}

tt_rc tt_store_job_claim_for(tt_store *s, const char *owner, double lease_seconds,
                             const char *fps, tt_job *out)
{
    memset(out, 0, sizeof *out);
    if (!owner || !*owner) return TT_EINVAL;
    tt__param p[] = {PT(owner), PF(lease_seconds), PT(fps)};
    tt_store_lock(s);
    return tt_store_unlock(s, tt_job_one(s, Q_JOB_CLAIM, p, NP(p), out));
}

tt_rc tt_store_job_waiting(tt_store *s, const char *fps, int64_t after, tt_job *out)
{
    memset(out, 0, sizeof *out);
    if (!fps) return TT_EINVAL;
    tt__param p[] = {PI(after), PT(fps)};
    tt_store_lock(s);
    return tt_store_unlock(s, tt_job_one(s, Q_JOB_WAITING, p, NP(p), out));
}

/* After an UPDATE guarded by state/owner changed nothing: TT_ENOTFOUND or TT_EEXISTS. */
static tt_rc tt_job_conflict(tt_store *s, int64_t id, const char *what)
{
    tt__param p[] = {PI(id)};
    tt__res r;
    tt_rc rc = q_first(s, Q_JOB_STATE, p, NP(p), &r);
    if (rc == TT_ENOTFOUND) return tt__store_fail(s, TT_ENOTFOUND, "job %lld not found",
                                                  (long long)id);
    if (rc) return rc;
    char st[16];
    tt_cpy(st, sizeof st, C_T(&r, 0));
    rc = q_end(&r);
    if (rc) return rc;
    return tt__store_fail(s, TT_EEXISTS, "job %lld is %s: %s", (long long)id, st, what);
}

tt_rc tt_store_job_renew(tt_store *s, int64_t id, const char *owner, double lease_seconds)
{
    if (!owner) return TT_EINVAL;
    tt__param p[] = {PI(id), PT(owner), PF(lease_seconds)};
    int64_t n = 0;
    tt_store_lock(s);
    tt_rc rc = q_exec(s, Q_JOB_RENEW, p, NP(p), &n);
    if (!rc && n == 0) rc = tt_job_conflict(s, id, "not held by this worker");
    return tt_store_unlock(s, rc);
}

tt_rc tt_store_job_progress(tt_store *s, int64_t id, int64_t planned, int64_t done)
{
    tt__param p[] = {PI(id), PI(planned), PI(done)};
    int64_t n = 0;
    tt_store_lock(s);
    tt_rc rc = q_exec(s, Q_JOB_PROGRESS, p, NP(p), &n);
    if (!rc && n == 0) rc = tt__store_fail(s, TT_ENOTFOUND, "job %lld not found", (long long)id);
    return tt_store_unlock(s, rc);
}

tt_rc tt_store_job_finish(tt_store *s, int64_t id, const char *owner, tt_job_state state,
                          const char *error)
{
    if (!owner || (state != TT_JOB_DONE && state != TT_JOB_FAILED)) return TT_EINVAL;
    tt__param p[] = {PI(id), PT(owner), PT(tt_job_state_name(state)), PT(error)};
    int64_t n = 0;
    tt_store_lock(s);
    tt_rc rc = q_exec(s, Q_JOB_FINISH, p, NP(p), &n);
    if (!rc && n == 0) rc = tt_job_conflict(s, id, "not held by this worker");
    return tt_store_unlock(s, rc);
}

tt_rc tt_store_job_cancel(tt_store *s, int64_t id)
{
    tt__param p[] = {PI(id)};
    int64_t n = 0;
    tt_store_lock(s);
    tt_rc rc = q_exec(s, Q_JOB_CANCEL, p, NP(p), &n);
    if (!rc && n == 0) rc = tt_job_conflict(s, id, "already finished");
    return tt_store_unlock(s, rc);
}

tt_rc tt_store_job_release_all(tt_store *s)
{
    tt_store_lock(s);
    return tt_store_unlock(s, q_exec(s, Q_JOB_RELEASE, NULL, 0, NULL));
}

tt_rc tt_store_job_release(tt_store *s, int64_t id, const char *owner)
{
    if (!owner || !*owner) return TT_EINVAL;
    tt__param p[] = {PI(id), PT(owner)};
    int64_t n = 0;
    tt_store_lock(s);
    tt_rc rc = q_exec(s, Q_JOB_RELEASE_ONE, p, NP(p), &n);
    if (!rc && n == 0) rc = tt_job_conflict(s, id, "not held by this worker");
    return tt_store_unlock(s, rc);
}

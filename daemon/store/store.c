/* SPDX-License-Identifier: MIT
 * store.c - tt_store: URL parsing, migrations, the helpers the other store_*.c files share
 * (store_internal.h) and the templates' queries; jobs are store_jobs.c, trials store_trials.c.
 * Every query is written once for both engines and run through the engine vtable.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_q.h"
#include "jsonutil.h"

/* ---- the queries: common SQL, and a PostgreSQL variant where the dialects differ ----- */
enum {
    Q_PING, Q_TPL_PUT, Q_TPL_LATEST, Q_TPL_GET, Q_TPL_LIST, Q_OWNER_LOCK, Q_TPL_OWNER,
    Q_TPL_PUT_OWNED,
    Q__COUNT
};
_Static_assert(Q__COUNT <= TT__Q_STORE_JOBS, "store_jobs.c query ids start there");

static const tt__qdef tt_q[Q__COUNT] = {
    [Q_PING] = {"SELECT 1", NULL},
    [Q_TPL_PUT] = {"INSERT INTO templates (name, hash, version, doc, seq, created_at) "
                   "VALUES ($1, $2, $3, $4, (SELECT COALESCE(MAX(seq), 0) + 1 FROM templates), "
                   "tt_now()) ON CONFLICT (name, hash) DO NOTHING", NULL},
    [Q_TPL_LATEST] = {"SELECT doc, hash FROM templates WHERE name = $1 "
                      "ORDER BY seq DESC LIMIT 1", NULL},
    [Q_TPL_GET] = {"SELECT doc, hash FROM templates WHERE name = $1 AND hash = $2", NULL},
    [Q_TPL_LIST] = {"SELECT name, hash, version, created_at FROM templates t WHERE seq = "
                    "(SELECT MAX(seq) FROM templates u WHERE u.name = t.name) ORDER BY name",
                    NULL},
    /* PostgreSQL: serialise the count-and-insert of one owner across hosts until commit
     * (SQLite: BEGIN IMMEDIATE already holds the single write lock). */
    [Q_OWNER_LOCK] = {"SELECT 1", "SELECT pg_advisory_xact_lock($2::int, hashtext($1))"},
    [Q_TPL_OWNER] = {"SELECT owner FROM templates WHERE name = $1 ORDER BY seq LIMIT 1", NULL},
    [Q_TPL_PUT_OWNED] = {"INSERT INTO templates (name, hash, version, doc, seq, created_at, "
                         "owner) VALUES ($1, $2, $3, $4, (SELECT COALESCE(MAX(seq), 0) + 1 "
                         "FROM templates), tt_now(), $5) ON CONFLICT (name, hash) DO NOTHING",
                         NULL},
};

/* ---- helpers shared with store_trials.c (store_internal.h) -------------------------- */
static _Atomic uint64_t tt_best_gen = 1;

void tt__store_best_touch(void) { atomic_fetch_add(&tt_best_gen, 1); }

uint64_t tt__store_best_gen(void) { return atomic_load(&tt_best_gen); }

tt_rc tt__store_fail(tt_store *s, tt_rc rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
    va_end(ap);
    s->err_rc = rc;
    s->err_lost = 0;
    s->err_moved = 0;
    return rc;
}

double tt__store_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tt__store_lock_raw(tt_store *s) { pthread_mutex_lock(&s->mu); }
void tt__store_lock(tt_store *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->batch && s->pend) (void)tt__store_pend_flush(s);   /* kept for the commit */
}
tt_rc tt__store_unlock(tt_store *s, tt_rc rc)
{
    pthread_mutex_unlock(&s->mu);
    return rc;
}

#define TT_SAVEPOINT "tt_sp"

tt_rc tt__store_tx_begin(tt_store *s)
{
    tt__store_lock(s);
    tt_rc rc = s->batch ? s->eng->exec_script(s, "SAVEPOINT " TT_SAVEPOINT) : s->eng->begin(s);
    if (rc) tt__store_unlock(s, rc);
    return rc;
}

/* Roll the open transaction back; the key id cached in it may be gone with it. */
static void tt_store_rollback(tt_store *s)
{
    tt__store_key_forget(s);
    s->eng->rollback(s);
}

tt_rc tt__store_tx_end(tt_store *s, tt_rc rc)
{
    if (s->batch) {
        if (!rc) rc = s->eng->exec_script(s, "RELEASE SAVEPOINT " TT_SAVEPOINT);
        if (rc) {
            char msg[sizeof s->errmsg];
            memcpy(msg, s->errmsg, sizeof msg);
            tt__store_key_forget(s);
            (void)s->eng->exec_script(s, "ROLLBACK TO SAVEPOINT " TT_SAVEPOINT);
            (void)s->eng->exec_script(s, "RELEASE SAVEPOINT " TT_SAVEPOINT);
            memcpy(s->errmsg, msg, sizeof msg);
        }
        return tt__store_unlock(s, rc);
    }
    if (!rc) rc = s->eng->commit(s);
    if (rc) {
        char msg[sizeof s->errmsg];
        memcpy(msg, s->errmsg, sizeof msg);
        tt_store_rollback(s);
        memcpy(s->errmsg, msg, sizeof msg);   /* keep the cause, not ROLLBACK's text */
    }
    return tt__store_unlock(s, rc);
}

void tt__cpy(char *dst, size_t n, const char *src)
{
    size_t l = src ? strlen(src) : 0;
    if (l >= n) l = n - 1;
    if (l) memcpy(dst, src, l);
    dst[l] = '\0';
}

char *tt__dup(const char *src, int *oom)
{
    if (!src) return NULL;
    char *d = strdup(src);
    if (!d) *oom = 1;
    return d;
}

tt_rc tt__json_out(struct json_t *v, char **out)
{
    *out = v ? tt_json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    return *out ? TT_OK : TT_ENOMEM;
}

tt_rc tt__q_start(tt_store *s, int id, const char *sql, const char *pg, const tt__param *p,
                  int np, tt__res *r)
{
    return s->eng->query(s, id, s->engine == TT_STORE_POSTGRES && pg ? pg : sql, p, np, r);
}

int tt__q_step(tt__res *r, tt_rc *rc)
{
    int k = r->s->eng->step(r);
    if (k < 0) *rc = r->s->err_rc ? r->s->err_rc : TT_EDB;
    return k;
}

tt_rc tt__store_collect(tt_store *s, tt__res *r, size_t size, tt__row_fn row,
                        tt__clear_fn clear, void **rows, size_t *n)
{
    char *a = NULL;
    size_t cap = 0;
    tt_rc rc = TT_OK;
    *n = 0;
    while (!rc && tt__q_step(r, &rc) == 1) {
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char *na = realloc(a, nc * size);
            if (!na) {
                rc = TT_ENOMEM;
                break;
            }
            a = na;
            cap = nc;
        }
        if (!(rc = row(r, a + *n * size))) (*n)++;
    }
    s->eng->finish(r);
    if (rc) {
        for (size_t i = 0; i < *n; i++) clear(a + i * size);
        free(a);
        a = NULL;
        *n = 0;
    }
    *rows = a;
    return rc;
}


void tt__key_from_row(tt__res *r, int col, tt__key k, int *oom)
{
    tt__cpy(*k.template_name, sizeof *k.template_name, TT__CT(r, col));
    tt__cpy(*k.template_hash, sizeof *k.template_hash, TT__CT(r, col + 1));
    tt__cpy(*k.target, sizeof *k.target, TT__CT(r, col + 2));
    tt__cpy(*k.backend_fp, sizeof *k.backend_fp, TT__CT(r, col + 3));
    *k.problem_key = tt__dup(TT__CT(r, col + 4), oom);
    *k.problem_json = tt__dup(TT__CT(r, col + 5), oom);
    *k.config_json = tt__dup(TT__CT(r, col + 6), oom);
    *k.trial_id = TT__CI(r, col + 7);
    *k.median_us = TT__CF(r, col + 8);
    *k.spread_us = TT__CF(r, col + 9);
}

void tt__key_free(tt__key k)
{
    free(*k.problem_key);
    free(*k.problem_json);
    free(*k.config_json);
    *k.problem_key = *k.problem_json = *k.config_json = NULL;
}

tt_rc tt__store_json_query(tt_store *s, int id, const char *sql, const char *pg,
                           const tt__param *p, int np, json_t *acc, tt__json_row_fn row,
                           char **out)
{
    *out = NULL;
    if (!acc) return TT_ENOMEM;
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = tt__q_start(s, id, sql, pg, p, np, &r);
    if (rc) {
        json_decref(acc);
        return tt__store_unlock(s, rc);
    }
    while (tt__q_step(&r, &rc) == 1) {
        tt_rc e = row(&r, acc);
        if (e) rc = e;
    }
    s->eng->finish(&r);
    tt__store_unlock(s, rc);
    if (rc) {
        json_decref(acc);
        return rc;
    }
    return tt__json_out(acc, out);
}

tt_rc tt__q_exec(tt_store *s, int id, const char *sql, const char *pg, const tt__param *p,
                 int np, int64_t *changes)
{
    tt__res r;
    tt_rc rc = tt__q_start(s, id, sql, pg, p, np, &r);
    if (rc) return rc;
    int k;
    while ((k = tt__q_step(&r, &rc)) == 1) {}
    if (k == 0 && changes) *changes = r.changes;
    s->eng->finish(&r);
    return rc;
}

tt_rc tt__q_first(tt_store *s, int id, const char *sql, const char *pg, const tt__param *p,
                  int np, tt__res *r)
{
    tt_rc rc = tt__q_start(s, id, sql, pg, p, np, r);
    if (rc) return rc;
    int k = tt__q_step(r, &rc);
    if (k == 1) return TT_OK;
    s->eng->finish(r);
    if (k == 0) {
        s->errmsg[0] = '\0';
        return TT_ENOTFOUND;
    }
    return rc;
}

tt_rc tt__q_end(tt__res *r)
{
    tt_rc rc = TT_OK;
    while (tt__q_step(r, &rc) == 1) {}
    r->s->eng->finish(r);
    return rc;
}

#define TT__Q_BASE 0   /* this file's first query id (store_q.h) */

/* ---- lifecycle ---------------------------------------------------------------------- */
static tt_rc tt_store_migrate(tt_store *s)
{
    const tt__migration *m = s->engine == TT_STORE_POSTGRES ? tt__store_migrations_postgres
                                                             : tt__store_migrations_sqlite;
    tt_rc rc = s->eng->begin(s);
    if (rc) return rc;
    if ((rc = s->eng->migrate_lock(s)) ||
        (rc = s->eng->exec_script(s, "CREATE TABLE IF NOT EXISTS schema_migrations ("
                                     "version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                                     "applied_at DOUBLE PRECISION NOT NULL)")))
        goto fail;
    tt__res r;
    int have = 0, known = 0;
    if ((rc = s->eng->query(s, -1, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                            NULL, 0, &r)))
        goto fail;
    if (q_step(&r, &rc) == 1) have = (int)C_I(&r, 0);
    s->eng->finish(&r);
    if (rc) goto fail;
    for (; m->name; m++) {
        int v = (int)strtol(m->name, NULL, 10);
        if (v > known) known = v;
        if (v <= have) continue;
        if ((rc = s->eng->exec_script(s, m->sql))) {
            char msg[sizeof s->errmsg];
            memcpy(msg, s->errmsg, sizeof msg);
            tt__store_fail(s, rc, "migration %s: %s", m->name, msg);
            goto fail;
        }
        size_t merged = 0;
        if (v == 3 && (rc = tt__store_rekey(s, &merged))) {   /* 003's data step */
            char msg[sizeof s->errmsg];
            memcpy(msg, s->errmsg, sizeof msg);
            tt__store_fail(s, rc, "migration %s (canonical keys): %s", m->name, msg);
            goto fail;
        }
        tt__param p[] = {PI(v), PT(m->name), PF(tt__store_now())};
        if ((rc = s->eng->query(s, -1, "INSERT INTO schema_migrations (version, name, "
                                       "applied_at) VALUES ($1, $2, $3)", p, NP(p), &r)))
            goto fail;
        while (q_step(&r, &rc) == 1) {}
        s->eng->finish(&r);
        if (rc) goto fail;
    }
    if (have > known) {
        rc = tt__store_fail(s, TT_EDB, "database schema version %d is newer than this "
                            "build's (%d): upgrade tiletune", have, known);
        goto fail;
    }
    if ((rc = s->eng->commit(s))) goto fail;
    s->schema_version = known;
    return TT_OK;
fail:
    tt_store_rollback(s);
    return rc;
}

/* 1 when url starts with a URL scheme and its colon ("mysql://", "postgres:db", "sqlite3:x"):
 * such a string is a URL this store does not take, not a file name (a SQLite file
 * "postgres:tiletune" made in the working directory hid a typo from a team). */
static int tt_has_scheme(const char *url)
{
    const char *p = url;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '+' || *p == '.' ||
           *p == '-' || (p > url && *p >= '0' && *p <= '9'))
        p++;
    return p > url && *p == ':';
}

tt_rc tt_store_open(const char *url, tt_store **out, tt_errinfo *err)
{
    *out = NULL;
    if (!url || !*url) return tt_errf(err, TT_EDB, NULL, "empty database URL");
    tt_store *s = calloc(1, sizeof *s);
    if (!s) return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    atomic_store(&s->dv_refresh_ns, (int64_t)TT_STORE_STAMP_REFRESH_MS * 1000000);
    pthread_mutexattr_t ma;   /* recursive: a batch holds it across the calls it groups */
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&s->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    char *conninfo = NULL;
    const char *opts = NULL;
    tt_rc rc;
    if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0) {
        s->engine = TT_STORE_POSTGRES;
        s->eng = &tt__engine_postgres;
        conninfo = strdup(url);
    } else if (strncmp(url, "sqlite:", 7) == 0 || !tt_has_scheme(url)) {
        s->engine = TT_STORE_SQLITE;
        s->eng = &tt__engine_sqlite;
        const char *path = url;
        if (strncmp(url, "sqlite:", 7) == 0) {
            path = url + 7;
            if (strncmp(path, "//", 2) == 0) path += 2;   /* sqlite:///abs/path */
        }
        conninfo = strdup(path);
        char *q = conninfo && path != url ? strchr(conninfo, '?') : NULL;
        if (q) {
            *q = '\0';
            opts = q + 1;
        }
        if (conninfo && !*conninfo) {
            free(conninfo);
            tt_store_close(s);
            return tt_errf(err, TT_EDB, NULL, "sqlite: empty path in \"%s\"", url);
        }
    } else {
        tt_store_close(s);
        return tt_errf(err, TT_EDB, NULL, "unsupported database URL \"%.120s\" (sqlite:PATH, "
                       "postgresql://...)", url);
    }
    if (!conninfo) {
        tt_store_close(s);
        return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    }
    rc = s->eng->open(s, conninfo, opts);
    free(conninfo);
    if (!rc) rc = tt_store_migrate(s);
    if (rc) {
        tt_errf(err, rc, NULL, "%s", s->errmsg);
        tt_store_close(s);
        return rc;
    }
    *out = s;
    return TT_OK;
}

void tt_store_close(tt_store *s)
{
    if (!s) return;
    if (s->conn) s->eng->close(s);
    tt__store_pend_drop(s);
    free(s->pend);
    tt__store_key_forget(s);
    pthread_mutex_destroy(&s->mu);
    free(s);
    tt__store_best_touch();   /* a store opened later at this address gets new stamps */
}

tt_store_engine tt_store_engine_of(const tt_store *s) { return s->engine; }
int tt_store_schema_version(tt_store *s) { return s->schema_version; }
const char *tt_store_errmsg(const tt_store *s) { return s ? s->errmsg : "no store"; }
int tt_store_conn_lost(const tt_store *s) { return s && s->err_rc == TT_EDB && s->err_lost; }
int tt_store_moved(const tt_store *s) { return s && s->err_rc == TT_EDB && s->err_moved; }

tt_rc tt_store_ping(tt_store *s)
{
    tt_store_lock(s);
    tt__res r;
    tt_rc rc = q_first(s, Q_PING, NULL, 0, &r);
    if (!rc) rc = q_end(&r);
    if (rc == TT_ENOTFOUND) rc = TT_EDB;
    if (!rc && s->eng->check) rc = s->eng->check(s);
    return tt_store_unlock(s, rc);
}

/* PostgreSQL: hold an advisory lock on (class, name) until the transaction ends, so that a
 * check-then-insert for one name is atomic across hosts (SQLite: BEGIN IMMEDIATE already
 * holds the single write lock; nothing to do). */
tt_rc tt__store_owner_lock(tt_store *s, int cls, const char *name)
{
    if (s->engine != TT_STORE_POSTGRES) return TT_OK;
    tt__param p[] = {PT(name), PI(cls)};
    tt__res r;
    tt_rc rc = q_first(s, Q_OWNER_LOCK, p, NP(p), &r);
    return rc ? rc : q_end(&r);
}

/* ---- batches (group commit) ---------------------------------------------------------- */
tt_rc tt_store_batch_begin(tt_store *s)
{
    tt_store_lock(s);
    if (s->batch) {
        tt__store_fail(s, TT_EINVAL, "a batch is already open on this store");
        return tt_store_unlock(s, TT_EINVAL);
    }
    tt_rc rc = s->eng->begin(s);
    if (rc) return tt_store_unlock(s, rc);
    s->batch = 1;
    return TT_OK;   /* the lock stays held until the batch ends */
}

int tt_store_in_batch(const tt_store *s) { return s && s->batch; }

tt_rc tt_store_batch_commit(tt_store *s)
{
    if (!s->batch) return TT_EINVAL;   /* not ours: the caller holds no batch */
    tt_rc rc = tt__store_pend_flush(s);   /* the deferred updates, in the same transaction */
    tt__store_pend_drop(s);
    s->batch = 0;
    rc = tt__store_tx_end(s, rc);   /* a failed flush rolls the whole batch back */
    tt__store_best_touch();   /* after the commit: a reader that saw the old rows misses */
    return rc;
}

tt_rc tt_store_async_commit(tt_store *s, int on)
{
    if (s->engine != TT_STORE_POSTGRES) return TT_OK;
    tt_store_lock(s);
    if (s->in_tx) {
        tt__store_fail(s, TT_EINVAL, "async commit: a transaction is open");
        return tt_store_unlock(s, TT_EINVAL);
    }
    return tt_store_unlock(s, s->eng->exec_script(s, on ? "SET synchronous_commit = off"
                                                        : "RESET synchronous_commit"));
}

void tt_store_batch_rollback(tt_store *s)
{
    if (!s || !s->batch) return;
    tt__store_pend_drop(s);
    s->batch = 0;
    tt_store_rollback(s);
    tt_store_unlock(s, TT_OK);
}

/* ---- templates ---------------------------------------------------------------------- */
tt_rc tt_store_template_put(tt_store *s, const char *name, const char *hash,
                            const char *version, const char *doc_json)
{
    if (!name || !*name || !hash || !*hash || !doc_json) return TT_EINVAL;
    tt__param p[] = {PT(name), PT(hash), PT(version ? version : ""), PT(doc_json)};
    tt_store_lock(s);
    return tt_store_unlock(s, q_exec(s, Q_TPL_PUT, p, NP(p), NULL));
}

tt_rc tt_store_template_put_owned(tt_store *s, const char *name, const char *hash,
                                  const char *version, const char *doc_json, const char *owner,
                                  int admin)
{
    if (!name || !*name || !hash || !*hash || !doc_json || !owner) return TT_EINVAL;
    tt_rc rc = tt__store_tx_begin(s);
    if (rc) return rc;
    tt__param pn[] = {PT(name)};
    tt__res r;
    if (!(rc = tt__store_owner_lock(s, TT_LOCK_TEMPLATES, name)) &&
        !(rc = q_first(s, Q_TPL_OWNER, pn, NP(pn), &r))) {
        int other = strcmp(C_T(&r, 0) ? C_T(&r, 0) : "", owner) != 0;
        if (!(rc = q_end(&r)) && other && !admin)
            rc = tt__store_fail(s, TT_EFORBIDDEN, "template '%s' belongs to another token",
                                name);
    } else if (rc == TT_ENOTFOUND) {
        rc = TT_OK;   /* a new name: owner becomes its owner */
    }
    tt__param p[] = {PT(name), PT(hash), PT(version ? version : ""), PT(doc_json), PT(owner)};
    if (!rc) rc = q_exec(s, Q_TPL_PUT_OWNED, p, NP(p), NULL);
    return tt__store_tx_end(s, rc);
}

tt_rc tt_store_template_get(tt_store *s, const char *name, const char *hash, char **doc_json,
                            char hash_out[17])
{
    *doc_json = NULL;
    if (!name) return TT_EINVAL;
    tt__param p[] = {PT(name), PT(hash)};
    tt__res r;
    tt_store_lock(s);
    tt_rc rc = q_first(s, hash ? Q_TPL_GET : Q_TPL_LATEST, p, hash ? 2 : 1, &r);
    if (rc) return tt_store_unlock(s, rc);
    int oom = 0;
    *doc_json = tt_dup(C_T(&r, 0), &oom);
    if (hash_out) tt_cpy(hash_out, 17, C_T(&r, 1));
    rc = q_end(&r);
    if (!rc && oom) rc = TT_ENOMEM;
    if (rc) {
        free(*doc_json);
        *doc_json = NULL;
    }
    return tt_store_unlock(s, rc);
}

static tt_rc tt_template_list_row(tt__res *r, json_t *a)
{
    const char *ver = C_T(r, 2);
    json_t *o = json_pack("{s:s, s:s, s:s, s:f}", "name", C_T(r, 0), "hash", C_T(r, 1),
                          "version", ver ? ver : "", "updated_at", C_F(r, 3));
    return !o || json_array_append_new(a, o) ? TT_ENOMEM : TT_OK;
}

tt_rc tt_store_template_list(tt_store *s, char **out)
{
    return tt__store_json_query(s, Q_TPL_LIST, tt_q[Q_TPL_LIST].sql, tt_q[Q_TPL_LIST].pg,
                                NULL, 0, json_array(), tt_template_list_row, out);
}


/* SPDX-License-Identifier: MIT
 * store_checks.c - tt_store check history: every verdict of POST /v1/check, newest first per
 * template and target (the web view's shape page); helpers in store_internal.h.
 */
#include <stdlib.h>
#include <string.h>

#include "store_q.h"

#define CHECK_COLS "id, created_at, template_name, target, problem_key, verdict, token_name, entry_json"

enum { Q_CHECK_ADD, Q_CHECK_LIST, Q__COUNT };
_Static_assert(TT__Q_STORE_CHECKS + Q__COUNT <= TT__Q_MAX, "raise TT__Q_MAX");

static const tt__qdef tt_q[Q__COUNT] = {
    [Q_CHECK_ADD] = {"INSERT INTO check_history (created_at, template_name, target, "
                     "problem_key, verdict, token_name, entry_json) VALUES (tt_now(), $1, $2, "
                     "$3, $4, $5, $6)", NULL},
    [Q_CHECK_LIST] = {"SELECT " CHECK_COLS " FROM check_history WHERE template_name = $1 AND "
                      "target = $2 AND ($3 IS NULL OR problem_key = $3) ORDER BY id DESC "
                      "LIMIT $4", NULL},
};

#define TT__Q_BASE TT__Q_STORE_CHECKS   /* this file's first query id (store_q.h) */

void tt_check_rec_clear(tt_check_rec *c)
{
    if (!c) return;
    free(c->problem_key);
    free(c->entry_json);
    memset(c, 0, sizeof *c);
}

tt_rc tt_store_check_add(tt_store *s, const char *template_name, const char *target,
                         const char *problem_key, const char *verdict, const char *token_name,
                         const char *entry_json)
{
    if (!template_name || !target || !problem_key || !verdict || !entry_json) return TT_EINVAL;
    tt__param p[] = {TT__PT(template_name), TT__PT(target), TT__PT(problem_key),
                     TT__PT(verdict), TT__PT(token_name ? token_name : ""), TT__PT(entry_json)};
    tt__store_lock(s);
    return tt__store_unlock(s, q_exec(s, Q_CHECK_ADD, p, TT__NP(p), NULL));
}

static tt_rc tt_check_row(tt__res *r, void *e)
{
    tt_check_rec *c = e;
    int oom = 0;
    c->id = TT__CI(r, 0);
    c->created_at = TT__CF(r, 1);
    tt__cpy(c->template_name, sizeof c->template_name, TT__CT(r, 2));
    tt__cpy(c->target, sizeof c->target, TT__CT(r, 3));
    c->problem_key = tt__dup(TT__CT(r, 4), &oom);
    tt__cpy(c->verdict, sizeof c->verdict, TT__CT(r, 5));
    tt__cpy(c->token_name, sizeof c->token_name, TT__CT(r, 6));
    c->entry_json = tt__dup(TT__CT(r, 7), &oom);
    if (oom) {
        tt_check_rec_clear(c);
        return TT_ENOMEM;
    }
    return TT_OK;
}

static void tt_check_clear_v(void *e) { tt_check_rec_clear(e); }

tt_rc tt_store_check_list(tt_store *s, const char *template_name, const char *target,
                          const char *problem_key, int64_t limit, tt_check_rec **rows,
                          size_t *n)
{
    *rows = NULL;
    *n = 0;
    if (!template_name || !target || limit < 1) return TT_EINVAL;
    tt__param p[] = {TT__PT(template_name), TT__PT(target), TT__PT(problem_key), TT__PI(limit)};
    tt__res r;
    tt__store_lock(s);
    tt_rc rc = q_start(s, Q_CHECK_LIST, p, TT__NP(p), &r);
    if (rc) return tt__store_unlock(s, rc);
    void *v = NULL;
    rc = tt__store_collect(s, &r, sizeof(tt_check_rec), tt_check_row, tt_check_clear_v, &v, n);
    *rows = v;
    return tt__store_unlock(s, rc);
}

/* SPDX-License-Identifier: MIT
 * store_q.h - the shorthands a store file writes its queries with (store.c, store_jobs.c,
 * store_trials.c, store_best.c, store_meta.c, store_rekey.c; private to daemon/store).
 * A file that runs queries by id defines its table `tt_q[]` ({sql, pg}: pg NULL = same SQL)
 * and TT__Q_BASE, its first statement-cache slot (store_internal.h, "Query ids"); then
 * q_start / q_exec / q_first run query `id` of that table.  PT/PI/PF/NP bind parameters,
 * C_T/C_I/C_F read columns, the rest name store_internal.h's helpers.
 */
#ifndef TT_STORE_Q_H
#define TT_STORE_Q_H

#include "store_internal.h"

#define q_start(s, id, p, np, r) \
    tt__q_start(s, TT__Q_BASE + (id), tt_q[id].sql, tt_q[id].pg, p, np, r)
#define q_exec(s, id, p, np, ch) \
    tt__q_exec(s, TT__Q_BASE + (id), tt_q[id].sql, tt_q[id].pg, p, np, ch)
#define q_first(s, id, p, np, r) \
    tt__q_first(s, TT__Q_BASE + (id), tt_q[id].sql, tt_q[id].pg, p, np, r)
#define q_step tt__q_step
#define q_end tt__q_end
#define tt_store_lock tt__store_lock
#define tt_store_unlock tt__store_unlock
#define tt_cpy tt__cpy
#define tt_dup tt__dup
#define PT TT__PT
#define PI TT__PI
#define PF TT__PF
#define NP TT__NP
#define C_T TT__CT
#define C_I TT__CI
#define C_F TT__CF

#endif

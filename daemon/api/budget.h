/* SPDX-License-Identifier: MIT
 * budget.h - the work budget of one HTTP request: how much model/simulator work it may ask
 * for, until when it may run, and whether its client is still there.
 *
 * http.c fills one per request from the config (anonymous requests get the *_anon limits,
 * requests with a valid token the *_token ones) and hands it to the handler in tt_req; the
 * predict and simulate code (api_model.c) checks it before and while it works.  A NULL
 * budget (the CLI, handler unit tests) means no limit and no cancellation.
 *
 * Thread-safety: a budget is owned by the request's thread; `cancelled` may look at state
 * shared with the server (its own synchronisation).
 */
#ifndef TT_BUDGET_H
#define TT_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "tt_err.h"

typedef struct tt_budget {
    double predict_work;      /* configs x (constraints + 1) predict may evaluate; 0: no limit */
    int64_t sim_events;       /* simulator events of one simulate; 0: the simulator's default */
    double deadline;          /* CLOCK_MONOTONIC seconds after which work stops; 0: none */
    size_t trace_bytes;       /* simulate traces are cut to this size; 0: never cut */
    const char *tier;         /* "anon" or "token": names the config keys in messages */
    /* 1 when the work is no longer wanted (client gone, server stopping); may be NULL.
     * *why receives TT_ECANCELLED (client left) or TT_EUNAVAILABLE (shutting down). */
    int (*cancelled)(void *ctx, tt_rc *why);
    void *ctx;
} tt_budget;

/* Seconds on CLOCK_MONOTONIC. */
double tt_budget_now(void);
/* TT_OK while the request may go on; else TT_EBUDGET (wall time spent: err names the
 * request_seconds_<tier> key), TT_ECANCELLED or TT_EUNAVAILABLE, with err filled.  NULL b: OK. */
tt_rc tt_budget_check(const tt_budget *b, tt_errinfo *err);
/* TT_OK when `work` units fit predict_work, else TT_EBUDGET naming predict_work_<tier>. */
tt_rc tt_budget_predict(const tt_budget *b, double work, tt_errinfo *err);

/* Cut a Chrome trace (a JSON array of flat event objects, as the simulator writes it) in
 * place after the last whole event that fits in limit bytes, closing the array.  Returns
 * the new length; *kept and *total receive the event counts (equal when nothing was cut). */
size_t tt_budget_trace_cut(char *trace, size_t len, size_t limit, size_t *kept, size_t *total);

#endif

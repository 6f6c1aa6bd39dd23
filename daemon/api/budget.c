/* SPDX-License-Identifier: MIT
 * budget.c - checks of a request's work budget, deadline and cancellation (budget.h).
 */
#include "budget.h"

#include <time.h>

double tt_budget_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

tt_rc tt_budget_check(const tt_budget *b, tt_errinfo *err)
{
    if (!b) return TT_OK;
    tt_rc why = TT_OK;
    if (b->cancelled && b->cancelled(b->ctx, &why)) {
        if (why == TT_EUNAVAILABLE)
            return tt_errf(err, TT_EUNAVAILABLE, NULL,
                           "the server is shutting down; retry on another instance or later");
        return tt_errf(err, TT_ECANCELLED, NULL, "the client closed the connection");
    }
    if (b->deadline > 0 && tt_budget_now() > b->deadline)
        return tt_errf(err, TT_EBUDGET, "budget",
                       "the request ran out of its wall-time budget (request_seconds_%s)",
                       b->tier ? b->tier : "anon");
    return TT_OK;
}

tt_rc tt_budget_predict(const tt_budget *b, double work, tt_errinfo *err)
{
    if (!b || b->predict_work <= 0 || work <= b->predict_work) return TT_OK;
    return tt_errf(err, TT_EBUDGET, "budget",
                   "predict would check up to %.3g config x constraint combinations; the "
                   "budget of %s requests is %.3g (predict_work_%s)%s",
                   work, b->tier && b->tier[0] == 't' ? "token" : "anonymous",
                   b->predict_work, b->tier ? b->tier : "anon",
                   b->tier && b->tier[0] == 't' ? "" : "; a token gets a larger budget");
}

size_t tt_budget_trace_cut(char *trace, size_t len, size_t limit, size_t *kept, size_t *total)
{
    size_t events = 0, fit = 0, cut = 0;
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = trace[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = 0;
            continue;
        }
        if (c == '"') in_str = 1;
        else if (c == '[' || c == '{') depth++;
        else if ((c == ']' || c == '}') && --depth == 1) {   /* an element of the array ends */
            events++;
            if (i + 2 <= limit) { fit = events; cut = i + 1; }
        }
    }
    *total = events;
    *kept = events;
    if (len <= limit || cut == 0) return len;
    *kept = fit;
    trace[cut] = ']';
    trace[cut + 1] = '\0';
    return cut + 1;
}

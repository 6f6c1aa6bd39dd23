/* SPDX-License-Identifier: MIT
 * sim_trace.c - Chrome trace-event JSON of the simulator (opens in Perfetto and
 * chrome://tracing): one complete event ("ph":"X") per instruction of the traced core,
 * pid = core, tid = agent * 8 + unit, with metadata naming the unit threads.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

void tt__sbuf_printf(tt__sbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { b->oom = 1; return; }
        if (b->p && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc - b->n <= (size_t)k) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) { b->oom = 1; return; }
        b->p = np;
        b->cap = nc;
    }
}

static const char *const agent_names[3] = {"AIC", "AIV0", "AIV1"};

void tt__sim_trace_meta(tt__sbuf *b, int core, int has_cube, int has_vec)
{
    tt__sbuf_printf(b, "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                       "\"args\":{\"name\":\"AI core %d (simulated)\"}}", core, core);
    for (int a = 0; a < 3; a++) {
        if (a == 0 ? !has_cube : !has_vec) continue;
        for (int u = 0; u < TT_UNIT__COUNT; u++) {
            int tid = a * 8 + u;
            tt__sbuf_printf(b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                               "\"args\":{\"name\":\"%s %s\"}}", core, tid, agent_names[a],
                            tt_unit_name((tt_unit)u));
            tt__sbuf_printf(b, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,"
                               "\"tid\":%d,\"args\":{\"sort_index\":%d}}", core, tid, tid);
        }
    }
}

static void event(tt__sbuf *b, const tt__sim *s, int core, const tt__trec *r, int agent, double t0)
{
    double mhz = s->tgt->clock_mhz > 0 ? s->tgt->clock_mhz : 1;
    const tt__sop *so = r->op >= 0 && (size_t)r->op < s->nops ? &s->ops[r->op] : NULL;
    const char *name = so ? so->name : "?";
    if (r->kind == TT__SI_SET) name = "set cross flag";
    else if (r->kind == TT__SI_WAIT) name = "wait cross flag";
    /* whole nanoseconds, dur = end - ts of the rounded values: ts and dur rounded apart made
     * the next event of a unit start 0.1 ns before this one ended (Perfetto needs the
     * complete events of a thread nested, and flagged the unit's back-to-back ops) */
    long long ts = llround((t0 + r->start) / mhz * 1e3), end = llround((t0 + r->end) / mhz * 1e3);
    if (ts < 0) ts = 0;
    if (end < ts) end = ts;
    tt__sbuf_printf(b, ",\n{\"name\":\"%s\",\"ph\":\"X\",\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,"
                       "\"pid\":%d,\"tid\":%d,\"args\":{\"slot\":%d,\"op\":\"%s\",\"cycles\":%.1f}}",
                    name, ts / 1000, ts % 1000, (end - ts) / 1000, (end - ts) % 1000, core,
                    agent * 8 + r->unit, r->slot, so ? so->op->path : "", r->end - r->start);
}

void tt__sim_trace_add(tt__sbuf *b, const tt__sim *s, int core, const tt__trec *r, size_t n,
                       double t0)
{
    for (size_t i = 0; i < n; i++) {
        if (r[i].agent == TT__AG_CUBE) {
            event(b, s, core, &r[i], 0, t0);
        } else {          /* both vector cores run the same half-size program */
            event(b, s, core, &r[i], 1, t0);
            event(b, s, core, &r[i], 2, t0);
        }
    }
}

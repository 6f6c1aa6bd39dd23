/* SPDX-License-Identifier: MIT
 * fidelity_timing.c - classifies the `timing` text of a published point (fidelity_timing.h).
 */
#include "fidelity_timing.h"

#include <string.h>

static int has(const char *s, const char *w) { return strstr(s, w) != NULL; }

tt_fidt tt_fidt_of(const char *timing)
{
    const char *s = timing ? timing : "";
    /* first: "tool not specified; doc lists do_bench and msprof op" names both methods */
    if (!*s || has(s, "not stated") || has(s, "not specified")) return TT_FIDT_UNSTATED;
    if (has(s, "do_bench") || has(s, "torch.npu.Event")) return TT_FIDT_LOOP;
    if (has(s, "msprof") || has(s, "Task Duration") || has(s, "task_duration") ||
        has(s, "mskpp") || has(s, "on-device") || has(s, "task time"))
        return TT_FIDT_DEVICE;
    /* e.g. host wall clock around one launch + synchronize: the whole launch is paid, nothing
     * overlaps; no device figure either, so it is counted with the unstated rows */
    return TT_FIDT_UNSTATED;
}

int tt_fidt_flushes_l2(const char *timing)
{
    return timing && has(timing, "triton.testing.do_bench");
}

const char *tt_fidt_name(tt_fidt k)
{
    return k == TT_FIDT_DEVICE ? "device" : k == TT_FIDT_LOOP ? "loop" : "n/s";
}

double tt_fidt_launch_us(tt_fidt k, double launch_us, double pipelined_us)
{
    return k == TT_FIDT_LOOP ? pipelined_us : launch_us;
}

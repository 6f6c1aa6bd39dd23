/* SPDX-License-Identifier: MIT
 * tt_fidelity.c - calibration points as model inputs (see tt_fidelity.h).
 */
#include "tt_fidelity.h"

#include <stdio.h>
#include <string.h>

const char *const tt_fidelity_stream_read_json =
    "{\"tiletune\":1,\"name\":\"stream_read\",\"version\":\"1\","
    "\"inputs\":{\"N\":{\"type\":\"int\",\"min\":1,\"max\":1099511627776},"
    "\"dtype\":{\"type\":\"dtype\",\"values\":[\"float16\"],\"default\":\"float16\"}},"
    "\"params\":{\"tile\":{\"pow2\":[1024,65536]},\"S\":[2,3,4]},"
    "\"let\":{\"ntiles\":\"ceildiv(N, tile)\",\"nblk\":\"min(ceildiv(ntiles, 2), 24)\","
    "\"per\":\"ceildiv(ntiles, 2 * nblk)\"},"
    "\"tensors\":{\"X\":{\"shape\":[\"N\"],\"dtype\":\"dtype\"}},"
    "\"buffers\":{\"X_UB\":{\"scope\":\"UB\",\"shape\":[\"tile\"],\"dtype\":\"dtype\",\"copies\":\"S\"}},"
    "\"kernel\":{\"grid\":{\"b\":\"nblk\"},\"cores\":\"vector\",\"body\":["
    "{\"for\":\"i\",\"trip\":\"per\",\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"gm:X\",\"X_UB\"],\"along\":[\"b\",\"i\"]}]}]}}";

static int set_slot(const tt_template *t, int64_t *slots, const char *name, int64_t v)
{
    int s = tt_tmpl_slot_of(t, name);
    if (s < 0) return -1;
    slots[s] = v;
    return 0;
}

static int64_t dtype_of(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? tt_dtype_parse(s, strlen(s)) : -1;
}

int tt_fidelity_gemm_slots(const tt_template *gemm, const json_t *point, int64_t *slots)
{
    const json_t *pr = json_object_get(point, "problem"), *cf = json_object_get(point, "config");
    int bad = 0;
    for (size_t p = 0; p < gemm->nparams; p++)   /* core_num, swizzle: their defaults */
        if (gemm->params[p].has_default) slots[gemm->ninputs + p] = gemm->params[p].def;
    bad |= set_slot(gemm, slots, "M", json_integer_value(json_object_get(pr, "M")));
    bad |= set_slot(gemm, slots, "N", json_integer_value(json_object_get(pr, "N")));
    bad |= set_slot(gemm, slots, "K", json_integer_value(json_object_get(pr, "K")));
    bad |= set_slot(gemm, slots, "dtype", dtype_of(json_object_get(pr, "dtype")));
    bad |= set_slot(gemm, slots, "out_dtype", dtype_of(json_object_get(pr, "out")));
    static const char *const keys[] = {"block_M", "block_N", "block_K", "K_L1"};
    for (int k = 0; k < 4; k++)
        bad |= set_slot(gemm, slots, keys[k], json_integer_value(json_object_get(cf, keys[k])));
    int db = json_is_true(json_object_get(cf, "double_buffer"));
    bad |= set_slot(gemm, slots, "S1", db ? 2 : 1);
    bad |= set_slot(gemm, slots, "S2", db ? 2 : 1);
    /* the PTO-ISA kernel behind these points runs one block per core ("a3-die-24core"),
     * each walking its share of the output tiles (its core_grid): a persistent kernel */
    const char *soc = json_string_value(json_object_get(point, "soc"));
    const char *c = soc ? strstr(soc, "core") : NULL;
    int cores = 0;
    while (c && c > soc && c[-1] >= '0' && c[-1] <= '9') c--;
    if (c && sscanf(c, "%d", &cores) == 1 && cores > 0 && tt_tmpl_slot_of(gemm, "core_num") >= 0)
        set_slot(gemm, slots, "core_num", cores);
    return bad ? -1 : 0;
}

double tt_fidelity_stream_best(const tt_template *t, const tt_target *tg, const tt_model *m,
                               int64_t *slots, double bytes, tt_model_result *best,
                               int *nfeasible)
{
    double block_us = tt_target_us(tg, tg->block_cycles);
    double bw = 0;
    int feasible = 0;
    best->rc = TT_EINFEASIBLE;
    for (size_t a = 0; a < t->params[0].nvalues; a++)
        for (size_t b = 0; b < t->params[1].nvalues; b++) {
            slots[t->ninputs] = t->params[0].values[a];
            slots[t->ninputs + 1] = t->params[1].values[b];
            tt_model_result r;
            if (tt_model_eval(m, slots, &r) != TT_OK) continue;
            feasible++;
            double g = bytes / ((r.time_us - tg->launch_us - block_us) * 1e3);
            if (g > bw) { bw = g; *best = r; }
        }
    if (nfeasible) *nfeasible = feasible;
    return bw;
}

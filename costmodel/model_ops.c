/* SPDX-License-Identifier: MIT
 * model_ops.c - cost of the copy variants of the kernel library (docs/cost-model.md,
 * "Copy variants"): gather copies whose cost is per selected row, and atomic-add writes;
 * and the cost of a vector op, a row reduction as a cascade of group reductions
 * (docs/cost-model.md, "Row reductions").  Shared by the model and the simulator.
 *
 * Both are estimates from the target's path figures, not fitted: a gather of R rows is R
 * transfers of one row each; the first pays the path latency, each further row its latency
 * divided by the transfers a DMA queue keeps in flight (overheads.dma_outstanding).  An
 * atomic add is a read-modify-write in L2: the bytes cross the write path twice.
 */
#include <math.h>

#include "model_int.h"

double tt__gather_cycles(const tt_pathcost *pc, int64_t rows, int outstanding)
{
    if (rows <= 1 || !pc) return 0;
    if (outstanding < 1) outstanding = 1;
    return (double)(rows - 1) * pc->latency_cycles / (double)outstanding;
}

double tt__vec_cycles(const tt_target *tg, int cls, double elems, int esize, double rows)
{
    int col = esize >= 4;
    if (!(elems > 0)) return tg->vec_head_cycles[cls];
    if (cls != TT_V_REDUCE || esize <= 0 || tg->vec_bytes_per_cycle[TT_V_UNARY][col] <= 0)
        return tg->vec_head_cycles[cls] + elems * esize / tg->vec_bytes_per_cycle[cls][col];
    /* a row reduction as TileLang-Ascend (reduce_2d_v2.h) and PTO-ISA (TRowReduceOps.hpp)
     * issue it: group reductions (vcgmax/vcgadd: each 32-B block to one value) at one
     * 256-B repeat per cycle, until a row is at most one block; then a whole reduction */
    double r = rows >= 1 ? rows : 1, len = elems / r, g = 32.0 / esize;
    double cyc = tg->vec_head_cycles[cls];
    while (len > g) {
        cyc += r * len * esize / tg->vec_bytes_per_cycle[TT_V_UNARY][col];
        len = ceil(len / g);
    }
    return cyc + r * len * esize / tg->vec_bytes_per_cycle[cls][col];
}

tt_rc tt__model_copy_variant(const tt_model *m, int i, const int64_t *slots, tt__mscratch *sc)
{
    const tt__mop *o = &m->ops[i];
    sc->xcyc[i] = 0;
    if (o->rows.kind != 2 || o->rows.c != 1) {
        int64_t r;
        tt_rc rc = tt__mx_eval(&o->rows, slots, &r);
        if (rc) return rc;
        sc->xcyc[i] = tt__gather_cycles(o->pc, r, m->dma_outstanding);
    }
    if (o->atomic.kind != 2 || o->atomic.c != 0) {
        int64_t a;
        tt_rc rc = tt__mx_eval(&o->atomic, slots, &a);
        if (rc) return rc;
        if (a) sc->bytes[i] *= 2;
    }
    return TT_OK;
}

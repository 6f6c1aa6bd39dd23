/* SPDX-License-Identifier: MIT
 * model_ops.c - cost of the copy variants of the kernel library (docs/cost-model.md,
 * "Copy variants"): gather copies whose cost is per selected row, and atomic-add writes.
 *
 * Both are estimates from the target's path figures, not fitted: a gather of R rows is R
 * transfers of one row each; the first pays the path latency, each further row its latency
 * divided by the transfers a DMA queue keeps in flight (overheads.dma_outstanding).  An
 * atomic add is a read-modify-write in L2: the bytes cross the write path twice.
 */
#include "model_int.h"

double tt__gather_cycles(const tt_pathcost *pc, int64_t rows, int outstanding)
{
    if (rows <= 1 || !pc) return 0;
    if (outstanding < 1) outstanding = 1;
    return (double)(rows - 1) * pc->latency_cycles / (double)outstanding;
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

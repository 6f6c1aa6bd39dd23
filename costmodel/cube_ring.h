/* SPDX-License-Identifier: MIT
 * cube_ring.h - how many slots of an on-chip buffer's ring a pipelined loop can use, one rule
 * for the analytic model (model.c, ring limits) and the simulator (sim_ops.c, ring size)
 * (docs/cost-model.md, section 2, "int8 operands in L0B").
 * Pure function; thread-safe.
 */
#ifndef TT_CUBE_RING_H
#define TT_CUBE_RING_H

#include <stdint.h>

#include "template.h"

/* A buffer of `copies` slots is a ring of `copies` slots, except an L0B buffer of 1-byte
 * elements: an int8 B operand reaches L0B only through a transposing load (A2/A3:
 * LoadDataWithTranspose, CATLASS copy_l1_to_l0b for int8 zN -> nZ and nZ -> zN), and the
 * published CATLASS int8 rows show that load not overlapping the MMAD that reads the
 * previous slot: the ring acts as one slot. */
static inline int64_t tt__ring_slots(tt_scope scope, int esize, int64_t copies)
{
    return scope == TT_SCOPE_L0B && esize == 1 && copies > 1 ? 1 : copies;
}

#endif

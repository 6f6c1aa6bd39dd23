/* SPDX-License-Identifier: MIT
 * roofline.h - the chip memory roofline, one set of equations for the analytic model
 * (model_traffic.c) and the simulator (sim_ops.c) (docs/cost-model.md, section 4): the
 * effective bandwidth of GM traffic for an L2 hit rate, the hit rate of re-reads across
 * blocks, and the chance that data of the previous launch is still in L2.
 * Pure functions; thread-safe.
 */
#ifndef TT_ROOFLINE_H
#define TT_ROOFLINE_H

#include <math.h>

#include "target.h"

/* Hit path (GB/s) of a GM transfer: the cube cores' loads (MTE2 into L1/L0) reach
 * memory.l2_load_gbps when all cores stream (the sustained rate the published GM-load busy
 * ratios imply), any other transfer l2_gbps (the 8 MB read point). */
static inline double tt__roof_l2(const tt_target *tg, int cube_load)
{
    return cube_load && tg->l2_load_gbps > 0 ? tg->l2_load_gbps : tg->l2_gbps;
}

/* Effective chip bandwidth (GB/s) of GM traffic with L2 hit rate h whose hits run at
 * `l2` GB/s: msKPP's L2 model h l2 + (1 - h) miss, the miss path l2_gbps / l2_miss_factor
 * capped by the cached HBM stream (hbm_gbps). */
static inline double tt__roof_gbps(const tt_target *tg, double l2, double h)
{
    double miss = tg->l2_miss_factor >= 1 ? tg->l2_gbps / tg->l2_miss_factor : tg->hbm_gbps;
    if (tg->hbm_gbps > 0 && tg->hbm_gbps < miss) miss = tg->hbm_gbps;
    if (!(miss > 0)) miss = l2;
    if (h > 1) h = 1;
    if (h < 0) h = 0;
    return l2 * h + miss * (1 - h);
}

/* Rate (GB/s) of a GM write: it lands in the write-back L2 at the L2 rate whatever the
 * read hit rate, and the L2 writes it back to HBM behind the kernel's transfers (issue 10,
 * structural cause 3: C and workspace writes at the L2 write-back, not at the HBM rate). */
static inline double tt__roof_write_gbps(const tt_target *tg)
{
    return tg->l2_gbps;
}

/* Data of the previous launch survives a random-replacement L2 of effective size
 * `resident` with probability exp(-footprint / resident). */
static inline double tt__roof_warm(double footprint, double resident)
{
    if (!(footprint > 0)) return 1;
    return resident > 0 ? exp(-footprint / resident) : 0;
}

/* Hit rate of the re-reads of a tile that `dist` blocks (grid points) later read again.
 * A block of the same wave (dist < cores in use) reads it at the same time, so the L2
 * holds it: the blocks of one wave count a tile once.  A later wave hits when the bytes
 * moved in between (`between` = bytes a block moves x dist, + the live workspace) fit:
 * min(1, l2_bytes / between). */
static inline double tt__roof_reread(double dist, double cores_used, double between, double l2_bytes)
{
    if (dist < cores_used || !(between > 0)) return 1;
    double h = l2_bytes / between;
    return h > 1 ? 1 : h;
}

#endif

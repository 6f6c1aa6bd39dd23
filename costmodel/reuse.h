/* SPDX-License-Identifier: MIT
 * reuse.h - the L2 re-use distance of a tile across blocks, one rule for the analytic model
 * (model_traffic.c) and the simulator (sim_ops.c): how many blocks run between two reads of
 * a tile that does not depend on grid dim g (docs/cost-model.md, section 4).
 * Pure function; thread-safe.
 */
#ifndef TT_REUSE_H
#define TT_REUSE_H

#include <stdint.h>

/* Blocks are numbered with the last grid dim fastest, so a tile that does not depend on dim
 * g is read again after the product of the extents of the dims after g.  With a swizzle
 * w >= 2 (block rasterisation) the second-to-last dim P runs fastest inside panels of w of
 * its indices: a tile independent of P is re-read by the next block (distance 1), one
 * independent of the last dim after min(w, ext[P]) blocks; other dims are unchanged. */
static inline double tt__reuse_distance(int ngrid, const int64_t *ext, int g, int64_t swizzle)
{
    int P = ngrid - 2;
    if (swizzle >= 2 && P >= 0 && ext[P] > 1) {
        if (g == P) return 1;
        if (g == ngrid - 1) return (double)(swizzle < ext[P] ? swizzle : ext[P]);
    }
    double d = 1;
    for (int h = g + 1; h < ngrid; h++) d *= (double)ext[h];
    return d;
}

#endif

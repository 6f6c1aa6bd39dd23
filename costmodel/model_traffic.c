/* SPDX-License-Identifier: MIT
 * model_traffic.c - GM traffic of a kernel, the L2 hit estimate from tile re-use across
 * blocks (`along`), and the effective chip bandwidth shared by the cores (cost model, 4).
 *
 * Equations (docs/cost-model.md, section 4):
 *   reads T = sum over GM-read copies of bytes x executions x blocks; unique U = distinct
 *   tiles x bytes (capped by the tensor); re-reads R = T - U hit L2 with
 *   h_c = min(1, L2 / W_c), W_c = bytes a block moves x blocks between two reads of the tile
 *   + the live workspace; first reads hit when the data survived the previous launch:
 *   h_w = exp(-F / resident), F = footprint of the tensors, a workspace counting one slot
 *   per block in flight; every read of data the kernel wrote itself (a workspace hand-off)
 *   hits.  h = (sum R_c h_c + U h_w) / T.
 *   effective bandwidth = h l2_gbps + (1 - h) min(l2_gbps / l2_miss_factor, hbm_gbps)
 *   (msKPP's L2 model, the miss path capped by the cached HBM stream).
 *   HBM writes: the distinct bytes written (a write-back L2 merges rewrites), x (1 - h_w).
 *   Share of a GM transfer of mover u (bandwidth shared by demand): B_core / (k_u + sum of
 *   the other movers' duty cycles f_v), B_core = bandwidth / cores in use.
 */
#include <math.h>
#include <string.h>

#include "model_int.h"
#include "reuse.h"
#include "roofline.h"

void tt__model_traffic(const tt_model *m, tt__mscratch *sc, int64_t cores_used)
{
    const tt_template *t = m->t;
    const tt_target *tg = m->tgt;
    double blocks = (double)sc->blocks;
    double uniq_t[TT_TMPL_MAX_TENSORS], wuniq_t[TT_TMPL_MAX_TENSORS];
    size_t nt = t->ntensors < TT_TMPL_MAX_TENSORS ? t->ntensors : TT_TMPL_MAX_TENSORS;
    memset(uniq_t, 0, nt * sizeof *uniq_t);
    memset(wuniq_t, 0, nt * sizeof *wuniq_t);
    memcpy(sc->moves, m->moves, sizeof sc->moves);
    const double *tbytes = m->tconst ? m->tbytes : sc->tbytes;
    double per_block = 0, reads = 0, writes = 0, cube_reads = 0;
    double ws_slot[TT_TMPL_MAX_TENSORS];
    memset(ws_slot, 0, nt * sizeof *ws_slot);
    for (int i = 0; i < m->nops; i++) {
        const tt__mop *o = &m->ops[i];
        if (o->kind != TT_OP_COPY || (!o->gm_read && !o->gm_write)) continue;
        /* vector-side programs run on both vector cores of a block, on different rows */
        double side = o->side == TT_SIDE_VECTOR ? 2 : 1;
        double b = sc->bytes[i] * sc->execs[i] * side;
        /* a workspace is per-block scratch re-read right after it was written: what it
         * keeps in L2 is one slot per block in flight, not what a block moves through it */
        if (t->tensors[o->tensor].workspace) {
            if (o->gm_write) ws_slot[o->tensor] += sc->bytes[i] * side;
        } else {
            per_block += b;
        }
        if (o->gm_read) {
            reads += b * blocks;
            if (o->side == TT_SIDE_CUBE) cube_reads += b * blocks;
            double u = sc->distinct[i] * sc->bytes[i] * side;
            if (u > b * blocks) u = b * blocks;
            uniq_t[o->tensor] += u;
        } else {
            writes += b * blocks;
            double u = sc->distinct[i] * sc->bytes[i] * side;
            if (u > b * blocks) u = b * blocks;
            wuniq_t[o->tensor] += u;
        }
    }
    double footprint = 0, uniq = 0, own = 0, wuniq = 0, ws_live = 0;
    for (size_t k = 0; k < t->ntensors; k++) {
        if (t->tensors[k].workspace && ws_slot[k] > 0) {
            /* live workspace: one slot per block in flight */
            double live = ws_slot[k] * (double)cores_used;
            if (live > tbytes[k]) live = tbytes[k];
            ws_live += live;
            footprint += live;
        } else {
            footprint += tbytes[k];
        }
        /* a write-back L2 merges repeated writes of one address: HBM sees each byte once */
        wuniq += wuniq_t[k] < tbytes[k] ? wuniq_t[k] : tbytes[k];
        double u = uniq_t[k] < tbytes[k] ? uniq_t[k] : tbytes[k];
        /* data the kernel wrote itself (a workspace hand-off) is read back from L2: every
         * read of a rewritten ring slot is new data, so it is not capped by the tensor */
        if (m->written[k]) own += uniq_t[k];
        else uniq += u;
    }
    if (uniq + own > reads) {
        double f = reads / (uniq + own);
        uniq *= f;
        own *= f;
    }
    /* re-reads, weighted by the hit rate of each copy's re-use distance */
    double rr = 0, rr_hit = 0;
    for (int i = 0; i < m->nops; i++) {
        const tt__mop *o = &m->ops[i];
        if (o->kind != TT_OP_COPY || !o->gm_read) continue;
        double side = o->side == TT_SIDE_VECTOR ? 2 : 1;
        double tot = sc->bytes[i] * sc->execs[i] * side * blocks;
        double u = sc->distinct[i] * sc->bytes[i] * side;
        double r = tot - u;
        if (r <= 0) continue;
        /* blocks between two reads of one tile: the nearest grid dim it does not depend on
         * (blocks are numbered with the last grid dim fastest) */
        double dist = 0;
        for (int g = 0; g < m->ngrid; g++) {
            int in = 0;
            for (int a = 0; a < o->ngrid_along; a++)
                if (o->along_grid[a] == g && !(sc->shared[i] >> g & 1)) in = 1;
            if (in || sc->gext[g] <= 1) continue;
            double d = tt__reuse_distance(m->ngrid, sc->gext, g, sc->swizzle);
            if (dist == 0 || d < dist) dist = d;
        }
        /* a block of the same wave reads it at the same time (roofline.h) */
        double h = tt__roof_reread(dist, (double)cores_used, per_block * dist + ws_live, tg->l2_bytes);
        rr += r;
        rr_hit += r * h;
    }
    /* data of the previous launch survives a random-replacement L2 of effective size
     * `resident` with probability exp(-F / resident) */
    double hw = m->tconst && !m->has_ws ? m->hw_const : tt__roof_warm(footprint, m->l2_resident_bytes);
    rr += own;
    rr_hit += own;
    double h = reads > 0 ? (rr_hit + uniq * hw) / (rr + uniq) : 1;
    if (h > 1) h = 1;
    if (h < 0) h = 0;
    sc->l2_hit = h;
    sc->h_warm = hw;
    sc->read_bytes = reads;
    sc->cube_read_bytes = cube_reads;
    sc->write_bytes = writes;
    sc->unique_bytes = uniq;
    sc->hbm_bytes = (rr - rr_hit) + uniq * (1 - hw);
    sc->hbm_write_bytes = (wuniq < writes ? wuniq : writes) * (1 - hw);
    double bws = m->calib.bw_scale > 0 ? m->calib.bw_scale : 1;
    /* msKPP: h BW_L2 + (1 - h) BW_L2 / factor; the miss path is never faster than the
     * cached HBM stream (hbm_gbps); the cube cores' loads hit at the loaded rate (section 4,
     * the same roofline as the simulator: roofline.h) */
    sc->eff_gbps = tt__roof_gbps(tg, tg->l2_gbps, h) * bws;
    double per_core = 1000.0 / tg->clock_mhz / (double)(cores_used > 0 ? cores_used : 1);
    sc->core_bpc = sc->eff_gbps * per_core;
    /* per-core share of the chip bandwidth; first pass: a transfer competes only with
     * the same mover of the other cores (blocks of a wave run the same program in
     * lockstep) and, on the vector side, with the twin vector core */
    sc->agents[TT_SIDE_CUBE] = 1;
    sc->agents[TT_SIDE_VECTOR] = 2;
    for (int sd = 0; sd < 2; sd++)
        for (int u = 0; u < TT_UNIT__COUNT; u++) sc->base_bpc[sd][u] = sc->core_bpc;
    sc->base_bpc[TT_SIDE_CUBE][TT_UNIT_MTE2] = tt__roof_gbps(tg, tt__roof_l2(tg, 1), h) * bws * per_core;
    /* the GM writers (FIX: L0C -> GM, MTE3: UB / L1 -> GM) at the write-back L2's rate, the
     * simulator's rule (roofline.h): the blended read rate above charged a write as a read
     * miss whenever the L2 was cold (917 GB/s on the A3 die instead of the L2's rate) */
    double wbpc = tt__roof_write_gbps(tg) * bws * per_core;
    for (int sd = 0; sd < 2; sd++) {
        sc->base_bpc[sd][TT_UNIT_FIX] = wbpc;
        sc->base_bpc[sd][TT_UNIT_MTE3] = wbpc;
    }
    for (int sd = 0; sd < 2; sd++)
        for (int u = 0; u < TT_UNIT__COUNT; u++) sc->share[sd][u] = sc->base_bpc[sd][u] / sc->agents[sd];
}

int tt__model_share(tt__mscratch *sc, int k)
{
    /* expected GM transfers in flight on one core during the loop: each other mover
     * counts with its duty cycle in the loop (busy / loop time) times the cores that run
     * it; a transfer of mover u shares the core's bandwidth with its own copies (k_u) and
     * those transfers */
    double block = sc->tl[k].T;
    double fin[2][TT_UNIT__COUNT], fpipe[2][TT_UNIT__COUNT], tin[2] = {0, 0}, tpipe[2] = {0, 0};
    int changed = 0;
    for (int sd = 0; sd < 2; sd++)
        for (int u = 0; u < TT_UNIT__COUNT; u++) {
            int mv = sc->moves[sd][u] && block > 0;
            double a = mv ? sc->tl[k].busy_in[sd][u] / block : 0;
            double b = mv ? sc->tl[k].busy_pipe[sd][u] / block : 0;
            fin[sd][u] = (a > 1 ? 1 : a) * sc->agents[sd];
            fpipe[sd][u] = (b > 1 ? 1 : b) * sc->agents[sd];
            tin[sd] += fin[sd][u];
            tpipe[sd] += fpipe[sd][u];
        }
    for (int sd = 0; sd < 2; sd++)
        for (int u = 0; u < TT_UNIT__COUNT; u++) {
            sc->tl[k].share[sd][u] = sc->base_bpc[sd][u] / sc->agents[sd];
            if (!(fin[sd][u] > 0)) continue;   /* no transfer of this mover in the loop */
            double others = tin[!sd] + (tpipe[sd] - fpipe[sd][u]);
            if (!(others > 1e-12)) continue;
            sc->tl[k].share[sd][u] = sc->base_bpc[sd][u] / (sc->agents[sd] + others);
            changed = 1;
        }
    sc->tl[k].changed = changed;
    return changed;
}

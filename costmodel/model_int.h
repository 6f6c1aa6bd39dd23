/* SPDX-License-Identifier: MIT
 * model_int.h - internals of the analytic cost model shared by model.c (prepare, per-core
 * pipeline time) and model_traffic.c (GM traffic, L2 re-use, chip bandwidth); not public.
 *
 * tt_model_new() flattens the op tree into `ops` (pre-order; a loop's subtree is
 * ops[i+1 .. end)), resolves every unit, path, buffer and tensor, and precomputes the ring
 * hand-offs of pipelined loops; it also computes what reads no param (element sizes, tensor
 * bytes, GM movers, whether the second bandwidth pass can matter) and tabulates the lets and
 * constraints that read at most two params (tt__mtab).  tt_model_eval() then only evaluates
 * expressions into a per-call scratch (`mscratch`, on the caller's stack); the model is
 * read-only after tt_model_new.  Same thread-safety as model.h.
 */
#ifndef TT_MODEL_INT_H
#define TT_MODEL_INT_H

#include <stdint.h>

#include "model.h"

#define TT__MODEL_MAX_OPS 512    /* ops the model accepts (TT_EUNSUPPORTED above) */
#define TT__MODEL_MAX_GRID 8
#define TT__MODEL_MAX_RINGS 256
#define TT__MODEL_MAX_TOPLOOPS 8  /* top-level loops with their own bandwidth shares (later
                                     ones keep the first-pass caps) */

/* An expression with fast paths for a constant and a bare slot name. */
typedef struct tt__mx {
    int kind;                    /* 0 expr, 1 slot, 2 const */
    int slot;
    int64_t c;
    const tt_expr *e;
} tt__mx;

static inline tt_rc tt__mx_eval(const tt__mx *x, const int64_t *slots, int64_t *out)
{
    if (x->kind == 1) { *out = slots[x->slot]; return TT_OK; }
    if (x->kind == 2) { *out = x->c; return TT_OK; }
    return tt_expr_eval(x->e, slots, out);
}

typedef struct tt__mop {
    tt_op_kind kind;
    tt_side side;
    int end;                     /* loops: one past the last op of the subtree; else i+1 */
    int depth;                   /* nesting depth (0 = top level) */
    tt_unit unit;
    const tt_op *src;            /* the template op (paths for messages) */
    /* copy */
    const tt_pathcost *pc;
    int buf;                     /* the on-chip buffer whose slot is moved */
    int dst_buf;                 /* destination buffer (-1: GM) */
    int src_buf;                 /* source buffer (-1: GM) */
    int tensor;                  /* GM tensor (-1: none) */
    int gm_read, gm_write;
    int nalong;
    int along_grid[TT__MODEL_MAX_GRID];   /* grid dims in `along` (count ngrid_along) */
    const tt_along *along_map[TT__MODEL_MAX_GRID];   /* their index maps (NULL: identity) */
    int ngrid_along;
    int along_loop_depth[TT_TMPL_MAX_DEPTH + 1];   /* depths of the loops in `along` */
    int nloop_along;
    tt__mx rows, atomic;         /* gather rows / atomic-add flag (kind 2, c 1 / 0: absent) */
    tt__mx every;                /* cross sync: iterations per hand-off (kind 2, c 1: absent) */
    /* mma */
    int a, b, c;
    /* vec */
    tt__mx elems;                /* kind -1: product of the out buffer's shape */
    int has_elems;
    tt_vclass cls;
    int out;
    /* loop */
    tt__mx trip, stages;
    int ring0, nring;            /* rings[ring0 .. ring0+nring) of this loop */
    int xsync;                   /* loop: a direct child is a cross-core sync */
    int mixed;                   /* loop: its subtree runs on both sides (or syncs them) */
} tt__mop;

/* A let or a constraint that reads at most two params (besides inputs and constants),
 * tabulated over their domains at tt_model_new: value[i0 * n1 + i1] with i0, i1 the
 * params' value indices; ok[] is 0 where the expression fails (the fast path then defers
 * to tt_space_check). */
typedef struct tt__mtab {
    int np;                      /* 0, 1 or 2 params */
    int p[2];                    /* param indices */
    size_t n1;                   /* domain size of p[1] (1 when np < 2) */
    int64_t *val;
    unsigned char *ok;
} tt__mtab;

/* The geometry of a buffer whose shape reads at most two params and whose dtype reads no
 * param, tabulated like tt__mtab: dims, elements and one slot's bytes aligned to its scope
 * (ok[] is 0 where an extent fails, is negative or overflows). */
typedef struct tt__mbgeo {
    int64_t dims[TT_MAX_RANK];
    int64_t elems, up;
} tt__mbgeo;

typedef struct tt__mbtab {
    int np;
    int p[2];
    size_t n1;
    tt__mbgeo *val;
    unsigned char *ok;
} tt__mbtab;

/* A producer -> consumer hand-off through a ring buffer inside a pipelined loop. */
typedef struct tt__ring {
    int producer;                /* op index (a direct child of the loop) */
    int consumer;                /* last direct child that reads the buffer */
    int buf;
    int trail_from;              /* consumer is a loop: first body child after its last
                                    direct reader of buf (-1: none trails) */
} tt__ring;

typedef struct tt__mbuf {
    tt__mx dims[TT_MAX_RANK];
    int rank;
    tt__mx copies;
    tt_dtref dtype;
} tt__mbuf;

/* A param domain, for the fast feasibility check: an arithmetic progression is checked in
 * O(1), anything else by a scan. */
typedef struct tt__mdom {
    int ap;                      /* 1: values = start + i*step, i < n */
    int64_t start, step;
    size_t n;
} tt__mdom;

struct tt_model {
    const tt_template *t;
    const tt_target *tgt;
    int64_t problem[TT_MAX_SLOTS];
    tt_calib calib;
    int has_calib;
    tt_space *space;
    tt__mop *ops;
    int nops;
    tt__ring *rings;
    int nrings;
    tt__mbuf bufs[TT_TMPL_MAX_BUFFERS];
    tt__mx tshape[TT_TMPL_MAX_TENSORS][TT_MAX_RANK];
    tt__mx grid[TT__MODEL_MAX_GRID];
    int ngrid;
    int has_persistent;
    tt__mx persistent;
    int has_swizzle;
    tt__mx swizzle;
    double band_lo, band_hi;   /* error band factors (band.h) */
    tt_cores cores;
    int launch_mix;           /* tt_kernel.launch_mix: pays mix_launch_extra_us */
    tt__mdom dom[TT_MAX_SLOTS];
    tt_caps caps;
    int written[TT_TMPL_MAX_TENSORS];   /* 1: some copy of the kernel writes the tensor */
    double l2_resident_bytes;    /* target memory.l2_resident_bytes (default l2_bytes) */
    double block_cycles;         /* target overheads.block_cycles (0: none) */
    int dma_outstanding;         /* target overheads.dma_outstanding */
    /* per-problem values hoisted out of tt_model_eval (they read no param) */
    int moves[2][TT_UNIT__COUNT];        /* [side][unit] some copy of that mover touches GM */
    int share_pass;              /* 1: a top-level loop has two GM movers, so the
                                    demand-based second pass may change the result */
    int act[2 * TT_UNIT__COUNT]; /* the [side][unit] occupancies any op adds to, as
                                    side * TT_UNIT__COUNT + unit, ascending (the others
                                    stay 0 and are not summed) */
    int nact;
    int tconst;                  /* 1: tensor shapes and dtypes read only inputs */
    double tbytes[TT_TMPL_MAX_TENSORS];   /* (tconst) bytes of each tensor */
    int tesize[TT_TMPL_MAX_TENSORS];      /* element size of a tensor's dtype (0: per config) */
    int besize[TT_TMPL_MAX_BUFFERS];      /* element size of a buffer's dtype (0: per config) */
    int has_ws;                  /* some tensor is a workspace */
    double hw_const;             /* (tconst && !has_ws) h_warm of section 4 */
    tt__mtab *tab;               /* lookup tables of lets and constraints (see tt__mtab) */
    int ntab;
    int let_tab[TT_MAX_SLOTS];   /* let i: index into tab, or -1 */
    int *con_tab;                /* constraint i: index into tab, or -1 */
    tt__mbtab *btab;             /* [nbuffers] geometry tables (val NULL: none) */
};

/* Per-evaluation values (caller's stack; nothing allocated). */
typedef struct tt__mscratch {
    int64_t belems[TT_TMPL_MAX_BUFFERS];
    int besize[TT_TMPL_MAX_BUFFERS];
    int64_t bcopies[TT_TMPL_MAX_BUFFERS];
    double tbytes[TT_TMPL_MAX_TENSORS];
    int64_t gext[TT__MODEL_MAX_GRID];
    int64_t swizzle;                      /* block rasterisation width (< 2: none) */
    int64_t bdims[TT_TMPL_MAX_BUFFERS][TT_MAX_RANK];
    int64_t trip[TT__MODEL_MAX_OPS];      /* loops: trip count; cross syncs: every (>= 1) */
    int64_t stages[TT__MODEL_MAX_OPS];
    double bytes[TT__MODEL_MAX_OPS];      /* copies: bytes of one transfer; mma/vec: cycles */
    double distinct[TT__MODEL_MAX_OPS];   /* GM copies: distinct tiles over the kernel */
    uint32_t shared[TT__MODEL_MAX_OPS];   /* GM copies: grid dims (bits) in `along` through an
                                             index map that blocks of that dim share */
    double off[TT__MODEL_MAX_OPS];        /* start of the op in its parent's chain */
    double dur[TT__MODEL_MAX_OPS];        /* chain time of one execution (cycles) */
    double execs[TT__MODEL_MAX_OPS];      /* executions per block */
    double xcyc[TT__MODEL_MAX_OPS];       /* copies: cycles beyond bytes / rate (a gather's
                                             per-row transfers, model_ops.c) */
    int64_t blocks;                       /* grid points */
    double eff_gbps;                      /* effective chip bandwidth for GM copies */
    double core_bpc;                      /* chip bandwidth / cores in use, bytes/cycle */
    double base_bpc[2][TT_UNIT__COUNT];   /* [side][unit] the same for that mover (the cube
                                             side's loads at the loaded L2 rate) */
    double share[2][TT_UNIT__COUNT];      /* [side][unit] rate cap of one GM transfer of
                                             that mover (bytes/cycle, section 4) */
    double agents[2];                     /* [side] cores running it per block (1, 2) */
    int pass;                             /* 1: caps B_core / k; 2: shares by demand */
    int tl_idx, ntl;                      /* top-level loops seen in this pass / recorded */
    struct {                              /* per top-level loop (pass 1 -> pass 2) */
        double busy_in[2][TT_UNIT__COUNT];    /* occupancy inside the loop */
        double busy_pipe[2][TT_UNIT__COUNT];  /* the part inside pipelined loops */
        double T;                             /* the loop's time */
        double share[2][TT_UNIT__COUNT];      /* its demand-based caps */
        int changed;                          /* share differs from B_core / k */
    } tl[TT__MODEL_MAX_TOPLOOPS];
    int moves[2][TT_UNIT__COUNT];         /* [side][unit] moves GM data */
    double l2_hit, h_warm;
    double read_bytes, write_bytes, unique_bytes, hbm_bytes, hbm_write_bytes;
    double cube_read_bytes;   /* the part of read_bytes the cube cores load (roofline.h) */
    double flops;
    int share_limited;                    /* a GM copy ran at the chip share, not its path */
} tt__mscratch;

/* model_traffic.c: GM traffic of the whole kernel, the L2 hit estimate and the effective
 * chip bandwidth; fills sc->l2_hit .. sc->moves and the first-pass shares.  Needs sc->trip/execs/belems filled. */
void tt__model_traffic(const tt_model *m, tt__mscratch *sc, int64_t cores_used);
/* model_traffic.c: the demand-based caps of the GM movers inside one top-level loop
 * (sc->tl[k], section 4) from the duty cycles of the other movers in the same loop over
 * its time: a mover of the other side (another core) with its busy time in the loop, a
 * mover of the same side with its busy time inside pipelined loops only (a stages = 1 body
 * runs its transfers one after the other).  Sets sc->tl[k].share and .changed (1 when a
 * cap differs from the first pass's B_core / k); returns .changed. */
int tt__model_share(tt__mscratch *sc, int k);

/* model_ops.c: the copy variants of a GM copy (op i, sc->bytes[i] set to one plain
 * transfer): an atomic-add write doubles the bytes (a read-modify-write at L2), a gather of
 * `rows` rows sets sc->xcyc[i] to the per-row transfer cost.  Returns TT_OK or the
 * expression's error. */
tt_rc tt__model_copy_variant(const tt_model *m, int i, const int64_t *slots, tt__mscratch *sc);

/* model_tables.c: build the lookup tables of the fast feasibility path (in tt_model_new). */
tt_rc tt__model_prepare_fast(tt_model *m, tt_errinfo *err);
/* 1 when the config certainly passes tt_space_check() (fills sc's buffer geometry); 0 when
 * it may not, and then tt_space_check() decides and gives the reason. */
int tt__model_fast_feasible(const tt_model *m, int64_t *slots, tt__mscratch *sc);

#endif

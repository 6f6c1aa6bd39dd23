/* SPDX-License-Identifier: MIT
 * sim_run.h - the state of one tt_sim_run() shared by sim.c (blocks -> waves, folding, the
 * result) and sim_shortcut.c (the shortcuts of long walks and long loops); not a public
 * interface.  Not thread-safe: each tt_sim_run() owns its tt__srun.
 */
#ifndef TT_SIM_RUN_H
#define TT_SIM_RUN_H

#include "sim_int.h"

#define SHAPE_MAX_ANCHORS 8     /* trip counts a wave shape may be simulated at */

typedef struct tt__sshape {   /* truncated simulations of a wave shape (shortcut) */
    uint64_t hash;
    int64_t *key;
    size_t nkey;
    int ok;                   /* 1: w[k..k+2] are collinear, interpolate; 0: simulate in full */
    int seen;                 /* waves of this shape so far */
    int capped;               /* anchors stopped at a trip cap: more may be added */
    int k;                    /* first of the three collinear anchors */
    int n;                    /* anchors simulated */
    int64_t t[SHAPE_MAX_ANCHORS];   /* the shortest group's trip in each anchor simulation */
    tt__swave w[SHAPE_MAX_ANCHORS];
    int fit;                  /* 1: lo/hi are a least-squares line through anchors k..n-1 */
    tt__swave lo, hi;         /* that line at t[k] and t[n-1] (no trace, no events) */
    int lm;                   /* loop marks: 0 not tried, 1 in use, -1 failed (anchors) */
    int64_t ltb, lt0, lj0, lmin;   /* ... the marked run's trip, its warm-up, the first
                                      iteration of its window, the shortest trip served */
    int la;                   /* ... the anchor where the line to the run starts */
    tt__swave lw;             /* ... the marked run (marks of every group) */
} tt__sshape;

#define TT__MARK_ALL ((size_t)-2)  /* tt__srun.mark_group: every group */

typedef struct tt__srun {
    tt__sim s;
    const tt_sim_opts *o;
    int64_t cores;            /* AI cores per wave */
    int64_t persistent;       /* launched blocks, 0 when not persistent */
    int64_t walk_cut;         /* grid points cut from the end of every walk (walk anchors) */
    size_t mark_group;        /* group whose mark units are recorded, TT__MARK_ALL, or -1 */
    int64_t nlog;             /* logical blocks */
    int64_t *lsig;            /* per logical block id (NULL: computed on the fly) */
    struct tt__smemo *memo;   /* simulated waves (sim.c) */
    size_t nmemo, capmemo;
    tt__sshape *shapes;
    size_t nshapes, capshapes;
    tt__sgroup *pool;         /* groups' programs, reused from wave to wave */
    size_t npool;
    struct tt__spcache *pcache;   /* built programs by their inputs (sim.c), NULL until used */
    int64_t events, max_events;
    int extrapolated;
    size_t trace_n;
    tt__sbuf tb;
    char *reason;
    size_t rcap;
} tt__srun;

/* A group of identical cores of a wave: block signature, cores, first logical block. */
typedef struct tt__swgroup {
    int64_t id, count, first;  /* signature, cores, first logical block */
} tt__swgroup;

/* FNV-1a hash of n values. */
uint64_t tt__sim_fnv(const int64_t *v, size_t n);
/* Build and simulate the groups of a wave once with the truncation (trunc_loop, walk_cut,
 * marks) in force; the events count into R.  Returns TT_OK or the wave's error (reason
 * set). */
tt_rc tt__sim_groups(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, int traced,
                     tt__swave *out);
/* What tt__sim_build() of the walk gp[0..ngp) (ngp >= 1) depends on (the key of the programs
 * cached per run): the marks, then per grid point its block signature (trip counts with the
 * truncation in force, element counts) and every loop's stages; equal keys, byte-identical
 * programs.  Allocates *key (caller frees); returns its length, 0 when out of memory.  Leaves
 * the grid slots at gp[ngp - 1], as the build does. */
size_t tt__sim_build_key(tt__sim *s, const int64_t *gp, size_t ngp, int64_t **key);
/* Simulate a wave with the shortcuts (sim_shortcut.c): walk marks and anchor walks of
 * persistent kernels, the steady-state shortcut of long loops (anchors, loop marks); in full
 * when traced or when opts.shortcut_ops < 0.  Returns as tt__sim_groups. */
tt_rc tt__sim_wave_short(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, int traced,
                         tt__swave *out);

#endif

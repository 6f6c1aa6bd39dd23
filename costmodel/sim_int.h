/* SPDX-License-Identifier: MIT
 * sim_int.h - internals shared by the simulator files (sim*.c); not a public interface.
 *
 * Pipeline: sim.c (checks, blocks -> waves, folding, extrapolation, results)
 *        -> sim_program.c (one block's tile program -> per-agent instruction lists with
 *           ring-slot dependencies)
 *        -> sim_engine.c (event loop of one wave: unit queues, flags, shared bandwidth)
 *        -> sim_trace.c (Chrome trace-event JSON).
 * An "agent" is one program running on one physical core: the cube core (AIC) of an AI core,
 * or its vector cores (AIV; both run the same half-size program, so one agent stands for
 * the pair).  A "group" is a set of identical AI cores of a wave simulated once with a
 * weight (they run in lockstep because blocks, start time and bandwidth share are equal).
 * Nothing here is thread-safe by itself; each tt_sim_run() owns its state.
 */
#ifndef TT_SIM_INT_H
#define TT_SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

/* Instruction kinds. */
enum { TT__SI_FIXED, TT__SI_GM, TT__SI_SET, TT__SI_WAIT, TT__SI_BAR };
/* Dependency kinds (low 2 bits of a dependency word; bit 2: the producer runs on another
 * unit (a set_flag / wait_flag hand-off, + flag_cycles); the rest is its instruction index). */
enum { TT__DEP_RAW, TT__DEP_WAR, TT__DEP_FLAG };
#define TT__DEP_WORD(idx, kind, cross) \
    (((uint32_t)(idx) << 3) | ((uint32_t)((cross) != 0) << 2) | (uint32_t)(kind))
#define TT__DEP_IDX(w) ((int32_t)((w) >> 3))
#define TT__DEP_KIND(w) ((int)((w) & 3))
#define TT__DEP_CROSS(w) (((w) >> 2) & 1)
/* Flag directions of a cross-core sync. */
enum { TT__DIR_C2V, TT__DIR_V2C };
#define TT__NFLAGS 16
#define TT__DMA_MAX 8             /* bound of tt__sim.dma_depth */
/* Agent roles within an AI core. */
enum { TT__AG_CUBE, TT__AG_VEC, TT__AG__COUNT };

typedef struct tt__sinst {
    double dur;               /* fixed duration; for a GM transfer its latency */
    double bytes;             /* GM transfer bytes moved through the shared memory, else 0 */
    double cap;               /* per-core path rate (bytes/cycle) of a GM transfer */
    double cost;              /* shared-memory cycles per byte (L2 hits + HBM misses) */
    int32_t op;               /* index into tt__sim.ops, -1 for none */
    int32_t slot;             /* ring slot written (or read), -1 when none */
    uint32_t dep_off;         /* first dependency word in the program's deps[] */
    uint16_t ndeps;
    uint8_t unit, kind, flag, dir;
} tt__sinst;

typedef struct tt__sprog {    /* one agent's instructions, in program order */
    tt__sinst *ins;
    size_t n, cap;
    uint32_t *deps;           /* TT__DEP_WORD(index, kind, cross unit) */
    size_t ndeps, capdeps;
    int32_t *mk;              /* mark unit of each instruction (tt__sim.mark_mode), -1 none */
    size_t capmk;
    int32_t nmk;              /* mark units: 1 + the largest tag */
} tt__sprog;

/* Mark units of the instructions (walk marks, loop marks: docs/simulator.md). */
enum { TT__MK_NONE, TT__MK_POINTS, TT__MK_LOOP };

/* Static facts of one leaf op of the template (computed once per run). */
typedef struct tt__sop {
    const struct tt_op *op;
    int unit;                 /* tt_unit */
    int kind;                 /* TT__SI_* */
    int side;                 /* tt_side */
    double dur, bytes, cap, cost;   /* as tt__sinst (vector-side halving applied) */
    int wbuf;                 /* buffer written, -1 none */
    int rbuf[5];              /* buffers read */
    int nr;
    int accum;                /* mma: 1 when it accumulates into the current C version */
    int dyn_elems;            /* vec: elems read a grid slot, evaluate per block */
    int64_t every;            /* cross sync: one hand-off per `every` loop iterations (>= 1) */
    double vec_head, vec_bpc, vec_esize, vec_rows;
    int vec_cls;
    char name[40];
} tt__sop;

/* Run-wide state: template, target, evaluated geometry and op table. */
typedef struct tt__sim {
    const tt_template *t;
    const tt_target *tgt;
    int64_t *slots;           /* borrowed: problem + params + lets (+ grid slots set here) */
    tt__sop *ops;             /* leaf ops in document order */
    size_t nops;
    int64_t *grid_ext;        /* extent of each grid dim */
    int64_t swizzle;          /* block rasterisation width for L2 re-use (< 2: none) */
    int64_t nblocks;          /* grid points */
    double hbm_read;          /* GM read bytes of the kernel that miss L2 (its L2 estimate) */
    size_t *loop_leaves;      /* per loop id: leaf ops in its body (recursively) */
    int64_t *bufbytes;        /* per buffer: bytes of one copy */
    int64_t *copies;          /* per buffer ring size */
    int nagents_per_core;     /* 1 or 2 */
    int has_side[2];          /* sides with ops */
    int64_t trunc_loop;       /* loop id whose trip is shortened (-1 none) */
    int64_t trunc_delta;      /* ... by this many iterations (steady-state shortcut) */
    int mark_mode;            /* TT__MK_*: tag each instruction with its grid point in the
                                 block's walk, or its iteration of top-level loop mark_loop */
    int64_t mark_loop;
    int64_t max_insts;        /* > 0: tt__sim_build() refuses (TT_ELIMIT) an agent program of
                                 more instructions (each is at least one event: a program over
                                 the run's event budget could never be simulated, and building
                                 it would take its time and memory first) */
    int dma_depth;            /* GM transfers of one unit that may be in their latency phase
                                 at once (1..TT__DMA_MAX); data phases stay serial */
    int pipeline_mix;         /* 1: software-pipeline stages >= 2 loops across cores */
    int grid_dep;             /* 1: some trip count or elems reads a grid-dim slot */
    uint64_t grid_mask;       /* which grid dims they read (bit d; dims >= 63 share bit 63) */
    /* per loop id: trip count and stages evaluated at the current grid point (valid while
     * loop_gen[id] == gen; tt__sim_set_grid() bumps gen) */
    int64_t *loop_trip, *loop_stages;
    uint64_t *loop_gen;
    uint64_t gen;
    int vec_split;            /* divisor of vector-side work (1: buffers are per vector core) */
    int vec_cores;            /* vector cores per AI core running the vector program (2) */
    double block_cycles;      /* per-block dispatch + scalar prologue (target overheads) */
    int (*cancel)(void *);    /* tt_sim_opts.cancel (NULL: never stop early) */
    void *cancel_ctx;
    /* the engine's per-instruction arrays, kept from wave to wave of one run (owned;
     * tt__sim_close frees them; NULL: each wave allocates its own) */
    struct tt__sscratch *scratch;
} tt__sim;

/* Evaluate geometry and the op table (s->t, s->tgt, s->slots set; lets evaluated).
 * Returns TT_OK, TT_ENOMEM, TT_EUNSUPPORTED (e.g. a dtype the cube lacks) with reason. */
tt_rc tt__sim_prepare(tt__sim *s, char *reason, size_t cap);
void tt__sim_close(tt__sim *s);

/* Build the programs of the agents of one logical block: the grid points gp[0..ngp) run in
 * sequence (persistent kernels walk several).  progs[TT__AG_CUBE], progs[TT__AG_VEC] are
 * appended to (caller inits them to zero).  Returns TT_OK, TT_ENOMEM, or an expression
 * error with reason. */
tt_rc tt__sim_build(tt__sim *s, const int64_t *gp, size_t ngp, tt__sprog progs[TT__AG__COUNT],
                    char *reason, size_t cap);
void tt__sprog_free(tt__sprog *p);
/* Evaluate loop trip / elems values that depend on the grid point (for block signatures):
 * writes up to cap values and returns how many the template has. */
size_t tt__sim_block_sig(tt__sim *s, int64_t gp, int64_t *vals, size_t cap);
/* Instructions of one grid point (an upper bound over both sides) with the truncation in
 * force; *loop_id / *trip: the top-level loop that holds the most of them (-1 if none). */
double tt__sim_count(tt__sim *s, int64_t gp, int *loop_id, int64_t *trip);
/* Iterations of top-level loop `loop_id` after which its pipeline is in a steady state (an
 * estimate from its stages and ring sizes; at least 16). */
int64_t tt__sim_warmup(tt__sim *s, int loop_id);
/* Set the grid-dim slots for linear grid point gp (first dim slowest). */
void tt__sim_set_grid(tt__sim *s, int64_t gp);

/* One trace record. */
typedef struct tt__trec {
    double start, end;
    int32_t op;               /* tt__sim.ops index, -1 */
    int32_t slot;
    uint8_t unit, agent, kind;
} tt__trec;

/* A group of identical AI cores in one wave. */
typedef struct tt__sgroup {
    tt__sprog prog[TT__AG__COUNT];
    double weight;            /* AI cores it stands for */
    int traced;               /* 1: record its timeline */
    int marked;               /* 1: record the figures of each of its mark units
                                 (tt__sprog.mk: grid points or loop iterations) */
} tt__sgroup;

/* Figures of a wave snapshot: cycles, busy[agent][unit], stall[k] (tt__swave order). */
#define TT__NFIG (1 + (size_t)TT__AG__COUNT * TT_UNIT__COUNT + TT_STALL__COUNT)

/* Result of one wave. */
typedef struct tt__swave {
    double cycles;
    double busy[TT__AG__COUNT][TT_UNIT__COUNT];   /* of the representative group */
    double stall[TT_STALL__COUNT];
    int64_t events;
    tt__trec *trace;          /* traced group's records (owned) */
    size_t ntrace, captrace;
    /* marks (owned; NULL unless a group is marked): for mark unit j (grid point or loop
     * iteration) of group g, row (g * nmark + j) * TT__NFIG: figure 0 is when its last
     * instruction (both agents) completed, figures f >= 1 the busy and stall figures of the
     * group's instructions of units 0..j (the reported group's are the wave's); mcount[g]:
     * the group's units, gend[g]: when its last instruction completed */
    double *mark;
    size_t nmark, ngroups;
    int32_t *mcount;
    double *gend;
} tt__swave;

/* Row of mark unit j of group g of a wave (TT__NFIG figures). */
static inline const double *tt__swave_mark(const tt__swave *w, size_t g, size_t j)
{
    return &w->mark[(g * w->nmark + j) * TT__NFIG];
}

/* A scratch for tt__sim.scratch (NULL when out of memory: the waves then allocate their
 * own), and its release (NULL is fine). */
struct tt__sscratch *tt__sim_scratch_new(void);
void tt__sim_scratch_free(struct tt__sscratch *sc);

/* Simulate one wave of ngroups groups starting together.  rep is the group whose busy and
 * stall figures are reported.  max_events bounds the work (TT_ELIMIT).  Returns TT_OK,
 * TT_EDEADLOCK (reason says who waits for what), TT_ELIMIT, TT_ENOMEM. */
tt_rc tt__sim_wave(const tt__sim *s, tt__sgroup *g, size_t ngroups, size_t rep,
                   int64_t max_events, tt__swave *out, char *reason, size_t cap);
void tt__swave_free(tt__swave *w);

/* Growing text buffer for the trace. */
typedef struct tt__sbuf {
    char *p;
    size_t n, cap;
    int oom;
} tt__sbuf;
void tt__sbuf_printf(tt__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Trace header (metadata naming the core and its unit threads). */
void tt__sim_trace_meta(tt__sbuf *b, int core, int has_cube, int has_vec);
/* Append the records of a wave, shifted by t0 cycles. */
void tt__sim_trace_add(tt__sbuf *b, const tt__sim *s, int core, const tt__trec *r, size_t n,
                       double t0);

#endif

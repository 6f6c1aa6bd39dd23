/* SPDX-License-Identifier: MIT
 * target.h - chip descriptions (one JSON file per SoC in costmodel/targets/), validated on load.
 *
 * A target holds what the cost model and the simulator need: core counts, clock, on-chip
 * capacities and alignments, per-path transfer rates with a fixed latency, cube and vector
 * costs by dtype and op class, chip-wide HBM / L2 figures and fixed overheads.  Sources of
 * every number are in ../shared/ascend/HARDWARE.md and in the "sources" field of each file.
 * Users add a SoC by dropping a file into the targets directory (no code change).
 *
 * Ownership: a tt_targets set owns its targets; tt_targets_find() returns a borrowed
 * pointer valid until tt_targets_free().  Loaded targets are immutable: thread-safe reads.
 */
#ifndef TT_TARGET_H
#define TT_TARGET_H

#include <jansson.h>
#include <stdint.h>

#include "space.h"
#include "template.h"

#define TT_TARGET_MAX_ALIASES 8

typedef struct tt_pathcost {
    double bytes_per_cycle;   /* steady-state rate of one core on this path */
    double latency_cycles;    /* fixed cost per transfer */
} tt_pathcost;

typedef struct tt_target {
    char name[64];            /* file stem, e.g. "Ascend910B2" */
    char aliases[TT_TARGET_MAX_ALIASES][32];
    int naliases;
    char platform[8];         /* "A2" or "A3" */
    int cube_cores;           /* AIC count (20 or 24) */
    int vector_cores;         /* AIV count (2 per AI core) */
    double clock_mhz;         /* cube/vector clock */
    tt_caps caps;             /* capacities and alignment per scope */
    tt_pathcost path[TT_PATH__COUNT];
    tt_pathcost gm_l1_nd2nz;  /* GM->L1 with ND->NZ conversion */
    /* cube: cycles = fixed + c[dtype] * ceil(m/16) * ceil(k/k0) * ceil(n/16), k0 = 32/esize */
    double cube_fixed_cycles;
    double cube_c[TT_DT__COUNT];          /* 0 = dtype unsupported on the cube */
    /* vector: cycles = head + bytes / bytes_per_cycle, per class and element size */
    double vec_bytes_per_cycle[TT_V__COUNT][2];  /* [class][0: 2-byte, 1: 4-byte elements] */
    double vec_head_cycles[TT_V__COUNT];
    /* chip-wide memory */
    double hbm_gbps;          /* streaming through the cached path, footprint >> L2 */
    double hbm_bypass_gbps;
    double hbm_write_gbps;
    double l2_bytes;
    double l2_gbps;           /* reads whose footprint fits in L2 (small footprint) */
    double l2_miss_factor;    /* msKPP: miss costs l2_gbps / factor */
    /* fixed overheads */
    double launch_us;
    double issue_cycles;      /* per instruction issued by the scalar unit */
    double flag_cycles;       /* set/wait flag within a core */
    double cross_sync_cycles; /* cross-core flag through GM */
    double mix_launch_extra_us;
    json_t *doc;              /* the file as loaded (owned) */
    /* Optional fields (costmodel/targets/README.md): tt_target_from_json() validates them
     * and fills the default when the file leaves them out.  A struct built by hand (tests)
     * may leave them 0: readers treat 0 as "absent" and use the same default. */
    double l2_resident_bytes; /* memory.l2_resident_bytes, bytes: effective L2 capacity for
                                 data surviving from the previous launch; default l2_bytes */
    double block_cycles;      /* overheads.block_cycles, cycles per block (task dispatch,
                                 scalar prologue); default 0 */
    double l2_load_gbps;      /* memory.l2_load_gbps, GB/s: hit path of the cube cores' GM
                                 loads when all cores stream (sustained); default l2_gbps */
    int dma_outstanding;      /* overheads.dma_outstanding, transfers of one DMA unit that may
                                 be in their latency phase at once, 1..8; default
                                 TT_TARGET_DMA_OUTSTANDING (4) */
} tt_target;

/* Every number of a target file lies in [MIN, MAX] (integers: MAX): outside, the model's
 * and the simulator's times leave the finite doubles (a clock of 1e-320 MHz gave inf). */
#define TT_TARGET_NUM_MIN 1e-6
#define TT_TARGET_NUM_MAX 1e18
#define TT_TARGET_DMA_OUTSTANDING 4     /* default of tt_target.dma_outstanding */
#define TT_TARGET_DMA_OUTSTANDING_MAX 8

typedef struct tt_targets tt_targets;

/* Load every *.json in dir.  Returns TT_OK with a (possibly partial) set: a file that fails
 * validation makes the call return TT_ETARGET with err naming "<file>: <json path>: reason"
 * and *out NULL (a bad target file is an operator error to fix, not to skip silently). */
tt_rc tt_targets_load_dir(const char *dir, tt_targets **out, tt_errinfo *err);
void tt_targets_free(tt_targets *ts);
size_t tt_targets_count(const tt_targets *ts);
const tt_target *tt_targets_at(const tt_targets *ts, size_t i);
/* By name or alias, case-insensitive ("a2", "Ascend910B2", "910b2"); NULL if absent. */
const tt_target *tt_targets_find(const tt_targets *ts, const char *name);

/* 1 when s may name a target (a name or an alias, and the target of imported data): 1..63
 * of [A-Za-z0-9._-].  The name travels in URLs, query strings, file names of exports and
 * the problem keys of the store, so spaces, '/' and the like are refused at load. */
int tt_target_name_ok(const char *s);

/* Parse one target document (borrowed). name is used when the document has none. */
tt_rc tt_target_from_json(const json_t *doc, const char *name, tt_target *out,
                          tt_errinfo *err);
void tt_target_close(tt_target *t);   /* releases out->doc */

/* Capacities for space enumeration. */
void tt_target_caps(const tt_target *t, tt_caps *caps);
/* Cycles of a gather of `rows` rows beyond one transfer of its bytes on path cost pc:
 * every further row is its own transfer whose latency overlaps with at most `outstanding`
 * others (model_ops.c; the model and the simulator charge the same). */
double tt__gather_cycles(const tt_pathcost *pc, int64_t rows, int outstanding);
/* Cycles of a vector op of class cls on `elems` elements of `esize` bytes whose output has
 * `rows` elements (model_ops.c; the model and the simulator charge the same): head +
 * bytes / rate, except a reduction, which runs as a cascade of group reductions (each 32-B
 * block of a row to one value, one 256-B repeat per cycle at the unary rate) down to at most
 * one block per row, and a whole-row reduction of that rest at the reduce rate
 * (docs/cost-model.md, section 1). */
double tt__vec_cycles(const tt_target *tg, int cls, double elems, int esize, double rows);
/* Cycles <-> microseconds at the target's clock. */
static inline double tt_target_us(const tt_target *t, double cycles)
{
    return cycles / t->clock_mhz;
}

#endif

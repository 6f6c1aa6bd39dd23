/* SPDX-License-Identifier: MIT
 * space.h - search spaces: the configs of a template that pass domains, constraints and the
 * on-chip capacity of every buffer scope, for one problem and one target's capacities.
 *
 * Enumeration walks the cartesian product of the param domains in declared order (the first
 * param is the outermost loop) and rejects a partial config as soon as every param that a
 * check reads is bound ("early rejection"): lets, constraints and per-scope capacity sums are
 * each attached to the deepest param they depend on.
 * Capacity of a scope: sum over its buffers of copies x align_up(elems x esize, align[scope])
 * must be <= cap[scope].  Rejections are counted by reason.
 *
 * Ownership: tt_space_new() returns a new space that borrows the template (which must
 * outlive it); free with tt_space_free().  A space is not thread-safe while enumerating;
 * tt_space_check() is read-only and thread-safe.
 */
#ifndef TT_SPACE_H
#define TT_SPACE_H

#include <stdint.h>

#include "template.h"

/* On-chip capacities and alignments in bytes, indexed by tt_scope (GM entries unused).
 * Filled from a target by tt_target_caps() (costmodel/target.h). */
typedef struct tt_caps {
    int64_t cap[TT_SCOPE__COUNT];
    int64_t align[TT_SCOPE__COUNT];
} tt_caps;

/* Why a config was rejected.  Reasons are: one per constraint ("constraints[i]: <source>"),
 * one per scope ("L0C capacity"), and one per expression error ("let m_num: overflow"). */
#define TT_SPACE_MAX_REASONS 128
typedef struct tt_space_counts {
    uint64_t total;           /* product of the domain sizes (saturates at UINT64_MAX) */
    uint64_t feasible;        /* visited configs */
    uint64_t visited_partial; /* partial configs checked (work done) */
    size_t nreasons;
    char reason[TT_SPACE_MAX_REASONS][96];
    uint64_t rejected[TT_SPACE_MAX_REASONS];  /* full configs rejected for that reason */
    int complete;             /* 0 when stopped early by the visitor or a limit */
} tt_space_counts;

typedef struct tt_space tt_space;

/* Prepare enumeration of template t for a problem (slots[0..ninputs) hold it; the rest of
 * the vector is scratch) and capacities (NULL: no capacity checks).  TT_EPROBLEM if the
 * problem is out of the inputs' ranges. */
tt_rc tt_space_new(const tt_template *t, const int64_t *problem_slots, const tt_caps *caps,
                   tt_space **out, tt_errinfo *err);
void tt_space_free(tt_space *s);

/* Visitor: called for each feasible config with the full slot vector (inputs, params, lets
 * evaluated; grid slots 0).  Borrowed for the call only.  Return 0 to go on, non-zero to
 * stop (counts.complete is then 0). */
typedef int (*tt_space_visit_fn)(void *ud, const int64_t *slots);

/* Enumerate every feasible config.  `limit` > 0 stops after that many feasible configs.
 * counts (may be NULL) is filled. */
tt_rc tt_space_enumerate(tt_space *s, tt_space_visit_fn visit, void *ud, uint64_t limit,
                         tt_space_counts *counts);

/* Check one config: slots hold the problem and the params; lets are evaluated into slots.
 * Returns TT_OK when feasible, TT_EINFEASIBLE with err->msg the reason (the same reason
 * strings as the counts; a capacity refusal adds the bytes: "L1 capacity: buffers need
 * 589824 B, the target has 524032 B") otherwise, TT_ECONFIG when a value is outside its domain. */
tt_rc tt_space_check(const tt_space *s, int64_t *slots, tt_errinfo *err);

/* Number of configs in the cartesian product (saturating). */
uint64_t tt_space_total(const tt_space *s);

/* 1 when every config has an index (the product fits in 64 bits: tt_space_total() is not
 * UINT64_MAX), 0 otherwise.  decode/encode below number only the first 2^64 configs of a
 * larger space (the first params never vary), so whatever numbers configs (the tuning
 * strategies) must refuse a space without it. */
int tt_space_indexed(const tt_space *s);

/* Decode the idx-th config of the cartesian product (0 <= idx < total; mixed radix, the
 * last param varies fastest) into slots (params only).  Used by random/evolution search. */
void tt_space_decode(const tt_space *s, uint64_t idx, int64_t *slots);
/* Inverse: the index of the params in slots, or UINT64_MAX when a value is off-domain. */
uint64_t tt_space_encode(const tt_space *s, const int64_t *slots);

#endif

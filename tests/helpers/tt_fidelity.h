/* SPDX-License-Identifier: MIT
 * tt_fidelity.h - the published calibration points (shared/ascend/calibration.json) as model
 * inputs: shared by tests/unit/costmodel/test_fidelity.c (the acceptance test) and
 * bench/bench_model.c --fidelity (the table), so that both compare the same thing.
 *
 * No CUnit here: the bench programs link it too (bench/CMakeLists.txt).  Borrows everything
 * it is given; not thread-safe beyond the read-only use of the template and the model.
 */
#ifndef TT_FIDELITY_H
#define TT_FIDELITY_H

#include <jansson.h>
#include <stdint.h>

#include "model.h"
#include "target.h"
#include "template.h"

/* A GM -> UB streaming read on the vector cores: the kernel behind the bandwidth points
 * (template JSON text; inputs N (elements) and dtype, params tile and S). */
extern const char *const tt_fidelity_stream_read_json;

/* Fill the gemm template's slots (inputs M, N, K, dtype, out_dtype and params block_M,
 * block_N, block_K, K_L1, S1 = S2 = 2 with double buffering else 1) from a calibration point
 * with "kernel": "gemm".  Returns 0, or -1 when the template lacks one of those names (the
 * others are still set). */
int tt_fidelity_gemm_slots(const tt_template *gemm, const json_t *point, int64_t *slots);

/* Best config of the streaming space (as a benchmark author would pick it; `slots` holds
 * the inputs and receives the params), and its steady-state bandwidth in GB/s for `bytes`
 * read: the fixed launch and per-block costs, which a bandwidth benchmark amortises by
 * design, are left out (docs/cost-model.md, "Fidelity").  *best is the model's result for
 * that config (best->rc = TT_EINFEASIBLE when none is feasible); *nfeasible (may be NULL)
 * counts the feasible configs. */
double tt_fidelity_stream_best(const tt_template *t, const tt_target *tg, const tt_model *m,
                               int64_t *slots, double bytes, tt_model_result *best,
                               int *nfeasible);

#endif

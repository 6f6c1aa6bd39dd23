/* SPDX-License-Identifier: MIT
 * model_fixture.h - the cost-model tests' fixture: the shipped targets, a "hand" target with
 * round numbers, and templates and predictions from "k=v,..." text.
 *
 * Shared by test_model_timing, test_model_feasibility and test_model_mix.  Every time it
 * gives is a prediction of the model (or the simulator's, in tt_mfx_model_and_sim).  Not
 * thread-safe: call from the test's main thread.
 */
#ifndef TT_MODEL_FIXTURE_H
#define TT_MODEL_FIXTURE_H

#include "model.h"
#include "target.h"

/* Load the shipped targets (costmodel/targets) into *shipped and build *hand from a2's file:
 * clock 1000 MHz, GM->UB 100 B/cycle + 50, exp 50 B/cycle + 20, launch 1 us, issue 1 cycle,
 * flag 10 cycles, no block_cycles, no l2_load_gbps.  0, or 1 after a message on stderr.
 * The caller frees both with tt_mfx_cleanup(). */
int tt_mfx_init(tt_targets **shipped, tt_target *hand);
int tt_mfx_cleanup(tt_targets **shipped, tt_target *hand);

/* A template from JSON text / a shipped template by file name ("gemm.json"): NULL (and a
 * message on stderr) when it fails; the caller frees it with tt_tmpl_free(). */
tt_template *tt_mfx_parse(const char *text);
tt_template *tt_mfx_shipped_template(const char *file);
tt_template *tt_mfx_gemm_template(void);

/* Evaluate one config given as "k=v,..." strings (off-domain values are set by name, for
 * the model to refuse); returns the result's rc. */
tt_rc tt_mfx_predict(const tt_template *t, const tt_target *tg, const char *problem,
                     const char *config, const tt_calib *cal, tt_model_result *r);

/* Model and simulator time of one config (the simulator is the reference); failures are
 * fatal CUnit assertions. */
void tt_mfx_model_and_sim(const tt_template *t, const tt_target *tg, const char *problem,
                          const char *config, double *model_us, double *sim_us);

#endif

/* SPDX-License-Identifier: MIT
 * store_trials_int.h - what store_trials.c shares with store_remeasure.c (private to
 * daemon/store): the trial columns and the best-row write of their queries, and two helpers.
 */
#ifndef TT_STORE_TRIALS_INT_H
#define TT_STORE_TRIALS_INT_H

#include "store_internal.h"

#define TRIAL_COLS                                                                        \
    "t.id, t.job_id, t.config_key, t.config_hash, t.config_json, t.status, t.error, "       \
    "t.median_us, t.spread_us, t.min_us, t.samples_json, t.predicted_us, t.compile_s, "     \
    "t.measure_s, t.created_at, t.measured_by, t.samples_z"
#define TRIAL_NCOLS 17
/* Write a best row ($1..$12); Q_BEST_UPSERT adds "only when faster". */
#define BEST_PUT                                                                          \
    "INSERT INTO best (template_name, template_hash, problem_key, problem_json, target, "    \
    "backend_fp, trial_id, job_id, config_json, median_us, spread_us, predicted_us, "       \
    "updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, tt_now()) ON "   \
    "CONFLICT (template_name, template_hash, problem_key, target, backend_fp) DO UPDATE "   \
    "SET problem_json = COALESCE(excluded.problem_json, best.problem_json), trial_id = "    \
    "excluded.trial_id, job_id = excluded.job_id, config_json = excluded.config_json, "     \
    "median_us = excluded.median_us, spread_us = excluded.spread_us, predicted_us = "       \
    "excluded.predicted_us, updated_at = excluded.updated_at"

/* A trial from a row that starts with TRIAL_COLS (seq and reused are left 0). */
tt_rc tt__trial_from_row(tt__res *r, tt_trial *t);
/* 1 when every field of the measurement key is set. */
int tt__key_ok(const tt_trial_key *k);

#endif

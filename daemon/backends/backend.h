/* SPDX-License-Identifier: MIT
 * backend.h - measurement backends: how a config is measured.
 *
 *   model            the analytic cost model (a prediction, not a measurement)
 *   sim              the built-in pipeline simulator (a model of the chip, deterministic)
 *   replay:<name>    answers from a recorded full measurement (Kernel Tuner cache or T4 JSON,
 *                    gzip accepted) found as <datasets_dir>/<name>.{t4,kt-cache,}.json[.gz]
 *   cmd:<toolchain>  renders the template source and runs the toolchain's build and run
 *                    commands (defined in the server config only), i.e. real NPU / CANN tools
 *
 * One backend instance serves one job on one worker thread (not thread-safe); open one per
 * worker.  Ownership: tt_backend_open() borrows env, template and target (they outlive the
 * backend) and copies the problem; close with tt_backend_close() (NULL accepted).
 */
#ifndef TT_BACKEND_H
#define TT_BACKEND_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>

#include "target.h"
#include "template.h"
#include "tt_err.h"

#define TT_MAX_SAMPLES 64

typedef struct tt_measurement {
    tt_rc status;             /* TT_OK, or the failure class: TT_EINFEASIBLE (invalid config),
                                 TT_EBUILD, TT_EBUILDTIMEOUT, TT_ERUN, TT_ERUNTIMEOUT,
                                 TT_EWRONG; a config absent from a replay dataset is
                                 TT_EINFEASIBLE with error "not in dataset" */
    char error[256];
    double samples_us[TT_MAX_SAMPLES];
    int nsamples;
    double median_us, spread_us, min_us, mean_us;  /* filled by tt_measurement_summarise();
                                 replay: of every recorded runtime, also of more than the
                                 samples_us kept */
    double compile_s, measure_s;          /* wall seconds spent (recorded ones for replay) */
    double recorded_us;       /* replay: the dataset's own objective of the config (Kernel
                                 Tuner `time`, T4 measurement "time"); NAN elsewhere */
    int summarised;           /* the backend filled median, spread, min and mean itself (replay:
                                 once per process); else tt_backend_measure summarises */
} tt_measurement;

/* The statistic that ranks configs (a job's option "objective", docs/strategies.md):
 * median (the default on real backends), mean or min of a trial's samples, or the recorded
 * objective of a replay dataset (the default on replay:). */
typedef enum tt_objective { TT_OBJ_MEDIAN, TT_OBJ_MEAN, TT_OBJ_MIN, TT_OBJ_RECORDED } tt_objective;
/* "median", "mean", "min", "recorded": 0 and *out, or -1 for anything else. */
int tt_objective_parse(const char *name, tt_objective *out);
const char *tt_objective_name(tt_objective o);
/* The value of samples[0..n) under o, every sample counted (recorded: recorded_us, or the
 * median when it is NAN); NAN when n == 0 and nothing was recorded, or out of memory. */
double tt_objective_value(tt_objective o, const double *samples, int n, double recorded_us);
/* The value of a summarised successful measurement under o: its median_us, mean_us, min_us
 * or recorded_us (the median when that is NAN). */
double tt_measurement_objective(const tt_measurement *m, tt_objective o);

/* Median, inter-quartile spread, minimum and mean of samples[0..n) (any n) into the four
 * outputs; TT_ENOMEM (outputs NAN) when more than TT_MAX_SAMPLES cannot be copied; n == 0:
 * NANs. */
tt_rc tt_samples_stats(const double *samples, size_t n, double *median, double *spread,
                       double *min, double *mean);
/* Median, inter-quartile spread, minimum and mean of out->samples_us (no-op for 0 samples). */
void tt_measurement_summarise(tt_measurement *m);

typedef struct tt_backend_env {
    const char *datasets_dir;   /* replay datasets */
    const json_t *toolchains;   /* {"name": {"build": cmd, "run": cmd, "env": {..},
                                   "build_timeout": s, "run_timeout": s, ...}} */
    const char *work_dir;       /* scratch and build cache for cmd: backends */
    int repeats;                /* samples per measurement for backends that repeat (>= 1) */
    atomic_int *stop;           /* cmd: a running command is killed when this becomes non-zero
                                   (the worker lost the job's lease: cancelled, taken over);
                                   tt_backend_measure then returns TT_ECANCELLED.  May be NULL */
} tt_backend_env;

typedef struct tt_backend tt_backend;

/* Parse spec and open the backend for one (template, target, problem).  TT_EINVAL for an
 * unknown kind, TT_ENOTFOUND for an unknown dataset / toolchain, TT_EUNSUPPORTED when the
 * backend does not apply (model/sim without a kernel; replay dataset whose params differ
 * from the template's). */
tt_rc tt_backend_open(const char *spec, const tt_backend_env *env, const tt_template *t,
                      const tt_target *tgt, const int64_t *problem_slots, tt_backend **out,
                      tt_errinfo *err);
void tt_backend_close(tt_backend *b);
/* Check one toolchain definition of the server config (`toolchains.<name>`) the way the
 * cmd:<name> backend reads it: the name, unknown keys, types and ranges.  TT_OK, or TT_EINVAL
 * with the JSON path (e.g. "toolchains.a2.run_timout") and the reason; TT_ENOMEM. */
tt_rc tt_backend_cmd_check(const char *name, const json_t *def, tt_errinfo *err);
/* The cmd: backends' work directory: made when missing (with its parents) and written to (a
 * probe file, removed).  TT_OK, or TT_EIO naming the directory and the reason, so that a
 * daemon with toolchains refuses to start instead of failing its first cmd: job. */
tt_rc tt_backend_cmd_work_dir_check(const char *work_dir, tt_errinfo *err);
/* The fingerprint a cmd:<name> backend of definition `def` has ("cmd:<name>@<8 hex>", what
 * jobs and trials record), into out (cap >= 64 holds any); TT_ENOMEM. */
tt_rc tt_backend_cmd_fingerprint(const char *name, const json_t *def, char *out, size_t cap);
/* 1 when s can name a replay dataset: 1 to 63 letters, digits, '_', '-' and '.', not
 * starting with '.' and without "..", so <datasets_dir>/<s>.<suffix> stays in the directory. */
int tt_dataset_name_ok(const char *s);
/* The fingerprints of the datasets in dir, each as replay:<name> would open it there
 * ("replay:<name>@<8 hex>"), as a new string ",fp1,fp2," ("," for none or no such directory;
 * caller frees); TT_ENOMEM (*out NULL).  Each file is hashed once per (path, inode, size,
 * mtime) for the process (tt_dataset_file_hash): a call costs a directory read and stats. */
tt_rc tt_backend_replay_fps(const char *dir, char **out);
/* "sim", "model", "replay:NAME@<hash>", "cmd:NAME@<hash>": identifies what measured a trial
 * (part of the trial key).  Borrowed. */
const char *tt_backend_fingerprint(const tt_backend *b);
/* Measure one config (slots: problem + params; t->nslots long, lets are scratch).
 * Fills *out and returns TT_OK when the backend worked (out->status says how the config
 * fared), or an error when the backend itself failed (TT_EIO, TT_ENOMEM, ...) or was stopped
 * through env->stop (TT_ECANCELLED: nothing was measured).  out->error is valid UTF-8 (a
 * command's output quoted in it is repaired: see tt_utf8_fix). */
tt_rc tt_backend_measure(tt_backend *b, int64_t *slots, tt_measurement *out);

/* ---- for implementations (backend_*.c) ---------------------------------------------- */
typedef struct tt_backend_ops {
    const char *kind;         /* "model", "sim", "replay", "cmd" */
    tt_rc (*open)(tt_backend *b, const char *arg, tt_errinfo *err);  /* arg after ':' or "" */
    tt_rc (*measure)(tt_backend *b, int64_t *slots, tt_measurement *out);
    void (*close)(tt_backend *b);
} tt_backend_ops;

struct tt_backend {
    const tt_backend_ops *ops;
    const tt_backend_env *env;
    const tt_template *t;
    const tt_target *tgt;
    int64_t problem[TT_MAX_SLOTS];
    char fingerprint[80];     /* set by ops->open */
    void *impl;               /* owned by the implementation */
};

/* For the backends that run a model of the chip on the template (model, sim): TT_EINVAL when
 * `arg` is not empty ("backend '<kind>' takes no argument"), TT_EUNSUPPORTED when the
 * template has no kernel ("template '<name>' has no kernel: <why>"), else TT_OK. */
tt_rc tt__backend_need_kernel(const tt_backend *b, const char *arg, const char *why,
                              tt_errinfo *err);
/* CLOCK_MONOTONIC in seconds (for tt_measurement.measure_s). */
double tt__backend_now(void);
/* The outcome of a model-of-the-chip measurement (model, sim) whose code was rc: one sample
 * of time_us; a config the model finds infeasible (or deadlocking) is a measured status with
 * its reason and TT_OK; any other code is returned with "<who>: <message>[: reason]". */
tt_rc tt__backend_outcome(tt_rc rc, double time_us, const char *reason, const char *who,
                          tt_measurement *out);

extern const tt_backend_ops tt__backend_model_ops;
extern const tt_backend_ops tt__backend_sim_ops;
extern const tt_backend_ops tt__backend_replay_ops;
extern const tt_backend_ops tt__backend_cmd_ops;

#endif

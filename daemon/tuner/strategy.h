/* SPDX-License-Identifier: MIT
 * strategy.h - tuner strategies: deterministic generators of configs to measure.
 *
 * A strategy is a pull interface.  Given (space, model, seed, budget) and the results fed
 * back so far it proposes configs (param vectors) with tt_strategy_next(); the caller
 * measures each one and feeds the outcome back with tt_strategy_report().  The sequence of
 * proposals depends only on the seed, the budget, the options and the reported results, never
 * on time or on how many configs the caller asks for at once, so replaying a strategy from
 * scratch with the same measurements (taken from the store) proposes the same sequence: that
 * is how the runner resumes a job after a crash.
 *
 *   model-topk    rank the whole space by the model (top-k heap), measure the best k in order
 *   model-refine  rounds: measure the model's best few, fit a calibration on the measured
 *                 configs, re-rank with the calibrated model plus the neighbourhood of the
 *                 best measured configs; stop on budget or when a round brings no improvement
 *   evolution     steady-state genetic search (model-seeded when there is a model; for
 *                 spaces too large to enumerate): one child per round from the 4 best
 *                 measured (tournament, crossover, mutation), feasible and new; with a model
 *                 the best of 4 children by prediction
 *   anneal        simulated annealing over neighbours (one param moved one step or set to a
 *                 random value)
 *   bo            Bayesian optimisation: a Gaussian process on log time (Matern 5/2, ARD)
 *                 and expected improvement over feasible candidates (strategy_bo.c)
 *   model-bo      bo with the calibrated analytic model as the GP's prior mean
 *   random        uniform without replacement among feasible configs (seeded xoshiro256**)
 *   exhaustive    every feasible config in enumeration order
 * Every proposal is feasible (tt_space_check) and proposed at most once.  model-topk,
 * model-refine and model-bo run `bo` (same seed and budget; the best model-free strategy on
 * the replay datasets) when the model is NULL (a template without a kernel, measured by
 * replay:/cmd: backends); tt_strategy_fallback() and tt_strategy_chosen() say so.
 * Options (JSON object, all optional): "topk", "round", "population" (evolution's first
 * generation), "neighbours", "patience", "sample" (configs sampled to seed evolution), "init"
 * (bo's initial design), "objective" (read by the runner), "max_enumerate" (spaces whose
 * cartesian product exceeds it are sampled, not enumerated).
 *
 * Protocol: every config returned by tt_strategy_next() must be reported before the next
 * call that would need a new round; calling it with unreported proposals and nothing queued
 * gives TT_EINVAL.  Failed configs are reported with their status (time ignored).
 *
 * Ownership: tt_strategy_new() borrows template, target, space, model and options (they
 * outlive the strategy) and copies the problem.  Not thread-safe: one strategy is driven by
 * one thread (which also owns the space, since enumeration mutates it).
 */
#ifndef TT_STRATEGY_H
#define TT_STRATEGY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "space.h"
#include "target.h"
#include "template.h"
#include "tt_err.h"

typedef struct tt_strategy_config {
    const char *name;             /* one of tt_strategy_names(), or NULL / "" / "auto" */
    const tt_template *t;
    const tt_target *tgt;         /* for calibrated re-ranking (model-refine); may be NULL */
    tt_space *space;              /* borrowed; enumerated from the calling thread */
    const tt_model *model;        /* borrowed; NULL: no kernel -> model-* run anneal */
    const int64_t *problem;       /* problem slots [0, t->ninputs) (copied) */
    uint64_t seed;
    int64_t budget;               /* maximum proposals; 0: the strategy's default */
    const json_t *options;        /* borrowed, may be NULL */
    /* What determines `space` (template content, problem, capacities) as text, or NULL.  Set,
     * the space's enumeration is cached per process under it (strategy_enum.c): two spaces
     * with the same key must have the same feasible configs.  Borrowed for the strategy's
     * life. */
    const char *space_key;
} tt_strategy_config;

typedef struct tt_strategy tt_strategy;

/* A space key (tt_strategy_config.space_key) for the space of template t with problem slots
 * [0, t->ninputs) and capacities caps (NULL: none), as tt_space_new builds it: the problem,
 * the capacities and the template's document without name, version and description (copies
 * of a template under other names share it).  malloc'd; NULL when out of memory. */
char *tt_strategy_space_key(const tt_template *t, const int64_t *problem, const tt_caps *caps);

/* Which strategy a job runs, and why (tt_strategy_resolve): the job document and the log
 * state it, so a fallback is never silent. */
typedef struct tt_strategy_choice {
    const char *name;             /* the strategy that runs (static string) */
    int is_default;               /* 1: none was asked for ("" / "auto"): chosen by the rule */
    int fallback;                 /* 1: the one asked for needs a model and there is none */
    char reason[200];             /* one sentence, e.g. "fallback: model-refine needs ..." */
} tt_strategy_choice;

/* Resolve the strategy asked for (NULL, "" or "auto": the default) given whether the job
 * has an analytic model (a template with a kernel program) and its trial budget (0: none
 * given).  The default: with a model `model-bo`; without one `bo` up to
 * TT_STRATEGY_BO_MAX_BUDGET trials, `evolution` above (docs/strategies.md "Default").
 * A model strategy without a model runs its fallback (model-topk, model-refine: `bo`;
 * model-bo: `bo`).  Pure function of its arguments (the API calls it to show a job's
 * strategy).  TT_EINVAL for an unknown name (out->name NULL). */
tt_rc tt_strategy_resolve(const char *requested, int has_model, int64_t budget,
                          tt_strategy_choice *out);
#define TT_STRATEGY_BO_MAX_BUDGET 1500
/* What runs and why (filled by tt_strategy_new()); borrowed from st. */
const tt_strategy_choice *tt_strategy_chosen(const tt_strategy *st);

/* NULL-terminated list of the strategy names (static); "auto" is accepted too. */
const char *const *tt_strategy_names(void);
/* 1 if name is a known strategy, "auto" or "" (the default too; NULL: 0). */
int tt_strategy_known(const char *name);

/* The refusal of a space whose configs cannot all be numbered (!tt_space_indexed): every
 * strategy names configs by their index, and the first params of such a space never vary. */
#define TT_STRATEGY_HUGE_SPACE \
    "space too large to tune (more than 2^64 configs): a job numbers the configs of its " \
    "space in 64 bits; make the params' domains smaller"
/* Create a strategy.  TT_EINVAL for an unknown name or bad options (err names the option),
 * TT_EUNSUPPORTED for a space that is not indexed (TT_STRATEGY_HUGE_SPACE), TT_ENOMEM.
 * *out is NULL on error.  The initial work (ranking the space by the model,
 * enumerating it) is done lazily by the first tt_strategy_next(). */
tt_rc tt_strategy_new(const tt_strategy_config *cfg, tt_strategy **out, tt_errinfo *err);
void tt_strategy_free(tt_strategy *st);

/* Propose up to cap configs: params_out receives *n vectors of t->nparams values each
 * (param order of the template).  *n == 0 means the search is over.  Errors: TT_EINVAL
 * (protocol), TT_ENOMEM, or an enumeration error of the space. */
tt_rc tt_strategy_next(tt_strategy *st, size_t cap, int64_t *params_out, size_t *n);
/* Feed back the outcome of a proposed config: status TT_OK with its time (median us), or
 * the failure class.  TT_EINVAL when the config was not proposed (or already reported). */
tt_rc tt_strategy_report(tt_strategy *st, const int64_t *params, tt_rc status, double time_us);

/* Trials it plans: min(budget, feasible configs) when the space size is known, else the
 * budget.  Valid after the first tt_strategy_next(); before, the budget. */
int64_t tt_strategy_planned(const tt_strategy *st);
/* Configs proposed so far. */
int64_t tt_strategy_proposed(const tt_strategy *st);
/* Best reported config: 1 and params_out/time filled, 0 when none succeeded yet. */
int tt_strategy_best(const tt_strategy *st, int64_t *params_out, double *time_us);
/* 1 when a model strategy runs its model-free fallback (anneal) because it has no model. */
int tt_strategy_fallback(const tt_strategy *st);
/* The resolved budget (the default when 0 was given). */
int64_t tt_strategy_budget(const tt_strategy *st);
/* 1 when the strategy enumerated the whole space (so proposing nothing means that no config
 * is feasible), 0 when it samples a space too large to enumerate. */
int tt_strategy_enumerated(const tt_strategy *st);

#endif

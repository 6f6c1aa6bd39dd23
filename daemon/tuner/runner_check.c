/* SPDX-License-Identifier: MIT
 * runner_check.c - submission-time checks of a job's backend and strategy against the
 * runner's configuration (datasets, toolchains), so the API refuses what no worker could run.
 */
#include "runner.h"

#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "dataset.h"
#include "strategy.h"
#include "runner_int.h"

/* ---- submission checks -------------------------------------------------------------- */
/* Open the backend once (no target, a zero problem: replay and cmd read neither when
 * opening) so that the fingerprint is the one the workers will record, and the backend's
 * own checks (dataset params vs template params, toolchain definition) run at submission. */
static tt_rc tt_check_by_open(const tt_runner_config *cfg, const tt_template *t,
                              const char *backend, char fp[80], tt_errinfo *err)
{
    char defwork[512];
    tt__runner_default_work_dir(defwork, sizeof defwork);
    tt_backend_env env = {
        .datasets_dir = cfg->datasets_dir ? cfg->datasets_dir : TT_DEFAULT_DATASETS_DIR,
        .toolchains = cfg->toolchains, .work_dir = cfg->work_dir ? cfg->work_dir : defwork,
        .repeats = cfg->repeats > 0 ? cfg->repeats : 1,
    };
    int64_t zeros[TT_MAX_SLOTS] = {0};
    tt_backend *b = NULL;
    tt_rc rc = tt_backend_open(backend, &env, t, NULL, zeros, &b, err);
    if (rc != TT_OK) return rc;
    snprintf(fp, 80, "%s", tt_backend_fingerprint(b));
    tt_backend_close(b);
    return TT_OK;
}

tt_rc tt_runner_check_backend(const tt_runner_config *cfg, const tt_template *t,
                              const char *backend, char fp[80], tt_errinfo *err)
{
    fp[0] = 0;
    if (!backend || !*backend) return tt_errf(err, TT_EINVAL, "backend", "empty backend");
    if (strcmp(backend, "model") == 0 || strcmp(backend, "sim") == 0) {
        if (!t->kernel)
            return tt_errf(err, TT_EUNSUPPORTED, "backend",
                           "template '%s' has no kernel: backend '%s' does not apply (use "
                           "replay:<dataset> or cmd:<toolchain>)", t->name, backend);
        snprintf(fp, 80, "%s", backend);
        return TT_OK;
    }
    if (strncmp(backend, "replay:", 7) == 0) {
        const char *name = backend + 7;
        if (!tt_dataset_name_ok(name))
            return tt_errf(err, TT_EINVAL, "backend", "bad dataset name '%s'", name);
        const char *dir = cfg->datasets_dir ? cfg->datasets_dir : TT_DEFAULT_DATASETS_DIR;
        char path[4096];
        int found = tt_dataset_path(dir, name, path, sizeof path);
        if (!found) return tt_errf(err, TT_ENOTFOUND, "backend", "no dataset '%s' in %s", name, dir);
        return tt_check_by_open(cfg, t, backend, fp, err);
    }
    if (strncmp(backend, "cmd:", 4) == 0) {
        const char *name = backend + 4;
        const json_t *tc = cfg->toolchains ? json_object_get(cfg->toolchains, name) : NULL;
        if (!*name || !json_is_object(tc))
            return tt_errf(err, TT_ENOTFOUND, "backend", "no toolchain '%s' configured", name);
        if (!t->source_file && !t->source_script)
            return tt_errf(err, TT_EUNSUPPORTED, "backend",
                           "template '%s' has no source: backend '%s' does not apply", t->name,
                           backend);
        return tt_check_by_open(cfg, t, backend, fp, err);
    }
    return tt_errf(err, TT_EINVAL, "backend",
                   "unknown backend '%s' (model, sim, replay:<dataset>, cmd:<toolchain>)", backend);
}

int tt_runner_strategy_known(const char *name) { return tt_strategy_known(name); }

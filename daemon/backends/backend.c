/* SPDX-License-Identifier: MIT
 * backend.c - backend spec parsing and dispatch to the implementations (backend_*.c).
 */
#include "backend.h"

#include "jsonutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const tt_backend_ops *const tt_backends[] = {
    &tt__backend_model_ops, &tt__backend_sim_ops, &tt__backend_replay_ops, &tt__backend_cmd_ops,
};

static int tt_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics of sorted v[0..n). */
static double tt_quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    if (lo >= n - 1) return v[n - 1];
    return v[lo] + (v[lo + 1] - v[lo]) * (pos - lo);
}

tt_rc tt_samples_stats(const double *samples, size_t n, double *median, double *spread,
                       double *min, double *mean)
{
    *median = *spread = *min = *mean = NAN;
    if (n == 0) return TT_OK;
    double buf[TT_MAX_SAMPLES];
    double *s = n <= TT_MAX_SAMPLES ? buf : malloc(n * sizeof *s);
    if (!s) return TT_ENOMEM;
    memcpy(s, samples, n * sizeof *s);
    if (s != buf) qsort(s, n, sizeof *s, tt_cmp_double);
    for (size_t i = 1; s == buf && i < n; i++) {   /* insertion sort: few, often sorted */
        double x = s[i];
        size_t j = i;
        for (; j > 0 && tt_cmp_double(&s[j - 1], &x) > 0; j--) s[j] = s[j - 1];
        s[j] = x;
    }
    double avg = 0;   /* each sample divided first: two samples near DBL_MAX have a finite mean */
    for (size_t i = 0; i < n; i++) avg += s[i] / (double)n;
    *min = s[0];
    *median = tt_quantile(s, (int)n, 0.5);
    *spread = tt_quantile(s, (int)n, 0.75) - tt_quantile(s, (int)n, 0.25);
    *mean = avg;
    if (s != buf) free(s);
    return TT_OK;
}

void tt_measurement_summarise(tt_measurement *m)
{
    if (m->nsamples <= 0) return;
    if (m->nsamples > TT_MAX_SAMPLES) m->nsamples = TT_MAX_SAMPLES;
    (void)tt_samples_stats(m->samples_us, (size_t)m->nsamples, &m->median_us, &m->spread_us,
                           &m->min_us, &m->mean_us);
}

tt_rc tt_backend_open(const char *spec, const tt_backend_env *env, const tt_template *t,
                      const tt_target *tgt, const int64_t *problem_slots, tt_backend **out,
                      tt_errinfo *err)
{
    *out = NULL;
    if (!spec || !*spec) return tt_errf(err, TT_EINVAL, "backend", "empty backend");
    const char *colon = strchr(spec, ':');
    size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *arg = colon ? colon + 1 : "";
    const tt_backend_ops *ops = NULL;
    for (size_t i = 0; i < sizeof tt_backends / sizeof tt_backends[0]; i++)
        if (strlen(tt_backends[i]->kind) == klen && memcmp(tt_backends[i]->kind, spec, klen) == 0)
            ops = tt_backends[i];
    if (!ops)
        return tt_errf(err, TT_EINVAL, "backend",
                       "unknown backend '%s' (model, sim, replay:<dataset>, cmd:<toolchain>)",
                       spec);
    if (t->ninputs > TT_MAX_SLOTS) return tt_errf(err, TT_EINVAL, "backend", "too many inputs");
    tt_backend *b = calloc(1, sizeof *b);
    if (!b) return tt_errf(err, TT_ENOMEM, "backend", "out of memory");
    b->ops = ops;
    b->env = env;
    b->t = t;
    b->tgt = tgt;
    memcpy(b->problem, problem_slots, t->ninputs * sizeof(int64_t));
    tt_rc rc = ops->open(b, arg, err);
    if (rc != TT_OK) {
        free(b);
        return rc;
    }
    *out = b;
    return TT_OK;
}

tt_rc tt__backend_need_kernel(const tt_backend *b, const char *arg, const char *why,
                              tt_errinfo *err)
{
    if (arg && *arg)
        return tt_errf(err, TT_EINVAL, "backend", "backend '%s' takes no argument", b->ops->kind);
    if (!b->t->kernel)
        return tt_errf(err, TT_EUNSUPPORTED, "backend", "template '%s' has no kernel: %s",
                       b->t->name, why);
    return TT_OK;
}

double tt__backend_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

tt_rc tt__backend_outcome(tt_rc rc, double time_us, const char *reason, const char *who,
                          tt_measurement *out)
{
    switch (rc) {
    case TT_OK:
        out->status = TT_OK;
        out->samples_us[0] = time_us;
        out->nsamples = 1;
        return TT_OK;
    case TT_EINFEASIBLE: case TT_EOVERFLOW: case TT_EDIVZERO: case TT_EDOMAIN: case TT_ECONFIG:
    case TT_EDEADLOCK:
        out->status = rc == TT_EDEADLOCK ? TT_EDEADLOCK : TT_EINFEASIBLE;
        snprintf(out->error, sizeof out->error, "%s", reason[0] ? reason : tt_strerror(rc));
        return TT_OK;
    default:
        snprintf(out->error, sizeof out->error, "%s: %s%s%s", who, tt_strerror(rc),
                 reason[0] ? ": " : "", reason);
        return rc;
    }
}

void tt_backend_close(tt_backend *b)
{
    if (!b) return;
    if (b->ops->close) b->ops->close(b);
    free(b);
}

const char *tt_backend_fingerprint(const tt_backend *b) { return b->fingerprint; }

int tt_objective_parse(const char *name, tt_objective *out)
{
    static const char *const names[] = {"median", "mean", "min", "recorded"};
    for (int i = 0; name && i < 4; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (tt_objective)i;
            return 0;
        }
    return -1;
}

const char *tt_objective_name(tt_objective o)
{
    static const char *const names[] = {"median", "mean", "min", "recorded"};
    return (unsigned)o < 4 ? names[o] : "?";
}

double tt_objective_value(tt_objective o, const double *samples, int n, double recorded_us)
{
    if (o == TT_OBJ_RECORDED && !isnan(recorded_us)) return recorded_us;
    tt_measurement m;
    m.recorded_us = NAN;
    if (n <= 0 || tt_samples_stats(samples, (size_t)n, &m.median_us, &m.spread_us, &m.min_us,
                                   &m.mean_us) != TT_OK)
        return NAN;
    return tt_measurement_objective(&m, o);
}

double tt_measurement_objective(const tt_measurement *m, tt_objective o)
{
    switch (o) {
    case TT_OBJ_MEAN: return m->mean_us;
    case TT_OBJ_MIN: return m->min_us;
    case TT_OBJ_RECORDED: return isnan(m->recorded_us) ? m->median_us : m->recorded_us;
    default: return m->median_us;
    }
}

tt_rc tt_backend_measure(tt_backend *b, int64_t *slots, tt_measurement *out)
{
    memset(out, 0, sizeof *out);
    out->recorded_us = NAN;
    memcpy(slots, b->problem, b->t->ninputs * sizeof(int64_t));
    tt_rc rc = b->ops->measure(b, slots, out);
    tt_utf8_fix(out->error);   /* a command's output, cut anywhere: stored, then sent as JSON */
    if (rc == TT_OK && out->status == TT_OK && !out->summarised) tt_measurement_summarise(out);
    return rc;
}

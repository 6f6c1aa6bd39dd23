/* SPDX-License-Identifier: MIT
 * cmd_jobs.c - tlctl tune (with --wait: progress bar from the job's event stream and the
 * Ctrl-C prompt), jobs, job, cancel.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tlctl.h"

static volatile sig_atomic_t tl_interrupted;
static volatile int tl_stop;

static void tl_on_sigint(int sig)
{
    (void)sig;
    tl_interrupted = 1;
    tl_stop = 1;
}

static int tl_need(const tl_cmd *cmd, const tl_args *a, const char *opt)
{
    if (tl_arg(cmd, a, opt)) return 0;
    fprintf(stderr, "tlctl %s: --%s is required (see tlctl %s --help)\n", cmd->name, opt,
            cmd->name);
    return TL_EXIT_USAGE;
}

static int tl_int_arg(const tl_cmd *cmd, const tl_args *a, const char *opt, long long lo,
                      long long hi, long long *out)
{
    const char *v = tl_arg(cmd, a, opt);
    if (!v) return 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < lo || x > hi) {
        fprintf(stderr, "tlctl %s: --%s needs an integer in %lld..%lld, got \"%s\"\n", cmd->name,
                opt, lo, hi, v);
        return TL_EXIT_USAGE;
    }
    *out = x;
    return 0;
}

static int tl_job_id(const tl_cmd *cmd, const char *s, long long *id)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || x <= 0 || errno == ERANGE) {
        fprintf(stderr, "tlctl %s: a job id is an integer in 1..%lld, got \"%s\"\n", cmd->name,
                LLONG_MAX, s);
        return TL_EXIT_USAGE;
    }
    *id = x;
    return 0;
}

static void tl_job_print(const tl_ctx *c, const json_t *j)
{
    char b1[512], b2[64], b3[64];
    const json_t *best = json_object_get(j, "best");
    const json_t *prog = json_object_get(j, "progress");
    tl_table t;
    static const char *const hdr[] = {"field", "value"};
    tl_table_init(&t, 2, hdr);
    tl_table_add(&t, "job", tl_jstr(json_object_get(j, "id"), b1, sizeof b1));
    tl_table_add(&t, "state", json_string_value(json_object_get(j, "state")));
    tl_table_add(&t, "template",
                 json_string_value(json_object_get(json_object_get(j, "template"), "name")));
    tl_table_add(&t, "target", json_string_value(json_object_get(j, "target")));
    tl_table_add(&t, "problem", json_string_value(json_object_get(j, "problem_key")));
    tl_table_add(&t, "backend", json_string_value(json_object_get(j, "backend_fp")));
    tl_table_add(&t, "strategy", json_string_value(json_object_get(j, "strategy")));
    const json_t *ran = json_object_get(j, "strategy_ran");
    if (json_is_object(ran)) {   /* what actually runs, and why (a fallback is named) */
        snprintf(b1, sizeof b1, "%s (%s)", json_string_value(json_object_get(ran, "name")),
                 json_string_value(json_object_get(ran, "reason")));
        tl_table_add(&t, "strategy ran", b1);
    }
    const json_t *obj = json_object_get(json_object_get(j, "options"), "objective");
    if (json_is_string(obj)) tl_table_add(&t, "objective", json_string_value(obj));
    snprintf(b2, sizeof b2, "%lld/%lld", (long long)json_integer_value(json_object_get(prog, "done")),
             (long long)json_integer_value(json_object_get(prog, "planned")));
    tl_table_add(&t, "trials", b2);
    if (json_is_object(best)) {
        tl_table_add(&t, "best", tl_fmt_us_at(best, "measured_us", b3, sizeof b3));
        tl_table_add(&t, "best config", tl_jstr(json_object_get(best, "config"), b1, sizeof b1));
    }
    if (json_is_string(json_object_get(j, "error")))
        tl_table_add(&t, "error", json_string_value(json_object_get(j, "error")));
    tl_table_print(c, &t, stdout);
}

/* ---- trials as times, and the plots ---------------------------------------------- */

/* Every trial of job id in seq order (pages of 1000, until `total` or an empty page), into
 * *out (new reference: an array).  On an error *out is NULL and the exit code returned. */
static int tl_trials_all(const tl_ctx *c, long long id, json_t **out)
{
    *out = json_array();
    if (!*out) return TL_EXIT_SERVER;
    for (;;) {
        char path[128];
        snprintf(path, sizeof path, "/v1/jobs/%lld/trials?offset=%zu&limit=1000", id,
                 json_array_size(*out));
        json_t *page = NULL;
        int rc = tl_call(c, "GET", path, NULL, &page);
        if (rc) {
            json_decref(*out);
            *out = NULL;
            return rc;
        }
        const json_t *tr = json_object_get(page, "trials");
        size_t got = json_array_size(tr);
        if (got && json_array_extend(*out, (json_t *)tr)) {
            json_decref(page);
            json_decref(*out);
            *out = NULL;
            fprintf(stderr, "tlctl: out of memory\n");
            return TL_EXIT_SERVER;
        }
        long long total = (long long)json_integer_value(json_object_get(page, "total"));
        json_decref(page);
        if (!got || (long long)json_array_size(*out) >= total) return 0;
    }
}

/* Times of the trials in order: median_us of "ok" trials, 0 for the others.  Appends to
 * *t (grown with realloc); returns 0 or -1 when out of memory. */
static int tl_times_append(const json_t *trials, double **t, size_t *n)
{
    size_t k = json_array_size(trials), i;
    if (!k) return 0;
    double *nt = realloc(*t, (*n + k) * sizeof *nt);
    if (!nt) return -1;
    *t = nt;
    const json_t *x;
    json_array_foreach(trials, i, x) {
        const char *st = json_string_value(json_object_get(x, "status"));
        nt[(*n)++] = st && !strcmp(st, "ok") ? json_number_value(json_object_get(x, "median_us")) : 0;
    }
    return 0;
}

static int tl_width_arg(const tl_cmd *cmd, const tl_args *a, int *width)
{
    long long w = tl_term_width();
    int rc = tl_int_arg(cmd, a, "width", 20, 1000, &w);
    *width = (int)w;
    return rc;
}

/* --plot and --params of `tlctl job` (after the job table), `width` columns wide. */
static int tl_job_plots(const tl_ctx *c, const tl_cmd *cmd, const tl_args *a, const json_t *trials,
                        int width)
{
    int rc;
    if (tl_arg(cmd, a, "plot")) {
        double *t = NULL;
        size_t n = 0;
        if (tl_times_append(trials, &t, &n)) return TL_EXIT_SERVER;
        printf("\n");
        rc = tl_plot_convergence(stdout, t, n, width, 10, c->color);
        free(t);
        if (rc) return TL_EXIT_SERVER;
    }
    if (tl_arg(cmd, a, "params")) {
        printf("\nbest time seen per value of each tunable:\n");
        if (tl_plot_params(stdout, trials, width, c->color)) return TL_EXIT_SERVER;
    }
    return 0;
}

typedef struct tl_wait {
    tl_progress bar;
    char state[32];
    const tl_ctx *c;
    long long id;
    double *times;            /* the trials seen so far, for the live plot */
    size_t ntimes;
} tl_wait;

/* On a terminal: fetch the trials that arrived since the last event and redraw the curve
 * under the bar.  Failures only leave the plot as it was. */
static void tl_wait_plot(tl_wait *w)
{
    if (!w->bar.tty) return;
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%lld/trials?offset=%zu&limit=1000", w->id, w->ntimes);
    tl_resp r;
    if (tl_http(w->c, "GET", path, NULL, NULL, 0, &r)) return;
    if (r.status == 200 && r.json)
        (void)tl_times_append(json_object_get(r.json, "trials"), &w->times, &w->ntimes);
    tl_resp_free(&r);
    if (!w->ntimes) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    int rc = tl_plot_convergence(f, w->times, w->ntimes, tl_term_width(), 6, !w->c->nocolor);
    if (fclose(f) || rc) {
        free(buf);
        return;
    }
    tl_progress_set_plot(&w->bar, buf);
}

static int tl_on_event(const char *event, const char *data, void *ud)
{
    tl_wait *w = ud;
    json_t *d = json_loads(data, 0, NULL);
    const char *st = json_string_value(json_object_get(d, "state"));
    if (st) snprintf(w->state, sizeof w->state, "%s", st);
    if (!strcmp(event, "progress")) {
        tl_wait_plot(w);
        tl_progress_update(&w->bar, (long long)json_integer_value(json_object_get(d, "done")),
                           (long long)json_integer_value(json_object_get(d, "planned")),
                           json_number_value(json_object_get(d, "best_us")), st);
    }
    json_decref(d);
    return !strcmp(event, "end");
}

/* Follow job id until it ends; print the result.  Exit code per the job's final state. */
static int tl_wait_job(tl_ctx *c, long long id)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld/events", id);
    tl_wait w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.id = id;
    tl_progress_init(&w.bar, stderr);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tl_on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    int rc = tl_sse(c, path, tl_on_event, &w, &tl_stop);
    sigaction(SIGINT, &old, NULL);
    tl_progress_end(&w.bar);
    free(w.times);
    if (rc == 1 || tl_interrupted) {
        if (isatty(0) && isatty(2)) {
            fprintf(stderr, "cancel job %lld? [y/N] ", id);
            char line[16] = "";
            if (fgets(line, sizeof line, stdin) && (line[0] == 'y' || line[0] == 'Y')) {
                snprintf(path, sizeof path, "/v1/jobs/%lld", id);
                json_t *out = NULL;
                int crc = tl_call(c, "DELETE", path, NULL, &out);
                json_decref(out);
                if (crc) return crc;
                fprintf(stderr, "job %lld cancelled\n", id);
                return TL_EXIT_JOB;
            }
        }
        fprintf(stderr, "job %lld keeps running; follow it with `tlctl job %lld`, cancel it "
                        "with `tlctl cancel %lld`\n", id, id, id);
        return TL_EXIT_INTERRUPTED;
    }
    if (rc) return rc;
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    json_t *j = NULL;
    rc = tl_call(c, "GET", path, NULL, &j);
    if (rc) return rc;
    if (c->json) tl_print_json(j);
    else tl_job_print(c, j);
    const char *st = json_string_value(json_object_get(j, "state"));
    rc = st && !strcmp(st, "done") ? 0 : TL_EXIT_JOB;
    if (rc) {
        char sb[32], *err = tl_safe_dup(json_string_value(json_object_get(j, "error")));
        fprintf(stderr, "tlctl: job %lld %s%s%s\n", id, st ? tl_safe(st, sb, sizeof sb) : "?",
                err && *err ? ": " : "", err ? err : "");
        free(err);
    }
    json_decref(j);
    return rc;
}

int tl_cmd_tune(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    int rc;
    if ((rc = tl_need(cmd, a, "target"))) return rc;   /* no -p: a template without inputs */
    long long budget = 32, seed = 0;
    if ((rc = tl_int_arg(cmd, a, "budget", 1, 1000000, &budget)) ||
        (rc = tl_int_arg(cmd, a, "seed", -(1LL << 62), 1LL << 62, &seed)) ||
        (rc = tl_args_utf8(cmd, a, NULL)))
        return rc;
    const char *backend = tl_arg(cmd, a, "backend"), *strategy = tl_arg(cmd, a, "strategy");
    const char *problem = tl_arg(cmd, a, "problem"), *objective = tl_arg(cmd, a, "objective");
    json_t *tv;
    if ((rc = tl_template_value(cmd, a->pos[0], &tv))) return rc;
    json_t *body = json_pack("{s:o, s:s, s:s, s:s, s:s, s:{s:I}, s:I}", "template", tv,
                             "problem", problem ? problem : "", "target",
                             tl_arg(cmd, a, "target"), "backend", backend ? backend : "sim",
                             "strategy", strategy ? strategy : "auto", "budget",
                             "trials", (json_int_t)budget, "seed", (json_int_t)seed);
    if (!body || (objective && json_object_set_new(body, "options",
                                                   json_pack("{s:s}", "objective", objective)))) {
        json_decref(body);
        return tl_oom(cmd);
    }
    json_t *out = NULL;
    if ((rc = tl_call(c, "POST", "/v1/tune", body, &out))) return rc;
    long long id = (long long)json_integer_value(json_object_get(out, "job"));
    if (!tl_arg(cmd, a, "wait")) {
        if (c->json) tl_print_json(out);
        else printf("job %lld queued (space %lld configs); follow it with `tlctl job %lld`\n", id,
                    (long long)json_integer_value(json_object_get(out, "space_total")), id);
        json_decref(out);
        return 0;
    }
    if (!c->json) fprintf(stderr, "job %lld queued\n", id);
    json_decref(out);
    return tl_wait_job(c, id);
}

int tl_cmd_jobs(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    char path[1024] = "/v1/jobs";
    long long limit = 100, offset = 0;
    int rc;
    if ((rc = tl_int_arg(cmd, a, "limit", 1, 1000, &limit)) ||
        (rc = tl_int_arg(cmd, a, "offset", 0, 1LL << 62, &offset)) ||
        (rc = tl_args_utf8(cmd, a, NULL)))
        return rc;
    static const char *const filters[][2] = {{"status", "state"}, {"template", "template"},
                                             {"target", "target"}, {"owner", "owner"}};
    for (size_t k = 0; k < sizeof filters / sizeof *filters; k++)
        if (tl_arg(cmd, a, filters[k][0]))
            tl_query_add(path, sizeof path, filters[k][1], tl_arg(cmd, a, filters[k][0]));
    char ls[32], os[32];
    snprintf(ls, sizeof ls, "%lld", limit);
    snprintf(os, sizeof os, "%lld", offset);
    tl_query_add(path, sizeof path, "limit", ls);
    if (offset) tl_query_add(path, sizeof path, "offset", os);
    json_t *out = NULL;
    if ((rc = tl_call(c, "GET", path, NULL, &out))) return rc;
    if (c->json) { tl_print_json(out); json_decref(out); return 0; }
    static const char *const hdr[] = {"ID", "STATE", "TEMPLATE", "TARGET", "PROBLEM",
                                      "STRATEGY", "TRIALS", "BEST"};
    tl_table t;
    tl_table_init(&t, 8, hdr);
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(out, "jobs"), i, j) {
        char id[32], tr[48], best[32];
        const json_t *pr = json_object_get(j, "progress");
        snprintf(tr, sizeof tr, "%lld/%lld", (long long)json_integer_value(json_object_get(pr, "done")),
                 (long long)json_integer_value(json_object_get(pr, "planned")));
        tl_table_add(&t, tl_jstr(json_object_get(j, "id"), id, sizeof id),
                     json_string_value(json_object_get(j, "state")),
                     json_string_value(json_object_get(json_object_get(j, "template"), "name")),
                     json_string_value(json_object_get(j, "target")),
                     json_string_value(json_object_get(j, "problem_key")),
                     json_is_object(json_object_get(j, "strategy_ran"))
                         ? json_string_value(json_object_get(json_object_get(j, "strategy_ran"),
                                                             "name"))
                         : json_string_value(json_object_get(j, "strategy")), tr,
                     tl_fmt_us_at(json_object_get(j, "best"), "measured_us", best, sizeof best));
    }
    tl_table_print(c, &t, stdout);
    if ((long long)json_array_size(json_object_get(out, "jobs")) == limit)
        printf("(a full page of %lld: older jobs with --offset %lld)\n", limit, offset + limit);
    json_decref(out);
    return 0;
}

/* `method` /v1/jobs/<id> for the job id of the first positional argument: 0 with *id and *out
 * (new reference), or an exit code. */
static int tl_job_request(const tl_ctx *c, const tl_cmd *cmd, const tl_args *a, const char *method,
                          long long *id, json_t **out)
{
    int rc = tl_job_id(cmd, a->pos[0], id);
    if (rc) return rc;
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld", *id);
    return tl_call(c, method, path, NULL, out);
}

/* A trial's error for one table cell: its lines joined with " | ", other control bytes as
 * spaces (a toolchain's stderr tail has several lines); "" when there is none.  Returns buf. */
static const char *tl_one_line(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (; s && *s && n + 4 < cap; s++) {
        if (*s == '\n' && s[1]) {
            memcpy(buf + n, " | ", 3);
            n += 3;
        } else if (*s != '\n') {
            buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s;
        }
    }
    buf[n] = '\0';
    return buf;
}

int tl_cmd_job(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    long long id;
    json_t *j = NULL;
    int plots = tl_arg(cmd, a, "plot") || tl_arg(cmd, a, "params"), width = 0;
    if (tl_arg(cmd, a, "width") && !plots) {
        fprintf(stderr, "tlctl job: --width is only for --plot and --params\n");
        return TL_EXIT_USAGE;
    }
    int rc = tl_width_arg(cmd, a, &width);   /* before any request */
    if (!rc) rc = tl_job_id(cmd, a->pos[0], &id);
    if (rc) return rc;
    if ((rc = tl_job_request(c, cmd, a, "GET", &id, &j))) return rc;
    json_t *tr = NULL;
    if (tl_arg(cmd, a, "trials") || plots) {   /* every page, as the plots need */
        json_t *all = NULL;
        if ((rc = tl_trials_all(c, id, &all))) { json_decref(j); return rc; }
        tr = json_pack("{s:o}", "trials", all);
        if (!tr) {
            fprintf(stderr, "tlctl: out of memory\n");
            json_decref(j);
            return TL_EXIT_SERVER;
        }
    }
    if (c->json) {
        if (tr) json_object_set(j, "trials", json_object_get(tr, "trials"));
        tl_print_json(j);
    } else {
        tl_job_print(c, j);
        if (plots) rc = tl_job_plots(c, cmd, a, json_object_get(tr, "trials"), width);
        if (tr && tl_arg(cmd, a, "trials")) {
            static const char *const hdr[] = {"SEQ", "STATUS", "MEDIAN", "SPREAD", "PREDICTED",
                                              "CONFIG", "ERROR"};
            tl_table t;
            tl_table_init(&t, 7, hdr);
            size_t i;
            json_t *x;
            json_array_foreach(json_object_get(tr, "trials"), i, x) {
                char s[32], m[32], sp[32], p[32];
                char e[800];   /* an error: <= 255 bytes, 3 for a newline */
                tl_table_add(&t, tl_jstr(json_object_get(x, "seq"), s, sizeof s),
                             json_string_value(json_object_get(x, "status")),
                             tl_fmt_us_at(x, "median_us", m, sizeof m),
                             tl_fmt_us_at(x, "spread_us", sp, sizeof sp),
                             tl_fmt_us_at(x, "predicted_us", p, sizeof p),
                             json_string_value(json_object_get(x, "config_key")),
                             tl_one_line(json_string_value(json_object_get(x, "error")), e,
                                         sizeof e));
            }
            printf("\n");
            tl_table_print(c, &t, stdout);
        }
    }
    json_decref(tr);
    json_decref(j);
    return rc;
}

int tl_cmd_cancel(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    long long id;
    json_t *out = NULL;
    int rc = tl_job_request(c, cmd, a, "DELETE", &id, &out);
    if (rc) return rc;
    if (c->json) tl_print_json(out);
    else printf("job %lld cancelled\n", id);
    json_decref(out);
    return 0;
}

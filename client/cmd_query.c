/* SPDX-License-Identifier: MIT
 * cmd_query.c - read-only commands: best (table/json/env/args), templates, targets, predict
 * (labelled as model predictions), simulate (labelled as simulated, optional trace file).
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "tlctl.h"

static int tl_req(const tl_cmd *cmd, const tl_args *a, const char *opt)
{
    if (tl_arg(cmd, a, opt)) return 0;
    fprintf(stderr, "tlctl %s: --%s is required (see tlctl %s --help)\n", cmd->name, opt,
            cmd->name);
    return TL_EXIT_USAGE;
}

/* "M=1,N=2" -> query arguments M=1&N=2.  TL_EXIT_USAGE for a malformed list. */
static int tl_problem_query(const tl_cmd *cmd, const char *kv, char *path, size_t cap)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", kv);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq || eq == item || !eq[1]) {
            fprintf(stderr, "tlctl %s: -p expects K=V,K=V..., got \"%s\"\n", cmd->name, kv);
            return TL_EXIT_USAGE;
        }
        *eq = '\0';
        tl_query_add(path, cap, item, eq + 1);
    }
    return 0;
}

/* 1 when a TEMPLATE argument names a document file rather than a template: it contains a
 * '/' or ends in ".json" (a template name has neither: 1..63 of [A-Za-z0-9_.-] without a
 * ".json" tail is what people name templates). */
int tl_template_is_file(const char *arg)
{
    size_t n = strlen(arg);
    return strchr(arg, '/') != NULL || (n > 5 && !strcmp(arg + n - 5, ".json"));
}

/* The "template" member of a request body for a TEMPLATE argument: the name as a string, or
 * the document read from the file it names (sent inline: POST /v1/tune stores it under its
 * name for the token).  0, or TL_EXIT_USAGE after one line naming the file. */
int tl_template_value(const tl_cmd *cmd, const char *arg, json_t **out)
{
    *out = NULL;
    if (!tl_template_is_file(arg)) {
        *out = json_string(arg);
        return *out ? 0 : tl_oom(cmd);
    }
    json_error_t e;
    FILE *f = fopen(arg, "rb");
    if (!f) {
        fprintf(stderr, "tlctl %s: cannot read the template file %s: %s\n", cmd->name, arg,
                strerror(errno));
        return TL_EXIT_USAGE;
    }
    json_t *doc = tt_json_loadf(f, JSON_REJECT_DUPLICATES, &e);
    fclose(f);
    if (!doc) {
        char at[32] = "";
        if (e.line > 0) snprintf(at, sizeof at, " (line %d)", e.line);
        fprintf(stderr, "tlctl %s: cannot read the template file %s: %s%s\n", cmd->name, arg,
                e.text, at);
        return TL_EXIT_USAGE;
    }
    if (!json_is_object(doc)) {
        fprintf(stderr, "tlctl %s: the template file %s does not hold a JSON object\n",
                cmd->name, arg);
        json_decref(doc);
        return TL_EXIT_USAGE;
    }
    *out = doc;
    return 0;
}

int tl_template_named(const tl_cmd *cmd, const tl_args *a, tl_args *out, char *name, size_t cap)
{
    *out = *a;   /* borrowed: the caller frees only a */
    int i = 0;
    while (cmd->opts[i].name && strcmp(cmd->opts[i].name, "template")) i++;
    if (!cmd->opts[i].name || !a->val[i] || !tl_template_is_file(a->val[i])) return 0;
    json_t *doc = NULL;
    int rc = tl_template_value(cmd, a->val[i], &doc);
    if (rc) return rc;
    const char *n = json_string_value(json_object_get(doc, "name"));
    if (!n || !n[0] || strlen(n) >= cap) {
        fprintf(stderr, "tlctl %s: the template file %s has no \"name\" (%s works on a "
                "template by its name)\n", cmd->name, a->val[i], cmd->name);
        json_decref(doc);
        return TL_EXIT_USAGE;
    }
    snprintf(name, cap, "%s", n);
    json_decref(doc);
    out->val[i] = name;
    return 0;
}

/* The server's description of a TEMPLATE argument (name, hash, inputs): GET
 * /v1/templates/NAME, or for a document file POST /v1/templates/{its name}/validate (checked,
 * nothing stored).  0 with a new reference in *info, or the exit code after one line. */
static int tl_template_info(const tl_ctx *c, const tl_cmd *cmd, const char *arg, json_t **info)
{
    json_t *doc = NULL;
    int rc = tl_template_is_file(arg) ? tl_template_value(cmd, arg, &doc) : 0;
    if (rc) return rc;
    const char *name = doc ? json_string_value(json_object_get(doc, "name")) : arg;
    char *e = curl_easy_escape(NULL, name && *name ? name : "unnamed", 0);
    if (!e) {
        json_decref(doc);
        return tl_oom(cmd);
    }
    char path[1024];
    snprintf(path, sizeof path, "/v1/templates/%s%s", e, doc ? "/validate" : "");
    curl_free(e);
    return tl_call(c, doc ? "POST" : "GET", path, doc, info);   /* takes doc */
}

static int tl_info_needs_problem(const json_t *info)
{
    size_t i;
    const json_t *in;
    json_array_foreach(json_object_get(info, "inputs"), i, in)
        if (!json_object_get(in, "default")) return 1;
    return 0;
}

int tl_template_needs_problem(const tl_ctx *c, const tl_cmd *cmd, const char *name, int *needs)
{
    json_t *t = NULL;
    int rc = tl_template_info(c, cmd, name, &t);
    if (rc) return rc;
    *needs = tl_info_needs_problem(t);
    json_decref(t);
    return 0;
}

/* TEMPLATE of best as the query's template (and, for a document file, hash of that version),
 * checking that -p is given unless every input has a default: 0, or TL_EXIT_USAGE (or the
 * look-up's exit code) after one line. */
static int tl_best_template(const tl_ctx *c, const tl_cmd *cmd, const tl_args *a, char *path,
                            size_t cap)
{
    int file = tl_template_is_file(a->pos[0]);
    if (!file && tl_arg(cmd, a, "problem")) {
        tl_query_add(path, cap, "template", a->pos[0]);
        return 0;
    }
    json_t *info = NULL;
    int rc = tl_template_info(c, cmd, a->pos[0], &info);
    if (rc) return rc;
    if (!tl_arg(cmd, a, "problem") && tl_info_needs_problem(info)) {
        fprintf(stderr, "tlctl %s: --problem is required: template %s has inputs without a "
                "default (see tlctl %s --help)\n", cmd->name, a->pos[0], cmd->name);
        json_decref(info);
        return TL_EXIT_USAGE;
    }
    const char *name = json_string_value(json_object_get(info, "name"));
    const char *hash = json_string_value(json_object_get(info, "hash"));
    tl_query_add(path, cap, "template", file && name ? name : a->pos[0]);
    if (file && hash) tl_query_add(path, cap, "hash", hash);
    json_decref(info);
    return 0;
}

int tl_cmd_best(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    int rc;
    if ((rc = tl_req(cmd, a, "target"))) return rc;   /* no -p: every input has a default */
    const char *fmt = tl_arg(cmd, a, "format");
    if (!fmt) fmt = c->json ? "json" : "table";
    if (strcmp(fmt, "table") && strcmp(fmt, "json") && strcmp(fmt, "env") && strcmp(fmt, "args")) {
        fprintf(stderr, "tlctl best: --format must be table, json, env or args, got \"%s\"\n", fmt);
        return TL_EXIT_USAGE;
    }
    char path[2048] = "/v1/best";
    if ((rc = tl_best_template(c, cmd, a, path, sizeof path))) return rc;
    tl_query_add(path, sizeof path, "target", tl_arg(cmd, a, "target"));
    if (tl_arg(cmd, a, "backend")) tl_query_add(path, sizeof path, "backend", tl_arg(cmd, a, "backend"));
    if (tl_arg(cmd, a, "nearest")) tl_query_add(path, sizeof path, "nearest", "1");
    if (tl_arg(cmd, a, "problem") &&
        (rc = tl_problem_query(cmd, tl_arg(cmd, a, "problem"), path, sizeof path)))
        return rc;
    json_t *out = NULL;
    if ((rc = tl_call(c, "GET", path, NULL, &out))) return rc;
    const json_t *cfg = json_object_get(out, "config");
    const char *k;
    json_t *v;
    char b[256];
    if (!strcmp(fmt, "json")) {
        tl_print_json(out);
    } else if (!strcmp(fmt, "env")) {
        json_object_foreach((json_t *)cfg, k, v) {
            printf("TT_");
            for (const char *p = k; *p; p++)
                putchar(isalnum((unsigned char)*p) ? toupper((unsigned char)*p) : '_');
            printf("=%s\n", tl_jstr(v, b, sizeof b));
        }
    } else if (!strcmp(fmt, "args")) {
        int first = 1;
        json_object_foreach((json_t *)cfg, k, v) {
            char kb[256];
            printf("%s--%s=%s", first ? "" : " ", tl_safe(k, kb, sizeof kb),
                   tl_jstr(v, b, sizeof b));
            first = 0;
        }
        printf("\n");
    } else {
        static const char *const hdr[] = {"field", "value"};
        tl_table t;
        tl_table_init(&t, 2, hdr);
        char m[32], s[32], d[32];
        tl_table_add(&t, "template", json_string_value(json_object_get(out, "template")));
        tl_table_add(&t, "target", json_string_value(json_object_get(out, "target")));
        tl_table_add(&t, "problem", json_string_value(json_object_get(out, "problem_key")));
        if (json_is_false(json_object_get(out, "exact"))) {
            snprintf(d, sizeof d, "%.3g", json_number_value(json_object_get(out, "distance")));
            tl_table_add(&t, "nearest (distance)", d);
        }
        json_object_foreach((json_t *)cfg, k, v) tl_table_add(&t, k, tl_jstr(v, b, sizeof b));
        char lab[64];
        snprintf(lab, sizeof lab, "median (%s)", json_string_value(json_object_get(out, "time_kind")) ?
                 json_string_value(json_object_get(out, "time_kind")) : "measured");
        tl_table_add(&t, lab, tl_fmt_us_at(out, "median_us", m, sizeof m));
        tl_table_add(&t, "spread", tl_fmt_us_at(out, "spread_us", s, sizeof s));
        tl_table_add(&t, "measured by", json_string_value(json_object_get(out, "measured_by")));
        tl_table_print(c, &t, stdout);
    }
    json_decref(out);
    return 0;
}

int tl_cmd_templates(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    (void)cmd; (void)a;
    json_t *out = NULL;
    int rc = tl_call(c, "GET", "/v1/templates", NULL, &out);
    if (rc) return rc;
    if (c->json) { tl_print_json(out); json_decref(out); return 0; }
    static const char *const hdr[] = {"NAME", "VERSION", "HASH", "BUILTIN", "KERNEL", "DESCRIPTION"};
    tl_table t;
    tl_table_init(&t, 6, hdr);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(out, "templates"), i, x) {
        tl_table_add(&t, json_string_value(json_object_get(x, "name")),
                     json_string_value(json_object_get(x, "version")),
                     json_string_value(json_object_get(x, "hash")),
                     json_is_true(json_object_get(x, "builtin")) ? "yes" : "no",
                     json_is_true(json_object_get(x, "has_kernel")) ? "yes" : "no (replay/cmd only)",
                     json_string_value(json_object_get(x, "summary")));
    }
    tl_table_print(c, &t, stdout);
    json_decref(out);
    return 0;
}

int tl_cmd_targets(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    (void)cmd; (void)a;
    json_t *out = NULL;
    int rc = tl_call(c, "GET", "/v1/targets", NULL, &out);
    if (rc) return rc;
    if (c->json) { tl_print_json(out); json_decref(out); return 0; }
    static const char *const hdr[] = {"NAME", "ALIASES", "PLATFORM", "CUBE", "VECTOR", "MHZ", "HBM GB/s"};
    tl_table t;
    tl_table_init(&t, 7, hdr);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(out, "targets"), i, x) {
        char al[128] = "", b1[32], b2[32], b3[32], b4[32];
        size_t k;
        json_t *y;
        json_array_foreach(json_object_get(x, "aliases"), k, y) {
            size_t n = strlen(al);
            snprintf(al + n, sizeof al - n, "%s%s", k ? "," : "", json_string_value(y));
        }
        tl_table_add(&t, json_string_value(json_object_get(x, "name")), al,
                     json_string_value(json_object_get(x, "platform")),
                     tl_jstr(json_object_get(x, "cube_cores"), b1, sizeof b1),
                     tl_jstr(json_object_get(x, "vector_cores"), b2, sizeof b2),
                     tl_jstr(json_object_get(x, "clock_mhz"), b3, sizeof b3),
                     tl_jstr(json_object_get(x, "hbm_gbps"), b4, sizeof b4));
    }
    tl_table_print(c, &t, stdout);
    json_decref(out);
    return 0;
}

/* Why a predict of the whole space listed nothing: the space's size, what rejected its
 * configs (`space.rejected`: reason -> count) and how many the model could not evaluate. */
static void tl_print_empty_space(const json_t *out)
{
    const json_t *sp = json_object_get(out, "space");
    printf("no feasible config (%.0f configs%s)", json_number_value(json_object_get(sp, "total")),
           json_is_false(json_object_get(sp, "complete")) ? ", not all looked at" : "");
    const char *k, *sep = "; rejected: ";
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(sp, "rejected"), k, v) {
        char kb[256];
        printf("%s%s (%.0f)", sep, tl_safe(k, kb, sizeof kb), json_number_value(v));
        sep = ", ";
    }
    double mi = json_number_value(json_object_get(sp, "model_infeasible"));
    if (mi > 0) printf("; the model could not evaluate %.0f", mi);
    printf("\n");
}

/* The model's error band of a prediction, "LOW..HIGH" ("-" when the answer has none). */
static void tl_fmt_band(const json_t *x, char *buf, size_t cap)
{
    char lo[32], hi[32];
    if (!(json_number_value(json_object_get(x, "low_us")) > 0) ||
        !(json_number_value(json_object_get(x, "high_us")) > 0)) {
        snprintf(buf, cap, "-");
        return;
    }
    snprintf(buf, cap, "%s..%s", tl_fmt_us_at(x, "low_us", lo, sizeof lo),
             tl_fmt_us_at(x, "high_us", hi, sizeof hi));
}

int tl_cmd_predict(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    int rc;
    if ((rc = tl_req(cmd, a, "problem")) || (rc = tl_req(cmd, a, "target")) ||
        (rc = tl_args_utf8(cmd, a, NULL)))
        return rc;
    long k = 0;
    if (tl_arg(cmd, a, "top")) {
        char *end;
        k = strtol(tl_arg(cmd, a, "top"), &end, 10);
        if (*end || k < 1 || k > 1000) {
            fprintf(stderr, "tlctl predict: --top needs an integer in 1..1000\n");
            return TL_EXIT_USAGE;
        }
    }
    json_t *tv;
    if ((rc = tl_template_value(cmd, a->pos[0], &tv))) return rc;
    json_t *body = json_pack("{s:o, s:s, s:s}", "template", tv, "problem",
                             tl_arg(cmd, a, "problem"), "target", tl_arg(cmd, a, "target"));
    if (!body ||
        (tl_arg(cmd, a, "config") &&
         json_object_set_new(body, "config", json_string(tl_arg(cmd, a, "config")))) ||
        (k && json_object_set_new(body, "top", json_integer(k)))) {
        json_decref(body);
        return tl_oom(cmd);
    }
    json_t *out = NULL;
    if ((rc = tl_call(c, "POST", "/v1/predict", body, &out))) return rc;
    if (c->json) { tl_print_json(out); json_decref(out); return 0; }
    char tg[256], pk[1024];
    printf("MODEL PREDICTIONS (%s), not measurements: %s on %s, %s\n",
           json_string_value(json_object_get(out, "note")) ? "analytic cost model" : "model",
           a->pos[0], tl_safe(json_string_value(json_object_get(out, "target")), tg, sizeof tg),
           tl_safe(json_string_value(json_object_get(out, "problem_key")), pk, sizeof pk));
    if (!json_array_size(json_object_get(out, "results"))) {
        tl_print_empty_space(out);
        json_decref(out);
        return 0;
    }
    static const char *const hdr[] = {"#", "PREDICTED", "BAND", "BOUND", "CONFIG"};
    tl_table t;
    tl_table_init(&t, 5, hdr);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(out, "results"), i, x) {
        char n[24], us[32], band[72], cfg[512];
        snprintf(n, sizeof n, "%zu", i + 1);
        int ok = json_is_true(json_object_get(x, "feasible"));
        tl_fmt_band(x, band, sizeof band);
        tl_table_add(&t, n, ok ? tl_fmt_us_at(x, "time_us", us, sizeof us) : "infeasible",
                     ok ? band : "",
                     ok ? json_string_value(json_object_get(x, "bound"))
                        : json_string_value(json_object_get(x, "reason")),
                     tl_jstr(json_object_get(x, "config"), cfg, sizeof cfg));
    }
    tl_table_print(c, &t, stdout);
    json_decref(out);
    return 0;
}

int tl_cmd_simulate(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    int rc;
    if ((rc = tl_req(cmd, a, "problem")) || (rc = tl_req(cmd, a, "target")) ||
        (rc = tl_req(cmd, a, "config")) ||
        (rc = tl_args_utf8(cmd, a, (const char *const[]){"trace", NULL})))
        return rc;
    const char *trace = tl_arg(cmd, a, "trace");
    json_t *tv;
    if ((rc = tl_template_value(cmd, a->pos[0], &tv))) return rc;
    json_t *body = json_pack("{s:o, s:s, s:s, s:s, s:b}", "template", tv, "problem",
                             tl_arg(cmd, a, "problem"), "target", tl_arg(cmd, a, "target"),
                             "config", tl_arg(cmd, a, "config"), "trace", trace != NULL);
    if (!body) return tl_oom(cmd);
    json_t *out = NULL;
    if ((rc = tl_call(c, "POST", "/v1/simulate", body, &out))) return rc;
    if (trace) {
        char *s = tt_json_dumps(json_object_get(out, "trace"), JSON_COMPACT);
        rc = s ? tl_write_file(trace, s, strlen(s)) : TL_EXIT_SERVER;
        if (!s) fprintf(stderr, "tlctl simulate: the answer has no trace\n");
        free(s);
        json_object_del(out, "trace");
        if (rc) { json_decref(out); return rc; }
    }
    if (c->json) { tl_print_json(out); json_decref(out); return 0; }
    char us[32], b[64], tg[256], pk[1024];
    printf("SIMULATED (pipeline simulator, not hardware): %s on %s, %s\n", a->pos[0],
           tl_safe(json_string_value(json_object_get(out, "target")), tg, sizeof tg),
           tl_safe(json_string_value(json_object_get(out, "problem_key")), pk, sizeof pk));
    printf("simulated time: %s (%s cycles), blocks %s\n",
           tl_fmt_us_at(out, "time_us", us, sizeof us),
           tl_jstr(json_object_get(out, "cycles"), b, sizeof b),
           tl_jstr(json_object_get(out, "blocks"), b + 32, 32));
    static const char *const hdr[] = {"UNIT", "BUSY CYCLES", "UTIL"};
    tl_table t;
    tl_table_init(&t, 3, hdr);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(out, "busy_cycles"), k, v) {
        char bc[32], ut[32];
        snprintf(bc, sizeof bc, "%.0f", json_number_value(v));
        snprintf(ut, sizeof ut, "%.1f%%",
                 100 * json_number_value(json_object_get(json_object_get(out, "util"), k)));
        tl_table_add(&t, k, bc, ut);
    }
    tl_table_print(c, &t, stdout);
    if (trace) printf("trace written to %s (open in https://ui.perfetto.dev)\n", trace);
    json_decref(out);
    return 0;
}

/* SPDX-License-Identifier: MIT
 * cmd_ci.c - tlctl check (CI regression verdicts as a table, JSON or JUnit XML; --pin),
 * export (JSON, T4, SPECIALIZATIONS, C header) and import (T4, Kernel Tuner cache, T1).
 */
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "tlctl.h"

static int tl_required(const tl_cmd *cmd, const tl_args *a, const char *opt)
{
    if (tl_arg(cmd, a, opt)) return 0;
    fprintf(stderr, "tlctl %s: --%s is required (see tlctl %s --help)\n", cmd->name, opt,
            cmd->name);
    return TL_EXIT_USAGE;
}

/* Problems of repeated -p options (joined with ';') as a new JSON array: a string per
 * problem, an empty object for an empty -p (the problem of a template without inputs, as the
 * API takes it).  NULL when out of memory. */
static json_t *tl_problems(const char *joined)
{
    json_t *arr = json_array();
    if (!joined || !arr) return arr;
    for (const char *p = joined;;) {
        size_t n = strcspn(p, ";");
        json_t *v = n ? json_stringn(p, n) : json_object();
        if (json_array_append_new(arr, v)) {
            json_decref(arr);
            return NULL;
        }
        if (!p[n]) return arr;
        p += n + 1;
    }
}

/* No -p was given but a problem is needed: [{}] in *problems (new reference) when every
 * input of template `name` has a default (or it has none), else NULL.  0, or the exit code
 * of the template look-up. */
static int tl_problems_inputless(const tl_ctx *c, const tl_cmd *cmd, const char *name,
                                 json_t **problems)
{
    int needs = 1, rc = tl_template_needs_problem(c, cmd, name, &needs);
    *problems = rc || needs ? NULL : json_pack("[{}]");
    return !rc && !needs && !*problems ? tl_oom(cmd) : rc;
}

/* s (UTF-8, as jansson hands strings out) as XML 1.0 attribute or element text: the markup
 * characters as entities, tab, newline and carriage return as character references (kept in
 * an attribute), and what XML 1.0 cannot hold at all (other control characters, U+FFFE,
 * U+FFFF; a parser rejects the whole report for one of them, and a toolchain's result line
 * quoted in an error can hold them) spelled \xnn (as the server's messages spell them) or
 * \uFFFE, so the report still parses and says what was there. */
static void tl_xml_attr(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\t': case '\n': case '\r': fprintf(f, "&#%d;", *p); break;
        default:
            if (*p < 0x20) {
                fprintf(f, "\\x%02x", *p);
            } else if (p[0] == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF)) {
                fprintf(f, "\\uFFF%c", p[2] == 0xBE ? 'E' : 'F');
                p += 2;
            } else {
                fputc(*p, f);
            }
        }
    }
}

/* The JUnit report: a testcase per entry; regressed and error are failures, and so is missing
 * with --fail-on-missing (fail_missing), else it is skipped, so that the failures a CI system
 * counts are there exactly when tlctl exits 1. */
static void tl_check_junit(FILE *f, const json_t *out, int fail_missing)
{
    const json_t *cnt = json_object_get(out, "counts");
    long long n = (long long)json_array_size(json_object_get(out, "entries"));
    long long missing = (long long)json_integer_value(json_object_get(cnt, "missing"));
    long long fails = (long long)(json_integer_value(json_object_get(cnt, "regressed")) +
                                  json_integer_value(json_object_get(cnt, "error"))) +
                      (fail_missing ? missing : 0);
    long long skip = fail_missing ? 0 : missing;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuites name=\"tiletune check\" tests=\"%lld\" failures=\"%lld\">\n"
               "  <testsuite name=\"tiletune.check\" tests=\"%lld\" failures=\"%lld\" "
               "skipped=\"%lld\">\n", n, fails, n, fails, skip);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(out, "entries"), i, e) {
        const char *v = json_string_value(json_object_get(e, "verdict"));
        double nm = json_number_value(json_object_get(e, "new_median_us"));
        fprintf(f, "    <testcase classname=\"tiletune.");
        tl_xml_attr(f, json_string_value(json_object_get(e, "template")));
        fputc('.', f);
        tl_xml_attr(f, json_string_value(json_object_get(e, "target")));
        fprintf(f, "\" name=\"");   /* the entry's own name when it has one */
        const char *nm_s = json_string_value(json_object_get(e, "name"));
        tl_xml_attr(f, nm_s ? nm_s : json_string_value(json_object_get(e, "problem_key")));
        fprintf(f, "\" time=\"%.9f\">", nm * 1e-6);
        char msg[512];
        snprintf(msg, sizeof msg, "%s: %.4g us vs baseline %.4g us (%+.1f%%, limit %.4g us)", v,
                 nm, json_number_value(json_object_get(e, "base_median_us")),
                 json_number_value(json_object_get(e, "delta_pct")),
                 json_number_value(json_object_get(e, "limit_us")));
        if (!strcmp(v, "regressed")) {
            fprintf(f, "\n      <failure type=\"regressed\" message=\"");
            tl_xml_attr(f, msg);
            fprintf(f, "\"/>\n    ");
        } else if (!strcmp(v, "error")) {
            fprintf(f, "\n      <failure type=\"error\" message=\"");
            tl_xml_attr(f, json_string_value(json_object_get(e, "error")));
            fprintf(f, "\"/>\n    ");
        } else if (!strcmp(v, "missing")) {
            fputs(fail_missing ? "\n      <failure type=\"missing\" message=\"no baseline for "
                                 "this shape (--fail-on-missing)\"/>\n    "
                               : "\n      <skipped message=\"no baseline for this shape\"/>\n"
                                 "    ", f);
        } else {
            fprintf(f, "\n      <system-out>");
            tl_xml_attr(f, msg);
            fprintf(f, "</system-out>\n    ");
        }
        fprintf(f, "</testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
}

static void tl_check_table(const tl_ctx *c, FILE *f, const json_t *out)
{
    static const char *const hdr[] = {"TEMPLATE", "TARGET", "PROBLEM", "VERDICT", "BASELINE",
                                      "NEW", "DELTA", "LIMIT"};
    tl_table t;
    tl_table_init(&t, 8, hdr);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(out, "entries"), i, e) {
        char b[32], n[32], d[32], l[32];
        const json_t *dp = json_object_get(e, "delta_pct");
        snprintf(d, sizeof d, "%+.1f%%", json_number_value(dp));
        tl_table_add(&t, json_string_value(json_object_get(e, "template")),
                     json_string_value(json_object_get(e, "target")),
                     json_string_value(json_object_get(e, "problem_key")),
                     json_string_value(json_object_get(e, "verdict")),
                     tl_fmt_us_at(e, "base_median_us", b, sizeof b),
                     tl_fmt_us_at(e, "new_median_us", n, sizeof n),
                     dp ? d : "-",
                     tl_fmt_us_at(e, "limit_us", l, sizeof l));
    }
    tl_table_print(c, &t, f);
    const json_t *cnt = json_object_get(out, "counts");
    char v[32], base[256];
    fprintf(f, "%s: %lld pass, %lld regressed, %lld improved, %lld missing, %lld error "
               "(baseline %s, tolerance %.3g)\n",
            tl_safe(json_string_value(json_object_get(out, "verdict")), v, sizeof v),
            (long long)json_integer_value(json_object_get(cnt, "pass")),
            (long long)json_integer_value(json_object_get(cnt, "regressed")),
            (long long)json_integer_value(json_object_get(cnt, "improved")),
            (long long)json_integer_value(json_object_get(cnt, "missing")),
            (long long)json_integer_value(json_object_get(cnt, "error")),
            tl_safe(json_string_value(json_object_get(out, "baseline")), base, sizeof base),
            json_number_value(json_object_get(out, "tolerance")));
    for (i = 0; i < json_array_size(json_object_get(out, "entries")); i++) {
        e = json_array_get(json_object_get(out, "entries"), i);
        if (!json_is_string(json_object_get(e, "error"))) continue;
        char *pk = tl_safe_dup(json_string_value(json_object_get(e, "problem_key")));
        char *msg = tl_safe_dup(json_string_value(json_object_get(e, "error")));
        fprintf(f, "error: %s: %s\n", pk ? pk : "?", msg ? msg : "?");
        free(pk);
        free(msg);
    }
}

/* Entries from the --measured file, defaults filled from the flags. */
static int tl_measured_entries(const tl_ctx *c, const tl_cmd *cmd, const tl_args *a,
                               json_t *problems, json_t **out)
{
    json_t *inputless = NULL;   /* [{}] once looked up, for entries without a problem */
    size_t len = 0;
    char *text = tl_read_file(tl_arg(cmd, a, "measured"), &len);
    if (!text) return TL_EXIT_USAGE;
    json_error_t je;
    /* a key given twice is refused, as the server refuses such a body: keeping one of two
     * sample arrays would judge samples the CI job did not mean alone */
    json_t *doc = tt_json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!doc) {
        fprintf(stderr, "tlctl check: %s:%d:%d: %s\n", tl_arg(cmd, a, "measured"), je.line,
                je.column, je.text);
        return TL_EXIT_USAGE;
    }
    json_t *arr = json_is_array(doc) ? json_incref(doc)
                  : json_is_array(json_object_get(doc, "entries"))
                      ? json_incref(json_object_get(doc, "entries"))
                      : json_pack("[O]", doc);
    json_decref(doc);
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        if (!json_is_object(e)) {
            fprintf(stderr, "tlctl check: %s: entry %zu is not an object\n",
                    tl_arg(cmd, a, "measured"), i);
            json_decref(arr);
            return TL_EXIT_USAGE;
        }
        if (!json_object_get(e, "template"))
            json_object_set_new(e, "template", json_string(tl_arg(cmd, a, "template")));
        if (!json_object_get(e, "target"))
            json_object_set_new(e, "target", json_string(tl_arg(cmd, a, "target")));
        if (!json_object_get(e, "problem")) {
            int rc = 0;
            if (!json_array_size(problems) && !inputless && !tl_arg(cmd, a, "problem"))
                rc = tl_problems_inputless(c, cmd, tl_arg(cmd, a, "template"), &inputless);
            const json_t *ps = json_array_size(problems) ? problems : inputless;
            if (!rc && json_array_size(ps) != 1) {
                fprintf(stderr, "tlctl check: entry %zu of %s has no problem (give it one, or "
                        "exactly one -p)\n", i, tl_arg(cmd, a, "measured"));
                rc = TL_EXIT_USAGE;
            }
            if (!rc && json_object_set(e, "problem", json_array_get(ps, 0))) rc = tl_oom(cmd);
            if (rc) {
                json_decref(inputless);
                json_decref(arr);
                return rc;
            }
        }
    }
    json_decref(inputless);
    *out = arr;
    return 0;
}

/* tlctl check's options, validated. */
typedef struct tl_check_opts {
    const char *fmt, *base, *measured, *pin, *backend, *output;
    int remeasure, fail_missing;
    double tol;
} tl_check_opts;

static int tl_check_parse(tl_ctx *c, const tl_cmd *cmd, const tl_args *a, tl_check_opts *o)
{
    int rc;
    if ((rc = tl_required(cmd, a, "template")) || (rc = tl_required(cmd, a, "target")) ||
        (rc = tl_args_utf8(cmd, a, (const char *const[]){"measured", "output", NULL})))
        return rc;
    o->fmt = tl_arg(cmd, a, "format");
    if (!o->fmt) o->fmt = c->json ? "json" : "table";
    if (strcmp(o->fmt, "table") && strcmp(o->fmt, "json") && strcmp(o->fmt, "junit")) {
        fprintf(stderr, "tlctl check: --format must be table, json or junit, got \"%s\"\n", o->fmt);
        return TL_EXIT_USAGE;
    }
    const char *against = tl_arg(cmd, a, "against");
    o->base = tl_arg(cmd, a, "baseline");
    if (against && strcmp(against, "best")) {
        fprintf(stderr, "tlctl check: --against takes only \"best\" (use --baseline NAME)\n");
        return TL_EXIT_USAGE;
    }
    if (against && o->base) {
        fprintf(stderr, "tlctl check: give --baseline NAME or --against best, not both\n");
        return TL_EXIT_USAGE;
    }
    o->measured = tl_arg(cmd, a, "measured");
    o->pin = tl_arg(cmd, a, "pin");
    /* --pin copies the stored best rows and checks nothing: an option of the check beside it
     * (--measured: the CI's own samples are not what gets pinned) would be silently dropped */
    static const char *const no_pin[] = {"measured", "remeasure", "baseline", "against",
                                         "tolerance", "fail-on-missing", "format", "output"};
    for (size_t i = 0; o->pin && i < sizeof no_pin / sizeof no_pin[0]; i++) {
        if (tl_arg(cmd, a, no_pin[i])) {
            fprintf(stderr, "tlctl check: --pin copies the current best rows and checks nothing; "
                    "--%s is an option of the check (run it apart)\n", no_pin[i]);
            return TL_EXIT_USAGE;
        }
    }
    o->remeasure = tl_arg(cmd, a, "remeasure") != NULL;
    o->fail_missing = tl_arg(cmd, a, "fail-on-missing") != NULL;
    if (!o->pin && !!o->measured == o->remeasure) {
        fprintf(stderr, "tlctl check: give either --measured FILE or --remeasure\n");
        return TL_EXIT_USAGE;
    }
    o->tol = 0.05;
    if ((rc = tl_num_arg(cmd, a, "tolerance", 0, 10, "a fraction in 0..10 (0.05 = 5%)",
                         &o->tol)))
        return rc;
    o->backend = tl_arg(cmd, a, "backend");
    o->output = tl_arg(cmd, a, "output");
    return 0;
}

/* The request's entries: the measured file's, or one per -p PROBLEM (every problem of the
 * template when pinning without one; the empty problem of a template without inputs when
 * re-measuring without one). */
static int tl_check_entries(const tl_ctx *c, const tl_cmd *cmd, const tl_args *a,
                            const tl_check_opts *o, json_t **entries)
{
    json_t *problems = tl_problems(tl_arg(cmd, a, "problem"));
    int rc = 0;
    *entries = NULL;
    if (!problems) return tl_oom(cmd);
    if (o->measured && !o->pin) {
        rc = tl_measured_entries(c, cmd, a, problems, entries);
        json_decref(problems);
        return rc;
    }
    if (!json_array_size(problems) && !o->pin) {
        json_decref(problems);
        if ((rc = tl_problems_inputless(c, cmd, tl_arg(cmd, a, "template"), &problems))) return rc;
        if (!problems) {
            fprintf(stderr, "tlctl check: --remeasure needs at least one -p PROBLEM (template "
                    "%s has inputs without a default)\n", tl_arg(cmd, a, "template"));
            return TL_EXIT_USAGE;
        }
    }
    *entries = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(problems, i, p) {
        if (json_array_append_new(*entries, json_pack("{s:s, s:s, s:O}", "template",
                                                      tl_arg(cmd, a, "template"), "target",
                                                      tl_arg(cmd, a, "target"), "problem", p)))
            rc = 1;
    }
    if (!json_array_size(problems) &&   /* pin every problem of the template */
        json_array_append_new(*entries, json_pack("{s:s, s:s}", "template",
                                                  tl_arg(cmd, a, "template"), "target",
                                                  tl_arg(cmd, a, "target"))))
        rc = 1;
    json_decref(problems);
    if (rc) {
        json_decref(*entries);
        *entries = NULL;
        return tl_oom(cmd);
    }
    return 0;
}

/* The check's report in the chosen format (to --output or stdout); its exit code. */
static int tl_check_report(tl_ctx *c, const tl_check_opts *o, json_t *out)
{
    FILE *f = o->output ? fopen(o->output, "w") : stdout;
    if (!f) {
        fprintf(stderr, "tlctl check: cannot write %s\n", o->output);
        return TL_EXIT_USAGE;
    }
    if (!strcmp(o->fmt, "json")) {
        char *s = tt_json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s) fprintf(f, "%s\n", s);
        free(s);
    } else if (!strcmp(o->fmt, "junit")) {
        tl_check_junit(f, out, o->fail_missing);
    } else {
        tl_check_table(c, f, out);
    }
    if (o->output && fclose(f) != 0) {
        fprintf(stderr, "tlctl check: cannot write %s\n", o->output);
        return TL_EXIT_USAGE;
    }
    if (json_is_false(json_object_get(out, "baseline_pinned"))) {
        char nb[256];
        fprintf(stderr, "tlctl check: no baseline is pinned as \"%s\" on this server, so every "
                "entry is missing (a misspelt name? pin one with --pin NAME)\n",
                tl_safe(json_string_value(json_object_get(out, "baseline")), nb, sizeof nb));
    }
    const char *v = json_string_value(json_object_get(out, "verdict"));
    int rc = v && !strcmp(v, "pass") ? 0 : TL_EXIT_REGRESSED;
    const json_t *cnt = json_object_get(out, "counts");
    if (rc && o->output)
        fprintf(stderr, "tlctl check: failed: %lld regressed, %lld error, %lld missing%s (report "
                "in %s)\n", (long long)json_integer_value(json_object_get(cnt, "regressed")),
                (long long)json_integer_value(json_object_get(cnt, "error")),
                (long long)json_integer_value(json_object_get(cnt, "missing")),
                o->fail_missing ? " (--fail-on-missing)" : "", o->output);
    return rc;
}

int tl_cmd_check(tl_ctx *c, const tl_cmd *cmd, const tl_args *given)
{
    tl_check_opts o;
    json_t *entries = NULL, *out = NULL;
    tl_args named, *a = &named;
    char name[256];
    int rc = tl_template_named(cmd, given, &named, name, sizeof name);
    if (rc) return rc;
    rc = tl_check_parse(c, cmd, a, &o);
    if (!rc) rc = tl_check_entries(c, cmd, a, &o, &entries);
    if (rc) return rc;
    json_t *body = json_pack("{s:o}", "entries", entries);
    if (!body || (o.backend && json_object_set_new(body, "backend", json_string(o.backend)))) {
        json_decref(body);
        return tl_oom(cmd);
    }
    if (o.pin) {
        if (json_object_set_new(body, "pin", json_string(o.pin))) {
            json_decref(body);
            return tl_oom(cmd);
        }
        if ((rc = tl_call(c, "POST", "/v1/check", body, &out))) return rc;
        if (c->json) tl_print_json(out);
        else printf("pinned %lld best config(s) as baseline \"%s\"\n",
                    (long long)json_integer_value(json_object_get(out, "pinned")), o.pin);
        json_decref(out);
        return 0;
    }
    if (json_object_set_new(body, "baseline", json_string(o.base ? o.base : "best")) ||
        json_object_set_new(body, "tolerance", json_real(o.tol)) ||
        (o.remeasure && json_object_set_new(body, "remeasure", json_true())) ||
        (o.fail_missing &&
         json_object_set_new(body, "fail_on_missing", json_true()))) {
        json_decref(body);
        return tl_oom(cmd);
    }
    if ((rc = tl_call(c, "POST", "/v1/check", body, &out))) return rc;
    rc = tl_check_report(c, &o, out);
    json_decref(out);
    return rc;
}

int tl_cmd_export(tl_ctx *c, const tl_cmd *cmd, const tl_args *given)
{
    int rc;
    tl_args named, *a = &named;
    char name[256];
    if ((rc = tl_template_named(cmd, given, &named, name, sizeof name))) return rc;
    if ((rc = tl_required(cmd, a, "template")) || (rc = tl_required(cmd, a, "target"))) return rc;
    char path[2048] = "/v1/export";
    static const char *const keys[] = {"template", "target", "format", "backend", "problem", "job"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (tl_arg(cmd, a, keys[i])) tl_query_add(path, sizeof path, keys[i], tl_arg(cmd, a, keys[i]));
    if (!tl_arg(cmd, a, "format") && c->json) tl_query_add(path, sizeof path, "format", "json");
    tl_resp r;
    if ((rc = tl_http(c, "GET", path, NULL, NULL, 0, &r))) return rc;
    if (r.status != 200) {
        rc = tl_resp_fail(&r);
    } else if (tl_arg(cmd, a, "output")) {
        rc = tl_write_file(tl_arg(cmd, a, "output"), r.body, r.len);
    } else {
        fwrite(r.body, 1, r.len, stdout);
    }
    tl_resp_free(&r);
    return rc;
}

int tl_cmd_import(tl_ctx *c, const tl_cmd *cmd, const tl_args *a)
{
    size_t len = 0;
    char *data = tl_read_file(a->pos[0], &len);
    if (!data) return TL_EXIT_USAGE;
    char path[2048] = "/v1/import";
    static const char *const keys[] = {"format", "template", "target", "problem"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (tl_arg(cmd, a, keys[i])) tl_query_add(path, sizeof path, keys[i], tl_arg(cmd, a, keys[i]));
    const char *base = strrchr(a->pos[0], '/');
    tl_query_add(path, sizeof path, "file", base ? base + 1 : a->pos[0]);
    tl_resp r;
    int rc = tl_http(c, "POST", path, "application/octet-stream", data, len, &r);
    free(data);
    if (rc) return rc;
    if (r.status < 200 || r.status >= 300) {
        rc = tl_resp_fail(&r);
    } else if (c->json) {
        tl_print_json(r.json);
    } else {
        const json_t *j = r.json;
        const char *kind = json_string_value(json_object_get(j, "kind"));
        char tp[256], tg[256], s3[256];   /* server text made safe (tl_safe) */
        tl_safe(json_string_value(json_object_get(j, "template")), tp, sizeof tp);
        if (kind && !strcmp(kind, "template"))
            printf("template %s (hash %s): %lld added, %lld skipped, %lld rejected\n", tp,
                   tl_safe(json_string_value(json_object_get(j, "hash")), s3, sizeof s3),
                   (long long)json_integer_value(json_object_get(j, "added")),
                   (long long)json_integer_value(json_object_get(j, "skipped")),
                   (long long)json_integer_value(json_object_get(j, "rejected")));
        else {
            char job[32], fm[64];
            printf("%s: %lld records for %s on %s: %lld added, %lld skipped, %lld rejected "
                   "(job %s, measured_by %s)\n",
                   tl_safe(json_string_value(json_object_get(j, "format")), fm, sizeof fm),
                   (long long)json_integer_value(json_object_get(j, "records")), tp,
                   tl_safe(json_string_value(json_object_get(j, "target")), tg, sizeof tg),
                   (long long)json_integer_value(json_object_get(j, "added")),
                   (long long)json_integer_value(json_object_get(j, "skipped")),
                   (long long)json_integer_value(json_object_get(j, "rejected")),
                   tl_jstr(json_object_get(j, "job"), job, sizeof job),
                   tl_safe(json_string_value(json_object_get(j, "measured_by")), s3, sizeof s3));
        }
    }
    tl_resp_free(&r);
    return rc;
}

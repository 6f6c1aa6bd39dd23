/* SPDX-License-Identifier: MIT
 * test_render.c - source rendering: placeholders of inputs, params, lets, dtypes and the JSON
 * forms; text that is not a placeholder; unknown placeholders; the JSON helpers; the
 * source.file text in the template hash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "template.h"
#include "tt_test.h"

static tt_template *g_t;
static int64_t g_slots[TT_MAX_SLOTS];

static int setup(void)
{
    char *path = tt_test_src("tests/data/templates-cmd/fake_vec.json");
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_tmpl_parse_file(path, &g_t, &e);
    free(path);
    if (rc != TT_OK) return 1;
    if (tt_tmpl_problem_parse(g_t, "N=1000,dtype=float32", g_slots, &e) != TT_OK) return 1;
    if (tt_tmpl_config_parse(g_t, "BLOCK=64,MODE=0", g_slots, &e) != TT_OK) return 1;
    return tt_tmpl_eval_lets(g_t, g_slots, &e) == TT_OK ? 0 : 1;
}

static int teardown(void)
{
    tt_tmpl_free(g_t);
    return 0;
}

static const struct {
    const char *src, *want;
} ok_cases[] = {
    {"", ""},
    {"no placeholders at all\n", "no placeholders at all\n"},
    {"{{BLOCK}}", "64"},
    {"b={{ BLOCK }};m={{\tMODE\t}}", "b=64;m=0"},
    {"{{N}}/{{BLOCK}}={{tiles}}", "1000/64=16"},
    {"dtype={{dtype}}", "dtype=float32"},
    {"{{config_json}}", "{\"BLOCK\":64,\"MODE\":0}"},
    {"{{problem_json}}", "{\"N\":1000,\"dtype\":\"float32\"}"},
    {"a{b}{{ 1 }}{{}}{ {x} }{{", "a{b}{{ 1 }}{{}}{ {x} }{{"},
    {"{{BLOCK", "{{BLOCK"},
    {"{{BLOCK}", "{{BLOCK}"},
    {"{{{BLOCK}}}", "{64}"},
    {"x{{BLOCK}}{{BLOCK}}y", "x6464y"},
};

static void test_ok_table(void)
{
    for (size_t i = 0; i < sizeof ok_cases / sizeof ok_cases[0]; i++) {
        char *out = NULL;
        size_t len = 99;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_render(g_t, g_slots, ok_cases[i].src, strlen(ok_cases[i].src), &out, &len, &e);
        CU_ASSERT_EQUAL(rc, TT_OK);
        CU_ASSERT_PTR_NOT_NULL(out);
        if (out) {
            CU_ASSERT_STRING_EQUAL(out, ok_cases[i].want);
            CU_ASSERT_EQUAL(len, strlen(ok_cases[i].want));
        }
        free(out);
    }
}

static const struct {
    const char *src, *name_in_msg, *line_in_msg;
} bad_cases[] = {
    {"{{unroll}}", "{{unroll}}", "line 1"},
    {"ok\nok {{BLOCK}}\n{{ blockm }}", "{{blockm}}", "line 3"},
    {"{{config}}", "{{config}}", "line 1"},
};

static void test_unknown_placeholder(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        char *out = (char *)1;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_render(g_t, g_slots, bad_cases[i].src, strlen(bad_cases[i].src), &out, NULL, &e);
        CU_ASSERT_EQUAL(rc, TT_ETEMPLATE);
        CU_ASSERT_PTR_NULL(out);
        CU_ASSERT_STRING_EQUAL(e.path, "source");
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, bad_cases[i].name_in_msg));
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, bad_cases[i].line_in_msg));
    }
    char *out = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_render(g_t, g_slots, NULL, 0, &out, NULL, &e), TT_ETEMPLATE);
    CU_ASSERT_PTR_NULL(out);
}

/* The template's own source file, rendered whole. */
static void test_source_file(void)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(g_t->source_text);
    CU_ASSERT_STRING_EQUAL(g_t->source_file, "kernel.py.in");
    char *out = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL_FATAL(tt_render(g_t, g_slots, g_t->source_text, strlen(g_t->source_text), &out,
                                    NULL, &e), TT_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "# problem: {\"N\":1000,\"dtype\":\"float32\"}\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "# config:  {\"BLOCK\":64,\"MODE\":0}\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nN = 1000\nDTYPE = \"float32\"\nBLOCK = 64\nMODE = 0\nTILES = 16\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "f\"{{ 1 }}\" and {{}}."));
    free(out);

    /* a template whose source names something undeclared is refused at load (it used to
     * load, and every trial of a cmd: backend then failed on the render) */
    char *path = tt_test_src("tests/data/templates-cmd/bad/bad_placeholder.json");
    tt_template *bad = NULL;
    CU_ASSERT_EQUAL(tt_tmpl_parse_file(path, &bad, &e), TT_ETEMPLATE);
    CU_ASSERT_PTR_NULL(bad);
    free(path);
    CU_ASSERT_STRING_EQUAL(e.path, "source.file");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "unknown placeholder {{unroll}} at line 3 of bad.py.in"));

    /* tt_render_check: names only, no values (this template has no kernel: bx is unknown) */
    const char *src = "a {{N}} {{ MODE }} {{tiles}} {{config_json}}\n{{bx}}";
    CU_ASSERT_EQUAL(tt_render_check(g_t, src, strlen(src) - 7, "p", NULL, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_render_check(g_t, NULL, 0, "p", NULL, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_render_check(g_t, src, strlen(src), "p", "k.py.in", &e), TT_ETEMPLATE);
    CU_ASSERT_STRING_EQUAL(e.path, "p");
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "unknown placeholder {{bx}} at line 2 of k.py.in (not"));
}

/* Write text to dir/name. */
static void put_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* The hash covers the source.file text: the same document beside an edited .py.in is another
 * version (its cmd: measurements are not the old kernel's); beside the same text, the same
 * hash; read without its directory (no text), the document alone is hashed. */
static void test_source_in_hash(void)
{
    char *path = tt_test_src("tests/data/templates-cmd/fake_vec.json");
    char *doc = tt_test_read_file(path, NULL);
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    char *same = tt_test_tmpdir("tt-hash-a"), *edited = tt_test_tmpdir("tt-hash-b");
    char *text = malloc(strlen(g_t->source_text) + 32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    put_file(same, "kernel.py.in", g_t->source_text);
    sprintf(text, "%s# edited\n", g_t->source_text);
    put_file(edited, "kernel.py.in", text);
    const char *dirs[] = {same, edited, NULL};
    char hash[3][17];
    for (int i = 0; i < 3; i++) {
        tt_template *t = NULL;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_string(doc, strlen(doc), dirs[i], &t, &e), TT_OK);
        memcpy(hash[i], t->hash, sizeof hash[i]);
        tt_tmpl_free(t);
    }
    CU_ASSERT_STRING_EQUAL(hash[0], g_t->hash);
    CU_ASSERT_STRING_NOT_EQUAL(hash[1], hash[0]);
    CU_ASSERT_STRING_NOT_EQUAL(hash[2], hash[0]);
    tt_test_rmrf(same);
    tt_test_rmrf(edited);
    free(same);
    free(edited);
    free(text);
    free(doc);
}

static void test_json_helpers(void)
{
    char buf[8];
    size_t n = tt_render_config_json(g_t, g_slots, buf, sizeof buf);
    CU_ASSERT_EQUAL(n, strlen("{\"BLOCK\":64,\"MODE\":0}"));
    CU_ASSERT_STRING_EQUAL(buf, "{\"BLOCK");   /* truncated like snprintf */
    CU_ASSERT_EQUAL(tt_render_problem_json(g_t, g_slots, NULL, 0),
                    strlen("{\"N\":1000,\"dtype\":\"float32\"}"));
    char big[128];
    tt_render_problem_json(g_t, g_slots, big, sizeof big);
    CU_ASSERT_STRING_EQUAL(big, "{\"N\":1000,\"dtype\":\"float32\"}");
    int64_t s2[TT_MAX_SLOTS];
    memcpy(s2, g_slots, sizeof s2);
    s2[1] = TT_DT_FLOAT16;
    s2[tt_tmpl_param_slot(g_t, 0)] = 128;
    tt_render_problem_json(g_t, s2, big, sizeof big);
    CU_ASSERT_STRING_EQUAL(big, "{\"N\":1000,\"dtype\":\"float16\"}");
    tt_render_config_json(g_t, s2, big, sizeof big);
    CU_ASSERT_STRING_EQUAL(big, "{\"BLOCK\":128,\"MODE\":0}");
}

static const tt_test_case cases[] = {
    {"ok_table", test_ok_table},
    {"unknown_placeholder", test_unknown_placeholder},
    {"source_file", test_source_file},
    {"source_in_hash", test_source_in_hash},
    {"json_helpers", test_json_helpers},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"render", setup, teardown, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

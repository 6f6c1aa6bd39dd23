/* SPDX-License-Identifier: MIT
 * test_t1.c - T1 search-space import: the convolution T1 file becomes a template that the
 * parser accepts and whose space has exactly the configs the T1 conditions allow; malformed
 * T1 documents are rejected with the path of the offender (tests/data/t1/bad.json); the
 * Python list expressions of "Values" evaluate as Python evaluates them (a table, expected
 * values from python3), and a T1 file written in those forms, with chained comparisons and
 * `not`/`and`/`or` conditions and a true division (tests/data/t1/forms.json), has the
 * feasible configs Python's eval of its conditions admits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space.h"
#include "t1.h"
#include "template.h"
#include "tt_test.h"

/* The template document of the T1 file at path (freed here), named name (NULL: its own). */
static json_t *load_t1(char *path, const char *name)
{
    json_t *doc = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_t1_file_to_template(path, name, &doc, &e);
    free(path);
    CU_ASSERT_EQUAL(rc, TT_OK);
    if (rc != TT_OK) fprintf(stderr, "t1: %s: %s\n", e.path, e.msg);
    return doc;
}

static json_t *load_conv(const char *name)
{
    return load_t1(tt_test_shared("datasets/convolution.t1.json"), name);
}

static void test_convolution_doc(void)
{
    json_t *doc = load_conv(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "name")), "convolution_milo");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(doc, "tiletune")), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(json_object_get(doc, "description")), "T1"));
    CU_ASSERT_PTR_NULL(json_object_get(doc, "kernel"));
    const json_t *params = json_object_get(doc, "params");
    CU_ASSERT_EQUAL(json_object_size(params), 10);
    const json_t *bx = json_object_get(params, "block_size_x");
    CU_ASSERT_EQUAL(json_array_size(bx), 16);
    CU_ASSERT_EQUAL(json_integer_value(json_array_get(bx, 0)), 16);
    CU_ASSERT_EQUAL(json_integer_value(json_array_get(bx, 15)), 256);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(params, "use_cmem")), 1);
    /* declared order is kept: the first param is block_size_x, the last filter_width */
    void *it = json_object_iter((json_t *)params);
    CU_ASSERT_STRING_EQUAL(json_object_iter_key(it), "block_size_x");
    const json_t *cons = json_object_get(doc, "constraints");
    CU_ASSERT_EQUAL(json_array_size(cons), 4);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(cons, 1)), "block_size_x*block_size_y<=1024");
    json_decref(doc);

    doc = load_conv("conv_a100");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "name")), "conv_a100");
    json_decref(doc);
}

static int count_visit(void *ud, const int64_t *slots)
{
    (void)slots;
    (*(uint64_t *)ud)++;
    return 0;
}

/* The template of an imported document (consumed), or NULL with the reason printed. */
static tt_template *parse_doc(json_t *doc)
{
    tt_template *t = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = doc ? tt_tmpl_parse_json(doc, NULL, &t, &e) : TT_EINVAL;
    json_decref(doc);
    if (rc != TT_OK) fprintf(stderr, "parse: %s: %s\n", e.path, e.msg);
    CU_ASSERT_EQUAL(rc, TT_OK);
    return t;
}

/* Enumerate t's space (kept in *s for more checks): *n configs visited, the counts. */
static tt_space_counts count_space(const tt_template *t, tt_space **s, uint64_t *n)
{
    static int64_t slots[TT_MAX_SLOTS];
    tt_space_counts c;
    memset(&c, 0, sizeof c);
    tt_errinfo e;
    *s = NULL;
    *n = 0;
    CU_ASSERT_EQUAL(tt_space_new(t, slots, NULL, s, &e), TT_OK);
    if (*s) CU_ASSERT_EQUAL(tt_space_enumerate(*s, count_visit, n, 0, &c), TT_OK);
    return c;
}

/* The template parser accepts the import and its space is what the T1 conditions allow:
 * 4362 of the 10240 configs of the product (checked independently with Python's eval of the
 * same expressions over the product; test_backend_replay checks they are exactly the
 * dataset's configs). */
static void test_convolution_space(void)
{
    tt_template *t = parse_doc(load_conv(NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nparams, 10);
    CU_ASSERT_EQUAL(t->ninputs, 0);
    CU_ASSERT_EQUAL(t->nconstraints, 4);
    CU_ASSERT_PTR_NULL(t->kernel);
    tt_space *s = NULL;
    uint64_t n = 0;
    tt_space_counts c = count_space(t, &s, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(n, 4362);
    CU_ASSERT_EQUAL(c.feasible, 4362);
    CU_ASSERT_EQUAL(c.total, 10240);
    CU_ASSERT_EQUAL(c.complete, 1);
    /* one config the conditions reject: use_padding=1 with block_size_x % 32 == 0 */
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_tmpl_config_parse(t, "block_size_x=32,block_size_y=1,tile_size_x=1,"
                                            "tile_size_y=1,read_only=0,use_padding=1,use_shmem=1,"
                                            "use_cmem=1,filter_height=15,filter_width=15",
                                         slots, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_space_check(s, slots, &e), TT_EINFEASIBLE);
    slots[tt_tmpl_param_slot(t, 0)] = 48;
    CU_ASSERT_EQUAL(tt_space_check(s, slots, &e), TT_OK);
    tt_space_free(s);
    tt_tmpl_free(t);
}

static void test_bad_table(void)
{
    json_t *cases = tt_test_load_json("tests/data/t1/bad.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cases);
    CU_ASSERT(json_array_size(cases) >= 15);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *why = json_string_value(json_object_get(c, "why"));
        tt_rc want = tt_rc_from_code(json_string_value(json_object_get(c, "rc")));
        const char *wpath = json_string_value(json_object_get(c, "path"));
        json_t *out = (json_t *)1;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_t1_to_template(json_object_get(c, "doc"), NULL, &out, &e);
        CU_ASSERT_EQUAL(rc, want);
        CU_ASSERT_PTR_NULL(out);
        CU_ASSERT_STRING_EQUAL(e.path, wpath);
        CU_ASSERT(rc == TT_OK || e.msg[0] != '\0');
        for (const char *m = e.msg; *m; m++) CU_ASSERT((unsigned char)*m >= 0x20);  /* one line */
        const char *wmsg = json_string_value(json_object_get(c, "msg"));   /* optional */
        if (wmsg) CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, wmsg));
        if (rc != want || strcmp(e.path, wpath) != 0)
            fprintf(stderr, "case %zu (%s): got %s at '%s': %s\n", i, why, tt_rc_code(rc), e.path,
                    e.msg);
    }
    json_decref(cases);
}

/* One param of type `type` with Values `values` (JSON text) imports as the array `want`. */
static void values_row(const char *type, const char *values, const char *want)
{
    char doc[512];
    snprintf(doc, sizeof doc, "{\"General\": {\"BenchmarkName\": \"v\"}, "
             "\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", "
             "\"Type\": \"%s\", \"Values\": %s}]}}", type, values);
    json_t *in = json_loads(doc, 0, NULL), *out = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_t1_to_template(in, NULL, &out, &e);
    char *got = rc ? NULL : json_dumps(json_object_get(json_object_get(out, "params"), "a"),
                                       JSON_COMPACT);
    CU_ASSERT_EQUAL(rc, TT_OK);
    CU_ASSERT(got && strcmp(got, want) == 0);
    if (rc || !got || strcmp(got, want))
        fprintf(stderr, "%s %s: %s %s, want %s\n", type, values, tt_rc_code(rc),
                got ? got : e.msg, want);
    free(got);
    json_decref(out);
    json_decref(in);
}

/* "Values" strings and what python3 -c 'print(list(eval(V)))' prints (duplicates kept once);
 * Type "bool": Python's True/False (or JSON true/false, or 1/0) become 1/0, as the
 * recordings store booleans. */
static void test_values_table(void)
{
    static const struct {
        const char *type, *values, *want;
    } rows[] = {
        {"int", "\"[16, 32]\"", "[16,32]"},
        {"int", "\"[1, 2, 4] + list(range(32, 128+1, 32))\"", "[1,2,4,32,64,96,128]"},
        {"int", "\"[2**i for i in range(0, 6)]\"", "[1,2,4,8,16,32]"},
        {"int", "\"[i for i in range(1, 5)]\"", "[1,2,3,4]"},
        {"int", "\"range(3)\"", "[0,1,2]"},
        {"int", "\"range(10, 0, -3)\"", "[10,7,4,1]"},
        {"int", "\"list(range(-2, 3, 2))\"", "[-2,0,2]"},
        {"int", "\"[i * i for i in [1, 2, 3] if i != 2]\"", "[1,9]"},
        {"int", "\"[u for u in range(1, 9) if 8 % u == 0]\"", "[1,2,4,8]"},
        {"int", "\"[1, 2,] + [2, 3] + list(range(4, 5))\"", "[1,2,3,4]"},
        {"int", "\"[ 0x10 , 0b11, True ]\"", "[16,3,1]"},
        {"int", "\"[max(1, k // 2) for k in range(4)]\"", "[1]"},
        {"int", "\"list(range(0)) + [7]\"", "[7]"},
        {"int", "[4, 2, 4]", "[4,2]"},
        {"bool", "\"[True, False]\"", "[1,0]"},
        {"bool", "[false, true, 1]", "[0,1]"},
        {"bool", "\"[0, 1]\"", "[0,1]"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        values_row(rows[i].type, rows[i].values, rows[i].want);
}

/* tests/data/t1/forms.json: 20 x 5 x 6 x 4 x 4 x 2 = 19200 configs, of which 2095 pass its
 * five conditions (python3: itertools.product of the evaluated Values, eval of each
 * Expression).  Its last condition divides with `/`: read as floor division it would admit
 * 2038. */
static void test_forms_space(void)
{
    tt_template *t = parse_doc(load_t1(tt_test_src("tests/data/t1/forms.json"), NULL));
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tt_space *s = NULL;
    uint64_t n = 0;
    tt_space_counts c = count_space(t, &s, &n);
    CU_ASSERT_EQUAL(c.total, 19200);
    CU_ASSERT_EQUAL(n, 2095);
    CU_ASSERT_EQUAL(c.feasible, 2095);
    tt_space_free(s);
    tt_tmpl_free(t);
}

static void test_files(void)
{
    json_t *out = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_t1_file_to_template("/nonexistent/t1.json", NULL, &out, &e), TT_EIO);
    char *dir = tt_test_tmpdir("tt-t1");
    char p[512];
    snprintf(p, sizeof p, "%s/bad.json", dir);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"General\": {\"BenchmarkName\": ", f);
    fclose(f);
    CU_ASSERT_EQUAL(tt_t1_file_to_template(p, NULL, &out, &e), TT_EJSON);
    CU_ASSERT_PTR_NULL(out);
    /* a JSON-array Values form and a verbatim condition that the template parser rejects */
    f = fopen(p, "w");
    fputs("{\"General\": {\"BenchmarkName\": \"arr\"}, \"ConfigurationSpace\": {"
          "\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"int\", \"Values\": [1, 2, 4]}],"
          "\"Conditions\": [{\"Expression\": \"a // 0 == 1 +\"}]}}", f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(tt_t1_file_to_template(p, NULL, &out, &e), TT_OK);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(json_object_get(out, "params"), "a")), 3);
    tt_template *t = NULL;
    CU_ASSERT_EQUAL(tt_tmpl_parse_json(out, NULL, &t, &e), TT_EEXPR);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.path, "constraints[0]"));
    json_decref(out);
    tt_test_rmrf(dir);
    free(dir);
}

static const tt_test_case cases[] = {
    {"convolution_doc", test_convolution_doc},
    {"convolution_space", test_convolution_space},
    {"bad_table", test_bad_table},
    {"values_table", test_values_table},
    {"forms_space", test_forms_space},
    {"files", test_files},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"t1", NULL, NULL, cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_template_hostile.c - template parser on hostile input: every truncated prefix and
 * flipped byte of gemm.json, wrong types at every node, huge, deep and binary documents
 * (invalid UTF-8, an embedded NUL), a missing file and NULL input.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "render.h"
#include "template.h"
#include "tt_test.h"

/* ---- hostile input --------------------------------------------------------------------------- */

static void test_truncated_prefixes(void)
{
    size_t len;
    char *p = tt_test_src("templates/gemm.json");
    char *text = tt_test_read_file(p, &len);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    size_t failed = 0;
    for (size_t n = 0; n < len; n++) {
        tt_template *t = NULL;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_parse_string(text, n, NULL, &t, &e);
        /* a prefix is either malformed JSON, or (cut in trailing whitespace) the template */
        if (rc != TT_OK) {
            failed++;
            CU_ASSERT(rc == TT_EJSON && t == NULL && strstr(e.msg, "line ") == e.msg);
        }
        tt_tmpl_free(t);
    }
    CU_ASSERT(failed >= len - 2);
    free(text);
}

/* Random byte flips of a template text: whatever the parser says, it says it cleanly. */
static void test_byte_flips(void)
{
    size_t len;
    char *p = tt_test_src("templates/flash_attn_fwd.json");
    char *text = tt_test_read_file(p, &len);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *m = malloc(len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    static const char pool[] = "{}[]\",:0123456789-+*/ abxyz_.\\\xff\x80";
    uint64_t x = 42;
    size_t errors = 0;
    for (int i = 0; i < 3000; i++) {
        memcpy(m, text, len);
        for (int f = 0; f < 1 + i % 4; f++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            m[(x >> 33) % len] = pool[(x >> 17) % (sizeof pool - 1)];
        }
        tt_template *t = NULL;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_parse_string(m, len, NULL, &t, &e);
        CU_ASSERT(rc == TT_OK || rc == TT_EJSON || rc == TT_ETEMPLATE || rc == TT_EEXPR);
        CU_ASSERT((rc == TT_OK) == (t != NULL));
        CU_ASSERT(rc == TT_OK || e.rc == rc);
        errors += rc != TT_OK;
        tt_tmpl_free(t);
    }
    CU_ASSERT(errors > 1500);
    free(m);
    free(text);
}

/* Replace every value of the document in turn by values of every other type: the parser
 * must answer with an error that names a path (or accept), never crash or leak. */
static size_t mutate_walk(json_t *root, json_t *node, size_t *accepted)
{
    static const char *const repl[] = {"true", "1.5", "\"x\"", "[]", "{}", "null", "-1",
                                       "[[[[1]]]]", "\"gm:\""};
    size_t n = 0;
    const char *k;
    json_t *v;
    void *tmp;
    if (json_is_object(node)) {
        json_object_foreach_safe(node, tmp, k, v) {
            json_incref(v);
            for (size_t r = 0; r < sizeof repl / sizeof repl[0]; r++) {
                json_object_set_new(node, k, json_loads(repl[r], JSON_DECODE_ANY, NULL));
                tt_template *t = NULL;
                tt_errinfo e;
                tt_errinfo_clear(&e);
                tt_rc rc = tt_tmpl_parse_json(root, NULL, &t, &e);
                CU_ASSERT(rc == TT_OK || rc == TT_ETEMPLATE || rc == TT_EEXPR);
                CU_ASSERT(rc == TT_OK || e.msg[0] != '\0');
                *accepted += rc == TT_OK;
                tt_tmpl_free(t);
                n++;
            }
            json_object_set_new(node, k, v);
            n += mutate_walk(root, v, accepted);
        }
    } else if (json_is_array(node)) {
        for (size_t i = 0; i < json_array_size(node); i++) {
            v = json_incref(json_array_get(node, i));
            for (size_t r = 0; r < sizeof repl / sizeof repl[0]; r++) {
                json_array_set_new(node, i, json_loads(repl[r], JSON_DECODE_ANY, NULL));
                tt_template *t = NULL;
                tt_errinfo e;
                tt_errinfo_clear(&e);
                tt_rc rc = tt_tmpl_parse_json(root, NULL, &t, &e);
                CU_ASSERT(rc == TT_OK || rc == TT_ETEMPLATE || rc == TT_EEXPR);
                *accepted += rc == TT_OK;
                tt_tmpl_free(t);
                n++;
            }
            json_array_set_new(node, i, v);
            n += mutate_walk(root, v, accepted);
        }
    }
    return n;
}

static void test_wrong_types_everywhere(void)
{
    char *p = tt_test_src("templates/flash_attn_fwd.json");
    json_t *doc = json_load_file(p, 0, NULL);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    size_t accepted = 0, n = mutate_walk(doc, doc, &accepted);
    CU_ASSERT(n > 1000);
    CU_ASSERT(accepted < n / 4);    /* most mutations must be rejected */
    /* the document is restored: it still parses */
    tt_template *t = NULL;
    CU_ASSERT_EQUAL(tt_tmpl_parse_json(doc, NULL, &t, NULL), TT_OK);
    tt_tmpl_free(t);
    json_decref(doc);
}

static void test_huge_deep_binary(void)
{
    tt_template *t = NULL;
    tt_errinfo e;
    /* 10 MB: refused before parsing */
    size_t big = 10u << 20;
    char *s = malloc(big + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    memset(s, ' ', big);
    s[big] = '\0';
    s[0] = '{';
    s[big - 1] = '}';
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(s, big, NULL, &t, &e), TT_ETOOBIG);
    CU_ASSERT_PTR_NULL(t);
    /* 3 MB description: accepted */
    size_t mid = 3u << 20;
    const char *head = "{\"tiletune\":1,\"name\":\"big\",\"description\":\"";
    memcpy(s, head, strlen(head));
    memset(s + strlen(head), 'x', mid);
    strcpy(s + strlen(head) + mid, "\"}");
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(s, strlen(s), NULL, &t, &e), TT_OK);
    CU_ASSERT(t && strlen(t->description) == mid && t->kernel == NULL && t->nslots == 0);
    tt_tmpl_free(t);
    t = NULL;
    /* 200000 nested arrays: jansson's depth limit turns it into malformed JSON */
    size_t depth = 200000;
    for (size_t i = 0; i < depth; i++) s[i] = '[';
    for (size_t i = 0; i < depth; i++) s[depth + i] = ']';
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(s, 2 * depth, NULL, &t, &e), TT_EJSON);
    CU_ASSERT(strstr(e.msg, "line 1 column") != NULL);
    /* deep nesting inside a valid template value */
    strcpy(s, "{\"tiletune\":1,\"name\":\"d\",\"let\":{\"x\":");
    size_t o = strlen(s);
    for (size_t i = 0; i < 1000; i++) s[o++] = '[';
    for (size_t i = 0; i < 1000; i++) s[o++] = ']';
    strcpy(s + o, "}}");
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(s, strlen(s), NULL, &t, &e), TT_ETEMPLATE);
    CU_ASSERT_STRING_EQUAL(e.path, "let.x");
    /* invalid UTF-8 on line 2 */
    const char *bin = "{\"tiletune\":1,\n\"name\":\"\xff\xfe\"}";
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(bin, strlen(bin), NULL, &t, &e), TT_EJSON);
    CU_ASSERT(strstr(e.msg, "line 2") != NULL);
    /* embedded NUL */
    CU_ASSERT_EQUAL(tt_tmpl_parse_string("{\"name\":\"a\0b\"}", 14, NULL, &t, &e), TT_EJSON);
    CU_ASSERT_EQUAL(tt_tmpl_parse_file("/nonexistent/x.json", &t, &e), TT_EIO);
    CU_ASSERT_EQUAL(tt_tmpl_parse_json(NULL, NULL, &t, &e), TT_EINVAL);
    free(s);
}

static const tt_test_case hostile_cases[] = {
    {"truncated_prefixes", test_truncated_prefixes},
    {"wrong_types_everywhere", test_wrong_types_everywhere},
    {"byte_flips", test_byte_flips},
    {"huge_deep_binary", test_huge_deep_binary},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"template_hostile", NULL, NULL, hostile_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

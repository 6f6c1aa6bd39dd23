/* SPDX-License-Identifier: MIT
 * test_tlctl_safe.c - tl_safe (client/out.c, compiled in), the one rule by which tlctl prints
 * server text on a terminal: a table of inputs (controls, C1, bidirectional overrides, bytes
 * that are not UTF-8, sequences cut at the end) and what must come out, the result cut to a
 * small buffer only between characters, and table cells passed through it.
 */
#include <stdlib.h>
#include <string.h>

#include "../../../client/out.c"
#include "tt_test.h"

typedef struct tl_safe_case {
    const char *in, *want;
} tl_safe_case;

static const tl_safe_case tl_safe_cases[] = {
    {"plain text", "plain text"},
    {"", ""},
    {"tab\there\nnl\r", "tab\\x09here\\x0anl\\x0d"},
    {"\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"},
    {"del\x7f", "del\\x7f"},
    {"back\\slash \\x1b", "back\\slash \\x1b"},          /* kept: safe text stays the same */
    {"caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80"},
    {"c1 \xc2\x9b" "2J \xc2\x85", "c1 \\x9b2J \\x85"},    /* CSI and NEL of the C1 set */
    {"\xc2\xa0nbsp", "\xc2\xa0nbsp"},                     /* U+00A0 is not a control */
    {"bidi \xe2\x80\xae" "cba \xe2\x81\xa6", "bidi \\u202ecba \\u2066"},
    {"raw \x9b" "2J", "raw \\x9b2J"},                     /* a lone byte: not UTF-8 */
    {"over \xc0\x9b", "over \\xc0\\x9b"},                 /* overlong */
    {"sur \xed\xa0\x80", "sur \\xed\\xa0\\x80"},          /* a surrogate */
    {"big \xf4\x90\x80\x80", "big \\xf4\\x90\\x80\\x80"}, /* past U+10FFFF */
    {"cut \xe2\x80", "cut \\xe2\\x80"},                   /* a sequence cut at the end */
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof tl_safe_cases / sizeof *tl_safe_cases; i++) {
        const tl_safe_case *c = &tl_safe_cases[i];
        char buf[128];
        CU_ASSERT_STRING_EQUAL(tl_safe(c->in, buf, sizeof buf), c->want);
        char *d = tl_safe_dup(c->in);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        CU_ASSERT_STRING_EQUAL(d, c->want);
        char again[128];   /* made safe twice: the same */
        CU_ASSERT_STRING_EQUAL(tl_safe(d, again, sizeof again), c->want);
        free(d);
    }
    char buf[8];
    CU_ASSERT_STRING_EQUAL(tl_safe(NULL, buf, sizeof buf), "");
}

/* A small buffer holds whole characters and whole escapes only. */
static void test_cut(void)
{
    static const struct { const char *in; size_t cap; const char *want; } cuts[] = {
        {"abcdef", 4, "abc"},
        {"ab\x1b", 4, "ab"},                  /* "\x1b" needs 4 bytes: left out whole */
        {"a\xc3\xa9", 3, "a"},                /* not half of the e-acute */
        {"\xf0\x9f\x98\x80x", 5, "\xf0\x9f\x98\x80"},
        {"ab", 1, ""},
    };
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char buf[16];
        memset(buf, 'Z', sizeof buf);
        CU_ASSERT_STRING_EQUAL(tl_safe(cuts[i].in, buf, cuts[i].cap), cuts[i].want);
        CU_ASSERT_EQUAL(buf[cuts[i].cap], 'Z');   /* nothing written past cap */
    }
}

/* What tl_table_print writes for t without colour (malloc'd; t is freed). */
static char *table_text(tl_table *t)
{
    tl_ctx c;
    memset(&c, 0, sizeof c);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) return NULL;
    tl_table_print(&c, t, f);
    fclose(f);
    return out;
}

/* Table cells go through it (the header is tlctl's own). */
static void test_table(void)
{
    static const char *const hdr[] = {"A", "B"};
    tl_table t;
    tl_table_init(&t, 2, hdr);
    tl_table_add(&t, "x\x1b[2J", "\xc2\x9b" "y");
    char *out = table_text(&t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NULL(strchr(out, '\033'));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "x\\x1b[2J"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\\x9by"));
    free(out);
}

/* Columns on screen, not bytes: wide CJK and emoji take 2, combining marks 0, a byte that is
 * not UTF-8 1; a prefix that fits is cut between characters. */
static void test_cols(void)
{
    static const struct { const char *in; size_t cols; size_t fit; const char *pre; } cc[] = {
        {"abc", 3, 2, "ab"},
        {"caf\xc3\xa9", 4, 2, "ca"},                       /* U+00E9: 1 column, 2 bytes */
        {"\xe6\xbc\xa2\xe5\xad\x97", 4, 3, "\xe6\xbc\xa2"},   /* 2 + 2; 3 cols hold one */
        {"\xf0\x9f\x98\x80!", 3, 1, ""},                    /* emoji is 2: none fits in 1 */
        {"e\xcc\x81x", 2, 1, "e\xcc\x81"},                 /* combining acute: 0 */
        {"\x9b", 1, 1, "\x9b"},
        {"", 0, 4, ""},
    };
    for (size_t i = 0; i < sizeof cc / sizeof *cc; i++) {
        CU_ASSERT_EQUAL(tl_text_cols(cc[i].in), cc[i].cols);
        char buf[16];
        size_t w = tl_text_fit(cc[i].in, cc[i].fit, buf, sizeof buf);
        CU_ASSERT_STRING_EQUAL(buf, cc[i].pre);
        CU_ASSERT_EQUAL(w, tl_text_cols(cc[i].pre));
    }
}

/* A column of wide and accented cells lines up: the next column starts at the same screen
 * column on every row (it used to be padded by bytes, so it started 1-3 columns late). */
static void test_table_aligns(void)
{
    static const char *const hdr[] = {"NAME", "TIME"};
    tl_table t;
    tl_table_init(&t, 2, hdr);
    tl_table_add(&t, "gemm", "1");
    tl_table_add(&t, "caf\xc3\xa9", "2");
    tl_table_add(&t, "\xe7\x9f\xa9\xe9\x98\xb5", "3");   /* two wide characters */
    char *out = table_text(&t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    size_t rows = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), rows++) {
        char *last = strrchr(line, ' ');
        CU_ASSERT_PTR_NOT_NULL_FATAL(last);
        last[1] = '\0';   /* what comes before the second cell: "NAME" + 2 spaces */
        CU_ASSERT_EQUAL(tl_text_cols(line), 6);
    }
    CU_ASSERT_EQUAL(rows, 4);
    free(out);
}

static const tt_test_case cases[] = {
    {"cases", test_cases},
    {"cut", test_cut},
    {"table", test_table},
    {"cols", test_cols},
    {"table_aligns", test_table_aligns},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"tlctl_safe", NULL, NULL, cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

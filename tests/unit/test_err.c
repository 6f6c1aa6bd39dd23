/* SPDX-License-Identifier: MIT
 * test_err.c - the error table: every code has a message, an HTTP status and a unique
 * API code string that maps back to it.
 */
#include <string.h>

#include "tt_err.h"
#include "tt_test.h"

static void test_table_roundtrip(void)
{
    for (int i = 0; i < TT_RC__COUNT; i++) {
        CU_ASSERT_PTR_NOT_NULL(tt_strerror((tt_rc)i));
        int st = tt_rc_http_status((tt_rc)i);
        CU_ASSERT(st >= 200 && st < 600);
        CU_ASSERT_EQUAL(tt_rc_from_code(tt_rc_code((tt_rc)i)), (tt_rc)i);
        for (int j = 0; j < i; j++) CU_ASSERT(strcmp(tt_rc_code((tt_rc)i), tt_rc_code((tt_rc)j)) != 0);
    }
    CU_ASSERT_STRING_EQUAL(tt_strerror((tt_rc)9999), "unknown error");
    CU_ASSERT_EQUAL(tt_rc_http_status((tt_rc)-1), 500);
    CU_ASSERT_EQUAL(tt_rc_from_code("no_such_code"), TT_EINTERNAL);
    CU_ASSERT_EQUAL(tt_rc_http_status(TT_ETOOBIG), 413);
    CU_ASSERT_EQUAL(tt_rc_http_status(TT_ELIMIT), 429);
}

static void test_errf(void)
{
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(e.rc, TT_OK);
    CU_ASSERT_EQUAL(tt_errf(&e, TT_ETEMPLATE, "params.block_M[2]", "not an %s", "integer"),
                    TT_ETEMPLATE);
    CU_ASSERT_STRING_EQUAL(e.path, "params.block_M[2]");
    CU_ASSERT_STRING_EQUAL(e.msg, "not an integer");
    CU_ASSERT_EQUAL(tt_errf(NULL, TT_EIO, NULL, "x"), TT_EIO);
    /* control bytes in what a message quotes come out as \xNN (one printable line); UTF-8
     * and the rest stay as they are */
    tt_errf(&e, TT_EINVAL, "a\tb", "name \"%s\" is bad", "x\ny\x1b[31m\x7f caf\xc3\xa9");
    CU_ASSERT_STRING_EQUAL(e.path, "a\\x09b");
    CU_ASSERT_STRING_EQUAL(e.msg, "name \"x\\x0ay\\x1b[31m\\x7f caf\xc3\xa9\" is bad");
    /* a long message full of control bytes is cut, still NUL-terminated within msg */
    char many[300];
    memset(many, '\n', sizeof many - 1);
    many[sizeof many - 1] = '\0';
    tt_errf(&e, TT_EINVAL, NULL, "%s", many);
    CU_ASSERT(strlen(e.msg) < sizeof e.msg);
    CU_ASSERT(strncmp(e.msg, "\\x0a\\x0a", 8) == 0);
    CU_ASSERT_PTR_NULL(strchr(e.msg, '\n'));
    /* tt_err_quote: printable ASCII as it is, the rest and backslashes escaped, cut with ... */
    char q[64];
    CU_ASSERT_STRING_EQUAL(tt_err_quote(q, sizeof q, "a\\b\n", 4, 32), "a\\x5cb\\x0a");
    CU_ASSERT_STRING_EQUAL(tt_err_quote(q, sizeof q, "abcdef", 6, 3), "abc...");
    CU_ASSERT_STRING_EQUAL(tt_err_quote(q, 1, "abc", 3, 3), "");
}

static const tt_test_case err_cases[] = {
    {"table_roundtrip", test_table_roundtrip}, {"errf", test_errf}, {NULL, NULL}};
static const tt_test_suite suites[] = {{"err", NULL, NULL, err_cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

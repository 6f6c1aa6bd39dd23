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
}

static const tt_test_case err_cases[] = {
    {"table_roundtrip", test_table_roundtrip}, {"errf", test_errf}, {NULL, NULL}};
static const tt_test_suite suites[] = {{"err", NULL, NULL, err_cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

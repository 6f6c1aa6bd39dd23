/* SPDX-License-Identifier: MIT
 * fuzz_expr.c - libFuzzer entry point: compiles and evaluates arbitrary bytes as an expression
 * and checks the invariants of compiler/expr.h (aborts on a violation).
 *
 * Not built by CMake.  Build and run from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *         -D_GNU_SOURCE -Icompiler tests/fuzz/fuzz_expr.c compiler/expr_parse.c \
 *         compiler/expr_vm.c compiler/dtype.c compiler/err.c -o /tmp/fuzz_expr
 *   mkdir -p /tmp/expr-corpus && grep -v '^[#@]' tests/data/expr/cases.txt | cut -f1 |
 *         split -l 1 - /tmp/expr-corpus/case-
 *   /tmp/fuzz_expr -max_len=4200 -max_total_time=60 /tmp/expr-corpus
 * (the seeds are the expressions of the case table; \xNN stays literal there, which is fine.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

/* a..z are slots 0..25; a few longer names map to the same slots. */
static int resolve(void *ud, const char *name, size_t len)
{
    (void)ud;
    if (len == 1 && name[0] >= 'a' && name[0] <= 'z') return name[0] - 'a';
    static const char *const longer[] = {"block_size_x", "block_size_y", "dtype", "M", "N", "K"};
    for (size_t i = 0; i < sizeof longer / sizeof longer[0]; i++)
        if (strlen(longer[i]) == len && memcmp(longer[i], name, len) == 0) return (int)i * 5;
    return -1;
}

#define FUZZ_NAME "fuzz_expr"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *src = malloc(size + 1);
    if (!src) return 0;
    memcpy(src, data, size);
    src[size] = '\0';
    size_t len = strlen(src);

    tt_expr *e = NULL;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_expr_compile(src, resolve, NULL, &e, &err);
    if (rc != TT_OK) {
        CHECK(e == NULL);
        CHECK(rc == TT_EEXPR || rc == TT_ENOMEM);
        CHECK(err.rc == rc && err.msg[0] != '\0');
        CHECK(err.pos >= 0 && (size_t)err.pos <= len);
        for (const char *m = err.msg; *m; m++) CHECK((unsigned char)*m >= 0x20 && *m != 0x7f);
        free(src);
        return 0;
    }
    CHECK(e != NULL && len <= TT_EXPR_MAX_LEN);
    CHECK(strcmp(tt_expr_source(e), src) == 0);
    int sl[32];
    size_t ns = tt_expr_slots(e, sl, 32);
    CHECK(ns <= 26);
    for (size_t i = 0; i < ns; i++) CHECK(sl[i] >= 0 && sl[i] < 26 && (i == 0 || sl[i - 1] < sl[i]));
    CHECK(tt_expr_max_slot(e) == (ns ? sl[ns - 1] : -1));

    static const int64_t fill[] = {0, 1, -1, 2, 7, -7, 64, 4096, INT64_MAX, INT64_MIN};
    int64_t slots[26];
    for (size_t f = 0; f < sizeof fill / sizeof fill[0]; f++) {
        for (int i = 0; i < 26; i++) slots[i] = i % 3 == 0 ? fill[f] : fill[(f + (size_t)i) % 10];
        int64_t v1 = 12345, v2 = 54321;
        tt_rc r1 = tt_expr_eval(e, slots, &v1), r2 = tt_expr_eval(e, slots, &v2);
        CHECK(r1 == r2);
        CHECK(r1 == TT_OK || r1 == TT_EOVERFLOW || r1 == TT_EDIVZERO || r1 == TT_EDOMAIN);
        if (r1 == TT_OK) CHECK(v1 == v2);
        else CHECK(v1 == 12345 && v2 == 54321);
        if (ns == 0) {
            int64_t k = 0;
            CHECK(tt_expr_const(e, &k) == (r1 == TT_OK));
            if (r1 == TT_OK) CHECK(k == v1);
            break;
        }
    }
    tt_expr_free(e);
    free(src);
    return 0;
}

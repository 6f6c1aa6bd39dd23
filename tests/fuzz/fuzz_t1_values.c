/* SPDX-License-Identifier: MIT
 * fuzz_t1_values.c - libFuzzer entry point: evaluates arbitrary bytes as the "Values" string
 * of a T1 tuning parameter (compiler/t1_values.c) and checks its contract (aborts on a
 * violation): the answer is TT_OK with an array of at most 4096 distinct integers, or
 * TT_EUNSUPPORTED / TT_ENOMEM with a printable message and the given path.
 *
 * Not built by CMake.  Build and run from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *         -D_GNU_SOURCE -Icompiler tests/fuzz/fuzz_t1_values.c compiler/t1_values.c \
 *         compiler/expr_parse.c compiler/expr_vm.c compiler/dtype.c compiler/err.c \
 *         -ljansson -lm -o /tmp/fuzz_t1_values
 *   mkdir -p /tmp/t1-corpus && grep -ho '"Values": "[^"]*"' tests/data/t1/bad.json tests/data/t1/forms.json |
 *         sed 's/.*"Values": "//; s/"$//' | split -l 1 - /tmp/t1-corpus/case-
 *   /tmp/fuzz_t1_values -max_len=600 -max_total_time=60 /tmp/t1-corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t1_int.h"

#define FUZZ_NAME "fuzz_t1_values"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *src = malloc(size + 1);
    if (!src) return 0;
    memcpy(src, data, size);
    src[size] = '\0';
    json_t *out = (json_t *)1;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt__t1_values(src, "V", &out, &err);
    if (rc != TT_OK) {
        CHECK(out == NULL);
        CHECK(rc == TT_EUNSUPPORTED || rc == TT_ENOMEM);
        CHECK(err.rc == rc && err.msg[0] != '\0' && strcmp(err.path, "V") == 0);
        free(src);
        return 0;
    }
    CHECK(json_is_array(out) && json_array_size(out) <= TT_T1_MAX_VALUES);
    size_t n = json_array_size(out);
    for (size_t i = 0; i < n; i++) {
        CHECK(json_is_integer(json_array_get(out, i)));
        for (size_t j = 0; j < i; j++)
            CHECK(json_integer_value(json_array_get(out, j)) !=
                  json_integer_value(json_array_get(out, i)));
    }
    json_decref(out);
    free(src);
    return 0;
}

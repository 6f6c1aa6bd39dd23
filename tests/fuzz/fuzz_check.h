/* SPDX-License-Identifier: MIT
 * fuzz_check.h - CHECK(cond) for the libFuzzer entry points of tests/fuzz: an invariant that
 * does not hold prints itself and its line and aborts (libFuzzer keeps the input).
 * FUZZ_NAME is the entry point's name for the message.
 */
#ifndef TT_FUZZ_CHECK_H
#define TT_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s: invariant failed: %s (line %d)\n", FUZZ_NAME, #c, __LINE__);     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif

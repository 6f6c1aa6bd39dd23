/* SPDX-License-Identifier: MIT
 * fuzz_check.h - CHECK(cond) and fuzz_printable(msg) for the libFuzzer entry points of
 * tests/fuzz: an invariant that does not hold prints itself and its line and aborts
 * (libFuzzer keeps the input).
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

/* 1 when msg is a non-empty message of one printable line (tt_errf writes control bytes as
 * \xNN): what every refusal must carry. */
static inline int fuzz_printable(const char *msg)
{
    if (!msg[0]) return 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return 0;
    return 1;
}

#endif

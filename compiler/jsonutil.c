/* SPDX-License-Identifier: MIT
 * jsonutil.c - json_dumps() replacement that never returns damaged text (see jsonutil.h).
 */
#include "jsonutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Text being serialised by tt_json_dumps(); `failed` is sticky. */
typedef struct tt_dumpbuf {
    char *p;
    size_t n, cap;
    int failed;
} tt_dumpbuf;

static int tt_dump_chunk(const char *buf, size_t size, void *data)
{
    tt_dumpbuf *b = data;
    if (b->failed) return -1;
    if (size >= b->cap - b->n) {   /* room for the bytes and the NUL */
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n <= size) {
            if (cap > SIZE_MAX / 2) {
                b->failed = 1;
                return -1;
            }
            cap *= 2;
        }
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return -1;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, buf, size);
    b->n += size;
    b->p[b->n] = '\0';
    return 0;
}

char *tt_json_dumps(const json_t *j, size_t flags)
{
    if (!j) return NULL;
    tt_dumpbuf b = {0};
    if (json_dump_callback(j, tt_dump_chunk, &b, flags) != 0 || b.failed || !b.p) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

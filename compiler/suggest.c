/* SPDX-License-Identifier: MIT
 * suggest.c - the known name closest to a mistyped one (suggest.h).
 */
#include "suggest.h"

#include <stdio.h>
#include <string.h>

#define TT_SUGGEST_MAXLEN 64   /* longer words and names are never suggested (and not scored) */

/* Optimal string alignment distance of a[0..la) and b[0..lb), both <= TT_SUGGEST_MAXLEN. */
static size_t tt_osa(const char *a, size_t la, const char *b, size_t lb)
{
    size_t d[3][TT_SUGGEST_MAXLEN + 1];   /* rows i-2, i-1, i (mod 3) */
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *pp = d[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = prev[j - 1] + cost;
            if (prev[j] + 1 < v) v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
        }
    }
    return d[la % 3][lb];
}

typedef struct tt_pick {
    const char *prefix;        /* the one name the word starts */
    size_t nprefix;
    const char *near;          /* the nearest name and its distance */
    size_t dist;
} tt_pick;

static void tt_consider(tt_pick *p, const char *word, size_t len, const char *name)
{
    size_t ln = strlen(name);
    if (ln > TT_SUGGEST_MAXLEN || (ln == len && !memcmp(name, word, len))) return;
    if (ln > len && !memcmp(name, word, len) && !p->nprefix++) p->prefix = name;
    size_t dd = tt_osa(word, len, name, ln);
    if (dd < p->dist) {
        p->dist = dd;
        p->near = name;
    }
}

static const char *tt_choose(const tt_pick *p, size_t len)
{
    if (p->nprefix == 1 && len >= 3) return p->prefix;
    if (p->near && p->dist <= 2 && 2 * p->dist < len) return p->near;
    return NULL;
}

const char *tt_suggest(const char *word, size_t len, const char *const *names, size_t n)
{
    return tt_suggest_in(word, len, names, sizeof *names, n);   /* records of one name each */
}

const char *tt_suggest_in(const char *word, size_t len, const void *first, size_t stride,
                          size_t n)
{
    if (!word || !first || len == 0 || len > TT_SUGGEST_MAXLEN) return NULL;
    tt_pick p = {NULL, 0, NULL, (size_t)-1};
    for (size_t i = 0; i < n; i++) {
        const char *name;
        memcpy(&name, (const char *)first + i * stride, sizeof name);
        if (!name) break;
        tt_consider(&p, word, len, name);
    }
    return tt_choose(&p, len);
}

const char *tt_suggest_phrase(char *buf, size_t cap, const char *hint, const char *prefix)
{
    if (!cap) return buf;
    if (!hint) buf[0] = '\0';
    else if (!prefix) snprintf(buf, cap, " (did you mean \"%s\"?)", hint);
    else snprintf(buf, cap, "; did you mean %s%s?", prefix, hint);
    return buf;
}

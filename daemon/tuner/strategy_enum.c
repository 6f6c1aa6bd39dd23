/* SPDX-License-Identifier: MIT
 * strategy_enum.c - the process-wide cache of enumerated spaces: the feasible configs of a
 * space (ascending index) and their bitset, by the caller's space key (strategy.h
 * tt_strategy_config.space_key), so that a job on a space that an earlier job of the process
 * enumerated starts without enumerating it again (~0.4 ms for the 10 240-config convolution
 * space, a tenth of a whole 800-trial replay run; bench/README.md bench_job).
 *
 * Thread-safety: one mutex around the cache; entries are copied in and out, never shared.
 */
#include "strategy_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"

typedef struct tt_enum_entry {
    char *key;
    uint64_t *all;
    size_t nall;
    uint64_t *feas;           /* NULL when the space has no bitset */
    size_t nfeas;             /* words */
    uint64_t used;            /* LRU clock */
} tt_enum_entry;

static pthread_mutex_t tt_enum_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_enum_entry tt_enum_cache[TT__ENUM_CACHE_N];
static uint64_t tt_enum_clock, tt_enum_hits;
static size_t tt_enum_bytes;        /* words held by the entries, in bytes */

static size_t tt_enum_size(const tt_enum_entry *e) { return (e->nall + e->nfeas) * 8; }

static void tt_enum_entry_free(tt_enum_entry *e)
{
    if (e->key) tt_enum_bytes -= tt_enum_size(e);   /* an entry of the cache */
    free(e->key);
    free(e->all);
    free(e->feas);
    memset(e, 0, sizeof *e);
}

/* A malloc'd copy of n words (NULL when n is 0 or out of memory). */
static uint64_t *tt_words_dup(const uint64_t *v, size_t n)
{
    uint64_t *c = n ? malloc(n * sizeof *c) : NULL;
    if (c) memcpy(c, v, n * sizeof *c);
    return c;
}

int tt__st_enum_lookup(tt_strategy *st)
{
    const char *key = st->cfg.space_key;
    if (!key) return 0;
    int hit = 0;
    pthread_mutex_lock(&tt_enum_mu);
    for (size_t i = 0; i < TT__ENUM_CACHE_N && !hit; i++) {
        tt_enum_entry *e = &tt_enum_cache[i];
        if (!e->key || strcmp(e->key, key) != 0) continue;
        uint64_t *all = tt_words_dup(e->all, e->nall);
        uint64_t *feas = e->feas ? tt_words_dup(e->feas, e->nfeas) : NULL;
        if ((e->nall && !all) || (e->feas && !feas)) {   /* out of memory: enumerate */
            free(all);
            free(feas);
            break;
        }
        st->all = all;
        st->nall = e->nall;
        st->feas = feas;
        e->used = ++tt_enum_clock;
        tt_enum_hits++;
        hit = 1;
    }
    pthread_mutex_unlock(&tt_enum_mu);
    return hit;
}

/* The least recently used entry (an empty one first); NULL when key is cached already. */
static tt_enum_entry *tt_enum_victim(const char *key)
{
    tt_enum_entry *slot = NULL;
    for (size_t i = 0; i < TT__ENUM_CACHE_N; i++) {
        tt_enum_entry *c = &tt_enum_cache[i];
        if (c->key && strcmp(c->key, key) == 0) return NULL;
        if (!slot || (slot->key && (!c->key || c->used < slot->used))) slot = c;
    }
    return slot;
}

void tt__st_enum_store(const tt_strategy *st, size_t nfeas)
{
    const char *key = st->cfg.space_key;
    size_t words = st->nall + (st->feas ? nfeas : 0);
    if (!key || words * 8 > TT__ENUM_CACHE_BYTES / 4) return;   /* too big to keep */
    tt_enum_entry e = {.key = strdup(key), .all = tt_words_dup(st->all, st->nall),
                       .nall = st->nall, .feas = st->feas ? tt_words_dup(st->feas, nfeas) : NULL,
                       .nfeas = st->feas ? nfeas : 0};
    if (!e.key || (st->nall && !e.all) || (st->feas && !e.feas)) {
        free(e.key);
        free(e.all);
        free(e.feas);
        return;
    }
    pthread_mutex_lock(&tt_enum_mu);
    tt_enum_entry *slot = tt_enum_victim(key);   /* NULL: another thread stored it meanwhile */
    if (slot) {
        tt_enum_entry_free(slot);
        /* within the byte budget: drop the least recently used others */
        while (tt_enum_bytes + words * 8 > TT__ENUM_CACHE_BYTES) {
            tt_enum_entry *old = NULL;
            for (size_t i = 0; i < TT__ENUM_CACHE_N; i++)
                if (tt_enum_cache[i].key && (!old || tt_enum_cache[i].used < old->used))
                    old = &tt_enum_cache[i];
            if (!old) break;
            tt_enum_entry_free(old);
        }
        e.used = ++tt_enum_clock;
        *slot = e;
        tt_enum_bytes += tt_enum_size(slot);
    }
    pthread_mutex_unlock(&tt_enum_mu);
    if (!slot) {
        free(e.key);
        free(e.all);
        free(e.feas);
    }
}

size_t tt__st_enum_hits(void)
{
    pthread_mutex_lock(&tt_enum_mu);
    size_t n = (size_t)tt_enum_hits;
    pthread_mutex_unlock(&tt_enum_mu);
    return n;
}

char *tt_strategy_space_key(const tt_template *t, const int64_t *problem, const tt_caps *caps)
{
    /* the document without what does not shape the space (its name, version, description) */
    json_t *d = json_object();
    if (!d || json_object_update(d, t->doc)) {
        json_decref(d);
        return NULL;
    }
    json_object_del(d, "name");
    json_object_del(d, "version");
    json_object_del(d, "description");
    char *doc = tt_json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(d);
    size_t nc = caps ? sizeof *caps / sizeof(int64_t) : 0;
    size_t cap = (doc ? strlen(doc) : 0) + 24 * (t->ninputs + nc) + 32;
    char *k = doc ? malloc(cap) : NULL;
    size_t o = 0;
    if (k) {
        int64_t cw[sizeof(tt_caps) / sizeof(int64_t)];
        if (caps) memcpy(cw, caps, sizeof cw);
        o += (size_t)snprintf(k + o, cap - o, "problem");
        for (size_t i = 0; i < t->ninputs; i++)
            o += (size_t)snprintf(k + o, cap - o, " %lld", (long long)problem[i]);
        o += (size_t)snprintf(k + o, cap - o, "\ncaps%s", caps ? "" : " none");
        for (size_t i = 0; i < nc; i++) o += (size_t)snprintf(k + o, cap - o, " %lld", (long long)cw[i]);
        snprintf(k + o, cap - o, "\n%s", doc);
    }
    free(doc);
    return k;
}

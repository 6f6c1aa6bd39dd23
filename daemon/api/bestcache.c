/* SPDX-License-Identifier: MIT
 * bestcache.c - read-through cache of exact-shape GET /v1/best answers, valid per store stamp.
 */
#include "bestcache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct tt_bc_entry {
    char *key;
    char *body;
    tt_store_stamp st;
} tt_bc_entry;

static pthread_mutex_t tt_bc_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_bc_entry tt_bc[TT_BESTCACHE_SLOTS];
static unsigned long long tt_bc_hits, tt_bc_misses;

static size_t tt_bc_slot(const char *key)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return (size_t)(h % TT_BESTCACHE_SLOTS);
}

static int tt_bc_same(const tt_store_stamp *a, const tt_store_stamp *b)
{
    return a->gen == b->gen && a->data_version == b->data_version;
}

char *tt_bestcache_get(const char *key, const tt_store_stamp *st)
{
    if (!key || !st) return NULL;
    size_t i = tt_bc_slot(key);
    char *out = NULL;
    pthread_mutex_lock(&tt_bc_mu);
    const tt_bc_entry *e = &tt_bc[i];
    if (e->key && tt_bc_same(&e->st, st) && !strcmp(e->key, key)) out = strdup(e->body);
    if (out) tt_bc_hits++;
    else tt_bc_misses++;
    pthread_mutex_unlock(&tt_bc_mu);
    return out;
}

void tt_bestcache_put(const char *key, const tt_store_stamp *st, const char *body)
{
    if (!key || !st || !body) return;
    char *k = strdup(key), *b = strdup(body);
    if (!k || !b) { free(k); free(b); return; }
    size_t i = tt_bc_slot(key);
    pthread_mutex_lock(&tt_bc_mu);
    tt_bc_entry *e = &tt_bc[i];
    char *ok = e->key, *ob = e->body;
    e->key = k;
    e->body = b;
    e->st = *st;
    pthread_mutex_unlock(&tt_bc_mu);
    free(ok);
    free(ob);
}

void tt_bestcache_clear(void)
{
    pthread_mutex_lock(&tt_bc_mu);
    for (size_t i = 0; i < TT_BESTCACHE_SLOTS; i++) {
        free(tt_bc[i].key);
        free(tt_bc[i].body);
        memset(&tt_bc[i], 0, sizeof tt_bc[i]);
    }
    pthread_mutex_unlock(&tt_bc_mu);
}

void tt_bestcache_counts(unsigned long long *hits, unsigned long long *misses)
{
    pthread_mutex_lock(&tt_bc_mu);
    if (hits) *hits = tt_bc_hits;
    if (misses) *misses = tt_bc_misses;
    pthread_mutex_unlock(&tt_bc_mu);
}

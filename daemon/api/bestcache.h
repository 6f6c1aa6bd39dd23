/* SPDX-License-Identifier: MIT
 * bestcache.h - read-through cache of GET /v1/best answers for exact shapes (SQLite only).
 *
 * An entry is the finished JSON body of one exact-shape answer, filed under a key the caller
 * builds from everything the answer depends on (the store, template, target, problem key,
 * backend, hash, nearest flag) and the store stamp taken BEFORE the store was read
 * (tt_store_best_stamp, store.h).  A lookup hits only when its fresh stamp equals the
 * entry's, so an answer is never served after a commit that could have changed it: trial
 * records of this process bump the stamp's generation after their commit, and any commit by
 * another connection or process changes SQLite's data_version.  PostgreSQL has no stamp, so
 * nothing is cached there (other hosts write).  Errors and nearest-shape answers are not
 * cached.  The cache costs one `PRAGMA data_version` per lookup (a read transaction, like the
 * SELECT it replaces) and saves the row copy and the JSON building and printing.
 *
 * Thread-safety: every function may be called from any thread (one internal mutex).
 * Memory: a fixed table of TT_BESTCACHE_SLOTS direct-mapped entries, each key and body
 * malloc'd; entries live until replaced or tt_bestcache_clear().
 */
#ifndef TT_BESTCACHE_H
#define TT_BESTCACHE_H

#include <stddef.h>

#include "store.h"

#define TT_BESTCACHE_SLOTS 256

/* Returns a malloc'd copy of the body cached under key with exactly this stamp (caller
 * frees), or NULL on a miss (or out of memory). */
char *tt_bestcache_get(const char *key, const tt_store_stamp *st);
/* Files body (copied) under key and stamp, replacing what the slot held.  Out of memory:
 * nothing is cached. */
void tt_bestcache_put(const char *key, const tt_store_stamp *st, const char *body);
/* Drops every entry (tests, shutdown). */
void tt_bestcache_clear(void);
/* Hits and misses since start (for tests and the bench). */
void tt_bestcache_counts(unsigned long long *hits, unsigned long long *misses);

#endif

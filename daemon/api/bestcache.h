/* SPDX-License-Identifier: MIT
 * bestcache.h - read-through cache of GET /v1/best answers for exact shapes (SQLite only).
 *
 * An entry is the finished JSON body of one exact-shape answer, filed under a key the caller
 * builds from everything the answer depends on (the store, template, target, problem key,
 * backend, hash, nearest flag, and the hash of the template's current version, since without
 * hash= the answer is the fastest config that version runs: a PUT of a new version changes
 * the key) and the store stamp taken BEFORE the store was read
 * (tt_store_best_stamp, store.h).  A lookup hits only when its fresh stamp equals the
 * entry's, so an answer is never served after a commit through this process that could have
 * changed it (trial records bump the stamp's generation after their commit, an atomic load to
 * check), and a commit by another process (`tiletuned worker`, a second daemon on the file:
 * SQLite's data_version) shows in every answer begun more than TT_STORE_STAMP_REFRESH_MS
 * (2 ms) after it: the stamp re-reads data_version, a read transaction under the store mutex,
 * at most that often.  PostgreSQL has no stamp, so nothing is cached there (other hosts
 * write).  Errors and nearest-shape answers are not cached.  A hit saves the SELECT, the row
 * copy and the JSON building and printing.
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

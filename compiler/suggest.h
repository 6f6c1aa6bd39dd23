/* SPDX-License-Identifier: MIT
 * suggest.h - "did you mean ...?": the known name closest to a mistyped one, for the error
 * messages of the command lines (tiletuned, tlctl) and the API.
 *
 * A name is suggested when it is the only one that starts with the word (a shortened option,
 * `--datasets` for `--datasets-dir`), or else the nearest by optimal-string-alignment
 * distance (insertions, deletions, substitutions and swaps of neighbours, each 1) when that
 * distance is at most 2 and below half the word's length.  Ties go to the earlier name.
 * Pure functions: no allocation, thread-safe.
 */
#ifndef TT_SUGGEST_H
#define TT_SUGGEST_H

#include <stddef.h>

/* The name of names[0..n) to suggest for word[0..len) (not NUL-terminated), or NULL. */
const char *tt_suggest(const char *word, size_t len, const char *const *names, size_t n);

/* The same over names at a stride: the first member of each of n records of `stride` bytes
 * from `first` is a const char * (e.g. an option table).  A NULL name ends the table early. */
const char *tt_suggest_in(const char *word, size_t len, const void *first, size_t stride,
                          size_t n);

/* The phrase a message appends for a suggestion, into buf (returned): "" when hint is NULL;
 * with prefix NULL, the API and config-file style ` (did you mean "HINT"?)`; else the command
 * line's `; did you mean PREFIXHINT?` (prefix "--" for an option, "" for a command). */
const char *tt_suggest_phrase(char *buf, size_t cap, const char *hint, const char *prefix);

#endif

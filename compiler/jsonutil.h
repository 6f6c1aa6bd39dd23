/* SPDX-License-Identifier: MIT
 * jsonutil.h - jansson helpers shared by the library, the daemon and the client (and the UTF-8
 * check and repair every text needs before it becomes a JSON string).
 *
 * Why: jansson 2.14's json_dumps() ignores the result of writing an object key (dump.c), so
 * under memory pressure it can return JSON text with a key silently cut out.  tt_json_dumps()
 * serialises through json_dump_callback() and remembers any failed write, so it returns
 * either the complete text or NULL.  Use it instead of json_dumps() everywhere.
 *
 * Thread-safety: reentrant; the value is only read (the usual jansson rule applies: do not
 * modify it from another thread at the same time).
 */
#ifndef TT_JSONUTIL_H
#define TT_JSONUTIL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The JSON text of `j` (borrowed) with json_dumps() `flags` (JSON_ENCODE_ANY is needed for
 * a value that is not an object or an array, as with json_dumps()).  Returns new
 * NUL-terminated text that the caller frees with free(), or NULL on any failure (out of
 * memory, NULL `j`, a value jansson refuses to encode); nothing is leaked on failure. */
char *tt_json_dumps(const json_t *j, size_t flags);

/* The text jansson writes for the real v (json_real(v) dumped with default precision:
 * "%.17g", then ".0" appended when it has neither '.' nor 'e', the exponent without '+' and
 * leading zeros), byte for byte, into buf; returns its length (< TT_JSON_REAL_MAX), or 0 when
 * v is not finite (jansson refuses those).  Without printf for 1e-4 <= |v| < 1e17 (exact
 * integer arithmetic): the runner writes a trial's samples with it (tens per trial). */
#define TT_JSON_REAL_MAX 32
size_t tt_json_real_text(double v, char buf[TT_JSON_REAL_MAX]);
/* The JSON array text of n reals (tt_json_real_text each, compact "[a,b]"): new text the
 * caller frees, or NULL when out of memory or a value is not finite. */
char *tt_json_reals(const double *v, size_t n);

/* json_loadb() and json_loadf() for JSON text a person wrote (files, request bodies): the
 * same, except that a leading UTF-8 byte order mark (EF BB BF, which editors on Windows
 * write) is ignored, as RFC 8259 section 8.1 allows, instead of failing at line 1 column 1
 * with an invisible character.  Errors and their positions are jansson's; a position on
 * line 1 counts from after the mark. */
json_t *tt_json_loadb(const char *text, size_t len, size_t flags, json_error_t *je);
json_t *tt_json_loadf(FILE *f, size_t flags, json_error_t *je);

/* Length (1..4) of the valid UTF-8 character at the start of s[0..n), 0 when s does not start
 * one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short). */
size_t tt_utf8_char_len(const char *s, size_t n);
/* 1 when s[0..n) is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF), else 0. */
int tt_utf8_valid(const char *s, size_t n);
/* Make the NUL-terminated s valid UTF-8 in place: a character cut short (by a "%.32s" or a
 * full buffer) is dropped, so text is cut on a character boundary; any other invalid byte
 * becomes '?'.  The one place user text is made safe for a JSON string
 * (jansson refuses invalid UTF-8) or a PostgreSQL text column. */
void tt_utf8_fix(char *s);

#endif

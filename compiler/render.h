/* SPDX-License-Identifier: MIT
 * render.h - render a template's source text for one problem and config (cmd: backends).
 *
 * A placeholder is `{{name}}` (spaces inside the braces allowed: `{{ block_M }}`) where
 * name is an identifier.  It is replaced by:
 *   - the value of an input, param or let of that name (decimal; a dtype input renders as
 *     its dtype name, e.g. float16);
 *   - `{{config_json}}`: the params as one compact JSON object in declared order,
 *     {"block_M":128,"block_N":256};
 *   - `{{problem_json}}`: the inputs likewise, dtypes as strings, {"M":4096,"dtype":"float16"}.
 * A placeholder naming anything else (including a grid dim, which has no value at render
 * time) is an error: TT_ETEMPLATE with err->path "source" and err->msg naming it and its line.
 * Text that is not a placeholder (a lone `{`, `{{ 1 }}`, Python's `{{` in an f-string not
 * followed by an identifier and `}}`) is copied unchanged.
 *
 * Memory: the output is sized in a first pass and allocated once (malloc, NUL-terminated,
 * caller frees); nothing else is allocated.  Thread-safety: pure; safe from many threads.
 */
#ifndef TT_RENDER_H
#define TT_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "template.h"
#include "tt_err.h"

/* Render src[0..len) with the values in slots (inputs, params and lets already evaluated,
 * e.g. by tt_tmpl_eval_lets()).  On success *out is a new NUL-terminated string of *out_len
 * bytes (out_len may be NULL).  On failure *out is NULL and TT_ETEMPLATE / TT_ENOMEM is
 * returned with err filled. */
tt_rc tt_render(const tt_template *t, const int64_t *slots, const char *src, size_t len,
                char **out, size_t *out_len, tt_errinfo *err);

/* Check that every placeholder of src[0..len) names an input, param, let, config_json or
 * problem_json of t (the names are known before any value is): TT_OK, or TT_ETEMPLATE with
 * err->path = path and a message naming the placeholder, its line and `where` (the file;
 * may be NULL).  The template parser calls it on a source file or script, so that a typo
 * is refused at load, not by every trial of a cmd: backend.  A NULL src is TT_OK. */
tt_rc tt_render_check(const tt_template *t, const char *src, size_t len, const char *path,
                      const char *where, tt_errinfo *err);

/* The params of slots as compact JSON, written into buf like snprintf: returns the length
 * the full text needs (excluding the NUL); buf may be NULL when cap is 0. */
size_t tt_render_config_json(const tt_template *t, const int64_t *slots, char *buf, size_t cap);
/* The inputs of slots as compact JSON (dtypes as names), like tt_render_config_json(). */
size_t tt_render_problem_json(const tt_template *t, const int64_t *slots, char *buf, size_t cap);

#endif

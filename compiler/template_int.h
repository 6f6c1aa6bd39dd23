/* SPDX-License-Identifier: MIT
 * template_int.h - internals shared by the template parser files (template*.c); not public.
 *
 * The parse state `tt__tp` carries the template under construction, the error detail and
 * the name scope of expressions.  Every function here returns a tt_rc and fills p->err on
 * failure; the partially built template is then freed by the caller with tt_tmpl_free().
 */
#ifndef TT_TEMPLATE_INT_H
#define TT_TEMPLATE_INT_H

#include <jansson.h>
#include <stddef.h>

#include "template.h"

typedef struct tt__tp {
    tt_template *t;
    tt_errinfo *err;
    size_t nvisible;                   /* slots [0, nvisible) are visible to expressions */
    size_t nops;                       /* ops parsed so far */
    size_t nloops;                     /* loops parsed so far (next loop id) */
    const char *loopvars[TT_TMPL_MAX_DEPTH + 1];   /* enclosing loops (innermost last) */
    int loopids[TT_TMPL_MAX_DEPTH + 1];
    size_t depth;
    const char **allloops;             /* every loop var so far (borrowed from the ops) */
    size_t nallloops, capallloops;
} tt__tp;

/* The parser files layer one way: template.c (public entry points) -> template_parse.c
 * (the document walk, tt__tmpl_parse_doc) -> template_kernel.c (the tile program) ->
 * template_common.c (free, slots, the helpers below).  No file calls up. */

/* Walk a whole template document into p->t (template_parse.c). */
tt_rc tt__tmpl_parse_doc(tt__tp *p, const json_t *doc, const char *base_dir);
/* Fill t->cfg_order (template_values.c), once the params are parsed. */
void tt__tmpl_order_params(tt_template *t);
/* Fill p->err with an out-of-memory error at path; returns TT_ENOMEM. */
tt_rc tt__tp_oom(tt__tp *p, const char *path);
/* JSON type name for messages ("object", "array", "string", "integer", ...). */
const char *tt__json_type(const json_t *v);
/* Compile an expression given as a JSON string or integer, with the visible slots. */
tt_rc tt__tp_expr(tt__tp *p, const json_t *v, const char *path, tt_expr **out);
/* Check an identifier's syntax and that it collides with no name declared so far. */
tt_rc tt__tp_name(tt__tp *p, const char *name, const char *path);
/* Index of a buffer / tensor by name, or -1. */
int tt__tmpl_buffer(const tt_template *t, const char *name);
int tt__tmpl_tensor(const tt_template *t, const char *name);
/* Reject any key of obj that is not in the NULL-terminated list `keys`. */
tt_rc tt__tp_keys(tt__tp *p, const json_t *obj, const char *path, const char *const *keys);
/* Parse the "kernel" object into p->t->kernel. */
tt_rc tt__tmpl_parse_kernel(tt__tp *p, const json_t *k);
/* Free a kernel (NULL accepted). */
void tt__tmpl_free_kernel(tt_kernel *k);
/* Short word for an evaluation error: "overflow", "division by zero", "domain error". */
const char *tt__rc_word(tt_rc rc);
/* The same for an evaluation of e; a domain error of an expression with a true division
 * (`/`) says that a fraction is the likely cause. */
const char *tt__expr_rc_word(const tt_expr *e, tt_rc rc);
/* snprintf into a path buffer; truncates silently (paths are for messages). */
void tt__path(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* strdup that returns NULL on NULL. */
char *tt__strdup(const char *s);

#endif

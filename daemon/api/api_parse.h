/* SPDX-License-Identifier: MIT
 * api_parse.h - request members checked by table: every handler of daemon/api/ describes the
 * members it accepts (name, JSON type, range, required, where the value goes) and calls
 * tt__parse() once, so type, range, missing and unknown-member errors are built in one place
 * with one message style and one JSON path rule (tt__path_join).
 *
 * Ownership: the destinations receive borrowed pointers into the parsed object (strings and
 * json_t values live as long as the request).  Thread-safety: pure, thread-safe.
 */
#ifndef TT_API_PARSE_H
#define TT_API_PARSE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "tt_err.h"

typedef enum tt__ptype {
    TT__P_STRING,   /* const char *; lo..hi bounds the length in bytes when ranged */
    TT__P_INT,      /* int64_t (in a query: decimal text) */
    TT__P_NUMBER,   /* double (integers accepted) */
    TT__P_BOOL,     /* int 0/1 (in a query: 1, true, empty, 0, false) */
    TT__P_OBJECT,   /* const json_t * */
    TT__P_ARRAY,    /* const json_t *; lo..hi bounds the number of elements when ranged */
    TT__P_ANY,      /* const json_t * (checked later by a helper, e.g. tt__req_problem) */
    TT__P_RESERVED  /* must not be given ("is reserved"); no destination */
} tt__ptype;

enum {
    TT__M_REQUIRED = 1,   /* absent -> TT_EINVAL "missing member" (or `hint`) */
    TT__M_RANGE = 2       /* lo..hi checked (values, lengths or sizes as above) */
};

typedef struct tt__member {
    const char *name;     /* member (or query argument) name */
    tt__ptype type;
    int flags;            /* TT__M_* */
    double lo, hi;
    size_t off;           /* offsetof(destination struct, field); ignored for RESERVED */
    const char *hint;     /* message for any error of this member; NULL: generated */
} tt__member;

/* Flags of tt__parse(). */
enum {
    TT__PARSE_QUERY = 1,  /* the values are query-string texts (all JSON strings) */
    TT__PARSE_OPEN = 2    /* members not in the table are allowed (left to the caller) */
};

/* Check obj (a JSON object, or NULL when absent: then only required members fail) against
 * the n members of tab and store each present value at dst + off.  Absent members leave their
 * destination untouched (set defaults before the call).  Errors are TT_EINVAL with the path
 * prefix.name (tt__path_join) and a message naming what was expected; obj not an object is
 * TT_EINVAL at prefix.  Returns TT_OK or the code with err filled. */
tt_rc tt__parse(const json_t *obj, const tt__member *tab, size_t n, int flags,
                const char *prefix, void *dst, tt_errinfo *err);
#define TT__PARSE(obj, tab, flags, prefix, dst, err) \
    tt__parse((obj), (tab), sizeof(tab) / sizeof((tab)[0]), (flags), (prefix), (dst), (err))

/* The one JSON path rule: prefix + "." + name, or prefix + name when name starts with '[',
 * or just one of them when the other is NULL/empty.  Cut to cap (a NUL always written). */
void tt__path_join(char *out, size_t cap, const char *prefix, const char *name);
/* Put err->path under prefix (as tt__path_join(prefix, err->path)). */
void tt__err_prefix(tt_errinfo *err, const char *prefix);
/* A library names the value it checked by its root word (`root`, e.g. "problem" or "config",
 * as in "problem.M"): move that root to where the value sits in the request (`at`, e.g.
 * "configs[3]"), so paths are never doubled.  Paths without that root get `at` prefixed. */
void tt__err_rebase(tt_errinfo *err, const char *root, const char *at);

/* A decimal integer as a query argument or path segment spells it: an optional '-', then
 * digits only (no sign '+', no blanks, as in JSON and in problem strings).  0 with *out set,
 * or -1 (also when it does not fit in 64 bits). */
int tt__parse_int(const char *s, long long *out);

#endif

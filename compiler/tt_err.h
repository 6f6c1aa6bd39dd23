/* SPDX-License-Identifier: MIT
 * tt_err.h - the one error table of tiletune: codes, messages, HTTP status, API code strings.
 *
 * Every library function that can fail returns a tt_rc; 0 (TT_OK) is success.
 * Codes are only ever appended (values are stored in the database and seen by clients).
 * A function that fails may also fill a tt_errinfo with the detail: a JSON path or an
 * expression position and a human-readable message.  Libraries never print or exit.
 * Thread-safety: everything here is pure and thread-safe.
 */
#ifndef TT_ERR_H
#define TT_ERR_H

#include <stddef.h>

/*  X(enum name,          message,                         HTTP, API code string) */
#define TT_ERROR_TABLE(X)                                                              \
    X(TT_OK,              "ok",                             200, "ok")                \
    X(TT_ENOMEM,          "out of memory",                  503, "out_of_memory")     \
    X(TT_EINVAL,          "invalid argument",               400, "invalid_argument")  \
    X(TT_EJSON,           "malformed JSON",                 400, "malformed_json")    \
    X(TT_ETEMPLATE,       "invalid template",               422, "invalid_template")  \
    X(TT_EEXPR,           "invalid expression",             422, "invalid_expression") \
    X(TT_EPROBLEM,        "invalid problem",                422, "invalid_problem")   \
    X(TT_ECONFIG,         "invalid config",                 422, "invalid_config")    \
    X(TT_EINFEASIBLE,     "config is infeasible",           422, "infeasible")        \
    X(TT_EOVERFLOW,       "64-bit integer overflow",        422, "overflow")          \
    X(TT_EDIVZERO,        "division by zero",               422, "division_by_zero")  \
    X(TT_EDOMAIN,         "argument out of domain",         422, "domain_error")      \
    X(TT_ETARGET,         "invalid target",                 422, "invalid_target")    \
    X(TT_ENOTFOUND,       "not found",                      404, "not_found")         \
    X(TT_EEXISTS,         "conflict with existing state",   409, "conflict")          \
    X(TT_ETOOBIG,         "too large",                      413, "too_large")         \
    X(TT_ELIMIT,          "limit exceeded",                 429, "limit_exceeded")    \
    X(TT_EUNAUTH,         "authentication required",        401, "unauthorized")      \
    X(TT_EFORBIDDEN,      "forbidden",                      403, "forbidden")         \
    X(TT_EIO,             "I/O error",                      500, "io_error")          \
    X(TT_EDB,             "database error",                 503, "database_error")    \
    X(TT_EDEADLOCK,       "program deadlocks",              422, "deadlock")          \
    X(TT_EUNSUPPORTED,    "not supported",                  422, "unsupported")       \
    X(TT_EBUILD,          "build failed",                   422, "build_failed")      \
    X(TT_EBUILDTIMEOUT,   "build timed out",                422, "build_timeout")     \
    X(TT_ERUN,            "run failed",                     422, "run_failed")        \
    X(TT_ERUNTIMEOUT,     "run timed out",                  422, "run_timeout")       \
    X(TT_EWRONG,          "wrong result",                   422, "wrong_result")      \
    X(TT_ECANCELLED,      "cancelled",                      409, "cancelled")         \
    X(TT_EUNAVAILABLE,    "service unavailable",            503, "unavailable")       \
    X(TT_EINTERNAL,       "internal error",                 500, "internal")          \
    X(TT_EMETHOD,         "method not allowed",             405, "method_not_allowed") \
    X(TT_ETIMEOUT,        "timed out",                      503, "timeout")           \
    X(TT_EBUDGET,         "work budget exceeded",           422, "over_budget")       \
    X(TT_EBUSY,           "too many heavy requests",        503, "busy")              \
    X(TT_EURITOOLONG,     "URI too long",                   414, "uri_too_long")      \
    X(TT_EENCODING,       "undecodable bytes",              400, "bad_encoding")      \
    X(TT_EHEADERS,        "request headers too large",      431, "headers_too_large")

typedef enum tt_rc {
#define TT_X_ENUM(name, msg, http, code) name,
    TT_ERROR_TABLE(TT_X_ENUM)
#undef TT_X_ENUM
    TT_RC__COUNT
} tt_rc;

/* Message for a code ("unknown error" for values outside the table). Static storage. */
const char *tt_strerror(tt_rc rc);
/* HTTP status that the API answers with for this code (500 for unknown values). */
int tt_rc_http_status(tt_rc rc);
/* Stable API error code string, e.g. "invalid_template" ("internal" for unknown values). */
const char *tt_rc_code(tt_rc rc);
/* Reverse of tt_rc_code(): the code for an API code string, TT_EINTERNAL if unknown. */
tt_rc tt_rc_from_code(const char *code);

/* Detail of an error.  Caller-allocated; functions that take one fill it on failure
 * (and leave it untouched on success).  `path` is a JSON path such as
 * "params.block_M[2]" or "kernel.body[0].copy[1]"; `pos` is a 0-based byte offset
 * inside an expression, or -1. */
typedef struct tt_errinfo {
    tt_rc rc;
    int pos;
    char path[160];
    char msg[256];
} tt_errinfo;

/* Clear an errinfo (rc = TT_OK, pos = -1, empty strings). NULL is accepted. */
void tt_errinfo_clear(tt_errinfo *e);

/* Quote up to `max` bytes of s[0..len) into buf for a message: printable ASCII as it is,
 * every other byte (and the backslash) as \xNN, "..." when cut; always NUL-terminated.
 * Returns buf.  Messages quote user text through this, so that they stay one printable line. */
const char *tt_err_quote(char *buf, size_t cap, const char *s, size_t len, size_t max);
/* Fill an errinfo (NULL accepted: then only returns rc). Returns rc, so that
 *   return tt_errf(err, TT_ETEMPLATE, "params.block_M[2]", "not an integer");
 * reads naturally.  msg is a printf format.  Control bytes in the formatted path and message
 * (a newline in a quoted user string) come out as \xNN: a message is one printable line. */
tt_rc tt_errf(tt_errinfo *e, tt_rc rc, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

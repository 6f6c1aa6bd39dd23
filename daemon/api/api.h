/* SPDX-License-Identifier: MIT
 * api.h - the HTTP API's request/response model and the route handlers.
 *
 * http.c (libmicrohttpd) parses a request into a tt_req, authenticates it, finds the route
 * in the table of api.c and calls its handler, which fills a tt_resp.  Handlers never touch
 * libmicrohttpd, so they are testable without sockets.  Error bodies are always
 *   {"error": {"code": "...", "message": "...", "path": "..."}}
 * with the status of the error table (tt_err.h); tt_resp_error() builds them.
 *
 * Ownership: a handler owns nothing of the request (all borrowed for the call); the body it
 * puts in resp->json is a new reference that the server releases after sending.
 * Thread-safety: handlers run on many connection threads at once; tt_server's members are
 * thread-safe (the store has its own mutex, the catalog too).
 */
#ifndef TT_API_H
#define TT_API_H

#include <jansson.h>
#include <stddef.h>

#include "budget.h"
#include "catalog.h"
#include "runner.h"
#include "store.h"
#include "tt_err.h"

typedef struct tt_server {
    tt_store *store;              /* shared connection (mutex inside) */
    tt_catalog *catalog;
    tt_runner_config runner_cfg;  /* backends, datasets, toolchains */
    const json_t *config;         /* the effective config as JSON (borrowed) */
    /* limits */
    size_t max_body_bytes;
    int max_json_depth;
    double max_space;             /* configs; larger spaces need a strategy that samples */
    int max_jobs_per_token;
    int open_reads;               /* 1: GET routes need no token */
    int ui;                       /* 1: serve the web view at /ui/ */
    size_t max_import_bytes;      /* decompressed import size; admin tokens: _admin (0: none) */
    size_t max_import_bytes_admin;
} tt_server;

/* Token scopes, as a bit set. */
enum { TT_SCOPE_READ = 1, TT_SCOPE_TUNE = 2, TT_SCOPE_ADMIN = 4 };

typedef struct tt_req {
    const char *method;           /* "GET", "POST", ... */
    const char *path;             /* "/v1/jobs/12/trials" (no query string) */
    const char *params[4];        /* path parameters captured by the route ("12") */
    int nparams;
    const json_t *query;          /* object of query-string arguments (strings) */
    const json_t *body;           /* parsed JSON body, NULL when none */
    const char *raw_body;         /* raw body bytes (NUL-terminated), NULL when none */
    size_t raw_len;
    const char *token_name;       /* authenticated token name, "" when anonymous */
    int scopes;                   /* TT_SCOPE_* bits of the token */
    const char *accept;           /* Accept header or NULL */
    const tt_budget *budget;      /* work budget (budget.h); NULL: unlimited (CLI, tests) */
} tt_req;

typedef struct tt_resp {
    int status;                   /* HTTP status */
    json_t *json;                 /* new reference: JSON body, or NULL */
    char *text;                   /* malloc'd non-JSON body (export formats), or NULL */
    const char *content_type;     /* for text; static string */
    const char *const *headers;   /* static {name, value, ..., NULL} added to the answer
                                   * (the web view's Content-Security-Policy), or NULL */
} tt_resp;

/* Set an error response from a code, an optional JSON path and a printf message. */
void tt_resp_error(tt_resp *r, tt_rc rc, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same from an errinfo filled by a library. */
void tt_resp_errinfo(tt_resp *r, const tt_errinfo *e);
/* Set a JSON response (steals the reference). */
void tt_resp_json(tt_resp *r, int status, json_t *body);

typedef void (*tt_handler_fn)(tt_server *srv, const tt_req *req, tt_resp *resp);

/* Handlers of the CI / data-exchange routes (api_ci.c):
 *   POST /v1/check    measured or re-measured latency vs baseline -> verdict per entry
 *   GET  /v1/export   records as JSON / T4, SPECIALIZATIONS for AOT builds, C header
 *   POST /v1/import   T4, Kernel Tuner cache and T1 files */
void tt_api_check(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt_api_export(tt_server *srv, const tt_req *req, tt_resp *resp);
void tt_api_import(tt_server *srv, const tt_req *req, tt_resp *resp);
/* GET /v1/checks: the recorded verdicts of a template on a target, newest first. */
void tt_api_checks(tt_server *srv, const tt_req *req, tt_resp *resp);

#endif

/* SPDX-License-Identifier: MIT
 * ci_fixture.h - the CI / data-exchange handler tests' fixture: a hand-built tt_server over
 * a temporary SQLite store and the shipped catalog, a handler called with a JSON body or a
 * query, and the error fields of an answer.
 *
 * Shared by test_ci_check_export, test_ci_export_versions and test_ci_import.  tt_cfx_init / tt_cfx_cleanup are the
 * CUnit init of a program's first suite and the cleanup of its last (one server for all its
 * suites).  Not thread-safe: call from the test's main thread.
 */
#ifndef TT_CI_FIXTURE_H
#define TT_CI_FIXTURE_H

#include <jansson.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcomment"
#include "api_int.h"
#pragma GCC diagnostic pop

extern tt_server tt_cfx_srv;           /* store, catalog, limits and runner config */
extern tt_server tt_cfx_srv_template;  /* limits and runner config, without store and catalog */
extern char *tt_cfx_dir;               /* the temp dir of the store and the export files */
extern const tt_template *tt_cfx_gemm; /* borrowed from the catalog */
extern const tt_target *tt_cfx_a2;

/* 0, or -1 after a message when the store, catalog, gemm or a2 is missing. */
int tt_cfx_init(void);
/* Frees the server; removes the temp dir unless a test failed (then prints where it is). */
int tt_cfx_cleanup(void);

/* A JSON string value, "" when absent (so that a failed lookup fails the assertion). */
const char *tt_cfx_js(const json_t *v);
/* Call a handler on tt_cfx_srv with a JSON body or a query (query: a new reference the call
 * takes; NULL for none); *resp is the answer, cleared by tt_cfx_resp_clear. */
void tt_cfx_call(void (*fn)(tt_server *, const tt_req *, tt_resp *), const char *method,
                 const char *body, json_t *query, tt_resp *resp);
void tt_cfx_resp_clear(tt_resp *r);
/* The answer's error.code / error.path, "" when absent (borrowed from r). */
const char *tt_cfx_err_code(const tt_resp *r);
const char *tt_cfx_err_path(const tt_resp *r);
/* Record a successful trial of t on a2 for the problem and config in slots under backend
 * fingerprint fp (median = min = median us, spread), for job at seq (0, 0: outside a job). */
void tt_cfx_record(const tt_template *t, const int64_t *slots, const char *fp, double median,
                   double spread, int64_t job, int64_t seq);

#endif

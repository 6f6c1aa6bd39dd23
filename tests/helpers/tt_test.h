/* SPDX-License-Identifier: MIT
 * tt_test.h - shared helpers of the CUnit test programs.
 *
 * Each test program defines a table of suites and calls tt_test_main().  Paths to data come
 * from the environment that ctest sets (TT_SOURCE_DIR, TT_BIN_DIR, TT_SHARED_DIR), with
 * fallbacks relative to the working directory.
 */
#ifndef TT_TEST_H
#define TT_TEST_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <jansson.h>
#include <stddef.h>

typedef struct tt_test_case {
    const char *name;
    void (*fn)(void);
} tt_test_case;

typedef struct tt_test_suite {
    const char *name;
    int (*init)(void);     /* may be NULL */
    int (*cleanup)(void);  /* may be NULL */
    const tt_test_case *cases;   /* terminated by {NULL, NULL} */
} tt_test_suite;

/* Runs the suites (terminated by {NULL}); returns the process exit code: 0 only when every
 * test ran and passed (a suite whose init fails counts as a failure). */
int tt_test_main(int argc, char **argv, const tt_test_suite *suites);

/* Absolute path of a file under the source tree / shared dir / bin dir (static buffer per
 * call site is NOT used: returns a malloc'd string the caller frees). */
char *tt_test_src(const char *rel);
char *tt_test_shared(const char *rel);
char *tt_test_bin(const char *name);
/* A new empty temporary directory (malloc'd path); tt_test_rmrf() removes a tree. */
char *tt_test_tmpdir(const char *prefix);
void tt_test_rmrf(const char *path);
/* Read a whole file (malloc'd, NUL-terminated; *len may be NULL). NULL on error. */
char *tt_test_read_file(const char *path, size_t *len);
/* Parse a JSON file under the source tree (e.g. a case table): a new reference, or NULL
 * after printing the path and jansson's error to stderr. */
json_t *tt_test_load_json(const char *rel);
/* Parse a template file under the source tree ("templates/gemm.json"): the template (the
 * caller frees it with tt_tmpl_free()), or NULL after printing the path, the error code, the
 * JSON path and the message to stderr. */
struct tt_template;
struct tt_template *tt_test_load_template(const char *rel);

#endif

/* SPDX-License-Identifier: MIT
 * tlctl_fixture.h - the tlctl tests' fixture: a live tiletuned (tt_daemon) and build/bin/tlctl
 * run as a subprocess against it, its exit code, stdout and stderr kept.
 *
 * Shared by test_tlctl (the command-line surface) and test_tlctl_data (check, export, import,
 * template document files).  tt_tlfx_init / tt_tlfx_cleanup are a program's suite init and
 * cleanup (one daemon and one temp dir per program).  Not thread-safe: call from the test's
 * main thread.
 */
#ifndef TT_TLCTL_FIXTURE_H
#define TT_TLCTL_FIXTURE_H

#include <jansson.h>

#include "tt_daemon.h"

extern tt_daemon tt_tlfx_d;         /* the daemon tlctl talks to (TILETUNE_URL) */
extern char *tt_tlfx_tmp;           /* the program's temp dir, tlctl's HOME */
extern char *tt_tlfx_bin;           /* build/bin/tlctl */
extern void (*tt_tlfx_at)(void);    /* set: tt_tlfx_run calls it at sigint_after instead of
                                     * sending SIGINT */

/* Suite init: a temp dir named after prefix, the tlctl binary, and a daemon started with
 * {"max_body_bytes": 16777216}.  0, or -1 when one of them is missing. */
int tt_tlfx_init(const char *prefix);
/* Stops the daemon (keeping its directory when a test failed, see tt_daemon_cleanup); removes
 * the temp dir unless a test failed.  Returns 0. */
int tt_tlfx_cleanup(void);

typedef struct tt_tlfx_res {
    int code;                 /* exit status, 128+sig when killed, -1 on failure to run */
    char *out, *err;          /* stdout and stderr, malloc'd, NUL-terminated */
} tt_tlfx_res;

/* Run tlctl with argv (NULL-terminated) and extra environment "K=V" strings (NULL-terminated,
 * may be NULL).  TILETUNE_URL is the test daemon's, TILETUNE_TOKEN unset, HOME the temp dir.
 * When sigint_after > 0, SIGINT is sent after that many seconds (or tt_tlfx_at called).
 * The caller frees the result with tt_tlfx_free. */
tt_tlfx_res tt_tlfx_run(const char *const *env, double sigint_after, const char *const *argv);
/* Frees out and err and zeroes *r. */
void tt_tlfx_free(tt_tlfx_res *r);

#define TT_TLFX_RUN(...) tt_tlfx_run(NULL, 0, (const char *const[]){__VA_ARGS__, NULL})
#define TT_TLFX_RUN_TOKEN(tok, ...)                                                            \
    tt_tlfx_run((const char *const[]){"TILETUNE_TOKEN=" tok, NULL}, 0,                          \
                (const char *const[]){__VA_ARGS__, NULL})

/* 1 when s (tlctl's stderr) is exactly one line starting "tlctl". */
int tt_tlfx_one_line(const char *s);
/* A JSON string value, "" when absent (so that a failed lookup fails the assertion). */
const char *tt_tlfx_js(const json_t *v);
/* Write text to path (replacing it); a file that cannot be opened fails the test (fatal). */
void tt_tlfx_write_text(const char *path, const char *text);

#endif

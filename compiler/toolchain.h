/* SPDX-License-Identifier: MIT
 * toolchain.h - run one external toolchain command line (build or run) in a sandbox directory.
 *
 * The command runs as `/bin/sh -c CMD` in its own process group, in a given working
 * directory, with the caller's environment plus additions, stdin from /dev/null, resource
 * limits (RLIMIT_AS / RLIMIT_CPU / RLIMIT_FSIZE) and a wall-clock timeout after which the
 * whole process group gets SIGKILL.  stdout and stderr go through pipes into files in the
 * working directory; each file keeps at most `output_cap` bytes of the head plus the last
 * TT_TOOLCHAIN_TAIL bytes of the stream (stdout: `stdout_tail` when given) after a
 * "[... N bytes omitted ...]" line, so a JSON line printed last is never lost (unless the file
 * cannot be written: then the run goes on and the result says which errno lost the output).
 * When the shell exits, what is left of its process group is killed too: a toolchain cannot
 * leave processes behind (unless it escapes with setsid).  Nothing is printed.
 *
 * Thread-safety: tt_toolchain_run() may be called from many threads at once (it builds the
 * child's environment before fork and only calls async-signal-safe functions in the child).
 * Ownership: everything passed in is borrowed for the call.
 */
#ifndef TT_TOOLCHAIN_H
#define TT_TOOLCHAIN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tt_err.h"

#define TT_TOOLCHAIN_TAIL 16384              /* tail bytes kept after a truncated head */
#define TT_TOOLCHAIN_DEFAULT_CAP (1u << 20)  /* output_cap when 0 is given */

typedef struct tt_toolchain_opts {
    const char *cwd;                /* working directory (must exist); NULL: inherited */
    const char *const *env;         /* additions "KEY=VALUE", NULL-terminated; they override
                                       inherited variables of the same name; may be NULL */
    double timeout_s;               /* wall-clock limit; <= 0: none */
    uint64_t mem_bytes;             /* RLIMIT_AS; 0: unchanged */
    uint64_t cpu_s;                 /* RLIMIT_CPU; 0: unchanged */
    uint64_t fsize_bytes;           /* RLIMIT_FSIZE; 0: unchanged */
    const char *stdout_name;        /* file in cwd receiving stdout (default "stdout.txt") */
    const char *stderr_name;        /* file in cwd receiving stderr (default "stderr.txt") */
    uint64_t output_cap;            /* head bytes kept per stream; 0: the default cap */
    uint64_t stdout_tail;           /* tail bytes of stdout kept after a truncated head (where
                                       a result printed last is looked for); 0:
                                       TT_TOOLCHAIN_TAIL.  stderr always keeps that many */
    atomic_int *stop;               /* when non-zero (checked every 20 ms): the group gets
                                       SIGKILL, as at the timeout; may be NULL.  Borrowed. */
} tt_toolchain_opts;

typedef struct tt_toolchain_result {
    int exited;                     /* 1: exited normally with exit_code */
    int exit_code;
    int signaled;                   /* 1: killed by term_signal (SIGKILL after a timeout) */
    int term_signal;
    int timed_out;                  /* 1: the timeout expired and the group was killed */
    int stopped;                    /* 1: *opts->stop was set and the group was killed */
    double wall_s;                  /* wall seconds from fork to reaping */
    uint64_t out_bytes, err_bytes;  /* bytes the command wrote to each stream */
    int out_truncated, err_truncated;
    int out_errno, err_errno;       /* first error writing each output file (ENOSPC: the
                                       disk is full; what followed was lost), 0: none */
} tt_toolchain_result;

/* Run `cmdline`.  Returns TT_OK when the command was started and reaped (how it ended is in
 * *res, which is always filled on TT_OK), or TT_EINVAL (bad arguments), TT_EIO (the output
 * files, pipes or fork failed; err says which), TT_ENOMEM.  On error *res is zeroed. */
tt_rc tt_toolchain_run(const char *cmdline, const tt_toolchain_opts *opts,
                       tt_toolchain_result *res, tt_errinfo *err);

/* Copy the last bytes of a text file (at most cap-1, NUL-terminated) into buf, skipping
 * trailing white space and starting at a line boundary when one is in range (else after any
 * UTF-8 character cut by the start); control bytes and bytes that are not valid UTF-8 become
 * '?', so the text is valid UTF-8.  Returns the length written (0 when the file is missing or
 * empty). */
size_t tt_toolchain_tail(const char *path, char *buf, size_t cap);

/* One line describing how a run ended: "exit 0", "exit 2", "killed by signal 9 (Killed)",
 * "timed out after 1.5 s", "stopped"; a shell's exit code 129..192 is explained as a command killed by
 * signal (code - 128).  Writes into buf (NUL-terminated); returns buf. */
const char *tt_toolchain_describe(const tt_toolchain_result *res, double timeout_s, char *buf,
                                  size_t cap);

#endif

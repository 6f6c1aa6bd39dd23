/* SPDX-License-Identifier: MIT
 * log.h - the daemon's log: leveled lines to stderr or a file, one line per event.
 *
 * Levels and what they mean (pick the lowest that is true):
 *   debug    detail for a developer chasing a bug: one line per HTTP request, SQL timings
 *   info     normal life of the daemon: started, listening, job submitted, stopped
 *   notice   normal but significant: configuration taken from the environment, a job resumed
 *   warning  something went wrong for one request or job; the daemon carries on
 *   error    a subsystem failed (database unreachable, runner could not start)
 *   fatal    the daemon cannot go on and is about to exit
 * Lines look like: "2026-11-22T02:50:01.123Z info  listening on 127.0.0.1:7878".
 *
 * TT_LOG() checks the level before it formats anything, so a disabled debug line costs one
 * comparison.  Thread-safe: each line is written with one write(2) call.  Only the daemon's
 * programs log; the libraries return error codes instead.
 */
#ifndef TT_LOG_H
#define TT_LOG_H

#include <stdarg.h>

typedef enum tt_log_level {
    TT_LOG_DEBUG, TT_LOG_INFO, TT_LOG_NOTICE, TT_LOG_WARNING, TT_LOG_ERROR, TT_LOG_FATAL,
    TT_LOG__COUNT
} tt_log_level;

/* The current threshold (lines below it are dropped).  Read without a lock on purpose. */
extern volatile int tt_log_threshold;

/* "debug", "info", ... ; tt_log_level_parse returns -1 for an unknown name. */
const char *tt_log_level_name(tt_log_level l);
int tt_log_level_parse(const char *name);

/* Send lines to `path` (appended; NULL or "" or "-" means stderr) at threshold `level`.
 * Returns 0, or -1 with errno when the file cannot be opened (the previous sink stays). */
int tt_log_open(const char *path, tt_log_level level);
/* Reopen the file sink at `path` (after logrotate moved it): the new file takes the old
 * one's descriptor number (dup3), so a line written meanwhile by another thread goes to the
 * old or the new file, never to a closed or reused descriptor.  0; nothing to do when the
 * sink is stderr; -1 with errno when the file cannot be opened (the old sink stays). */
int tt_log_reopen(const char *path);
/* Close a file sink (back to stderr). */
void tt_log_close(void);

void tt_log_write(tt_log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tt_log_vwrite(tt_log_level l, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#define TT_LOG(lvl, ...)                                                                  \
    do {                                                                                  \
        if ((int)(lvl) >= tt_log_threshold) tt_log_write((lvl), __VA_ARGS__);             \
    } while (0)
#define tt_debug(...) TT_LOG(TT_LOG_DEBUG, __VA_ARGS__)
#define tt_info(...) TT_LOG(TT_LOG_INFO, __VA_ARGS__)
#define tt_notice(...) TT_LOG(TT_LOG_NOTICE, __VA_ARGS__)
#define tt_warning(...) TT_LOG(TT_LOG_WARNING, __VA_ARGS__)
#define tt_error(...) TT_LOG(TT_LOG_ERROR, __VA_ARGS__)
#define tt_fatal(...) TT_LOG(TT_LOG_FATAL, __VA_ARGS__)

#endif

/* SPDX-License-Identifier: MIT
 * log.c - leveled log lines with a UTC timestamp, to stderr or an append-only file.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

volatile int tt_log_threshold = TT_LOG_INFO;
static int tt_log_fd = 2;

static const char *const tt_log_names[TT_LOG__COUNT] = {"debug",   "info",  "notice",
                                                        "warning", "error", "fatal"};

const char *tt_log_level_name(tt_log_level l)
{
    return ((int)l >= 0 && l < TT_LOG__COUNT) ? tt_log_names[l] : "?";
}

int tt_log_level_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < TT_LOG__COUNT; i++)
        if (strcasecmp(name, tt_log_names[i]) == 0) return i;
    if (strcasecmp(name, "warn") == 0) return TT_LOG_WARNING;
    return -1;
}

int tt_log_open(const char *path, tt_log_level level)
{
    if (path && *path && strcmp(path, "-") != 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) return -1;
        int old = tt_log_fd;
        tt_log_fd = fd;
        if (old > 2) close(old);
    }
    tt_log_threshold = (int)level;
    return 0;
}

int tt_log_reopen(const char *path)
{
    if (!path || !*path || !strcmp(path, "-") || tt_log_fd <= 2) return 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    int rc = dup3(fd, tt_log_fd, O_CLOEXEC) < 0 ? -1 : 0;
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

void tt_log_close(void)
{
    int old = tt_log_fd;
    tt_log_fd = 2;
    if (old > 2) close(old);
}

void tt_log_vwrite(tt_log_level l, const char *fmt, va_list ap)
{
    char line[2048];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %-7s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, (int)(tv.tv_usec / 1000), tt_log_level_name(l));
    if (n < 0) return;
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0) m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2) len = sizeof line - 2;   /* truncated */
    for (size_t i = (size_t)n; i < len; i++)            /* one event, one line */
        if (line[i] == '\n' || line[i] == '\r') line[i] = ' ';
    line[len++] = '\n';
    int saved = errno;
    ssize_t w = write(tt_log_fd, line, len);
    (void)w;
    errno = saved;
}

void tt_log_write(tt_log_level l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tt_log_vwrite(l, fmt, ap);
    va_end(ap);
}

/* SPDX-License-Identifier: MIT
 * tt_rawhttp.h - raw TCP clients for tests that libcurl cannot express: slow or half-sent
 * requests, many concurrent sockets, a chosen loopback source address, a client that goes
 * away in the middle of a request.
 *
 * All sockets are blocking unless stated; every wait is bounded by a timeout.  Not
 * thread-safe per socket; independent sockets may be used from different threads.
 */
#ifndef TT_RAWHTTP_H
#define TT_RAWHTTP_H

#include <stddef.h>

/* Connect to 127.0.0.1:port from source address src ("127.0.0.2"; NULL: any).  -1 on error. */
int tt_raw_connect(int port, const char *src);
/* Send all len bytes (MSG_NOSIGNAL); 0 on success, -1 when the peer closed or reset. */
int tt_raw_send(int fd, const char *data, size_t len);
/* Read until EOF, reset, cap bytes or timeout_s; returns the bytes read (NUL-terminated in
 * buf, which holds cap + 1).  *closed is 1 when the peer closed or reset the connection. */
size_t tt_raw_read(int fd, char *buf, size_t cap, double timeout_s, int *closed);
/* Status code of an HTTP response text ("HTTP/1.1 413 ..."), 0 when none. */
int tt_raw_status(const char *resp);
/* The body of a response text (after the blank line), or "" */
const char *tt_raw_body(const char *resp);
/* Number of "HTTP/1." status lines in a response text. */
int tt_raw_status_lines(const char *resp);
/* Raise RLIMIT_NOFILE's soft limit to the hard limit; returns the new soft limit. */
long tt_raw_raise_fd_limit(void);
/* CPU seconds (user + system) used so far by process pid, -1 on error. */
double tt_raw_cpu_seconds(int pid);

#endif

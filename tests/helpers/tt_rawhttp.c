/* SPDX-License-Identifier: MIT
 * tt_rawhttp.c - raw TCP clients for the HTTP-level integration tests (tt_rawhttp.h).
 */
#include "tt_rawhttp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double tt_raw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tt_raw_connect(int port, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    if (src) {
        inet_pton(AF_INET, src, &a.sin_addr);
        if (bind(fd, (struct sockaddr *)&a, sizeof a)) { close(fd); return -1; }
    }
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) { close(fd); return -1; }
    return fd;
}

int tt_raw_send(int fd, const char *data, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(fd, data + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        off += (size_t)w;
    }
    return 0;
}

size_t tt_raw_read(int fd, char *buf, size_t cap, double timeout_s, int *closed)
{
    size_t got = 0;
    double until = tt_raw_now() + timeout_s;
    *closed = 0;
    while (got < cap) {
        int ms = (int)((until - tt_raw_now()) * 1000.0);
        if (ms <= 0) break;
        struct pollfd p = {fd, POLLIN, 0};
        int n = poll(&p, 1, ms);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        ssize_t r = recv(fd, buf + got, cap - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { *closed = 1; break; }
        got += (size_t)r;
    }
    buf[got] = '\0';
    return got;
}

int tt_raw_status(const char *resp)
{
    if (strncmp(resp, "HTTP/1.", 7) != 0 || strlen(resp) < 12) return 0;
    return atoi(resp + 9);
}

const char *tt_raw_body(const char *resp)
{
    const char *p = strstr(resp, "\r\n\r\n");
    return p ? p + 4 : "";
}

int tt_raw_status_lines(const char *resp)
{
    int n = 0;
    for (const char *p = resp; (p = strstr(p, "HTTP/1.")) != NULL; p += 7) n++;
    return n;
}

long tt_raw_raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl)) return -1;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return (long)rl.rlim_cur;
}

double tt_raw_cpu_seconds(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');     /* the command name may hold spaces */
    if (!p) return -1;
    unsigned long long ut = 0, st = 0;
    /* fields after ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt
     * cmajflt utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

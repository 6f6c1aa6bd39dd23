/* SPDX-License-Identifier: MIT
 * toolchain.c - run a toolchain command via /bin/sh -c with a timeout, limits and capped output.
 */
#include "toolchain.h"

#include "jsonutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* One captured stream: the pipe, the file, the head counter and the tail ring. */
typedef struct tt_capture {
    int pipe_fd;              /* read end, -1 once closed */
    int file_fd;
    uint64_t cap;             /* head bytes */
    uint64_t head;            /* head bytes written */
    uint64_t total;           /* bytes read from the pipe */
    char *ring;               /* ring_cap bytes: the tail kept after the head */
    size_t ring_cap, ring_len, ring_pos;
    int werr;                 /* first errno of a failed write to file_fd, 0: none */
} tt_capture;

static double tt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Write to the capture's file; a full disk loses output, not the run: the first errno is
 * kept in c->werr and later writes are skipped. */
static void tt_write_all(tt_capture *c, const char *p, size_t n)
{
    while (n > 0 && !c->werr) {
        ssize_t w = write(c->file_fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            c->werr = w < 0 ? errno : ENOSPC;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void tt_capture_feed(tt_capture *c, const char *p, size_t n)
{
    c->total += n;
    if (c->head < c->cap) {
        size_t k = (size_t)(c->cap - c->head) < n ? (size_t)(c->cap - c->head) : n;
        tt_write_all(c, p, k);
        c->head += k;
        p += k;
        n -= k;
    }
    for (size_t i = 0; i < n; i++) {       /* the rest goes into the tail ring */
        c->ring[c->ring_pos] = p[i];
        c->ring_pos = (c->ring_pos + 1) % c->ring_cap;
        if (c->ring_len < c->ring_cap) c->ring_len++;
    }
}

/* Write the tail after the head; returns 1 when bytes were dropped. */
static int tt_capture_finish(tt_capture *c)
{
    if (c->ring_len == 0) return 0;
    uint64_t omitted = c->total - c->head - c->ring_len;
    if (omitted > 0) {
        char mark[96];
        int k = snprintf(mark, sizeof mark, "\n[... %llu bytes omitted ...]\n",
                         (unsigned long long)omitted);
        tt_write_all(c, mark, (size_t)k);
    }
    size_t start = (c->ring_pos + c->ring_cap - c->ring_len) % c->ring_cap;
    size_t first = c->ring_len < c->ring_cap - start ? c->ring_len : c->ring_cap - start;
    tt_write_all(c, c->ring + start, first);
    tt_write_all(c, c->ring, c->ring_len - first);
    return omitted > 0;
}

static void tt_capture_close(tt_capture *c)
{
    if (c->pipe_fd >= 0) close(c->pipe_fd);
    if (c->file_fd >= 0) close(c->file_fd);
    free(c->ring);
    c->pipe_fd = c->file_fd = -1;
    c->ring = NULL;
}

/* Read what is available; closes the pipe at EOF. */
static void tt_capture_read(tt_capture *c)
{
    char buf[65536];
    ssize_t r = read(c->pipe_fd, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (r <= 0) {
        close(c->pipe_fd);
        c->pipe_fd = -1;
        return;
    }
    tt_capture_feed(c, buf, (size_t)r);
}

/* environ without the keys that `add` overrides, then `add`.  The array is new, the strings
 * are borrowed. */
static char **tt_build_env(const char *const *add)
{
    size_t ne = 0, na = 0;
    while (environ && environ[ne]) ne++;
    while (add && add[na]) na++;
    char **envp = malloc((ne + na + 1) * sizeof *envp);
    if (!envp) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < ne; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t klen = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        int overridden = 0;
        for (size_t j = 0; j < na && !overridden; j++)
            overridden = strncmp(add[j], environ[i], klen) == 0 && add[j][klen] == '=';
        if (!overridden) envp[n++] = environ[i];
    }
    for (size_t j = 0; j < na; j++) envp[n++] = (char *)add[j];
    envp[n] = NULL;
    return envp;
}

static void tt_set_limit(int resource, uint64_t v)
{
    if (v == 0) return;
    struct rlimit rl = {(rlim_t)v, (rlim_t)v};
    setrlimit(resource, &rl);
}

/* In the child: only async-signal-safe calls until execve. */
static void __attribute__((noreturn))
tt_child(const char *cmdline, const tt_toolchain_opts *o, char **envp, int in_fd, int out_fd,
         int err_fd)
{
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);   /* the daemon ignores both; a command gets the defaults */
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(126);
    if (o->cwd && chdir(o->cwd) != 0) {
        static const char msg[] = "tiletune: cannot enter the working directory\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(126);
    }
    tt_set_limit(RLIMIT_AS, o->mem_bytes);
    tt_set_limit(RLIMIT_CPU, o->cpu_s);
    tt_set_limit(RLIMIT_FSIZE, o->fsize_bytes);
    if (close_range(3, ~0U, 0) != 0)   /* no inherited descriptors */
        for (int fd = 3; fd < 4096; fd++) close(fd);
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmdline, NULL};
    execve("/bin/sh", argv, envp);
    _exit(127);
}

static tt_rc tt_open_capture(tt_capture *c, int dirfd, const char *name, uint64_t cap,
                             size_t tail, tt_errinfo *err)
{
    c->file_fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (c->file_fd < 0)
        return tt_errf(err, TT_EIO, name, "cannot create output file: %s", strerror(errno));
    c->cap = cap;
    c->ring_cap = tail;
    c->ring = malloc(tail);   /* untouched pages of a large tail cost no memory */
    if (!c->ring) return tt_errf(err, TT_ENOMEM, name, "out of memory");
    return TT_OK;
}

/* Until the command's process group is done: reap the shell (killing what it left behind,
 * and the group at the timeout), and drain both pipes into their captures; leftover writers
 * get a second after the shell exits.  Returns the shell's wait status (-1: unknown, it was
 * reaped behind our back); sets res->wall_s and res->timed_out. */
static int tt_supervise(pid_t pid, double t0, const tt_toolchain_opts *o, tt_capture cs[2],
                        tt_toolchain_result *res)
{
    double deadline = o->timeout_s > 0 ? t0 + o->timeout_s : 0;
    double grace_end = 0;   /* after the shell exits: how long leftover writers may linger */
    int reaped = 0, status = 0;
    for (;;) {
        if (!reaped) {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            /* Peek without reaping: while the shell is a zombie its pid (= the group id)
             * cannot be reused, so killing the group is safe. */
            int wr = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
            if (wr != 0 && errno == ECHILD) {   /* reaped behind our back (SIGCHLD ignored) */
                kill(-pid, SIGKILL);
                reaped = 1;
                status = -1;
                res->wall_s = tt_now() - t0;
                grace_end = tt_now() + 1.0;
            } else if (wr == 0 && si.si_pid == pid) {
                kill(-pid, SIGKILL);
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
                }
                reaped = 1;
                res->wall_s = tt_now() - t0;
                grace_end = tt_now() + 1.0;
            } else if (deadline > 0 && tt_now() >= deadline && !res->timed_out) {
                kill(-pid, SIGKILL);
                res->timed_out = 1;
            } else if (o->stop && atomic_load(o->stop) && !res->stopped && !res->timed_out) {
                kill(-pid, SIGKILL);
                res->stopped = 1;
            }
        }
        if (reaped && cs[0].pipe_fd < 0 && cs[1].pipe_fd < 0) break;
        if (reaped && tt_now() >= grace_end) break;
        struct pollfd pf[2];
        int np = 0;
        for (int i = 0; i < 2; i++)
            if (cs[i].pipe_fd >= 0) pf[np++] = (struct pollfd){.fd = cs[i].pipe_fd, .events = POLLIN};
        int wait_ms = 20;
        if (np == 0) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        int pr = poll(pf, (nfds_t)np, wait_ms);
        if (pr < 0 && errno != EINTR) break;
        if (pr <= 0) continue;
        for (int k = 0; k < np; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            for (int i = 0; i < 2; i++)
                if (cs[i].pipe_fd == pf[k].fd) tt_capture_read(&cs[i]);
        }
    }
    return status;
}

/* How the shell ended, from its wait status (-1: neither exited nor signaled, "ended
 * abnormally"). */
static void tt_decode_status(int status, tt_toolchain_result *res)
{
    if (status == -1) return;
    if (WIFEXITED(status)) {
        res->exited = 1;
        res->exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->signaled = 1;
        res->term_signal = WTERMSIG(status);
    }
}

tt_rc tt_toolchain_run(const char *cmdline, const tt_toolchain_opts *opts,
                       tt_toolchain_result *res, tt_errinfo *err)
{
    memset(res, 0, sizeof *res);
    if (!cmdline || !*cmdline || !opts)
        return tt_errf(err, TT_EINVAL, "toolchain", "empty command line");
    const tt_toolchain_opts *o = opts;
    uint64_t cap = o->output_cap ? o->output_cap : TT_TOOLCHAIN_DEFAULT_CAP;
    tt_capture cs[2] = {{.pipe_fd = -1, .file_fd = -1}, {.pipe_fd = -1, .file_fd = -1}};
    int pout[2] = {-1, -1}, perr[2] = {-1, -1}, in_fd = -1;
    char **envp = NULL;
    tt_rc rc = TT_OK;

    int dirfd = o->cwd ? open(o->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
    if (dirfd < 0 && o->cwd)
        return tt_errf(err, TT_EIO, o->cwd, "cannot open working directory: %s",
                       strerror(errno));
    size_t out_tail = o->stdout_tail ? (size_t)o->stdout_tail : TT_TOOLCHAIN_TAIL;
    rc = tt_open_capture(&cs[0], dirfd, o->stdout_name ? o->stdout_name : "stdout.txt", cap,
                         out_tail, err);
    if (rc == TT_OK)
        rc = tt_open_capture(&cs[1], dirfd, o->stderr_name ? o->stderr_name : "stderr.txt",
                             cap, TT_TOOLCHAIN_TAIL, err);
    if (dirfd >= 0) close(dirfd);
    if (rc != TT_OK) goto done;
    if (pipe2(pout, O_CLOEXEC) != 0 || pipe2(perr, O_CLOEXEC) != 0 ||
        (in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        rc = tt_errf(err, TT_EIO, "toolchain", "pipe: %s", strerror(errno));
        goto done;
    }
    envp = tt_build_env(o->env);
    if (!envp) {
        rc = tt_errf(err, TT_ENOMEM, "toolchain", "out of memory");
        goto done;
    }

    double t0 = tt_now();
    pid_t pid = fork();
    if (pid < 0) {
        rc = tt_errf(err, TT_EIO, "toolchain", "fork: %s", strerror(errno));
        goto done;
    }
    if (pid == 0) tt_child(cmdline, o, envp, in_fd, pout[1], perr[1]);
    setpgid(pid, pid);   /* also done by the child: whichever runs first wins the race */
    close(pout[1]);
    close(perr[1]);
    pout[1] = perr[1] = -1;
    cs[0].pipe_fd = pout[0];
    cs[1].pipe_fd = perr[0];
    pout[0] = perr[0] = -1;
    for (int i = 0; i < 2; i++) fcntl(cs[i].pipe_fd, F_SETFL, O_NONBLOCK);

    tt_decode_status(tt_supervise(pid, t0, o, cs, res), res);
    res->out_truncated = tt_capture_finish(&cs[0]);
    res->err_truncated = tt_capture_finish(&cs[1]);
    res->out_bytes = cs[0].total;
    res->err_bytes = cs[1].total;
    res->out_errno = cs[0].werr;
    res->err_errno = cs[1].werr;

done:
    for (int i = 0; i < 2; i++) tt_capture_close(&cs[i]);
    int fds[] = {pout[0], pout[1], perr[0], perr[1], in_fd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0) close(fds[i]);
    free(envp);
    if (rc != TT_OK) memset(res, 0, sizeof *res);
    return rc;
}

size_t tt_toolchain_tail(const char *path, char *buf, size_t cap)
{
    if (!buf || cap == 0) return 0;
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    long start = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        /* read a little more than needed so trailing white space does not eat the room */
        long want = (long)cap - 1 + 64;
        start = size > want ? size - want : 0;
        fseek(f, start, SEEK_SET);
    }
    char tmp[4096 + 64];
    size_t want = cap - 1 + 64 < sizeof tmp ? cap - 1 + 64 : sizeof tmp;
    size_t n = fread(tmp, 1, want, f);
    fclose(f);
    while (n > 0 && (tmp[n - 1] == '\n' || tmp[n - 1] == ' ' || tmp[n - 1] == '\r' ||
                     tmp[n - 1] == '\t'))
        n--;
    size_t from = n > cap - 1 ? n - (cap - 1) : 0;
    if (from > 0 || start > 0) {   /* we start mid-file: begin at the next line if any */
        for (size_t i = from; i < n; i++)
            if (tmp[i] == '\n' && i + 1 < n) {
                from = i + 1;
                break;
            }
    }
    while (from < n && ((unsigned char)tmp[from] & 0xC0) == 0x80) from++;   /* a cut char */
    size_t len = n - from;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)tmp[from + i];
        buf[i] = (ch == '\n' || ch == '\t' || (ch >= 0x20 && ch < 0x7f) || ch >= 0x80) ? (char)ch : '?';
    }
    buf[len] = '\0';
    tt_utf8_fix(buf);   /* compiler messages quote with UTF-8; binary output is not text */
    return strlen(buf);
}

const char *tt_toolchain_describe(const tt_toolchain_result *res, double timeout_s, char *buf,
                                  size_t cap)
{
    if (res->timed_out)
        snprintf(buf, cap, "timed out after %g s", timeout_s);
    else if (res->stopped)
        snprintf(buf, cap, "stopped");
    else if (res->exited && res->exit_code > 128 && res->exit_code < 128 + 65)
        snprintf(buf, cap, "exit %d: a command was killed by signal %d (%s)", res->exit_code,
                 res->exit_code - 128, strsignal(res->exit_code - 128));
    else if (res->exited)
        snprintf(buf, cap, "exit %d", res->exit_code);
    else if (res->signaled)
        snprintf(buf, cap, "killed by signal %d (%s)", res->term_signal,
                 strsignal(res->term_signal));
    else
        snprintf(buf, cap, "ended abnormally");
    return buf;
}

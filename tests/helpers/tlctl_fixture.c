/* SPDX-License-Identifier: MIT
 * tlctl_fixture.c - the daemon, temp dir and tlctl subprocess runner of the tlctl tests.
 */
#include "tlctl_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tt_test.h"

tt_daemon tt_tlfx_d;
char *tt_tlfx_tmp;
char *tt_tlfx_bin;
void (*tt_tlfx_at)(void);

const char *tt_tlfx_js(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

void tt_tlfx_free(tt_tlfx_res *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

static void slurp(int fd, char **buf, size_t *n, size_t *cap)
{
    char tmp[4096];
    ssize_t k = read(fd, tmp, sizeof tmp);
    if (k <= 0) return;
    if (*n + (size_t)k + 1 > *cap) {
        *cap = (*n + (size_t)k + 1) * 2;
        *buf = realloc(*buf, *cap);
    }
    memcpy(*buf + *n, tmp, (size_t)k);
    *n += (size_t)k;
    (*buf)[*n] = '\0';
}

tt_tlfx_res tt_tlfx_run(const char *const *env, double sigint_after, const char *const *argv)
{
    tt_tlfx_res r = {-1, NULL, NULL};
    int po[2], pe[2];
    if (pipe(po) || pipe(pe)) return r;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]); close(pe[0]); close(po[1]); close(pe[1]);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        setenv("TILETUNE_URL", tt_tlfx_d.url, 1);
        unsetenv("TILETUNE_TOKEN");
        unsetenv("TLCTL_CONFIG");
        unsetenv("XDG_CONFIG_HOME");
        setenv("HOME", tt_tlfx_tmp, 1);
        setenv("NO_COLOR", "1", 1);
        for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
        const char *args[40];
        int n = 0;
        args[n++] = tt_tlfx_bin;
        for (int i = 0; argv[i] && n < 39; i++) args[n++] = argv[i];
        args[n] = NULL;
        execv(tt_tlfx_bin, (char *const *)args);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t no = 0, co = 0, ne = 0, ce = 0;
    r.out = calloc(1, 1);
    r.err = calloc(1, 1);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int open_o = 1, open_e = 1, sent = 0;
    while (open_o || open_e) {
        struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
        int k = poll(fds, 2, 100);
        if (k > 0) {
            if (fds[0].revents) {
                size_t before = no;
                slurp(po[0], &r.out, &no, &co);
                if (no == before) open_o = 0, fds[0].fd = -1;
            }
            if (fds[1].revents) {
                size_t before = ne;
                slurp(pe[0], &r.err, &ne, &ce);
                if (ne == before) open_e = 0;
            }
            if (!open_o && po[0] >= 0) { close(po[0]); po[0] = -1; }
            if (!open_e && pe[0] >= 0) { close(pe[0]); pe[0] = -1; }
        }
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
        if (sigint_after > 0 && !sent && el >= sigint_after) {
            if (tt_tlfx_at) tt_tlfx_at();
            else kill(pid, SIGINT);
            sent = 1;
        }
        if (el > tt_daemon_slow(60)) { kill(pid, SIGKILL); break; }
    }
    if (po[0] >= 0) close(po[0]);
    if (pe[0] >= 0) close(pe[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    return r;
}

int tt_tlfx_one_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl && nl[1] == '\0' && strncmp(s, "tlctl", 5) == 0;
}

int tt_tlfx_init(const char *prefix)
{
    tt_tlfx_tmp = tt_test_tmpdir(prefix);
    tt_tlfx_bin = tt_test_bin("tlctl");
    if (!tt_tlfx_tmp || !tt_tlfx_bin || access(tt_tlfx_bin, X_OK)) return -1;
    return tt_daemon_start(&tt_tlfx_d, "{\"max_body_bytes\": 16777216}");
}

int tt_tlfx_cleanup(void)
{
    tt_daemon_cleanup(&tt_tlfx_d);
    if (CU_get_number_of_failures() == 0) tt_test_rmrf(tt_tlfx_tmp);
    free(tt_tlfx_tmp);
    free(tt_tlfx_bin);
    return 0;
}

void tt_tlfx_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

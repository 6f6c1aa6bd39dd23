/* SPDX-License-Identifier: MIT
 * test_toolchain.c - the toolchain runner: exit status, signals, timeout of a process group,
 * output cap with tail, an output file that cannot be written, a stop flag, environment, working directory and resource limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "toolchain.h"
#include "tt_test.h"

static char *g_dir;

static int setup(void)
{
    g_dir = tt_test_tmpdir("tt-toolchain");
    return g_dir ? 0 : 1;
}

static int teardown(void)
{
    tt_test_rmrf(g_dir);
    free(g_dir);
    return 0;
}

static char *slurp(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    return tt_test_read_file(path, len);
}

static tt_rc run(const char *cmd, tt_toolchain_opts *o, tt_toolchain_result *r)
{
    o->cwd = g_dir;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    return tt_toolchain_run(cmd, o, r, &e);
}

/* Table: command -> how it must end. */
static const struct {
    const char *cmd;
    int exited, code, signaled, sig;
} exit_cases[] = {
    {"exit 0", 1, 0, 0, 0},
    {"true", 1, 0, 0, 0},
    {"exit 3", 1, 3, 0, 0},
    {"false", 1, 1, 0, 0},
    {"no_such_command_tt_xyz", 1, 127, 0, 0},
    {"kill -9 $$", 0, 0, 1, SIGKILL},
    {"kill -TERM $$", 0, 0, 1, SIGTERM},
};

static void test_exit_status(void)
{
    for (size_t i = 0; i < sizeof exit_cases / sizeof exit_cases[0]; i++) {
        tt_toolchain_opts o = {0};
        tt_toolchain_result r;
        CU_ASSERT_EQUAL_FATAL(run(exit_cases[i].cmd, &o, &r), TT_OK);
        CU_ASSERT_EQUAL(r.exited, exit_cases[i].exited);
        CU_ASSERT_EQUAL(r.signaled, exit_cases[i].signaled);
        if (r.exited) CU_ASSERT_EQUAL(r.exit_code, exit_cases[i].code);
        if (r.signaled) CU_ASSERT_EQUAL(r.term_signal, exit_cases[i].sig);
        CU_ASSERT_EQUAL(r.timed_out, 0);
        if (r.exited != exit_cases[i].exited || r.exit_code != exit_cases[i].code)
            fprintf(stderr, "case %zu (%s): exited=%d code=%d\n", i, exit_cases[i].cmd, r.exited,
                    r.exit_code);
    }
}

static void test_env_and_cwd(void)
{
    const char *env[] = {"TT_FOO=bar baz", "HOME=/tt/home", NULL};
    tt_toolchain_opts o = {.env = env};
    tt_toolchain_result r;
    CU_ASSERT_EQUAL_FATAL(run("echo \"$TT_FOO|$HOME|$(pwd)\"; echo err >&2", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.exit_code, 0);
    char *out = slurp("stdout.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    char want[600];
    char real[512];
    CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(g_dir, real));
    snprintf(want, sizeof want, "bar baz|/tt/home|%s\n", real);
    CU_ASSERT_STRING_EQUAL(out, want);
    free(out);
    char *er = slurp("stderr.txt", NULL);
    CU_ASSERT_STRING_EQUAL(er, "err\n");
    free(er);
    /* PATH is inherited (not overridden) */
    CU_ASSERT_EQUAL_FATAL(run("test -n \"$PATH\"", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.exit_code, 0);
    /* descriptors of the caller are not inherited (this one has no O_CLOEXEC) */
    int fd = open("/dev/null", O_RDONLY);
    CU_ASSERT_FATAL(fd > 2);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "test -e /proc/$$/fd/%d && exit 7; test -e /proc/$$/fd/1", fd);
    CU_ASSERT_EQUAL_FATAL(run(cmd, &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.exit_code, 0);
    close(fd);
    /* stdin is /dev/null: cat ends at once */
    o.timeout_s = 5;
    CU_ASSERT_EQUAL_FATAL(run("cat", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.timed_out, 0);
    CU_ASSERT_EQUAL(r.exit_code, 0);
}

static int proc_alive(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

static void test_timeout_kills_group(void)
{
    tt_toolchain_opts o = {.timeout_s = 0.5};
    tt_toolchain_result r;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CU_ASSERT_EQUAL_FATAL(run("sleep 30 & echo $! > bg.pid; sleep 30; echo never", &o, &r), TT_OK);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double el = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    CU_ASSERT_EQUAL(r.timed_out, 1);
    CU_ASSERT_EQUAL(r.signaled, 1);
    CU_ASSERT_EQUAL(r.term_signal, SIGKILL);
    CU_ASSERT(el >= 0.45 && el < 5.0);
    CU_ASSERT(r.wall_s >= 0.45 && r.wall_s < 5.0);
    char *pid = slurp("bg.pid", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pid);
    long bg = strtol(pid, NULL, 10);
    free(pid);
    CU_ASSERT(bg > 1);
    int alive = 1;
    for (int i = 0; i < 100 && alive; i++) {   /* SIGKILL is asynchronous: allow 1 s */
        alive = proc_alive(bg);
        if (alive) usleep(10000);
    }
    CU_ASSERT_EQUAL(alive, 0);
    char *out = slurp("stdout.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL(out);
    if (out) CU_ASSERT_PTR_NULL(strstr(out, "never"));
    free(out);
    char buf[64];
    CU_ASSERT_STRING_EQUAL(tt_toolchain_describe(&r, 0.5, buf, sizeof buf), "timed out after 0.5 s");
}

/* A background process left behind by a command that exited is killed with its group. */
static void test_leftovers_killed(void)
{
    tt_toolchain_opts o = {.timeout_s = 10};
    tt_toolchain_result r;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CU_ASSERT_EQUAL_FATAL(run("sleep 30 & echo $! > bg2.pid; exit 0", &o, &r), TT_OK);
    clock_gettime(CLOCK_MONOTONIC, &b);
    CU_ASSERT((double)(b.tv_sec - a.tv_sec) < 4.0);
    CU_ASSERT_EQUAL(r.timed_out, 0);
    CU_ASSERT_EQUAL(r.exit_code, 0);
    char *pid = slurp("bg2.pid", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pid);
    long bg = strtol(pid, NULL, 10);
    free(pid);
    int alive = 1;
    for (int i = 0; i < 100 && alive; i++) {
        alive = proc_alive(bg);
        if (alive) usleep(10000);
    }
    CU_ASSERT_EQUAL(alive, 0);
}

static void test_output_cap(void)
{
    tt_toolchain_opts o = {.output_cap = 1000, .stdout_name = "big.out", .stderr_name = "big.err"};
    tt_toolchain_result r;
    CU_ASSERT_EQUAL_FATAL(
        run("head -c 100000 /dev/zero | tr '\\0' a; echo; echo '{\"last\": 1}'", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.exit_code, 0);
    CU_ASSERT_EQUAL(r.out_bytes, 100000u + 1u + 12u);
    CU_ASSERT_EQUAL(r.out_truncated, 1);
    CU_ASSERT_EQUAL(r.err_truncated, 0);
    size_t len = 0;
    char *out = slurp("big.out", &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT(len <= 1000 + TT_TOOLCHAIN_TAIL + 64);
    CU_ASSERT(len > 1000);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "bytes omitted"));
    CU_ASSERT(len >= 12 && strcmp(out + len - 12, "{\"last\": 1}\n") == 0);
    CU_ASSERT_EQUAL(out[0], 'a');
    CU_ASSERT_EQUAL(out[999], 'a');
    free(out);
    /* small output under the cap is kept whole, without a marker */
    o.output_cap = 0;
    CU_ASSERT_EQUAL_FATAL(run("printf 'x%.0s' $(seq 1 50)", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.out_bytes, 50u);
    CU_ASSERT_EQUAL(r.out_truncated, 0);
    out = slurp("big.out", &len);
    CU_ASSERT_EQUAL(len, 50u);
    free(out);
}

/* An output file that cannot be written (a full disk: /dev/full) does not stop the run, and
 * the result says which stream lost its output and why. */
static void test_output_write_error(void)
{
    char full[600];
    snprintf(full, sizeof full, "%s/full.out", g_dir);
    unlink(full);
    CU_ASSERT_EQUAL_FATAL(symlink("/dev/full", full), 0);
    tt_toolchain_opts o = {.stdout_name = "full.out", .stderr_name = "ok.err"};
    tt_toolchain_result r;
    CU_ASSERT_EQUAL_FATAL(run("echo '{\"latency_us\": [5]}'; echo warn >&2", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.exited, 1);
    CU_ASSERT_EQUAL(r.exit_code, 0);
    CU_ASSERT_EQUAL(r.out_errno, ENOSPC);
    CU_ASSERT_EQUAL(r.err_errno, 0);
    unlink(full);
}

/* A stop flag that is set kills the group like the timeout does, and says so. */
static void test_stop_flag(void)
{
    atomic_int stop = 1;
    tt_toolchain_opts o = {.timeout_s = 20, .stop = &stop};
    tt_toolchain_result r;
    CU_ASSERT_EQUAL_FATAL(run("sleep 10", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.stopped, 1);
    CU_ASSERT_EQUAL(r.timed_out, 0);
    CU_ASSERT(r.wall_s < 5);
    char d[96];
    CU_ASSERT_STRING_EQUAL(tt_toolchain_describe(&r, 20, d, sizeof d), "stopped");
    atomic_store(&stop, 0);   /* not set: the command ends by itself */
    CU_ASSERT_EQUAL_FATAL(run("exit 4", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.stopped, 0);
    CU_ASSERT_EQUAL(r.exit_code, 4);
}

static void test_stderr_tail(void)
{
    tt_toolchain_opts o = {0};
    tt_toolchain_result r;
    CU_ASSERT_EQUAL_FATAL(run("for i in $(seq 1 200); do echo \"line $i\" >&2; done; exit 2", &o, &r),
                          TT_OK);
    CU_ASSERT_EQUAL(r.exit_code, 2);
    char path[512], buf[32];
    snprintf(path, sizeof path, "%s/stderr.txt", g_dir);
    size_t n = tt_toolchain_tail(path, buf, sizeof buf);
    CU_ASSERT(n > 0 && n < sizeof buf);
    /* starts at a line boundary and ends with the last line */
    CU_ASSERT_EQUAL(strncmp(buf, "line ", 5), 0);
    CU_ASSERT(n >= 8 && strcmp(buf + n - 8, "line 200") == 0);
    CU_ASSERT_EQUAL(tt_toolchain_tail("/nonexistent/tt/file", buf, sizeof buf), 0u);
    CU_ASSERT_STRING_EQUAL(buf, "");
    char d[96];
    CU_ASSERT_STRING_EQUAL(tt_toolchain_describe(&r, 0, d, sizeof d), "exit 2");
    /* a shell reports a child killed by a signal as exit 128 + signal */
    CU_ASSERT_EQUAL_FATAL(run("sh -c 'kill -SEGV $$'; exit $?", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(r.exit_code, 139);
    CU_ASSERT_PTR_NOT_NULL(strstr(tt_toolchain_describe(&r, 0, d, sizeof d), "signal 11"));
    CU_ASSERT_EQUAL_FATAL(run("kill -KILL $$", &o, &r), TT_OK);
    CU_ASSERT_EQUAL(strncmp(tt_toolchain_describe(&r, 0, d, sizeof d), "killed by signal 9", 18), 0);
}

/* The tail quoted in a trial's error is valid UTF-8 (it becomes a JSON string and a
 * PostgreSQL text value): a character cut by the start of the tail is dropped, bytes that are
 * not UTF-8 become '?', whole characters (gcc's quotes) stay. */
static void test_tail_utf8(void)
{
    static const struct {
        const char *text;   /* file content */
        size_t cap;
        const char *want;
    } rows[] = {
        {"error: \xe2\x80\x98x\xe2\x80\x99 undeclared\n", 64,
         "error: \xe2\x80\x98x\xe2\x80\x99 undeclared"},
        /* 50 quotes of 3 bytes, no newline: the tail starts inside a character */
        {"\xe2\x80\x98\xe2\x80\x98\xe2\x80\x98\xe2\x80\x98\xe2\x80\x98\xe2\x80\x98\xe2\x80\x98"
         "\xe2\x80\x98\xe2\x80\x98\xe2\x80\x98", 9, "\xe2\x80\x98\xe2\x80\x98"},
        {"bad \xff\xfe bytes\n", 64, "bad ?? bytes"},
        {"cut at the end \xe2\x80", 64, "cut at the end "},
        {"caf\xc3\xa9\x01\n", 64, "caf\xc3\xa9?"},
    };
    char path[512];
    snprintf(path, sizeof path, "%s/tail.txt", g_dir);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        FILE *f = fopen(path, "wb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(rows[i].text, f);
        fclose(f);
        char buf[128];
        size_t n = tt_toolchain_tail(path, buf, rows[i].cap);
        CU_ASSERT_EQUAL(n, strlen(buf));
        CU_ASSERT_STRING_EQUAL(buf, rows[i].want);
        if (strcmp(buf, rows[i].want) != 0) fprintf(stderr, "row %zu: '%s'\n", i, buf);
    }
}

static void test_limits(void)
{
    tt_toolchain_opts o = {.fsize_bytes = 1000, .timeout_s = 20};
    tt_toolchain_result r;
    CU_ASSERT_EQUAL_FATAL(run("head -c 5000 /dev/zero > big.bin", &o, &r), TT_OK);
    CU_ASSERT(!(r.exited && r.exit_code == 0));
    struct stat st;
    char path[512];
    snprintf(path, sizeof path, "%s/big.bin", g_dir);
    CU_ASSERT(stat(path, &st) == 0 && st.st_size <= 1000);

    tt_toolchain_opts m = {.mem_bytes = 64ull << 20, .timeout_s = 20};
    CU_ASSERT_EQUAL_FATAL(run("awk 'BEGIN { s = \"xxxxxxxx\"; while (1) s = s s }'", &m, &r), TT_OK);
    CU_ASSERT(!(r.exited && r.exit_code == 0));
    CU_ASSERT_EQUAL(r.timed_out, 0);

    tt_toolchain_opts c = {.cpu_s = 1, .timeout_s = 20};
    CU_ASSERT_EQUAL_FATAL(run("while :; do :; done", &c, &r), TT_OK);
    CU_ASSERT_EQUAL(r.signaled, 1);
    CU_ASSERT(r.term_signal == SIGXCPU || r.term_signal == SIGKILL);
    CU_ASSERT_EQUAL(r.timed_out, 0);
}

static void test_bad_args(void)
{
    tt_toolchain_opts o = {0};
    tt_toolchain_result r;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_toolchain_run(NULL, &o, &r, &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_toolchain_run("", &o, &r, &e), TT_EINVAL);
    o.cwd = "/nonexistent/tt-dir";
    CU_ASSERT_EQUAL(tt_toolchain_run("true", &o, &r, &e), TT_EIO);
    CU_ASSERT_STRING_EQUAL(e.path, "/nonexistent/tt-dir");
    CU_ASSERT_EQUAL(r.exited, 0);
    o.cwd = g_dir;
    o.stdout_name = "no/such/dir/out.txt";
    CU_ASSERT_EQUAL(tt_toolchain_run("true", &o, &r, &e), TT_EIO);
}

/* A process that ignores SIGCHLD has its children reaped by the kernel: the run must still
 * end (status unknown) instead of waiting forever. */
static void test_sigchld_ignored(void)
{
    struct sigaction old, ign = {.sa_handler = SIG_IGN};
    sigemptyset(&ign.sa_mask);
    CU_ASSERT_EQUAL_FATAL(sigaction(SIGCHLD, &ign, &old), 0);
    tt_toolchain_opts o = {.timeout_s = 10};
    tt_toolchain_result r;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    tt_rc rc = run("echo hi; exit 3", &o, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    sigaction(SIGCHLD, &old, NULL);
    CU_ASSERT_EQUAL(rc, TT_OK);
    CU_ASSERT_EQUAL(r.timed_out, 0);
    CU_ASSERT((double)(b.tv_sec - a.tv_sec) < 5.0);
    CU_ASSERT_EQUAL(r.exited, 0);
    char d[64];
    CU_ASSERT_STRING_EQUAL(tt_toolchain_describe(&r, 10, d, sizeof d), "ended abnormally");
}

static const tt_test_case cases[] = {
    {"exit_status", test_exit_status},
    {"env_and_cwd", test_env_and_cwd},
    {"timeout_kills_group", test_timeout_kills_group},
    {"leftovers_killed", test_leftovers_killed},
    {"output_cap", test_output_cap},
    {"output_write_error", test_output_write_error},
    {"stop_flag", test_stop_flag},
    {"stderr_tail", test_stderr_tail},
    {"tail_utf8", test_tail_utf8},
    {"limits", test_limits},
    {"bad_args", test_bad_args},
    {"sigchld_ignored", test_sigchld_ignored},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"toolchain", setup, teardown, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

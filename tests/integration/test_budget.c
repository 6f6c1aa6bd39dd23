/* SPDX-License-Identifier: MIT
 * test_budget.c - issue 9 items 5 and 6 at the HTTP level: every predict/simulate request has
 * a work budget from the config (anonymous requests a smaller one, refused with 422
 * over_budget naming the config key), heavy requests share a small pool (503 busy with
 * Retry-After when it is full), work stops when the client disconnects, and SIGTERM ends the
 * daemon within shutdown_grace, handing the in-flight request back with 503.
 *
 * "Endless" work is a predict over the gemm template with four extra unused params of 64
 * values each (1.7e12 configs): it would run for days, so only a stopped request can end.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "jsonutil.h"
#include "tt_daemon.h"
#include "tt_rawhttp.h"
#include "tt_test.h"

static tt_daemon D;
static char *g_endless;           /* body of an endless predict */
/* An endless simulate: causal flash attention over 2^20 tokens with the smallest tiles,
 * traced (no steady-state shortcut): every wave has its own shape, billions of events. */
static const char *g_endless_sim =
    "{\"template\":\"flash_attn_fwd\",\"target\":\"a2\",\"trace\":true,\"problem\":{\"B\":1,"
    "\"H\":1,\"H_kv\":1,\"S_q\":1048576,\"S_kv\":1048576,\"D\":128,\"causal\":1},"
    "\"config\":{\"block_M\":16,\"block_N\":32,\"stages\":1}}";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int suite_init(void)
{
    if (tt_daemon_start(&D, "{\"workers\": 0, \"predict_work_anon\": 1e5, "
                            "\"predict_work_token\": 1e18, \"simulate_events_anon\": 1000, "
                            "\"simulate_events_token\": 1000000000000, "
                            "\"request_seconds_token\": 120, \"max_space\": 1e13, "
                            "\"max_heavy_requests\": 1, \"shutdown_grace\": 1, "
                            "\"max_trace_bytes\": 65536, \"max_import_bytes\": 65536}"))
        return 1;
    tt_hres r;
    if (tt_daemon_req(&D, "GET", "/v1/templates/gemm", NULL, NULL, 0, &r) || r.status != 200) {
        tt_hres_free(&r);
        return 1;
    }
    json_t *doc = json_deep_copy(json_object_get(r.json, "document"));
    tt_hres_free(&r);
    if (!doc) return 1;
    json_object_set_new(doc, "name", json_string("endless"));
    json_t *params = json_object_get(doc, "params");
    /* 3 x 64 values: gemm's 1.2 M configs x 2^18 stays below the space limit (2^40) */
    for (int p = 0; p < 3; p++) {
        json_t *dom = json_array();
        for (int v = 1; v <= 64; v++) json_array_append_new(dom, json_integer(v));
        char name[8];
        snprintf(name, sizeof name, "x%d", p);
        json_object_set_new(params, name, dom);
    }
    char *tj = tt_json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!tj) return 1;
    size_t n = strlen(tj) + 256;
    g_endless = malloc(n);
    snprintf(g_endless, n, "{\"template\":%s,\"target\":\"a2\",\"problem\":{\"M\":4096,"
             "\"N\":4096,\"K\":4096},\"top\":3}", tj);
    free(tj);
    return 0;
}

static int suite_clean(void)
{
    tt_daemon_cleanup(&D);
    free(g_endless);
    return 0;
}

static const char *PREDICT = "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":{\"M\":4096,"
                             "\"N\":4096,\"K\":4096},\"top\":3}";
/* a simulation of about 2 300 events (model numbers; the count is what matters here) */
static const char *SIMULATE = "{\"template\":\"gemm\",\"target\":\"a2\","
                              "\"problem\":{\"M\":4096,\"N\":4096,\"K\":65536},\"config\":{\"block_M\":128,\"block_N\":256,"
                              "\"block_K\":64,\"K_L1\":256,\"S1\":2,\"S2\":2}}";

static void test_predict_budget_by_tier(void)
{
    /* 102 400 configs x (constraints + 1) is over the anonymous budget of 1e5 */
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/predict", NULL, PREDICT, strlen(PREDICT), &r), 0);
    CU_ASSERT_EQUAL(r.status, 422);
    CU_ASSERT_STRING_EQUAL(tt_hres_code(&r), "over_budget");
    const char *msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT(msg && strstr(msg, "predict_work_anon") != NULL);
    tt_hres_free(&r);
    /* a token holder has the larger budget */
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/predict", TT_TOKEN_READ, PREDICT,
                                  strlen(PREDICT), &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(r.json, "results")), 3);
    tt_hres_free(&r);
}

static void test_simulate_budget_by_tier(void)
{
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/simulate", NULL, SIMULATE, strlen(SIMULATE), &r), 0);
    CU_ASSERT_EQUAL(r.status, 422);
    CU_ASSERT_STRING_EQUAL(tt_hres_code(&r), "over_budget");
    const char *msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT(msg && strstr(msg, "simulate_events_anon") != NULL);
    tt_hres_free(&r);
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/simulate", TT_TOKEN_READ, SIMULATE,
                                  strlen(SIMULATE), &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_hres_free(&r);
}

static void test_trace_cut(void)
{
    /* item 6: a trace larger than max_trace_bytes (64 KiB here) is cut at an event, with a
     * note, and the answer stays small */
    const char *body = "{\"template\":\"gemm\",\"target\":\"a2\",\"trace\":true,"
                       "\"problem\":{\"M\":4096,\"N\":4096,\"K\":4096},\"config\":{\"block_M\":128,"
                       "\"block_N\":256,\"block_K\":64,\"K_L1\":256,\"S1\":2,\"S2\":2}}";
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/simulate", TT_TOKEN_READ, body, strlen(body), &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT(json_is_true(json_object_get(r.json, "trace_truncated")));
    const char *note = json_string_value(json_object_get(r.json, "trace_note"));
    CU_ASSERT(note && strstr(note, "max_trace_bytes") != NULL);
    const json_t *tr = json_object_get(r.json, "trace");
    CU_ASSERT(json_is_array(tr) && json_array_size(tr) > 10);
    CU_ASSERT(r.len < 3 * 65536);
    tt_hres_free(&r);
}

/* gzip of n spaces (a small "bomb"): malloc'd, *len bytes. */
static unsigned char *gzip_spaces(size_t n, size_t *len)
{
    unsigned char *in = malloc(n), *out = malloc(n / 100 + 4096);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (!in || !out || deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY)) {
        free(in);
        free(out);
        return NULL;
    }
    memset(in, ' ', n);
    z.next_in = in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)(n / 100 + 4096);
    int zr = deflate(&z, Z_FINISH);
    *len = z.total_out;
    deflateEnd(&z);
    free(in);
    if (zr != Z_STREAM_END) { free(out); return NULL; }
    return out;
}

static void test_import_inflate_limit(void)
{
    /* item 6: 4 MiB that gzip to a few KiB; the import limit (64 KiB here) stops inflating */
    size_t len = 0;
    unsigned char *gz = gzip_spaces(4u << 20, &len);
    CU_ASSERT_FATAL(gz != NULL);
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/import?format=t4", TT_TOKEN_TUNE,
                                  (const char *)gz, len, &r), 0);
    CU_ASSERT_EQUAL(r.status, 413);
    const char *msg = json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT(msg && strstr(msg, "max_import_bytes") != NULL);
    tt_hres_free(&r);
    /* admin tokens have the larger limit: the same body is inflated (and then refused as
     * not JSON, which is what it is) */
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/import?format=t4", TT_TOKEN_ADMIN,
                                  (const char *)gz, len, &r), 0);
    CU_ASSERT(r.status != 413 && r.status >= 400 && r.status < 500);
    tt_hres_free(&r);
    free(gz);
}

/* Start an endless request (the predict, or sim = 1: the simulate) on a raw socket (token:
 * the big budget); returns the socket. */
static int start_endless_of(int sim)
{
    int fd = tt_raw_connect(D.port, NULL);
    if (fd < 0) return -1;
    const char *body = sim ? g_endless_sim : g_endless;
    size_t n = strlen(body);
    char head[512];
    int hl = snprintf(head, sizeof head, "POST /v1/%s HTTP/1.1\r\nHost: x\r\n"
                      "Authorization: Bearer %s\r\nContent-Length: %zu\r\n\r\n",
                      sim ? "simulate" : "predict", TT_TOKEN_READ, n);
    if (tt_raw_send(fd, head, (size_t)hl) || tt_raw_send(fd, body, n)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int start_endless(void) { return start_endless_of(0); }

static void test_heavy_pool_full(void)
{
    int fd = start_endless();
    CU_ASSERT_FATAL(fd >= 0);
    usleep(300 * 1000);
    /* max_heavy_requests is 1: another heavy request is refused at once, with Retry-After */
    int fd2 = tt_raw_connect(D.port, NULL);
    CU_ASSERT_FATAL(fd2 >= 0);
    char req[1024];
    int n = snprintf(req, sizeof req, "POST /v1/predict HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\n\r\n%s", strlen(PREDICT), PREDICT);
    CU_ASSERT_EQUAL(tt_raw_send(fd2, req, (size_t)n), 0);
    static char buf[65536];
    int closed;
    tt_raw_read(fd2, buf, sizeof buf - 1, tt_daemon_slow(10), &closed);
    close(fd2);
    CU_ASSERT_EQUAL(tt_raw_status(buf), 503);
    CU_ASSERT(strstr(buf, "Retry-After: 1") != NULL);
    CU_ASSERT(strstr(tt_raw_body(buf), "\"code\":\"busy\"") != NULL);
    /* light requests are still served while the pool is busy */
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "GET", "/v1/templates", NULL, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_hres_free(&r);
    close(fd);
}

/* Wait (bounded) until the single heavy slot is free again: a small predict answers 200. */
static void wait_heavy_free(void)
{
    double until = now_s() + tt_daemon_slow(5);
    tt_hres r;
    int free_again = 0;
    while (now_s() < until && !free_again) {
        CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/predict", TT_TOKEN_READ, PREDICT,
                                      strlen(PREDICT), &r), 0);
        free_again = r.status == 200;
        tt_hres_free(&r);
        if (!free_again) usleep(100 * 1000);
    }
    CU_ASSERT(free_again);
}

/* Start tlctl predict (a token with the big budget, --timeout T) with stderr to errpath. */
static pid_t spawn_tlctl_predict(const char *timeout, const char *errpath)
{
    char *bin = tt_test_bin("tlctl");
    if (!bin) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int null = open("/dev/null", O_RDWR);
        if (e < 0 || null < 0) _exit(127);
        dup2(null, 0);
        dup2(null, 1);
        dup2(e, 2);
        setenv("TILETUNE_URL", D.url, 1);
        setenv("TILETUNE_TOKEN", TT_TOKEN_READ, 1);
        unsetenv("TLCTL_CONFIG");
        setenv("HOME", "/nonexistent", 1);
        execl(bin, bin, "--timeout", timeout, "predict", "gemm", "-p",
              "M=4096,N=4096,K=4096,dtype=float16", "-t", "a2", "-k", "3", (char *)NULL);
        _exit(127);
    }
    free(bin);
    return pid;
}

static int wait_exit(pid_t pid)
{
    int st = 0;
    if (pid <= 0 || waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* tlctl sends a request again after "503 busy" (Retry-After) while its --timeout lasts:
 * with the pool freed meanwhile it succeeds after saying once that it waits; when the pool
 * stays full it gives up at --timeout with the server's busy answer (exit 5). */
static void test_tlctl_retries_busy(void)
{
    wait_heavy_free();
    char *dir = tt_test_tmpdir("budget-tlctl"), err[512];
    CU_ASSERT_FATAL(dir != NULL);
    snprintf(err, sizeof err, "%s/stderr", dir);
    int fd = start_endless();
    CU_ASSERT_FATAL(fd >= 0);
    fcntl(fd, F_SETFD, FD_CLOEXEC);            /* tlctl must not keep the socket open */
    usleep(300 * 1000);
    pid_t pid = spawn_tlctl_predict("60", err);
    usleep(2500 * 1000);                       /* two refusals at least */
    close(fd);                                 /* the slot comes free */
    CU_ASSERT_EQUAL(wait_exit(pid), 0);
    char *text = tt_test_read_file(err, NULL);
    CU_ASSERT(text && strstr(text, "the server is busy; retrying every 1 s for up to "
                                   "--timeout (60 s)") != NULL);
    CU_ASSERT(text && !strstr(text, "stayed busy"));
    free(text);

    wait_heavy_free();
    fd = start_endless();
    CU_ASSERT_FATAL(fd >= 0);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    usleep(300 * 1000);
    CU_ASSERT_EQUAL(wait_exit(spawn_tlctl_predict("3", err)), 5);
    close(fd);
    text = tt_test_read_file(err, NULL);
    CU_ASSERT(text && strstr(text, "stayed busy for the whole --timeout (3 s)") != NULL);
    CU_ASSERT(text && strstr(text, "(busy, HTTP 503)") != NULL);
    free(text);
    tt_test_rmrf(dir);
    free(dir);
}

/* The endless request of kind sim runs while its client waits and stops when it leaves. */
static void stops_on_disconnect(int sim)
{
    wait_heavy_free();                         /* the previous case may still hold it */
    int fd = start_endless_of(sim);
    CU_ASSERT_FATAL(fd >= 0);
    usleep(500 * 1000);
    double busy0 = tt_raw_cpu_seconds(D.pid);
    usleep(500 * 1000);
    double busy1 = tt_raw_cpu_seconds(D.pid);
    double during = (busy1 - busy0) / 0.5;     /* CPU share while the client waits */
    close(fd);                                 /* the client leaves */
    usleep(500 * 1000);
    double c0 = tt_raw_cpu_seconds(D.pid);
    usleep(1000 * 1000);
    double c1 = tt_raw_cpu_seconds(D.pid);
    /* once it left the daemon is idle: a fraction of the share it had while working (the
     * shares are relative so that a loaded machine does not decide the outcome) */
    CU_ASSERT(busy0 >= 0 && c0 >= 0);
    CU_ASSERT(during > 0.05);                  /* it did work while the client waited */
    CU_ASSERT(c1 - c0 <= 0.5 * during + 0.02);
    /* its heavy slot is free: the next predict runs */
    tt_hres r;
    CU_ASSERT_EQUAL(tt_daemon_req(&D, "POST", "/v1/predict", TT_TOKEN_READ, PREDICT,
                                  strlen(PREDICT), &r), 0);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_hres_free(&r);
}

static void test_disconnect_stops_work(void) { stops_on_disconnect(0); }
static void test_disconnect_stops_simulate(void) { stops_on_disconnect(1); }

/* SIGTERM with an endless simulate in flight (the simulator asks the budget in its event
 * loop, so it ends too; the predict stops the same way, test_disconnect_stops_work). */
static void test_shutdown_grace(void)
{
    wait_heavy_free();
    int fd = start_endless_of(1);
    CU_ASSERT_FATAL(fd >= 0);
    usleep(300 * 1000);
    CU_ASSERT_EQUAL(kill(D.pid, SIGTERM), 0);
    /* shutdown_grace is 1 s: the daemon is gone well within a few seconds */
    double until = now_s() + tt_daemon_slow(8);
    int status = -1;
    while (now_s() < until) {
        pid_t p = waitpid(D.pid, &status, WNOHANG);
        if (p == D.pid) break;
        status = -1;
        usleep(50 * 1000);
    }
    if (status == -1) {                        /* still running: fail, then stop it */
        kill(D.pid, SIGKILL);
        waitpid(D.pid, &status, 0);
        CU_FAIL("the daemon did not stop within the grace period");
    } else {
        CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    D.pid = 0;
    /* the request in flight was handed back */
    static char buf[65536];
    int closed;
    tt_raw_read(fd, buf, sizeof buf - 1, 2, &closed);
    close(fd);
    CU_ASSERT_EQUAL(tt_raw_status(buf), 503);
    CU_ASSERT(strstr(tt_raw_body(buf), "\"code\":\"unavailable\"") != NULL);
}

static const tt_test_case cases[] = {{"predict_budget_by_tier", test_predict_budget_by_tier},
                                     {"simulate_budget_by_tier", test_simulate_budget_by_tier},
                                     {"trace_cut", test_trace_cut},
                                     {"import_inflate_limit", test_import_inflate_limit},
                                     {"heavy_pool_full", test_heavy_pool_full},
                                     {"disconnect_stops_work", test_disconnect_stops_work},
                                     {"disconnect_stops_simulate", test_disconnect_stops_simulate},
                                     {"tlctl_retries_busy", test_tlctl_retries_busy},
                                     {"shutdown_grace", test_shutdown_grace},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"budget", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

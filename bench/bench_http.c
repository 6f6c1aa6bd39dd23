/* SPDX-License-Identifier: MIT
 * bench_http.c - HTTP load generator for tiletuned: starts a daemon on a free port with a
 * temporary SQLite database, tunes one GEMM shape so that a best row exists, then measures
 *   1. GET /v1/best with keep-alive from C connections (one thread each): req/s, p50, p99;
 *   2. POST /v1/predict, top 16 of the GEMM space at 4096^3 (its size as the answer states
 *      it): latency p50 / max.
 * Usage: bench_http [--seconds S] [--connections C] [--bin PATH/TO/tiletuned]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "auth.h"

static int g_port;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int connect_local(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)g_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) { close(fd); return -1; }
    return fd;
}

/* Send a request and read one response (Content-Length framed).  Returns the status, or -1.
 * body_out (may be NULL) receives a malloc'd body. */
static int roundtrip(int fd, const char *req, size_t len, char **body_out)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (w <= 0) return -1;
        off += (size_t)w;
    }
    static __thread char buf[1 << 20];
    size_t got = 0;
    char *hend = NULL;
    while (!hend) {
        ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (r <= 0) return -1;
        got += (size_t)r;
        buf[got] = '\0';
        hend = strstr(buf, "\r\n\r\n");
        if (got >= sizeof buf - 1) return -1;
    }
    int status = atoi(buf + 9);
    const char *cl = strcasestr(buf, "Content-Length:");
    size_t clen = cl ? strtoul(cl + 15, NULL, 10) : 0;
    size_t need = (size_t)(hend + 4 - buf) + clen;
    if (need >= sizeof buf) return -1;
    while (got < need) {
        ssize_t r = recv(fd, buf + got, need - got, 0);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    if (body_out) {
        *body_out = malloc(clen + 1);
        memcpy(*body_out, hend + 4, clen);
        (*body_out)[clen] = '\0';
    }
    return status;
}

static int request(const char *method, const char *path, const char *token, const char *body,
                   char **out)
{
    int fd = connect_local();
    if (fd < 0) return -1;
    char req[8192];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s%s"
                     "Content-Length: %zu\r\n\r\n%s", method, path,
                     token ? "Authorization: Bearer " : "", token ? token : "",
                     token ? "\r\n" : "", body ? strlen(body) : 0, body ? body : "");
    int st = roundtrip(fd, req, (size_t)n, out);
    close(fd);
    return st;
}

typedef struct worker {
    pthread_t th;
    double until;
    double *lat;
    size_t n, cap;
    size_t errors;
} worker;

static const char *BEST_REQ =
    "GET /v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024&dtype=float16 HTTP/1.1\r\n"
    "Host: 127.0.0.1\r\n\r\n";

static void *run_worker(void *ud)
{
    worker *w = ud;
    int fd = connect_local();
    size_t len = strlen(BEST_REQ);
    while (fd >= 0 && now_s() < w->until) {
        double t0 = now_s();
        int st = roundtrip(fd, BEST_REQ, len, NULL);
        double dt = now_s() - t0;
        if (st != 200) {
            w->errors++;
            close(fd);
            fd = connect_local();
            continue;
        }
        if (w->n == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 65536;
            w->lat = realloc(w->lat, w->cap * sizeof *w->lat);
        }
        w->lat[w->n++] = dt;
    }
    if (fd >= 0) close(fd);
    return NULL;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    double seconds = 3;
    int conns = 4;
    char bin[4096] = "";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--connections") && i + 1 < argc) conns = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bin") && i + 1 < argc) snprintf(bin, sizeof bin, "%s", argv[++i]);
        else { fprintf(stderr, "usage: %s [--seconds S] [--connections C] [--bin tiletuned]\n", argv[0]); return 2; }
    }
    if (conns < 1 || conns > 256) conns = 4;
    if (!bin[0]) {   /* next to this program */
        ssize_t n = readlink("/proc/self/exe", bin, sizeof bin - 16);
        if (n <= 0) return 1;
        bin[n] = '\0';
        char *slash = strrchr(bin, '/');
        strcpy(slash + 1, "tiletuned");
    }
    char dir[] = "/tmp/tt-bench-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    /* free port */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    bind(s, (struct sockaddr *)&a, sizeof a);
    getsockname(s, (struct sockaddr *)&a, &al);
    g_port = ntohs(a.sin_port);
    close(s);
    char hex[65], conf[512], path[600];
    tt_sha256_hex("bench", 5, hex);
    snprintf(path, sizeof path, "%s/tiletune.conf", dir);
    snprintf(conf, sizeof conf,
             "{\"listen\":\"127.0.0.1:%d\",\"db\":\"sqlite:%s/tt.db\",\"workers\":1,"
             "\"log_level\":\"warning\",\"tokens\":[{\"name\":\"bench\",\"secret_sha256\":"
             "\"%s\",\"scopes\":\"tune\"}]}", g_port, dir, hex);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fputs(conf, f);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        execl(bin, bin, "serve", "--config-file", path, (char *)NULL);
        _exit(127);
    }
    int ok = 0;
    for (int i = 0; i < 200 && !ok; i++) {
        usleep(50000);
        ok = request("GET", "/healthz", NULL, NULL, NULL) == 200;
    }
    int rc = 1;
    char *body = NULL;
    if (!ok) { fprintf(stderr, "bench_http: %s did not start\n", bin); goto out; }
    if (request("POST", "/v1/tune", "bench",
                "{\"template\":\"gemm\",\"problem\":{\"M\":1024,\"N\":1024,\"K\":1024},"
                "\"target\":\"a2\",\"budget\":{\"trials\":8},\"seed\":1}", &body) != 202) {
        fprintf(stderr, "bench_http: tune failed: %s\n", body ? body : "");
        goto out;
    }
    free(body);
    body = NULL;
    for (int i = 0; i < 600; i++) {
        usleep(50000);
        if (request("GET", "/v1/best?template=gemm&target=a2&M=1024&N=1024&K=1024", NULL,
                    NULL, NULL) == 200) { ok = 2; break; }
    }
    if (ok != 2) { fprintf(stderr, "bench_http: no best row appeared\n"); goto out; }

    worker *w = calloc((size_t)conns, sizeof *w);
    double t0 = now_s();
    for (int i = 0; i < conns; i++) {
        w[i].until = t0 + seconds;
        pthread_create(&w[i].th, NULL, run_worker, &w[i]);
    }
    size_t total = 0, errors = 0;
    for (int i = 0; i < conns; i++) {
        pthread_join(w[i].th, NULL);
        total += w[i].n;
        errors += w[i].errors;
    }
    double el = now_s() - t0;
    double *all = malloc((total ? total : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < conns; i++) {
        memcpy(all + k, w[i].lat, w[i].n * sizeof *all);
        k += w[i].n;
        free(w[i].lat);
    }
    free(w);
    qsort(all, total, sizeof *all, cmp_d);
    printf("| measurement | value |\n|---|---|\n");
    printf("| GET /v1/best, %d keep-alive connections, %.1f s | %.0f req/s (%zu requests, %zu errors) |\n",
           conns, el, (double)total / el, total, errors);
    if (total)
        printf("| GET /v1/best latency p50 / p99 / max | %.3f / %.3f / %.3f ms |\n",
               all[total / 2] * 1e3, all[(size_t)((double)total * 0.99)] * 1e3,
               all[total - 1] * 1e3);
    free(all);

    double lat[20];
    int nl = 0;
    json_int_t space_total = 0, feasible = 0;   /* the space's size, as the answer states it */
    for (int i = 0; i < 20; i++) {
        double p0 = now_s();
        char *ans = NULL;
        int st = request("POST", "/v1/predict", NULL,
                         "{\"template\":\"gemm\",\"target\":\"a2\",\"problem\":{\"M\":4096,"
                         "\"N\":4096,\"K\":4096},\"top\":16}", &ans);
        if (st == 200) lat[nl++] = now_s() - p0;
        json_t *doc = st == 200 && ans ? json_loads(ans, 0, NULL) : NULL;
        json_t *sp = json_object_get(doc, "space");
        space_total = json_integer_value(json_object_get(sp, "total"));
        feasible = json_integer_value(json_object_get(sp, "feasible"));
        json_decref(doc);
        free(ans);
    }
    qsort(lat, (size_t)nl, sizeof *lat, cmp_d);
    if (nl)
        printf("| POST /v1/predict top 16 of %lld configs (%lld feasible), p50 / max of %d | "
               "%.1f / %.1f ms |\n", (long long)space_total, (long long)feasible, nl,
               lat[nl / 2] * 1e3, lat[nl - 1] * 1e3);
    rc = errors || nl < 20 ? 1 : 0;
out:
    free(body);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    return rc;
}

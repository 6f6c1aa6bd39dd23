/* SPDX-License-Identifier: MIT
 * tt_daemon.c - start/stop the real tiletuned for integration tests and talk HTTP to it.
 */
#include "tt_daemon.h"

#include <CUnit/CUnit.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "tt_test.h"

double tt_daemon_slow(double seconds)
{
    const char *s = getenv("TT_SANITIZED");
    return s && *s ? seconds * 4 : seconds;
}

static double tt_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int tt_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static json_t *tt_token(const char *name, const char *secret, const char *scopes)
{
    char hex[65];
    tt_sha256_hex(secret, strlen(secret), hex);
    return json_pack("{s:s, s:s, s:s}", "name", name, "secret_sha256", hex, "scopes", scopes);
}

static int tt_write_config(tt_daemon *d, const char *extra_json)
{
    json_t *c = json_pack("{s:s, s:s, s:i, s:b, s:s, s:s, s:s}", "listen", "", "db", d->db_url,
                          "workers", 1, "open_reads", 1, "log_level", "debug", "work_dir",
                          d->dir, "log_file", "");
    json_t *toks = json_pack("[o, o, o, o]", tt_token("admin", TT_TOKEN_ADMIN, "admin"),
                             tt_token("tuner", TT_TOKEN_TUNE, "tune"),
                             tt_token("tuner2", TT_TOKEN_TUNE2, "tune"),
                             tt_token("reader", TT_TOKEN_READ, "read"));
    json_object_set_new(c, "tokens", toks);
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", d->port);
    json_object_set_new(c, "listen", json_string(listen));
    /* the wall-time budgets of a request scale like every wait under the sanitizers (an ASan
     * -O0 daemon predicts the 107k-config GEMM space in ~1.5 s of CPU, the anonymous budget
     * is 5 s: a loaded 2-core machine ran over it); extra_json still sets them explicitly */
    const char *sz = getenv("TT_SANITIZED");
    if (sz && *sz) {
        json_object_set_new(c, "request_seconds_anon", json_real(tt_daemon_slow(5)));
        json_object_set_new(c, "request_seconds_token", json_real(tt_daemon_slow(60)));
    }
    if (extra_json) {
        json_t *x = json_loads(extra_json, 0, NULL);
        if (!x) { json_decref(c); return -1; }
        json_object_update(c, x);
        json_decref(x);
    }
    int rc = json_dump_file(c, d->config_path, JSON_INDENT(2));
    json_decref(c);
    return rc;
}

static int tt_spawn(tt_daemon *d)
{
    char *bin = tt_test_bin("tiletuned");
    pid_t pid = fork();
    if (pid < 0) { free(bin); return -1; }
    if (pid == 0) {
        int fd = open(d->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); close(fd); }
        execl(bin, bin, "serve", "--config-file", d->config_path, (char *)NULL);
        _exit(127);
    }
    free(bin);
    d->pid = pid;
    /* wait for /healthz */
    double until = tt_mono() + tt_daemon_slow(15);
    while (tt_mono() < until) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) { d->pid = 0; return -1; }
        tt_hres r;
        if (tt_daemon_req(d, "GET", "/healthz", NULL, NULL, 0, &r) == 0 && r.status == 200) {
            tt_hres_free(&r);
            return 0;
        }
        tt_hres_free(&r);
        usleep(50 * 1000);
    }
    return -1;
}

int tt_daemon_start(tt_daemon *d, const char *extra_json)
{
    memset(d, 0, sizeof *d);
    static int curl_ready;
    if (!curl_ready) { curl_global_init(CURL_GLOBAL_DEFAULT); curl_ready = 1; }
    d->dir = tt_test_tmpdir("tiletuned-test");
    if (!d->dir) return -1;
    snprintf(d->config_path, sizeof d->config_path, "%s/config.json", d->dir);
    snprintf(d->log_path, sizeof d->log_path, "%s/daemon.log", d->dir);
    snprintf(d->db_url, sizeof d->db_url, "sqlite:%s/tt.db", d->dir);
    for (int attempt = 0; attempt < 3; attempt++) {
        d->port = tt_free_port();
        snprintf(d->url, sizeof d->url, "http://127.0.0.1:%d", d->port);
        if (d->port <= 0 || tt_write_config(d, extra_json)) return -1;
        if (tt_spawn(d) == 0) return 0;
        if (d->pid) tt_daemon_signal(d, SIGKILL);
    }
    fprintf(stderr, "tt_daemon: tiletuned did not become healthy; log: %s\n", d->log_path);
    return -1;
}

int tt_daemon_restart(tt_daemon *d)
{
    if (d->pid) return -1;
    return tt_spawn(d);
}

static int tt_daemon_wait_stop(tt_daemon *d, int sig)
{
    kill(d->pid, sig);
    int st = 0;
    pid_t r;
    double until = tt_mono() + tt_daemon_slow(20);
    while ((r = waitpid(d->pid, &st, WNOHANG)) == 0 && tt_mono() < until) usleep(20 * 1000);
    if (r == 0) {       /* did not stop: force it */
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &st, 0);
        return 255;
    }
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return -1;
}

int tt_daemon_signal(tt_daemon *d, int sig)
{
    if (!d->pid) return -1;
    int st = tt_daemon_wait_stop(d, sig);
    d->pid = 0;
    return st;
}

int tt_daemon_stop(tt_daemon *d)
{
    if (!d->pid) return -1;
    return d->stop_status = tt_daemon_signal(d, SIGTERM);
}

int tt_daemon_alive(tt_daemon *d)
{
    if (!d->pid) return 0;
    int st;
    if (waitpid(d->pid, &st, WNOHANG) == d->pid) { d->pid = 0; return 0; }
    return 1;
}

void tt_daemon_cleanup(tt_daemon *d)
{
    if (!d || !d->dir) return;
    if (d->pid) tt_daemon_stop(d);
    if (CU_get_number_of_failures() > 0 || d->stop_status != 0) {
        fprintf(stderr, "\n== tests failed or the daemon stopped with status %d (255: did not stop "
                "within 20 s; 128+N: signal N): keeping %s; tail of %s:\n", d->stop_status, d->dir,
                d->log_path);
        size_t n = 0;
        char *log = tt_test_read_file(d->log_path, &n);
        if (log) {
            const char *p = n > 4000 ? log + n - 4000 : log;
            fputs(p, stderr);
            free(log);
        }
        fprintf(stderr, "== end of log\n");
    } else {
        tt_test_rmrf(d->dir);
    }
    free(d->dir);
    d->dir = NULL;
}

typedef struct tt_buf {
    char *p;
    size_t n;
} tt_buf;

static size_t tt_write_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
    tt_buf *b = ud;
    size_t k = size * nmemb;
    char *np = realloc(b->p, b->n + k + 1);
    if (!np) return 0;
    memcpy(np + b->n, ptr, k);
    b->p = np;
    b->n += k;
    b->p[b->n] = '\0';
    return k;
}

int tt_daemon_req(const tt_daemon *d, const char *method, const char *path, const char *token,
                  const char *body, size_t len, tt_hres *out)
{
    memset(out, 0, sizeof *out);
    CURL *c = curl_easy_init();
    if (!c) return -1;
    char url[2048];
    snprintf(url, sizeof url, "%s%s", d->url, path);
    tt_buf b = {NULL, 0};
    struct curl_slist *h = NULL;
    char auth[256];
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    h = curl_slist_append(h, "Expect:");
    if (body) h = curl_slist_append(h, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, tt_write_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)tt_daemon_slow(30));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
        char *ct = NULL;
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        if (ct) snprintf(out->content_type, sizeof out->content_type, "%s", ct);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    out->body = b.p ? b.p : strdup("");
    out->len = b.n;
    if (out->body && out->len) out->json = json_loads(out->body, JSON_DECODE_ANY, NULL);
    return rc == CURLE_OK ? 0 : -1;
}

void tt_hres_free(tt_hres *r)
{
    if (!r) return;
    free(r->body);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

const char *tt_hres_code(const tt_hres *r)
{
    const char *c = json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
    return c ? c : "";
}

const char *tt_daemon_wait_job(const tt_daemon *d, long long id, double timeout_s)
{
    static const char *const finals[] = {"done", "failed", "cancelled"};
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    double until = tt_mono() + tt_daemon_slow(timeout_s);
    while (tt_mono() < until) {
        tt_hres r;
        if (tt_daemon_req(d, "GET", path, TT_TOKEN_ADMIN, NULL, 0, &r) == 0 && r.status == 200) {
            const char *st = json_string_value(json_object_get(r.json, "state"));
            for (int i = 0; st && i < 3; i++)
                if (!strcmp(st, finals[i])) { tt_hres_free(&r); return finals[i]; }
        }
        tt_hres_free(&r);
        usleep(50 * 1000);
    }
    return NULL;
}

long long tt_daemon_submit(const tt_daemon *d, const char *body)
{
    tt_hres r;
    long long id = -1;
    if (tt_daemon_req(d, "POST", "/v1/tune", TT_TOKEN_TUNE, body, strlen(body), &r) == 0 &&
        r.status == 202)
        id = (long long)json_integer_value(json_object_get(r.json, "job"));
    else
        fprintf(stderr, "tune: %ld %s\n", r.status, r.body ? r.body : "");
    tt_hres_free(&r);
    return id;
}

json_t *tt_daemon_trials(const tt_daemon *d, long long job, const char *const *fields)
{
    json_t *all = json_array();
    for (long long off = 0; all; off += 1000) {
        char path[128];
        snprintf(path, sizeof path, "/v1/jobs/%lld/trials?offset=%lld&limit=1000", job, off);
        tt_hres r;
        if (tt_daemon_req(d, "GET", path, NULL, NULL, 0, &r) || r.status != 200) {
            tt_hres_free(&r);
            json_decref(all);
            return NULL;
        }
        json_t *arr = json_object_get(r.json, "trials");
        size_t i;
        json_t *t;
        json_array_foreach(arr, i, t) {
            json_t *o = json_object();
            for (size_t f = 0; o && fields[f]; f++)
                json_object_set(o, fields[f], json_object_get(t, fields[f]));
            json_array_append_new(all, o);
        }
        size_t n = json_array_size(arr);
        tt_hres_free(&r);
        if (n < 1000) break;
    }
    return all;
}

void tt_path_job(char *out, size_t cap, const char *pattern, long long job)
{
    const char *at = strstr(pattern, "{job}");
    if (at)
        snprintf(out, cap, "%.*s%lld%s", (int)(at - pattern), pattern, job, at + 5);
    else
        snprintf(out, cap, "%s", pattern);
}

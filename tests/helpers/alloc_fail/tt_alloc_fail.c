/* SPDX-License-Identifier: MIT
 * tt_alloc_fail.c - allocation hooks, shared inputs and the torture loop of the
 * allocation-failure tests (see tt_alloc_fail.h).
 */
#include "tt_alloc_fail.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#define TT_AF_FULL 3000     /* every N up to this one is tested */
#define TT_AF_SAMPLE 1500   /* then about this many more, evenly strided */

long tt_af_calls;     /* allocation calls since tt_af_reset() */
static long g_af_fail_at;   /* 0: disarmed; else the call number that fails */
long tt_af_fired;     /* injected failures since tt_af_reset() */
long tt_af_live;      /* live blocks (allocations minus frees), whole process */
static void *g_af_caller;   /* return address of the call that was made to fail */
static int g_af_in_load;    /* > 0 while inside one of jansson's json_load* parsers */
static int g_af_failed_in_load;  /* the failed call was made inside json_load* */
static long g_af_load_leak; /* blocks a json_load* that returned NULL left allocated */
int tt_af_backtrace;  /* TT_ALLOC_FAIL_BT=1: print the stack of the failed call */

#if TT_AF_HOOKS
#include <execinfo.h>
#include <malloc.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

/* 1 when this allocation call is the one to fail (errno is then set and the caller kept). */
static int af_fail_now(void *caller)
{
    long n = __atomic_add_fetch(&tt_af_calls, 1, __ATOMIC_RELAXED);
    long at = __atomic_load_n(&g_af_fail_at, __ATOMIC_RELAXED);
    if (at > 0 && n == at) {
        __atomic_add_fetch(&tt_af_fired, 1, __ATOMIC_RELAXED);
        g_af_caller = caller;
        g_af_failed_in_load = g_af_in_load > 0;
        if (tt_af_backtrace) {
            void *bt[32];
            backtrace_symbols_fd(bt, backtrace(bt, 32), 2);
        }
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

static void *af_count(void *p)
{
    if (p) __atomic_add_fetch(&tt_af_live, 1, __ATOMIC_RELAXED);
    return p;
}

void *malloc(size_t n)
{
    return af_fail_now(__builtin_return_address(0)) ? NULL : af_count(__libc_malloc(n));
}

void *calloc(size_t n, size_t m)
{
    return af_fail_now(__builtin_return_address(0)) ? NULL : af_count(__libc_calloc(n, m));
}

void free(void *p)
{
    if (!p) return;
    __atomic_sub_fetch(&tt_af_live, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

void *realloc(void *p, size_t n)
{
    if (p && n == 0) {   /* glibc: frees p and returns NULL */
        free(p);
        return NULL;
    }
    if (af_fail_now(__builtin_return_address(0))) return NULL;   /* p stays valid */
    if (!p) return af_count(__libc_malloc(n));
    return __libc_realloc(p, n);      /* same live count whether it moved or not */
}

static void *af_memalign(size_t align, size_t n, void *caller)
{
    return af_fail_now(caller) ? NULL : af_count(__libc_memalign(align, n));
}

void *memalign(size_t align, size_t n)
{
    return af_memalign(align, n, __builtin_return_address(0));
}

void *aligned_alloc(size_t align, size_t n)
{
    return af_memalign(align, n, __builtin_return_address(0));
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    void *p = af_memalign(align, n, __builtin_return_address(0));
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t n)
{
    return af_fail_now(__builtin_return_address(0)) ? NULL : af_count(__libc_valloc(n));
}

void *pvalloc(size_t n)
{
    return af_fail_now(__builtin_return_address(0)) ? NULL : af_count(__libc_pvalloc(n));
}

/* jansson's parsers, interposed too, only to know that a failed allocation happened inside
 * one (see jansson_lexer_defect()).  Each forwards to the library's own definition. */
#define AF_JSON_WRAP(name, params, args)                                                   \
    json_t *name params                                                                    \
    {                                                                                      \
        static json_t *(*real) params;                                                     \
        if (!real) *(void **)&real = dlsym(RTLD_NEXT, #name);                              \
        if (!real) abort();                                                                \
        long live = tt_af_live;                                                             \
        g_af_in_load++;                                                                    \
        json_t *r = real args;                                                             \
        g_af_in_load--;                                                                    \
        if (!r) g_af_load_leak += tt_af_live - live;                                        \
        return r;                                                                          \
    }
AF_JSON_WRAP(json_loads, (const char *in, size_t fl, json_error_t *e), (in, fl, e))
AF_JSON_WRAP(json_loadb, (const char *b, size_t n, size_t fl, json_error_t *e), (b, n, fl, e))
AF_JSON_WRAP(json_loadf, (FILE *in, size_t fl, json_error_t *e), (in, fl, e))
AF_JSON_WRAP(json_loadfd, (int in, size_t fl, json_error_t *e), (in, fl, e))
AF_JSON_WRAP(json_load_file, (const char *p, size_t fl, json_error_t *e), (p, fl, e))
AF_JSON_WRAP(json_load_callback, (json_load_callback_t cb, void *d, size_t fl, json_error_t *e),
             (cb, d, fl, e))
#endif

void tt_af_reset(long fail_at)
{
    g_af_load_leak = 0;
    __atomic_store_n(&tt_af_calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&tt_af_fired, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_af_fail_at, fail_at, __ATOMIC_RELAXED);
}

void tt_af_disarm(void) { __atomic_store_n(&g_af_fail_at, 0, __ATOMIC_RELAXED); }

/* ---------------------------------------------------------------- shared inputs */

uint64_t tt_af_mix(uint64_t h, uint64_t v)
{
    h ^= v;
    h *= 1099511628211ull;
    return h ^ (h >> 29);
}

uint64_t tt_af_mix_str(uint64_t h, const char *s)
{
    for (; s && *s; s++) h = tt_af_mix(h, (unsigned char)*s);
    return h;
}

uint64_t tt_af_mix_double(uint64_t h, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return tt_af_mix(h, v);
}

tt_targets *tt_af_targets;         /* loaded unarmed by the suite */
const tt_target *tt_af_a2;
tt_template *tt_af_gemm;
int64_t tt_af_gemm_slots[TT_MAX_SLOTS];   /* problem + one config */

tt_template *tt_af_smoke_t[TT_AF_MAX_SMOKE];
int64_t tt_af_smoke_slots[TT_AF_MAX_SMOKE][TT_MAX_SLOTS];
size_t tt_af_nsmoke;

static int load_smoke(tt_errinfo *e)
{
    char *table = tt_test_src("tests/data/sim/smoke.txt");
    char *text = table ? tt_test_read_file(table, NULL) : NULL;
    free(table);
    if (!text) return -1;
    int bad = 0;
    for (char *line = strtok(text, "\n"); line && !bad; line = strtok(NULL, "\n")) {
        char *f1 = strchr(line, '|'), *f2 = f1 ? strchr(f1 + 1, '|') : NULL;
        if (line[0] == '#' || !f2 || tt_af_nsmoke == TT_AF_MAX_SMOKE) continue;
        *f1 = *f2 = '\0';
        char rel[128];
        snprintf(rel, sizeof rel, "templates/%s", line);
        char *path = tt_test_src(rel);
        tt_template **t = &tt_af_smoke_t[tt_af_nsmoke];
        int64_t *slots = tt_af_smoke_slots[tt_af_nsmoke];
        bad = !path || tt_tmpl_parse_file(path, t, e) != TT_OK ||
              tt_tmpl_problem_parse(*t, f1 + 1, slots, e) != TT_OK ||
              tt_tmpl_config_parse(*t, f2 + 1, slots, e) != TT_OK;
        free(path);
        if (*t) tt_af_nsmoke++;
    }
    free(text);
    return bad || tt_af_nsmoke == 0 ? -1 : 0;
}

int tt_af_init(void)
{
    char *dir = tt_test_src("costmodel/targets");
    char *gp = tt_test_src("templates/gemm.json");
    tt_errinfo e;
    tt_errinfo_clear(&e);
    int bad = !dir || !gp || tt_targets_load_dir(dir, &tt_af_targets, &e) != TT_OK ||
              !(tt_af_a2 = tt_targets_find(tt_af_targets, "a2")) ||
              tt_tmpl_parse_file(gp, &tt_af_gemm, &e) != TT_OK ||
              tt_tmpl_problem_parse(tt_af_gemm, "M=512,N=384,K=256,dtype=float16,out_dtype=float16",
                                    tt_af_gemm_slots, &e) != TT_OK ||
              tt_tmpl_config_parse(tt_af_gemm, "block_M=128,block_N=128,block_K=64,K_L1=128,S1=2,S2=2",
                                   tt_af_gemm_slots, &e) != TT_OK ||
              load_smoke(&e) != 0;
    if (bad) fprintf(stderr, "suite init: %s: %s\n", e.path, e.msg);
    free(dir);
    free(gp);
    return bad ? -1 : 0;
}

int tt_af_cleanup(void)
{
    for (size_t i = 0; i < tt_af_nsmoke; i++) tt_tmpl_free(tt_af_smoke_t[i]);
    tt_af_nsmoke = 0;
    tt_tmpl_free(tt_af_gemm);
    tt_targets_free(tt_af_targets);
    return 0;
}


/* ---------------------------------------------------------------- the torture loop */

static int rc_allowed(const tt_af_workload *w, tt_rc rc)
{
    if (rc == TT_OK || rc == TT_ENOMEM) return 1;
    for (int i = 0; i < 4 && w->also[i] != TT_OK; i++)
        if (w->also[i] == rc) return 1;
    return 0;
}

/* The outcome of one armed run, computed in a child process so that a crash is reported
 * with its N and the loop goes on. */
typedef struct af_result {
    int sig;                  /* 0: returned; else the fatal signal of the child */
    tt_rc rc;
    uint64_t digest;
    long leak, fired;
    void *caller;             /* return address of the failed allocation call */
    int in_load;              /* it was made inside jansson's json_load* */
    int sig_in_load;          /* the fatal signal came while still inside json_load* */
    long load_leak;           /* part of leak left by a json_load* that failed */
} af_result;

static int g_child_fd = -1;

static void child_fatal(int sig)
{
    af_result r = {.sig = sig, .fired = tt_af_fired, .caller = g_af_caller,
                   .in_load = g_af_failed_in_load, .sig_in_load = g_af_in_load > 0};
    ssize_t wr = write(g_child_fd, &r, sizeof r);
    (void)wr;
    _exit(128 + sig);
}

static af_result run_armed(const tt_af_workload *w, long n)
{
    af_result r = {.sig = -1};
    int fd[2];
    if (pipe(fd) != 0) return r;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return r;
    }
    if (pid == 0) {
        close(fd[0]);
        g_child_fd = fd[1];
        int null = tt_af_backtrace ? -1 : open("/dev/null", O_WRONLY);   /* assert() texts */
        if (null >= 0) dup2(null, 2);
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], child_fatal);
        long live = tt_af_live;
        tt_af_reset(n);
        af_result c = {0};
        c.rc = w->run(&c.digest);
        tt_af_disarm();
        c.fired = tt_af_fired;
        c.caller = g_af_caller;
        c.in_load = g_af_failed_in_load;
        c.leak = tt_af_live - live;
        c.load_leak = g_af_load_leak;
        ssize_t wr = write(fd[1], &c, sizeof c);
        _exit(wr == (ssize_t)sizeof c ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t k = read(fd[0], (char *)&r + got, sizeof r - got);
        if (k > 0) got += (size_t)k;
        else if (k < 0 && errno == EINTR) continue;
        else break;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (got != sizeof r) {
        memset(&r, 0, sizeof r);
        r.sig = WIFSIGNALED(st) ? WTERMSIG(st) : -1;
    }
    return r;
}

/* Name of the shared object (basename) and function that contain a code address. */
static void where(void *addr, char *buf, size_t cap)
{
    Dl_info di;
    if (addr && dladdr(addr, &di) && di.dli_fname) {
        const char *base = strrchr(di.dli_fname, '/');
        snprintf(buf, cap, "%s:%s", base ? base + 1 : di.dli_fname,
                 di.dli_sname ? di.dli_sname : "?");
    } else {
        snprintf(buf, cap, "%p", addr);
    }
}

/* jansson 2.14's lexer ignores a failed strbuf_append_byte() (lex_save() drops the byte):
 * the parse then succeeds with a string that lacks a character (a key "cache" may become
 * "cach"), or the lexer trips its own assert(0) in lex_scan_string() on an escape sequence,
 * or it reads past the token and crashes, or the parser fails on the damaged token stream
 * and leaks what it had built.  No caller can detect or handle that, so when the failed
 * allocation was made inside json_load*, these outcomes are counted and reported as that
 * library defect instead of failing: a signal raised inside or after such a json_load*, a TT_OK
 * with a different digest, a validation error about the damaged document, or blocks leaked by
 * a json_load* call that returned NULL (measured across the call).  Any other leak, and any
 * crash when the failed allocation was not made inside json_load*, still fails. */
static int jansson_lexer_defect(const tt_af_workload *w, const af_result *r, uint64_t ref)
{
    if (!r->in_load) return 0;
    /* A crash after the damaged json_load* returned counts too: the dropped byte can leave
     * uninitialised bytes in a string, so what happens later differs from run to run (seen:
     * the same failure point giving malformed_json, a damaged key, or an abort in free()). */
    if (r->sig) return 1;
    if (r->leak != r->load_leak) return 0;
    if (r->load_leak) return 1;
    return r->rc == TT_OK ? r->digest != ref : !rc_allowed(w, r->rc);
}

void tt_af_torture(const tt_af_workload *w)
{
    uint64_t ref = 0, d = 0;
    /* warm-up run: lazily initialised library state (stdio, locale) settles here */
    tt_af_reset(0);
    tt_rc rc = w->run(&ref);
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    long live0 = tt_af_live;
    tt_af_reset(0);
    rc = w->run(&d);
    long total = tt_af_calls;
    long leak0 = tt_af_live - live0;
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    CU_ASSERT_EQUAL(d, ref);          /* deterministic */
    if (!TT_AF_HOOKS) {
        printf("\n  %-10s unarmed run OK (no injection under AddressSanitizer) ", w->name);
        return;
    }
    CU_ASSERT_EQUAL(leak0, 0);
    CU_ASSERT(total > 0);             /* the hooks see the workload */

    const char *all = getenv("TT_ALLOC_FAIL_ALL");
    const char *verbose = getenv("TT_ALLOC_FAIL_VERBOSE");
    long stride = 1;
    if (!(all && *all == '1') && total > TT_AF_FULL) stride = (total - TT_AF_FULL) / TT_AF_SAMPLE + 1;
    long tested = 0, ok_rc = 0, nomem = 0, other = 0, unfired = 0, bad = 0, jansson = 0;
    long by_rc[TT_RC__COUNT] = {0};
    long first = 1;
    const char *only = getenv("TT_ALLOC_FAIL_ONLY");   /* "workload:N" */
    const char *colon = only ? strchr(only, ':') : NULL;
    if (colon && (size_t)(colon - only) == strlen(w->name) && !strncmp(only, w->name, strlen(w->name)))
        first = total = atol(colon + 1);
    else if (colon)
        return;
    for (long n = first; n <= total; n += n < TT_AF_FULL ? 1 : stride) {
        af_result r = run_armed(w, n);
        tested++;
        char at[160];
        where(r.caller, at, sizeof at);
        if (r.sig != 0) {
            if (jansson_lexer_defect(w, &r, ref)) {
                jansson++;
                continue;
            }
            bad++;
            if (bad <= 8 || verbose)
                fprintf(stderr, "\n  %s: allocation %ld of %ld failing (by %s): child died, signal %d",
                        w->name, n, total, at, r.sig);
            CU_FAIL("crash under allocation failure");
            continue;
        }
        if (jansson_lexer_defect(w, &r, ref)) {
            jansson++;
            continue;
        }
        if (!r.fired) unfired++;
        if (r.rc == TT_OK) ok_rc++;
        else if (r.rc == TT_ENOMEM) nomem++;
        else other++;
        if ((int)r.rc >= 0 && r.rc < TT_RC__COUNT) by_rc[r.rc]++;
        int fail = !rc_allowed(w, r.rc) || r.leak != 0 || (r.rc == TT_OK && r.digest != ref);
        if (fail && (bad++ < 8 || verbose))
            fprintf(stderr, "\n  %s: allocation %ld of %ld failing (by %s): rc %s%s, leaked %ld block(s)",
                    w->name, n, total, at, tt_rc_code(r.rc),
                    r.rc == TT_OK && r.digest != ref ? ", digest differs from the reference" : "",
                    r.leak);
        CU_ASSERT(rc_allowed(w, r.rc));
        CU_ASSERT_EQUAL(r.leak, 0);
        if (r.rc == TT_OK) CU_ASSERT_EQUAL(r.digest, ref);
    }
    /* injected failures must mostly be reported, not swallowed */
    CU_ASSERT(nomem + other > 0);
    printf("\n  %-10s %ld allocations, %ld failure points tested (%s), ok %ld / out_of_memory %ld"
           " / other %ld, %ld not reached, %ld jansson-lexer defects, %ld bad ",
           w->name, total, tested, stride == 1 ? "all" : "every N to 3000, then strided",
           ok_rc, nomem, other, unfired, jansson, bad);
    for (int i = TT_ENOMEM + 1; i < TT_RC__COUNT; i++)
        if (by_rc[i]) printf("[%s %ld] ", tt_rc_code((tt_rc)i), by_rc[i]);
}

int tt_af_main(int argc, char **argv, const tt_test_suite *suites)
{
    json_object_seed(1);   /* jansson's hash order, hence allocation N, is reproducible */
    const char *bt = getenv("TT_ALLOC_FAIL_BT");
    tt_af_backtrace = bt && *bt == '1';
    setvbuf(stdout, NULL, _IONBF, 0);
    return tt_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: MIT
 * test_backend_cmd.c - the cmd: backend with the fake toolchain (tests/data/fake-toolchain):
 * every error class, success with samples, the build cache, repeats, fingerprints and the
 * validation of toolchain definitions.
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "jsonutil.h"
#include "tt_test.h"

static tt_template *g_t;
static char *g_work, *g_counter;
static json_t *g_tcs;
static tt_backend_env g_env;

static json_t *fake_def(void)
{
    char *b = tt_test_src("tests/data/fake-toolchain/build.sh");
    char *r = tt_test_src("tests/data/fake-toolchain/run.sh");
    char bc[600], rc[600];
    snprintf(bc, sizeof bc, "sh '%s'", b);
    snprintf(rc, sizeof rc, "sh '%s'", r);
    free(b);
    free(r);
    return json_pack("{s:s,s:s,s:{s:s},s:f,s:f,s:i}", "build", bc, "run", rc, "env", "FAKE_COUNTER",
                     g_counter, "build_timeout", 1.0, "run_timeout", 1.0, "memory_mb", 1024);
}

static int setup(void)
{
    char *p = tt_test_src("tests/data/templates-cmd/fake_vec.json");
    tt_errinfo e;
    tt_rc rc = tt_tmpl_parse_file(p, &g_t, &e);
    free(p);
    if (rc != TT_OK) return 1;
    g_work = tt_test_tmpdir("tt-cmd");
    if (!g_work) return 1;
    size_t n = strlen(g_work) + 16;
    g_counter = malloc(n);
    snprintf(g_counter, n, "%s/builds.txt", g_work);
    g_tcs = json_object();
    json_object_set_new(g_tcs, "fake", fake_def());
    json_t *twice = fake_def();
    json_object_set_new(twice, "repeats", json_integer(2));
    json_object_set_new(g_tcs, "fake2", twice);
    g_env = (tt_backend_env){.toolchains = g_tcs, .work_dir = g_work, .repeats = 1};
    return 0;
}

static int teardown(void)
{
    tt_tmpl_free(g_t);
    json_decref(g_tcs);
    tt_test_rmrf(g_work);
    free(g_work);
    free(g_counter);
    return 0;
}

static tt_backend *open_cmd(const char *spec, const tt_template *t, tt_rc want, tt_errinfo *e)
{
    int64_t problem[TT_MAX_SLOTS] = {0};
    tt_errinfo_clear(e);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(g_t, "N=1000,dtype=float16", problem, e), TT_OK);
    tt_backend *b = NULL;
    tt_rc rc = tt_backend_open(spec, &g_env, t, NULL, problem, &b, e);
    CU_ASSERT_EQUAL(rc, want);
    if (rc != want) fprintf(stderr, "%s: %s: %s: %s\n", spec, tt_rc_code(rc), e->path, e->msg);
    return b;
}

static tt_rc measure(tt_backend *b, const char *kv, tt_measurement *m)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(g_t, kv, slots, &e), TT_OK);
    return tt_backend_measure(b, slots, m);
}

/* Lines of the build counter that hold this config's JSON. */
static int builds_of(const char *config_json)
{
    char *text = tt_test_read_file(g_counter, NULL);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, config_json)); p += strlen(config_json)) n++;
    free(text);
    return n;
}

static const struct {
    int mode;
    tt_rc status;
    const char *in_error;
} classes[] = {
    {1, TT_EBUILD, "does not fit in UB (fake compile error)"},
    {2, TT_EBUILDTIMEOUT, "build timed out after 1 s"},
    {3, TT_ERUN, "illegal memory access"},
    {4, TT_ERUNTIMEOUT, "run timed out after 1 s"},
    {5, TT_EWRONG, "\"correct\": false"},
    {6, TT_ERUN, "no JSON result line"},
    {7, TT_EINFEASIBLE, "invalid config: let.guard"},
    {8, TT_ERUN, "non-empty array"},
    {9, TT_ERUN, "signal 11"},
};

static void test_error_classes(void)
{
    tt_errinfo e;
    tt_backend *b = open_cmd("cmd:fake", g_t, TT_OK, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        char kv[64];
        snprintf(kv, sizeof kv, "BLOCK=32,MODE=%d", classes[i].mode);
        tt_measurement m;
        CU_ASSERT_EQUAL(measure(b, kv, &m), TT_OK);
        CU_ASSERT_EQUAL(m.status, classes[i].status);
        CU_ASSERT_EQUAL(m.nsamples, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(m.error, classes[i].in_error));
        if (m.status != classes[i].status || !strstr(m.error, classes[i].in_error))
            fprintf(stderr, "MODE=%d: %s: %s\n", classes[i].mode, tt_rc_code(m.status), m.error);
    }
    /* the invalid config never reached the toolchain */
    CU_ASSERT_EQUAL(builds_of("{\"BLOCK\":32,\"MODE\":7}"), 0);
    tt_backend_close(b);
}

static void test_success_and_build_cache(void)
{
    tt_errinfo e;
    tt_backend *b = open_cmd("cmd:fake", g_t, TT_OK, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(strncmp(tt_backend_fingerprint(b), "cmd:fake@", 9), 0);
    CU_ASSERT_EQUAL(strlen(tt_backend_fingerprint(b)), 9 + 8);
    tt_measurement m;
    CU_ASSERT_EQUAL(measure(b, "BLOCK=64,MODE=0", &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    if (m.status != TT_OK) fprintf(stderr, "MODE=0: %s\n", m.error);
    CU_ASSERT_EQUAL(m.nsamples, 3);
    /* L = N / BLOCK + 10 = 1000 / 64 + 10 = 25: samples 25.5, 25.0, 25.25 */
    CU_ASSERT_DOUBLE_EQUAL(m.median_us, 25.25, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(m.min_us, 25.0, 1e-9);
    CU_ASSERT(m.compile_s > 0);
    CU_ASSERT(m.measure_s > 0);
    CU_ASSERT_EQUAL(builds_of("{\"BLOCK\":64,\"MODE\":0}"), 1);
    /* second measurement of the same config: cache hit, no build */
    CU_ASSERT_EQUAL(measure(b, "BLOCK=64,MODE=0", &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(m.median_us, 25.25, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(m.compile_s, 0.0, 1e-12);
    CU_ASSERT_EQUAL(builds_of("{\"BLOCK\":64,\"MODE\":0}"), 1);
    /* another backend instance (another job) shares the cache */
    tt_backend *b2 = open_cmd("cmd:fake", g_t, TT_OK, &e);
    CU_ASSERT_STRING_EQUAL(tt_backend_fingerprint(b), tt_backend_fingerprint(b2));
    CU_ASSERT_EQUAL(measure(b2, "BLOCK=64,MODE=0", &m), TT_OK);
    CU_ASSERT_EQUAL(builds_of("{\"BLOCK\":64,\"MODE\":0}"), 1);
    tt_backend_close(b2);
    /* a different config renders a different source: one more build */
    CU_ASSERT_EQUAL(measure(b, "BLOCK=128,MODE=0", &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(m.median_us, 1000 / 128 + 10 + 0.25, 1e-9);
    CU_ASSERT_EQUAL(builds_of("{\"BLOCK\":128,\"MODE\":0}"), 1);
    /* failed builds are not cached */
    int before = builds_of("{\"BLOCK\":16,\"MODE\":1}");
    CU_ASSERT_EQUAL(measure(b, "BLOCK=16,MODE=1", &m), TT_OK);
    CU_ASSERT_EQUAL(measure(b, "BLOCK=16,MODE=1", &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_EBUILD);
    CU_ASSERT_EQUAL(builds_of("{\"BLOCK\":16,\"MODE\":1}"), before + 2);
    /* the rendered source is in the build directory */
    char pat[600];
    snprintf(pat, sizeof pat, "%s/cmd-fake-*/*/kernel.py", g_work);
    glob_t g;
    CU_ASSERT_EQUAL_FATAL(glob(pat, 0, NULL, &g), 0);
    int found = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char *text = tt_test_read_file(g.gl_pathv[i], NULL);
        found += text && strstr(text, "\nBLOCK = 64\nMODE = 0\nTILES = 16\n") != NULL;
        free(text);
    }
    globfree(&g);
    CU_ASSERT_EQUAL(found, 1);
    tt_backend_close(b);
}

static void test_repeats(void)
{
    tt_errinfo e;
    tt_backend *b = open_cmd("cmd:fake2", g_t, TT_OK, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    tt_measurement m;
    CU_ASSERT_EQUAL(measure(b, "BLOCK=32,MODE=0", &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    CU_ASSERT_EQUAL(m.nsamples, 6);
    CU_ASSERT_DOUBLE_EQUAL(m.median_us, 1000 / 32 + 10 + 0.25, 1e-9);
    tt_backend *b1 = open_cmd("cmd:fake", g_t, TT_OK, &e);
    CU_ASSERT_STRING_NOT_EQUAL(tt_backend_fingerprint(b), tt_backend_fingerprint(b1));
    tt_backend_close(b1);
    tt_backend_close(b);
}

/* repeats > 1 pools the runs' samples evenly (at most 64 in all): run r prints n samples
 * 100 r + 1 .. 100 r + n; each run keeps at most 64 / repeats of them, spread over the run
 * (old code: the first run's first 64 filled the pool and later runs added nothing). */
static void test_repeats_pool(void)
{
    static const struct {
        int repeats, n, per_run;
    } rows[] = {{2, 40, 32}, {3, 30, 21}, {2, 10, 10}, {1, 100, 64}, {64, 3, 1}};
    char runs[600];
    snprintf(runs, sizeof runs, "%s/pool-runs.txt", g_work);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char run[2048];
        snprintf(run, sizeof run,
                 "echo x >> '%s'; r=$(wc -l < '%s'); printf '{\"latency_us\": [%%d' $((r * 100 + 1)); "
                 "i=2; while [ $i -le %d ]; do printf ', %%d' $((r * 100 + i)); i=$((i + 1)); done; "
                 "echo '], \"correct\": true}'", runs, runs, rows[i].n);
        json_object_set_new(g_tcs, "pool", json_pack("{s:s,s:i}", "run", run, "repeats",
                                                     rows[i].repeats));
        remove(runs);
        tt_errinfo e;
        tt_backend *b = open_cmd("cmd:pool", g_t, TT_OK, &e);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        tt_measurement m;
        CU_ASSERT_EQUAL(measure(b, "BLOCK=16,MODE=0", &m), TT_OK);
        CU_ASSERT_EQUAL(m.status, TT_OK);
        CU_ASSERT_EQUAL(m.nsamples, rows[i].repeats * rows[i].per_run);
        int per[65] = {0};
        for (int k = 0; k < m.nsamples; k++) {
            int r = (int)(m.samples_us[k] / 100);
            if (r >= 1 && r <= 64) per[r]++;
        }
        for (int r = 1; r <= rows[i].repeats; r++) CU_ASSERT_EQUAL(per[r], rows[i].per_run);
        /* spread over the run: its first sample and (when it keeps several) one from its
         * last fifth */
        CU_ASSERT_DOUBLE_EQUAL(m.samples_us[0], 101, 1e-9);
        if (rows[i].per_run > 1)
            CU_ASSERT(m.samples_us[rows[i].per_run - 1] >= 101 + rows[i].n * 4 / 5 - 1);
        if (m.nsamples != rows[i].repeats * rows[i].per_run || per[1] != rows[i].per_run)
            fprintf(stderr, "row %zu: %d samples, %d of run 1\n", i, m.nsamples, per[1]);
        tt_backend_close(b);
        json_object_del(g_tcs, "pool");
    }
}

static void test_bad_definitions(void)
{
    static const struct {
        const char *name, *def, *path;
        tt_rc rc;
    } cases[] = {
        {"norun", "{\"build\": \"true\"}", "toolchains.norun.run", TT_EINVAL},
        {"emptyrun", "{\"run\": \"\"}", "toolchains.emptyrun.run", TT_EINVAL},
        {"typo", "{\"run\": \"true\", \"run_timout\": 5}", "toolchains.typo.run_timout", TT_EINVAL},
        {"reps", "{\"run\": \"true\", \"repeats\": 0}", "toolchains.reps.repeats", TT_EINVAL},
        {"reps2", "{\"run\": \"true\", \"repeats\": 1.5}", "toolchains.reps2.repeats", TT_EINVAL},
        {"tmo", "{\"run\": \"true\", \"run_timeout\": -1}", "toolchains.tmo.run_timeout", TT_EINVAL},
        {"tmo0", "{\"run\": \"true\", \"run_timeout\": 0}", "toolchains.tmo0.run_timeout", TT_EINVAL},
        {"mem", "{\"run\": \"true\", \"memory_mb\": 1e30}", "toolchains.mem.memory_mb", TT_EINVAL},
        {"envtt", "{\"run\": \"true\", \"env\": {\"TT_SOURCE\": \"x\"}}", "toolchains.envtt.env.TT_SOURCE", TT_EINVAL},
        {"envnum", "{\"run\": \"true\", \"env\": {\"A\": 1}}", "toolchains.envnum.env.A", TT_EINVAL},
        {"notobj", "[1]", "toolchains.notobj", TT_EINVAL},
        {"buildnum", "{\"run\": \"true\", \"build\": 3}", "toolchains.buildnum.build", TT_EINVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_error_t je;
        json_object_set_new(g_tcs, cases[i].name, json_loads(cases[i].def, 0, &je));
        char spec[64];
        snprintf(spec, sizeof spec, "cmd:%s", cases[i].name);
        tt_errinfo e;
        tt_backend *b = open_cmd(spec, g_t, cases[i].rc, &e);
        CU_ASSERT_PTR_NULL(b);
        CU_ASSERT_STRING_EQUAL(e.path, cases[i].path);
        json_object_del(g_tcs, cases[i].name);
    }
    tt_errinfo e;
    CU_ASSERT_PTR_NULL(open_cmd("cmd:nope", g_t, TT_ENOTFOUND, &e));
    CU_ASSERT_PTR_NULL(open_cmd("cmd:a/b", g_t, TT_EINVAL, &e));
    CU_ASSERT_PTR_NULL(open_cmd("cmd:", g_t, TT_EINVAL, &e));
    /* no work dir */
    tt_backend_env saved = g_env;
    g_env.work_dir = NULL;
    CU_ASSERT_PTR_NULL(open_cmd("cmd:fake", g_t, TT_EINVAL, &e));
    g_env = saved;
    /* a template without a source cannot be built */
    json_error_t je;
    json_t *doc = json_loads("{\"tiletune\": 1, \"name\": \"nosrc\", \"version\": \"1\", "
                             "\"inputs\": {\"N\": {\"type\": \"int\"}, \"dtype\": {\"type\": "
                             "\"dtype\", \"values\": [\"float16\"]}}, \"params\": {\"BLOCK\": [16]}}",
                             0, &je);
    tt_template *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc, NULL, &t, &e), TT_OK);
    json_decref(doc);
    CU_ASSERT_PTR_NULL(open_cmd("cmd:fake", t, TT_EUNSUPPORTED, &e));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "no source"));
    tt_tmpl_free(t);
}

/* What a run prints (no build; output_kb 8192 unless given) and how it is read: the result
 * line after 5 MiB of output, lines that look like the result but are not JSON, the last line
 * wins. */
static void test_result_lines(void)
{
    static const struct {
        const char *run;
        tt_rc status;
        const char *in_error;   /* NULL: ok */
        double median;
        int output_kb;          /* 0: 8192 */
    } cases[] = {
        {"head -c 5242880 /dev/zero | tr '\\0' x; echo; echo '{\"latency_us\": [7], \"correct\": true}'",
         TT_OK, NULL, 7, 0},
        {"echo '{\"latency_us\": [NaN], \"correct\": true}'", TT_ERUN,
         "invalid result line: not JSON: {\"latency_us\": [NaN]", 0, 0},
        {"echo '{\"latency_us\": [1e999], \"correct\": true}'", TT_ERUN, "not JSON", 0, 0},
        {"echo '{\"latency_us\": [5], \"correct\": true}'; echo '{\"latency_us\": [NaN]}'", TT_OK,
         NULL, 5, 0},
        {"echo '{\"latency_us\": [5], \"correct\": true}'; echo '{\"latency_us\": [9], \"correct\": true}'",
         TT_OK, NULL, 9, 0},
        {"echo '{\"latency_us\": [0], \"correct\": true}'", TT_ERUN, "not a positive number", 0, 0},
        {"echo '{\"latency_us\": [-3], \"correct\": true}'", TT_ERUN, "not a positive number", 0, 0},
        {"echo '{not json at all}'", TT_ERUN, "no JSON result line", 0, 0},
        /* the error quotes the line it read (old code: '"correct" is missing' for a log line
         * printed after the result, the value's place unsaid) */
        {"echo '{\"latency_us\": [3], \"correct\": true}'; echo '{\"log\": \"done\"}'", TT_ERUN,
         "invalid result line {\"log\":\"done\"}: \"correct\" is missing", 0, 0},
        {"echo '{\"latency_us\": [3, \"5\"], \"correct\": true}'", TT_ERUN,
         "{\"latency_us\":[3,\"5\"],\"correct\":true}: latency_us[1] is not a positive", 0, 0},
        {"true", TT_ERUN, "no JSON result line", 0, 0},
        /* a launch longer than the run may take (run_timeout 120 s) is a unit or print error
         * (old code: stored as the config's time, 1e300 us, ranked and exported) */
        {"echo '{\"latency_us\": [1e300], \"correct\": true}'", TT_ERUN,
         "latency_us[0] = 1e+300 us is longer than the whole run may take (run_timeout 120 s)", 0, 0},
        {"echo '{\"latency_us\": [3, 1.7e308], \"correct\": true}'", TT_ERUN,
         "latency_us[1] = 1.7e+308 us is longer", 0, 0},
        {"echo '{\"latency_us\": [120000001], \"correct\": true}'", TT_ERUN, "is longer", 0, 0},
        {"echo '{\"latency_us\": [120000000], \"correct\": true}'", TT_OK, NULL, 120000000, 0},
        /* beyond output_kb, with more than 16 KiB after it (old code: the line was in the
         * omitted middle of run.out, "no JSON result line") */
        {"head -c 10000 /dev/zero | tr '\\0' y; echo; echo '{\"latency_us\": [4], \"correct\": true}'; "
         "head -c 20000 /dev/zero | tr '\\0' z; echo", TT_OK, NULL, 4, 4},
        /* the error quotes stderr as valid UTF-8 (old code: a quote cut in two, raw 0xff) */
        {"for i in $(seq 200); do printf '\\342\\200\\230' >&2; done; exit 1", TT_ERUN,
         "run failed (exit 1): \xe2\x80\x98", 0, 0},
        {"printf 'error: \\377\\376 in \\342\\200\\230x\\342\\200\\231\\n' >&2; exit 1", TT_ERUN,
         "error: ?? in \xe2\x80\x98x\xe2\x80\x99", 0, 0},
        {"printf '{\"latency_us\": [NaN], \"n\": \"%051d\\342\\200\\230\"}\\n' 0", TT_ERUN,
         "not JSON", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object_set_new(g_tcs, "lines", json_pack("{s:s,s:i}", "run", cases[i].run, "output_kb",
                                                      cases[i].output_kb ? cases[i].output_kb : 8192));
        tt_errinfo e;
        tt_backend *b = open_cmd("cmd:lines", g_t, TT_OK, &e);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        tt_measurement m;
        CU_ASSERT_EQUAL(measure(b, "BLOCK=16,MODE=0", &m), TT_OK);
        int good = m.status == cases[i].status &&
                   (cases[i].in_error ? strstr(m.error, cases[i].in_error) != NULL
                                      : m.nsamples == 1 && m.median_us == cases[i].median);
        if (!good) fprintf(stderr, "case %zu: %s: %s\n", i, tt_rc_code(m.status), m.error);
        CU_ASSERT(good);
        CU_ASSERT(tt_utf8_valid(m.error, strlen(m.error)));
        tt_backend_close(b);
        json_object_del(g_tcs, "lines");
    }
}

/* The work directory fails under a run (its run.out is /dev/full: a full disk): a backend
 * failure naming the file and the reason, not a config that "printed no JSON result line". */
static void test_work_dir_full(void)
{
    json_object_set_new(g_tcs, "full", json_pack("{s:s,s:s}", "build", "ln -s /dev/full run.out",
                                                 "run", "echo '{\"latency_us\": [5], \"correct\": true}'"));
    tt_errinfo e;
    tt_backend *b = open_cmd("cmd:full", g_t, TT_OK, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    tt_measurement m;
    CU_ASSERT_EQUAL(measure(b, "BLOCK=16,MODE=0", &m), TT_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.error, "/run.out: No space left on device"));
    if (!strstr(m.error, "/run.out: No space left on device")) fprintf(stderr, "%s\n", m.error);
    tt_backend_close(b);
    json_object_del(g_tcs, "full");
}

/* The work directory emptied while a job runs ("clean work_dir whenever you like"): the next
 * measurement builds again (old code: the job failed, "cannot write .../<h16>.lock: No such
 * file or directory"); also when work_dir itself is gone. */
static void test_work_dir_cleaned(void)
{
    char *wd = tt_test_tmpdir("tt-cmd-clean");
    CU_ASSERT_PTR_NOT_NULL_FATAL(wd);
    tt_backend_env saved = g_env;
    g_env.work_dir = wd;
    tt_errinfo e;
    tt_backend *b = open_cmd("cmd:fake", g_t, TT_OK, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int round = 0; round < 3; round++) {
        tt_measurement m;
        CU_ASSERT_EQUAL(measure(b, "BLOCK=64,MODE=0", &m), TT_OK);
        CU_ASSERT_EQUAL(m.status, TT_OK);
        if (m.status != TT_OK) fprintf(stderr, "round %d: %s\n", round, m.error);
        char cmd[600];   /* round 0: empty it; round 1: remove it */
        snprintf(cmd, sizeof cmd, round == 0 ? "rm -rf '%s'/*" : "rm -rf '%s'", wd);
        CU_ASSERT_EQUAL(system(cmd), 0);
    }
    tt_backend_close(b);
    g_env = saved;
    tt_test_rmrf(wd);
    free(wd);
}

/* A template whose source names an unknown placeholder: every config is invalid.  The
 * parser refuses such a file at load (test_render), so the text is put in afterwards: the
 * backend still fails the trial, not the process. */
static void test_render_failure(void)
{
    json_t *doc = tt_test_load_json("tests/data/templates-cmd/bad/bad_placeholder.json");
    tt_template *t = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc, NULL, &t, &e), TT_OK);
    json_decref(doc);
    CU_ASSERT_PTR_NULL(t->source_text);
    t->source_text = strdup("BLOCK = {{BLOCK}}\n#\nUNROLL = {{unroll}}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t->source_text);
    int64_t problem[TT_MAX_SLOTS] = {0}, slots[TT_MAX_SLOTS] = {0};
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, "N=8", problem, &e), TT_OK);
    tt_backend *b = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_backend_open("cmd:fake", &g_env, t, NULL, problem, &b, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, "BLOCK=16", slots, &e), TT_OK);
    tt_measurement m;
    CU_ASSERT_EQUAL(tt_backend_measure(b, slots, &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_EINFEASIBLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.error, "{{unroll}}"));
    tt_backend_close(b);
    tt_tmpl_free(t);
}

/* The shipped sample toolchains (deploy/ascend-toolchains.sample.json) are valid definitions. */
static void test_sample_toolchains_open(void)
{
    json_t *sample = tt_test_load_json("deploy/ascend-toolchains.sample.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sample);
    tt_backend_env env = {.toolchains = sample, .work_dir = g_work, .repeats = 1};
    int64_t problem[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(g_t, "N=1000,dtype=float16", problem, &e), TT_OK);
    const char *name;
    json_t *def;
    size_t n = 0;
    json_object_foreach(sample, name, def) {
        char spec[80];
        snprintf(spec, sizeof spec, "cmd:%s", name);
        tt_backend *b = NULL;
        tt_rc rc = tt_backend_open(spec, &env, g_t, NULL, problem, &b, &e);
        if (rc) fprintf(stderr, "%s: %s %s\n", spec, e.path, e.msg);
        CU_ASSERT_EQUAL(rc, TT_OK);
        tt_backend_close(b);
        n++;
    }
    CU_ASSERT_EQUAL(n, 2);
    json_decref(sample);
}

/* templates/tt_ascend_runner.py as the run step, timing through the fake `msprof op`: the
 * samples are the Task Duration(us) of the launches after the checked one and the warm-up. */
static void test_ascend_runner_msprof(void)
{
    char *runner = tt_test_src("templates/tt_ascend_runner.py");
    char *msprof = tt_test_src("tests/data/fake-toolchain/msprof");
    char run[700];
    snprintf(run, sizeof run, "/usr/bin/python3 '%s' run \"$TT_SOURCE\"", runner);
    static const struct {
        const char *verdict;
        tt_rc status;
    } rows[] = {{"true", TT_OK}, {"false", TT_EWRONG}};
    for (size_t i = 0; i < 2; i++) {
        char app[128];
        snprintf(app, sizeof app, "echo '{\"correct\": %s}' > tt_correct.json", rows[i].verdict);
        json_t *tcs = json_pack("{s:{s:s,s:{s:s,s:s,s:s,s:s,s:s},s:f}}", "msfake", "run", run,
                                "env", "MSPROF", msprof, "TIMER", "msprof", "WARMUP", "1",
                                "SAMPLES", "3", "FAKE_MSPROF_APP", app, "run_timeout", 60.0);
        tt_backend_env env = {.toolchains = tcs, .work_dir = g_work, .repeats = 1};
        int64_t slots[TT_MAX_SLOTS] = {0};
        tt_errinfo e;
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(g_t, "N=1000,dtype=float16", slots, &e), TT_OK);
        tt_backend *b = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_backend_open("cmd:msfake", &env, g_t, NULL, slots, &b, &e), TT_OK);
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(g_t, "BLOCK=32,MODE=0", slots, &e), TT_OK);
        tt_measurement m;
        CU_ASSERT_EQUAL(tt_backend_measure(b, slots, &m), TT_OK);
        CU_ASSERT_EQUAL(m.status, rows[i].status);
        if (m.status != rows[i].status) fprintf(stderr, "msprof run: %s\n", m.error);
        if (rows[i].status == TT_OK) {
            /* 1 checked + 1 warm-up + 3 timed launches: launches 2..4 of the fake, all at the
             * rated clock, taking 100 + (i % 3) * 0.5 us */
            CU_ASSERT_EQUAL(m.nsamples, 3);
            CU_ASSERT_DOUBLE_EQUAL(m.samples_us[0], 101.0, 1e-9);
            CU_ASSERT_DOUBLE_EQUAL(m.samples_us[1], 100.0, 1e-9);
            CU_ASSERT_DOUBLE_EQUAL(m.samples_us[2], 100.5, 1e-9);
        }
        tt_backend_close(b);
        json_decref(tcs);
    }
    free(runner);
    free(msprof);
}

/* The summary of a trial's samples (every backend's measurement and the replay summaries):
 * median, inter-quartile spread, min and mean, also for samples near DBL_MAX, whose sum
 * overflows although their mean does not. */
static void test_samples_stats(void)
{
    static const struct {
        int n;
        double s[4], median, spread, min, mean;
    } cases[] = {
        {1, {7}, 7, 0, 7, 7},
        {4, {4, 1, 3, 2}, 2.5, 1.5, 1, 2.5},
        {3, {1e-300, 2e-300, 3e-300}, 2e-300, 1e-300, 1e-300, 2e-300},
        {2, {1.7e308, 1.7e308}, 1.7e308, 0, 1.7e308, 1.7e308},
        {3, {1.5e308, 1.7e308, 1.6e308}, 1.6e308, 1e307, 1.5e308, 1.6e308},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double med, spread, min, mean;
        CU_ASSERT_EQUAL(tt_samples_stats(cases[i].s, (size_t)cases[i].n, &med, &spread, &min,
                                         &mean),
                        TT_OK);
        double want[] = {cases[i].median, cases[i].spread, cases[i].min, cases[i].mean};
        double got[] = {med, spread, min, mean};
        for (int k = 0; k < 4; k++) {
            if (!(fabs(got[k] - want[k]) <= 1e-12 * fabs(want[k]))) {
                fprintf(stderr, "case %zu stat %d: %.17g != %.17g\n", i, k, got[k], want[k]);
                CU_FAIL("samples_stats");
            }
        }
    }
}

static const tt_test_case cases[] = {
    {"error_classes", test_error_classes},
    {"success_and_build_cache", test_success_and_build_cache},
    {"repeats", test_repeats},
    {"repeats_pool", test_repeats_pool},
    {"bad_definitions", test_bad_definitions},
    {"render_failure", test_render_failure},
    {"result_lines", test_result_lines},
    {"work_dir_full", test_work_dir_full},
    {"work_dir_cleaned", test_work_dir_cleaned},
    {"sample_toolchains_open", test_sample_toolchains_open},
    {"ascend_runner_msprof", test_ascend_runner_msprof},
    {"samples_stats", test_samples_stats},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"backend_cmd", setup, teardown, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

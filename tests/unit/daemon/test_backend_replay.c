/* SPDX-License-Identifier: MIT
 * test_backend_replay.c - the replay: backend on the real convolution recordings with the
 * T1-imported template: recorded medians, recorded failures, absent configs, the exact
 * relation between the T1 space and the recorded configs, param mismatch, name checks, the
 * fingerprints of a directory's datasets, the submission check finding a <name>.json dataset.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "backend.h"
#include "dataset.h"
#include "runner.h"
#include "space.h"
#include "t1.h"
#include "template.h"
#include "tt_test.h"

static tt_template *g_t;
static char *g_dir;
static tt_backend_env g_env;

static int setup(void)
{
    char *p = tt_test_shared("datasets/convolution.t1.json");
    json_t *doc = NULL;
    tt_errinfo e;
    tt_rc rc = tt_t1_file_to_template(p, NULL, &doc, &e);
    free(p);
    if (rc != TT_OK) return 1;
    rc = tt_tmpl_parse_json(doc, NULL, &g_t, &e);
    json_decref(doc);
    if (rc != TT_OK) return 1;
    g_dir = tt_test_shared("datasets");
    g_env = (tt_backend_env){.datasets_dir = g_dir, .repeats = 1};
    return 0;
}

static int teardown(void)
{
    tt_tmpl_free(g_t);
    free(g_dir);
    tt_dataset_cache_clear();
    return 0;
}

static tt_backend *open_replay(const char *spec, const tt_template *t, tt_rc want)
{
    int64_t problem[TT_MAX_SLOTS] = {0};
    tt_backend *b = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_backend_open(spec, &g_env, t, NULL, problem, &b, &e);
    CU_ASSERT_EQUAL(rc, want);
    if (rc != want) fprintf(stderr, "%s: %s: %s\n", spec, tt_rc_code(rc), e.msg);
    return b;
}

static tt_rc measure(tt_backend *b, const char *kv, tt_measurement *m)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(g_t, kv, slots, &e), TT_OK);
    return tt_backend_measure(b, slots, m);
}

#define CONF(bx, by, tx, ty, ro, pad, sh)                                                      \
    "block_size_x=" #bx ",block_size_y=" #by ",tile_size_x=" #tx ",tile_size_y=" #ty          \
    ",read_only=" #ro ",use_padding=" #pad ",use_shmem=" #sh ",use_cmem=1,filter_height=15,"   \
    "filter_width=15"

static void test_known_configs(void)
{
    tt_backend *b = open_replay("replay:convolution_A100", g_t, TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    /* the T4 file is found first; its content hash is in the fingerprint */
    char *p = tt_test_shared("datasets/convolution_A100.t4.json.gz");
    const tt_dataset *ds = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_dataset_cache_get(p, &ds, &e), TT_OK);
    free(p);
    char want[80];
    snprintf(want, sizeof want, "replay:convolution_A100@%.8s", ds->hash);
    CU_ASSERT_STRING_EQUAL(tt_backend_fingerprint(b), want);

    tt_measurement m;
    CU_ASSERT_EQUAL(measure(b, CONF(16, 1, 1, 1, 0, 0, 0), &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    CU_ASSERT_EQUAL(m.nsamples, 32);
    CU_ASSERT(fabs(m.median_us - 3871.74391746521) < 1e-6);
    CU_ASSERT(fabs(m.compile_s - 0.9185990339610726) < 1e-9);
    CU_ASSERT(m.min_us <= m.median_us && m.spread_us >= 0);

    CU_ASSERT_EQUAL(measure(b, CONF(128, 2, 4, 3, 1, 0, 1), &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    CU_ASSERT(fabs(m.median_us - 881.663978099823) < 1e-6);
    /* the recorded best of the space */
    CU_ASSERT_EQUAL(measure(b, CONF(32, 4, 1, 3, 1, 0, 1), &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    CU_ASSERT(m.median_us > 540 && m.median_us < 560);

    CU_ASSERT_EQUAL(measure(b, CONF(32, 16, 2, 4, 1, 0, 0), &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_ERUN);
    CU_ASSERT_EQUAL(m.nsamples, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(m.error, "runtime"));
    CU_ASSERT_EQUAL(measure(b, CONF(80, 8, 3, 4, 0, 1, 1), &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_EBUILD);
    CU_ASSERT(fabs(m.compile_s - 7.281776526011527) < 1e-9);
    /* excluded by the T1 conditions, hence never recorded */
    CU_ASSERT_EQUAL(measure(b, CONF(32, 1, 1, 1, 0, 1, 1), &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_EINFEASIBLE);
    CU_ASSERT_STRING_EQUAL(m.error, "not in dataset");
    tt_backend_close(b);
}

typedef struct walk {
    tt_backend *b;
    size_t by_status[TT_RC__COUNT];
    size_t not_in_dataset;
    size_t precomputed_wrong;   /* summary computed at open != a fresh one */
} walk;

/* 1 when m's precomputed summary (replay computes it once per process) is exactly what
 * tt_measurement_summarise makes of its samples. */
static int precomputed_ok(const tt_measurement *m)
{
    if (!m->summarised) return 0;
    tt_measurement fresh = *m;
    tt_measurement_summarise(&fresh);
    return fresh.median_us == m->median_us && fresh.spread_us == m->spread_us &&
           fresh.min_us == m->min_us;
}

static int visit(void *ud, const int64_t *slots)
{
    walk *w = ud;
    int64_t s[TT_MAX_SLOTS] = {0};
    memcpy(s, slots, g_t->nslots * sizeof s[0]);   /* the visitor's vector is nslots long */
    tt_measurement m;
    if (tt_backend_measure(w->b, s, &m) != TT_OK) return 1;
    w->by_status[m.status]++;
    w->not_in_dataset += strcmp(m.error, "not in dataset") == 0;
    if (m.status == TT_OK) w->precomputed_wrong += !precomputed_ok(&m);
    return 0;
}

/* The T1 conditions select exactly the recorded configs: every config of the T1 space is in
 * the dataset (4201 measured, 155 runtime failures, 6 compile failures, no InvalidConfig)
 * and every config of the product that the conditions reject is absent.  Each measured one
 * comes with the summary computed at open, equal to a fresh one. */
static void test_space_equals_dataset(void)
{
    tt_backend *b = open_replay("replay:convolution_A100", g_t, TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_space *s = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_space_new(g_t, slots, NULL, &s, &e), TT_OK);
    walk w = {.b = b};
    tt_space_counts c;
    CU_ASSERT_EQUAL(tt_space_enumerate(s, visit, &w, 0, &c), TT_OK);
    CU_ASSERT_EQUAL(c.feasible, 4362);
    CU_ASSERT_EQUAL(w.by_status[TT_OK], 4201);
    CU_ASSERT_EQUAL(w.by_status[TT_ERUN], 155);
    CU_ASSERT_EQUAL(w.by_status[TT_EBUILD], 6);
    CU_ASSERT_EQUAL(w.not_in_dataset, 0);
    CU_ASSERT_EQUAL(w.precomputed_wrong, 0);   /* every one of the 4201 */
    /* the rest of the cartesian product: rejected by the conditions and absent */
    size_t rejected = 0, absent = 0;
    for (uint64_t i = 0; i < tt_space_total(s); i++) {
        int64_t x[TT_MAX_SLOTS] = {0};
        tt_space_decode(s, i, x);
        int64_t y[TT_MAX_SLOTS];
        memcpy(y, x, sizeof y);
        if (tt_space_check(s, y, &e) == TT_OK) continue;
        rejected++;
        tt_measurement m;
        CU_ASSERT_EQUAL(tt_backend_measure(b, x, &m), TT_OK);
        absent += m.status == TT_EINFEASIBLE && strcmp(m.error, "not in dataset") == 0;
    }
    CU_ASSERT_EQUAL(rejected, 10240 - 4362);
    CU_ASSERT_EQUAL(absent, rejected);
    tt_space_free(s);
    tt_backend_close(b);
}

/* A KT cache found by its suffix gives the same answers, with its own content hash; a second
 * open does not parse the file again. */
static void test_kt_cache_and_reuse(void)
{
    char *dir = tt_test_tmpdir("tt-replay");
    char link[512];
    snprintf(link, sizeof link, "%s/conv.kt-cache.json.gz", dir);
    char *kt = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    CU_ASSERT_EQUAL_FATAL(symlink(kt, link), 0);
    free(kt);
    tt_backend_env saved = g_env;
    g_env.datasets_dir = dir;
    tt_backend *b = open_replay("replay:conv", g_t, TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    size_t loads = tt_dataset_cache_loads();
    tt_backend *b2 = open_replay("replay:conv", g_t, TT_OK);
    CU_ASSERT_EQUAL(tt_dataset_cache_loads(), loads);
    CU_ASSERT_STRING_EQUAL(tt_backend_fingerprint(b), tt_backend_fingerprint(b2));
    CU_ASSERT_EQUAL(strncmp(tt_backend_fingerprint(b), "replay:conv@", 12), 0);
    tt_measurement m;
    CU_ASSERT_EQUAL(measure(b2, CONF(16, 1, 1, 1, 0, 0, 0), &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    CU_ASSERT(fabs(m.median_us - 3871.74391746521) < 1e-6);
    tt_backend_close(b);
    tt_backend_close(b2);
    g_env = saved;
    tt_test_rmrf(dir);
    free(dir);
}

static void test_mi250x(void)
{
    tt_backend *b = open_replay("replay:convolution_MI250X", g_t, TT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    tt_measurement m;
    CU_ASSERT_EQUAL(measure(b, CONF(16, 1, 1, 1, 0, 0, 0), &m), TT_OK);
    CU_ASSERT_EQUAL(m.status, TT_OK);
    CU_ASSERT(fabs(m.median_us - 12257.819652557373) < 1e-6);
    tt_backend_close(b);
}

static void test_param_mismatch(void)
{
    /* the T1 params with one renamed and one extra */
    json_t *doc = json_deep_copy(g_t->doc);
    json_t *params = json_object_get(doc, "params");
    json_object_set(params, "block_x", json_object_get(params, "block_size_x"));
    json_object_del(params, "block_size_x");
    json_object_set_new(params, "unroll", json_pack("[i,i]", 1, 2));
    json_object_set_new(doc, "constraints", json_array());
    tt_template *t = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc, NULL, &t, &e), TT_OK);
    json_decref(doc);
    int64_t problem[TT_MAX_SLOTS] = {0};
    tt_backend *b = NULL;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_backend_open("replay:convolution_A100", &g_env, t, NULL, problem, &b, &e),
                    TT_EUNSUPPORTED);
    CU_ASSERT_PTR_NULL(b);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "template lacks: block_size_x"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "dataset lacks: block_x, unroll"));
    tt_tmpl_free(t);
}

static void test_bad_names(void)
{
    static const struct {
        const char *spec;
        tt_rc rc;
    } cases[] = {
        {"replay:", TT_EINVAL},
        {"replay:../datasets/convolution_A100", TT_EINVAL},
        {"replay:a/b", TT_EINVAL},
        {"replay:..", TT_EINVAL},
        {"replay:.hidden", TT_EINVAL},
        {"replay:conv..x", TT_EINVAL},
        {"replay:no such", TT_EINVAL},
        {"replay:no_such_dataset", TT_ENOTFOUND},
        {"replay:convolution", TT_ENOTFOUND},   /* convolution.t1.json is not a dataset name */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_backend *b = open_replay(cases[i].spec, g_t, cases[i].rc);
        CU_ASSERT_PTR_NULL(b);
        tt_backend_close(b);
    }
    /* a file that is found but is not a dataset */
    char *dir = tt_test_tmpdir("tt-replay-bad");
    char p[512];
    snprintf(p, sizeof p, "%s/junk.json", dir);
    FILE *f = fopen(p, "w");
    fputs("{\"results\": []}", f);
    fclose(f);
    tt_backend_env saved = g_env;
    g_env.datasets_dir = dir;
    tt_backend *b = open_replay("replay:junk", g_t, TT_EINVAL);
    CU_ASSERT_PTR_NULL(b);
    g_env.datasets_dir = NULL;
    b = open_replay("replay:junk", g_t, TT_ENOTFOUND);
    g_env = saved;
    tt_test_rmrf(dir);
    free(dir);
}

/* The text of a small Kernel Tuner cache of the test data (malloc'd; NULL when unreadable). */
static char *sample_text(void)
{
    char *src = tt_test_src("tests/data/datasets/many_samples.kt-cache.json");
    char *text = src ? tt_test_read_file(src, NULL) : NULL;
    free(src);
    return text;
}

/* Write text (plus `extra`, appended: another recording) to dir/name, gzip when gz. */
static void put(const char *dir, const char *name, const char *text, const char *extra, int gz)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (gz) {
        gzFile g = gzopen(p, "wb");
        CU_ASSERT_FATAL(g != NULL);
        CU_ASSERT(gzputs(g, text) > 0 && (!*extra || gzputs(g, extra) > 0));
        CU_ASSERT_EQUAL(gzclose(g), Z_OK);
        return;
    }
    FILE *f = fopen(p, "w");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(fputs(text, f) >= 0 && fputs(extra, f) >= 0);
    CU_ASSERT_EQUAL(fclose(f), 0);
}

/* "replay:<name>@<8 hex>" of the dataset file dir/file as the loader hashes it. */
static void fp_of(const char *dir, const char *file, const char *name, char *out, size_t cap)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    tt_dataset *ds = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_dataset_load_file(p, &ds, NULL), TT_OK);
    snprintf(out, cap, "replay:%s@%.8s", name, ds->hash);
    tt_dataset_free(ds);
}

/* The fingerprints a directory's datasets give (what a team worker claims replay: jobs by):
 * each name under the file the backend opens for it, gzip hashed decompressed, names that
 * cannot be dataset names and other files left out; each file hashed once until it
 * changes. */
static void test_dir_fingerprints(void)
{
    char *text = sample_text();
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *dir = tt_test_tmpdir("tt-replay-fps");
    put(dir, "x.kt-cache.json", text, "", 0);
    put(dir, "g.t4.json.gz", text, "", 1);      /* gzip: the hash of the plain bytes */
    put(dir, "z.t4.json", text, " ", 0);        /* z opens z.t4.json, not z.json */
    put(dir, "z.json", text, "  ", 0);
    put(dir, ".h.json", text, "", 0);           /* not a dataset name */
    put(dir, "notes.txt", text, "", 0);
    char x[96], xk[96], g[96], gt[96], z[96], zt[96], zj[96];
    fp_of(dir, "x.kt-cache.json", "x", x, sizeof x);
    fp_of(dir, "x.kt-cache.json", "x.kt-cache", xk, sizeof xk);
    fp_of(dir, "x.kt-cache.json", "g", g, sizeof g);   /* same bytes as g.t4.json.gz */
    fp_of(dir, "x.kt-cache.json", "g.t4", gt, sizeof gt);
    fp_of(dir, "z.t4.json", "z", z, sizeof z);
    fp_of(dir, "z.t4.json", "z.t4", zt, sizeof zt);
    fp_of(dir, "z.json", "z", zj, sizeof zj);
    size_t reads = tt_dataset_hash_reads();
    char *fps = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_backend_replay_fps(dir, &fps), TT_OK);
    const char *want[] = {x, xk, g, gt, z, zt};
    size_t len = 1;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char item[100];
        snprintf(item, sizeof item, ",%s,", want[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(fps, item));
        if (!strstr(fps, item)) fprintf(stderr, "\nmissing %s in %s\n", item, fps);
        len += strlen(want[i]) + 1;
    }
    CU_ASSERT_EQUAL(strlen(fps), len);          /* nothing else: not z.json, .h, notes */
    CU_ASSERT_PTR_NULL(strstr(fps, zj));
    CU_ASSERT_EQUAL(tt_dataset_hash_reads(), reads + 3);   /* x, g, z.t4.json: once each */
    free(fps);
    CU_ASSERT_EQUAL_FATAL(tt_backend_replay_fps(dir, &fps), TT_OK);
    CU_ASSERT_EQUAL(tt_dataset_hash_reads(), reads + 3);   /* nothing read again */
    free(fps);
    put(dir, "x.kt-cache.json", text, "\n", 0);   /* replaced: read again, a new hash */
    fp_of(dir, "x.kt-cache.json", "x", xk, sizeof xk);
    CU_ASSERT_STRING_NOT_EQUAL(xk, x);
    CU_ASSERT_EQUAL_FATAL(tt_backend_replay_fps(dir, &fps), TT_OK);
    char item[100];
    snprintf(item, sizeof item, ",%s,", xk);
    CU_ASSERT_PTR_NOT_NULL(strstr(fps, item));
    CU_ASSERT_EQUAL(tt_dataset_hash_reads(), reads + 4);
    free(fps);
    CU_ASSERT_EQUAL(tt_backend_replay_fps("/nonexistent/dir", &fps), TT_OK);
    CU_ASSERT_STRING_EQUAL(fps, ",");
    free(fps);
    free(text);
    tt_test_rmrf(dir);
    free(dir);
}

/* A dataset kept as <name>.json, which the replay backend opens (docs/datasets.md), is
 * accepted at submission with the backend's fingerprint.  The submission check looked for
 * the .t4 and .kt-cache forms only: "no dataset 'y' in DIR". */
static void test_check_backend_plain_json(void)
{
    json_t *t1 = json_loads("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": "
                            "\"a\", \"Type\": \"int\", \"Values\": \"[1, 2, 3]\"}, {\"Name\": "
                            "\"b\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}], "
                            "\"Conditions\": []}}", 0, NULL);
    json_t *doc = NULL;
    tt_template *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tt_t1_to_template(t1, "plainjson", &doc, NULL), TT_OK);
    json_decref(t1);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc, NULL, &t, NULL), TT_OK);
    json_decref(doc);
    char *text = sample_text();
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *dir = tt_test_tmpdir("tt-replay-plain");
    put(dir, "y.json", text, "", 0);
    tt_runner_config c = {.db_url = "x", .workers = 1, .datasets_dir = dir, .work_dir = dir};
    char fp[80] = "", want[96];
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_runner_check_backend(&c, t, "replay:y", fp, &e), TT_OK);
    fp_of(dir, "y.json", "y", want, sizeof want);
    CU_ASSERT_STRING_EQUAL(fp, want);
    if (strcmp(fp, want)) fprintf(stderr, "\ncheck: %s\n", e.msg);
    free(text);
    tt_tmpl_free(t);
    tt_test_rmrf(dir);
    free(dir);
}

static const tt_test_case cases[] = {
    {"known_configs", test_known_configs},
    {"space_equals_dataset", test_space_equals_dataset},
    {"kt_cache_and_reuse", test_kt_cache_and_reuse},
    {"mi250x", test_mi250x},
    {"param_mismatch", test_param_mismatch},
    {"bad_names", test_bad_names},
    {"dir_fingerprints", test_dir_fingerprints},
    {"check_backend_plain_json", test_check_backend_plain_json},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"backend_replay", setup, teardown, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

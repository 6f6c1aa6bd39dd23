/* SPDX-License-Identifier: MIT
 * test_ci_import.c - POST /v1/import called directly on a hand-built tt_server with a
 * temporary SQLite store (tests/helpers/ci_fixture): import counts and idempotency with the
 * real datasets (T1, Kernel Tuner cache, T4 of a second recording), the error answers, and
 * the import job on PostgreSQL (the job row inserted through the engine) and two concurrent
 * imports of one file there.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <zlib.h>

#include "ci_fixture.h"
#include "dataset.h"
#include "jsonutil.h"
#include "pg_cluster.h"
#include "tt_test.h"

static char g_pg_url[600];

/* ---- import ---------------------------------------------------------------------- */
/* POST /v1/import of len bytes (borrowed) with query (a new reference the call takes). */
static void import_bytes(const char *data, size_t len, json_t *query, tt_resp *r)
{
    tt_req req;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = "/v1/import";
    req.query = query;
    req.raw_body = data;
    req.raw_len = len;
    req.token_name = "tester";
    req.scopes = TT_SCOPE_TUNE;
    memset(r, 0, sizeof *r);
    tt_api_import(&tt_cfx_srv, &req, r);
    json_decref(query);
}

static void import_file(const char *rel, json_t *query, tt_resp *r)
{
    char *path = tt_test_shared(rel);
    size_t len = 0;
    char *data = tt_test_read_file(path, &len);
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    import_bytes(data, len, query, r);
    free(data);
}

/* text gzipped into a new buffer of *len bytes (caller frees). */
static char *gzip_text(const char *text, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    CU_ASSERT_EQUAL_FATAL(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8,
                                       Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, strlen(text)) + 64;
    char *out = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    z.next_in = (unsigned char *)text;
    z.avail_in = (uInt)strlen(text);
    z.next_out = (unsigned char *)out;
    z.avail_out = (uInt)cap;
    CU_ASSERT_EQUAL(deflate(&z, Z_FINISH), Z_STREAM_END);
    *len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

static json_int_t jint(const tt_resp *r, const char *k)
{
    return json_integer_value(json_object_get(r->json, k));
}

static void test_import_t1_then_data(void)
{
    tt_resp r;
    import_file("datasets/convolution.t1.json", json_pack("{s:s}", "template", "convolution"), &r);
    CU_ASSERT_EQUAL(r.status, 201);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "kind")), "template");
    CU_ASSERT_EQUAL(jint(&r, "added"), 1);
    tt_cfx_resp_clear(&r);
    import_file("datasets/convolution.t1.json", json_pack("{s:s}", "template", "convolution"), &r);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(jint(&r, "added"), 0);
    CU_ASSERT_EQUAL(jint(&r, "skipped"), 1);
    tt_cfx_resp_clear(&r);
    const tt_template *conv;
    CU_ASSERT_EQUAL_FATAL(tt_catalog_template(tt_cfx_srv.catalog, tt_cfx_srv.store, "convolution", NULL,
                                              &conv, NULL), TT_OK);
    CU_ASSERT(conv->nparams >= 4);
    CU_ASSERT_PTR_NULL(conv->kernel);

    /* Kernel Tuner cache: every record is added or rejected; the second import adds none */
    tt_dataset *ds = NULL;
    char *kt = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    CU_ASSERT_EQUAL_FATAL(tt_dataset_load_file(kt, &ds, NULL), TT_OK);
    free(kt);
    size_t nrec = ds->nrecords;
    tt_dataset_free(ds);
    import_file("datasets/convolution_A100.kt-cache.json.gz",
                json_pack("{s:s, s:s}", "template", "convolution", "file", "kt.json.gz"), &r);
    CU_ASSERT_EQUAL(r.status, 201);
    json_int_t added = jint(&r, "added"), rejected = jint(&r, "rejected");
    CU_ASSERT(added > 4000);
    CU_ASSERT_EQUAL((size_t)(added + rejected), nrec);
    CU_ASSERT_EQUAL(jint(&r, "skipped"), 0);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "format")), "kt-cache");
    json_int_t job = jint(&r, "job");
    char target[64];
    snprintf(target, sizeof target, "%s", json_string_value(json_object_get(r.json, "target")));
    CU_ASSERT(strstr(target, "a100") != NULL);
    tt_cfx_resp_clear(&r);
    import_file("datasets/convolution_A100.kt-cache.json.gz",
                json_pack("{s:s, s:s}", "template", "convolution", "format", "kt-cache"), &r);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(jint(&r, "added"), 0);
    CU_ASSERT_EQUAL(jint(&r, "skipped"), added);
    CU_ASSERT_EQUAL(jint(&r, "rejected"), rejected);
    CU_ASSERT_TRUE(json_is_null(json_object_get(r.json, "job")));
    tt_cfx_resp_clear(&r);

    /* the import job is done, with strategy import and every trial linked */
    tt_job j;
    CU_ASSERT_EQUAL_FATAL(tt_store_job_get(tt_cfx_srv.store, job, &j), TT_OK);
    CU_ASSERT_EQUAL(j.state, TT_JOB_DONE);
    CU_ASSERT_STRING_EQUAL(j.strategy, "import");
    CU_ASSERT(strncmp(j.backend_fp, "import:", 7) == 0);
    CU_ASSERT_EQUAL(j.done, added);
    CU_ASSERT(j.best_us > 0);
    /* best updated: the fastest ok record of the file */
    tt_best_query bq = {"convolution", target, "", NULL, NULL};
    tt_best b;
    memset(&b, 0, sizeof b);
    CU_ASSERT_EQUAL(tt_store_best_get(tt_cfx_srv.store, &bq, &b), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(b.median_us, j.best_us, 1e-9);
    tt_best_clear(&b);
    tt_job_clear(&j);
}

static void test_import_errors(void)
{
    tt_resp r;
    /* no template for data */
    import_file("datasets/convolution_A100.t4.json.gz", json_object(), &r);
    CU_ASSERT_EQUAL(r.status, 400);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), "template");
    tt_cfx_resp_clear(&r);
    /* wrong declared format */
    import_file("datasets/convolution_A100.t4.json.gz",
                json_pack("{s:s, s:s}", "template", "convolution", "format", "kt-cache"), &r);
    CU_ASSERT_EQUAL(r.status, 422);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_path(&r), "format");
    tt_cfx_resp_clear(&r);
    /* params of the file do not match the template */
    import_file("datasets/convolution_A100.t4.json.gz", json_pack("{s:s}", "template",
                "convolution"), &r);   /* T4 names no device */
    CU_ASSERT_EQUAL(r.status, 422);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(&r), "invalid_target");
    tt_cfx_resp_clear(&r);
    import_file("datasets/convolution_A100.t4.json.gz",
                json_pack("{s:s, s:s}", "template", "gemm", "target", "a2"), &r);
    CU_ASSERT_EQUAL(r.status, 422);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(&r), "invalid_problem");   /* gemm has inputs */
    tt_cfx_resp_clear(&r);
    import_file("datasets/convolution_A100.t4.json.gz",
                json_pack("{s:s, s:s, s:s}", "template", "gemm", "problem", "M=64,N=64,K=64",
                          "target", "a2"), &r);
    if (r.status != 422) fprintf(stderr, "import gemm: %d %s %s\n", r.status, tt_cfx_err_code(&r), tt_cfx_err_path(&r));
    CU_ASSERT_EQUAL(r.status, 422);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(&r), "unsupported");
    tt_cfx_resp_clear(&r);
    /* unknown format name, unknown query member */
    import_file("datasets/convolution.t1.json", json_pack("{s:s}", "format", "csv"), &r);
    CU_ASSERT_EQUAL(r.status, 400);
    tt_cfx_resp_clear(&r);
    import_file("datasets/convolution.t1.json", json_pack("{s:s}", "colour", "red"), &r);
    CU_ASSERT_EQUAL(r.status, 400);
    tt_cfx_resp_clear(&r);
    /* not JSON at all */
    tt_cfx_call(tt_api_import, "POST", "this is not a dataset", json_object(), &r);
    CU_ASSERT(r.status == 400);
    tt_cfx_resp_clear(&r);
    tt_cfx_call(tt_api_import, "POST", NULL, json_object(), &r);
    CU_ASSERT_EQUAL(r.status, 400);
    tt_cfx_resp_clear(&r);
    /* T1 with a non-integer param */
    tt_cfx_call(tt_api_import, "POST",
         "{\"ConfigurationSpace\":{\"TuningParameters\":[{\"Name\":\"x\",\"Type\":\"float\","
         "\"Values\":\"[0.5]\"}],\"Conditions\":[]},\"General\":{\"BenchmarkName\":\"b\"}}",
         json_pack("{s:s}", "format", "t1"), &r);
    CU_ASSERT(r.status == 422 || r.status == 400);
    CU_ASSERT(strstr(tt_cfx_err_path(&r), "TuningParameters") != NULL);
    tt_cfx_resp_clear(&r);
    /* a T1 file whose BenchmarkName is a built-in's ("gemm", as the community's CLBlast
     * space): refused, and the answer says how to import it under another name */
    static const char *const gemm_t1 =
        "{\"ConfigurationSpace\":{\"TuningParameters\":[{\"Name\":\"MWG\",\"Type\":\"int\","
        "\"Values\":\"[16, 32]\"}],\"Conditions\":[]},\"General\":{\"BenchmarkName\":\"gemm\"}}";
    tt_cfx_call(tt_api_import, "POST", gemm_t1, json_pack("{s:s}", "format", "t1"), &r);
    CU_ASSERT_EQUAL(r.status, 403);
    const char *msg = tt_cfx_js(json_object_get(json_object_get(r.json, "error"), "message"));
    CU_ASSERT(msg && strstr(msg, "-T NAME") != NULL);
    tt_cfx_resp_clear(&r);
    tt_cfx_call(tt_api_import, "POST", gemm_t1,
                json_pack("{s:s, s:s}", "format", "t1", "template", "gemm_clblast"), &r);
    CU_ASSERT_EQUAL(r.status, 201);
    tt_cfx_resp_clear(&r);
}

/* A gzipped T1 file is a T1 file, recognised from its content or named by format=t1 (it used
 * to be refused: "T1 file: line 0 column -1:" from an unset jansson error with format=t1,
 * "neither a Kernel Tuner cache nor T4 results" without); a truncated one is bad_encoding. */
static void test_import_t1_gzip(void)
{
    static const char *const t1 =
        "{\"General\": {\"BenchmarkName\": \"vgz\"}, \"ConfigurationSpace\": "
        "{\"TuningParameters\": [{\"Name\": \"block\", \"Type\": \"int\", \"Values\": "
        "\"[64, 128]\"}], \"Conditions\": []}}";
    static const struct {
        const char *format;
        int status;
        json_int_t added;
    } cases[] = {{"t1", 201, 1}, {NULL, 200, 0}, {"t1", 200, 0}};
    size_t n = 0;
    char *gz = gzip_text(t1, &n);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_resp r;
        import_bytes(gz, n, cases[i].format ? json_pack("{s:s}", "format", cases[i].format)
                                            : json_object(), &r);
        if (r.status != cases[i].status)
            fprintf(stderr, "t1 gzip case %zu: %d %s\n", i, r.status, tt_cfx_err_code(&r));
        CU_ASSERT_EQUAL(r.status, cases[i].status);
        CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "kind")), "template");
        CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "template")), "vgz");
        CU_ASSERT_EQUAL(jint(&r, "added"), cases[i].added);
        tt_cfx_resp_clear(&r);
    }
    tt_resp r;
    import_bytes(gz, n / 2, json_pack("{s:s}", "format", "t1"), &r);
    CU_ASSERT_EQUAL(r.status, 400);
    CU_ASSERT_STRING_EQUAL(tt_cfx_err_code(&r), "bad_encoding");
    tt_cfx_resp_clear(&r);
    free(gz);
}

/* A recording of a device the catalog knows lands on its catalog target (it used to be stored
 * under "ascend910b2", a target no best / export / check query reaches, and the same file
 * imported with target=a2 was added a second time); another device keeps its lower-cased name. */
static void test_import_device_target(void)
{
    static const struct {
        const char *device, *target;   /* target= of the query, NULL: none */
        int status;
        const char *stored;
    } cases[] = {
        {"Ascend910B2", NULL, 201, "Ascend910B2"},
        {"Ascend910B2", "a2", 200, "Ascend910B2"},   /* the same records: skipped */
        {"910b2", NULL, 201, "Ascend910B2"},   /* an alias; another file: another recording */
        {"NVIDIA A100-PCIE-40GB", NULL, 201, "nvidia-a100-pcie-40gb"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char kt[512];
        snprintf(kt, sizeof kt, "{\"device_name\": \"%s\", \"kernel_name\": \"vgz\", "
                 "\"problem_size\": [1], \"tune_params_keys\": [\"block\"], \"tune_params\": "
                 "{\"block\": [64, 128]}, \"objective\": \"time\", \"cache\": {\"64\": "
                 "{\"block\": 64, \"time\": 0.02, \"times\": [0.02]}}}", cases[i].device);
        tt_resp r;
        json_t *q = json_pack("{s:s}", "template", "vgz");
        if (cases[i].target) json_object_set_new(q, "target", json_string(cases[i].target));
        import_bytes(kt, strlen(kt), q, &r);
        if (r.status != cases[i].status)
            fprintf(stderr, "device case %zu: %d %s\n", i, r.status, tt_cfx_err_code(&r));
        CU_ASSERT_EQUAL(r.status, cases[i].status);
        CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "target")), cases[i].stored);
        tt_cfx_resp_clear(&r);
    }
    tt_resp r;
    tt_cfx_call(tt_api_export, "GET", NULL, json_pack("{s:s, s:s}", "template", "vgz", "target",
                                                      "a2"), &r);
    CU_ASSERT_EQUAL(r.status, 200);
    tt_cfx_resp_clear(&r);
}

static void test_import_t4_second_device(void)
{
    /* the T4 of the same measurement is another recording (its own fingerprint) */
    tt_resp r;
    import_file("datasets/convolution_A100.t4.json.gz",
                json_pack("{s:s, s:s}", "template", "convolution", "target", "a100-t4"), &r);
    CU_ASSERT_EQUAL(r.status, 201);
    CU_ASSERT(jint(&r, "added") > 4000);
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "target")), "a100-t4");
    CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(r.json, "format")), "t4");
    tt_cfx_resp_clear(&r);
    /* export of imported data works for templates without inputs */
    tt_cfx_call(tt_api_export, "GET", NULL,
         json_pack("{s:s, s:s, s:s}", "template", "convolution", "target", "a2", "format", "json"),
         &r);
    CU_ASSERT_EQUAL(r.status, 404);   /* nothing for a2 */
    tt_cfx_resp_clear(&r);
    /* the read routes take the name the data were imported under, not only configured
     * targets; a name that is neither says so, with the configured target it is close to */
    static const struct {
        void (*fn)(tt_server *, const tt_req *, tt_resp *);
        const char *target;
        int status;
        const char *in_message;
    } reads[] = {
        {tt__api_best, "a100-t4", 200, NULL},
        {tt_api_export, "a100-t4", 200, NULL},
        {tt__api_best, "a100-t5", 404, "\"a100-t5\" is not a configured target)"},
        {tt_api_export, "a100-t5", 404, "\"a100-t5\" is not a configured target)"},
        {tt__api_best, "a22", 404, "not a configured target; did you mean \"a2\"?"},
        {tt_api_export, "Ascend910B22", 404, "did you mean \"Ascend910B2\"?"},
        {tt__api_best, "a2", 404, "no tuned config for convolution on Ascend910B2 (nearest"},
        {tt__api_best, "a/2", 422, "unknown target"},
        {tt_api_export, "a/2", 422, "unknown target"},
    };
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        json_t *q = json_pack("{s:s, s:s}", "template", "convolution", "target",
                              reads[i].target);
        if (reads[i].fn == tt_api_export) json_object_set_new(q, "format", json_string("json"));
        tt_cfx_call(reads[i].fn, "GET", NULL, q, &r);
        const char *msg = tt_cfx_js(json_object_get(json_object_get(r.json, "error"),
                                                    "message"));
        int ok = r.status == reads[i].status &&
                 (!reads[i].in_message || strstr(msg, reads[i].in_message));
        if (!ok) fprintf(stderr, "\nreads[%zu] %s: %d %s\n", i, reads[i].target, r.status, msg);
        CU_ASSERT_TRUE(ok);
        json_t *body = r.json ? json_incref(r.json) : json_loads(r.text ? r.text : "", 0, NULL);
        if (r.status == 200)   /* best answers cached text, export a JSON body */
            CU_ASSERT_STRING_EQUAL(tt_cfx_js(json_object_get(body, "target")), "a100-t4");
        json_decref(body);
        tt_cfx_resp_clear(&r);
    }
}

/* ---- the import job on PostgreSQL (the job row is inserted through the engine) ---------- */
static tt_pg_cluster g_pg;
/* The server of the PostgreSQL cases: the shared fixture's limits over g_pg_url; imports
 * run on connections of their own (runner_cfg.db_url), as in the daemon. */
static tt_server g_pgsrv;

static int pg_init(void)
{
    char err[512], url[600];
    if (tt_pg_cluster_start(&g_pg, err, sizeof err) ||
        tt_pg_cluster_createdb(&g_pg, "ci_import", url, sizeof url, err, sizeof err)) {
        fprintf(stderr, "postgres: %s\n", err);
        return -1;
    }
    snprintf(g_pg_url, sizeof g_pg_url, "%s", url);
    g_pgsrv = tt_cfx_srv_template;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    char *tdir = tt_test_src("templates"), *gdir = tt_test_src("costmodel/targets");
    int rc = tt_store_open(g_pg_url, &g_pgsrv.store, &e) ||
             tt_catalog_new(tdir, gdir, &g_pgsrv.catalog, &e) ||
             tt_catalog_sync(g_pgsrv.catalog, g_pgsrv.store);
    free(tdir);
    free(gdir);
    if (rc) {
        fprintf(stderr, "postgres server: %s\n", e.msg);
        return -1;
    }
    g_pgsrv.runner_cfg.catalog = g_pgsrv.catalog;
    g_pgsrv.runner_cfg.db_url = g_pg_url;
    return 0;
}

static int pg_cleanup(void)
{
    tt_catalog_free(g_pgsrv.catalog);
    tt_store_close(g_pgsrv.store);
    tt_pg_cluster_stop(&g_pg);
    return tt_cfx_cleanup();
}

/* 25 records of the A100 recording as a T4 file in *t4 / *len (caller frees). */
static void small_t4(char **t4, size_t *len)
{
    tt_dataset *ds = NULL, *small = NULL;
    char *kt = tt_test_shared("datasets/convolution_A100.kt-cache.json.gz");
    CU_ASSERT_EQUAL_FATAL(tt_dataset_load_file(kt, &ds, NULL), TT_OK);
    free(kt);
    CU_ASSERT_EQUAL_FATAL(tt_dataset_new((const char *const *)ds->params, ds->nparams, &small, NULL), TT_OK);
    for (size_t i = 0; i < 25 && i < ds->nrecords; i++) {
        const tt_ds_record *rec = &ds->records[i];
        tt_dataset_add(small, tt_ds_values(ds, rec), rec->status, tt_ds_samples(ds, rec),
                       rec->nsamples, rec->compile_s, NULL, NULL);
    }
    *t4 = NULL;
    CU_ASSERT_EQUAL(tt_dataset_write_t4_buffer(small, 0, t4, len, NULL), TT_OK);
    tt_dataset_free(small);
    tt_dataset_free(ds);
}

static void test_import_pg(void)
{
    tt_server saved = tt_cfx_srv;
    tt_cfx_srv = g_pgsrv;                 /* tt_cfx_call() talks to tt_cfx_srv */
    tt_resp r;
    import_file("datasets/convolution.t1.json", json_pack("{s:s}", "template", "conv"), &r);
    CU_ASSERT_EQUAL(r.status, 201);
    tt_cfx_resp_clear(&r);
    char *t4 = NULL;
    size_t len = 0;
    small_t4(&t4, &len);
    for (int round = 0; t4 && round < 2; round++) {
        tt_cfx_call(tt_api_import, "POST", t4, json_pack("{s:s, s:s}", "template", "conv", "target", "a100"), &r);
        CU_ASSERT_EQUAL(r.status, round ? 200 : 201);
        CU_ASSERT_EQUAL(jint(&r, "added"), round ? 0 : 25);
        CU_ASSERT_EQUAL(jint(&r, "skipped"), round ? 25 : 0);
        if (!round) {
            tt_job j;
            CU_ASSERT_EQUAL(tt_store_job_get(tt_cfx_srv.store, jint(&r, "job"), &j), TT_OK);
            CU_ASSERT_EQUAL(j.state, TT_JOB_DONE);
            CU_ASSERT_EQUAL(j.done, 25);
            CU_ASSERT_STRING_EQUAL(j.strategy, "import");
            tt_job_clear(&j);
        }
        tt_cfx_resp_clear(&r);
    }
    free(t4);
    tt_cfx_srv = saved;
}

/* One of two concurrent imports of the same file. */
typedef struct race_arg {
    const char *t4, *target;
    pthread_barrier_t *go;
    tt_resp resp;
} race_arg;

static void *race_import(void *p)
{
    race_arg *a = p;
    tt_req req;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = "/v1/import";
    json_t *q = json_pack("{s:s, s:s}", "template", "conv", "target", a->target);
    req.query = q;
    req.raw_body = a->t4;
    req.raw_len = strlen(a->t4);
    req.token_name = "tester";
    req.scopes = TT_SCOPE_TUNE;
    memset(&a->resp, 0, sizeof a->resp);
    pthread_barrier_wait(a->go);
    tt_api_import(&g_pgsrv, &req, &a->resp);
    json_decref(q);
    return NULL;
}

/* Two clients import the same T4 file at once (each on its own connection): every record
 * is added by exactly one of them and skipped by the other, and each import job's progress
 * is what it added.  Before, the import that lost the race on a record inserted it with ON
 * CONFLICT DO NOTHING, got the winner's row back and still counted it "added" (and its
 * next record's link took the same job seq, so one was lost).  Several rounds, each with a
 * target of its own, since which import wins each record is up to the scheduler. */
static void test_import_pg_concurrent(void)
{
    char *t4 = NULL;
    size_t len = 0;
    small_t4(&t4, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t4);
    for (int round = 0; round < 6; round++) {
        char target[32];
        snprintf(target, sizeof target, "race-%d", round);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        race_arg a[2] = {{t4, target, &go, {0}}, {t4, target, &go, {0}}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, race_import, &a[i]);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
        pthread_barrier_destroy(&go);
        json_int_t added = 0, skipped = 0;
        for (int i = 0; i < 2; i++) {
            CU_ASSERT(a[i].resp.status == 200 || a[i].resp.status == 201);
            added += jint(&a[i].resp, "added");
            skipped += jint(&a[i].resp, "skipped");
            json_int_t job = jint(&a[i].resp, "job");
            tt_job j;
            tt_trial *tr = NULL;
            size_t n = 0;
            int64_t links = -1;
            if (job && tt_store_job_get(g_pgsrv.store, job, &j) == TT_OK) {
                /* its progress counts its trials; all but those it added are reused */
                CU_ASSERT_EQUAL(tt_store_trial_list(g_pgsrv.store, job, 0, 100, &tr, &n, &links),
                                TT_OK);
                CU_ASSERT_EQUAL(j.done, links);
                size_t reused = 0;
                for (size_t k = 0; k < n; k++) reused += tr[k].reused != 0;
                CU_ASSERT_EQUAL((json_int_t)(n - reused), jint(&a[i].resp, "added"));
                for (size_t k = 0; k < n; k++) tt_trial_clear(&tr[k]);
                free(tr);
                tt_job_clear(&j);
            }
            tt_cfx_resp_clear(&a[i].resp);
        }
        CU_ASSERT_EQUAL(added, 25);
        CU_ASSERT_EQUAL(skipped, 25);
    }
    free(t4);
}

static const tt_test_case import_cases[] = {
    {"t1_then_data_idempotent", test_import_t1_then_data},
    {"errors", test_import_errors},
    {"t1_gzip", test_import_t1_gzip},
    {"device_target", test_import_device_target},
    {"t4_second_recording", test_import_t4_second_device},
    {NULL, NULL}};
static const tt_test_case import_pg_cases[] = {
    {"import_job_on_postgres", test_import_pg},
    {"concurrent_imports_count_once", test_import_pg_concurrent},
    {NULL, NULL}};
static const tt_test_suite suites[] = {
    /* one server for both suites: opened by the first, closed by the last */
    {"ci_import", tt_cfx_init, NULL, import_cases},
    {"ci_import_pg", pg_init, pg_cleanup, import_pg_cases},   /* closes the shared server */
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * test_alloc_fail_daemon.c - allocation-failure torture of the daemon's dataset readers:
 * every allocation of reading datasets in KT-cache, T4 and gzip form (daemon/backends/
 * dataset*.c) is made to fail once, and each must then return a clean error with nothing
 * leaked.
 *
 * How: tests/helpers/alloc_fail/tt_alloc_fail.h (malloc and friends interposed by this
 * program, a countdown that fails the Nth allocation, a live-block counter, each N in a
 * forked child).  Under AddressSanitizer nothing is interposed: each workload runs (twice)
 * unarmed and must succeed; the injection runs in the plain (-Werror) build.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "dataset.h"
#include "expr.h"
#include "jsonutil.h"
#include "model.h"
#include "render.h"
#include "sim.h"
#include "space.h"
#include "t1.h"
#include "target.h"
#include "template.h"
#include "tt_alloc_fail.h"
#include "tt_test.h"

static char *g_ds_dir, *g_ds_kt, *g_ds_t4, *g_ds_gz, *g_ds_big;

static const char KT_DOC[] =
    "{\"device_name\": \"NVIDIA A100\", \"kernel_name\": \"conv\", \"problem_size\": [4096, 4096],"
    " \"tune_params_keys\": [\"bx\", \"by\", \"unroll\"],"
    " \"tune_params\": {\"bx\": [16, 32, 64], \"by\": [1, 2], \"unroll\": [0, 1]},"
    " \"objective\": \"time\", \"cache\": {"
    "  \"16,1,0\": {\"bx\": 16, \"by\": 1, \"unroll\": 0, \"time\": 1.5, \"times\": [1.4, 1.5, 1.6],"
    "             \"compile_time\": 250.0, \"timestamp\": \"2024-01-01 00:00:00\"},"
    "  \"16,2,1\": {\"bx\": 16, \"by\": 2, \"unroll\": 1, \"time\": 1.25, \"times\": [1.25, 1.3],"
    "             \"compile_time\": 240.0},"
    "  \"32,1,0\": {\"bx\": 32, \"by\": 1, \"unroll\": 0, \"time\": \"InvalidConfig\"},"
    "  \"32,2,0\": {\"bx\": 32, \"by\": 2, \"unroll\": 0, \"time\": \"CompilationFailedConfig\"},"
    "  \"64,1,1\": {\"bx\": 64, \"by\": 1, \"unroll\": 1, \"time\": \"RuntimeFailedConfig\"},"
    "  \"64,2,1\": {\"bx\": 64, \"by\": 2, \"unroll\": 1, \"time\": 0.75, \"times\": [0.75, 0.8, 0.7, 0.9]}"
    "}}";

static const char T4_DOC[] =
    "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"milliseconds\"},"
    " \"results\": ["
    "  {\"configuration\": {\"bx\": 16, \"by\": 1, \"unroll\": 0}, \"invalidity\": \"correct\","
    "   \"times\": {\"runtimes\": [1.4, 1.5, 1.6], \"compilation\": 250.0},"
    "   \"measurements\": [{\"name\": \"time\", \"value\": 1.5, \"unit\": \"ms\"}],"
    "   \"timestamp\": \"2024-01-01T00:00:00Z\"},"
    "  {\"configuration\": {\"bx\": 16, \"by\": 2, \"unroll\": 1}, \"invalidity\": \"correct\","
    "   \"times\": {\"runtimes\": [1.25, 1.3]}},"
    "  {\"configuration\": {\"bx\": 32, \"by\": 1, \"unroll\": 0}, \"invalidity\": \"constraints\","
    "   \"times\": {}},"
    "  {\"configuration\": {\"bx\": 32, \"by\": 2, \"unroll\": false}, \"invalidity\": \"compile\"},"
    "  {\"configuration\": {\"bx\": 64, \"by\": 1, \"unroll\": true}, \"invalidity\": \"timeout\"},"
    "  {\"configuration\": {\"bx\": 64, \"by\": 2, \"unroll\": 1}, \"invalidity\": \"correct\","
    "   \"times\": {\"runtimes\": [0.75, 0.8, 0.7, 0.9], \"compilation\": 1.0}},"
    "  {\"configuration\": {\"bx\": 64, \"by\": 2, \"unroll\": 1}, \"invalidity\": \"correct\","
    "   \"times\": {\"runtimes\": [9.0]}}"
    "]}";

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int write_file(const char *path, const char *text, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        if (!f) return -1;
        int ok = gzwrite(f, text, (unsigned)strlen(text)) == (int)strlen(text);
        return gzclose(f) == Z_OK && ok ? 0 : -1;
    }
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(text, 1, strlen(text), f) == strlen(text);
    return fclose(f) == 0 && ok ? 0 : -1;
}

static int ds_init(void)
{
    if (tt_af_init()) return -1;
    g_ds_dir = tt_test_tmpdir("tt-alloc-fail");
    if (!g_ds_dir) return -1;
    g_ds_kt = join(g_ds_dir, "small.kt-cache.json");
    g_ds_t4 = join(g_ds_dir, "small.t4.json");
    g_ds_gz = join(g_ds_dir, "small.t4.json.gz");
    g_ds_big = join(g_ds_dir, "padded.kt-cache.json");
    size_t pad = (size_t)3 << 19;   /* 1.5 MiB */
    char *big = malloc(sizeof KT_DOC + pad);
    if (!g_ds_kt || !g_ds_t4 || !g_ds_gz || !g_ds_big || !big) {
        free(big);
        return -1;
    }
    memcpy(big, KT_DOC, sizeof KT_DOC - 1);
    memset(big + sizeof KT_DOC - 1, ' ', pad);
    big[sizeof KT_DOC - 1 + pad] = '\0';
    int bad = write_file(g_ds_kt, KT_DOC, 0) || write_file(g_ds_t4, T4_DOC, 0) ||
              write_file(g_ds_gz, T4_DOC, 1) || write_file(g_ds_big, big, 0);
    free(big);
    return bad ? -1 : 0;
}

static int ds_cleanup(void)
{
    if (g_ds_dir) tt_test_rmrf(g_ds_dir);
    free(g_ds_dir);
    free(g_ds_kt);
    free(g_ds_t4);
    free(g_ds_gz);
    free(g_ds_big);
    return tt_af_cleanup();
}

static tt_rc wl_dataset(uint64_t *digest)
{
    const char *const paths[] = {g_ds_kt, g_ds_t4, g_ds_gz, g_ds_big};
    uint64_t h = 7;
    for (int i = 0; i < 4; i++) {
        tt_dataset *ds = NULL;
        tt_errinfo e;
        tt_rc rc = tt_dataset_load_file(paths[i], &ds, &e);
        if (rc != TT_OK) return ds ? TT_EINTERNAL : rc;
        h = tt_af_mix(tt_af_mix(tt_af_mix(h, ds->nrecords), ds->nduplicates), ds->content_hash);
        for (size_t r = 0; r < ds->nrecords; r++) {
            const tt_ds_record *rec = &ds->records[r];
            h = tt_af_mix_double(tt_af_mix(h, (uint64_t)rec->status), rec->median_us);
            h = tt_af_mix_str(h, rec->timestamp);
            if (tt_dataset_find(ds, tt_ds_values(ds, rec)) != rec) h = tt_af_mix(h, 0xdead);
        }
        for (size_t p = 0; p < ds->nparams; p++) h = tt_af_mix(tt_af_mix_str(h, ds->params[p]), ds->ndomain[p]);
        h = tt_af_mix_str(tt_af_mix_str(h, ds->device), ds->kernel);
        if (i == 0) {   /* the T4 writer (export) */
            char *text = NULL;
            size_t len = 0;
            rc = tt_dataset_write_t4_buffer(ds, 0, &text, &len, &e);
            if (rc != TT_OK) {
                tt_dataset_free(ds);
                return text ? TT_EINTERNAL : rc;
            }
            h = tt_af_mix(tt_af_mix_str(h, text), len);
            free(text);
        }
        tt_dataset_free(ds);
    }
    *digest = h;
    return TT_OK;
}

/* 9. JSON text through tt_json_dumps(): a document of 300 members (several KB, so the buffer
 * grows), sorted and indented, then compact in insertion order.  An allocation failure must
 * give NULL, never text with a member missing (the digest would differ). */

static const tt_af_workload W_DS = {"dataset", wl_dataset, {TT_EJSON, TT_OK}};

static void test_dataset(void) { tt_af_torture(&W_DS); }

static const tt_test_case daemon_cases[] = {{"dataset", test_dataset}, {NULL, NULL}};

static const tt_test_suite suites[] = {
    {"alloc_fail_daemon", ds_init, ds_cleanup, daemon_cases},
    {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_af_main(argc, argv, suites); }

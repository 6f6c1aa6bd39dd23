/* SPDX-License-Identifier: MIT
 * test_target.c - chip target files: every shipped SoC loads with the HARDWARE.md facts,
 * names and aliases resolve case-insensitively, and the bad files of tests/data/targets/bad
 * (table in cases.txt) are rejected naming the file and the JSON path; a FIFO does not block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "target.h"
#include "tt_test.h"

static tt_targets *shipped;

static int load_shipped(void)
{
    char *dir = tt_test_src("costmodel/targets");
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_targets_load_dir(dir, &shipped, &e);
    if (rc) fprintf(stderr, "load %s: %s\n", dir, e.msg);
    free(dir);
    return rc ? 1 : 0;
}

static int free_shipped(void)
{
    tt_targets_free(shipped);
    shipped = NULL;
    return 0;
}

static void test_all_socs(void)
{
    static const struct {
        const char *name;
        int cube, vec;
        double mhz;
        const char *platform;
    } socs[] = {
        {"Ascend910B1", 24, 48, 1850, "A2"},    {"Ascend910B2", 24, 48, 1800, "A2"},
        {"Ascend910B3", 20, 40, 1800, "A2"},    {"Ascend910B4", 20, 40, 1500, "A2"},
        {"Ascend910_9391", 24, 48, 1850, "A3"}, {"Ascend910_9392", 24, 48, 1850, "A3"},
        {"Ascend910_9381", 24, 48, 1800, "A3"}, {"Ascend910_9382", 24, 48, 1800, "A3"},
        {"Ascend910_9372", 20, 40, 1800, "A3"}, {"Ascend910_9362", 20, 40, 1800, "A3"},
    };
    CU_ASSERT_EQUAL_FATAL(tt_targets_count(shipped), sizeof socs / sizeof socs[0]);
    for (size_t i = 0; i < sizeof socs / sizeof socs[0]; i++) {
        const tt_target *t = tt_targets_find(shipped, socs[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(t->name, socs[i].name);
        CU_ASSERT_EQUAL(t->cube_cores, socs[i].cube);
        CU_ASSERT_EQUAL(t->vector_cores, socs[i].vec);
        CU_ASSERT_DOUBLE_EQUAL(t->clock_mhz, socs[i].mhz, 1e-9);
        CU_ASSERT_STRING_EQUAL(t->platform, socs[i].platform);
        /* the codegen's usable capacities and the alignments */
        tt_caps c;
        tt_target_caps(t, &c);
        CU_ASSERT_EQUAL(c.cap[TT_SCOPE_L1], 524032);
        CU_ASSERT_EQUAL(c.cap[TT_SCOPE_L0A], 65536);
        CU_ASSERT_EQUAL(c.cap[TT_SCOPE_L0B], 65536);
        CU_ASSERT_EQUAL(c.cap[TT_SCOPE_L0C], 131072);
        CU_ASSERT_EQUAL(c.cap[TT_SCOPE_UB], 196352);
        CU_ASSERT_EQUAL(c.align[TT_SCOPE_UB], 32);
        CU_ASSERT_EQUAL(c.align[TT_SCOPE_L1], 32);
        CU_ASSERT_EQUAL(c.align[TT_SCOPE_L0A], 512);
        CU_ASSERT_EQUAL(c.align[TT_SCOPE_L0B], 512);
        CU_ASSERT_EQUAL(c.align[TT_SCOPE_L0C], 64);
        /* cube costs per dtype: fp32 twice fp16, int8 like fp16 */
        CU_ASSERT_DOUBLE_EQUAL(t->cube_c[TT_DT_FLOAT16], 1, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(t->cube_c[TT_DT_BFLOAT16], 1, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(t->cube_c[TT_DT_INT8], 1, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(t->cube_c[TT_DT_FLOAT32], 2, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(t->cube_c[TT_DT_INT64], 0, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(t->l2_miss_factor, 4.5, 1e-12);
        for (int p = 0; p < TT_PATH__COUNT; p++) {
            CU_ASSERT(t->path[p].bytes_per_cycle > 0);
            CU_ASSERT(t->path[p].latency_cycles > 0);
        }
        for (int v = 0; v < TT_V__COUNT; v++) {
            CU_ASSERT(t->vec_bytes_per_cycle[v][0] > 0 && t->vec_bytes_per_cycle[v][1] > 0);
            CU_ASSERT(t->vec_head_cycles[v] > 0);
        }
        CU_ASSERT(t->launch_us > 0 && t->issue_cycles > 0 && t->flag_cycles > 0);
        CU_ASSERT(t->cross_sync_cycles > 0 && t->mix_launch_extra_us > 0);
        CU_ASSERT_PTR_NOT_NULL(t->doc);
        CU_ASSERT_PTR_NOT_NULL(json_object_get(t->doc, "sources"));
    }
    /* the measured 910B2 memory figures */
    const tt_target *b2 = tt_targets_find(shipped, "Ascend910B2");
    CU_ASSERT_DOUBLE_EQUAL(b2->hbm_gbps, 917, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b2->hbm_bypass_gbps, 1533, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b2->hbm_write_gbps, 1456, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b2->l2_gbps, 4600, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b2->l2_bytes, 192.0 * 1024 * 1024, 1);
    CU_ASSERT_DOUBLE_EQUAL(b2->path[TT_PATH_GM_L1].bytes_per_cycle, 170, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b2->gm_l1_nd2nz.latency_cycles, 830, 1e-9);
    const tt_target *b4 = tt_targets_find(shipped, "Ascend910B4");
    CU_ASSERT_DOUBLE_EQUAL(b4->l2_bytes, 96.0 * 1024 * 1024, 1);
    CU_ASSERT(b4->hbm_gbps < b2->hbm_gbps);
}

static void test_find(void)
{
    static const struct {
        const char *query, *name;
    } cases[] = {
        {"a2", "Ascend910B2"},          {"A2", "Ascend910B2"},
        {"910b2", "Ascend910B2"},       {"910B2", "Ascend910B2"},
        {"Ascend910B2C", "Ascend910B2"}, {"ascend910b2", "Ascend910B2"},
        {"a3", "Ascend910_9382"},       {"A3", "Ascend910_9382"},
        {"ASCEND910_9382", "Ascend910_9382"}, {"910_9391", "Ascend910_9391"},
        {"ascend910b4", "Ascend910B4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tt_target *t = tt_targets_find(shipped, cases[i].query);
        CU_ASSERT_PTR_NOT_NULL(t);
        if (t) CU_ASSERT_STRING_EQUAL(t->name, cases[i].name);
    }
    CU_ASSERT_PTR_NULL(tt_targets_find(shipped, "a5"));
    CU_ASSERT_PTR_NULL(tt_targets_find(shipped, "Ascend910B"));
    CU_ASSERT_PTR_NULL(tt_targets_find(shipped, ""));
    CU_ASSERT_PTR_NULL(tt_targets_find(shipped, NULL));
    CU_ASSERT_PTR_NULL(tt_targets_find(NULL, "a2"));
    CU_ASSERT_PTR_NULL(tt_targets_at(shipped, 999));
    CU_ASSERT_EQUAL(tt_targets_count(NULL), 0);
    /* names are sorted and distinct */
    for (size_t i = 1; i < tt_targets_count(shipped); i++)
        CU_ASSERT(strcmp(tt_targets_at(shipped, i - 1)->name, tt_targets_at(shipped, i)->name) < 0);
}

static void test_cycles_us(void)
{
    const tt_target *t = tt_targets_find(shipped, "a3");
    CU_ASSERT_DOUBLE_EQUAL(tt_target_us(t, 1800), 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(tt_target_us(t, 0), 0.0, 1e-12);
}

/* A user adds a SoC by adding a file; the file stem names it when "name" is absent. */
static void test_user_dir(void)
{
    char *dir = tt_test_src("tests/data/targets/good");
    tt_targets *ts = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_targets_load_dir(dir, &ts, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_targets_count(ts), 1);
    const tt_target *t = tt_targets_find(ts, "MY-NPU");
    CU_ASSERT_PTR_NOT_NULL(t);
    if (t) CU_ASSERT_STRING_EQUAL(t->name, "MyNPU");
    tt_targets_free(ts);
    free(dir);
    /* an empty or missing directory */
    char *tmp = tt_test_tmpdir("tt-targets");
    CU_ASSERT_EQUAL(tt_targets_load_dir(tmp, &ts, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_targets_count(ts), 0);
    tt_targets_free(ts);
    tt_test_rmrf(tmp);
    free(tmp);
    /* a FIFO named *.json is refused at once (the load blocked on it for ever) */
    tmp = tt_test_tmpdir("tt-targets-fifo");
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/Pipe.json", tmp);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    CU_ASSERT_EQUAL(tt_targets_load_dir(tmp, &ts, &e), TT_ETARGET);
    CU_ASSERT_PTR_NULL(ts);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "Pipe.json: (document): not a regular file"));
    tt_test_rmrf(tmp);
    free(tmp);
    ts = (tt_targets *)&e;
    CU_ASSERT_EQUAL(tt_targets_load_dir("/nonexistent/tt-targets", &ts, &e), TT_EIO);
    CU_ASSERT_PTR_NULL(ts);
    CU_ASSERT_EQUAL(tt_targets_load_dir(NULL, &ts, &e), TT_EINVAL);
    tt_targets_free(NULL);
}

static void test_bad_files(void)
{
    char *table = tt_test_src("tests/data/targets/bad/cases.txt");
    char *text = tt_test_read_file(table, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || !line[0]) continue;
        char dirname[64];
        int off = 0;
        if (sscanf(line, "%63s %n", dirname, &off) != 1) continue;
        const char *expect = line + off;
        char rel[160];
        snprintf(rel, sizeof rel, "tests/data/targets/bad/%s", dirname);
        char *dir = tt_test_src(rel);
        tt_targets *ts = (tt_targets *)dir;   /* must be reset to NULL */
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_targets_load_dir(dir, &ts, &e);
        CU_ASSERT_EQUAL(rc, TT_ETARGET);
        CU_ASSERT_PTR_NULL(ts);
        if (!strstr(e.msg, expect)) {
            fprintf(stderr, "\ncase %s: got \"%s\", want \"%s\"\n", dirname, e.msg, expect);
            CU_FAIL("error message does not name the file and path");
        }
        /* the path is in msg after the file; left in e.path too, "path: msg" printed it twice */
        CU_ASSERT_STRING_EQUAL(e.path, "");
        free(dir);
        n++;
    }
    CU_ASSERT(n >= 15);
    free(text);
    free(table);
}

static void test_from_json(void)
{
    tt_target t;
    tt_errinfo e;
    CU_ASSERT_EQUAL(tt_target_from_json(NULL, "x", &t, &e), TT_ETARGET);
    json_t *arr = json_array();
    CU_ASSERT_EQUAL(tt_target_from_json(arr, "x", &t, &e), TT_ETARGET);
    json_decref(arr);
    /* a shipped document round-trips, and the name argument is used only without "name" */
    const tt_target *b2 = tt_targets_find(shipped, "a2");
    json_t *doc = json_deep_copy(b2->doc);
    CU_ASSERT_EQUAL(tt_target_from_json(doc, "Other", &t, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "Ascend910B2");
    CU_ASSERT_EQUAL(t.naliases, b2->naliases);
    tt_target_close(&t);
    json_object_del(doc, "name");
    CU_ASSERT_EQUAL(tt_target_from_json(doc, "Other", &t, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(t.name, "Other");
    tt_target_close(&t);
    CU_ASSERT_EQUAL(tt_target_from_json(doc, NULL, &t, &e), TT_ETARGET);
    CU_ASSERT_STRING_EQUAL(e.path, "name");
    /* too many aliases */
    json_t *al = json_array();
    for (int i = 0; i < TT_TARGET_MAX_ALIASES + 1; i++) json_array_append_new(al, json_sprintf("x%d", i));
    json_object_set_new(doc, "aliases", al);
    CU_ASSERT_EQUAL(tt_target_from_json(doc, "Other", &t, &e), TT_ETARGET);
    CU_ASSERT_STRING_EQUAL(e.path, "aliases");
    json_decref(doc);
    tt_target_close(NULL);
}

/* The optional fields: defaults when absent, the file's value when present, and
 * validation (positive; dma_outstanding an integer in 1..8) naming the JSON path. */
static void test_optional_fields(void)
{
    const tt_target *b2 = tt_targets_find(shipped, "a2");
    CU_ASSERT_DOUBLE_EQUAL(b2->l2_resident_bytes, 78e6, 1);
    CU_ASSERT_DOUBLE_EQUAL(b2->block_cycles, 2000, 1e-9);
    CU_ASSERT_EQUAL(b2->dma_outstanding, TT_TARGET_DMA_OUTSTANDING);
    tt_target t;
    tt_errinfo e;
    json_t *doc = json_deep_copy(b2->doc);
    json_t *mem = json_object_get(doc, "memory"), *ov = json_object_get(doc, "overheads");
    json_object_del(mem, "l2_resident_bytes");
    json_object_del(ov, "block_cycles");
    CU_ASSERT_EQUAL_FATAL(tt_target_from_json(doc, NULL, &t, &e), TT_OK);
    CU_ASSERT_DOUBLE_EQUAL(t.l2_resident_bytes, t.l2_bytes, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(t.block_cycles, 0, 1e-12);
    CU_ASSERT_EQUAL(t.dma_outstanding, TT_TARGET_DMA_OUTSTANDING);
    tt_target_close(&t);
    json_object_set_new(ov, "dma_outstanding", json_integer(2));
    json_object_set_new(ov, "block_cycles", json_real(123.5));
    json_object_set_new(mem, "l2_resident_bytes", json_integer(1000000));
    CU_ASSERT_EQUAL_FATAL(tt_target_from_json(doc, NULL, &t, &e), TT_OK);
    CU_ASSERT_EQUAL(t.dma_outstanding, 2);
    CU_ASSERT_DOUBLE_EQUAL(t.block_cycles, 123.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(t.l2_resident_bytes, 1e6, 1e-9);
    tt_target_close(&t);
    json_object_set_new(ov, "dma_outstanding", json_integer(9));
    CU_ASSERT_EQUAL(tt_target_from_json(doc, NULL, &t, &e), TT_ETARGET);
    CU_ASSERT_STRING_EQUAL(e.path, "overheads.dma_outstanding");
    json_object_set_new(ov, "dma_outstanding", json_integer(0));
    CU_ASSERT_EQUAL(tt_target_from_json(doc, NULL, &t, &e), TT_ETARGET);
    CU_ASSERT_STRING_EQUAL(e.path, "overheads.dma_outstanding");
    json_object_set_new(ov, "dma_outstanding", json_real(2.5));
    CU_ASSERT_EQUAL(tt_target_from_json(doc, NULL, &t, &e), TT_ETARGET);
    CU_ASSERT_STRING_EQUAL(e.path, "overheads.dma_outstanding");
    json_object_set_new(ov, "dma_outstanding", json_integer(1));
    json_object_set_new(ov, "block_cycles", json_integer(-5));
    CU_ASSERT_EQUAL(tt_target_from_json(doc, NULL, &t, &e), TT_ETARGET);
    CU_ASSERT_STRING_EQUAL(e.path, "overheads.block_cycles");
    json_object_set_new(ov, "block_cycles", json_integer(5));
    json_object_set_new(mem, "l2_resident_bytes", json_string("big"));
    CU_ASSERT_EQUAL(tt_target_from_json(doc, NULL, &t, &e), TT_ETARGET);
    CU_ASSERT_STRING_EQUAL(e.path, "memory.l2_resident_bytes");
    json_decref(doc);
}

static const tt_test_case target_cases[] = {
    {"all_socs", test_all_socs}, {"find", test_find},           {"cycles_us", test_cycles_us},
    {"user_dir", test_user_dir}, {"bad_files", test_bad_files}, {"from_json", test_from_json},
    {"optional_fields", test_optional_fields}, {NULL, NULL}};
static const tt_test_suite suites[] = {{"target", load_shipped, free_shipped, target_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

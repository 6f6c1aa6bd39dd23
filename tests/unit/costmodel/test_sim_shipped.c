/* SPDX-License-Identifier: MIT
 * test_sim_shipped.c - the simulator on the shipped targets and templates: the published
 * GEMM points of shared/ascend/calibration.json within 15 % (the chip against the model), the
 * table of built-in templates (tests/data/sim/smoke.txt), and GQA's K/V `along` map on
 * flash_attn_fwd (a model figure).  Fixture: tests/helpers/sim_fixture.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_fixture.h"
#include "sim_int.h"
#include "space.h"
#include "target.h"
#include "template.h"
#include "tt_test.h"

/* Fidelity: the published GEMM points of shared/ascend/calibration.json (A3 die, 24 cores,
 * fp16 in, fp32 out, 128x256x64, K_L1 256, double-buffered) against the simulator with the
 * committed A3 target file: within 15 %.  The simulator is a model; these are the chip. */
static void test_calibration_gemm(void)
{
    char *tdir = tt_test_src("costmodel/targets");
    char *gpath = tt_test_src("templates/gemm.json");
    char *cpath = tt_test_shared("ascend/calibration.json");
    tt_targets *ts = NULL;
    tt_template *gemm = NULL;
    tt_errinfo err;
    json_error_t je;
    json_t *doc = json_load_file(cpath, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL_FATAL(tt_targets_load_dir(tdir, &ts, &err), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(gpath, &gemm, &err), TT_OK);
    const tt_target *tgt = tt_targets_find(ts, "Ascend910_9391");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
    CU_ASSERT_EQUAL(tgt->cube_cores, 24);
    int checked = 0;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(doc, "points"), i, p) {
        const char *kern = json_string_value(json_object_get(p, "kernel"));
        if (!kern || strcmp(kern, "gemm") != 0) continue;
        CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(p, "soc")), "a3-die-24core");
        json_t *pr = json_object_get(p, "problem"), *cf = json_object_get(p, "config");
        char prob[160], cfg[160];
        snprintf(prob, sizeof prob, "M=%lld,N=%lld,K=%lld,dtype=%s,out_dtype=%s",
                 (long long)json_integer_value(json_object_get(pr, "M")),
                 (long long)json_integer_value(json_object_get(pr, "N")),
                 (long long)json_integer_value(json_object_get(pr, "K")),
                 json_string_value(json_object_get(pr, "dtype")),
                 json_string_value(json_object_get(pr, "out")));
        int db = json_is_true(json_object_get(cf, "double_buffer"));
        /* the PTO-ISA kernel runs one block per core, each walking its tiles (core_num) */
        snprintf(cfg, sizeof cfg, "block_M=%lld,block_N=%lld,block_K=%lld,K_L1=%lld,S1=%d,S2=%d,core_num=24",
                 (long long)json_integer_value(json_object_get(cf, "block_M")),
                 (long long)json_integer_value(json_object_get(cf, "block_N")),
                 (long long)json_integer_value(json_object_get(cf, "block_K")),
                 (long long)json_integer_value(json_object_get(cf, "K_L1")), db ? 2 : 1, db ? 2 : 1);
        tt_sim_result r;
        CU_ASSERT_EQUAL(tt_sfx_sim(gemm, tgt, prob, cfg, -1, &r), TT_OK);
        double meas = json_number_value(json_object_get(p, "time_us"));
        double rel = (r.time_us - meas) / meas;
        if (fabs(rel) > 0.15)
            fprintf(stderr, "%s: simulated %.1f us, measured %.1f us (%+.1f %%)\n",
                    json_string_value(json_object_get(p, "id")), r.time_us, meas, rel * 100);
        CU_ASSERT(fabs(rel) <= 0.15);
        /* the cube is the busiest unit of a large GEMM, as the published profile says */
        if (json_integer_value(json_object_get(pr, "M")) >= 3072) CU_ASSERT(r.util[TT_UNIT_M] > 0.6);
        tt_sim_result_close(&r);
        checked++;
    }
    CU_ASSERT_EQUAL(checked, 4);
    json_decref(doc);
    tt_tmpl_free(gemm);
    tt_targets_free(ts);
    free(tdir);
    free(gpath);
    free(cpath);
}


typedef struct { long long tid; double ts, end; } trace_ev;

static int trace_ev_cmp(const void *a, const void *b)
{
    const trace_ev *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The complete events of a trace: non-negative times, and on each thread (one unit) none
 * starts before the previous one ended (Perfetto nests the events of a thread; ts and dur
 * rounded apart let a unit's next op start 0.1 ns early).  Returns the overlaps found. */
static int trace_overlaps(const json_t *doc)
{
    size_t n = json_array_size(doc), k = 0, i;
    trace_ev *ev = calloc(n ? n : 1, sizeof *ev);
    json_t *e;
    int bad = 0;
    json_array_foreach(doc, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") != 0) continue;
        double ts = json_number_value(json_object_get(e, "ts"));
        double dur = json_number_value(json_object_get(e, "dur"));
        if (!(ts >= 0 && dur >= 0)) bad++;
        ev[k++] = (trace_ev){json_integer_value(json_object_get(e, "tid")), ts, ts + dur};
    }
    qsort(ev, k, sizeof *ev, trace_ev_cmp);
    for (i = 1; i < k; i++)
        if (ev[i].tid == ev[i - 1].tid && ev[i].ts < ev[i - 1].end - 1e-9) bad++;
    free(ev);
    return bad;
}

/* Table: built-in templates (tests/data/sim/smoke.txt) simulate on the A3 target file,
 * deterministically, with every unit's busy time inside the kernel time, the traced run
 * (no shortcut) agreeing with the default run, and a trace whose events on one unit do not
 * overlap. */
static void test_templates_table(void)
{
    char *tdir = tt_test_src("costmodel/targets");
    char *table = tt_test_src("tests/data/sim/smoke.txt");
    char *text = tt_test_read_file(table, NULL);
    tt_targets *ts = NULL;
    tt_errinfo err;
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL_FATAL(tt_targets_load_dir(tdir, &ts, &err), TT_OK);
    const tt_target *tgt = tt_targets_find(ts, "Ascend910_9391");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !line[0]) continue;
        char *f = line, *prob = strchr(f, '|');
        CU_ASSERT_PTR_NOT_NULL_FATAL(prob);
        *prob++ = '\0';
        char *cfg = strchr(prob, '|');
        CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
        *cfg++ = '\0';
        char rel[128];
        snprintf(rel, sizeof rel, "templates/%s", f);
        char *path = tt_test_src(rel);
        tt_template *t = NULL;
        CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(path, &t, &err), TT_OK);
        free(path);
        tt_sim_result a, b, c;
        CU_ASSERT_EQUAL(tt_sfx_sim(t, tgt, prob, cfg, -1, &a), TT_OK);
        CU_ASSERT_EQUAL(tt_sfx_sim(t, tgt, prob, cfg, -1, &b), TT_OK);
        CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
        if (a.rc) fprintf(stderr, "%s %s %s: %s\n", f, prob, cfg, a.reason);
        CU_ASSERT(a.cycles > 0);
        CU_ASSERT(a.time_us > tgt->launch_us);
        CU_ASSERT(a.blocks > 0 && a.waves >= 1 && a.waves_simulated >= 1 && a.waves_simulated <= a.waves);
        for (int u = 0; u < TT_UNIT__COUNT; u++) {
            CU_ASSERT(a.busy_cycles[u] >= 0);
            CU_ASSERT(a.busy_cycles[u] <= a.cycles * (1 + 1e-9));
            CU_ASSERT(a.util[u] >= 0 && a.util[u] <= 1 + 1e-9);
        }
        for (int k = 0; k < TT_STALL__COUNT; k++) CU_ASSERT(a.stall_cycles[k] >= 0);
        CU_ASSERT_EQUAL(tt_sfx_sim(t, tgt, prob, cfg, 0, &c), TT_OK);
        CU_ASSERT_DOUBLE_EQUAL(c.cycles, a.cycles, 1e-3 * a.cycles);
        CU_ASSERT_PTR_NOT_NULL(c.trace_json);
        json_error_t je;
        json_t *doc = c.trace_json ? json_loads(c.trace_json, 0, &je) : NULL;
        CU_ASSERT(json_is_array(doc) && json_array_size(doc) > TT_UNIT__COUNT);
        int ov = doc ? trace_overlaps(doc) : 0;
        if (ov) fprintf(stderr, "%s %s %s: %d overlapping trace events\n", f, prob, cfg, ov);
        CU_ASSERT_EQUAL(ov, 0);
        json_decref(doc);
        tt_sim_result_close(&a);
        tt_sim_result_close(&b);
        tt_sim_result_close(&c);
        tt_tmpl_free(t);
        rows++;
    }
    CU_ASSERT(rows >= 8);
    free(text);
    free(table);
    free(tdir);
    tt_targets_free(ts);
}

/* GQA: K/V of flash_attn_fwd are read `along` the index map bh // group, so the query heads
 * of a group share one K/V tile: group = 8 sends ~8x fewer K/V bytes to HBM than group = 1
 * (a MODEL figure: the simulator's L2 estimate).  A map of two grid dims, or one that does
 * not compile, is refused at load with the entry's path. */
static void test_gqa_along_map(void)
{
    tt_sfx_fa F;
    CU_ASSERT_FATAL(tt_sfx_fa_load(&F));
    tt_template *t = F.fa;
    const tt_target *tgt = F.tgt;
    tt_errinfo err;
    const char *cfg = "block_M=128,block_N=128,stages=2";
    tt_sim_result r1, r8;
    CU_ASSERT_EQUAL_FATAL(tt_sfx_sim(t, tgt, "B=4,H=32,H_kv=32,S_q=128,S_kv=8192,D=128", cfg, -1, &r1), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_sfx_sim(t, tgt, "B=4,H=32,H_kv=4,S_q=128,S_kv=8192,D=128", cfg, -1, &r8), TT_OK);
    double ratio = r1.hbm_read_bytes / r8.hbm_read_bytes;
    fprintf(stderr, "[sim gqa: HBM reads %.0f / %.0f bytes = %.2fx, %.1f / %.1f us] ",
            r1.hbm_read_bytes, r8.hbm_read_bytes, ratio, r1.time_us, r8.time_us);
    CU_ASSERT(ratio > 6 && ratio < 12);
    CU_ASSERT(r8.time_us < r1.time_us);
    tt_sim_result_close(&r1);
    tt_sim_result_close(&r8);
    /* decode_attn: K/V along bh // (group // heads_per_block): a group of 8 query heads
     * split over 8 blocks of one head each still reads K/V about once from HBM */
    char *fpath = tt_test_src("templates/decode_attn.json");
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_file(fpath, &t, &err), TT_OK);
    free(fpath);
    const char *pb = "batch=4,heads=32,kv_heads=4,seqlen_kv=32768,dim=128,q_len=1";
    CU_ASSERT_EQUAL_FATAL(tt_sfx_sim(t, tgt, pb, "block_N=256,kv_splits=2,heads_per_block=8", -1, &r8), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_sfx_sim(t, tgt, pb, "block_N=256,kv_splits=2,heads_per_block=1", -1, &r1), TT_OK);
    fprintf(stderr, "[sim decode gqa: HBM reads hpb 8 / 1: %.0f / %.0f bytes] ", r8.hbm_read_bytes,
            r1.hbm_read_bytes);
    CU_ASSERT(r1.hbm_read_bytes < 1.5 * r8.hbm_read_bytes);
    tt_sim_result_close(&r1);
    tt_sim_result_close(&r8);
    tt_tmpl_free(t);            /* decode_attn */
    tt_sfx_fa_free(&F);
    /* refused maps */
    static const char *const bad[][2] = {
        {"bh // bx", "index map \"bh // bx\" must read exactly one grid dim"},
        {"H // 2", "index map \"H // 2\" must read exactly one grid dim"},
        {"bh //", "kernel.body[0].along[0]"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char doc[1024];
        snprintf(doc, sizeof doc,
                 "{\"tiletune\":1,\"name\":\"m\",\"version\":\"1\","
                 "\"inputs\":{\"H\":{\"type\":\"int\"}},\"params\":{\"S\":[1]},"
                 "\"tensors\":{\"A\":{\"shape\":[\"H\",64],\"dtype\":\"float16\"}},"
                 "\"buffers\":{\"A_L1\":{\"scope\":\"L1\",\"shape\":[64],\"dtype\":\"float16\"}},"
                 "\"kernel\":{\"grid\":{\"bx\":2,\"bh\":\"H\"},\"cores\":\"cube\",\"body\":["
                 "{\"copy\":[\"gm:A\",\"A_L1\"],\"along\":[\"%s\"]}]}}", bad[i][0]);
        tt_template *b = NULL;
        tt_errinfo_clear(&err);
        tt_rc rc = tt_tmpl_parse_string(doc, strlen(doc), NULL, &b, &err);
        CU_ASSERT_EQUAL(rc, i < 2 ? TT_ETEMPLATE : TT_EEXPR);   /* syntax: the expression's code */
        CU_ASSERT_PTR_NULL(b);
        CU_ASSERT_STRING_EQUAL(err.path, "kernel.body[0].along[0]");
        CU_ASSERT(strstr(err.msg, bad[i][1]) != NULL || strcmp(bad[i][1], err.path) == 0);
        tt_tmpl_free(b);
    }
}

static const tt_test_case shipped_cases[] = {
    {"calibration_gemm", test_calibration_gemm},
    {"templates_table", test_templates_table},
    {"gqa_along_map", test_gqa_along_map},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"sim_shipped", NULL, NULL, shipped_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

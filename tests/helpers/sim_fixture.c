/* SPDX-License-Identifier: MIT
 * sim_fixture.c - targets, templates and simulations shared by the simulator tests.
 */
#include "sim_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_test.h"

void tt_sfx_mk_target(tt_target *t, int cores)
{
    memset(t, 0, sizeof *t);
    t->dma_outstanding = 1;
    snprintf(t->name, sizeof t->name, "test%d", cores);
    snprintf(t->platform, sizeof t->platform, "A2");
    t->cube_cores = cores;
    t->vector_cores = 2 * cores;
    t->clock_mhz = 1000;
    for (int s = 0; s < TT_SCOPE__COUNT; s++) {
        t->caps.cap[s] = 1 << 20;
        t->caps.align[s] = 32;
    }
    t->caps.cap[TT_SCOPE_L0A] = 65536;
    for (int p = 0; p < TT_PATH__COUNT; p++) t->path[p] = (tt_pathcost){64, 100};
    t->gm_l1_nd2nz = (tt_pathcost){32, 200};
    t->cube_fixed_cycles = 20;
    t->cube_c[TT_DT_FLOAT16] = 10;
    for (int c = 0; c < TT_V__COUNT; c++) {
        t->vec_bytes_per_cycle[c][0] = 32;
        t->vec_bytes_per_cycle[c][1] = 32;
        t->vec_head_cycles[c] = 10;
    }
    t->cross_sync_cycles = 50;
    t->l2_bytes = 1e9;
    t->l2_resident_bytes = 1e9;
}

tt_template *tt_sfx_parse(const char *text)
{
    tt_template *t = NULL;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_tmpl_parse_string(text, strlen(text), NULL, &t, &err);
    if (rc) fprintf(stderr, "template: %s: %s\n", err.path, err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    return t;
}

void tt_sfx_mk_slots(const tt_template *t, const char *prob, const char *cfg, int64_t *slots)
{
    tt_errinfo err;
    memset(slots, 0, TT_MAX_SLOTS * sizeof *slots);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, prob, slots, &err), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, cfg, slots, &err), TT_OK);
}

tt_rc tt_sfx_sim(const tt_template *t, const tt_target *tgt, const char *prob, const char *cfg,
                 int trace_core, tt_sim_result *r)
{
    int64_t slots[TT_MAX_SLOTS];
    tt_sfx_mk_slots(t, prob, cfg, slots);
    tt_sim_opts o = {.trace_core = trace_core};
    return tt_sim_run(t, tgt, slots, &o, r);
}


const char *const tt_sfx_chain_tmpl =
    "{\"tiletune\":1,\"name\":\"chain\",\"version\":\"1\","
    "\"inputs\":{\"K\":{\"type\":\"int\"}},"
    "\"params\":{\"S\":[1,2]},"
    "\"tensors\":{\"A\":{\"shape\":[32,\"K\"],\"dtype\":\"float16\"},"
    "\"B\":{\"shape\":[\"K\",32],\"dtype\":\"float16\"},"
    "\"C\":{\"shape\":[32,32],\"dtype\":\"float32\",\"output\":true}},"
    "\"buffers\":{\"A_L0\":{\"scope\":\"L0A\",\"shape\":[32,32],\"dtype\":\"float16\",\"copies\":\"S\"},"
    "\"B_L0\":{\"scope\":\"L0B\",\"shape\":[32,32],\"dtype\":\"float16\",\"copies\":\"S\"},"
    "\"C_L0\":{\"scope\":\"L0C\",\"shape\":[32,32],\"dtype\":\"float32\"}},"
    "\"kernel\":{\"grid\":{\"bx\":1},\"cores\":\"cube\",\"body\":["
    "{\"for\":\"k\",\"trip\":\"K // 32\",\"stages\":\"S\",\"body\":["
    "{\"copy\":[\"gm:A\",\"A_L0\"],\"along\":[\"k\"]},"
    "{\"copy\":[\"gm:B\",\"B_L0\"],\"along\":[\"k\"]},"
    "{\"mma\":[\"A_L0\",\"B_L0\",\"C_L0\"],\"init\":false}]},"
    "{\"copy\":[\"C_L0\",\"gm:C\"],\"along\":[\"bx\"]}]}}";

int tt_sfx_fa_load(tt_sfx_fa *f)
{
    char *tdir = tt_test_src("costmodel/targets");
    char *fpath = tt_test_src("templates/flash_attn_fwd.json");
    tt_errinfo err;
    memset(f, 0, sizeof *f);
    int ok = tt_targets_load_dir(tdir, &f->ts, &err) == TT_OK &&
             tt_tmpl_parse_file(fpath, &f->fa, &err) == TT_OK &&
             (f->tgt = tt_targets_find(f->ts, "Ascend910_9391")) != NULL;
    free(tdir);
    free(fpath);
    return ok;
}

void tt_sfx_fa_free(tt_sfx_fa *f)
{
    tt_tmpl_free(f->fa);
    tt_targets_free(f->ts);
}

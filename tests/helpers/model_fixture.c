/* SPDX-License-Identifier: MIT
 * model_fixture.c - targets, templates and predictions shared by the cost-model tests.
 */
#include "model_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "tt_test.h"

int tt_mfx_init(tt_targets **shipped, tt_target *hand)
{
    char *dir = tt_test_src("costmodel/targets");
    tt_errinfo e;
    tt_rc rc = tt_targets_load_dir(dir, shipped, &e);
    free(dir);
    if (rc) { fprintf(stderr, "targets: %s\n", e.msg); return 1; }
    json_t *doc = json_deep_copy(tt_targets_find(*shipped, "a2")->doc);
    json_object_set_new(doc, "clock_mhz", json_integer(1000));
    json_t *p = json_object_get(json_object_get(doc, "paths"), "GM->UB");
    json_object_set_new(p, "bytes_per_cycle", json_integer(100));
    json_object_set_new(p, "latency_cycles", json_integer(50));
    json_t *ex = json_object_get(json_object_get(doc, "vector"), "exp");
    json_object_set_new(ex, "bytes_per_cycle", json_pack("[i,i]", 50, 100));
    json_object_set_new(ex, "head_cycles", json_integer(20));
    json_t *ov = json_object_get(doc, "overheads");
    json_object_set_new(ov, "launch_us", json_integer(1));
    json_object_set_new(ov, "issue_cycles", json_integer(1));
    json_object_set_new(ov, "flag_cycles", json_integer(10));
    json_object_del(ov, "block_cycles");
    /* the cube's loads hit L2 at l2_gbps (no loaded rate): rates stay the path's */
    json_object_del(json_object_get(doc, "memory"), "l2_load_gbps");
    json_object_set_new(doc, "name", json_string("Hand"));
    rc = tt_target_from_json(doc, NULL, hand, &e);
    json_decref(doc);
    if (rc) { fprintf(stderr, "hand target: %s: %s\n", e.path, e.msg); return 1; }
    return 0;
}

int tt_mfx_cleanup(tt_targets **shipped, tt_target *hand)
{
    tt_target_close(hand);
    tt_targets_free(*shipped);
    *shipped = NULL;
    return 0;
}

tt_template *tt_mfx_parse(const char *text)
{
    tt_template *t = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    if (tt_tmpl_parse_string(text, strlen(text), NULL, &t, &e))
        fprintf(stderr, "\ntemplate: %s: %s\n", e.path, e.msg);
    return t;
}

tt_template *tt_mfx_shipped_template(const char *file)
{
    char rel[96];
    snprintf(rel, sizeof rel, "templates/%s", file);
    char *path = tt_test_src(rel);
    tt_template *t = NULL;
    tt_errinfo e;
    if (tt_tmpl_parse_file(path, &t, &e)) fprintf(stderr, "\n%s: %s: %s\n", file, e.path, e.msg);
    free(path);
    return t;
}

tt_template *tt_mfx_gemm_template(void) { return tt_mfx_shipped_template("gemm.json"); }

tt_rc tt_mfx_predict(const tt_template *t, const tt_target *tg, const char *problem,
                     const char *config, const tt_calib *cal, tt_model_result *r)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    if (tt_tmpl_problem_parse(t, problem, slots, &e)) { fprintf(stderr, "\nproblem: %s\n", e.msg); return TT_EPROBLEM; }
    if (tt_tmpl_config_parse(t, config, slots, &e)) {
        /* off-domain values are the model's to refuse: set them by name */
        char buf[256];
        snprintf(buf, sizeof buf, "%s", config);
        for (char *kv = strtok(buf, ","); kv; kv = strtok(NULL, ",")) {
            char *eq = strchr(kv, '=');
            if (!eq) continue;
            *eq = 0;
            int s = tt_tmpl_slot_of(t, kv);
            if (s >= 0) slots[s] = atoll(eq + 1);
        }
    }
    tt_model *m = NULL;
    if (tt_model_new(t, tg, slots, cal, &m, &e)) { fprintf(stderr, "\nmodel: %s\n", e.msg); return TT_EINTERNAL; }
    tt_rc rc = tt_model_eval(m, slots, r);
    tt_model_free(m);
    return rc;
}

void tt_mfx_model_and_sim(const tt_template *t, const tt_target *tg, const char *problem,
                          const char *config, double *model_us, double *sim_us)
{
    int64_t slots[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    tt_model_result r;
    tt_sim_result s;
    *model_us = *sim_us = -1;
    CU_ASSERT_EQUAL_FATAL(tt_mfx_predict(t, tg, problem, config, NULL, &r), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, problem, slots, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, config, slots, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_sim_run(t, tg, slots, NULL, &s), TT_OK);
    *model_us = r.time_us;
    *sim_us = s.time_us;
    tt_sim_result_close(&s);
}

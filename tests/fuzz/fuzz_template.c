/* SPDX-License-Identifier: MIT
 * fuzz_template.c - libFuzzer entry point: a whole template document, as a client sends it
 * inline in POST /v1/tune or PUT /v1/templates.  The bytes are parsed as JSON and as a
 * template; a template that parses gets a problem (each input's default, else a middling
 * value of its range, else its first dtype), its space on the A3 target's capacities, and
 * for its first feasible configs the analytic model and (for the first one) the simulator
 * with an event cap.  Checks the contract (aborts on a violation): refusals are error codes
 * with a printable message; predictions are positive and finite or an error with a reason;
 * nothing crashes, leaks or overflows (ASan, UBSan).
 *
 * Not built by CMake.  Build and run from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *         -D_GNU_SOURCE -Icompiler -Icostmodel tests/fuzz/fuzz_template.c \
 *         $(find compiler costmodel -name '*.c') -ljansson -lm -o /tmp/fuzz_template
 *   mkdir -p /tmp/tmpl-corpus && cp $(find templates -name '*.json') /tmp/tmpl-corpus/
 *   /tmp/fuzz_template -max_len=16384 -max_total_time=300 -timeout=10 /tmp/tmpl-corpus
 * (TT_FUZZ_TARGETS: the targets directory, default costmodel/targets of the working dir.)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "sim.h"
#include "space.h"
#include "target.h"
#include "template.h"

#define FUZZ_NAME "fuzz_template"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tt_targets *g_targets;
static const tt_target *g_tgt;

/* A problem for t: defaults, else a middling value of an int input's range, else the first
 * dtype. */
static void pick_problem(const tt_template *t, int64_t *slots)
{
    for (size_t i = 0; i < t->ninputs; i++) {
        const tt_input *in = &t->inputs[i];
        if (in->has_default) slots[i] = in->def;
        else if (in->kind == TT_INPUT_DTYPE) slots[i] = in->ndtypes ? (int64_t)in->dtypes[0] : 0;
        else slots[i] = in->min <= 1024 && 1024 <= in->max ? 1024 : in->min;
    }
}

typedef struct visit_ctx {
    const tt_template *t;
    tt_model *m;
    int n;
} visit_ctx;

static int visit(void *ud, const int64_t *slots)
{
    visit_ctx *c = ud;
    int64_t s[TT_MAX_SLOTS];
    memcpy(s, slots, c->t->nslots * sizeof *s);
    if (c->m) {
        tt_model_result r;
        tt_rc rc = tt_model_eval(c->m, s, &r);
        if (rc == TT_OK) CHECK(isfinite(r.time_us) && r.time_us > 0);
    }
    if (c->n == 0) {
        tt_sim_opts o = {.trace_core = -1, .max_events = 200000};
        tt_sim_result r;
        memcpy(s, slots, c->t->nslots * sizeof *s);
        tt_rc rc = tt_sim_run(c->t, g_tgt, s, &o, &r);
        if (rc == TT_OK) CHECK(isfinite(r.cycles) && r.cycles >= 0);
        tt_sim_result_close(&r);
    }
    return ++c->n >= 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt_errinfo err;
    if (!g_targets) {
        const char *dir = getenv("TT_FUZZ_TARGETS");
        tt_errinfo_clear(&err);
        if (tt_targets_load_dir(dir ? dir : "costmodel/targets", &g_targets, &err) != TT_OK) {
            fprintf(stderr, "fuzz_template: targets: %s\n", err.msg);
            abort();
        }
        g_tgt = tt_targets_find(g_targets, "Ascend910_9391");
        CHECK(g_tgt != NULL);
    }
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!doc) return 0;
    tt_template *t = NULL;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_tmpl_parse_json(doc, NULL, &t, &err);
    json_decref(doc);
    if (rc != TT_OK) {
        CHECK(t == NULL);
        CHECK(fuzz_printable(err.msg));
        return 0;
    }
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    pick_problem(t, slots);
    tt_caps caps;
    tt_target_caps(g_tgt, &caps);
    tt_space *sp = NULL;
    tt_errinfo_clear(&err);
    if (tt_space_new(t, slots, &caps, &sp, &err) == TT_OK) {
        tt_model *m = NULL;
        tt_errinfo e2;
        tt_errinfo_clear(&e2);
        if (tt_model_new(t, g_tgt, slots, NULL, &m, &e2) != TT_OK) {
            CHECK(m == NULL);
            CHECK(fuzz_printable(e2.msg));
        }
        visit_ctx c = {t, m, 0};
        tt_space_counts counts;
        if (tt_space_total(sp) <= 1000000) {   /* the daemon refuses larger ones (max_space) */
            rc = tt_space_enumerate(sp, visit, &c, 0, &counts);
            CHECK(rc == TT_OK || rc == TT_ENOMEM || rc == TT_ELIMIT);
        }
        tt_model_free(m);
        tt_space_free(sp);
    } else {
        CHECK(fuzz_printable(err.msg));
    }
    tt_tmpl_free(t);
    return 0;
}

/* SPDX-License-Identifier: MIT
 * fuzz_t1.c - libFuzzer entry point: a whole T1 document as `tlctl import` sends it.  The
 * bytes are parsed as JSON; a document is converted (compiler/t1.c), and a converted one is
 * parsed as a template from its JSON (what the catalog stores) and, when its space is small,
 * enumerated with the conditions evaluated.  Checks the contract (aborts on a violation):
 * every refusal is an error code with a printable message, a converted document is an
 * object whose template parse either succeeds or refuses cleanly, and enumeration never
 * finds more configs than the product of the domains.
 *
 * Not built by CMake.  Build and run from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *         -D_GNU_SOURCE -Icompiler tests/fuzz/fuzz_t1.c $(find compiler -name '*.c') \
 *         -ljansson -lm -o /tmp/fuzz_t1
 *   mkdir -p /tmp/t1doc-corpus && cp $(find tests/data/t1 -name '*.json') \
 *         ../shared/datasets/convolution.t1.json /tmp/t1doc-corpus/
 *   /tmp/fuzz_t1 -max_len=4096 -max_total_time=300 -dict=tests/fuzz/t1.dict /tmp/t1doc-corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space.h"
#include "t1.h"
#include "template.h"

#define FUZZ_NAME "fuzz_t1"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_visit(void *ud, const int64_t *slots)
{
    (void)slots;
    (*(uint64_t *)ud)++;
    return 0;
}

static void enumerate_small(const tt_template *t)
{
    int64_t slots[TT_MAX_SLOTS];
    memset(slots, 0, sizeof slots);
    tt_space *sp = NULL;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    if (tt_space_new(t, slots, NULL, &sp, &err) != TT_OK) {
        CHECK(fuzz_printable(err.msg));
        return;
    }
    uint64_t total = tt_space_total(sp), seen = 0;
    if (total <= 20000) {
        tt_space_counts c;
        tt_rc rc = tt_space_enumerate(sp, count_visit, &seen, 0, &c);
        CHECK(rc == TT_OK || rc == TT_ENOMEM);
        if (rc == TT_OK) CHECK(seen == c.feasible && seen <= total);
    }
    tt_space_free(sp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!doc) return 0;
    json_t *out = (json_t *)1;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_t1_to_template(doc, NULL, &out, &err);
    if (rc != TT_OK) {
        CHECK(out == NULL);
        CHECK(rc == TT_EINVAL || rc == TT_EUNSUPPORTED || rc == TT_ENOMEM);
        CHECK(fuzz_printable(err.msg));
        json_decref(doc);
        return 0;
    }
    CHECK(json_is_object(out));
    tt_template *t = NULL;
    tt_errinfo_clear(&err);
    rc = tt_tmpl_parse_json(out, NULL, &t, &err);
    if (rc == TT_OK) {
        CHECK(t != NULL);
        enumerate_small(t);
        tt_tmpl_free(t);
    } else {
        CHECK(t == NULL);
        CHECK(fuzz_printable(err.msg));
    }
    json_decref(out);
    json_decref(doc);
    return 0;
}

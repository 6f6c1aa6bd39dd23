/* SPDX-License-Identifier: MIT
 * fuzz_dataset.c - libFuzzer entry point: bytes as a recorded dataset, as POST /v1/import
 * receives them (Kernel Tuner cache, open or closed, or T4; plain or gzip).  Checks the
 * contract (aborts on a violation): a refusal is an error code with a printable message and
 * no dataset; a loaded dataset's counts add up, every record is found again by its values,
 * and its T4 export loads back with the same records (what `tlctl export --format t4`
 * writes is importable).
 *
 * Not built by CMake.  Build and run from the repository root:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *         -D_GNU_SOURCE -Icompiler -Idaemon/backends tests/fuzz/fuzz_dataset.c \
 *         daemon/backends/dataset.c daemon/backends/dataset_write.c compiler/err.c \
 *         compiler/jsonutil.c -ljansson -lz -lm -o /tmp/fuzz_dataset
 *   mkdir -p /tmp/ds-corpus && python3 -c 'import json, gzip; d = json.load(gzip.open(
 *         "../shared/datasets/convolution_MI250X.t4.json.gz")); d["results"] = d["results"][:12];
 *         json.dump(d, open("/tmp/ds-corpus/t4.json", "w"))'      (and a cut of the KT cache)
 *   /tmp/fuzz_dataset -max_len=65536 -max_total_time=300 /tmp/ds-corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"

#define FUZZ_NAME "fuzz_dataset"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_loaded(const tt_dataset *ds)
{
    size_t sum = 0;
    for (int s = 0; s < TT_DS__COUNT; s++) sum += ds->count[s];
    CHECK(sum == ds->nrecords);
    CHECK(ds->nparams >= 1 && ds->nparams <= TT_DATASET_MAX_PARAMS);
    for (size_t i = 0; i < ds->nrecords; i++)
        CHECK(tt_dataset_find(ds, ds->values + i * ds->nparams) == &ds->records[i]);
    char *text = NULL;
    size_t len = 0;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_dataset_write_t4_buffer(ds, 0, &text, &len, &err);
    if (rc != TT_OK) {
        CHECK(rc == TT_ENOMEM || rc == TT_EINVAL);
        return;
    }
    tt_dataset *back = NULL;
    tt_errinfo_clear(&err);
    rc = tt_dataset_load_buffer(text, len, &back, &err);
    if (rc != TT_OK) fprintf(stderr, "fuzz_dataset: T4 export does not load: %s: %s\n", err.path, err.msg);
    CHECK(rc == TT_OK);
    CHECK(back->nrecords == ds->nrecords && back->nparams == ds->nparams);
    tt_dataset_free(back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt_dataset *ds = (tt_dataset *)1;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_dataset_load_buffer_max(data, size, 1 << 22, &ds, &err);
    if (rc != TT_OK) {
        CHECK(ds == NULL);
        CHECK(fuzz_printable(err.msg));
        return 0;
    }
    check_loaded(ds);
    tt_dataset_free(ds);
    return 0;
}

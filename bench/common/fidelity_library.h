/* SPDX-License-Identifier: MIT
 * fidelity_library.h - map the published A2/A3 points of the kernel-library families
 * (../shared/ascend/published.json: gemv, grouped GEMM, int8 quant GEMM, conv2d) to their
 * templates for bench_fidelity.  A param the source does not state is left TT_FIDLIB_FREE
 * (the bench then uses the model's best value for it).
 * Ownership: tt_fidlib owns its parsed templates (tt_fidlib_free); mapped template pointers
 * are borrowed from it.  Not thread-safe.
 */
#ifndef TT_FIDELITY_LIBRARY_H
#define TT_FIDELITY_LIBRARY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "template.h"

#define TT_FIDLIB_FREE (-1)

typedef struct tt_fidlib {
    tt_template *gemv, *grouped, *quant, *conv;
} tt_fidlib;

/* Parse the four templates from dir (templates/).  Returns 0, or -1 with a message on
 * stderr-free failure (*L then holds what loaded; tt_fidlib_free is safe). */
int tt_fidlib_load(tt_fidlib *L, const char *dir);
void tt_fidlib_free(tt_fidlib *L);

/* Map one point (family_key fk, family text, the point object pt).  Returns 1 when mapped
 * (*t, slots[inputs and stated params], *flops, *bytes set), 0 when the point is not of a
 * library family, -1 when it is but cannot be expressed (why says why). */
int tt_fidlib_map(const tt_fidlib *L, const char *fk, const char *family, const json_t *pt,
                  const tt_template **t, int64_t *slots, double *flops, double *bytes, char *why,
                  size_t cap);

/* Shared by the fidelity mappers (fidelity_vector.c): a template parsed from a file, an integer / string member of o (0 / ""
 * when absent or of another type), a named slot of t set to v (ignored when t has no such
 * slot), and the dtype a published "dtypes" text starts with (float16 when unreadable). */
tt_template *tt__fid_load(const char *dir, const char *name);   /* dir/name.json or NULL */
int64_t tt__fid_ival(const json_t *o, const char *k);
const char *tt__fid_sval(const json_t *o, const char *k);
void tt__fid_set(const tt_template *t, int64_t *slots, const char *name, int64_t v);
int64_t tt__fid_dtype(const char *s);

#endif

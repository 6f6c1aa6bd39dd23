/* SPDX-License-Identifier: MIT
 * fidelity_vector.h - map the published A2/A3 points of the vector-unit families
 * (../shared/ascend/published.json: RoPE, activations, cross-entropy) to the kernel-library
 * templates for bench_fidelity, and name the true reason for the vector-side points no
 * template expresses (linear-attention stages, mHC, top-k, ops the activation template lacks).
 * A param the source does not state is left TT_FIDLIB_FREE (the bench uses the model's best).
 * Ownership: tt_fidvec owns its parsed templates (tt_fidvec_free); mapped template pointers
 * are borrowed from it.  Not thread-safe.
 */
#ifndef TT_FIDELITY_VECTOR_H
#define TT_FIDELITY_VECTOR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "template.h"

typedef struct tt_fidvec {
    tt_template *rope, *act, *ce;
    tt_template *rms, *ln, *smax, *red;   /* row-wise kernels: M rows of N */
} tt_fidvec;

/* Parse rope, activation, cross_entropy, rms_norm, layer_norm, softmax and reduce from dir
 * (templates/).  Returns 0, or -1 when one is missing (*L then holds what loaded;
 * tt_fidvec_free is safe). */
int tt_fidvec_load(tt_fidvec *L, const char *dir);
void tt_fidvec_free(tt_fidvec *L);

/* Map one point (family_key fk, family text, the point object pt).  Returns 1 when mapped
 * (*t, slots[inputs and stated params], *flops, *bytes set), 0 when the point is not of a
 * vector family this file knows, -1 when it is but cannot be expressed (why says why).
 * Inputs that depend on the chip (rope's vec_core_num) are left TT_FIDLIB_FREE: the caller
 * sets them from the target (tt_fidvec_chip). */
int tt_fidvec_map(const tt_fidvec *L, const char *fk, const char *family, const json_t *pt,
                  const tt_template **t, int64_t *slots, double *flops, double *bytes, char *why,
                  size_t cap);

/* Fill the chip-dependent inputs of a mapped point (rope: vec_core_num = the chip's vector
 * cores, as the upstream kernel launches one task per vector core). */
void tt_fidvec_chip(const tt_template *t, int vector_cores, int64_t *slots);

#endif

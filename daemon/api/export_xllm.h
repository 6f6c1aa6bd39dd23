/* SPDX-License-Identifier: MIT
 * export_xllm.h - tuned configs in the two forms xLLM's TileLang AOT build consumes
 * (github.com/jd-opensource/xllm, xllm/compiler/tilelang): the DISPATCH_SCHEMA and
 * SPECIALIZATIONS of a TilelangKernel class, and a C++ header shaped like the registry.inc its
 * kernel family builder generates.
 *
 * The contract (xllm/compiler/tilelang/common/spec.py, targets/ascend/kernels/utils.py):
 *   - DISPATCH_SCHEMA is a list of DispatchField(name, kind), kind "int32" or "dtype" only;
 *     here: every template input in declared order (ints -> "int32", dtypes -> "dtype").
 *   - every SPECIALIZATIONS entry holds "variant_key" (letters, digits, underscore), every schema
 *     field and the tuned params, nothing else (xLLM passes each non-reserved key to
 *     generate_source(**spec)); measurement figures go into a comment above the entry.
 *   - dtype values are spelled as xLLM's kernels and TilelangDType do: float16, bf16, float32,
 *     int8, int32, uint8; any other dtype, an int input outside int32, or a template name that
 *     collides with xLLM's reserved entry keys is TT_EUNSUPPORTED with a message naming it.
 *
 * Ownership: rows and the template are borrowed; *out is malloc'd (caller frees) on TT_OK and
 * NULL otherwise.  Thread-safety: pure functions.  Nothing is printed.
 */
#ifndef TT_EXPORT_XLLM_H
#define TT_EXPORT_XLLM_H

#include <stddef.h>
#include <stdint.h>

#include "template.h"
#include "tt_err.h"

typedef struct tt_xllm_row {
    const int64_t *slots;       /* problem + config slots of the template */
    const char *variant_key;    /* letters, digits, underscore */
    double median_us, spread_us;
    const char *measured_by;    /* backend fingerprint */
    int64_t trial, job;
} tt_xllm_row;

/* Python: the import line xLLM kernels use (with how to adapt it), DISPATCH_SCHEMA, SPECIALIZATIONS. */
tt_rc tt_xllm_specializations(const tt_template *t, const char *target, const tt_xllm_row *rows,
                              size_t n, char **out, tt_errinfo *err);

/* C++: <Family>Specialization, operator==, one wrapper struct per field,
 * make_<name>_specialization(), <Family>KernelFn, the extern "C" entry symbols
 * (<name>__<variant_key>_call), k<Family>Registry, find_<name>_kernel_entry() and
 * available_<name>_variant_keys().  To be included inside namespace xllm::kernel::npu::tilelang
 * after core/kernels/npu/tilelang/dispatch_registry.h, as xLLM's wrappers include theirs. */
tt_rc tt_xllm_registry_inc(const tt_template *t, const char *target, const tt_xllm_row *rows,
                           size_t n, char **out, tt_errinfo *err);

/* 1 when name cannot name a member or parameter in generated C11 (cxx 0) or C++17 (cxx 1)
 * code: a keyword of that language, an identifier reserved to the implementation (__x, _X),
 * NULL or one of <stdint.h>'s limit macros (INT8_MAX, SIZE_MAX, ...).  Also used by the
 * c-header export (api_ci_export.c). */
int tt_xllm_c_reserved(const char *name, int cxx);

#endif

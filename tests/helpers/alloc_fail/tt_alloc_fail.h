/* SPDX-License-Identifier: MIT
 * tt_alloc_fail.h - the allocation-failure torture of test_alloc_fail_{compiler,costmodel,
 * daemon}: allocation hooks, the workloads' shared inputs and the torture loop.
 *
 * How (curl's torture mode, sqlite's do_faultsim_test, libuv's test-loop-oom.c): tt_alloc_fail.c
 * defines malloc, calloc, realloc, free, posix_memalign, aligned_alloc, memalign, valloc and
 * pvalloc itself, forwarding to glibc's __libc_* entry points.  Compiled into the executable
 * (tests/CMakeLists.txt adds it to each alloc-fail program; it is NOT in the helper library,
 * whose other programs must keep glibc's malloc), the definitions interpose for the whole
 * process, so they also see the allocations of strdup, fopen, jansson and zlib.  A
 * countdown, once armed with N, makes the Nth allocation return NULL with errno ENOMEM (only
 * that one); a live counter (allocations minus frees) detects leaks.  For each workload:
 *   1. the suite init builds what the workloads borrow (gemm template, targets, files), unarmed;
 *   2. run() is executed unarmed twice: the second run gives the number of allocations A and
 *      the reference digest (a checksum of the results), and must be TT_OK with no leak;
 *   3. for N = 1..A (every N up to TT_AF_FULL, then a strided sample of about TT_AF_SAMPLE
 *      more, unless the environment sets TT_ALLOC_FAIL_ALL=1) run() is executed in a forked
 *      child with the Nth allocation failing, and must return TT_OK with the reference digest
 *      (the allocation was optional and nothing was silently lost) or TT_ENOMEM, or a code in
 *      the workload's documented `also` set; the live count must be back where it was.  A
 *      crash is reported with the workload and N (the loop goes on).
 * jansson 2.14 itself mishandles a failing allocation inside its lexer (see
 * jansson_lexer_defect()); those outcomes are counted separately, not failed.  jansson's hash
 * seed is fixed (tt_af_main) so that N is reproducible.
 * Diagnosis: TT_ALLOC_FAIL_ONLY=<workload>:<N> runs one point, TT_ALLOC_FAIL_BT=1 prints the
 * stack of the failed call, TT_ALLOC_FAIL_VERBOSE=1 lists every bad point (else the first 8).
 *
 * Under AddressSanitizer the hooks would fight ASan's own allocator, so when
 * __SANITIZE_ADDRESS__ (gcc) or __has_feature(address_sanitizer) (clang) is set, nothing is
 * interposed: each workload runs (twice) unarmed and must succeed; ASan/LSan then check the
 * success paths for leaks and overflows.  The injection runs in the plain (-Werror) build.
 * Not thread-safe: the tests' main thread only.
 */
#ifndef TT_ALLOC_FAIL_H
#define TT_ALLOC_FAIL_H

#include <stddef.h>
#include <stdint.h>

#include "target.h"
#include "template.h"
#include "tt_test.h"

#if defined(__SANITIZE_ADDRESS__)
#define TT_AF_HOOKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_AF_HOOKS 0
#else
#define TT_AF_HOOKS 1
#endif
#else
#define TT_AF_HOOKS 1
#endif

extern long tt_af_calls;     /* allocation calls since tt_af_reset() */
extern long tt_af_fired;     /* injected failures since tt_af_reset() */
extern long tt_af_live;      /* live blocks (allocations minus frees), whole process */
extern int tt_af_backtrace;  /* TT_ALLOC_FAIL_BT=1: print the stack of the failed call */

/* Arm the countdown: the fail_at-th allocation from now fails (0: none); counters reset. */
void tt_af_reset(long fail_at);
void tt_af_disarm(void);

/* FNV-style digest steps of the workloads' results. */
uint64_t tt_af_mix(uint64_t h, uint64_t v);
uint64_t tt_af_mix_str(uint64_t h, const char *s);
uint64_t tt_af_mix_double(uint64_t h, double d);

/* What the compiler and cost-model workloads borrow, loaded unarmed by tt_af_init (a CUnit
 * suite init; tt_af_cleanup frees it): the shipped targets and a2, gemm with a problem and
 * one config, and the simulator's smoke table (tests/data/sim/smoke.txt): every built-in
 * template with a problem and a config, for the model and sim workloads. */
#define TT_AF_MAX_SMOKE 16
extern tt_targets *tt_af_targets;
extern const tt_target *tt_af_a2;
extern tt_template *tt_af_gemm;
extern int64_t tt_af_gemm_slots[TT_MAX_SLOTS];   /* problem + one config */
extern tt_template *tt_af_smoke_t[TT_AF_MAX_SMOKE];
extern int64_t tt_af_smoke_slots[TT_AF_MAX_SMOKE][TT_MAX_SLOTS];
extern size_t tt_af_nsmoke;
int tt_af_init(void);
int tt_af_cleanup(void);

/* A workload: run() does the work from scratch and cleans up everything it created (also on
 * failure), returns the first error and a digest of the results.  `also` lists the codes
 * besides TT_OK and TT_ENOMEM that an allocation failure may legitimately produce
 * (terminated by TT_OK). */
typedef struct tt_af_workload {
    const char *name;
    tt_rc (*run)(uint64_t *digest);
    tt_rc also[4];
} tt_af_workload;

/* What each workload may return besides TT_OK / TT_ENOMEM, and why:
 *   - jansson 2.14 reports most allocation failures inside json_load*() as a parse error
 *     without json_error_out_of_memory (e.g. a failed json_object_set() in parse_object()),
 *     so the loaders can only say TT_EJSON ("malformed JSON") then; where jansson does say
 *     out of memory they return TT_ENOMEM;
 *   - costmodel/target.c wraps a parse error of a target file as TT_ETARGET, and a failed
 *     fopen() inside json_load_file() (reported by jansson as "cannot open file") as TT_EIO. */

/* Steps 2 and 3 above for workload w, as CUnit assertions; prints a summary line. */
void tt_af_torture(const tt_af_workload *w);

/* main() of an alloc-fail program: fixes jansson's hash seed, reads TT_ALLOC_FAIL_BT, runs
 * the suites with tt_test_main(); its exit code. */
int tt_af_main(int argc, char **argv, const tt_test_suite *suites);

#endif

/* SPDX-License-Identifier: MIT
 * fidelity_library.c - published points of the kernel-library families -> their templates
 * (gemv.json, grouped_gemm.json, quant_matmul.json, conv2d.json); see fidelity_library.h.
 */
#include "fidelity_library.h"

#include <stdio.h>
#include <string.h>

tt_template *tt__fid_load(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%.900s/%s.json", dir, name);
    tt_template *t = NULL;
    tt_errinfo e;
    return tt_tmpl_parse_file(path, &t, &e) == TT_OK ? t : NULL;
}

int tt_fidlib_load(tt_fidlib *L, const char *dir)
{
    L->gemv = tt__fid_load(dir, "gemv");
    L->grouped = tt__fid_load(dir, "grouped_gemm");
    L->quant = tt__fid_load(dir, "quant_matmul");
    L->conv = tt__fid_load(dir, "conv2d");
    return L->gemv && L->grouped && L->quant && L->conv ? 0 : -1;
}

void tt_fidlib_free(tt_fidlib *L)
{
    tt_tmpl_free(L->gemv);
    tt_tmpl_free(L->grouped);
    tt_tmpl_free(L->quant);
    tt_tmpl_free(L->conv);
    memset(L, 0, sizeof *L);
}

int64_t tt__fid_ival(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? json_integer_value(v) : 0;
}

const char *tt__fid_sval(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

void tt__fid_set(const tt_template *t, int64_t *slots, const char *name, int64_t v)
{
    int s = tt_tmpl_slot_of(t, name);
    if (s >= 0) slots[s] = v;
}

/* M, N, K of a GEMM-like point into t's inputs; -1 (why set) when the shape lacks one */
static int gemm_shape(const tt_template *t, const json_t *sh, int64_t *slots, int64_t mnk[3],
                      char *why, size_t cap)
{
    mnk[0] = tt__fid_ival(sh, "M"), mnk[1] = tt__fid_ival(sh, "N"), mnk[2] = tt__fid_ival(sh, "K");
    if (!mnk[0] || !mnk[1] || !mnk[2]) return snprintf(why, cap, "shape incomplete (M, N or K)"), -1;
    tt__fid_set(t, slots, "M", mnk[0]);
    tt__fid_set(t, slots, "N", mnk[1]);
    tt__fid_set(t, slots, "K", mnk[2]);
    return 0;
}

/* "<a,b,c>" -> v[3]; 0 when read */
static int triple(const char *s, int64_t v[3])
{
    long long a, b, c;
    if (sscanf(s, "<%lld,%lld,%lld>", &a, &b, &c) != 3) return -1;
    v[0] = a, v[1] = b, v[2] = c;
    return 0;
}

int64_t tt__fid_dtype(const char *s)
{
    if (!strncmp(s, "fp32", 4) || !strncmp(s, "float32", 7)) return TT_DT_FLOAT32;
    if (!strncmp(s, "bf16", 4) || !strncmp(s, "bfloat16", 8)) return TT_DT_BFLOAT16;
    return TT_DT_FLOAT16;
}

static int map_gemv(const tt_fidlib *L, const json_t *pt, int64_t *slots, double *flops,
                    double *bytes, char *why, size_t cap)
{
    const json_t *sh = json_object_get(pt, "shape"), *cf = json_object_get(pt, "config");
    int64_t v[3], dt = tt__fid_dtype(tt__fid_sval(pt, "dtypes"));
    if (gemm_shape(L->gemv, sh, slots, v, why, cap)) return -1;
    int64_t M = v[0], N = v[1], K = v[2];
    if (M > 16) return snprintf(why, cap, "M = %lld: gemv takes M <= 16", (long long)M), -1;
    tt__fid_set(L->gemv, slots, "dtype", dt);
    tt__fid_set(L->gemv, slots, "out_dtype", dt);
    int64_t l1[3];
    if (!triple(tt__fid_sval(cf, "L1TileShape"), l1)) {   /* <M, N, K> of one L1 tile */
        tt__fid_set(L->gemv, slots, "block_N", l1[1]);
        tt__fid_set(L->gemv, slots, "block_K", l1[2]);
    }
    /* CATLASS 00_basic_matmul tiles only M and N: one block per output tile, no split-K */
    if (strstr(tt__fid_sval(pt, "implementation"), "00_basic_matmul")) tt__fid_set(L->gemv, slots, "split_k", 1);
    *flops = 2.0 * (double)M * (double)N * (double)K;
    *bytes = (double)(M * K + N * K + M * N) * tt_dtype_size(dt);
    return 1;
}

static int map_grouped(const tt_fidlib *L, const json_t *pt, int64_t *slots, double *flops,
                       double *bytes, char *why, size_t cap)
{
    const json_t *sh = json_object_get(pt, "shape"), *cf = json_object_get(pt, "config");
    int64_t G = tt__fid_ival(sh, "groups"), Mt = tt__fid_ival(sh, "M_total"), N = tt__fid_ival(sh, "N"), K = tt__fid_ival(sh, "K");
    if (!G || !Mt || !N || !K) return snprintf(why, cap, "shape incomplete (groups, M_total, N or K)"), -1;
    const json_t *mg = json_object_get(sh, "M_per_group");
    int balanced = 1;
    for (size_t i = 1; json_is_array(mg) && i < json_array_size(mg); i++)
        balanced &= json_integer_value(json_array_get(mg, i)) == json_integer_value(json_array_get(mg, 0));
    int64_t dt = tt__fid_dtype(tt__fid_sval(pt, "dtypes"));
    tt__fid_set(L->grouped, slots, "batch_count", G);
    tt__fid_set(L->grouped, slots, "batch_sum", Mt);
    tt__fid_set(L->grouped, slots, "K", K);
    tt__fid_set(L->grouped, slots, "N", N);
    tt__fid_set(L->grouped, slots, "balanced", balanced);
    tt__fid_set(L->grouped, slots, "dtype", dt);
    int64_t l1[3], l0[3];
    if (!triple(tt__fid_sval(cf, "L1TileShape"), l1) && !triple(tt__fid_sval(cf, "L0TileShape"), l0)) {
        tt__fid_set(L->grouped, slots, "block_M", l1[0]);
        tt__fid_set(L->grouped, slots, "block_N", l1[1]);
        tt__fid_set(L->grouped, slots, "K_L1", l1[2]);
        tt__fid_set(L->grouped, slots, "block_K", l0[2]);
    }
    /* CATLASS 08_grouped_matmul (include/catlass/gemm/kernel/grouped_matmul.hpp) launches one
     * block per cube core (the autotune instance: blockdim 20) that walks the groups in order
     * and, inside a group, its tiles round-robin from a start core that rolls on by the
     * group's tile count: a persistent walk of the (group, m-block, n-block) sequence */
    if (strstr(tt__fid_sval(pt, "implementation"), "08_grouped_matmul")) tt__fid_set(L->grouped, slots, "core_num", 20);
    *flops = 2.0 * (double)Mt * (double)N * (double)K;
    *bytes = (double)(Mt * K + G * K * N + Mt * N) * tt_dtype_size(dt);
    return 1;
}

static int map_quant(const tt_fidlib *L, const json_t *pt, int64_t *slots, double *flops,
                     double *bytes, char *why, size_t cap)
{
    const json_t *sh = json_object_get(pt, "shape"), *cf = json_object_get(pt, "config");
    int64_t v[3];
    if (gemm_shape(L->quant, sh, slots, v, why, cap)) return -1;
    int64_t M = v[0], N = v[1], K = v[2];
    const char *d = tt__fid_sval(pt, "dtypes");
    int64_t out = strstr(d, "bf16 out") ? TT_DT_BFLOAT16 : strstr(d, "fp32 out") ? TT_DT_FLOAT32 : TT_DT_FLOAT16;
    tt__fid_set(L->quant, slots, "in_dtype", TT_DT_INT8);
    tt__fid_set(L->quant, slots, "out_dtype", out);
    if (!strcmp(tt__fid_sval(cf, "splitK"), "none")) tt__fid_set(L->quant, slots, "split_k", 1);
    /* CATLASS 12_quant_matmul and 52_quant_multi_core_splitk_matmul_tla run one fixed tiling
     * (examples/12_quant_matmul/quant_matmul.cpp, examples/52_.../quant_multi_core_splitk_
     * matmul_tla.cpp: L1 tile <128, 256, 512>, L0 <128, 256, 128>, two L1 and two L0 stages),
     * not a tuned one; 52 splits K over the cores (its split count is the model's best of
     * the template's 1, 2, 4, 8: the kernel's own count is not printed) */
    const char *impl = tt__fid_sval(pt, "implementation");
    if (strstr(impl, "12_quant_matmul") || strstr(impl, "52_quant_multi_core_splitk")) {
        tt__fid_set(L->quant, slots, "block_M", 128);
        tt__fid_set(L->quant, slots, "block_N", 256);
        tt__fid_set(L->quant, slots, "K_L1", 512);
        tt__fid_set(L->quant, slots, "block_K", 128);
        tt__fid_set(L->quant, slots, "S1", 2);
        tt__fid_set(L->quant, slots, "S2", 2);
    }
    *flops = 2.0 * (double)M * (double)N * (double)K;
    *bytes = (double)(M * K + K * N) + (double)M * N * tt_dtype_size(out);
    return 1;
}

/* "[a,b,c,d(,e)]" -> up to 5 ints; returns the count */
static int ints(const char *s, int64_t *v)
{
    long long a[5];
    int n = sscanf(s, "[%lld,%lld,%lld,%lld,%lld]", &a[0], &a[1], &a[2], &a[3], &a[4]);
    for (int i = 0; i < n; i++) v[i] = a[i];
    return n < 0 ? 0 : n;
}

static int map_conv(const tt_fidlib *L, const json_t *pt, int64_t *slots, double *flops,
                    double *bytes, char *why, size_t cap)
{
    const json_t *sh = json_object_get(pt, "shape");
    int64_t x[5], w[4];
    int kh = 0, kw = 0;
    if (ints(tt__fid_sval(sh, "X[batch,cin1,hin,win,c0]"), x) != 5 || ints(tt__fid_sval(sh, "K(Fractal_Z)"), w) != 4 ||
        sscanf(tt__fid_sval(sh, "kernel"), "%dx%d", &kh, &kw) != 2 || kh < 1 || kw < 1)
        return snprintf(why, cap, "shape not read (NC1HWC0 input, Fractal_Z weights, kernel)"), -1;
    int64_t B = x[0], C = x[1] * x[4], H = x[2], W = x[3], OC = w[1] * w[3];
    int64_t st = tt__fid_ival(sh, "stride") ? tt__fid_ival(sh, "stride") : 1, pad = tt__fid_ival(sh, "pad");
    if (tt__fid_ival(sh, "dilation") > 1) return snprintf(why, cap, "dilation > 1: conv2d has none"), -1;
    tt__fid_set(L->conv, slots, "B", B);
    tt__fid_set(L->conv, slots, "C", C);
    tt__fid_set(L->conv, slots, "H", H);
    tt__fid_set(L->conv, slots, "W", W);
    tt__fid_set(L->conv, slots, "OC", OC);
    tt__fid_set(L->conv, slots, "KH", kh);
    tt__fid_set(L->conv, slots, "KW", kw);
    tt__fid_set(L->conv, slots, "stride", st);
    tt__fid_set(L->conv, slots, "padding", pad);
    tt__fid_set(L->conv, slots, "dtype", TT_DT_FLOAT16);
    tt__fid_set(L->conv, slots, "nz", 1);   /* NC1HWC0 / Fractal_Z: no ND->NZ loads */
    int64_t HO = (H + 2 * pad - kh) / st + 1, WO = (W + 2 * pad - kw) / st + 1;
    *flops = 2.0 * (double)(B * HO * WO) * (double)OC * (double)(C * kh * kw);
    *bytes = 2.0 * (double)(B * H * W * C + (int64_t)kh * kw * C * OC + B * HO * WO * OC);
    return 1;
}

int tt_fidlib_map(const tt_fidlib *L, const char *fk, const char *family, const json_t *pt,
                  const tt_template **t, int64_t *slots, double *flops, double *bytes, char *why,
                  size_t cap)
{
    if (!L->gemv || !L->grouped || !L->quant || !L->conv) return 0;
    if (!strcmp(fk, "gemv")) return *t = L->gemv, map_gemv(L, pt, slots, flops, bytes, why, cap);
    if (!strcmp(fk, "grouped_gemm")) return *t = L->grouped, map_grouped(L, pt, slots, flops, bytes, why, cap);
    if (strstr(fk, "int8") || strstr(fk, "quant"))
        return *t = L->quant, map_quant(L, pt, slots, flops, bytes, why, cap);
    if (family && strstr(family, "conv2d")) return *t = L->conv, map_conv(L, pt, slots, flops, bytes, why, cap);
    return 0;
}

/* SPDX-License-Identifier: MIT
 * fidelity_vector.c - published points of the vector-unit families -> their templates (rope,
 * activation, cross_entropy) and the reasons for the vector-side points no template expresses;
 * see fidelity_vector.h.  Every assumption a mapping makes is written next to it.
 */
#include "fidelity_vector.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "fidelity_library.h"

int tt_fidvec_load(tt_fidvec *L, const char *dir)
{
    L->rope = tt__fid_load(dir, "rope");
    L->act = tt__fid_load(dir, "activation");
    L->ce = tt__fid_load(dir, "cross_entropy");
    L->rms = tt__fid_load(dir, "rms_norm");
    L->ln = tt__fid_load(dir, "layer_norm");
    L->smax = tt__fid_load(dir, "softmax");
    L->red = tt__fid_load(dir, "reduce");
    return L->rope && L->act && L->ce && L->rms && L->ln && L->smax && L->red ? 0 : -1;
}

void tt_fidvec_free(tt_fidvec *L)
{
    tt_tmpl_free(L->rope);
    tt_tmpl_free(L->act);
    tt_tmpl_free(L->ce);
    tt_tmpl_free(L->rms);
    tt_tmpl_free(L->ln);
    tt_tmpl_free(L->smax);
    tt_tmpl_free(L->red);
    memset(L, 0, sizeof *L);
}

void tt_fidvec_chip(const tt_template *t, int vector_cores, int64_t *slots)
{
    int s = tt_tmpl_slot_of(t, "vec_core_num");
    if (s >= 0 && slots[s] == TT_FIDLIB_FREE) slots[s] = vector_cores;
}

static int has(const char *s, const char *w) { return strstr(s, w) != NULL; }

/* not expressible: why (in the scope of a mapper with why, cap) and -1 */
#define NO(...) (snprintf(why, cap, __VA_ARGS__), -1)

/* RoPE (tilelang-ascend bench_mark.md): "BS N hidden rope_dim" (TND) or "B S N hidden
 * rope_dim" (BSND), as the source's interpretation says.  Every (token, head) is one row of
 * the template; its gather op costs the same for the half and the interleaved pair layout
 * (rope.py.in swaps interleaved pairs with one gather pattern).  The template reads sin/cos
 * per row; the kernel reads them per token (broadcast over heads), so the template
 * overstates that traffic on multi-head rows (all of these rows are launch-floor rows). */
static int map_rope(const tt_fidvec *L, const json_t *pt, int64_t *slots, double *flops,
                    double *bytes, char *why, size_t cap)
{
    const json_t *sh = json_object_get(pt, "shape");
    long long v[5];
    int n = sscanf(tt__fid_sval(sh, "shape_as_written"), "%lld %lld %lld %lld %lld", &v[0], &v[1],
                   &v[2], &v[3], &v[4]);
    int64_t tokens, heads, hd, rd;
    if (n == 4 || n == 5) {
        tokens = n == 4 ? v[0] : v[0] * v[1], heads = v[n - 3], hd = v[n - 2], rd = v[n - 1];
    } else {   /* named fields: tokens (or B x S), heads, head_dim (or hidden), rope_dim */
        int64_t b = tt__fid_ival(sh, "B") ? tt__fid_ival(sh, "B") : 1;
        tokens = tt__fid_ival(sh, "num_tokens") ? tt__fid_ival(sh, "num_tokens") : b * tt__fid_ival(sh, "S");
        heads = tt__fid_ival(sh, "heads") ? tt__fid_ival(sh, "heads") : tt__fid_ival(sh, "N");
        hd = tt__fid_ival(sh, "head_dim") ? tt__fid_ival(sh, "head_dim") : tt__fid_ival(sh, "hidden");
        rd = tt__fid_ival(sh, "rope_dim") ? tt__fid_ival(sh, "rope_dim") : hd;
        if (!heads) heads = 1;
        if (tokens <= 0 || hd <= 0) return NO("%s", "rope shape not read (shape_as_written or num_tokens/B,S, heads, head_dim)");
    }
    int64_t rows = tokens * heads, dt = tt__fid_dtype(tt__fid_sval(pt, "dtypes"));
    tt__fid_set(L->rope, slots, "num_tokens", rows);
    tt__fid_set(L->rope, slots, "head_dim", hd);
    tt__fid_set(L->rope, slots, "rope_dim", rd);
    tt__fid_set(L->rope, slots, "dtype", dt);
    *flops = 6.0 * (double)rows * (double)rd;
    *bytes = (double)tt_dtype_size(dt) * (2.0 * (double)rows * rd + 2.0 * (double)tokens * rd);
    return 1;
}

/* The activation template's ops: gelu (tanh form), silu (= swish), swiglu (two inputs), relu,
 * squared relu; act 3 (gelu op by op as torch.compile writes it) is chosen by map_act for
 * fla's gelu_fwd. */
static int act_of(const char *op)
{
    if (!strncmp(op, "gelu", 4)) return 0;
    if (!strncmp(op, "swish", 5) || !strncmp(op, "silu", 4)) return 1;
    if (!strncmp(op, "swiglu", 6)) return 2;
    if (!strncmp(op, "relu", 4)) return 4;
    if (!strncmp(op, "sqrelu", 6)) return 5;
    return -1;
}

static int map_act(const tt_fidvec *L, const char *family, const json_t *pt, int64_t *slots,
                   double *flops, double *bytes, char *why, size_t cap)
{
    const json_t *sh = json_object_get(pt, "shape");
    if (has(family, "mHC post broadcast"))
        return NO("mHC post broadcast-scale (one x scaled into num_streams outputs): no template broadcasts an input over streams");
    if (has(family, "mHC post"))
        return NO("mHC post (x*post_mix + comb^T@residual over hc streams): no template for this fused kernel");
    const char *op = tt__fid_sval(sh, "op"), *impl = tt__fid_sval(pt, "implementation");
    if (strstr(op, "bwd")) return NO("activation '%.30s': a backward pass, the template is the forward kernel", op);
    /* fla.modules.activations: sigmoid, logsigmoid, swish, swiglu, powglu are hand-written
     * Triton kernels over the flattened tensor that compute every element's address (row =
     * offs // D, col = offs % D); gelu_fwd and sqrelu_fwd are torch.compile'd expressions. */
    if (has(impl, "flash-linear-attention") && (strstr(op, "sigmoid") || strstr(op, "swish") || strstr(op, "glu")))
        return NO("fla Triton kernel '%.20s' computes each element's address (offs // D, offs %% D): the template moves contiguous tiles", op);
    int act = act_of(op);
    if (act < 0) return NO("activation '%.30s': the activation template has gelu, silu (swish), swiglu, relu, sqrelu", op);
    int64_t M, N;
    if (tt__fid_ival(sh, "elements")) {   /* ascend-rs 1-D gelu; dtype not stated: fp16 assumed */
        M = 1, N = tt__fid_ival(sh, "elements");
    } else {                              /* flash-linear-attention: [B, T, D], swiglu: two D inputs */
        M = tt__fid_ival(sh, "B") * tt__fid_ival(sh, "T");
        N = tt__fid_ival(sh, "D") * (act == 2 ? 2 : 1);
    }
    if (M <= 0 || N <= 0) return NO("activation shape incomplete");
    int64_t dt = tt__fid_dtype(tt__fid_sval(pt, "dtypes")), nout = act == 2 ? N / 2 : N;
    /* fla's gelu_fwd is @torch.compile of the tanh form: inductor emits the expression op by
     * op (act 3, not act 0's folded sigmoid form), as a Triton-Ascend kernel, which is
     * compiled AIV-only (mix_mode "aiv"), not launched as MIX as TileLang's kernels are;
     * sqrelu_fwd likewise (relu, then the square: act 5). */
    int compiled = has(impl, "Triton-Ascend") && (act == 0 || act == 5);
    if (compiled && act == 0) act = 3;
    tt__fid_set(L->act, slots, "launch_mix", compiled ? 0 : 1);
    tt__fid_set(L->act, slots, "M", M);
    tt__fid_set(L->act, slots, "N", N);
    tt__fid_set(L->act, slots, "act", act);
    tt__fid_set(L->act, slots, "dtype", dt);
    *flops = 8.0 * (double)M * (double)nout;
    *bytes = (double)tt_dtype_size(dt) * (double)M * (double)(N + nout);
    return 1;
}

/* Cross-entropy (tilelang-ascend cross_entropy_loss README): rows N, vocabulary C; the
 * source's block_N tiles rows (the template's block_M; upstream's 128 also at N = 4, where
 * the vector ops still run over the whole UB tile; 128, the example's default, where a row
 * does not state it), block_C tiles the vocabulary (block_N); stages 1, as upstream's
 * T.serial loops over one x_ub. dtype float16 where not stated. CANN's operator rows are a
 * different kernel and not mapped. */
static int map_ce(const tt_fidvec *L, const json_t *pt, int64_t *slots, double *flops,
                  double *bytes, char *why, size_t cap)
{
    const json_t *sh = json_object_get(pt, "shape"), *cf = json_object_get(pt, "config");
    const char *impl = tt__fid_sval(pt, "implementation"), *ver = tt__fid_sval(cf, "version");
    int64_t N = tt__fid_ival(sh, "N"), C = tt__fid_ival(sh, "C");
    if (!N || !C) return NO("cross-entropy shape incomplete (N or C)");
    if (has(ver, "per-row"))
        return NO("cross-entropy '%.30s' variant (a scalar loop per row): the template is the vectorised (broadcast) kernel", ver);
    if (has(impl, "CANN"))
        return NO("CANN's own cross-entropy operator: its kernel and tiling are not the template's program (at N = 4 it splits the vocabulary over cores, 125x faster than the TileLang kernel)");
    int64_t dt = tt__fid_dtype(tt__fid_sval(pt, "dtypes"));
    tt__fid_set(L->ce, slots, "N", N);
    tt__fid_set(L->ce, slots, "C", C);
    tt__fid_set(L->ce, slots, "x_dtype", dt);
    tt__fid_set(L->ce, slots, "y_dtype", TT_DT_INT32);
    int64_t bm = tt__fid_ival(cf, "block_N"), bc = tt__fid_ival(cf, "block_C");
    if (bc > 0 && (bc & (bc - 1)))
        return NO("block_C = %lld: the template's block_N is a power of two", (long long)bc);
    tt__fid_set(L->ce, slots, "block_M", bm > 0 ? bm : 128);   /* example's default */
    if (bc > 0) tt__fid_set(L->ce, slots, "block_N", bc);
    tt__fid_set(L->ce, slots, "stages", 1);   /* upstream's loops: T.serial over one x_ub */
    *flops = 10.0 * (double)N * (double)C;
    *bytes = (double)tt_dtype_size(dt) * 3.0 * (double)N * (double)C;   /* x twice, log_prob */
    return 1;
}

/* Rows x columns of a row-wise kernel's shape: M x N, rows x cols, or (B x) T|S x D|H|hidden;
 * 0 when the shape says none of these. */
static int rows_cols(const json_t *sh, int64_t *M, int64_t *N)
{
    int64_t b = tt__fid_ival(sh, "B") ? tt__fid_ival(sh, "B") : 1;
    int64_t t = tt__fid_ival(sh, "T") ? tt__fid_ival(sh, "T") : tt__fid_ival(sh, "S");
    int64_t d = tt__fid_ival(sh, "D") ? tt__fid_ival(sh, "D") : tt__fid_ival(sh, "H");
    if (!d) d = tt__fid_ival(sh, "hidden");
    if (tt__fid_ival(sh, "M") && tt__fid_ival(sh, "N")) *M = tt__fid_ival(sh, "M"), *N = tt__fid_ival(sh, "N");
    else if (tt__fid_ival(sh, "rows") && tt__fid_ival(sh, "cols")) *M = tt__fid_ival(sh, "rows"), *N = tt__fid_ival(sh, "cols");
    else if (t && d) *M = b * t, *N = d;
    else return 0;
    return *M > 0 && *N > 0;
}

/* RMSNorm, LayerNorm, softmax and row reductions (no such rows in published.json today; the
 * shape conventions above are the ones its other families use).  Fused kernels (mHC,
 * "+ residual", "rope") are not these templates. */
static int map_rowwise(const tt_fidvec *L, const char *family, const json_t *pt,
                       const tt_template **t, int64_t *slots, double *flops, double *bytes,
                       char *why, size_t cap)
{
    char f[160];   /* lower case, '_' and '-' as ' ' */
    size_t n = 0;
    for (; family[n] && n + 1 < sizeof f; n++) {
        char c = (char)tolower((unsigned char)family[n]);
        f[n] = c == '_' || c == '-' ? ' ' : c;
    }
    f[n] = '\0';
    int op = -1;
    if (has(f, "rmsnorm") || has(f, "rms norm")) *t = L->rms;
    else if (has(f, "layernorm") || has(f, "layer norm")) *t = L->ln;
    else if (has(f, "softmax")) *t = L->smax;
    else if (has(f, "row reduc") || has(f, "reduce sum") || has(f, "reduce max") || has(f, "reduce min")) {
        *t = L->red;
        op = has(f, "max") ? 1 : has(f, "min") ? 2 : 0;
    } else return 0;
    if (has(family, "mHC") || has(family, "fused") || has(family, "+"))
        return NO("%.60s: a fused kernel, the template is the plain one", family);
    int64_t M, N;
    if (!rows_cols(json_object_get(pt, "shape"), &M, &N)) return NO("%.60s: rows and columns not read", family);
    int64_t dt = tt__fid_dtype(tt__fid_sval(pt, "dtypes"));
    tt__fid_set(*t, slots, "M", M);
    tt__fid_set(*t, slots, "N", N);
    tt__fid_set(*t, slots, "dtype", dt);
    if (op >= 0) tt__fid_set(*t, slots, "op", op);
    *flops = 5.0 * (double)M * (double)N;
    *bytes = (double)tt_dtype_size(dt) * (double)M * (double)N * (op >= 0 ? 1.0 : 2.0);
    return 1;
}

/* The vector-side kernels of the "other" bucket without a template, by what they are. */
static int other_reason(const char *family, char *why, size_t cap)
{
    if (has(family, "linear attention")) {   /* "other (linear attention: <stage>)" */
        const char *in = strchr(family, '(');
        snprintf(why, cap, "no template for linear-attention stages (%.*s)",
                 in ? (int)strcspn(in + 1, ")") : 60, in ? in + 1 : family);
        return -1;
    }
    if (has(family, "top-k"))
        return NO("top-k by sort + merge-sort (TSort32/TMrgsort): no sort template");
    if (has(family, "mHC pre sub-kernel"))
        return NO("mHC pre sub-kernel (sqrsum+RMSNorm of the GEMM mixes, or Sinkhorn): no template for this fused kernel");
    if (has(family, "mHC pre"))
        return NO("mHC pre (GEMM + RMSNorm + Sinkhorn, several kernels summed): no template for the chain");
    return 0;
}

int tt_fidvec_map(const tt_fidvec *L, const char *fk, const char *family, const json_t *pt,
                  const tt_template **t, int64_t *slots, double *flops, double *bytes, char *why,
                  size_t cap)
{
    if (!L->rope || !L->act || !L->ce || !L->rms || !L->ln || !L->smax || !L->red) return 0;
    if (!family) family = "";
    if (!strcmp(fk, "rope")) return *t = L->rope, map_rope(L, pt, slots, flops, bytes, why, cap);
    if (!strcmp(fk, "elementwise/activation"))
        return *t = L->act, map_act(L, family, pt, slots, flops, bytes, why, cap);
    if (has(family, "cross-entropy")) return *t = L->ce, map_ce(L, pt, slots, flops, bytes, why, cap);
    if (!strcmp(fk, "other") && other_reason(family, why, cap)) return -1;
    if (has(fk, "gemm") || has(fk, "attention") || has(fk, "conv") || has(fk, "copy")) return 0;
    return map_rowwise(L, family, pt, t, slots, flops, bytes, why, cap);
}

/* SPDX-License-Identifier: MIT
 * bench_fidelity.c - the analytic model and the simulator against the published A2/A3
 * measurements of shared/ascend/published.json: every point a template can express is
 * predicted by both (they are models of the chip, not measurements), with the error; per
 * family MAPE, worst error and count; Spearman of model (and simulator) vs published inside
 * every sweep of several configs on one shape; every point no template expresses, with why.
 *
 * The compared prediction charges the launch as the point's timing method sees it
 * (bench/common/fidelity_timing.h): launch_us for device task time, a pipelined per-call cost
 * for events over back-to-back calls; and with the L2 that method leaves: a method that empties
 * it before each call (triton.testing.do_bench) is compared on a copy of the target that keeps
 * nothing of the previous call in L2.
 *
 * usage: bench_fidelity [--published FILE] [--templates DIR] [--targets DIR] [--points]
 *                       [--pipelined-us US]
 * --points also prints the one-line reason of every point that is not expressible;
 * --pipelined-us overrides TT_FIDT_PIPELINED_US (the fit grid of docs/cost-model.md 5).
 * Prints markdown tables (docs/cost-model.md, "Fidelity against published measurements").
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "model.h"
#include "sim.h"
#include "space.h"
#include "target.h"
#include "template.h"
#include "fidelity_library.h"
#include "fidelity_timing.h"
#include "fidelity_vector.h"
#include "tt_fidelity.h"

#define MAXP 512

typedef struct point {
    const char *id, *family, *impl, *doubt;
    json_t *shape;
    double meas;
    const tt_template *t;
    const tt_target *tg;
    int64_t slots[TT_MAX_SLOTS];
    char cfg[160];
    char why[200];            /* not expressible: why */
    char floor_why[120];      /* expressible but excluded from MAPE: why */
    char group[400];          /* sweep key: chip + shape + implementation */
    char pubcfg[200];         /* the config as published ("" when none) */
    double flops, bytes;      /* useful work and compulsory GM traffic (roofline) */
    double model, sim;
    int64_t cores_used;
    tt_fidt timing;           /* how the source timed it (fidelity_timing.h) */
    int flushed;              /* the method empties the L2 before each call (tt_fidt_flushes_l2) */
    tt_target cold;           /* then: p->tg with nothing of the previous call left in L2 */
    int ok;
} point;

typedef struct ctx {
    const tt_targets *ts;
    const char *tdir;
    tt_template *gemm, *fa, *stream;
    tt_fidlib lib;            /* the kernel-library templates (bench/common/fidelity_library.c) */
    tt_fidvec vec;            /* rope, activation, cross-entropy (bench/common/fidelity_vector.c) */
} ctx;

/* ---- reading a point ------------------------------------------------------------------- */

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int64_t ival(const json_t *o, const char *k, int64_t dflt)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static int has(const char *s, const char *w) { return strstr(s, w) != NULL; }

/* The target for the chip as the source states it (HARDWARE.md; A3 = one 24-core die). */
static const char *target_of(const char *chip, const char *cls)
{
    if (has(chip, "9362") || has(cls, "9362")) return "Ascend910_9362";
    if (has(chip, "910B4") || has(cls, "910B4")) return "Ascend910B4";
    if (has(chip, "910B3") || has(cls, "910B3")) return "Ascend910B3";
    if (has(chip, "910B2") || has(cls, "910B2")) return "Ascend910B2";
    if (has(chip, "910B1")) return "Ascend910B1";
    if (has(chip, "A2/A3") || has(cls, "tilelang-ascend, A2/A3"))
        return "Ascend910B1";   /* the run examples use -v Ascend910B1 */
    if (has(chip, "A3")) return "Ascend910_9391";
    if (has(chip, "24 AIC")) return "Ascend910B2";
    return NULL;
}

/* "fp16 in/out", "fp16 in, fp32 out", "bf16 ..." -> input and output dtype */
static int dtypes_of(const char *s, int64_t *in, int64_t *out)
{
    if (!strncmp(s, "fp16", 4) || !strncmp(s, "float16", 7)) *in = TT_DT_FLOAT16;
    else if (!strncmp(s, "bf16", 4) || !strncmp(s, "bfloat16", 8)) *in = TT_DT_BFLOAT16;
    else if (!strncmp(s, "fp32", 4)) *in = TT_DT_FLOAT32;
    else return -1;
    *out = *in;
    if (has(s, "fp32 out")) *out = TT_DT_FLOAT32;
    return 0;
}

/* "<128,256,64>" -> 3 ints */
static int triple(const char *s, int64_t v[3])
{
    long long a, b, c;
    if (sscanf(s, "<%lld,%lld,%lld>", &a, &b, &c) != 3) return -1;
    v[0] = a; v[1] = b; v[2] = c;
    return 0;
}

static int set(const tt_template *t, int64_t *slots, const char *name, int64_t v)
{
    int s = tt_tmpl_slot_of(t, name);
    if (s < 0) return -1;
    slots[s] = v;
    return 0;
}

/* ---- mapping a point to a template ----------------------------------------------------- */

#define FREE (-1)   /* a param the source does not state: the model's best value is used */

static int map_gemm(const ctx *c, point *p, const json_t *pt)
{
    const json_t *sh = p->shape, *cf = json_object_get(pt, "config");
    int64_t M = ival(sh, "M", 0), N = ival(sh, "N", 0), K = ival(sh, "K", 0), in, out;
    if (!M || !N || !K) return snprintf(p->why, sizeof p->why, "shape incomplete (M, N or K not stated)"), -1;
    if (dtypes_of(str(pt, "dtypes"), &in, &out))
        return snprintf(p->why, sizeof p->why, "dtype '%s' not read", str(pt, "dtypes")), -1;
    if (in == TT_DT_FLOAT32)
        return snprintf(p->why, sizeof p->why, "fp32 inputs: gemm takes float16/bfloat16"), -1;
    p->t = c->gemm;
    p->flops = 2.0 * M * N * K;
    p->bytes = (double)(M * K + K * N) * tt_dtype_size(in) + (double)M * N * tt_dtype_size(out);
    set(p->t, p->slots, "M", M);
    set(p->t, p->slots, "N", N);
    set(p->t, p->slots, "K", K);
    set(p->t, p->slots, "dtype", in);
    set(p->t, p->slots, "out_dtype", out);
    int64_t l1[3], l0[3];
    static const char *const names[] = {"block_M", "block_N", "block_K", "K_L1", "S1", "S2"};
    int64_t v[6] = {FREE, FREE, FREE, FREE, 2, 2};   /* CATLASS and PTO double-buffer L1/L0 */
    if (!triple(str(cf, "L1TileShape"), l1) && !triple(str(cf, "L0TileShape"), l0)) {
        v[0] = l1[0]; v[1] = l1[1]; v[3] = l1[2]; v[2] = l0[2];
        /* CATLASS runs every tile over its actual shape (BlockScheduler::GetActualBlockShape:
         * min(L1 tile, what is left of M)): on M = 20 a 128-row L1 tile loads 20 rows and
         * the cube computes ceil(20 / 16) = 2 fractal rows, the work of a 32-row tile, which
         * is what the template's tile of align_up(M, 16) rows costs (the template refuses
         * block_M > align_up(M, 16), a tile that is only padding) */
        if (v[0] > (M + 15) / 16 * 16) v[0] = (M + 15) / 16 * 16;
        if (v[1] > (N + 15) / 16 * 16) v[1] = (N + 15) / 16 * 16;
    } else if (json_object_get(cf, "baseM")) {
        v[0] = ival(cf, "baseM", FREE); v[1] = ival(cf, "baseN", FREE);
        v[2] = ival(cf, "baseK", FREE); v[3] = v[2] * ival(cf, "stepKa", 1);
    }
    for (int i = 0; i < 6; i++) set(p->t, p->slots, names[i], v[i]);
    /* params the template has beyond these (core_num, swizzle, ...) keep their FREE mark */
    const char *swz = str(cf, "swizzle");
    int w = 0;
    if (*swz && sscanf(swz, "GemmIdentityBlockSwizzle<%d", &w) == 1)
        set(p->t, p->slots, "swizzle", w);
    return 0;
}

static int map_fa(const ctx *c, point *p, const json_t *pt)
{
    const json_t *sh = p->shape, *cf = json_object_get(pt, "config");
    int64_t H = ival(sh, "heads", ival(sh, "H", 0));
    int64_t Sq = ival(sh, "S_q", 0), Skv = ival(sh, "S_kv", 0), D = ival(sh, "D", 0);
    if (!H || !Sq || !Skv || !D)
        return snprintf(p->why, sizeof p->why, "shape incomplete (heads, S_q, S_kv or D)"), -1;
    p->t = c->fa;
    p->flops = 4.0 * ival(sh, "B", 1) * H * Sq * Skv * D;
    p->bytes = 2.0 * ival(sh, "B", 1) * H * (2.0 * Sq * D + 2.0 * Skv * D);
    set(p->t, p->slots, "B", ival(sh, "B", 1));
    set(p->t, p->slots, "H", H);
    set(p->t, p->slots, "H_kv", H);
    set(p->t, p->slots, "S_q", Sq);
    set(p->t, p->slots, "S_kv", Skv);
    set(p->t, p->slots, "D", D);
    set(p->t, p->slots, "causal", json_is_true(json_object_get(sh, "causal")));
    set(p->t, p->slots, "dtype", TT_DT_FLOAT16);
    int64_t bm = ival(cf, "tile_S0", ival(cf, "CUBE_S0", FREE));
    set(p->t, p->slots, "block_M", bm);
    /* the PTO-ISA FA kernels signal every QK/P/PV tile to the other side (a FIFO hand-off per
     * tile; only the consumption notifications have a period): no batched hand-offs */
    if (has(p->impl, "PTO-ISA")) set(p->t, p->slots, "cross_interval", 1);
    return 0;
}

/* the GM read stream behind the bandwidth points (tt_fidelity.h); cached path only */
static int map_stream(const ctx *c, point *p, const json_t *pt)
{
    (void)pt;
    if (has(p->id, "bypass"))
        return snprintf(p->why, sizeof p->why, "L2-bypass address alias: no template reads GM around the L2"), -1;
    if (has(p->id, "footprint") && !has(p->id, "470MB"))
        return snprintf(p->why, sizeof p->why, "re-reads a small footprint many times: the stream template reads distinct data"), -1;
    p->t = c->stream;
    p->bytes = 469.8e6;
    p->slots[0] = (int64_t)(469.8e6 / 2);
    p->slots[1] = TT_DT_FLOAT16;
    p->slots[2] = FREE;
    p->slots[3] = FREE;
    return 0;
}

/* Why a family has no template here (the kernel-library issue adds templates). */
static const char *no_template(const char *fk)
{
    if (has(fk, "grouped")) return "grouped_gemm";
    if (has(fk, "int8") || has(fk, "quant")) return "quant_matmul";
    if (has(fk, "gemv")) return "gemv";
    return NULL;
}

static void map_point(const ctx *c, point *p, const json_t *pt)
{
    const char *fk = str(pt, "family_key");
    const char *tn = target_of(str(pt, "chip"), str(pt, "chip_class"));
    int rc = -1;
    p->why[0] = '\0';
    for (size_t i = 0; i < TT_MAX_SLOTS; i++) p->slots[i] = FREE;
    int lr = tt_fidlib_map(&c->lib, fk, str(pt, "family"), pt, &p->t, p->slots, &p->flops, &p->bytes,
                           p->why, sizeof p->why);
    if (!lr)
        lr = tt_fidvec_map(&c->vec, fk, str(pt, "family"), pt, &p->t, p->slots, &p->flops,
                           &p->bytes, p->why, sizeof p->why);
    if (lr) rc = lr > 0 ? 0 : -1;
    else if (!strcmp(fk, "gemm")) rc = map_gemm(c, p, pt);
    else if (!strcmp(fk, "flash_attention")) rc = map_fa(c, p, pt);
    else if (!strcmp(fk, "copy/bandwidth")) rc = map_stream(c, p, pt);
    else if (has(fk, "sparse"))   /* read the shape: window / cmp_ratio variants, chip */
        snprintf(p->why, sizeof p->why, "DeepSeek-V4 sparse flash MLA (%s: sliding window + compressed KV, "
                 "cmp_ratio): sparse_flash_attn is DSA top-k only; chip not stated", str(p->shape, "variant"));
    else if (has(fk, "decode attention"))
        snprintf(p->why, sizeof p->why, "KDA linear-attention recurrent decode (vector state update): "
                 "decode_attn is softmax flash decoding");
    else if (no_template(fk) && !has(p->family, "mHC") && !has(p->family, "linear-attention"))
        snprintf(p->why, sizeof p->why, "no template (%s: kernel-library issue)", no_template(fk));
    else
        snprintf(p->why, sizeof p->why, "no template for this kernel (%.80s)", p->family);
    if (rc == 0 && !tn) {
        snprintf(p->why, sizeof p->why, "chip not stated (%.60s)", str(pt, "chip"));
        rc = -1;
    }
    if (rc == 0 && !(p->tg = tt_targets_find(c->ts, tn))) {
        snprintf(p->why, sizeof p->why, "no target file %s", tn);
        rc = -1;
    }
    if (rc) {
        p->t = NULL;
        return;
    }
    /* CATLASS and the PTO GEMM launch one block per cube core that loops over the output
     * tiles (a persistent kernel): core_num = the chip's cores, no swizzle unless stated */
    tt_fidvec_chip(p->t, p->tg->vector_cores, p->slots);
    int s = tt_tmpl_slot_of(p->t, "core_num");
    if (s >= 0 && (has(p->impl, "CATLASS") || has(p->impl, "PTO-ISA manual GEMM")))
        p->slots[s] = p->tg->cube_cores;
    /* ... except that CATLASS 00_basic_matmul's block (MmadAtlasA2Pingpong) restarts its
     * pipeline for every tile of its walk (the Preload policies of 06/21/08 exist to overlap
     * consecutive tiles), while the template's persistent walk continues the pipeline across
     * tiles (docs/cost-model.md section 3): the grid launch, where every tile pays its
     * pipeline's fill and drain, is what the template says closest (it also charges
     * block_cycles per tile) */
    if (s >= 0 && has(p->impl, "00_basic_matmul") && p->t && !strcmp(p->t->name, "gemm"))
        p->slots[s] = 0;
    s = tt_tmpl_slot_of(p->t, "swizzle");
    if (s >= 0 && p->slots[s] == FREE && has(p->impl, "CATLASS")) p->slots[s] = 1;
}

/* Launch floor: rows whose source says the time is fixed/launch overhead, or whose published
 * time is more than FLOOR_RATIO x the roofline of the cores the config uses (peak cube rate
 * x cores used / cores, HBM rate of the target): then at most 1/FLOOR_RATIO of the time is
 * the kernel's work and the rest is fixed cost (launch, sync, padding kernels). */
#define FLOOR_RATIO 8.0
/* A row of FLOOR_MAX_US or more is never a launch floor: the launch + sync cost of every
 * published row that states it is <= 30 us (ascend-rs, aclnn rope); a slow kernel on few
 * cores (cross-entropy with N = 4 rows: one block, 3.3 ms) is the kernel's own time. */
#define FLOOR_MAX_US 100.0
static void floor_check(point *p)
{
    const char *d = p->doubt;
    if (has(d, "launch") || has(d, "floor") || has(d, "host overhead")) {
        snprintf(p->floor_why, sizeof p->floor_why, "source: %.100s", d);
        return;
    }
    if (p->meas >= FLOOR_MAX_US) return;
    const tt_target *tg = p->tg;
    double cu = p->cores_used > 0 ? (double)p->cores_used : tg->cube_cores;
    if (cu > tg->cube_cores) cu = tg->cube_cores;
    double peak = cu * 4096.0 * 2 * tg->clock_mhz * 1e6;           /* flop/s, fp16 */
    double roof = fmax(p->flops / peak, p->bytes / (tg->hbm_gbps * 1e9)) * 1e6;
    if (roof > 0 && p->meas > FLOOR_RATIO * roof)
        snprintf(p->floor_why, sizeof p->floor_why,
                 "published %.1f us > %.0f x roofline %.2f us (%d cores in use)", p->meas,
                 FLOOR_RATIO, roof, (int)cu);
}

/* ---- predicting ------------------------------------------------------------------------ */

typedef struct best_ud {
    const tt_model *m;
    const int64_t *want;      /* FREE or the stated value, per slot */
    size_t n0, n1;            /* param slot range */
    size_t nslots;
    int64_t best[TT_MAX_SLOTS];
    double t;
    const tt_target *tg;
    int stream;
} best_ud;

static int visit_best(void *ud, const int64_t *slots)
{
    best_ud *b = ud;
    for (size_t s = b->n0; s < b->n1; s++)
        if (b->want[s] != FREE && b->want[s] != slots[s]) return 0;
    int64_t w[TT_MAX_SLOTS] = {0};
    memcpy(w, slots, b->nslots * sizeof *w);
    tt_model_result r;
    if (tt_model_eval(b->m, w, &r) != TT_OK) return 0;
    double t = r.time_us;
    if (b->stream)   /* a bandwidth benchmark amortises the fixed costs (tt_fidelity.h) */
        t -= b->tg->launch_us + tt_target_us(b->tg, b->tg->block_cycles);
    if (b->t < 0 || t < b->t) {
        b->t = t;
        memcpy(b->best, slots, b->nslots * sizeof *slots);
    }
    return 0;
}

static void cfg_str(const tt_template *t, const int64_t *slots, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t p = 0; p < t->nparams && n < cap; p++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%lld", p ? "," : "", t->params[p].name,
                              (long long)slots[t->ninputs + p]);
}

/* Model prediction (the best config over the params the source does not state), then the
 * simulator on the same config. */
static void predict(point *p, double pipelined_us)
{
    tt_errinfo e;
    tt_model *m = NULL;
    const tt_template *t = p->t;
    if (p->flushed) {
        /* an emptied L2 keeps nothing of the previous call: the residency that
         * memory.l2_resident_bytes describes is (next to) none, in model and simulator */
        p->cold = *p->tg;
        p->cold.l2_resident_bytes = 1;
        p->tg = &p->cold;
    }
    if (tt_model_new(t, p->tg, p->slots, NULL, &m, &e)) {
        snprintf(p->why, sizeof p->why, "model: %.150s", e.msg);
        return;
    }
    tt_caps caps;
    tt_target_caps(p->tg, &caps);
    tt_space *sp = NULL;
    if (tt_space_new(t, p->slots, &caps, &sp, &e)) {
        snprintf(p->why, sizeof p->why, "space: %.150s", e.msg);
        tt_model_free(m);
        return;
    }
    best_ud b = {.m = m, .want = p->slots, .n0 = t->ninputs, .n1 = t->ninputs + t->nparams,
                 .t = -1, .tg = p->tg, .nslots = t->nslots, .stream = t == NULL ? 0 : !strcmp(t->name, "stream_read")};
    /* a stated config that the space refuses: say why */
    int stated = 1;
    for (size_t s = b.n0; s < b.n1; s++) stated &= p->slots[s] != FREE;
    if (stated) {
        int64_t w[TT_MAX_SLOTS];
        memcpy(w, p->slots, sizeof w);
        tt_model_result r;
        if (tt_model_eval(m, w, &r) != TT_OK) {
            cfg_str(t, p->slots, p->cfg, sizeof p->cfg);
            snprintf(p->why, sizeof p->why, "stated config refused: %.120s", r.reason);
        } else {
            memcpy(b.best, p->slots, sizeof b.best);
            b.t = r.time_us;
        }
    } else {
        tt_space_enumerate(sp, visit_best, &b, 0, NULL);
        if (b.t < 0) snprintf(p->why, sizeof p->why, "no feasible config with the stated params");
    }
    tt_space_free(sp);
    if (b.t >= 0) {
        memcpy(p->slots, b.best, sizeof p->slots);
        cfg_str(t, p->slots, p->cfg, sizeof p->cfg);
        p->model = b.t;
        int64_t w[TT_MAX_SLOTS];
        memcpy(w, p->slots, sizeof w);
        tt_model_result mr;
        tt_model_eval(m, w, &mr);
        p->cores_used = mr.cores_used;
        memcpy(w, p->slots, sizeof w);
        tt_sim_result r;
        tt_sim_run(t, p->tg, w, NULL, &r);
        p->sim = r.rc == TT_OK ? r.time_us : NAN;
        if (r.rc == TT_OK && b.stream)
            p->sim -= p->tg->launch_us + tt_target_us(p->tg, p->tg->block_cycles);
        tt_sim_result_close(&r);
        /* the timing method's launch cost replaces the device one (fidelity_timing.h) */
        double dl = tt_fidt_launch_us(p->timing, p->tg->launch_us, pipelined_us) - p->tg->launch_us;
        p->model += dl;
        p->sim += dl;
        p->ok = 1;
    }
    tt_model_free(m);
}

/* ---- statistics ------------------------------------------------------------------------ */

static void ranks(const double *v, int n, double *r)
{
    for (int i = 0; i < n; i++) {
        int less = 0, eq = 0;
        for (int j = 0; j < n; j++) less += v[j] < v[i], eq += v[j] == v[i];
        r[i] = less + (eq + 1) / 2.0;
    }
}

static double spearman(const double *a, const double *b, int n)
{
    double ra[MAXP], rb[MAXP], ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    ranks(a, n, ra);
    ranks(b, n, rb);
    for (int i = 0; i < n; i++) ma += ra[i] / n, mb += rb[i] / n;
    for (int i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
}

static double err(double pred, double meas) { return 100.0 * (pred / meas - 1); }

/* ---- printing -------------------------------------------------------------------------- */

static void print_points(point *P, int n)
{
    printf("## Expressible points (model and simulator are models of the chip)\n\n");
    printf("| point | target | config | timing | published us | model us | err | sim us | err | MAPE |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        point *p = &P[i];
        if (!p->ok) continue;
        printf("| %s | %s | %s | %s | %.2f | %.2f | %+.1f %% | %.2f | %+.1f %% | %s |\n", p->id,
               p->tg->name, p->cfg, p->flushed ? "loop, L2 emptied" : tt_fidt_name(p->timing), p->meas, p->model, err(p->model, p->meas), p->sim,
               err(p->sim, p->meas), p->floor_why[0] ? "no: launch floor" : "yes");
    }
    printf("\nLaunch-floor rows left out of MAPE:\n");
    for (int i = 0; i < n; i++)
        if (P[i].ok && P[i].floor_why[0]) printf("- %s: %s\n", P[i].id, P[i].floor_why);
}

static void print_families(point *P, int n)
{
    printf("\n## Per family (MAPE over the kernel-dominated expressible points)\n\n");
    printf("| family | expressible / total | in MAPE | model MAPE | model worst | sim MAPE | sim worst | model MAPE, all rows |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= !strcmp(P[j].family, P[i].family);
        if (seen) continue;
        int tot = 0, ex = 0, k = 0;
        double sm = 0, ss = 0, wm = 0, ws = 0, sa = 0;
        for (int j = i; j < n; j++) {
            point *p = &P[j];
            if (strcmp(p->family, P[i].family)) continue;
            tot++;
            if (!p->ok) continue;
            ex++;
            sa += fabs(err(p->model, p->meas));
            if (p->floor_why[0]) continue;
            k++;
            double em = err(p->model, p->meas), es = err(p->sim, p->meas);
            sm += fabs(em);
            ss += fabs(es);
            if (fabs(em) > fabs(wm)) wm = em;
            if (fabs(es) > fabs(ws)) ws = es;
        }
        if (k)
            printf("| %s | %d / %d | %d | %.1f %% | %+.1f %% | %.1f %% | %+.1f %% | %.1f %% |\n",
                   P[i].family, ex, tot, k, sm / k, wm, ss / k, ws, sa / ex);
        else if (ex)
            printf("| %s | %d / %d | 0 | - | - | - | - | %.1f %% |\n", P[i].family, ex, tot, sa / ex);
        else
            printf("| %s | 0 / %d | 0 | - | - | - | - | - |\n", P[i].family, tot);
    }
}

/* The error band of each template: the range of published / model over its kernel-dominated
 * points (costmodel/band.c holds these numbers; rerun after a model change). */
static void print_bands(point *P, int n)
{
    printf("\n## Error band per template (published / model over the points in MAPE)\n\n");
    printf("| template | points | low factor | high factor |\n|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        if (!P[i].ok || P[i].floor_why[0]) continue;
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= P[j].ok && !P[j].floor_why[0] && P[j].t == P[i].t;
        if (seen) continue;
        double lo = INFINITY, hi = 0;
        int k = 0;
        for (int j = i; j < n; j++) {
            if (!P[j].ok || P[j].floor_why[0] || P[j].t != P[i].t) continue;
            double r = P[j].meas / P[j].model;
            lo = fmin(lo, r);
            hi = fmax(hi, r);
            k++;
        }
        printf("| %s | %d | %.3f | %.3f |\n", P[i].t->name, k, lo, hi);
    }
}

static void print_sweeps(point *P, int n)
{
    printf("\n## Config sweeps (several configs, one shape, one chip, one implementation)\n\n");
    printf("| sweep | configs | Spearman model | Spearman sim | best published | model's pick |\n");
    printf("|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        if (!P[i].ok) continue;
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= P[j].ok && !strcmp(P[j].group, P[i].group);
        if (seen) continue;
        double a[MAXP], b[MAXP], s[MAXP];
        int idx[MAXP], k = 0;
        for (int j = i; j < n; j++)
            if (P[j].ok && !strcmp(P[j].group, P[i].group)) {
                a[k] = P[j].meas; b[k] = P[j].model; s[k] = P[j].sim; idx[k++] = j;
            }
        int distinct = 0;
        for (int j = 0; j < k; j++) {
            int dup = !P[idx[j]].pubcfg[0] || !strcmp(P[idx[j]].pubcfg, "null");
            for (int q = 0; q < j && !dup; q++) dup = !strcmp(P[idx[q]].pubcfg, P[idx[j]].pubcfg);
            distinct += !dup;
        }
        if (distinct < 2) continue;   /* repeats of one config (e.g. two hosts), not a sweep */
        int bp = 0, bm = 0;
        for (int j = 1; j < k; j++) {
            if (a[j] < a[bp]) bp = j;
            if (b[j] < b[bm]) bm = j;
        }
        printf("| %s (%s) | %d | %.2f | %.2f | %s | %s (%+.1f %% slower) |\n", P[i].impl,
               P[i].tg->name, k, spearman(a, b, k), spearman(a, s, k), P[idx[bp]].id,
               P[idx[bm]].id, err(a[bm], a[bp]));
    }
}

static void print_missing(point *P, int n, int each)
{
    printf("\n## Points no template expresses here, by reason\n\n| reason | points | ids |\n|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        if (P[i].ok) continue;
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= !P[j].ok && !strcmp(P[j].why, P[i].why);
        if (seen) continue;
        int k = 0;
        for (int j = i; j < n; j++) k += !P[j].ok && !strcmp(P[j].why, P[i].why);
        printf("| %s | %d | ", P[i].why, k);
        int shown = 0;
        for (int j = i; j < n && (each || shown < 4); j++)
            if (!P[j].ok && !strcmp(P[j].why, P[i].why))
                printf("%s%s", shown++ ? ", " : "", P[j].id);
        printf("%s |\n", shown < k ? ", ..." : "");
    }
}

/* ---- main ------------------------------------------------------------------------------ */

static tt_template *load(const char *dir, const char *name)
{
    char path[4096];
    tt_errinfo e;
    tt_template *t = NULL;
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    if (tt_tmpl_parse_file(path, &t, &e)) fprintf(stderr, "%s: %s\n", path, e.msg);
    return t;
}

int main(int argc, char **argv)
{
    const char *pub = TT_DEFAULT_DATASETS_DIR "/../ascend/published.json";
    const char *tpl = TT_DEFAULT_TEMPLATES_DIR, *tdir = TT_DEFAULT_TARGETS_DIR;
    int each = 0;
    double pipelined_us = TT_FIDT_PIPELINED_US;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--points")) each = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--published")) pub = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--templates")) tpl = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--targets")) tdir = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--pipelined-us")) pipelined_us = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--published FILE] [--templates DIR] [--targets DIR] [--points] [--pipelined-us US]\n", argv[0]);
            return 2;
        }
    }
    json_error_t je;
    json_t *doc = json_load_file(pub, 0, &je);
    if (!doc) { fprintf(stderr, "%s: %s\n", pub, je.text); return 1; }
    ctx c = {.tdir = tdir};
    tt_targets *ts = NULL;
    tt_errinfo e;
    if (tt_targets_load_dir(tdir, &ts, &e)) { fprintf(stderr, "targets: %s\n", e.msg); return 1; }
    c.ts = ts;
    c.gemm = load(tpl, "gemm");
    c.fa = load(tpl, "flash_attn_fwd");
    if (tt_fidlib_load(&c.lib, tpl) || tt_fidvec_load(&c.vec, tpl))
        fprintf(stderr, "kernel-library templates missing in %s: their points stay unmapped\n", tpl);
    if (tt_tmpl_parse_string(tt_fidelity_stream_read_json, strlen(tt_fidelity_stream_read_json),
                             NULL, &c.stream, &e))
        fprintf(stderr, "stream_read: %s\n", e.msg);
    if (!c.gemm || !c.fa || !c.stream) return 1;
    const json_t *pts = json_object_get(doc, "points");
    int n = 0;
    point *P = calloc(MAXP, sizeof *P);
    if (!P) return 1;
    size_t i;
    json_t *pt;
    json_array_foreach(pts, i, pt) {
        if (n >= MAXP) break;
        point *p = &P[n++];
        p->id = str(pt, "id");
        p->family = str(pt, "family_key");
        p->impl = str(pt, "implementation");
        p->doubt = str(pt, "doubt");
        p->shape = json_object_get(pt, "shape");
        p->meas = json_number_value(json_object_get(pt, "time_us"));
        p->timing = tt_fidt_of(str(pt, "timing"));
        p->flushed = tt_fidt_flushes_l2(str(pt, "timing"));
        char *sh = json_dumps(p->shape, JSON_SORT_KEYS | JSON_COMPACT);
        /* a sweep: one chip, shape, dtype and implementation */
        snprintf(p->group, sizeof p->group, "%s|%s|%s|%s", str(pt, "chip"), sh ? sh : "", p->impl,
                 str(pt, "dtypes"));
        free(sh);
        sh = json_dumps(json_object_get(pt, "config"), JSON_SORT_KEYS | JSON_COMPACT);
        snprintf(p->pubcfg, sizeof p->pubcfg, "%s", sh ? sh : "");
        free(sh);
        map_point(&c, p, pt);
        if (!p->t) continue;
        predict(p, pipelined_us);
        if (p->ok) floor_check(p);
    }
    printf("# Fidelity against shared/ascend/published.json (%d points)\n\n", n);
    printf("Model and simulator numbers are predictions of models, not measurements. Params the "
           "source does not state take the model's best value.\n\n");
    print_points(P, n);
    print_families(P, n);
    print_sweeps(P, n);
    print_bands(P, n);
    print_missing(P, n, each);
    free(P);
    tt_tmpl_free(c.gemm);
    tt_tmpl_free(c.fa);
    tt_fidlib_free(&c.lib);
    tt_fidvec_free(&c.vec);
    tt_tmpl_free(c.stream);
    tt_targets_free(ts);
    json_decref(doc);
    return 0;
}

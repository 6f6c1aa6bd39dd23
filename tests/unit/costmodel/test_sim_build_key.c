/* SPDX-License-Identifier: MIT
 * test_sim_build_key.c - the key of the simulator's per-run program cache (sim.c,
 * tt__sim_build_key): builds with equal keys must give byte-identical programs, or the cache
 * would change results.  Checked on the shipped causal FlashAttention template, whose blocks
 * differ in their KV trip count: every pair of grid points, without and with a truncation of
 * the KV loop (anchors of different waves truncated to the same trip share one build), and
 * with loop marks.  The simulator is a model; this checks its bookkeeping, not the chip.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"
#include "space.h"
#include "target.h"
#include "template.h"
#include "tt_test.h"

typedef struct fixture {
    tt_targets *ts;
    tt_template *fa;
    int64_t slots[TT_MAX_SLOTS];
    tt__sim s;
} fixture;

/* causal FlashAttention, 2 heads x 16 query blocks of 64 rows, on the A3 target */
static int fixture_open(fixture *f)
{
    char *tdir = tt_test_src("costmodel/targets");
    char *fpath = tt_test_src("templates/flash_attn_fwd.json");
    tt_errinfo err;
    tt_errinfo_clear(&err);
    memset(f, 0, sizeof *f);
    const tt_target *tgt = NULL;
    int ok = tt_targets_load_dir(tdir, &f->ts, &err) == TT_OK &&
             tt_tmpl_parse_file(fpath, &f->fa, &err) == TT_OK &&
             (tgt = tt_targets_find(f->ts, "Ascend910_9391")) != NULL;
    free(tdir);
    free(fpath);
    if (!ok) return 0;
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    ok = tt_tmpl_problem_parse(f->fa, "B=1,H=2,H_kv=2,S_q=1024,S_kv=1024,D=128,causal=1,"
                                      "dtype=float16", f->slots, &err) == TT_OK &&
         tt_tmpl_config_parse(f->fa, "block_M=64,block_N=64,stages=2", f->slots, &err) == TT_OK &&
         tt_space_new(f->fa, f->slots, &caps, &sp, &err) == TT_OK &&
         tt_space_check(sp, f->slots, &err) == TT_OK;
    tt_space_free(sp);
    if (!ok) return 0;
    f->s.t = f->fa;
    f->s.tgt = tgt;
    f->s.slots = f->slots;
    char reason[160];
    return tt__sim_prepare(&f->s, reason, sizeof reason) == TT_OK;
}

static void fixture_close(fixture *f)
{
    tt__sim_close(&f->s);
    tt_tmpl_free(f->fa);
    tt_targets_free(f->ts);
}

typedef struct built {
    int64_t *key;
    size_t nkey;
    tt__sprog prog[TT__AG__COUNT];
} built;

/* Key and programs of grid point gp under the truncation / marks now set in f->s. */
static int build_one(fixture *f, int64_t gp, built *b)
{
    memset(b, 0, sizeof *b);
    b->nkey = tt__sim_build_key(&f->s, &gp, 1, &b->key);
    char reason[160];
    return b->nkey > 0 && tt__sim_build(&f->s, &gp, 1, b->prog, reason, sizeof reason) == TT_OK;
}

static void built_free(built *b)
{
    free(b->key);
    for (int r = 0; r < TT__AG__COUNT; r++) tt__sprog_free(&b->prog[r]);
}

static int same_key(const built *a, const built *b)
{
    return a->nkey == b->nkey && !memcmp(a->key, b->key, a->nkey * sizeof *a->key);
}

/* Field by field (the padding of tt__sinst is not part of a program). */
static int same_progs(const built *a, const built *b, int marks)
{
    for (int r = 0; r < TT__AG__COUNT; r++) {
        const tt__sprog *p = &a->prog[r], *q = &b->prog[r];
        if (p->n != q->n || p->ndeps != q->ndeps || p->nmk != q->nmk) return 0;
        for (size_t i = 0; i < p->n; i++) {
            const tt__sinst *x = &p->ins[i], *y = &q->ins[i];
            if (x->dur != y->dur || x->bytes != y->bytes || x->cap != y->cap ||
                x->cost != y->cost || x->op != y->op || x->slot != y->slot ||
                x->dep_off != y->dep_off || x->ndeps != y->ndeps || x->unit != y->unit ||
                x->kind != y->kind || x->flag != y->flag || x->dir != y->dir)
                return 0;
            if (marks && p->mk[i] != q->mk[i]) return 0;
        }
        if (p->ndeps && memcmp(p->deps, q->deps, p->ndeps * sizeof *p->deps)) return 0;
    }
    return 1;
}

/* Dependencies of program p: *same counts those on an earlier op of the same unit that is
 * not a GM transfer (the builder leaves them out: the in-order unit has finished them
 * whenever the dependent op heads it), *other the rest. */
static void count_deps(const tt__sprog *p, size_t *same, size_t *other)
{
    for (size_t i = 0; i < p->n; i++)
        for (unsigned d = 0; d < p->ins[i].ndeps; d++) {
            const tt__sinst *pr = &p->ins[TT__DEP_IDX(p->deps[p->ins[i].dep_off + d])];
            if (pr->unit == p->ins[i].unit && pr->kind != TT__SI_GM) (*same)++;
            else (*other)++;
        }
}

/* Every pair of grid points: equal keys -> identical programs; the keys tell the blocks'
 * different KV trip counts apart (16 query blocks, 2 heads: 16 distinct keys). */
static void test_equal_keys_equal_programs(void)
{
    fixture F;
    CU_ASSERT_FATAL(fixture_open(&F));
    int64_t n = F.s.nblocks;
    CU_ASSERT_EQUAL_FATAL(n, 32);
    built *b = calloc((size_t)n, sizeof *b);
    CU_ASSERT_FATAL(b != NULL);
    for (int64_t g = 0; g < n; g++) CU_ASSERT_FATAL(build_one(&F, g, &b[g]));
    int distinct = 0, pairs = 0;
    for (int64_t g = 0; g < n; g++) {
        int first = 1;
        for (int64_t h = 0; h < n; h++) {
            if (!same_key(&b[g], &b[h])) continue;
            if (h < g) first = 0;
            if (h > g) {
                pairs++;
                CU_ASSERT(same_progs(&b[g], &b[h], 0));
            }
        }
        distinct += first;
    }
    CU_ASSERT_EQUAL(distinct, 16);
    CU_ASSERT_EQUAL(pairs, 16);
    size_t same = 0, other = 0;
    for (int64_t g = 0; g < n; g++)
        for (int r = 0; r < TT__AG__COUNT; r++) count_deps(&b[g].prog[r], &same, &other);
    CU_ASSERT_EQUAL(same, 0);
    CU_ASSERT(other > 0);
    for (int64_t g = 0; g < n; g++) built_free(&b[g]);
    free(b);
    fixture_close(&F);
}

/* A block truncated to another block's trip count (as the anchors of two wave shapes) has
 * that block's key and its program; with loop marks on the KV loop too. */
static void test_truncation_and_marks(void)
{
    fixture F;
    CU_ASSERT_FATAL(fixture_open(&F));
    int loop = -1;
    int64_t t_long = 0, t_short = 0, g_long = -1, g_short = -1;
    for (int64_t g = 0; g < F.s.nblocks; g++) {
        int lid;
        int64_t tr;
        tt__sim_count(&F.s, g, &lid, &tr);
        if (lid < 0) continue;
        loop = lid;
        if (tr > t_long) { t_long = tr; g_long = g; }
        if (g_short < 0 || (tr < t_short && tr > 1)) { t_short = tr; g_short = g; }
    }
    CU_ASSERT_FATAL(loop >= 0 && g_long >= 0 && g_short >= 0 && t_long > t_short);
    for (int marks = 0; marks < 2; marks++) {
        F.s.mark_mode = marks ? TT__MK_LOOP : TT__MK_NONE;
        F.s.mark_loop = loop;
        built a, b, c;
        F.s.trunc_loop = -1;
        CU_ASSERT_FATAL(build_one(&F, g_short, &a));
        F.s.trunc_loop = loop;
        F.s.trunc_delta = t_long - t_short;
        CU_ASSERT_FATAL(build_one(&F, g_long, &b));
        CU_ASSERT(same_key(&a, &b));
        CU_ASSERT(same_progs(&a, &b, marks));
        F.s.trunc_delta = t_long - t_short - 1;   /* one iteration more: another key */
        CU_ASSERT_FATAL(build_one(&F, g_long, &c));
        CU_ASSERT(!same_key(&a, &c));
        CU_ASSERT(a.prog[TT__AG_CUBE].n < c.prog[TT__AG_CUBE].n);
        built_free(&a);
        built_free(&b);
        built_free(&c);
    }
    fixture_close(&F);
}

static const tt_test_case cases[] = {
    {"equal_keys_equal_programs", test_equal_keys_equal_programs},
    {"truncation_and_marks", test_truncation_and_marks},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"sim_build_key", NULL, NULL, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

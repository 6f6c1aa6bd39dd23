/* SPDX-License-Identifier: MIT
 * sim.c - tt_sim_run(): feasibility check, blocks -> waves, folding of identical cores and
 * identical waves, and the result (the shortcuts of long walks and loops: sim_shortcut.c).
 *
 * Blocks (grid points, or launched blocks of a persistent kernel) go to the AI cores in
 * waves of `cube_cores`; a wave starts when the previous one has finished.  Within a wave,
 * cores that run identical blocks form a group simulated once with a weight in the shared
 * bandwidth (they run in lockstep).  A wave whose groups equal an earlier wave's is not
 * simulated again.  See docs/simulator.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"
#include "space.h"

static const char *const stall_names[TT_STALL__COUNT] = {"data", "slot", "bandwidth", "flag"};

const char *tt_stall_name(tt_stall s)
{
    return ((int)s >= 0 && s < TT_STALL__COUNT) ? stall_names[s] : "?";
}

void tt_sim_result_close(tt_sim_result *r)
{
    if (!r) return;
    free(r->trace_json);
    r->trace_json = NULL;
}

/* ---- block signatures ------------------------------------------------------------- */

typedef struct sigtab {       /* interned value vectors */
    int64_t *vals;            /* nuniq * width */
    size_t width, nuniq, capuniq;
    int32_t *slot;            /* open addressing: index+1, 0 empty */
    uint64_t *hash;
    size_t cap;               /* power of 2 */
} sigtab;

uint64_t tt__sim_fnv(const int64_t *v, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)v[i];
        for (int b = 0; b < 8; b++) {
            h ^= (x >> (8 * b)) & 0xff;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

static void sigtab_free(sigtab *t)
{
    free(t->vals);
    free(t->slot);
    free(t->hash);
    memset(t, 0, sizeof *t);
}

/* Intern v[0..width): returns its id, or -1 on OOM. */
static int64_t sigtab_intern(sigtab *t, const int64_t *v)
{
    if (2 * (t->nuniq + 1) > t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64;
        int32_t *ns = calloc(nc, sizeof *ns);
        uint64_t *nh = calloc(nc, sizeof *nh);
        if (!ns || !nh) { free(ns); free(nh); return -1; }
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slot[i]) continue;
            size_t j = t->hash[i] & (nc - 1);
            while (ns[j]) j = (j + 1) & (nc - 1);
            ns[j] = t->slot[i];
            nh[j] = t->hash[i];
        }
        free(t->slot);
        free(t->hash);
        t->slot = ns;
        t->hash = nh;
        t->cap = nc;
    }
    uint64_t h = tt__sim_fnv(v, t->width);
    size_t j = h & (t->cap - 1);
    while (t->slot[j]) {
        int64_t id = t->slot[j] - 1;
        if (t->hash[j] == h &&
            memcmp(&t->vals[(size_t)id * t->width], v, t->width * sizeof *v) == 0)
            return id;
        j = (j + 1) & (t->cap - 1);
    }
    if (t->nuniq == t->capuniq) {
        size_t nc = t->capuniq ? t->capuniq * 2 : 16;
        int64_t *nv = realloc(t->vals, nc * (t->width ? t->width : 1) * sizeof *nv);
        if (!nv) return -1;
        t->vals = nv;
        t->capuniq = nc;
    }
    if (t->width) memcpy(&t->vals[t->nuniq * t->width], v, t->width * sizeof *v);
    t->slot[j] = (int32_t)(t->nuniq + 1);
    t->hash[j] = h;
    return (int64_t)t->nuniq++;
}

/* ---- run state ---------------------------------------------------------------------- */

typedef struct tt__smemo {
    uint64_t hash;
    int64_t *key;             /* (id, count) pairs, then rep group, traced */
    size_t nkey;
    tt__swave w;
} memo;

/* Grid points of logical block L (allocates *gp). */
static int64_t lblock_points(const tt__srun *R, int64_t L, int64_t **gp)
{
    int64_t n = 1;
    if (R->persistent) n = (R->s.nblocks - L + R->persistent - 1) / R->persistent - R->walk_cut;
    if (n < 1) n = 1;
    *gp = malloc((size_t)(n > 0 ? n : 1) * sizeof **gp);
    if (!*gp) return -1;
    for (int64_t j = 0; j < n; j++) (*gp)[j] = L + j * (R->persistent ? R->persistent : 1);
    return n;
}

static int64_t lsig_of(const tt__srun *R, int64_t L)
{
    if (R->lsig) return R->lsig[L];
    if (!R->persistent) return 0;
    return (R->s.nblocks - L + R->persistent - 1) / R->persistent;  /* length of its walk */
}

static tt_rc compute_sigs(tt__srun *R)
{
    tt__sim *s = &R->s;
    if (!s->grid_dep) return TT_OK;
    if (s->nblocks > (1 << 22)) {
        snprintf(R->reason, R->rcap, "%lld blocks with different trip counts: too many to simulate",
                 (long long)s->nblocks);
        return TT_ELIMIT;
    }
    size_t width = tt__sim_block_sig(s, 0, NULL, 0);
    int64_t *v = malloc((width + 1) * sizeof *v);
    int64_t *gsig = malloc((size_t)s->nblocks * sizeof *gsig);
    R->lsig = malloc((size_t)R->nlog * sizeof *R->lsig);
    int64_t *proj = NULL;
    sigtab gt = {0}, lt = {0};
    gt.width = width;
    tt_rc rc = TT_OK;
    if (!v || !gsig || !R->lsig) { rc = TT_ENOMEM; goto out; }
    /* A signature depends only on the grid dims the expressions read: evaluate it once per
     * distinct value of those dims (the projection of the grid point onto them). */
    const tt_kernel *kn = s->t->kernel;
    int64_t nproj = 1;
    for (size_t d = 0; d < kn->ngrid; d++)
        if (s->grid_mask >> (d < 63 ? d : 63) & 1) nproj *= s->grid_ext[d];
    proj = malloc((size_t)nproj * sizeof *proj);
    if (!proj) { rc = TT_ENOMEM; goto out; }
    for (int64_t i = 0; i < nproj; i++) proj[i] = -1;
    for (int64_t g = 0; g < s->nblocks; g++) {
        int64_t rest = g, pi = 0, stride = 1;
        for (size_t d = kn->ngrid; d-- > 0;) {
            int64_t e = s->grid_ext[d], c = rest % e;
            rest /= e;
            if (s->grid_mask >> (d < 63 ? d : 63) & 1) {
                pi += c * stride;
                stride *= e;
            }
        }
        if (proj[pi] < 0) {
            tt__sim_block_sig(s, g, v, width);
            if ((proj[pi] = sigtab_intern(&gt, v)) < 0) { rc = TT_ENOMEM; goto out; }
        }
        gsig[g] = proj[pi];
    }
    if (!R->persistent) {
        memcpy(R->lsig, gsig, (size_t)R->nlog * sizeof *gsig);
    } else {
        int64_t maxlen = (s->nblocks + R->persistent - 1) / R->persistent;
        lt.width = (size_t)maxlen + 1;
        int64_t *seq = malloc(lt.width * sizeof *seq);
        if (!seq) { rc = TT_ENOMEM; goto out; }
        for (int64_t L = 0; L < R->nlog; L++) {
            size_t k = 0;
            for (int64_t g = L; g < s->nblocks; g += R->persistent) seq[k++] = gsig[g];
            while (k < lt.width) seq[k++] = -1;
            if ((R->lsig[L] = sigtab_intern(&lt, seq)) < 0) { rc = TT_ENOMEM; break; }
        }
        free(seq);
    }
out:
    if (rc == TT_ENOMEM) snprintf(R->reason, R->rcap, "out of memory");
    sigtab_free(&gt);
    sigtab_free(&lt);
    free(proj);
    free(v);
    free(gsig);
    return rc;
}

/* ---- one wave ----------------------------------------------------------------------- */

static void groups_free(tt__sgroup *g, size_t n)
{
    if (!g) return;
    for (size_t i = 0; i < n; i++)
        for (int r = 0; r < TT__AG__COUNT; r++) tt__sprog_free(&g[i].prog[r]);
    free(g);
}

/* ---- built programs ------------------------------------------------------------------ */

/* The anchors, marked runs and waves of one run build programs equal to earlier ones (blocks
 * of equal trip counts; anchors of different waves truncated to the same trips).
 * tt__sim_build() reads the grid point and the truncation only through the loops' trip
 * counts as truncated (eval_trip) and stages and the vector ops' element counts, besides the
 * marks (mark_mode, mark_loop) and the position in the walk; the rest of what it reads is
 * fixed for the run.  Those values are its key here: a program is built once per key and
 * copied afterwards (instructions, dependencies and marks byte for byte, so the results do
 * not change).  Longer programs are kept from the second build of their key on: a copy costs
 * fresh memory (page faults on every run), and most long walks of persistent kernels never
 * recur. */
#define PCACHE_MAX_BYTES ((size_t)16 << 20)   /* bound of the programs kept per run */
#define PCACHE_FIRST_INSTS 2048   /* programs up to this long are kept from their first build */

typedef struct pc_entry {
    uint64_t hash;
    int64_t *key;
    size_t nkey;
    int kept;                 /* 1: prog holds the programs; 0: the key was built once */
    tt__sprog prog[TT__AG__COUNT];
} pc_entry;

typedef struct tt__spcache {
    pc_entry *e;
    size_t n, cap;
    int32_t *slot;            /* open addressing: index + 1, 0 empty */
    size_t nslot;             /* power of 2 */
    size_t bytes;             /* programs kept */
} pcache;

static void pcache_free(pcache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].key);
        for (int r = 0; r < TT__AG__COUNT; r++) tt__sprog_free(&c->e[i].prog[r]);
    }
    free(c->e);
    free(c->slot);
    free(c);
}

size_t tt__sim_build_key(tt__sim *s, const int64_t *gp, size_t ngp, int64_t **key)
{
    size_t nl = s->t->kernel->nloops;
    size_t width = tt__sim_block_sig(s, gp[0], NULL, 0);
    size_t per = width + nl, n = 2 + ngp * per;
    int64_t *k = *key = malloc(n * sizeof *k);
    if (!k) return 0;
    k[0] = s->mark_mode;
    k[1] = s->mark_mode == TT__MK_LOOP ? s->mark_loop : 0;
    for (size_t g = 0; g < ngp; g++) {
        int64_t *v = &k[2 + g * per];
        tt__sim_block_sig(s, gp[g], v, width);
        for (size_t l = 0; l < nl; l++)   /* a loop the signature walk did not reach: -2 */
            v[width + l] = s->loop_gen[l] == s->gen ? s->loop_stages[l] : -2;
    }
    return n;
}

static pc_entry *pc_find(const pcache *c, const int64_t *key, size_t nkey, uint64_t h)
{
    if (!c || !c->nslot) return NULL;
    for (size_t j = h & (c->nslot - 1); c->slot[j]; j = (j + 1) & (c->nslot - 1)) {
        pc_entry *e = &c->e[c->slot[j] - 1];
        if (e->hash == h && e->nkey == nkey && !memcmp(e->key, key, nkey * sizeof *key)) return e;
    }
    return NULL;
}

/* Append program src to dst as tt__sim_build() appends (dst->mk is written only when the run
 * marks, as the build does).  Returns 0, or -1 when out of memory. */
static int prog_append(tt__sprog *dst, const tt__sprog *src, int marks)
{
    if (dst->n + src->n > dst->cap) {
        size_t nc = dst->n + src->n > 2 * dst->cap ? dst->n + src->n : 2 * dst->cap;
        tt__sinst *ni = realloc(dst->ins, nc * sizeof *ni);
        if (!ni) return -1;
        dst->ins = ni;
        dst->cap = nc;
    }
    if (dst->ndeps + src->ndeps > dst->capdeps) {
        size_t nc = dst->ndeps + src->ndeps > 2 * dst->capdeps ? dst->ndeps + src->ndeps
                                                               : 2 * dst->capdeps;
        uint32_t *nd = realloc(dst->deps, nc * sizeof *nd);
        if (!nd) return -1;
        dst->deps = nd;
        dst->capdeps = nc;
    }
    if (marks && dst->n + src->n > dst->capmk) {
        int32_t *nm = realloc(dst->mk, dst->cap * sizeof *nm);
        if (!nm) return -1;
        dst->mk = nm;
        dst->capmk = dst->cap;
    }
    for (size_t i = 0; i < src->n; i++) {
        dst->ins[dst->n + i] = src->ins[i];
        dst->ins[dst->n + i].dep_off += (uint32_t)dst->ndeps;
    }
    if (src->ndeps) memcpy(dst->deps + dst->ndeps, src->deps, src->ndeps * sizeof *src->deps);
    if (marks && src->n) memcpy(dst->mk + dst->n, src->mk, src->n * sizeof *src->mk);
    if (marks && src->nmk > dst->nmk) dst->nmk = src->nmk;
    dst->n += src->n;
    dst->ndeps += src->ndeps;
    return 0;
}

/* Keep a copy of the programs just built for entry e (a key built before). */
static void pc_keep(tt__srun *R, pc_entry *e, const tt__sprog progs[TT__AG__COUNT])
{
    size_t bytes = 0;
    for (int r = 0; r < TT__AG__COUNT; r++)
        bytes += progs[r].n * (sizeof *progs[r].ins + sizeof *progs[r].mk) +
                 progs[r].ndeps * sizeof *progs[r].deps;
    if (R->pcache->bytes + bytes > PCACHE_MAX_BYTES) return;
    int marks = R->s.mark_mode != TT__MK_NONE;
    for (int r = 0; r < TT__AG__COUNT; r++)
        if (prog_append(&e->prog[r], &progs[r], marks)) {
            for (int q = 0; q < TT__AG__COUNT; q++) tt__sprog_free(&e->prog[q]);
            return;
        }
    e->kept = 1;
    R->pcache->bytes += bytes;
}

/* Note the first build of key (takes key): its entry, or NULL when the cache is full or
 * memory is short (the key then counts as new next time too). */
static pc_entry *pc_put(tt__srun *R, int64_t *key, size_t nkey, uint64_t h)
{
    pcache *c = R->pcache;
    if (!c && !(c = R->pcache = calloc(1, sizeof *c))) goto drop;
    if (c->bytes + nkey * sizeof *key > PCACHE_MAX_BYTES || c->n >= INT32_MAX / 2) goto drop;
    if (2 * (c->n + 1) > c->nslot) {
        size_t ns = c->nslot ? c->nslot * 2 : 64;
        int32_t *sl = calloc(ns, sizeof *sl);
        if (!sl) goto drop;
        for (size_t i = 0; i < c->n; i++) {
            size_t j = c->e[i].hash & (ns - 1);
            while (sl[j]) j = (j + 1) & (ns - 1);
            sl[j] = (int32_t)(i + 1);
        }
        free(c->slot);
        c->slot = sl;
        c->nslot = ns;
    }
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 32;
        pc_entry *ne = realloc(c->e, nc * sizeof *ne);
        if (!ne) goto drop;
        c->e = ne;
        c->cap = nc;
    }
    pc_entry *e = &c->e[c->n];
    memset(e, 0, sizeof *e);
    e->hash = h;
    e->key = key;
    e->nkey = nkey;
    size_t j = h & (c->nslot - 1);
    while (c->slot[j]) j = (j + 1) & (c->nslot - 1);
    c->slot[j] = (int32_t)(++c->n);
    c->bytes += nkey * sizeof *key;
    return e;
drop:
    free(key);
    return NULL;
}

/* tt__sim_build() through the cache. */
static tt_rc build_cached(tt__srun *R, const int64_t *gp, size_t ngp,
                          tt__sprog progs[TT__AG__COUNT])
{
    int64_t *key = NULL;
    size_t nkey = tt__sim_build_key(&R->s, gp, ngp, &key);
    uint64_t h = nkey ? tt__sim_fnv(key, nkey) : 0;
    pc_entry *e = nkey ? pc_find(R->pcache, key, nkey, h) : NULL;
    int marks = R->s.mark_mode != TT__MK_NONE;
    if (e && e->kept) {
        free(key);
        for (int r = 0; r < TT__AG__COUNT; r++)
            if (prog_append(&progs[r], &e->prog[r], marks)) return TT_ENOMEM;
        return TT_OK;
    }
    tt_rc rc = tt__sim_build(&R->s, gp, ngp, progs, R->reason, R->rcap);
    if (!rc && nkey && !e) {
        e = pc_put(R, key, nkey, h);
        key = NULL;
        if (e && progs[TT__AG_CUBE].n + progs[TT__AG_VEC].n > PCACHE_FIRST_INSTS) e = NULL;
    }
    if (!rc && e) pc_keep(R, e, progs);
    free(key);
    return rc;
}

/* Build and simulate the groups of a wave once with the truncation in force. */
tt_rc tt__sim_groups(tt__srun *R, const tt__swgroup *wg, size_t ng, size_t rep, int traced,
                        tt__swave *out)
{
    /* the programs' arrays are kept between waves (R->pool) and refilled */
    if (ng > R->npool) {
        tt__sgroup *np = realloc(R->pool, ng * sizeof *np);
        if (!np) {
            snprintf(R->reason, R->rcap, "out of memory");
            return TT_ENOMEM;
        }
        memset(np + R->npool, 0, (ng - R->npool) * sizeof *np);
        R->pool = np;
        R->npool = ng;
    }
    tt__sgroup *g = R->pool;
    tt_rc rc = TT_OK;
    int64_t budget = R->max_events - R->events;   /* a longer program could never finish */
    if (budget > TT_SIM_MAX_PROGRAM_INSTS) budget = TT_SIM_MAX_PROGRAM_INSTS;
    R->s.max_insts = budget > 0 ? budget : 1;
    for (size_t i = 0; i < ng; i++) {
        for (int r = 0; r < TT__AG__COUNT; r++)
            g[i].prog[r].n = g[i].prog[r].ndeps = 0, g[i].prog[r].nmk = 0;
        int64_t *gp = NULL;
        int64_t n = lblock_points(R, wg[i].first, &gp);
        if (n < 0) { rc = TT_ENOMEM; break; }
        rc = build_cached(R, gp, (size_t)n, g[i].prog);
        free(gp);
        if (rc) break;
        g[i].weight = (double)wg[i].count;
        g[i].traced = traced && i == rep;
        g[i].marked = R->mark_group == TT__MARK_ALL || i == R->mark_group;
    }
    if (!rc && R->s.cancel && R->s.cancel(R->s.cancel_ctx)) {
        snprintf(R->reason, R->rcap, "cancelled");
        rc = TT_ECANCELLED;
    }
    if (!rc) {
        int64_t left = R->max_events - R->events;
        rc = tt__sim_wave(&R->s, g, ng, rep, left > 0 ? left : 1, out, R->reason, R->rcap);
        if (rc == TT_ELIMIT)
            snprintf(R->reason, R->rcap, "more than %lld simulation events (max_events)",
                     (long long)R->max_events);
        if (!rc) R->events += out->events;
    }
    if (rc == TT_ENOMEM) snprintf(R->reason, R->rcap, "out of memory");
    return rc;
}

static void add_trace(tt__srun *R, const tt__swave *w, double t0)
{
    if (!w->ntrace || R->trace_n >= TT_SIM_MAX_TRACE_EVENTS) return;
    size_t n = w->ntrace;
    if (R->trace_n + n > TT_SIM_MAX_TRACE_EVENTS) n = TT_SIM_MAX_TRACE_EVENTS - R->trace_n;
    tt__sim_trace_add(&R->tb, &R->s, R->o->trace_core, w->trace, n, t0);
    R->trace_n += n;
}

static tt_rc run_waves(tt__srun *R, tt_sim_result *res)
{
    int64_t C = R->cores;
    int64_t nw = (R->nlog + C - 1) / C;
    int64_t repcore = R->o->trace_core >= 0 ? R->o->trace_core : 0;
    int tracing = R->o->trace_core >= 0;
    tt__swgroup *wg = malloc((size_t)C * sizeof *wg);
    int64_t *key = malloc(((size_t)C * 2 + 2) * sizeof *key);
    if (!wg || !key) {
        free(wg);
        free(key);
        return TT_ENOMEM;
    }
    tt_rc rc = TT_OK;
    double t = 0;
    double busy[TT__AG__COUNT][TT_UNIT__COUNT] = {{0}};
    int64_t full = R->nlog / C;
    for (int64_t w = 0; w < nw; w++) {
        int64_t b0 = w * C, nb = R->nlog - b0 < C ? R->nlog - b0 : C;
        /* identical blocks: the remaining full waves are all alike, account for them at once */
        int64_t mult = (!R->lsig && !R->persistent && w < full) ? full - w : 1;
        size_t ng = 0, rep = (size_t)-1;
        for (int64_t c = 0; c < nb; c++) {
            int64_t id = lsig_of(R, b0 + c);
            size_t gi = 0;
            while (gi < ng && wg[gi].id != id) gi++;
            if (gi == ng) wg[ng++] = (tt__swgroup){id, 0, b0 + c};
            wg[gi].count++;
            if (c == repcore) rep = gi;
        }
        size_t nk = 0;
        for (size_t i = 0; i < ng; i++) {
            key[nk++] = wg[i].id;
            key[nk++] = wg[i].count;
        }
        key[nk++] = (int64_t)rep;
        key[nk++] = tracing;
        uint64_t h = tt__sim_fnv(key, nk);
        memo *m = NULL;
        for (size_t i = 0; i < R->nmemo && !m; i++)
            if (R->memo[i].hash == h && R->memo[i].nkey == nk &&
                memcmp(R->memo[i].key, key, nk * sizeof *key) == 0)
                m = &R->memo[i];
        if (!m) {
            if (R->nmemo == R->capmemo) {
                size_t nc = R->capmemo ? R->capmemo * 2 : 8;
                memo *nm = realloc(R->memo, nc * sizeof *nm);
                if (!nm) { rc = TT_ENOMEM; break; }
                R->memo = nm;
                R->capmemo = nc;
            }
            m = &R->memo[R->nmemo];
            memset(m, 0, sizeof *m);
            m->key = malloc(nk * sizeof *key);
            if (!m->key) { rc = TT_ENOMEM; break; }
            memcpy(m->key, key, nk * sizeof *key);
            m->nkey = nk;
            m->hash = h;
            rc = tt__sim_wave_short(R, wg, ng, rep == (size_t)-1 ? (size_t)-1 : rep, tracing && rep != (size_t)-1, &m->w);
            if (rc) { free(m->key); break; }
            R->nmemo++;
            res->waves_simulated++;
        }
        double dm = (double)mult;
        if (rep != (size_t)-1) {
            for (int a = 0; a < TT__AG__COUNT; a++)
                for (int u = 0; u < TT_UNIT__COUNT; u++) busy[a][u] += dm * m->w.busy[a][u];
            for (int k = 0; k < TT_STALL__COUNT; k++) res->stall_cycles[k] += dm * m->w.stall[k];
            for (int64_t j = 0; tracing && j < mult && R->trace_n < TT_SIM_MAX_TRACE_EVENTS; j++)
                add_trace(R, &m->w, t + (double)j * m->w.cycles);
        }
        t += dm * m->w.cycles;
        w += mult - 1;
    }
    free(wg);
    free(key);
    res->waves = nw;
    res->cycles = t;
    for (int u = 0; u < TT_UNIT__COUNT; u++) {
        double b = busy[TT__AG_CUBE][u] > busy[TT__AG_VEC][u] ? busy[TT__AG_CUBE][u] : busy[TT__AG_VEC][u];
        res->busy_cycles[u] = b;
        res->util[u] = t > 0 ? b / t : 0;
    }
    return rc;
}

static tt_rc finish(tt_sim_result *out, tt_rc rc)
{
    out->rc = rc;
    return rc;
}

tt_rc tt_sim_run(const tt_template *t, const tt_target *tgt, int64_t *slots,
                 const tt_sim_opts *opts, tt_sim_result *out)
{
    if (!out) return TT_EINVAL;
    memset(out, 0, sizeof *out);
    if (!t || !tgt || !slots) {
        snprintf(out->reason, sizeof out->reason, "missing template, target or slots");
        return finish(out, TT_EINVAL);
    }
    if (!t->kernel) {
        snprintf(out->reason, sizeof out->reason,
                 "template \"%s\" has no kernel: only replay and cmd backends apply", t->name);
        return finish(out, TT_EUNSUPPORTED);
    }
    tt_sim_opts defo = {.trace_core = -1};
    if (!opts) opts = &defo;
    /* Refuse what the space refuses, with its reason. */
    tt_caps caps;
    tt_target_caps(tgt, &caps);
    tt_space *sp = NULL;
    tt_errinfo err;
    tt_errinfo_clear(&err);
    tt_rc rc = tt_space_new(t, slots, &caps, &sp, &err);
    if (!rc) rc = tt_space_check(sp, slots, &err);
    tt_space_free(sp);
    if (rc) {
        const char *why = err.msg[0] ? err.msg : tt_strerror(rc);
        size_t len = strlen(why);
        if (len >= sizeof out->reason) len = sizeof out->reason - 1;
        memcpy(out->reason, why, len);
        out->reason[len] = '\0';
        return finish(out, rc);
    }
    tt__srun R;
    memset(&R, 0, sizeof R);
    R.o = opts;
    R.reason = out->reason;
    R.rcap = sizeof out->reason;
    R.max_events = opts->max_events > 0 ? opts->max_events : TT_SIM_DEFAULT_MAX_EVENTS;
    R.s.t = t;
    R.s.tgt = tgt;
    R.s.slots = slots;
    R.s.cancel = opts->cancel;
    R.s.cancel_ctx = opts->cancel_ctx;
    R.s.scratch = tt__sim_scratch_new();
    R.mark_group = (size_t)-1;
    if ((rc = tt__sim_prepare(&R.s, out->reason, sizeof out->reason))) goto done;
    R.cores = tgt->cube_cores > 0 ? tgt->cube_cores : tgt->vector_cores / 2;
    if (R.cores < 1) {
        snprintf(out->reason, sizeof out->reason, "target %s has no cores", tgt->name);
        rc = TT_ETARGET;
        goto done;
    }
    if (opts->trace_core >= R.cores) {
        snprintf(out->reason, sizeof out->reason, "trace_core %d is not a core of %s (0..%lld)",
                 opts->trace_core, tgt->name, (long long)R.cores - 1);
        rc = TT_EINVAL;
        goto done;
    }
    R.nlog = R.s.nblocks;
    if (t->kernel->persistent) {
        int64_t p = 0;
        if ((rc = tt_expr_eval(t->kernel->persistent, slots, &p))) {
            snprintf(out->reason, sizeof out->reason, "kernel.persistent: %s", tt_strerror(rc));
            goto done;
        }
        /* < 1: one block per grid point (a core_num param whose 0 means "the grid");
         * p >= blocks launches one block per grid point too */
        if (p >= 1 && p < R.s.nblocks) {
            R.persistent = p;
            R.nlog = p;
        }
    }
    if ((rc = compute_sigs(&R))) goto done;
    int tracing = opts->trace_core >= 0;
    if (tracing) {
        tt__sim_trace_meta(&R.tb, opts->trace_core, R.s.has_side[TT__AG_CUBE],
                           R.s.has_side[TT__AG_VEC]);
    }
    out->blocks = R.s.nblocks;
    out->hbm_read_bytes = R.s.hbm_read;
    rc = run_waves(&R, out);
    if (rc) goto done;
    if (tracing) {
        tt__sbuf_printf(&R.tb, "\n]\n");
        if (R.tb.oom) { rc = TT_ENOMEM; snprintf(out->reason, sizeof out->reason, "out of memory"); goto done; }
        out->trace_json = R.tb.p;
        R.tb.p = NULL;
    }
    out->events = R.events;
    out->extrapolated = R.extrapolated;
    out->time_us = tt_target_us(tgt, out->cycles) + tgt->launch_us +
                   (tt_kernel_launch_mix(t->kernel, slots) ? tgt->mix_launch_extra_us : 0);
done:
    for (size_t i = 0; i < R.nmemo; i++) {
        free(R.memo[i].key);
        tt__swave_free(&R.memo[i].w);
    }
    free(R.memo);
    for (size_t i = 0; i < R.nshapes; i++) {
        free(R.shapes[i].key);
        for (int a = 0; a < R.shapes[i].n; a++) tt__swave_free(&R.shapes[i].w[a]);
        tt__swave_free(&R.shapes[i].lw);
    }
    free(R.shapes);
    groups_free(R.pool, R.npool);
    pcache_free(R.pcache);
    free(R.lsig);
    free(R.tb.p);
    tt__sim_close(&R.s);
    if (rc) {   /* no partial figures: only the reason survives */
        char why[sizeof out->reason];
        memcpy(why, out->reason, sizeof why);
        free(out->trace_json);
        memset(out, 0, sizeof *out);
        memcpy(out->reason, why, sizeof why);
    }
    return finish(out, rc);
}

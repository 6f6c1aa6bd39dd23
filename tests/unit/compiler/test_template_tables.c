/* SPDX-License-Identifier: MIT
 * test_template_tables.c - template parser on tables and the built-ins: the bad-template table
 * (tests/data/templates/bad) and the valid one, every MIX op, the built-in templates (gemm's
 * IR and rendered source, flash attention's causal trip), the hash and the schema agreeing
 * with the parser.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "render.h"
#include "template.h"
#include "tt_test.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names (without ".json") of the *.json files of a source dir, sorted; returns the count. */
static size_t list_json(const char *rel, char ***out)
{
    char *dir = tt_test_src(rel);
    DIR *d = opendir(dir);
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            v = realloc(v, cap * sizeof *v);
        }
        v[n++] = strndup(de->d_name, len - 5);
    }
    if (d) closedir(d);
    free(dir);
    if (n) qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

/* ---- the bad-template table --------------------------------------------------------------- */

/* Each bad/NAME.json has bad/NAME.expect: line 1 the API error code, line 2 the exact JSON
 * path, line 3 a substring of the message. */
static void test_bad_table(void)
{
    char **names;
    size_t n = list_json("tests/data/templates/bad", &names), checked = 0;
    CU_ASSERT(n >= 25);
    for (size_t i = 0; i < n; i++) {
        char rel[512];
        snprintf(rel, sizeof rel, "tests/data/templates/bad/%s.expect", names[i]);
        char *ep = tt_test_src(rel);
        char *exp = tt_test_read_file(ep, NULL);
        free(ep);
        CU_ASSERT_PTR_NOT_NULL(exp);
        if (!exp) {
            fprintf(stderr, "bad/%s: no .expect file\n", names[i]);
            free(names[i]);
            continue;
        }
        char *l1 = exp, *l2 = strchr(l1, '\n');
        if (l2) *l2++ = '\0';
        char *l3 = l2 ? strchr(l2, '\n') : NULL;
        if (l3) *l3++ = '\0';
        char *end = l3 ? strchr(l3, '\n') : NULL;
        if (end) *end = '\0';
        CU_ASSERT(l2 && l3);
        snprintf(rel, sizeof rel, "tests/data/templates/bad/%s.json", names[i]);
        char *path = tt_test_src(rel);
        tt_template *t = NULL;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_parse_file(path, &t, &e);
        int ok = rc != TT_OK && t == NULL && l2 && l3 && strcmp(tt_rc_code(rc), l1) == 0 &&
                 strcmp(e.path, l2) == 0 && strstr(e.msg, l3) != NULL && e.rc == rc;
        if (!ok)
            fprintf(stderr, "bad/%s: want %s [%s] \"%s\", got %s [%s] \"%s\"\n", names[i], l1,
                    l2 ? l2 : "", l3 ? l3 : "", tt_rc_code(rc), e.path, e.msg);
        CU_ASSERT(ok);
        checked += ok;
        tt_tmpl_free(t);
        free(path);
        free(exp);
        free(names[i]);
    }
    free(names);
    CU_ASSERT_EQUAL(checked, n);
}

/* Every file of valid/ parses (they are the bases the bad cases are derived from). */
static void test_valid_table(void)
{
    char **names;
    size_t n = list_json("tests/data/templates/valid", &names);
    CU_ASSERT(n >= 2);
    for (size_t i = 0; i < n; i++) {
        char rel[512];
        snprintf(rel, sizeof rel, "tests/data/templates/valid/%s.json", names[i]);
        tt_template *t = tt_test_load_template(rel);
        CU_ASSERT_PTR_NOT_NULL(t);
        CU_ASSERT(t && t->kernel && t->kernel->nbody > 0);
        tt_tmpl_free(t);
        free(names[i]);
    }
    free(names);
}

/* Sides, units and defaults over every op kind (valid/mix_all_ops.json). */
static void test_mix_all_ops(void)
{
    tt_template *t = tt_test_load_template("tests/data/templates/valid/mix_all_ops.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    const tt_kernel *k = t->kernel;
    CU_ASSERT_PTR_NOT_NULL(k->persistent);
    CU_ASSERT_STRING_EQUAL(t->source_script, "python3 run.py");
    CU_ASSERT_PTR_NULL(t->source_file);
    CU_ASSERT(t->inputs[0].has_default && t->inputs[0].def == 64);
    CU_ASSERT_EQUAL(t->inputs[1].ndtypes, TT_DT__COUNT);
    CU_ASSERT_EQUAL_FATAL(k->nbody, 5);
    CU_ASSERT(k->body[0].kind == TT_OP_SYNC && k->body[0].u.sync.kind == TT_SYNC_BARRIER);
    CU_ASSERT_EQUAL(k->body[0].side, TT_SIDE_CUBE);
    CU_ASSERT_EQUAL(k->body[1].u.copy.path, TT_PATH_GM_L0A);
    CU_ASSERT_EQUAL(k->body[2].u.copy.path, TT_PATH_GM_L0B);
    CU_ASSERT_EQUAL(k->body[2].u.copy.nalong, 0);
    const tt_op *l = &k->body[3];
    CU_ASSERT_EQUAL_FATAL(l->u.loop.nbody, 14);
    CU_ASSERT_EQUAL(l->side, TT_SIDE_CUBE);
    const tt_op *b = l->u.loop.body;
    CU_ASSERT_EQUAL(b[0].u.copy.nd2nz, 0);
    CU_ASSERT(b[3].kind == TT_OP_MMA && b[3].u.mma.init == 1);
    CU_ASSERT_EQUAL(b[4].u.copy.path, TT_PATH_L0C_L1);
    CU_ASSERT_EQUAL(tt_path_unit(b[4].u.copy.path), TT_UNIT_FIX);
    CU_ASSERT_EQUAL(b[5].u.copy.path, TT_PATH_L1_GM);
    CU_ASSERT_EQUAL(tt_path_unit(b[5].u.copy.path), TT_UNIT_MTE3);
    CU_ASSERT(b[6].u.sync.kind == TT_SYNC_CROSS && b[6].u.sync.flag == 10);
    CU_ASSERT(b[6].u.sync.from == TT_SIDE_CUBE && b[6].u.sync.to == TT_SIDE_VECTOR);
    CU_ASSERT_EQUAL(b[7].side, TT_SIDE_VECTOR);                 /* GM->UB */
    CU_ASSERT_EQUAL(b[8].side, TT_SIDE_VECTOR);                 /* barrier after a vector op */
    CU_ASSERT_EQUAL(b[9].u.copy.path, TT_PATH_UB_UB);
    CU_ASSERT_EQUAL(tt_path_unit(b[9].u.copy.path), TT_UNIT_V);
    CU_ASSERT(b[10].kind == TT_OP_VEC && b[10].u.vec.cls == TT_V_GATHER && b[10].u.vec.nin == 2);
    CU_ASSERT_PTR_NOT_NULL(b[10].u.vec.elems);
    CU_ASSERT_EQUAL(b[11].side, TT_SIDE_CUBE);                  /* explicit side */
    CU_ASSERT_EQUAL(b[13].side, TT_SIDE_VECTOR);                /* cross sync: its "from" */
    CU_ASSERT_EQUAL(b[13].u.sync.flag, 0);
    CU_ASSERT_EQUAL(k->body[4].u.copy.path, TT_PATH_UB_GM);
    tt_tmpl_free(t);
}

/* ---- built-in templates ------------------------------------------------------------------- */

static int is_hex16(const char *s)
{
    if (strlen(s) != 16) return 0;
    for (int i = 0; i < 16; i++)
        if (!strchr("0123456789abcdef", s[i])) return 0;
    return 1;
}

static void test_builtins_parse(void)
{
    static const char *const required[] = {"gemm",    "batch_gemm", "flash_attn_fwd",
                                           "rms_norm", "softmax",    "elementwise"};
    char **names;
    size_t n = list_json("templates", &names);
    CU_ASSERT(n >= 6);
    for (size_t r = 0; r < 6; r++) {
        int found = 0;
        for (size_t i = 0; i < n; i++) found |= strcmp(names[i], required[r]) == 0;
        CU_ASSERT(found);
    }
    for (size_t i = 0; i < n; i++) {
        char rel[512];
        snprintf(rel, sizeof rel, "templates/%s.json", names[i]);
        tt_template *t = tt_test_load_template(rel);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(t->name, names[i]);
        CU_ASSERT(strlen(t->description) > 20);
        CU_ASSERT(is_hex16(t->hash));
        CU_ASSERT_PTR_NOT_NULL(t->kernel);
        CU_ASSERT(t->nparams >= 2);   /* rope has two (rows_per_task, stages), issue 11 */
        CU_ASSERT(t->kernel && t->nslots == t->ninputs + t->nparams + t->nlets + t->kernel->ngrid);
        for (size_t s = 0; s < t->nslots; s++)
            CU_ASSERT_EQUAL(tt_tmpl_slot_of(t, tt_tmpl_slot_name(t, s)), (int)s);
        tt_tmpl_free(t);
        free(names[i]);
    }
    free(names);
}

static void test_gemm_ir(void)
{
    tt_template *t = tt_test_load_template("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const char *const pn[] = {"block_M", "block_N", "block_K", "K_L1", "S1", "S2",
                                     "core_num", "swizzle"};
    CU_ASSERT_EQUAL_FATAL(t->nparams, 8);
    for (int i = 0; i < 8; i++) CU_ASSERT_STRING_EQUAL(t->params[i].name, pn[i]);
    CU_ASSERT(!t->params[0].has_default);
    CU_ASSERT(t->params[6].has_default && t->params[6].def == 0);   /* core_num: the grid */
    CU_ASSERT(t->params[7].has_default && t->params[7].def == 1);   /* swizzle: none */
    CU_ASSERT_PTR_NOT_NULL(t->kernel->persistent);
    CU_ASSERT_PTR_NOT_NULL(t->kernel->swizzle);
    CU_ASSERT_EQUAL(t->params[2].nvalues, 5);                 /* pow2 16..256 */
    CU_ASSERT_EQUAL(t->params[2].values[4], 256);
    CU_ASSERT_EQUAL(t->params[4].nvalues, 4);                 /* range 1..4 */
    CU_ASSERT_EQUAL(t->params[4].values[3], 4);
    CU_ASSERT_EQUAL(t->inputs[4].kind, TT_INPUT_DTYPE);       /* out_dtype, default float16 */
    CU_ASSERT(t->inputs[4].has_default && t->inputs[4].def == TT_DT_FLOAT16);
    CU_ASSERT_EQUAL(t->tensors[2].dtype.slot, 4);
    CU_ASSERT(t->tensors[2].output && !t->tensors[0].output);
    CU_ASSERT_EQUAL(t->buffers[4].dtype.slot, -1);
    CU_ASSERT_EQUAL(t->buffers[4].dtype.lit, TT_DT_FLOAT32);
    CU_ASSERT_EQUAL(t->buffers[2].scope, TT_SCOPE_L0A);
    const tt_kernel *k = t->kernel;
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->cores, TT_CORES_CUBE);
    CU_ASSERT_EQUAL(k->ngrid, 2);
    CU_ASSERT_STRING_EQUAL(k->grid[1].name, "by");
    CU_ASSERT_EQUAL(k->grid[1].slot, tt_tmpl_slot_of(t, "by"));
    CU_ASSERT_EQUAL(k->nloops, 2);
    CU_ASSERT_EQUAL_FATAL(k->nbody, 2);
    const tt_op *loop = &k->body[0];
    CU_ASSERT_EQUAL_FATAL(loop->kind, TT_OP_FOR);
    CU_ASSERT_STRING_EQUAL(loop->u.loop.var, "k");
    CU_ASSERT_EQUAL(loop->u.loop.id, 0);
    CU_ASSERT_EQUAL_FATAL(loop->u.loop.nbody, 3);
    const tt_op *ca = &loop->u.loop.body[0];
    CU_ASSERT_EQUAL(ca->kind, TT_OP_COPY);
    CU_ASSERT_EQUAL(ca->u.copy.path, TT_PATH_GM_L1);
    CU_ASSERT_EQUAL(tt_path_unit(ca->u.copy.path), TT_UNIT_MTE2);
    CU_ASSERT_EQUAL(ca->u.copy.nd2nz, 1);
    CU_ASSERT_EQUAL_FATAL(ca->u.copy.nalong, 2);
    CU_ASSERT(ca->u.copy.along[0].is_loop == 0 && ca->u.copy.along[0].index == 0);
    CU_ASSERT(ca->u.copy.along[1].is_loop == 1 && ca->u.copy.along[1].index == 0);
    CU_ASSERT_STRING_EQUAL(ca->path, "kernel.body[0].body[0]");
    const tt_op *inner = &loop->u.loop.body[2];
    CU_ASSERT_EQUAL_FATAL(inner->kind, TT_OP_FOR);
    CU_ASSERT_EQUAL(inner->u.loop.id, 1);
    const tt_op *mma = &inner->u.loop.body[2];
    CU_ASSERT_EQUAL(mma->kind, TT_OP_MMA);
    CU_ASSERT(mma->u.mma.a == 2 && mma->u.mma.b == 3 && mma->u.mma.c == 4);
    CU_ASSERT_EQUAL(inner->u.loop.body[0].u.copy.path, TT_PATH_L1_L0A);
    CU_ASSERT_EQUAL(inner->u.loop.body[0].u.copy.nd2nz, -1);
    CU_ASSERT_EQUAL(k->body[1].u.copy.path, TT_PATH_L0C_GM);
    CU_ASSERT_EQUAL(tt_path_unit(k->body[1].u.copy.path), TT_UNIT_FIX);
    CU_ASSERT_STRING_EQUAL(t->source_file, "gemm.py.in");
    CU_ASSERT(t->source_text && strstr(t->source_text, "{{block_M}}"));
    tt_tmpl_free(t);
}

/* gemm.py.in renders for a config: every placeholder names an input or a param. */
static void test_gemm_source_renders(void)
{
    tt_template *t = tt_test_load_template("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t->source_text);
    int64_t s[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, "M=1536,N=1536,K=1536,out_dtype=float32", s, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, "block_M=128,block_N=256,block_K=64,K_L1=256,"
                                                  "S1=2,S2=2", s, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_eval_lets(t, s, &e), TT_OK);
    char *out = NULL;
    tt_rc rc = tt_render(t, s, t->source_text, strlen(t->source_text), &out, NULL, &e);
    if (rc) fprintf(stderr, "render: %s [%s] %s\n", tt_rc_code(rc), e.path, e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, TT_OK);
    CU_ASSERT_PTR_NULL(strstr(out, "{{"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "block_M, block_N, block_K, K_L1 = 128, 256, 64, 256"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "dtype, out_dtype, accum_dtype = \"float16\", \"float32\""));
    free(out);
    tt_tmpl_free(t);
}

/* The causal trip count of flash attention reads the query block's grid slot. */
static void test_flash_attn_causal_trip(void)
{
    tt_template *t = tt_test_load_template("templates/flash_attn_fwd.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->kernel->cores, TT_CORES_MIX);
    int64_t s[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, "B=1,H=32,H_kv=8,S_q=4096,S_kv=4096,D=128,"
                                                   "causal=1,dtype=float16", s, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, "block_M=128,block_N=128,stages=2", s, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_eval_lets(t, s, &e), TT_OK);
    const tt_op *loop = NULL;
    for (size_t i = 0; i < t->kernel->nbody; i++)
        if (t->kernel->body[i].kind == TT_OP_FOR) loop = &t->kernel->body[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(loop);
    s[tt_tmpl_slot_of(t, "bx")] = 3;
    int64_t trip = 0;
    CU_ASSERT_EQUAL(tt_expr_eval(loop->u.loop.trip, s, &trip), TT_OK);
    CU_ASSERT_EQUAL(trip, 4);           /* ceildiv(min(4096, 4 * 128), 128) */
    s[tt_tmpl_slot_of(t, "causal")] = 0;
    CU_ASSERT_EQUAL(tt_expr_eval(loop->u.loop.trip, s, &trip), TT_OK);
    CU_ASSERT_EQUAL(trip, 32);          /* ceildiv(4096, 128) */
    /* both sides appear, and cross syncs go both ways */
    int sides[2] = {0, 0}, cross = 0;
    for (size_t i = 0; i < loop->u.loop.nbody; i++) {
        sides[loop->u.loop.body[i].side]++;
        cross += loop->u.loop.body[i].kind == TT_OP_SYNC;
    }
    CU_ASSERT(sides[TT_SIDE_CUBE] > 0 && sides[TT_SIDE_VECTOR] > 0);
    CU_ASSERT_EQUAL(cross, 3);
    tt_tmpl_free(t);
}

/* ---- hash ------------------------------------------------------------------------------------ */

static void test_hash(void)
{
    json_t *doc = tt_test_load_json("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    tt_template *a = NULL, *b = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc, NULL, &a, &e), TT_OK);
    /* independent FNV-1a 64 of the canonical text */
    char *s = tt_json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) h = (h ^ *c) * 0x100000001b3ULL;
    free(s);
    char want[17];
    snprintf(want, sizeof want, "%016llx", h);
    CU_ASSERT_STRING_EQUAL(a->hash, want);
    CU_ASSERT_PTR_NULL(a->source_text);          /* no base_dir: the file is not read */
    /* the same document with its keys in another order: same hash */
    char *pretty = tt_json_dumps(doc, JSON_INDENT(3) | JSON_SORT_KEYS);
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(pretty, strlen(pretty), NULL, &b, &e), TT_OK);
    free(pretty);
    CU_ASSERT(b && strcmp(a->hash, b->hash) == 0);
    tt_tmpl_free(b);
    /* any change of content changes it */
    json_object_set_new(doc, "version", json_string("2"));
    CU_ASSERT_EQUAL(tt_tmpl_parse_json(doc, NULL, &b, &e), TT_OK);
    CU_ASSERT(b && strcmp(a->hash, b->hash) != 0);
    tt_tmpl_free(b);
    tt_tmpl_free(a);
    json_decref(doc);
}

/* The JSON Schema and the parser accept the same keys: every property the schema lists at the
 * top level, in a tensor, a buffer and the kernel is known to the parser, and the parser
 * knows no key that the schema lacks (a made-up key is refused by both). */
static void test_schema_agrees(void)
{
    char *p = tt_test_src("schema/template.schema.json");
    json_t *schema = json_load_file(p, 0, NULL);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(schema);
    p = tt_test_src("tests/data/templates/valid/base.json");
    json_t *base = json_load_file(p, 0, NULL);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(base);
    json_t *props = json_object_get(schema, "properties");
    static const char *const where[][2] = {
        {"", NULL}, {"tensors", "A"}, {"buffers", "a_UB"}, {"kernel", NULL}};
    /* the schema objects describing the top level, a tensor, a buffer and the kernel */
    const json_t *cont[4] = {
        schema, json_object_get(json_object_get(props, "tensors"), "additionalProperties"),
        json_object_get(json_object_get(props, "buffers"), "additionalProperties"),
        json_object_get(props, "kernel")};
    size_t checked = 0;
    for (int w = 0; w < 4; w++) {
        const json_t *sub = json_object_get(cont[w], "properties");
        CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
        CU_ASSERT(json_is_false(json_object_get(cont[w], "additionalProperties")));
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)sub, k, v) {
            json_t *doc = json_deep_copy(base);
            json_t *obj = doc;
            if (where[w][0][0]) obj = json_object_get(obj, where[w][0]);
            if (where[w][1]) obj = json_object_get(obj, where[w][1]);
            if (!json_object_get(obj, k)) json_object_set_new(obj, k, json_integer(1));
            tt_template *t = NULL;
            tt_errinfo e;
            tt_errinfo_clear(&e);
            tt_tmpl_parse_json(doc, NULL, &t, &e);
            int ok = strstr(e.msg, "unknown key") == NULL && strstr(e.msg, "unknown top-level") == NULL;
            if (!ok) fprintf(stderr, "schema key %s.%s: parser says [%s] %s\n", where[w][0], k, e.path, e.msg);
            CU_ASSERT(ok);
            checked++;
            tt_tmpl_free(t);
            /* a key the schema lacks */
            json_object_set_new(obj, "zz_not_in_schema", json_integer(1));
            tt_errinfo_clear(&e);
            CU_ASSERT_NOT_EQUAL(tt_tmpl_parse_json(doc, NULL, &t, &e), TT_OK);
            CU_ASSERT(strstr(e.msg, "unknown") != NULL);
            json_decref(doc);
        }
    }
    CU_ASSERT(checked >= 12 + 4 + 4 + 4);
    json_decref(base);
    json_decref(schema);
}

static const tt_test_case tables_cases[] = {
    {"bad_table", test_bad_table},
    {"valid_table", test_valid_table},
    {"mix_all_ops", test_mix_all_ops},
    {"builtins_parse", test_builtins_parse},
    {"gemm_ir", test_gemm_ir},
    {"flash_attn_causal_trip", test_flash_attn_causal_trip},
    {"gemm_source_renders", test_gemm_source_renders},
    {"hash", test_hash},
    {"schema_agrees", test_schema_agrees},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"template_tables", NULL, NULL, tables_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

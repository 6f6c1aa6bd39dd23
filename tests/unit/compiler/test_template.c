/* SPDX-License-Identifier: MIT
 * test_template.c - template parser: the bad-template table (tests/data/templates/bad), the
 * built-in templates, the hash, hostile input, problems, configs, lets and geometry.
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

static tt_template *load(const char *rel)
{
    char *p = tt_test_src(rel);
    tt_template *t = NULL;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    tt_rc rc = tt_tmpl_parse_file(p, &t, &e);
    if (rc != TT_OK) fprintf(stderr, "%s: %s: %s: %s\n", rel, tt_rc_code(rc), e.path, e.msg);
    free(p);
    return t;
}

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
        tt_template *t = load(rel);
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
    tt_template *t = load("tests/data/templates/valid/mix_all_ops.json");
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
        tt_template *t = load(rel);
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
    tt_template *t = load("templates/gemm.json");
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
    tt_template *t = load("templates/gemm.json");
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
    tt_template *t = load("templates/flash_attn_fwd.json");
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

/* ---- hostile input --------------------------------------------------------------------------- */

static void test_truncated_prefixes(void)
{
    size_t len;
    char *p = tt_test_src("templates/gemm.json");
    char *text = tt_test_read_file(p, &len);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    size_t failed = 0;
    for (size_t n = 0; n < len; n++) {
        tt_template *t = NULL;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_parse_string(text, n, NULL, &t, &e);
        /* a prefix is either malformed JSON, or (cut in trailing whitespace) the template */
        if (rc != TT_OK) {
            failed++;
            CU_ASSERT(rc == TT_EJSON && t == NULL && strstr(e.msg, "line ") == e.msg);
        }
        tt_tmpl_free(t);
    }
    CU_ASSERT(failed >= len - 2);
    free(text);
}

/* Random byte flips of a template text: whatever the parser says, it says it cleanly. */
static void test_byte_flips(void)
{
    size_t len;
    char *p = tt_test_src("templates/flash_attn_fwd.json");
    char *text = tt_test_read_file(p, &len);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *m = malloc(len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    static const char pool[] = "{}[]\",:0123456789-+*/ abxyz_.\\\xff\x80";
    uint64_t x = 42;
    size_t errors = 0;
    for (int i = 0; i < 3000; i++) {
        memcpy(m, text, len);
        for (int f = 0; f < 1 + i % 4; f++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            m[(x >> 33) % len] = pool[(x >> 17) % (sizeof pool - 1)];
        }
        tt_template *t = NULL;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_parse_string(m, len, NULL, &t, &e);
        CU_ASSERT(rc == TT_OK || rc == TT_EJSON || rc == TT_ETEMPLATE || rc == TT_EEXPR);
        CU_ASSERT((rc == TT_OK) == (t != NULL));
        CU_ASSERT(rc == TT_OK || e.rc == rc);
        errors += rc != TT_OK;
        tt_tmpl_free(t);
    }
    CU_ASSERT(errors > 1500);
    free(m);
    free(text);
}

/* Replace every value of the document in turn by values of every other type: the parser
 * must answer with an error that names a path (or accept), never crash or leak. */
static size_t mutate_walk(json_t *root, json_t *node, size_t *accepted)
{
    static const char *const repl[] = {"true", "1.5", "\"x\"", "[]", "{}", "null", "-1",
                                       "[[[[1]]]]", "\"gm:\""};
    size_t n = 0;
    const char *k;
    json_t *v;
    void *tmp;
    if (json_is_object(node)) {
        json_object_foreach_safe(node, tmp, k, v) {
            json_incref(v);
            for (size_t r = 0; r < sizeof repl / sizeof repl[0]; r++) {
                json_object_set_new(node, k, json_loads(repl[r], JSON_DECODE_ANY, NULL));
                tt_template *t = NULL;
                tt_errinfo e;
                tt_errinfo_clear(&e);
                tt_rc rc = tt_tmpl_parse_json(root, NULL, &t, &e);
                CU_ASSERT(rc == TT_OK || rc == TT_ETEMPLATE || rc == TT_EEXPR);
                CU_ASSERT(rc == TT_OK || e.msg[0] != '\0');
                *accepted += rc == TT_OK;
                tt_tmpl_free(t);
                n++;
            }
            json_object_set_new(node, k, v);
            n += mutate_walk(root, v, accepted);
        }
    } else if (json_is_array(node)) {
        for (size_t i = 0; i < json_array_size(node); i++) {
            v = json_incref(json_array_get(node, i));
            for (size_t r = 0; r < sizeof repl / sizeof repl[0]; r++) {
                json_array_set_new(node, i, json_loads(repl[r], JSON_DECODE_ANY, NULL));
                tt_template *t = NULL;
                tt_errinfo e;
                tt_errinfo_clear(&e);
                tt_rc rc = tt_tmpl_parse_json(root, NULL, &t, &e);
                CU_ASSERT(rc == TT_OK || rc == TT_ETEMPLATE || rc == TT_EEXPR);
                *accepted += rc == TT_OK;
                tt_tmpl_free(t);
                n++;
            }
            json_array_set_new(node, i, v);
            n += mutate_walk(root, v, accepted);
        }
    }
    return n;
}

static void test_wrong_types_everywhere(void)
{
    char *p = tt_test_src("templates/flash_attn_fwd.json");
    json_t *doc = json_load_file(p, 0, NULL);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    size_t accepted = 0, n = mutate_walk(doc, doc, &accepted);
    CU_ASSERT(n > 1000);
    CU_ASSERT(accepted < n / 4);    /* most mutations must be rejected */
    /* the document is restored: it still parses */
    tt_template *t = NULL;
    CU_ASSERT_EQUAL(tt_tmpl_parse_json(doc, NULL, &t, NULL), TT_OK);
    tt_tmpl_free(t);
    json_decref(doc);
}

static void test_huge_deep_binary(void)
{
    tt_template *t = NULL;
    tt_errinfo e;
    /* 10 MB: refused before parsing */
    size_t big = 10u << 20;
    char *s = malloc(big + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    memset(s, ' ', big);
    s[big] = '\0';
    s[0] = '{';
    s[big - 1] = '}';
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(s, big, NULL, &t, &e), TT_ETOOBIG);
    CU_ASSERT_PTR_NULL(t);
    /* 3 MB description: accepted */
    size_t mid = 3u << 20;
    const char *head = "{\"tiletune\":1,\"name\":\"big\",\"description\":\"";
    memcpy(s, head, strlen(head));
    memset(s + strlen(head), 'x', mid);
    strcpy(s + strlen(head) + mid, "\"}");
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(s, strlen(s), NULL, &t, &e), TT_OK);
    CU_ASSERT(t && strlen(t->description) == mid && t->kernel == NULL && t->nslots == 0);
    tt_tmpl_free(t);
    t = NULL;
    /* 200000 nested arrays: jansson's depth limit turns it into malformed JSON */
    size_t depth = 200000;
    for (size_t i = 0; i < depth; i++) s[i] = '[';
    for (size_t i = 0; i < depth; i++) s[depth + i] = ']';
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(s, 2 * depth, NULL, &t, &e), TT_EJSON);
    CU_ASSERT(strstr(e.msg, "line 1 column") != NULL);
    /* deep nesting inside a valid template value */
    strcpy(s, "{\"tiletune\":1,\"name\":\"d\",\"let\":{\"x\":");
    size_t o = strlen(s);
    for (size_t i = 0; i < 1000; i++) s[o++] = '[';
    for (size_t i = 0; i < 1000; i++) s[o++] = ']';
    strcpy(s + o, "}}");
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(s, strlen(s), NULL, &t, &e), TT_ETEMPLATE);
    CU_ASSERT_STRING_EQUAL(e.path, "let.x");
    /* invalid UTF-8 on line 2 */
    const char *bin = "{\"tiletune\":1,\n\"name\":\"\xff\xfe\"}";
    CU_ASSERT_EQUAL(tt_tmpl_parse_string(bin, strlen(bin), NULL, &t, &e), TT_EJSON);
    CU_ASSERT(strstr(e.msg, "line 2") != NULL);
    /* embedded NUL */
    CU_ASSERT_EQUAL(tt_tmpl_parse_string("{\"name\":\"a\0b\"}", 14, NULL, &t, &e), TT_EJSON);
    CU_ASSERT_EQUAL(tt_tmpl_parse_file("/nonexistent/x.json", &t, &e), TT_EIO);
    CU_ASSERT_EQUAL(tt_tmpl_parse_json(NULL, NULL, &t, &e), TT_EINVAL);
    free(s);
}

/* ---- problems and configs -------------------------------------------------------------------- */

static void test_problem(void)
{
    tt_template *t = load("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t s[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    char key[256];
    CU_ASSERT_EQUAL(tt_tmpl_problem_parse(t, "M=4096, N=1024,K=8192,dtype=bf16", s, &e), TT_OK);
    size_t n = tt_tmpl_problem_key(t, s, key, sizeof key);
    CU_ASSERT_STRING_EQUAL(key, "M=4096,N=1024,K=8192,dtype=bfloat16,out_dtype=float16");
    CU_ASSERT_EQUAL(n, strlen(key));
    char small[8];
    CU_ASSERT_EQUAL(tt_tmpl_problem_key(t, s, small, sizeof small), n);
    CU_ASSERT(strlen(small) < sizeof small);
    /* JSON round trip */
    json_t *j = tt_tmpl_problem_json(t, s);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "dtype")), "bfloat16");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "K")), 8192);
    int64_t s2[TT_MAX_SLOTS] = {0};
    CU_ASSERT_EQUAL(tt_tmpl_problem_from_json(t, j, s2, &e), TT_OK);
    CU_ASSERT_EQUAL(memcmp(s, s2, t->ninputs * sizeof *s), 0);
    json_decref(j);
    static const struct {
        const char *kv, *path, *msg;
    } bad[] = {
        {"M=1,N=1", "problem.K", "missing"},
        {"M=1,N=1,K=1,Q=2", "problem.Q", "unknown input"},
        {"M=0,N=1,K=1", "problem.M", "outside [1, 1048576]"},
        {"M=abc,N=1,K=1", "problem.M", "not an integer"},
        {"M=1x,N=1,K=1", "problem.M", "not an integer"},
        {"M=99999999999999999999,N=1,K=1", "problem.M", "out of range"},
        {"M=1,N=1,K=1,dtype=float64", "problem.dtype", "unknown dtype"},
        {"M=1,N=1,K=1,dtype=float32", "problem.dtype", "not accepted"},
        {"M=1,M=2,N=1,K=1", "problem.M", "given twice"},
        {"M,N=1,K=1", "problem.M", "expected name=value"},
        {"M=,N=1,K=1", "problem.M", "empty value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_problem_parse(t, bad[i].kv, s, &e);
        int ok = rc == TT_EPROBLEM && strcmp(e.path, bad[i].path) == 0 && strstr(e.msg, bad[i].msg);
        if (!ok) fprintf(stderr, "problem \"%s\": got %s [%s] %s\n", bad[i].kv, tt_rc_code(rc), e.path, e.msg);
        CU_ASSERT(ok);
    }
    static const struct {
        const char *json, *path, *msg;
    } badj[] = {
        {"{\"M\":\"4096\",\"N\":1,\"K\":1}", "problem.M", "not an integer (got string)"},
        {"{\"M\":true,\"N\":1,\"K\":1}", "problem.M", "not an integer (got boolean)"},
        {"{\"M\":1,\"N\":1,\"K\":1,\"dtype\":1}", "problem.dtype", "expected a dtype name"},
        {"{\"M\":1,\"N\":1,\"K\":1,\"extra\":1}", "problem.extra", "unknown input"},
        {"{\"M\":1,\"N\":1}", "problem.K", "missing"},
        {"[1,2]", "problem", "expected an object"},
    };
    for (size_t i = 0; i < sizeof badj / sizeof badj[0]; i++) {
        json_t *o = json_loads(badj[i].json, 0, NULL);
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_problem_from_json(t, o, s, &e);
        int ok = rc == TT_EPROBLEM && strcmp(e.path, badj[i].path) == 0 && strstr(e.msg, badj[i].msg);
        if (!ok) fprintf(stderr, "problem %s: got %s [%s] %s\n", badj[i].json, tt_rc_code(rc), e.path, e.msg);
        CU_ASSERT(ok);
        json_decref(o);
    }
    tt_tmpl_free(t);
}

static uint64_t fnv_values(const int64_t *v, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) h = (h ^ (((uint64_t)v[i] >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
    return h;
}

/* The same template with its params declared in another order (here: reversed, as a stored
 * template is reloaded with sorted keys) gives every config the same key, hash and JSON. */
static void test_config_order_free(void)
{
    json_t *doc = tt_test_load_json("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    json_t *params = json_object_get(doc, "params"), *rev = json_object();
    const char *names[16];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(params, k, v) names[n++] = k;
    for (size_t i = n; i-- > 0;) json_object_set(rev, names[i], json_object_get(params, names[i]));
    json_t *doc2 = json_deep_copy(doc);
    json_object_set_new(doc2, "params", rev);
    tt_template *a = NULL, *b = NULL;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc, NULL, &a, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_json(doc2, NULL, &b, &e), TT_OK);
    CU_ASSERT_STRING_EQUAL(a->hash, b->hash);              /* one template ... */
    CU_ASSERT_STRING_NOT_EQUAL(a->params[0].name, b->params[0].name);   /* ... two orders */
    int64_t sa[TT_MAX_SLOTS] = {0}, sb[TT_MAX_SLOTS] = {0};
    const char *cfg = "block_M=64,block_N=128,block_K=32,K_L1=128,S1=3,S2=1";
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(a, cfg, sa, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(b, cfg, sb, &e), TT_OK);
    char ka[256], kb[256];
    tt_tmpl_config_key(a, sa, ka, sizeof ka);
    tt_tmpl_config_key(b, sb, kb, sizeof kb);
    CU_ASSERT_STRING_EQUAL(ka, kb);
    CU_ASSERT_EQUAL(tt_tmpl_config_hash(a, sa), tt_tmpl_config_hash(b, sb));
    json_t *ja = tt_tmpl_config_json(a, sa), *jb = tt_tmpl_config_json(b, sb);
    char *ta = json_dumps(ja, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *tb = json_dumps(jb, JSON_COMPACT | JSON_PRESERVE_ORDER);
    CU_ASSERT_STRING_EQUAL(ta, tb);                        /* member order too */
    free(ta);
    free(tb);
    json_decref(ja);
    json_decref(jb);
    tt_tmpl_free(a);
    tt_tmpl_free(b);
    json_decref(doc);
    json_decref(doc2);
}

static void test_config(void)
{
    tt_template *t = load("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t s[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    char key[256];
    /* core_num and swizzle are omitted: they take their defaults */
    const char *kv = "K_L1=256,S1=2,S2=2,block_K=64,block_M=128,block_N=256,core_num=0,swizzle=1";
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, "S2=2,S1=2,K_L1=256,block_K=64,block_N=256,"
                                                  "block_M=128", s, &e), TT_OK);
    tt_tmpl_config_key(t, s, key, sizeof key);
    CU_ASSERT_STRING_EQUAL(key, kv);                 /* names in byte order, whatever the input */
    CU_ASSERT_EQUAL(s[t->ninputs], 128);
    const int64_t canon[8] = {256, 2, 2, 64, 128, 256, 0, 1};   /* the values in that order */
    CU_ASSERT_EQUAL(tt_tmpl_config_hash(t, s), fnv_values(canon, 8));
    uint64_t h = tt_tmpl_config_hash(t, s);
    json_t *j = tt_tmpl_config_json(t, s);
    /* the text the runner stores: jansson's sorted compact dump, byte for byte */
    char *dumped = tt_json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    char text[256];
    size_t need = tt_tmpl_config_json_text(t, s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dumped);
    CU_ASSERT_STRING_EQUAL(text, dumped);
    CU_ASSERT_EQUAL(need, strlen(dumped));
    char small[12];   /* cut like snprintf: the needed length, a terminated prefix */
    CU_ASSERT_EQUAL(tt_tmpl_config_json_text(t, s, small, sizeof small), need);
    CU_ASSERT_EQUAL(strncmp(small, dumped, sizeof small - 1), 0);
    CU_ASSERT_EQUAL(small[sizeof small - 1], '\0');
    free(dumped);
    int64_t s2[TT_MAX_SLOTS] = {0};
    CU_ASSERT_EQUAL(tt_tmpl_config_from_json(t, j, s2, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_tmpl_config_hash(t, s2), h);
    json_decref(j);
    s2[t->ninputs + 5] = 1;
    CU_ASSERT(tt_tmpl_config_hash(t, s2) != h);
    static const struct {
        const char *kv, *path, *msg;
    } bad[] = {
        {"block_M=100,block_N=256,block_K=64,K_L1=256,S1=2,S2=2", "config.block_M", "not in the domain"},
        {"block_M=128,block_N=256,block_K=64,K_L1=256,S1=2", "config.S2", "missing"},
        {"block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=2,S3=1", "config.S3", "unknown param"},
        {"block_M=128,block_N=256,block_K=64,K_L1=256,S1=2,S2=two", "config.S2", "not an integer"},
        {"M=128", "config.M", "unknown param"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tt_errinfo_clear(&e);
        tt_rc rc = tt_tmpl_config_parse(t, bad[i].kv, s, &e);
        int ok = rc == TT_ECONFIG && strcmp(e.path, bad[i].path) == 0 && strstr(e.msg, bad[i].msg);
        if (!ok) fprintf(stderr, "config \"%s\": got %s [%s] %s\n", bad[i].kv, tt_rc_code(rc), e.path, e.msg);
        CU_ASSERT(ok);
    }
    json_t *o = json_loads("{\"block_M\":128,\"block_N\":256,\"block_K\":64,\"K_L1\":256,\"S1\":2,"
                           "\"S2\":true}", 0, NULL);
    CU_ASSERT_EQUAL(tt_tmpl_config_from_json(t, o, s, &e), TT_ECONFIG);
    CU_ASSERT_STRING_EQUAL(e.path, "config.S2");
    CU_ASSERT(strstr(e.msg, "got boolean") != NULL);
    json_decref(o);
    tt_tmpl_free(t);
}

/* ---- lets and geometry ------------------------------------------------------------------------ */

static void test_lets_geom(void)
{
    tt_template *t = load("templates/gemm.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int64_t s[TT_MAX_SLOTS] = {0};
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_problem_parse(t, "M=4000,N=4096,K=4096,out_dtype=float32", s, &e), TT_OK);
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_config_parse(t, "block_M=128,block_N=256,block_K=64,K_L1=256,"
                                                  "S1=3,S2=2", s, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_tmpl_eval_lets(t, s, &e), TT_OK);
    CU_ASSERT_EQUAL(s[tt_tmpl_slot_of(t, "m_num")], 32);      /* ceildiv(4000, 128) */
    CU_ASSERT_EQUAL(s[tt_tmpl_slot_of(t, "n_num")], 16);
    CU_ASSERT_EQUAL(s[tt_tmpl_slot_of(t, "kk_tiles")], 4);
    int64_t dims[TT_MAX_RANK], elems, copies;
    int esize;
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 0, s, dims, &elems, &esize, &copies), TT_OK);
    CU_ASSERT(dims[0] == 128 && dims[1] == 256 && elems == 128 * 256 && esize == 2 && copies == 3);
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 4, s, dims, &elems, &esize, &copies), TT_OK);
    CU_ASSERT(esize == 4 && copies == 1 && elems == 128 * 256);
    CU_ASSERT_EQUAL(tt_tmpl_tensor_geom(t, 2, s, dims, &elems, &esize), TT_OK);
    CU_ASSERT(dims[0] == 4000 && dims[1] == 4096 && esize == 4);   /* C is out_dtype */
    tt_tmpl_free(t);

    /* evaluation errors name the let; negative extents are domain errors */
    const char *doc = "{\"tiletune\":1,\"name\":\"o\",\"inputs\":{\"N\":{\"type\":\"int\",\"min\":-8}},"
                      "\"params\":{\"p\":[1,2]},\"let\":{\"a\":\"N * 2\",\"x\":\"N ** (8 * p)\"},"
                      "\"buffers\":{\"b\":{\"scope\":\"UB\",\"shape\":[\"a\"],\"dtype\":\"int8\","
                      "\"copies\":\"p - 1\"}}}";
    CU_ASSERT_EQUAL_FATAL(tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, &e), TT_OK);
    int64_t v[8] = {16, 1};
    CU_ASSERT_EQUAL(tt_tmpl_eval_lets(t, v, &e), TT_OK);
    CU_ASSERT_EQUAL(v[2], 32);
    CU_ASSERT_EQUAL(v[3], (int64_t)1 << 32);                     /* 16 ** 8 */
    /* copies = p - 1 = 0 is not a ring */
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 0, v, dims, &elems, &esize, &copies), TT_EDOMAIN);
    v[1] = 2;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_tmpl_eval_lets(t, v, &e), TT_EOVERFLOW);   /* 16 ** 16 */
    CU_ASSERT_STRING_EQUAL(e.path, "let.x");
    CU_ASSERT_STRING_EQUAL(e.msg, "let x: overflow");
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 0, (int64_t[]){-8, 2, -16, 0}, dims, &elems, &esize,
                                        &copies), TT_EDOMAIN);
    CU_ASSERT_EQUAL(tt_tmpl_buffer_geom(t, 0, (int64_t[]){8, 2, 16, 0}, dims, &elems, &esize,
                                        &copies), TT_OK);
    CU_ASSERT(elems == 16 && esize == 1 && copies == 1);
    CU_ASSERT_EQUAL(tt_tmpl_slot_of(t, "nope"), -1);
    CU_ASSERT_PTR_NULL(tt_tmpl_slot_name(t, 4));
    tt_tmpl_free(t);
    tt_tmpl_free(NULL);
}

static const tt_test_case tmpl_cases[] = {
    {"bad_table", test_bad_table},
    {"valid_table", test_valid_table},
    {"mix_all_ops", test_mix_all_ops},
    {"builtins_parse", test_builtins_parse},
    {"gemm_ir", test_gemm_ir},
    {"flash_attn_causal_trip", test_flash_attn_causal_trip},
    {"gemm_source_renders", test_gemm_source_renders},
    {"hash", test_hash},
    {"schema_agrees", test_schema_agrees},
    {"truncated_prefixes", test_truncated_prefixes},
    {"wrong_types_everywhere", test_wrong_types_everywhere},
    {"byte_flips", test_byte_flips},
    {"huge_deep_binary", test_huge_deep_binary},
    {"problem", test_problem},
    {"config", test_config}, {"config_order_free", test_config_order_free},
    {"lets_geom", test_lets_geom},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"template", NULL, NULL, tmpl_cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

/* SPDX-License-Identifier: MIT
 * template.c - template lifecycle: parse entry points (JSON value, text, file), hash, free,
 * slot names, let evaluation and buffer/tensor geometry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template_int.h"
#include "jsonutil.h"

/* FNV-1a 64 over the canonical (compact, sorted keys) serialisation, hashed as jansson
 * writes it: no buffer for the whole text.  Also sidesteps jansson 2.14's json_dumps(), which
 * with JSON_SORT_KEYS ignores a failed append of an object key and returns a text without it,
 * so that an out-of-memory would silently give a wrong hash. */
static int tmpl_hash_chunk(const char *buf, size_t size, void *data)
{
    uint64_t *h = data;
    for (size_t i = 0; i < size; i++) {
        *h ^= (unsigned char)buf[i];
        *h *= 1099511628211ULL;
    }
    return 0;
}

/* The document, then the text of source.file when it was read (a .py.in is the kernel as
 * much as the document is: editing it must not let the old kernel's measurements count for
 * the new one).  source.script is in the document already. */
static tt_rc tmpl_hash(tt_template *t, tt_errinfo *err)
{
    uint64_t h = 14695981039346656037ULL;
    if (json_dump_callback(t->doc, tmpl_hash_chunk, &h,
                           JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) != 0)
        return tt_errf(err, TT_ENOMEM, "", "out of memory");
    if (t->source_text) {
        static const char sep[] = "\n(source.file)\n";   /* no JSON text ends like this */
        tmpl_hash_chunk(sep, sizeof sep - 1, &h);
        tmpl_hash_chunk(t->source_text, strlen(t->source_text), &h);
    }
    snprintf(t->hash, sizeof t->hash, "%016llx", (unsigned long long)h);
    return TT_OK;
}

tt_rc tt_tmpl_parse_json(const json_t *doc, const char *base_dir, tt_template **out,
                         tt_errinfo *err)
{
    *out = NULL;
    if (!doc) return tt_errf(err, TT_EINVAL, "", "no document");
    tt_template *t = calloc(1, sizeof *t);
    if (!t) return tt_errf(err, TT_ENOMEM, "", "out of memory");
    tt__tp p = {.t = t, .err = err};
    tt_rc rc = tt__tmpl_parse_doc(&p, doc, base_dir);
    free(p.allloops);
    if (rc == TT_OK) {
        tt__tmpl_order_params(t);
        t->doc = json_incref((json_t *)doc);
        rc = tmpl_hash(t, err);
    }
    if (rc != TT_OK) {
        tt_tmpl_free(t);
        return rc;
    }
    *out = t;
    return TT_OK;
}

tt_rc tt_tmpl_parse_string(const char *text, size_t len, const char *base_dir,
                           tt_template **out, tt_errinfo *err)
{
    *out = NULL;
    if (!text) return tt_errf(err, TT_EINVAL, "", "no text");
    if (len > TT_TMPL_MAX_BYTES)
        return tt_errf(err, TT_ETOOBIG, "", "template larger than %d bytes", TT_TMPL_MAX_BYTES);
    json_error_t je;
    json_t *doc = tt_json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!doc && json_error_code(&je) == json_error_out_of_memory)
        return tt_errf(err, TT_ENOMEM, "", "out of memory");
    if (!doc)
        return tt_errf(err, TT_EJSON, "", "line %d column %d: %s", je.line, je.column, je.text);
    tt_rc rc = tt_tmpl_parse_json(doc, base_dir, out, err);
    json_decref(doc);
    return rc;
}

tt_rc tt_tmpl_parse_file(const char *path, tt_template **out, tt_errinfo *err)
{
    *out = NULL;
    if (!path) return tt_errf(err, TT_EINVAL, "", "no path");
    FILE *f = fopen(path, "rb");
    if (!f)   /* fopen() allocates: ENOMEM is out of memory, not an I/O error */
        return tt_errf(err, errno == ENOMEM ? TT_ENOMEM : TT_EIO, "", "cannot open %s: %s", path,
                       strerror(errno));
    char *buf = malloc((size_t)TT_TMPL_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return tt_errf(err, TT_ENOMEM, "", "out of memory");
    }
    size_t n = fread(buf, 1, (size_t)TT_TMPL_MAX_BYTES + 1, f);
    int bad = ferror(f) ? (errno ? errno : EIO) : 0;   /* EISDIR for a directory */
    fclose(f);
    if (bad) {
        free(buf);
        return tt_errf(err, TT_EIO, "", "cannot read %s: %s", path, strerror(bad));
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    tt_rc rc = tt_tmpl_parse_string(buf, n, dir, out, err);
    free(buf);
    return rc;
}

tt_rc tt_tmpl_eval_lets(const tt_template *t, int64_t *slots, tt_errinfo *err)
{
    for (size_t i = 0; i < t->nlets; i++) {
        tt_rc rc = tt_expr_eval(t->lets[i].expr, slots, &slots[tt_tmpl_let_slot(t, i)]);
        if (rc != TT_OK) {
            char path[160];
            snprintf(path, sizeof path, "let.%s", t->lets[i].name);
            return tt_errf(err, rc, path, "let %s: %s", t->lets[i].name,
                           tt__expr_rc_word(t->lets[i].expr, rc));
        }
    }
    return TT_OK;
}

/* Product of the evaluated extents; a negative extent is TT_EDOMAIN. */
static tt_rc geom(tt_expr *const *shape, int rank, const int64_t *slots,
                  int64_t dims[TT_MAX_RANK], int64_t *elems)
{
    int64_t n = 1;
    for (int d = 0; d < TT_MAX_RANK; d++) dims[d] = 1;
    for (int d = 0; d < rank; d++) {
        tt_rc rc = tt_expr_eval(shape[d], slots, &dims[d]);
        if (rc != TT_OK) return rc;
        if (dims[d] < 0) return TT_EDOMAIN;
        if (__builtin_mul_overflow(n, dims[d], &n)) return TT_EOVERFLOW;
    }
    *elems = n;
    return TT_OK;
}

tt_rc tt_tmpl_buffer_geom(const tt_template *t, size_t b, const int64_t *slots,
                          int64_t dims[TT_MAX_RANK], int64_t *elems, int *esize,
                          int64_t *copies)
{
    const tt_buffer *bu = &t->buffers[b];
    tt_rc rc = geom(bu->shape, bu->rank, slots, dims, elems);
    if (rc != TT_OK) return rc;
    *esize = tt_dtype_size(tt_dtref_eval(bu->dtype, slots));
    *copies = 1;
    if (bu->copies) {
        if ((rc = tt_expr_eval(bu->copies, slots, copies)) != TT_OK) return rc;
        if (*copies < 1) return TT_EDOMAIN;
    }
    return TT_OK;
}

tt_rc tt_tmpl_tensor_geom(const tt_template *t, size_t i, const int64_t *slots,
                          int64_t dims[TT_MAX_RANK], int64_t *elems, int *esize)
{
    const tt_tensor *te = &t->tensors[i];
    tt_rc rc = geom(te->shape, te->rank, slots, dims, elems);
    if (rc != TT_OK) return rc;
    *esize = tt_dtype_size(tt_dtref_eval(te->dtype, slots));
    return TT_OK;
}

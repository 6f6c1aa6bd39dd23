/* SPDX-License-Identifier: MIT
 * out.c - tlctl's output: aligned tables (bold header only on a colour terminal), JSON,
 * number formatting and whole-file read/write.
 */
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "jsonutil.h"
#include "tlctl.h"

/* The code point of the valid sequence of n bytes at p. */
static unsigned tl_utf8_cp(const unsigned char *p, size_t n)
{
    static const unsigned char mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    unsigned cp = p[0] & mask[n];
    for (size_t i = 1; i < n; i++) cp = cp << 6 | (p[i] & 0x3F);
    return cp;
}

/* Whether a terminal would act on code point cp rather than show it: C0 and C1 controls,
 * DEL, and the bidirectional overrides and isolates that reorder what follows. */
static int tl_cp_control(unsigned cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* The one rule for text from the server on a terminal: writes s made safe into buf (when
 * buf is not NULL; cap bytes with the NUL, cut before a sequence that does not fit) and
 * returns the length of the whole safe text (as snprintf).  Valid UTF-8 is kept; controls
 * (tl_cp_control) are spelled \xNN (\uNNNN above U+00FF) and bytes that are not UTF-8
 * \xNN, as the server spells them in its messages.  A backslash stays itself, so the
 * result is the same when made safe again. */
static size_t tl_safe_put(const char *s, char *buf, size_t cap)
{
    size_t o = 0, w = 0, cut = 0, left = s ? strlen(s) : 0;
    for (const unsigned char *p = (const unsigned char *)s; left;) {
        char esc[8];
        size_t n = tt_utf8_char_len((const char *)p, left), k;
        const char *src = esc;
        if (!n) {
            k = (size_t)snprintf(esc, sizeof esc, "\\x%02x", *p);
            n = 1;
        } else if (tl_cp_control(tl_utf8_cp(p, n))) {
            unsigned cp = tl_utf8_cp(p, n);
            k = (size_t)snprintf(esc, sizeof esc, cp > 0xFF ? "\\u%04x" : "\\x%02x", cp);
        } else {
            src = (const char *)p;
            k = n;
        }
        if (buf && !cut && w + k < cap) {
            memcpy(buf + w, src, k);
            w += k;
        } else {
            cut = 1;
        }
        o += k;
        p += n;
        left -= n;
    }
    if (buf && cap) buf[w] = '\0';
    return o;
}

const char *tl_safe(const char *s, char *buf, size_t cap)
{
    tl_safe_put(s, buf, cap);
    return buf;
}

char *tl_safe_dup(const char *s)
{
    size_t n = tl_safe_put(s, NULL, 0);
    char *b = malloc(n + 1);
    if (b) tl_safe_put(s, b, n + 1);
    return b;
}

/* Columns a terminal gives code point cp: glibc's wcwidth under C.UTF-8 (whatever the
 * user's locale, since tlctl prints UTF-8 and does not call setlocale): 2 for East Asian wide
 * and emoji, 0 for combining marks; 1 when that locale is missing or cp is not printable. */
static int tl_cp_cols(unsigned cp)
{
    static locale_t utf8;
    static int tried;
    if (!tried) {
        tried = 1;
        utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    }
    if (cp < 0x7F || !utf8) return 1;
    locale_t old = uselocale(utf8);
    int w = wcwidth((wchar_t)cp);
    uselocale(old);
    return w < 0 ? 1 : w;
}

/* Display width of s, made safe by tl_safe (so valid UTF-8, no controls); a byte that is
 * not UTF-8 all the same counts 1. */
size_t tl_text_cols(const char *s)
{
    size_t cols = 0, left = s ? strlen(s) : 0;
    for (const unsigned char *p = (const unsigned char *)s; left;) {
        size_t n = tt_utf8_char_len((const char *)p, left);
        cols += n ? (size_t)tl_cp_cols(tl_utf8_cp(p, n)) : 1;
        n = n ? n : 1;
        p += n;
        left -= n;
    }
    return cols;
}

/* The longest prefix of s (whole characters) of at most cols columns, into buf (cap bytes
 * with the NUL); returns its width. */
size_t tl_text_fit(const char *s, size_t cols, char *buf, size_t cap)
{
    size_t w = 0, o = 0, left = s ? strlen(s) : 0;
    for (const unsigned char *p = (const unsigned char *)s; left;) {
        size_t n = tt_utf8_char_len((const char *)p, left);
        size_t c = n ? (size_t)tl_cp_cols(tl_utf8_cp(p, n)) : 1;
        n = n ? n : 1;
        if (w + c > cols || o + n >= cap) break;
        memcpy(buf + o, p, n);
        o += n;
        w += c;
        p += n;
        left -= n;
    }
    if (cap) buf[o] = '\0';
    return w;
}

void tl_table_init(tl_table *t, size_t ncols, const char *const *header)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->cap = 16;
    t->cells = calloc(t->cap * ncols, sizeof *t->cells);
    for (size_t i = 0; t->cells && i < ncols; i++) t->cells[i] = strdup(header[i]);
    t->nrows = 1;
}

void tl_table_add(tl_table *t, ...)
{
    if (!t->cells) return;
    if (t->nrows == t->cap) {
        char **nc = realloc(t->cells, t->cap * 2 * t->ncols * sizeof *nc);
        if (!nc) return;
        t->cells = nc;
        t->cap *= 2;
    }
    va_list ap;
    va_start(ap, t);
    for (size_t i = 0; i < t->ncols; i++) {
        const char *s = va_arg(ap, const char *);
        t->cells[t->nrows * t->ncols + i] = tl_safe_dup(s ? s : "-");
    }
    va_end(ap);
    t->nrows++;
}

void tl_table_print(const tl_ctx *c, tl_table *t, FILE *f)
{
    if (!t->cells) return;
    size_t w[32] = {0};
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t i = 0; i < t->ncols && i < 32; i++) {
            const char *s = t->cells[r * t->ncols + i];
            size_t n = tl_text_cols(s);
            if (n > w[i]) w[i] = n;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        if (r == 0 && c->color) fputs("\033[1m", f);
        for (size_t i = 0; i < t->ncols; i++) {
            const char *s = t->cells[r * t->ncols + i];
            fputs(s ? s : "", f);
            if (i + 1 < t->ncols)   /* pad by columns on screen, not bytes */
                fprintf(f, "%*s  ", (int)(w[i < 32 ? i : 31] - tl_text_cols(s)), "");
        }
        if (r == 0 && c->color) fputs("\033[0m", f);
        fputc('\n', f);
    }
    for (size_t k = 0; k < t->nrows * t->ncols; k++) free(t->cells[k]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

void tl_print_json(const json_t *j)
{
    char *s = tt_json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s) printf("%s\n", s);
    free(s);
}

const char *tl_jstr(const json_t *v, char *buf, size_t cap)
{
    if (json_is_string(v)) tl_safe(json_string_value(v), buf, cap);
    else if (json_is_integer(v)) snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(buf, cap, "%.6g", json_real_value(v));
    else if (json_is_true(v)) snprintf(buf, cap, "true");
    else if (json_is_false(v)) snprintf(buf, cap, "false");
    else if (!v || json_is_null(v)) snprintf(buf, cap, "-");
    else {
        char *s = tt_json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
        snprintf(buf, cap, "%s", s ? s : "?");
        free(s);
    }
    return buf;
}

const char *tl_fmt_us(double us, char *buf, size_t cap)
{
    if (!(us > 0)) snprintf(buf, cap, "-");
    else if (us >= 1e6) snprintf(buf, cap, "%.3f s", us * 1e-6);
    else if (us >= 1e3) snprintf(buf, cap, "%.3f ms", us * 1e-3);
    else snprintf(buf, cap, "%.2f us", us);
    return buf;
}

const char *tl_fmt_us_at(const json_t *o, const char *key, char *buf, size_t cap)
{
    return tl_fmt_us(json_number_value(json_object_get(o, key)), buf, cap);
}

int tl_write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "tlctl: cannot write %s: %s\n", path, strerror(errno));
        return TL_EXIT_USAGE;
    }
    size_t n = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || n != len) {
        fprintf(stderr, "tlctl: cannot write %s: %s\n", path, strerror(errno));
        return TL_EXIT_USAGE;
    }
    return 0;
}

char *tl_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "tlctl: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *b = malloc(cap + 1);
    size_t k;
    while (b && (k = fread(b + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) { free(b); b = NULL; break; }
            b = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f), e = errno;   /* a directory opens, then reads fail: EISDIR */
    fclose(f);
    if (!b || bad) {
        fprintf(stderr, "tlctl: cannot read %s: %s\n", path, b ? strerror(e) : "out of memory");
        free(b);
        return NULL;
    }
    b[n] = '\0';
    if (len) *len = n;
    return b;
}

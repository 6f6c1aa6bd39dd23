/* SPDX-License-Identifier: MIT
 * jsonutil.c - json_dumps() replacement that never returns damaged text, real numbers as jansson
 * writes them, and UTF-8 checking and repair for text put into JSON (see jsonutil.h).
 */
#include "jsonutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char tt_bom[3] = {'\xEF', '\xBB', '\xBF'};

json_t *tt_json_loadb(const char *text, size_t len, size_t flags, json_error_t *je)
{
    if (text && len >= 3 && memcmp(text, tt_bom, 3) == 0) {
        text += 3;
        len -= 3;
    }
    return json_loadb(text, len, flags, je);
}

json_t *tt_json_loadf(FILE *f, size_t flags, json_error_t *je)
{
    int c = getc(f);
    if (c != (unsigned char)tt_bom[0]) {
        if (c != EOF) ungetc(c, f);
        return json_loadf(f, flags, je);
    }
    char head[3] = {tt_bom[0], 0, 0};
    size_t n = 1 + fread(head + 1, 1, 2, f);
    if (n == 3 && memcmp(head, tt_bom, 3) == 0) return json_loadf(f, flags, je);
    return json_loadb(head, n, flags, je);   /* not a mark, and no JSON: jansson's own error */
}

/* Text being serialised by tt_json_dumps(); `failed` is sticky. */
typedef struct tt_dumpbuf {
    char *p;
    size_t n, cap;
    int failed;
} tt_dumpbuf;

static int tt_dump_chunk(const char *buf, size_t size, void *data)
{
    tt_dumpbuf *b = data;
    if (b->failed) return -1;
    if (size >= b->cap - b->n) {   /* room for the bytes and the NUL */
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n <= size) {
            if (cap > SIZE_MAX / 2) {
                b->failed = 1;
                return -1;
            }
            cap *= 2;
        }
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return -1;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, buf, size);
    b->n += size;
    b->p[b->n] = '\0';
    return 0;
}

char *tt_json_dumps(const json_t *j, size_t flags)
{
    if (!j) return NULL;
    tt_dumpbuf b = {0};
    if (json_dump_callback(j, tt_dump_chunk, &b, flags) != 0 || b.failed || !b.p) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ---- reals -------------------------------------------------------------------------- */
__extension__ typedef unsigned __int128 tt_u128;

/* jansson's fix-up of "%.17g" text (dump.c jsonp_dtostr): ".0" when it reads like an
 * integer; the exponent without '+' and leading zeros. */
static size_t tt_real_fixup(char *buf, size_t len)
{
    if (!strchr(buf, '.') && !strchr(buf, 'e')) {
        memcpy(buf + len, ".0", 3);
        len += 2;
    }
    char *start = strchr(buf, 'e');
    if (start) {
        start++;
        char *end = start + 1;
        if (*start == '-') start++;
        while (*end == '0') end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - buf) + 1);
            len -= (size_t)(end - start);
        }
    }
    return len;
}

/* v > 0 with 1e-4 <= v < 1e17: its 17 significant digits N (10^16 <= N < 10^17, v * 10^k
 * rounded half to even, exactly) and *x = floor(log10 of the rounded value); 0 when out of
 * that range. */
static int tt_real_digits(double v, uint64_t *n_out, int *x_out)
{
    static const uint64_t p10[] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
                                   1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
                                   10000000000ULL, 100000000000ULL};
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int be = (int)((bits >> 52) & 0x7ff);
    if (be == 0 || be == 0x7ff) return 0;        /* subnormal, inf, nan: not in range */
    uint64_t m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);   /* v = m * 2^e2, exactly */
    int e2 = be - 1075;
    /* floor(log10(v)) from the binary exponent, at most one too small: fixed below */
    int x = (int)floor((double)(e2 + 52) * 0.30102999566398120);
    for (int tries = 0; tries < 3; tries++) {
        int k = 16 - x;                          /* N = v * 10^k */
        if (x < -4 || x > 16 || k < 0 || k > 20) return 0;
        tt_u128 p = m;
        int kk = k;
        while (kk > 0) {
            int step = kk > 11 ? 11 : kk;
            p *= p10[step];
            kk -= step;
        }
        tt_u128 q;
        if (e2 >= 0) {
            q = p << e2;
        } else {
            int sh = -e2;
            if (sh >= 127) return 0;
            q = p >> sh;
            tt_u128 rem = p - (q << sh), half = (tt_u128)1 << (sh - 1);
            if (rem > half || (rem == half && (q & 1))) q++;
        }
        const tt_u128 lo = (tt_u128)10000000000000000ULL, hi = lo * 10;
        if (q < lo) { x--; continue; }
        if (q > hi) { x++; continue; }
        if (q == hi) {                           /* rounded up to the next power of ten */
            q = lo;
            if (++x > 16) return 0;
        }
        *n_out = (uint64_t)q;
        *x_out = x;
        return 1;
    }
    return 0;
}

size_t tt_json_real_text(double v, char buf[TT_JSON_REAL_MAX])
{
    if (!isfinite(v)) return 0;
    uint64_t n;
    int x;
    double a = fabs(v);
    if (a == 0 || !tt_real_digits(a, &n, &x)) {
        int len = snprintf(buf, TT_JSON_REAL_MAX - 3, "%.17g", v);
        if (len < 0 || len >= TT_JSON_REAL_MAX - 3) return 0;
        return tt_real_fixup(buf, (size_t)len);
    }
    /* "%.17g" with -4 <= x < 17: fixed notation, trailing zeros (and a bare '.') dropped */
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                "31323334353637383940414243444546474849505152535455565758596061"
                                "6263646566676869707172737475767778798081828384858687888990919293"
                                "949596979899";
    char d[18];
    for (int i = 16; i > 0; i -= 2) {
        uint64_t r = n % 100;
        n /= 100;
        d[i - 1] = pairs[2 * r];
        d[i] = pairs[2 * r + 1];
    }
    d[0] = (char)('0' + n);
    int nd = 17;
    while (nd > 1 && d[nd - 1] == '0') nd--;
    size_t len = 0;
    if (v < 0) buf[len++] = '-';
    if (x >= 0) {
        int intd = x + 1;                        /* digits before the point */
        for (int i = 0; i < intd; i++) buf[len++] = d[i];
        if (nd > intd) {
            buf[len++] = '.';
            for (int i = intd; i < nd; i++) buf[len++] = d[i];
        } else {
            buf[len++] = '.';                    /* jansson: an integer-looking real gets .0 */
            buf[len++] = '0';
        }
    } else {
        buf[len++] = '0';
        buf[len++] = '.';
        for (int i = 0; i < -x - 1; i++) buf[len++] = '0';
        for (int i = 0; i < nd; i++) buf[len++] = d[i];
    }
    buf[len] = '\0';
    return len;
}

char *tt_json_reals(const double *v, size_t n)
{
    size_t cap = 2 + n * TT_JSON_REAL_MAX + 1;
    char *out = malloc(cap);
    if (!out) return NULL;
    size_t len = 0;
    out[len++] = '[';
    for (size_t i = 0; i < n; i++) {
        if (i) out[len++] = ',';
        size_t l = tt_json_real_text(v[i], out + len);
        if (!l) {
            free(out);
            return NULL;
        }
        len += l;
    }
    out[len++] = ']';
    out[len] = '\0';
    return out;
}

/* Length of the valid UTF-8 character at s (n bytes left), 0 when invalid; *cut is set when
 * the bytes are a valid start of a character that ends early. */
static size_t tt_utf8_char(const unsigned char *s, size_t n, int *cut)
{
    *cut = 0;
    if (s[0] < 0x80) return 1;
    size_t len = s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
                 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
    if (!len) return 0;
    for (size_t k = 1; k < len; k++) {
        if (k >= n || (s[k] & 0xC0) != 0x80) {
            *cut = 1;
            return 0;
        }
    }
    /* overlongs, surrogates and code points above U+10FFFF */
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F) ||
        (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))
        return 0;
    return len;
}

size_t tt_utf8_char_len(const char *s, size_t n)
{
    int cut;
    return tt_utf8_char((const unsigned char *)s, n, &cut);
}

int tt_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        int cut;
        size_t k = tt_utf8_char(p + i, n - i, &cut);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

void tt_utf8_fix(char *s)
{
    if (!s) return;
    unsigned char *p = (unsigned char *)s, *w = p;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        int cut;
        size_t k = tt_utf8_char(p + i, n - i, &cut);
        if (k) {
            memmove(w, p + i, k);
            w += k;
            i += k;
            continue;
        }
        if (!cut) *w++ = '?';
        i++;
        while (cut && i < n && (p[i] & 0xC0) == 0x80) i++;   /* the rest of the cut char */
    }
    *w = '\0';
}

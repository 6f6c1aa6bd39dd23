/* SPDX-License-Identifier: MIT
 * auth.c - SHA-256 (FIPS 180-4), constant-time compare, scopes and the token set.
 */
#include "auth.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_int.h"   /* TT_SCOPE_* */

/* ---- SHA-256 ------------------------------------------------------------------------ */
static const uint32_t tt_sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void tt_sha256_block(tt_sha256 *c, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];
    uint32_t e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + S1 + ch + tt_sha_k[i] + w[i];
        uint32_t S0 = ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22);
        uint32_t maj = (a & b) ^ (a & cc) ^ (b & cc);
        uint32_t t2 = S0 + maj;
        h = g; g = f; f = e; e = d + t1;
        d = cc; cc = b; b = a; a = t1 + t2;
    }
    c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d;
    c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
}

void tt_sha256_init(tt_sha256 *c)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof iv);
    c->len = 0;
    c->nbuf = 0;
}

void tt_sha256_update(tt_sha256 *c, const void *data, size_t len)
{
    const unsigned char *p = data;
    c->len += len;
    if (c->nbuf) {
        size_t take = 64 - c->nbuf < len ? 64 - c->nbuf : len;
        memcpy(c->buf + c->nbuf, p, take);
        c->nbuf += take; p += take; len -= take;
        if (c->nbuf < 64) return;
        tt_sha256_block(c, c->buf);
        c->nbuf = 0;
    }
    for (; len >= 64; p += 64, len -= 64) tt_sha256_block(c, p);
    if (len) { memcpy(c->buf, p, len); c->nbuf = len; }
}

void tt_sha256_final(tt_sha256 *c, unsigned char out[32])
{
    uint64_t bits = c->len * 8;
    unsigned char pad = 0x80;
    tt_sha256_update(c, &pad, 1);
    unsigned char zero = 0;
    while (c->nbuf != 56) tt_sha256_update(c, &zero, 1);
    unsigned char lenb[8];
    for (int i = 0; i < 8; i++) lenb[i] = (unsigned char)(bits >> (56 - 8 * i));
    tt_sha256_update(c, lenb, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(c->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)c->h[i];
    }
}

void tt_sha256_hex(const void *data, size_t len, char out[65])
{
    static const char hx[] = "0123456789abcdef";
    tt_sha256 c;
    unsigned char d[32];
    tt_sha256_init(&c);
    tt_sha256_update(&c, data, len);
    tt_sha256_final(&c, d);
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[64] = '\0';
}

int tt_ct_equal(const void *a, const void *b, size_t n)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char acc = 0;
    for (size_t i = 0; i < n; i++) acc |= (unsigned char)(x[i] ^ y[i]);
    return acc == 0;
}

/* ---- scopes ------------------------------------------------------------------------- */
tt_rc tt_scopes_parse(const char *list, int *bits, tt_errinfo *err)
{
    int b = 0;
    const char *p = list ? list : "";
    while (*p) {
        while (*p == ',' || *p == ' ') p++;
        if (!*p) break;
        size_t n = strcspn(p, ", ");
        if (n == 4 && strncmp(p, "read", 4) == 0) b |= TT_SCOPE_READ;
        else if (n == 4 && strncmp(p, "tune", 4) == 0) b |= TT_SCOPE_TUNE | TT_SCOPE_READ;
        else if (n == 5 && strncmp(p, "admin", 5) == 0)
            b |= TT_SCOPE_ADMIN | TT_SCOPE_TUNE | TT_SCOPE_READ;
        else
            return tt_errf(err, TT_EINVAL, "scopes", "unknown scope \"%.*s\" (read, tune, admin)",
                           (int)(n > 32 ? 32 : n), p);
        p += n;
    }
    if (!b) return tt_errf(err, TT_EINVAL, "scopes", "no scope given (read, tune, admin)");
    *bits = b;
    return TT_OK;
}

void tt_scopes_format(int bits, char *buf, size_t cap)
{
    if (!cap) return;
    buf[0] = '\0';
    const char *names[3] = {"read", "tune", "admin"};
    int flags[3] = {TT_SCOPE_READ, TT_SCOPE_TUNE, TT_SCOPE_ADMIN};
    size_t used = 0;
    for (int i = 0; i < 3; i++) {
        if (!(bits & flags[i])) continue;
        int n = snprintf(buf + used, cap - used, "%s%s", used ? "," : "", names[i]);
        if (n < 0 || (size_t)n >= cap - used) return;
        used += (size_t)n;
    }
}

/* ---- token set ---------------------------------------------------------------------- */
typedef struct tt_auth_tok {
    char name[64];
    unsigned char hash[32];
    int scopes;
} tt_auth_tok;

struct tt_auth {
    tt_auth_tok *toks;
    size_t n, cap;
};

tt_auth *tt_auth_new(void) { return calloc(1, sizeof(tt_auth)); }

void tt_auth_free(tt_auth *a)
{
    if (!a) return;
    if (a->toks) memset(a->toks, 0, a->cap * sizeof *a->toks);
    free(a->toks);
    free(a);
}

size_t tt_auth_count(const tt_auth *a) { return a ? a->n : 0; }

static int tt_hexval(int ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    ch = tolower(ch);
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    return -1;
}

tt_rc tt_auth_add(tt_auth *a, const char *name, const char *sha256_hex, const char *scopes,
                  tt_errinfo *err)
{
    if (!a || !name || !*name || strlen(name) >= 64)
        return tt_errf(err, TT_EINVAL, "name", "token name must be 1..63 characters");
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (*c <= ' ' || *c == 0x7f)   /* it is written into log lines, owners, histories */
            return tt_errf(err, TT_EINVAL, "name", "token name must not contain spaces or "
                           "control characters");
    if (!sha256_hex || strlen(sha256_hex) != 64)
        return tt_errf(err, TT_EINVAL, "secret_sha256", "token %s: need 64 hex digits", name);
    tt_auth_tok t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "%s", name);
    for (int i = 0; i < 32; i++) {
        int hi = tt_hexval((unsigned char)sha256_hex[2 * i]);
        int lo = tt_hexval((unsigned char)sha256_hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return tt_errf(err, TT_EINVAL, "secret_sha256", "token %s: not a hex digest", name);
        t.hash[i] = (unsigned char)(hi << 4 | lo);
    }
    tt_rc rc = tt_scopes_parse(scopes, &t.scopes, err);
    if (rc) return rc;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->toks[i].name, name) == 0 || memcmp(a->toks[i].hash, t.hash, 32) == 0)
            return tt_errf(err, TT_EEXISTS, "tokens", "token %s: duplicate name or secret",
                           name);
    if (a->n == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 4;
        tt_auth_tok *nt = realloc(a->toks, nc * sizeof *nt);
        if (!nt) return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
        a->toks = nt;
        a->cap = nc;
    }
    a->toks[a->n++] = t;
    return TT_OK;
}

tt_rc tt_auth_check(const tt_auth *a, const char *secret, size_t len, char name[64],
                    int *scopes)
{
    if (!a || !secret) return TT_EUNAUTH;
    tt_sha256 c;
    unsigned char d[32];
    tt_sha256_init(&c);
    tt_sha256_update(&c, secret, len);
    tt_sha256_final(&c, d);
    size_t found = (size_t)-1;
    for (size_t i = 0; i < a->n; i++)     /* no early exit: every hash is compared */
        if (tt_ct_equal(a->toks[i].hash, d, 32)) found = i;
    if (found == (size_t)-1) return TT_EUNAUTH;
    snprintf(name, 64, "%s", a->toks[found].name);
    *scopes = a->toks[found].scopes;
    return TT_OK;
}

const char *tt_auth_bearer(const char *header, size_t *len)
{
    if (!header || strncasecmp(header, "Bearer ", 7) != 0) return NULL;
    const char *p = header + 7;
    while (*p == ' ') p++;
    size_t n = strlen(p);
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    if (!n) return NULL;
    *len = n;
    return p;
}

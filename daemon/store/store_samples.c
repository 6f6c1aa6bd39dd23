/* SPDX-License-Identifier: MIT
 * store_samples.c - the compact form of a trial's samples (trials.samples_z, schema 005):
 * lossless, about a fifth of the JSON text, so that a group-committed trial writes fewer
 * bytes (format: store_internal.h, tt__samples_pack).
 */
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

#include "store_internal.h"

#define TT_Z_DICT 0xFD    /* tags below: an earlier distinct value */
#define TT_Z_F32MS 0xFE   /* a float millisecond count x 1000 follows (4 bytes) */
#define TT_Z_F64 0xFF     /* a double follows (8 bytes) */
#define TT_Z_SLOTS 512    /* the packer's hash of distinct values (> 2 x TT_Z_DICT) */

static uint64_t tt_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static double tt_from_bits(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* 1 and *f when v is exactly (double)f * 1000 (bit for bit). */
static int tt_f32ms(double v, float *f)
{
    *f = (float)(v / 1000.0);
    return tt_bits((double)*f * 1000.0) == tt_bits(v);
}

/* The packed bytes' most: version, count, and a tag and a double per sample, rounded up to
 * whole base64 groups (EVP_DecodeBlock writes 3 bytes per 4 characters). */
#define TT_Z_BYTES ((2 + TT__SAMPLES_Z_MAXN * 9 + 2) / 3 * 3)

/* The bytes of base64 text s (OpenSSL's EVP_DecodeBlock, which counts the padding '='
 * as zero bytes: taken off here) into b: their count, or -1 when s is not base64 of at most
 * TT_Z_BYTES bytes. */
static long tt_b64_get(const char *s, unsigned char b[TT_Z_BYTES])
{
    size_t len = strlen(s);
    if (len == 0 || len % 4 || len / 4 * 3 > TT_Z_BYTES) return -1;
    int n = EVP_DecodeBlock(b, (const unsigned char *)s, (int)len);
    if (n < 0) return -1;
    size_t pad = s[len - 1] == '=' ? (s[len - 2] == '=' ? 2 : 1) : 0;
    return (long)n - (long)pad;
}

size_t tt__samples_pack(const double *v, size_t n, char *out, size_t cap)
{
    if (n == 0 || n > TT__SAMPLES_Z_MAXN || cap < TT__SAMPLES_Z_CAP(n)) return 0;
    unsigned char b[TT_Z_BYTES];
    /* the dictionary: an open-addressing table of value bits -> tag + 1 (0: empty) */
    uint64_t key[TT_Z_SLOTS];
    unsigned char tag[TT_Z_SLOTS];
    memset(tag, 0, sizeof tag);
    size_t nb = 0, nd = 0;
    b[nb++] = 1;                      /* version */
    b[nb++] = (unsigned char)n;
    for (size_t i = 0; i < n; i++) {
        uint64_t u = tt_bits(v[i]);
        size_t h = (size_t)((u * 0x9e3779b97f4a7c15ULL) >> 55);   /* TT_Z_SLOTS = 512 */
        while (tag[h] && key[h] != u) h = (h + 1) & (TT_Z_SLOTS - 1);
        if (tag[h]) {
            b[nb++] = (unsigned char)(tag[h] - 1);
            continue;
        }
        if (nd < TT_Z_DICT) {
            key[h] = u;
            tag[h] = (unsigned char)(++nd);
        }
        float f;
        if (tt_f32ms(v[i], &f)) {
            uint32_t w;
            memcpy(&w, &f, sizeof w);
            b[nb++] = TT_Z_F32MS;
            for (int k = 0; k < 4; k++) b[nb++] = (unsigned char)(w >> (8 * k));
        } else {
            b[nb++] = TT_Z_F64;
            for (int k = 0; k < 8; k++) b[nb++] = (unsigned char)(u >> (8 * k));
        }
    }
    /* base64 (OpenSSL; padded, NUL-terminated): 4 characters per 3 bytes */
    return (size_t)EVP_EncodeBlock((unsigned char *)out, b, (int)nb);
}

size_t tt__samples_unpack(const char *z, double *v, size_t cap)
{
    unsigned char b[TT_Z_BYTES];
    long nb = z ? tt_b64_get(z, b) : -1;
    if (nb < 2 || b[0] != 1 || b[1] == 0 || b[1] > cap) return 0;
    size_t n = b[1], nd = 0, p = 2;
    uint64_t dict[TT_Z_DICT];
    for (size_t i = 0; i < n; i++) {
        if (p >= (size_t)nb) return 0;
        unsigned tag = b[p++];
        uint64_t u = 0;
        if (tag < TT_Z_DICT) {
            if (tag >= nd) return 0;
            v[i] = tt_from_bits(dict[tag]);
            continue;
        }
        size_t w = tag == TT_Z_F32MS ? 4 : 8;
        if (p + w > (size_t)nb) return 0;
        for (size_t k = 0; k < w; k++) u |= (uint64_t)b[p + k] << (8 * k);
        p += w;
        if (tag == TT_Z_F32MS) {
            uint32_t u32 = (uint32_t)u;
            float f;
            memcpy(&f, &u32, sizeof f);
            v[i] = (double)f * 1000.0;
        } else {
            v[i] = tt_from_bits(u);
        }
        if (nd < TT_Z_DICT) dict[nd++] = tt_bits(v[i]);
    }
    return p == (size_t)nb ? n : 0;
}

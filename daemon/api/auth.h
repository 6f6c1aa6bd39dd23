/* SPDX-License-Identifier: MIT
 * auth.h - bearer-token authentication: SHA-256 (FIPS 180-4), constant-time comparison,
 * scope lists.
 *
 * Tokens are never stored in clear: the config file and the database hold the SHA-256 hex
 * of the secret.  A presented token is hashed and compared in constant time with every
 * known hash (tt_auth_check), so the time taken does not depend on how many leading bytes
 * match.  Scopes: read (GET routes, predict/simulate/validate), tune (submit and cancel own
 * jobs, put templates), admin (everything, including GET /v1/config and other owners' jobs).
 * admin implies tune implies read.
 *
 * Thread-safety: pure functions; a tt_auth set is immutable after tt_auth_add() calls finish
 * and may then be read from many threads.  Ownership: tt_auth_new()/tt_auth_free().
 */
#ifndef TT_AUTH_H
#define TT_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "tt_err.h"

typedef struct tt_sha256 {
    uint32_t h[8];
    uint64_t len;             /* bytes hashed so far */
    unsigned char buf[64];
    size_t nbuf;
} tt_sha256;

void tt_sha256_init(tt_sha256 *c);
void tt_sha256_update(tt_sha256 *c, const void *data, size_t len);
void tt_sha256_final(tt_sha256 *c, unsigned char out[32]);
/* One call: the 64 lowercase hex digits + NUL of SHA-256(data). */
void tt_sha256_hex(const void *data, size_t len, char out[65]);

/* 1 when a and b (n bytes each) are equal; time depends on n only. */
int tt_ct_equal(const void *a, const void *b, size_t n);

/* Scope list "read,tune" -> bit set (TT_SCOPE_* of api.h, with the implications above).
 * Returns TT_OK, or TT_EINVAL naming the unknown scope in err. */
tt_rc tt_scopes_parse(const char *list, int *bits, tt_errinfo *err);
/* Bit set -> "read,tune,admin" (the explicit bits). */
void tt_scopes_format(int bits, char *buf, size_t cap);

/* A set of known tokens (name, sha256 hex, scopes). */
typedef struct tt_auth tt_auth;
tt_auth *tt_auth_new(void);
void tt_auth_free(tt_auth *a);
/* Add a token; sha256_hex must be 64 hex digits (case-insensitive).  TT_EINVAL otherwise,
 * TT_EEXISTS for a duplicate name or hash. */
tt_rc tt_auth_add(tt_auth *a, const char *name, const char *sha256_hex, const char *scopes,
                  tt_errinfo *err);
size_t tt_auth_count(const tt_auth *a);
/* Authenticate a presented secret: TT_OK with the token's name (copied, cap 64) and scope
 * bits, or TT_EUNAUTH.  Compares against every token in constant time per token. */
tt_rc tt_auth_check(const tt_auth *a, const char *secret, size_t len, char name[64],
                    int *scopes);
/* Parse an Authorization header value "Bearer <secret>" (case-insensitive scheme).
 * Returns a pointer into `header` at the secret and its length, or NULL. */
const char *tt_auth_bearer(const char *header, size_t *len);

#endif

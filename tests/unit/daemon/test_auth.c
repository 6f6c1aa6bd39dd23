/* SPDX-License-Identifier: MIT
 * test_auth.c - SHA-256 against the FIPS 180-4 vectors (tests/data/auth/sha256_vectors.txt,
 * streamed in uneven pieces), constant-time compare, scope lists, token sets, bearer headers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"   /* TT_SCOPE_* */
#include "auth.h"
#include "tt_test.h"

static void test_sha256_vectors(void)
{
    char *path = tt_test_src("tests/data/auth/sha256_vectors.txt");
    char *text = tt_test_read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char *t1 = strchr(line, '\t');
        char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(t2);
        *t1 = *t2 = '\0';
        long rep = strtol(line, NULL, 10);
        const char *s = t1 + 1, *want = t2 + 1;
        size_t len = strlen(s);
        /* streamed: pieces of 1, 7, 64, 100 bytes in turn */
        tt_sha256 c;
        tt_sha256_init(&c);
        static const size_t pieces[] = {1, 7, 64, 100};
        size_t k = 0;
        for (long r = 0; r < rep; r++) {
            size_t off = 0;
            while (off < len) {
                size_t take = pieces[k++ % 4];
                if (take > len - off) take = len - off;
                tt_sha256_update(&c, s + off, take);
                off += take;
            }
        }
        unsigned char d[32];
        tt_sha256_final(&c, d);
        char hex[65];
        for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
        if (strcmp(hex, want)) fprintf(stderr, "\nsha256 x%ld \"%.20s\": %s != %s\n", rep, s, hex, want);
        CU_ASSERT_STRING_EQUAL(hex, want);
        if (rep == 1) {   /* one-shot helper agrees */
            tt_sha256_hex(s, len, hex);
            CU_ASSERT_STRING_EQUAL(hex, want);
        }
        n++;
    }
    CU_ASSERT(n >= 10);
    free(text);
    free(path);
}

static void test_ct_equal(void)
{
    CU_ASSERT(tt_ct_equal("abcd", "abcd", 4));
    CU_ASSERT(!tt_ct_equal("abcd", "abce", 4));
    CU_ASSERT(!tt_ct_equal("xbcd", "abcd", 4));
    CU_ASSERT(tt_ct_equal("a", "b", 0));
}

static const struct {
    const char *list;
    tt_rc rc;
    int bits;
} scope_cases[] = {
    {"read", TT_OK, TT_SCOPE_READ},
    {"tune", TT_OK, TT_SCOPE_READ | TT_SCOPE_TUNE},
    {"admin", TT_OK, TT_SCOPE_READ | TT_SCOPE_TUNE | TT_SCOPE_ADMIN},
    {"read,tune", TT_OK, TT_SCOPE_READ | TT_SCOPE_TUNE},
    {" read , admin ", TT_OK, TT_SCOPE_READ | TT_SCOPE_TUNE | TT_SCOPE_ADMIN},
    {"", TT_EINVAL, 0},
    {",,", TT_EINVAL, 0},
    {"write", TT_EINVAL, 0},
    {"read,READ", TT_EINVAL, 0},
    {"readtune", TT_EINVAL, 0},
};

static void test_scopes(void)
{
    for (size_t i = 0; i < sizeof scope_cases / sizeof scope_cases[0]; i++) {
        int bits = -1;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_scopes_parse(scope_cases[i].list, &bits, &e);
        CU_ASSERT_EQUAL(rc, scope_cases[i].rc);
        if (rc == TT_OK) {
            CU_ASSERT_EQUAL(bits, scope_cases[i].bits);
        } else {
            CU_ASSERT(e.msg[0] != '\0');
        }
    }
    char buf[64];
    tt_scopes_format(TT_SCOPE_READ | TT_SCOPE_ADMIN, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "read,admin");
    tt_scopes_format(0, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "");
}

static void test_token_set(void)
{
    tt_auth *a = tt_auth_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    char h1[65], h2[65];
    tt_sha256_hex("s1", 2, h1);
    tt_sha256_hex("s2", 2, h2);
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL(tt_auth_add(a, "ci", h1, "read,tune", &e), TT_OK);
    for (int i = 0; h2[i]; i++) h2[i] = (char)(h2[i] >= 'a' ? h2[i] - 32 : h2[i]); /* upper */
    CU_ASSERT_EQUAL(tt_auth_add(a, "ops", h2, "admin", &e), TT_OK);
    CU_ASSERT_EQUAL(tt_auth_add(a, "ci", h2, "read", &e), TT_EEXISTS);     /* same name */
    CU_ASSERT_EQUAL(tt_auth_add(a, "ci2", h1, "read", &e), TT_EEXISTS);    /* same hash */
    CU_ASSERT_EQUAL(tt_auth_add(a, "x", "abc", "read", &e), TT_EINVAL);   /* short */
    char bad[65];
    memcpy(bad, h1, 65);
    bad[10] = 'g';
    CU_ASSERT_EQUAL(tt_auth_add(a, "x", bad, "read", &e), TT_EINVAL);     /* not hex */
    CU_ASSERT_EQUAL(tt_auth_add(a, "y", "0000000000000000000000000000000000000000000000000000000000000000", "fly", &e), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_auth_add(a, "", h1, "read", &e), TT_EINVAL);
    static const char *const bad_names[] = {"a b", "a\nb", "a\tb", "ab\x7f", " "};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        CU_ASSERT_EQUAL(tt_auth_add(a, bad_names[i], "1111111111111111111111111111111111111111111111111111111111111111", "read", &e), TT_EINVAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "spaces or control characters"));
    }
    CU_ASSERT_EQUAL(tt_auth_count(a), 2);
    char name[64];
    int scopes = 0;
    CU_ASSERT_EQUAL(tt_auth_check(a, "s1", 2, name, &scopes), TT_OK);
    CU_ASSERT_STRING_EQUAL(name, "ci");
    CU_ASSERT_EQUAL(scopes, TT_SCOPE_READ | TT_SCOPE_TUNE);
    CU_ASSERT_EQUAL(tt_auth_check(a, "s2", 2, name, &scopes), TT_OK);
    CU_ASSERT_STRING_EQUAL(name, "ops");
    CU_ASSERT(scopes & TT_SCOPE_ADMIN);
    CU_ASSERT_EQUAL(tt_auth_check(a, "s3", 2, name, &scopes), TT_EUNAUTH);
    CU_ASSERT_EQUAL(tt_auth_check(a, "s1 ", 3, name, &scopes), TT_EUNAUTH);
    CU_ASSERT_EQUAL(tt_auth_check(a, "", 0, name, &scopes), TT_EUNAUTH);
    CU_ASSERT_EQUAL(tt_auth_check(NULL, "s1", 2, name, &scopes), TT_EUNAUTH);
    tt_auth_free(a);
    tt_auth_free(NULL);
}

static void test_bearer(void)
{
    size_t n = 0;
    const char *p = tt_auth_bearer("Bearer abc", &n);
    CU_ASSERT(p && n == 3 && !strncmp(p, "abc", 3));
    p = tt_auth_bearer("bearer   tok en  ", &n);
    CU_ASSERT(p && n == 6 && !strncmp(p, "tok en", 6));
    CU_ASSERT_PTR_NULL(tt_auth_bearer("Basic dXNlcjpwYXNz", &n));
    CU_ASSERT_PTR_NULL(tt_auth_bearer("Bearer ", &n));
    CU_ASSERT_PTR_NULL(tt_auth_bearer("Bearer", &n));
    CU_ASSERT_PTR_NULL(tt_auth_bearer(NULL, &n));
}

static const tt_test_case cases[] = {{"sha256_vectors", test_sha256_vectors},
                                     {"ct_equal", test_ct_equal},
                                     {"scopes", test_scopes},
                                     {"token_set", test_token_set},
                                     {"bearer", test_bearer},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"auth", NULL, NULL, cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

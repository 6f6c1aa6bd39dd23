/* SPDX-License-Identifier: MIT
 * test_config.c - the declarative config table: defaults, precedence default < file < env <
 * flag with sources, invalid values (tests/data/config/invalid.json), the generated help and
 * sample, and deploy/tiletune.conf.sample checked against the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "jsonutil.h"
#include "tt_test.h"

static char *g_tmp;

static int suite_init(void)
{
    g_tmp = tt_test_tmpdir("tt-config");
    return g_tmp ? 0 : 1;
}

static int suite_clean(void)
{
    tt_test_rmrf(g_tmp);
    free(g_tmp);
    return 0;
}

static char *write_tmp(const char *name, const char *text)
{
    size_t n = strlen(g_tmp) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", g_tmp, name);
    FILE *f = fopen(p, "w");
    if (f) { fputs(text, f); fclose(f); }
    return p;
}

static void test_defaults(void)
{
    tt_config c;
    CU_ASSERT_EQUAL_FATAL(tt_config_init(&c), TT_OK);
    for (int i = 0; i < TT_CFG__COUNT; i++) CU_ASSERT_EQUAL(c.v[i].source, TT_CFGS_DEFAULT);
    CU_ASSERT_STRING_EQUAL(tt_config_str(&c, TT_CFG_LISTEN), "127.0.0.1:7878");
    CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_WORKERS), 2);
    CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_OPEN_READS), 1);
    CU_ASSERT_DOUBLE_EQUAL(tt_config_num(&c, TT_CFG_MAX_SPACE), 1e7, 1e-6);
    CU_ASSERT(json_is_array(tt_config_json(&c, TT_CFG_TOKENS)));
    CU_ASSERT_EQUAL(tt_config_find("max_body_bytes"), TT_CFG_MAX_BODY_BYTES);
    CU_ASSERT_EQUAL(tt_config_find("max-body-bytes"), TT_CFG_MAX_BODY_BYTES);
    CU_ASSERT_EQUAL(tt_config_find("max_body"), -1);
    tt_config_close(&c);
}

static void test_precedence(void)
{
    tt_config c;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL_FATAL(tt_config_init(&c), TT_OK);
    char *f = write_tmp("p.json", "{\"workers\": 5, \"listen\": \"0.0.0.0:1234\", "
                                  "\"db\": \"sqlite:/x.db\", \"_comment\": \"ignored\"}");
    CU_ASSERT_EQUAL(tt_config_load_file(&c, f, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_WORKERS), 5);
    CU_ASSERT_EQUAL(c.v[TT_CFG_WORKERS].source, TT_CFGS_FILE);
    CU_ASSERT_STRING_EQUAL(c.v[TT_CFG_WORKERS].origin, f);
    setenv("TILETUNE_WORKERS", "7", 1);
    setenv("TILETUNE_DB", "sqlite:/env.db", 1);
    CU_ASSERT_EQUAL(tt_config_load_env(&c, &e), TT_OK);
    unsetenv("TILETUNE_WORKERS");
    unsetenv("TILETUNE_DB");
    CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_WORKERS), 7);
    CU_ASSERT_EQUAL(c.v[TT_CFG_WORKERS].source, TT_CFGS_ENV);
    CU_ASSERT_STRING_EQUAL(c.v[TT_CFG_WORKERS].origin, "TILETUNE_WORKERS");
    CU_ASSERT_EQUAL(tt_config_set(&c, TT_CFG_WORKERS, "9", TT_CFGS_FLAG, "--workers", &e), TT_OK);
    CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_WORKERS), 9);
    CU_ASSERT_EQUAL(c.v[TT_CFG_WORKERS].source, TT_CFGS_FLAG);
    CU_ASSERT_STRING_EQUAL(tt_config_str(&c, TT_CFG_LISTEN), "0.0.0.0:1234");
    CU_ASSERT_EQUAL(c.v[TT_CFG_LISTEN].source, TT_CFGS_FILE);
    CU_ASSERT_STRING_EQUAL(tt_config_str(&c, TT_CFG_DB), "sqlite:/env.db");
    /* a bad flag leaves the old value */
    CU_ASSERT_EQUAL(tt_config_set(&c, TT_CFG_WORKERS, "many", TT_CFGS_FLAG, "--workers", &e),
                    TT_ECONFIG);
    CU_ASSERT_STRING_EQUAL(e.path, "workers");
    CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_WORKERS), 9);
    CU_ASSERT_EQUAL(tt_config_set(&c, TT_CFG_OPEN_READS, "off", TT_CFGS_FLAG, "", &e), TT_OK);
    CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_OPEN_READS), 0);
    CU_ASSERT_EQUAL(tt_config_set(&c, TT_CFG_OPEN_READS, "maybe", TT_CFGS_FLAG, "", &e), TT_ECONFIG);
    /* bad environment */
    setenv("TILETUNE_MAX_SPACE", "lots", 1);
    CU_ASSERT_EQUAL(tt_config_load_env(&c, &e), TT_ECONFIG);
    unsetenv("TILETUNE_MAX_SPACE");
    /* show: sources kept, token hashes redacted */
    CU_ASSERT_EQUAL(tt_config_set(&c, TT_CFG_TOKENS,
                                  "[{\"name\":\"ci\",\"secret_sha256\":\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\"scopes\":\"tune\"}]",
                                  TT_CFGS_FLAG, "--tokens", &e), TT_OK);
    json_t *j = tt_config_to_json(&c, 1, 1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(j, "workers"), "source")), "flag");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(j, "listen"), "source")), "file");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(j, "max_space"), "source")), "default");
    char *s = tt_json_dumps(j, 0);
    CU_ASSERT(s && strstr(s, "e3b0c442") == NULL && strstr(s, "***") != NULL);
    free(s);
    json_decref(j);
    tt_config_close(&c);
    free(f);
}

/* The database URL as logged and shown (GET /v1/config, config --show): no password. */
static void test_url_redact(void)
{
    static const struct { const char *in, *out; } rows[] = {
        {"sqlite:tiletune.db", "sqlite:tiletune.db"},
        {"postgresql://tiletune@db/tt", "postgresql://tiletune@db/tt"},
        {"postgresql://tiletune:PW@db.example:5432/tiletune",
         "postgresql://tiletune:***@db.example:5432/tiletune"},
        {"postgres://u:p%40ss:w@h/d?sslmode=require", "postgres://u:***@h/d?sslmode=require"},
        {"postgresql://u@h/d?password=PW&sslmode=disable", "postgresql://u@h/d?password=***&sslmode=disable"},
        {"postgresql:///d?host=/run/pg&password=PW", "postgresql:///d?host=/run/pg&password=***"},
        {"postgresql://u@h/d?mypassword=x", "postgresql://u@h/d?mypassword=x"},
        {"host=db user=u password='a b' dbname=d", "host=db user=u password=*** dbname=d"},
        {"postgresql://h:5432/d", "postgresql://h:5432/d"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char buf[256];
        CU_ASSERT_STRING_EQUAL(tt_config_url_redact(rows[i].in, buf, sizeof buf), rows[i].out);
        if (strcmp(buf, rows[i].out)) fprintf(stderr, "\n%s -> %s\n", rows[i].in, buf);
    }
    char small[12];   /* cut short, never past the buffer */
    CU_ASSERT_STRING_EQUAL(tt_config_url_redact("postgresql://u:PW@h/d", small, sizeof small),
                           "postgresql:");
    tt_config c;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_config_init(&c), TT_OK);
    CU_ASSERT_EQUAL(tt_config_set(&c, TT_CFG_DB, "postgresql://tt:PW@h/d", TT_CFGS_ENV,
                                  "TILETUNE_DB", &e), TT_OK);
    json_t *shown = tt_config_to_json(&c, 0, 1), *full = tt_config_to_json(&c, 0, 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(shown, "db")), "postgresql://tt:***@h/d");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(full, "db")), "postgresql://tt:PW@h/d");
    json_decref(shown);
    json_decref(full);
    tt_config_close(&c);
}

static void test_invalid_files(void)
{
    json_t *cases = tt_test_load_json("tests/data/config/invalid.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cases);
    CU_ASSERT(json_array_size(cases) >= 20);
    size_t i;
    json_t *tc;
    json_array_foreach(cases, i, tc) {
        tt_config c;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        CU_ASSERT_EQUAL_FATAL(tt_config_init(&c), TT_OK);
        char *text = tt_json_dumps(json_object_get(tc, "file"), JSON_ENCODE_ANY);
        char *f = write_tmp("bad.json", text);
        tt_rc rc = tt_config_load_file(&c, f, &e);
        const char *want = json_string_value(json_object_get(tc, "code"));
        const char *wpath = json_string_value(json_object_get(tc, "path"));
        if (strcmp(tt_rc_code(rc), want) || strcmp(e.path, wpath))
            fprintf(stderr, "\n[%s] got %s at \"%s\" (%s), want %s at \"%s\"\n",
                    json_string_value(json_object_get(tc, "name")), tt_rc_code(rc), e.path,
                    e.msg, want, wpath);
        CU_ASSERT_STRING_EQUAL(tt_rc_code(rc), want);
        CU_ASSERT_STRING_EQUAL(e.path, wpath);
        CU_ASSERT(e.msg[0] != '\0');
        /* the defaults of keys the file did not reach are untouched */
        CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_MAX_JSON_DEPTH), 64);
        tt_config_close(&c);
        free(text);
        free(f);
    }
    json_decref(cases);
    /* unreadable and malformed files */
    tt_config c;
    tt_errinfo e;
    CU_ASSERT_EQUAL_FATAL(tt_config_init(&c), TT_OK);
    CU_ASSERT_EQUAL(tt_config_load_file(&c, "/nonexistent/tiletune.conf", &e), TT_EIO);
    char *f = write_tmp("mal.json", "{\"workers\": 2,");
    CU_ASSERT_EQUAL(tt_config_load_file(&c, f, &e), TT_EJSON);
    free(f);
    /* a file an editor on Windows saved with a byte order mark is read as written */
    f = write_tmp("bom.json", "\xEF\xBB\xBF{\"workers\": 3}\n");
    CU_ASSERT_EQUAL(tt_config_load_file(&c, f, &e), TT_OK);
    CU_ASSERT_EQUAL(tt_config_int(&c, TT_CFG_WORKERS), 3);
    free(f);
    tt_config_close(&c);
}

static void test_listen_split(void)
{
    char host[64];
    int port = -1;
    CU_ASSERT_EQUAL(tt_config_split_listen("127.0.0.1:7878", host, sizeof host, &port), TT_OK);
    CU_ASSERT_STRING_EQUAL(host, "127.0.0.1");
    CU_ASSERT_EQUAL(port, 7878);
    CU_ASSERT_EQUAL(tt_config_split_listen("[::1]:80", host, sizeof host, &port), TT_OK);
    CU_ASSERT_STRING_EQUAL(host, "::1");
    CU_ASSERT_EQUAL(tt_config_split_listen("localhost:0", host, sizeof host, &port), TT_OK);
    CU_ASSERT_EQUAL(port, 0);
    CU_ASSERT_EQUAL(tt_config_split_listen(":80", host, sizeof host, &port), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_config_split_listen("h:", host, sizeof host, &port), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_config_split_listen("h:-1", host, sizeof host, &port), TT_EINVAL);
    CU_ASSERT_EQUAL(tt_config_split_listen("h:80x", host, sizeof host, &port), TT_EINVAL);
}

static void test_help_and_sample(void)
{
    char *h = tt_config_help_text();
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    for (int i = 0; i < TT_CFG__COUNT; i++) {
        const tt_cfg_row *r = tt_config_row((tt_cfg_id)i);
        char flag[64];
        snprintf(flag, sizeof flag, "--%s", r->key);
        for (char *p = flag; *p; p++)
            if (*p == '_') *p = '-';
        CU_ASSERT(strstr(h, flag) != NULL);
        CU_ASSERT(strstr(h, r->env) != NULL);
        CU_ASSERT(strstr(h, r->help) != NULL);
    }
    free(h);
    /* the generated sample loads, and so does the one in deploy/ */
    char *s = tt_config_sample_text();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    char *f = write_tmp("sample.json", s);
    tt_config c;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    CU_ASSERT_EQUAL_FATAL(tt_config_init(&c), TT_OK);
    CU_ASSERT_EQUAL(tt_config_load_file(&c, f, &e), TT_OK);
    tt_config_close(&c);
    json_t *gen = json_loads(s, 0, NULL);
    free(s);
    free(f);
    char *dp = tt_test_src("deploy/tiletune.conf.sample");
    json_t *dep = json_load_file(dp, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
    CU_ASSERT_EQUAL_FATAL(tt_config_init(&c), TT_OK);
    CU_ASSERT_EQUAL(tt_config_load_file(&c, dp, &e), TT_OK);
    tt_config_close(&c);
    /* same keys as the table, in table order, values of the same JSON type */
    CU_ASSERT_EQUAL(json_object_size(dep), TT_CFG__COUNT);
    for (int i = 0; i < TT_CFG__COUNT; i++) {
        const char *key = tt_config_row((tt_cfg_id)i)->key;
        json_t *a = json_object_get(dep, key), *b = json_object_get(gen, key);
        if (!a) fprintf(stderr, "\ndeploy/tiletune.conf.sample lacks \"%s\"\n", key);
        CU_ASSERT_PTR_NOT_NULL(a);
        if (a && b) {
            int ta = json_typeof(a), tb = json_typeof(b);
            if (ta == JSON_INTEGER && tb == JSON_REAL) ta = JSON_REAL;
            if (ta == JSON_TRUE || ta == JSON_FALSE) ta = JSON_TRUE;
            if (tb == JSON_TRUE || tb == JSON_FALSE) tb = JSON_TRUE;
            CU_ASSERT_EQUAL(ta, tb);
        }
    }
    /* it is the file systemd/README.md installs as /etc/tiletune/tiletune.conf: its paths
     * are the installed ones, never a build tree's (it had /work/wt/front/templates) */
    static const struct { const char *key, *prefix; } paths[] = {
        {"db", "sqlite:/var/lib/tiletune/"},         {"work_dir", "/var/cache/tiletune"},
        {"templates_dir", "/usr/share/tiletune/"},   {"targets_dir", "/usr/share/tiletune/"},
        {"datasets_dir", "/usr/share/tiletune/"},
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        const char *v = json_string_value(json_object_get(dep, paths[i].key));
        if (!v || strncmp(v, paths[i].prefix, strlen(paths[i].prefix)))
            fprintf(stderr, "\nsample %s: %s, want %s...\n", paths[i].key, v ? v : "(none)",
                    paths[i].prefix);
        CU_ASSERT(v && !strncmp(v, paths[i].prefix, strlen(paths[i].prefix)));
    }
    json_decref(dep);
    json_decref(gen);
    free(dp);
}

static const tt_test_case cases[] = {{"defaults", test_defaults},
                                     {"precedence", test_precedence},
                                     {"invalid_files", test_invalid_files},
                                     {"url_redact", test_url_redact},
                                     {"listen_split", test_listen_split},
                                     {"help_and_sample", test_help_and_sample},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"config", suite_init, suite_clean, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }

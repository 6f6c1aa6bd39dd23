/* SPDX-License-Identifier: MIT
 * ci_fixture.c - the hand-built server and handler calls of the CI / data-exchange tests.
 */
#include "ci_fixture.h"
#include "jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_test.h"

const char *tt_cfx_js(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

tt_server tt_cfx_srv;
tt_server tt_cfx_srv_template;   /* limits and runner config, without store and catalog */
char *tt_cfx_dir;
const tt_template *tt_cfx_gemm;
const tt_target *tt_cfx_a2;

int tt_cfx_init(void)
{
    tt_cfx_dir = tt_test_tmpdir("tt-ci-api");
    if (!tt_cfx_dir) return -1;
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s/tt.db", tt_cfx_dir);
    char *tdir = tt_test_src("templates"), *gdir = tt_test_src("costmodel/targets");
    char *ddir = tt_test_shared("datasets");
    tt_errinfo err;
    tt_errinfo_clear(&err);
    memset(&tt_cfx_srv, 0, sizeof tt_cfx_srv);
    int rc = tt_store_open(url, &tt_cfx_srv.store, &err) || tt_catalog_new(tdir, gdir, &tt_cfx_srv.catalog, &err) ||
             tt_catalog_sync(tt_cfx_srv.catalog, tt_cfx_srv.store);
    free(tdir);
    free(gdir);
    if (rc) { fprintf(stderr, "init: %s %s\n", err.path, err.msg); free(ddir); return -1; }
    tt_cfx_srv.runner_cfg.catalog = tt_cfx_srv.catalog;
    tt_cfx_srv.runner_cfg.datasets_dir = ddir;   /* freed in cleanup */
    tt_cfx_srv.runner_cfg.work_dir = tt_cfx_dir;
    tt_cfx_srv.runner_cfg.repeats = 1;
    tt_cfx_srv.max_body_bytes = 64 << 20;
    tt_cfx_srv.max_json_depth = 64;
    tt_cfx_srv.max_space = 1e7;
    tt_cfx_srv.max_jobs_per_token = 100;
    tt_cfx_srv.open_reads = 1;
    tt_cfx_srv_template = tt_cfx_srv;
    tt_cfx_srv_template.store = NULL;
    tt_cfx_srv_template.catalog = NULL;
    if (tt_catalog_template(tt_cfx_srv.catalog, tt_cfx_srv.store, "gemm", NULL, &tt_cfx_gemm, &err)) return -1;
    tt_cfx_a2 = tt_catalog_target(tt_cfx_srv.catalog, "a2");
    return tt_cfx_a2 ? 0 : -1;
}

int tt_cfx_cleanup(void)
{
    tt_catalog_free(tt_cfx_srv.catalog);
    tt_store_close(tt_cfx_srv.store);
    free((char *)tt_cfx_srv.runner_cfg.datasets_dir);
    if (CU_get_number_of_failures() == 0) tt_test_rmrf(tt_cfx_dir);
    else fprintf(stderr, "keeping %s\n", tt_cfx_dir);
    free(tt_cfx_dir);
    return 0;
}

void tt_cfx_call(void (*fn)(tt_server *, const tt_req *, tt_resp *), const char *method,
                 const char *body, json_t *query, tt_resp *resp)
{
    tt_req req;
    memset(&req, 0, sizeof req);
    req.method = method;
    req.path = "/v1/test";
    json_t *q = query ? query : json_object();
    req.query = q;
    json_t *b = body ? json_loads(body, 0, NULL) : NULL;
    if (body && fn != tt_api_import) CU_ASSERT_PTR_NOT_NULL(b);
    req.body = b;
    req.raw_body = body;
    req.raw_len = body ? strlen(body) : 0;
    req.token_name = "tester";
    req.scopes = TT_SCOPE_TUNE;
    memset(resp, 0, sizeof *resp);
    resp->status = 200;
    fn(&tt_cfx_srv, &req, resp);
    json_decref(b);
    json_decref(q);
}

void tt_cfx_resp_clear(tt_resp *r)
{
    json_decref(r->json);
    free(r->text);
    memset(r, 0, sizeof *r);
}

const char *tt_cfx_err_code(const tt_resp *r)
{
    const char *c = json_string_value(json_object_get(json_object_get(r->json, "error"), "code"));
    return c ? c : "";
}
const char *tt_cfx_err_path(const tt_resp *r)
{
    const char *c = json_string_value(json_object_get(json_object_get(r->json, "error"), "path"));
    return c ? c : "";
}

void tt_cfx_record(const tt_template *t, const int64_t *slots, const char *fp, double median,
                   double spread, int64_t job, int64_t seq)
{
    char pkey[512], ckey[512];
    tt_tmpl_problem_key(t, slots, pkey, sizeof pkey);
    tt_tmpl_config_key(t, slots, ckey, sizeof ckey);
    tt_trial tr;
    memset(&tr, 0, sizeof tr);
    tr.config_key = strdup(ckey);
    tr.config_hash = tt_tmpl_config_hash(t, slots);
    json_t *cj = tt_tmpl_config_json(t, slots);
    tr.config_json = tt_json_dumps(cj, JSON_COMPACT);
    json_decref(cj);
    tr.status = TT_OK;
    tr.median_us = tr.min_us = median;
    tr.spread_us = spread;
    tt_trial_key k = {t->hash, pkey, tt_cfx_a2->name, fp};
    CU_ASSERT_EQUAL(tt_store_trial_record(tt_cfx_srv.store, &k, t->name, job, seq, &tr), TT_OK);
    tt_trial_clear(&tr);
}

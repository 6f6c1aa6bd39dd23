/* SPDX-License-Identifier: MIT
 * config.c - parse, validate and show the daemon's configuration from the one table.
 */
#include "config.h"
#include "suggest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "backend.h"
#include "jsonutil.h"
#include "log.h"

typedef tt_rc (*tt_cfg_validate_fn)(const tt_cfg_value *v, tt_errinfo *err);

static const struct {
    tt_cfg_row row;
    tt_cfg_validate_fn validate;
} tt_cfg_rows[TT_CFG__COUNT] = {
#define TT_X_CFG_ROW(id, key, type, def, lo, hi, val, env, help) \
    {{key, TT_CFGT_##type, def, lo, hi, env, help}, val},
    TT_CONFIG_TABLE(TT_X_CFG_ROW)
#undef TT_X_CFG_ROW
};

const tt_cfg_row *tt_config_row(tt_cfg_id id)
{
    return ((int)id >= 0 && id < TT_CFG__COUNT) ? &tt_cfg_rows[id].row : NULL;
}

const char *tt_cfg_source_name(tt_cfg_source s)
{
    static const char *const n[] = {"default", "file", "env", "flag"};
    return ((int)s >= 0 && s <= TT_CFGS_FLAG) ? n[s] : "?";
}

const char *tt_config_suggest(const char *key)
{
    if (!key) return NULL;
    char k[64];
    size_t n = 0;
    for (; key[n] && n < sizeof k - 1; n++) k[n] = key[n] == '-' ? '_' : key[n];
    if (key[n]) return NULL;
    const char *keys[TT_CFG__COUNT];
    for (int i = 0; i < TT_CFG__COUNT; i++) keys[i] = tt_cfg_rows[i].row.key;
    return tt_suggest(k, n, keys, TT_CFG__COUNT);
}

int tt_config_find(const char *key)
{
    if (!key) return -1;
    for (int i = 0; i < TT_CFG__COUNT; i++) {
        const char *k = tt_cfg_rows[i].row.key;
        size_t j = 0;
        for (; k[j] && key[j]; j++)
            if (!(k[j] == key[j] || (k[j] == '_' && key[j] == '-'))) break;
        if (!k[j] && !key[j]) return i;
    }
    return -1;
}

/* ---- validators --------------------------------------------------------------------- */
tt_rc tt_config_split_listen(const char *listen, char *host, size_t cap, int *port)
{
    if (!listen || !*listen) return TT_EINVAL;
    const char *colon = strrchr(listen, ':');
    if (!colon) return TT_EINVAL;
    const char *h = listen;
    size_t hl = (size_t)(colon - listen);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') { h++; hl -= 2; }
    if (hl == 0 || hl >= cap) return TT_EINVAL;
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || p < 0 || p > 65535) return TT_EINVAL;
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)p;
    return TT_OK;
}

tt_rc tt__cfgv_listen(const tt_cfg_value *v, tt_errinfo *err)
{
    char host[128];
    int port;
    if (tt_config_split_listen(v->s, host, sizeof host, &port))
        return tt_errf(err, TT_ECONFIG, "listen", "expected HOST:PORT, got \"%.64s\"", v->s);
    return TT_OK;
}

tt_rc tt__cfgv_nonempty(const tt_cfg_value *v, tt_errinfo *err)
{
    if (!v->s || !*v->s) return tt_errf(err, TT_ECONFIG, NULL, "must not be empty");
    return TT_OK;
}

tt_rc tt__cfgv_loglevel(const tt_cfg_value *v, tt_errinfo *err)
{
    if (tt_log_level_parse(v->s) < 0)
        return tt_errf(err, TT_ECONFIG, "log_level",
                       "unknown level \"%.32s\" (debug, info, notice, warning, error, fatal)",
                       v->s);
    return TT_OK;
}

tt_rc tt__cfgv_tokens(const tt_cfg_value *v, tt_errinfo *err)
{
    if (!json_is_array(v->j)) return tt_errf(err, TT_ECONFIG, "tokens", "must be an array");
    tt_auth *a = tt_auth_new();
    if (!a) return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    size_t i;
    json_t *t;
    tt_rc rc = TT_OK;
    json_array_foreach(v->j, i, t) {
        char path[48];
        snprintf(path, sizeof path, "tokens[%zu]", i);
        const char *name = json_string_value(json_object_get(t, "name"));
        const char *sha = json_string_value(json_object_get(t, "secret_sha256"));
        const char *scopes = json_string_value(json_object_get(t, "scopes"));
        if (!json_is_object(t) || !name || !sha || !scopes) {
            rc = tt_errf(err, TT_ECONFIG, path,
                         "need {\"name\", \"secret_sha256\", \"scopes\"} strings");
            break;
        }
        const char *k;
        json_t *x;
        json_object_foreach(t, k, x) {
            if (strcmp(k, "name") && strcmp(k, "secret_sha256") && strcmp(k, "scopes")) {
                rc = tt_errf(err, TT_ECONFIG, path, "unknown key \"%.32s\"", k);
                break;
            }
        }
        if (rc) break;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        if (tt_auth_add(a, name, sha, scopes, &e)) {
            rc = tt_errf(err, TT_ECONFIG, path, "%s", e.msg);
            break;
        }
    }
    tt_auth_free(a);
    return rc;
}

tt_rc tt__cfgv_toolchains(const tt_cfg_value *v, tt_errinfo *err)
{
    if (!json_is_object(v->j))
        return tt_errf(err, TT_ECONFIG, "toolchains", "must be an object of toolchains");
    const char *k;
    json_t *tc;
    json_object_foreach(v->j, k, tc) {   /* as the cmd: backend will read it */
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_backend_cmd_check(k, tc, &e);
        if (rc) return tt_errf(err, rc == TT_ENOMEM ? rc : TT_ECONFIG, e.path, "%s", e.msg);
    }
    return TT_OK;
}

/* ---- values ------------------------------------------------------------------------- */
static void tt_cfg_value_free(tt_cfg_value *v)
{
    free(v->s);
    v->s = NULL;
    json_decref(v->j);
    v->j = NULL;
}

/* Parse text for row into *out (fresh).  TT_ECONFIG with a message when it does not parse. */
static tt_rc tt_cfg_parse(const tt_cfg_row *row, const char *text, tt_cfg_value *out,
                          tt_errinfo *err)
{
    memset(out, 0, sizeof *out);
    char *end;
    switch (row->type) {
    case TT_CFGT_STR:
        out->s = strdup(text);
        return out->s ? TT_OK : tt_errf(err, TT_ENOMEM, row->key, "out of memory");
    case TT_CFGT_INT: {
        errno = 0;
        long long x = strtoll(text, &end, 10);
        if (errno || end == text || *end)
            return tt_errf(err, TT_ECONFIG, row->key, "not an integer: \"%.32s\"", text);
        if ((double)x < row->lo || (double)x > row->hi)
            return tt_errf(err, TT_ECONFIG, row->key, "%lld is outside %.0f..%.0f", x, row->lo,
                           row->hi);
        out->i = x;
        return TT_OK;
    }
    case TT_CFGT_NUM: {
        errno = 0;
        double x = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(x))
            return tt_errf(err, TT_ECONFIG, row->key, "not a number: \"%.32s\"", text);
        if (x < row->lo || x > row->hi)
            return tt_errf(err, TT_ECONFIG, row->key, "%g is outside %g..%g", x, row->lo,
                           row->hi);
        out->d = x;
        return TT_OK;
    }
    case TT_CFGT_BOOL:
        if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes") ||
            !strcmp(text, "on"))
            out->i = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no") ||
                 !strcmp(text, "off"))
            out->i = 0;
        else
            return tt_errf(err, TT_ECONFIG, row->key, "not a boolean: \"%.32s\"", text);
        return TT_OK;
    case TT_CFGT_JSON: {
        json_error_t je;
        out->j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
        if (!out->j)
            return tt_errf(err, TT_ECONFIG, row->key, "not JSON: %s (column %d)", je.text,
                           je.column);
        return TT_OK;
    }
    }
    return tt_errf(err, TT_EINTERNAL, row->key, "bad row type");
}

static tt_rc tt_cfg_assign(tt_config *c, tt_cfg_id id, tt_cfg_value *nv, tt_cfg_source src,
                           const char *origin, tt_errinfo *err)
{
    const tt_cfg_row *row = &tt_cfg_rows[id].row;
    if (tt_cfg_rows[id].validate) {
        tt_errinfo e;
        tt_errinfo_clear(&e);
        tt_rc rc = tt_cfg_rows[id].validate(nv, &e);
        if (rc) {
            tt_cfg_value_free(nv);
            return tt_errf(err, rc, e.path[0] ? e.path : row->key, "%s", e.msg);
        }
    }
    tt_cfg_value_free(&c->v[id]);
    nv->source = src;
    snprintf(nv->origin, sizeof nv->origin, "%s", origin ? origin : "");
    c->v[id] = *nv;
    return TT_OK;
}

tt_rc tt_config_set(tt_config *c, tt_cfg_id id, const char *text, tt_cfg_source src,
                    const char *origin, tt_errinfo *err)
{
    if ((int)id < 0 || id >= TT_CFG__COUNT || !text)
        return tt_errf(err, TT_EINVAL, NULL, "bad config key or value");
    tt_cfg_value nv;
    tt_rc rc = tt_cfg_parse(&tt_cfg_rows[id].row, text, &nv, err);
    if (rc) { tt_cfg_value_free(&nv); return rc; }
    return tt_cfg_assign(c, id, &nv, src, origin, err);
}

tt_rc tt_config_init(tt_config *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < TT_CFG__COUNT; i++) {
        tt_rc rc = tt_config_set(c, (tt_cfg_id)i, tt_cfg_rows[i].row.def, TT_CFGS_DEFAULT,
                                 "", NULL);
        if (rc) return rc;
    }
    return TT_OK;
}

void tt_config_close(tt_config *c)
{
    if (!c) return;
    for (int i = 0; i < TT_CFG__COUNT; i++) tt_cfg_value_free(&c->v[i]);
}

tt_rc tt_config_load_json(tt_config *c, const json_t *obj, const char *origin,
                          tt_errinfo *err)
{
    if (!json_is_object(obj))
        return tt_errf(err, TT_ECONFIG, "", "a config file is a JSON object");
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)obj, k, x) {
        if (k[0] == '_' || k[0] == '#') continue;    /* "_comment" keys are allowed */
        int id = tt_config_find(k);
        if (id < 0 || strchr(k, '-')) {
            const char *hint = tt_config_suggest(k);
            char ph[96];
            return tt_errf(err, TT_ECONFIG, k, "unknown configuration key%s",
                           tt_suggest_phrase(ph, sizeof ph, hint, NULL));
        }
        const tt_cfg_row *row = &tt_cfg_rows[id].row;
        tt_cfg_value nv;
        memset(&nv, 0, sizeof nv);
        tt_rc rc = TT_OK;
        switch (row->type) {
        case TT_CFGT_STR:
            if (!json_is_string(x)) rc = tt_errf(err, TT_ECONFIG, k, "must be a string");
            else if (!(nv.s = strdup(json_string_value(x))))
                rc = tt_errf(err, TT_ENOMEM, k, "out of memory");
            break;
        case TT_CFGT_INT:
            if (!json_is_integer(x)) rc = tt_errf(err, TT_ECONFIG, k, "must be an integer");
            else if ((double)json_integer_value(x) < row->lo ||
                     (double)json_integer_value(x) > row->hi)
                rc = tt_errf(err, TT_ECONFIG, k, "%lld is outside %.0f..%.0f",
                             (long long)json_integer_value(x), row->lo, row->hi);
            else nv.i = json_integer_value(x);
            break;
        case TT_CFGT_NUM:
            if (!json_is_number(x)) rc = tt_errf(err, TT_ECONFIG, k, "must be a number");
            else if (json_number_value(x) < row->lo || json_number_value(x) > row->hi)
                rc = tt_errf(err, TT_ECONFIG, k, "%g is outside %g..%g", json_number_value(x),
                             row->lo, row->hi);
            else nv.d = json_number_value(x);
            break;
        case TT_CFGT_BOOL:
            if (!json_is_boolean(x)) rc = tt_errf(err, TT_ECONFIG, k, "must be true or false");
            else nv.i = json_is_true(x);
            break;
        case TT_CFGT_JSON:
            nv.j = json_incref(x);
            break;
        }
        if (rc) { tt_cfg_value_free(&nv); return rc; }
        rc = tt_cfg_assign(c, (tt_cfg_id)id, &nv, TT_CFGS_FILE, origin, err);
        if (rc) return rc;
    }
    return TT_OK;
}

tt_rc tt_config_load_file(tt_config *c, const char *path, tt_errinfo *err)
{
    json_error_t je;
    FILE *f = fopen(path, "rb");
    if (!f) return tt_errf(err, TT_EIO, path, "cannot open: %s", strerror(errno));
    json_t *obj = tt_json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!obj)
        return tt_errf(err, TT_EJSON, path, "line %d column %d: %s", je.line, je.column,
                       je.text);
    tt_rc rc = tt_config_load_json(c, obj, path, err);
    json_decref(obj);
    return rc;
}

tt_rc tt_config_load_env(tt_config *c, tt_errinfo *err)
{
    for (int i = 0; i < TT_CFG__COUNT; i++) {
        const char *val = getenv(tt_cfg_rows[i].row.env);
        if (!val) continue;
        tt_rc rc = tt_config_set(c, (tt_cfg_id)i, val, TT_CFGS_ENV, tt_cfg_rows[i].row.env, err);
        if (rc) return rc;
    }
    return TT_OK;
}

/* ---- output ------------------------------------------------------------------------- */
/* Length of the password value at v ("'quoted'" as libpq's key=value form allows, else up
 * to a space, '&' or '#'). */
static size_t tt_pw_len(const char *v)
{
    if (*v == '\'') {
        const char *e = strchr(v + 1, '\'');
        return e ? (size_t)(e - v) + 1 : strlen(v);
    }
    return strcspn(v, " &#");
}

const char *tt_config_url_redact(const char *url, char *out, size_t cap)
{
    if (!cap) return out;
    size_t o = 0, n = strlen(url ? url : "");
    const char *sch = url ? strstr(url, "://") : NULL;
    size_t auth = sch ? (size_t)(sch - url) + 3 : n, auth_end = auth + strcspn(url + auth, "/?#");
    const char *at = NULL;   /* the userinfo's end: the last '@' of the authority */
    for (size_t i = auth; sch && i < auth_end; i++)
        if (url[i] == '@') at = url + i;
    const char *colon = at ? memchr(url + auth, ':', (size_t)(at - url) - auth) : NULL;
    for (size_t i = 0; i < n && o + 1 < cap;) {
        const char *p = url + i;
        size_t skip = 0;
        if (colon && p == colon + 1) {
            skip = (size_t)(at - p);
        } else if (strncmp(p, "password=", 9) == 0 &&
                   (i == 0 || strchr(" ?&", url[i - 1]))) {
            size_t k = 9;
            for (; k && o + 1 < cap; k--) out[o++] = *p++;
            i += 9;
            skip = tt_pw_len(p);
        }
        if (skip) {
            for (const char *m = "***"; *m && o + 1 < cap; m++) out[o++] = *m;
            i += skip;
            continue;
        }
        out[o++] = url[i++];
    }
    out[o] = '\0';
    return out;
}

static json_t *tt_cfg_value_json(const tt_cfg_row *row, const tt_cfg_value *v, int redact)
{
    switch (row->type) {
    case TT_CFGT_STR:
        if (redact && v->s && strcmp(row->key, "db") == 0) {
            char buf[2048];
            return json_string(tt_config_url_redact(v->s, buf, sizeof buf));
        }
        return json_string(v->s ? v->s : "");
    case TT_CFGT_INT: return json_integer(v->i);
    case TT_CFGT_NUM: return json_real(v->d);
    case TT_CFGT_BOOL: return json_boolean(v->i);
    case TT_CFGT_JSON: {
        json_t *j = json_deep_copy(v->j);
        if (redact && json_is_array(j)) {
            size_t i;
            json_t *t;
            json_array_foreach(j, i, t)
                if (json_object_get(t, "secret_sha256"))
                    json_object_set_new(t, "secret_sha256", json_string("***"));
        }
        return j;
    }
    }
    return json_null();
}

json_t *tt_config_to_json(const tt_config *c, int with_sources, int redact)
{
    json_t *o = json_object();
    if (!o) return NULL;
    for (int i = 0; i < TT_CFG__COUNT; i++) {
        const tt_cfg_row *row = &tt_cfg_rows[i].row;
        json_t *val = tt_cfg_value_json(row, &c->v[i], redact);
        if (with_sources) {
            json_t *e = json_pack("{s:o, s:s, s:s}", "value", val ? val : json_null(),
                                  "source", tt_cfg_source_name(c->v[i].source), "origin",
                                  c->v[i].origin);
            json_object_set_new(o, row->key, e);
        } else {
            json_object_set_new(o, row->key, val ? val : json_null());
        }
    }
    return o;
}

char *tt_config_help_text(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    for (int i = 0; i < TT_CFG__COUNT; i++) {
        const tt_cfg_row *row = &tt_cfg_rows[i].row;
        char flag[64];
        snprintf(flag, sizeof flag, "--%s", row->key);
        for (char *p = flag; *p; p++)
            if (*p == '_') *p = '-';
        static const char *const tn[] = {"STR", "INT", "NUM", "BOOL", "JSON"};
        fprintf(f, "  %-24s %-4s %s\n  %24s      [default %s; env %s]\n", flag, tn[row->type],
                row->help, "", *row->def ? row->def : "\"\"", row->env);
    }
    fclose(f);
    return buf;
}

char *tt_config_sample_text(void)
{
    tt_config c;
    if (tt_config_init(&c)) { tt_config_close(&c); return NULL; }
    json_t *o = tt_config_to_json(&c, 0, 0);
    tt_config_close(&c);
    if (!o) return NULL;
    /* One example token so that the shape is visible (sha256 of "change-me"). */
    char hex[65];
    tt_sha256_hex("change-me", 9, hex);
    json_t *tok = json_pack("{s:s, s:s, s:s}", "name", "ci", "secret_sha256", hex, "scopes",
                            "read,tune");
    json_array_append_new(json_object_get(o, "tokens"), tok);
    char *text = tt_json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text) return NULL;
    size_t n = strlen(text);
    char *out = realloc(text, n + 2);
    if (!out) { free(text); return NULL; }
    out[n] = '\n';
    out[n + 1] = '\0';
    return out;
}

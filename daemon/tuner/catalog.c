/* SPDX-License-Identifier: MIT
 * catalog.c - parsed templates and targets shared by the API and the workers: built-ins
 * loaded at start, templates from the store parsed on demand, all cached until the end.
 */
#include "catalog.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"

typedef struct tt_cat_entry {
    tt_template *t;
    int builtin;
    uint64_t order;           /* insertion order: the latest of a name wins */
} tt_cat_entry;

struct tt_catalog {
    pthread_mutex_t mu;
    tt_targets *targets;      /* NULL when no targets dir */
    tt_cat_entry *e;
    size_t n, cap;
    uint64_t next_order;
};

/* Append a parsed template (the catalog takes ownership).  Returns the cached pointer: an
 * equal (name, hash) already cached wins and t is freed.  Caller holds the mutex. */
static const tt_template *tt_cat_add(tt_catalog *c, tt_template *t, int builtin, int bump)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->e[i].t->name, t->name) == 0 && strcmp(c->e[i].t->hash, t->hash) == 0) {
            tt_tmpl_free(t);
            if (bump) c->e[i].order = c->next_order++;
            return c->e[i].t;
        }
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 16;
        tt_cat_entry *ne = realloc(c->e, ncap * sizeof *ne);
        if (!ne) {
            tt_tmpl_free(t);
            return NULL;
        }
        c->e = ne;
        c->cap = ncap;
    }
    c->e[c->n].t = t;
    c->e[c->n].builtin = builtin;
    c->e[c->n].order = c->next_order++;
    return c->e[c->n++].t;
}

/* (name, hash), or for hash NULL the name's built-in if there is one (built-ins are
 * read-only: a version stored under a built-in's name before schema 003 never shadows it),
 * else its latest cached version. */
static const tt_cat_entry *tt_cat_find(const tt_catalog *c, const char *name, const char *hash)
{
    const tt_cat_entry *best = NULL;
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->e[i].t->name, name) != 0) continue;
        if (hash) {
            if (strcmp(c->e[i].t->hash, hash) == 0) return &c->e[i];
        } else if (!best || (c->e[i].builtin && !best->builtin) ||
                   (c->e[i].builtin == best->builtin && c->e[i].order > best->order)) {
            best = &c->e[i];
        }
    }
    return best;
}

static int tt_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Load every *.json of dir (sorted by file name, so the load order is stable). */
static tt_rc tt_cat_load_templates(tt_catalog *c, const char *dir, tt_errinfo *err)
{
    DIR *d = opendir(dir);
    if (!d) return tt_errf(err, TT_EIO, dir, "cannot open templates directory");
    char **names = NULL;
    size_t n = 0, cap = 0;
    tt_rc rc = TT_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 || de->d_name[0] == '.')
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn) { rc = TT_ENOMEM; break; }
            names = nn;
            cap = ncap;
        }
        if (!(names[n] = strdup(de->d_name))) { rc = TT_ENOMEM; break; }
        n++;
    }
    closedir(d);
    if (rc == TT_OK) qsort(names, n, sizeof *names, tt_cmp_str);
    for (size_t i = 0; i < n && rc == TT_OK; i++) {
        size_t plen = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(plen);
        if (!path) { rc = TT_ENOMEM; break; }
        snprintf(path, plen, "%s/%s", dir, names[i]);
        tt_template *t = NULL;
        tt_errinfo e;
        tt_errinfo_clear(&e);
        rc = tt_tmpl_parse_file(path, &t, &e);
        if (rc != TT_OK) {
            tt_errf(err, rc, e.path, "%s: %s%s%s", names[i], e.path, e.path[0] ? ": " : "",
                    e.msg);
        } else if (!tt_cat_add(c, t, 1, 0)) {
            rc = tt_errf(err, TT_ENOMEM, "templates", "out of memory");
        }
        free(path);
    }
    if (rc == TT_ENOMEM && err && err->rc != TT_ENOMEM) tt_errf(err, rc, "templates", "out of memory");
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

tt_rc tt_catalog_new(const char *templates_dir, const char *targets_dir, tt_catalog **out,
                     tt_errinfo *err)
{
    *out = NULL;
    tt_catalog *c = calloc(1, sizeof *c);
    if (!c) return tt_errf(err, TT_ENOMEM, "catalog", "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    tt_rc rc = TT_OK;
    if (targets_dir) rc = tt_targets_load_dir(targets_dir, &c->targets, err);
    if (rc == TT_OK && templates_dir) rc = tt_cat_load_templates(c, templates_dir, err);
    if (rc != TT_OK) {
        tt_catalog_free(c);
        return rc;
    }
    *out = c;
    return TT_OK;
}

void tt_catalog_free(tt_catalog *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) tt_tmpl_free(c->e[i].t);
    free(c->e);
    tt_targets_free(c->targets);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

const tt_targets *tt_catalog_targets(const tt_catalog *c) { return c->targets; }

const tt_target *tt_catalog_target(const tt_catalog *c, const char *name_or_alias)
{
    if (!c->targets || !name_or_alias) return NULL;
    return tt_targets_find(c->targets, name_or_alias);
}

/* Stored text of a template document: compact, keys in the document's order (the order of
 * inputs, params, lets and grid dims is significant: a let may read only earlier lets, so
 * sorted keys could break a valid template; the hash sorts keys itself).  malloc'd or NULL. */
static char *tt_cat_canonical(const json_t *doc)
{
    return tt_json_dumps(doc, JSON_PRESERVE_ORDER | JSON_COMPACT | JSON_ENCODE_ANY);
}

static tt_rc tt_cat_store_put(tt_store *s, const tt_template *t)
{
    char *text = tt_cat_canonical(t->doc);
    if (!text) return TT_ENOMEM;
    tt_rc rc = tt_store_template_put(s, t->name, t->hash, t->version ? t->version : "", text);
    free(text);
    return rc;
}

tt_rc tt_catalog_sync(tt_catalog *c, tt_store *s)
{
    tt_rc rc = TT_OK;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n && rc == TT_OK; i++)
        if (c->e[i].builtin) rc = tt_cat_store_put(s, c->e[i].t);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* Parse a stored document and cache it.  Caller holds the mutex. */
static tt_rc tt_cat_from_store(tt_catalog *c, tt_store *s, const char *name, const char *hash,
                               const tt_template **out, tt_errinfo *err)
{
    char *doc = NULL, hash_out[17] = "";
    tt_rc rc = tt_store_template_get(s, name, hash, &doc, hash_out);
    if (rc == TT_ENOTFOUND)
        return tt_errf(err, TT_ENOTFOUND, "template", "no template '%s'%s%s", name,
                       hash ? " with hash " : "", hash ? hash : "");
    if (rc != TT_OK)
        return tt_errf(err, rc, "template", "store: %s", tt_store_errmsg(s));
    /* latest by name: a cached copy of that version is as good */
    const tt_cat_entry *e = tt_cat_find(c, name, hash_out);
    if (e) {
        free(doc);
        *out = e->t;
        return TT_OK;
    }
    tt_template *t = NULL;
    rc = tt_tmpl_parse_string(doc, strlen(doc), NULL, &t, err);
    free(doc);
    if (rc != TT_OK) return rc;
    /* the stored hash names the version: a built-in's covers its source.file text, which
     * the stored document does not hold (parsed here without it, its own hash differs) */
    if (hash_out[0]) memcpy(t->hash, hash_out, sizeof t->hash);
    *out = tt_cat_add(c, t, 0, 0);
    return *out ? TT_OK : tt_errf(err, TT_ENOMEM, "template", "out of memory");
}

tt_rc tt_catalog_template(tt_catalog *c, tt_store *s, const char *name, const char *hash,
                          const tt_template **out, tt_errinfo *err)
{
    *out = NULL;
    if (!name || !*name) return tt_errf(err, TT_EINVAL, "template", "no template name");
    if (hash && !*hash) hash = NULL;
    pthread_mutex_lock(&c->mu);
    tt_rc rc = TT_OK;
    const tt_cat_entry *e = tt_cat_find(c, name, hash);
    if (e && (hash || !s || e->builtin)) {
        *out = e->t;
    } else if (s) {
        rc = tt_cat_from_store(c, s, name, hash, out, err);
        if (rc == TT_ENOTFOUND && e) {   /* cached (built-in) but not synced to this store */
            *out = e->t;
            rc = TT_OK;
        }
    } else {
        rc = tt_errf(err, TT_ENOTFOUND, "template", "no template '%s'%s%s", name,
                     hash ? " with hash " : "", hash ? hash : "");
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* Parse doc as a stored template is reloaded: from its canonical text (sorted keys), so that
 * params, inputs and the space enumerate in the same order before and after a restart and on
 * every worker host. */
static tt_rc tt_cat_parse_canonical(const json_t *doc, tt_template **out, tt_errinfo *err)
{
    tt_template *t = NULL;
    tt_rc rc = tt_tmpl_parse_json(doc, NULL, &t, err);   /* errors name the caller's paths */
    if (rc != TT_OK) return rc;
    tt_tmpl_free(t);
    char *text = tt_cat_canonical(doc);
    if (!text) return tt_errf(err, TT_ENOMEM, "template", "out of memory");
    rc = tt_tmpl_parse_string(text, strlen(text), NULL, out, err);
    free(text);
    return rc;
}

static int tt_cat_is_builtin(const tt_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].builtin && strcmp(c->e[i].t->name, name) == 0) return 1;
    return 0;
}

tt_rc tt_catalog_put_as(tt_catalog *c, tt_store *s, const char *name, const json_t *doc,
                        const char *owner, int admin, const tt_template **out, tt_errinfo *err)
{
    if (out) *out = NULL;
    if (!doc || !json_is_object(doc))
        return tt_errf(err, TT_ETEMPLATE, "", "a template must be a JSON object");
    tt_template *t = NULL;
    tt_rc rc = tt_cat_parse_canonical(doc, &t, err);
    if (rc != TT_OK) return rc;
    if (name && strcmp(name, t->name) != 0) {
        tt_errf(err, TT_EINVAL, "name", "document name '%s' differs from '%s'", t->name, name);
        tt_tmpl_free(t);
        return TT_EINVAL;
    }
    pthread_mutex_lock(&c->mu);
    if (tt_cat_is_builtin(c, t->name)) {
        pthread_mutex_unlock(&c->mu);
        tt_errf(err, TT_EFORBIDDEN, "name", "'%s' is a built-in template: built-ins are "
                "read-only (store yours under another name)", t->name);
        tt_tmpl_free(t);
        return TT_EFORBIDDEN;
    }
    if (s) {
        char *text = tt_cat_canonical(t->doc);
        rc = text ? tt_store_template_put_owned(s, t->name, t->hash,
                                                t->version ? t->version : "", text,
                                                owner ? owner : "", owner ? admin : 1)
                  : TT_ENOMEM;
        free(text);
        if (rc == TT_EFORBIDDEN)
            tt_errf(err, rc, "name", "template '%s' belongs to another token: only its owner "
                    "or an admin may store a new version", t->name);
        else if (rc != TT_OK)   /* no path: the API prefixes "template" to an inline one's */
            tt_errf(err, rc, "", "store: %s", tt_store_errmsg(s));
        if (rc != TT_OK) {
            pthread_mutex_unlock(&c->mu);
            tt_tmpl_free(t);
            return rc;
        }
    }
    const tt_template *cached = tt_cat_add(c, t, 0, 1);
    pthread_mutex_unlock(&c->mu);
    if (!cached) return tt_errf(err, TT_ENOMEM, "", "out of memory");
    if (out) *out = cached;
    return TT_OK;
}

tt_rc tt_catalog_put(tt_catalog *c, tt_store *s, const char *name, const json_t *doc,
                     const tt_template **out, tt_errinfo *err)
{
    return tt_catalog_put_as(c, s, name, doc, NULL, 1, out, err);
}

/* The first sentence of a description (up to ". " or the end), at most 100 bytes. */
static json_t *tt_cat_summary(const char *d)
{
    if (!d) d = "";
    size_t n = strlen(d);
    const char *dot = strstr(d, ". ");
    if (dot) n = (size_t)(dot - d) + 1;
    if (n > 100) n = 100;
    while (n > 0 && n < strlen(d) && (d[n] & 0xC0) == 0x80) n--;   /* not inside a UTF-8 char */
    return json_stringn(d, n);
}

static json_t *tt_cat_entry_json(const tt_cat_entry *e)
{
    return json_pack("{s:s, s:s, s:s, s:b, s:b, s:o*}", "name", e->t->name, "version",
                     e->t->version ? e->t->version : "", "hash", e->t->hash, "builtin",
                     e->builtin, "has_kernel", e->t->kernel != NULL, "summary",
                     tt_cat_summary(e->t->description));
}

json_t *tt_catalog_list(tt_catalog *c, tt_store *s)
{
    /* bring the store's latest version of every name into the cache first */
    char *text = NULL;
    if (s && tt_store_template_list(s, &text) == TT_OK && text) {
        json_t *arr = json_loads(text, 0, NULL);
        size_t i;
        json_t *v;
        json_array_foreach(arr, i, v) {
            const char *nm = json_string_value(json_object_get(v, "name"));
            const char *hs = json_string_value(json_object_get(v, "hash"));
            const tt_template *t;
            if (nm && hs) (void)tt_catalog_template(c, s, nm, hs, &t, NULL);
        }
        json_decref(arr);
    }
    free(text);
    json_t *out = json_array();
    if (!out) return NULL;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) {
        const tt_cat_entry *latest = tt_cat_find(c, c->e[i].t->name, NULL);
        if (latest != &c->e[i]) continue;   /* one entry per name: its latest version */
        json_array_append_new(out, tt_cat_entry_json(latest));
    }
    pthread_mutex_unlock(&c->mu);
    return out;
}

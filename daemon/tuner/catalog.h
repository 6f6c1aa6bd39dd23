/* SPDX-License-Identifier: MIT
 * catalog.h - parsed templates and targets shared by the API and the workers.
 *
 * Built-in templates (templates/NAME.json) and targets (costmodel/targets/SOC.json) are loaded at
 * start; templates PUT over the API are validated, stored in the database and cached.  A
 * template is identified by (name, hash); a name alone means its latest version.  Parsed
 * templates are never freed while the catalog lives, so returned pointers stay valid until
 * tt_catalog_free().
 *
 * Thread-safe: an internal mutex guards the cache.  Ownership: the catalog owns everything
 * it returns (borrowed pointers).
 */
#ifndef TT_CATALOG_H
#define TT_CATALOG_H

#include <jansson.h>

#include "store.h"
#include "target.h"
#include "template.h"

typedef struct tt_catalog tt_catalog;

/* Load built-ins.  Either dir may be NULL (then nothing is loaded from it).  A built-in
 * template or target that fails validation fails the call (err names file and path). */
tt_rc tt_catalog_new(const char *templates_dir, const char *targets_dir, tt_catalog **out,
                     tt_errinfo *err);
void tt_catalog_free(tt_catalog *c);

const tt_targets *tt_catalog_targets(const tt_catalog *c);
const tt_target *tt_catalog_target(const tt_catalog *c, const char *name_or_alias);

/* Store the built-in templates in the database (idempotent); call once after open. */
tt_rc tt_catalog_sync(tt_catalog *c, tt_store *s);

/* A template by name (hash NULL: the built-in of that name, else the latest version) -- from
 * the cache, else from the store (s may be NULL: cache only).  TT_ENOTFOUND if absent. */
tt_rc tt_catalog_template(tt_catalog *c, tt_store *s, const char *name, const char *hash,
                          const tt_template **out, tt_errinfo *err);
/* Validate, store (s may be NULL) and cache a template document (borrowed) on behalf of the
 * token `owner` (NULL: trusted, no ownership check).  If `name` is not NULL it must equal the
 * document's name (TT_EINVAL otherwise).  The template is parsed from its canonical text
 * (sorted keys), exactly as it is reloaded from the store after a restart, so its params,
 * keys and space order never change across restarts or hosts.  TT_EFORBIDDEN when the name
 * is a built-in's (built-ins are read-only: the templates directory is their source), or when
 * another token owns the name and the caller is not admin (store.h
 * tt_store_template_put_owned). */
tt_rc tt_catalog_put_as(tt_catalog *c, tt_store *s, const char *name, const json_t *doc,
                        const char *owner, int admin, const tt_template **out,
                        tt_errinfo *err);
/* tt_catalog_put_as(.., owner NULL, ..): built-ins are still refused. */
tt_rc tt_catalog_put(tt_catalog *c, tt_store *s, const char *name, const json_t *doc,
                     const tt_template **out, tt_errinfo *err);
/* Names of the built-in and cached templates as a new JSON array of
 * {"name","version","hash","builtin":bool,"has_kernel":bool}. */
json_t *tt_catalog_list(tt_catalog *c, tt_store *s);

#endif

/* SPDX-License-Identifier: MIT
 * ui_assets.h - the web view's static files (the .css and .js files of daemon/api/ui/), compiled into the
 * binary at build time by daemon/api/ui/embed_assets.cmake, so the daemon serves them with
 * no files at run time and fetches nothing from the internet.
 * Thread-safety: immutable data.
 */
#ifndef TT_UI_ASSETS_H
#define TT_UI_ASSETS_H

#include <stddef.h>

typedef struct tt_ui_asset {
    const char *name;          /* "app.js" */
    const char *content_type;  /* "text/javascript; charset=utf-8" */
    const unsigned char *data;
    size_t len;
} tt_ui_asset;

/* The asset of that file name, or NULL. */
const tt_ui_asset *tt_ui_asset_find(const char *name);

#endif

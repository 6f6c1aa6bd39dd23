/* SPDX-License-Identifier: MIT
 * err.c - tt_rc messages, HTTP statuses and API code strings from the one table in tt_err.h.
 */
#include "tt_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *msg;
    int http;
    const char *code;
} tt_errtab[] = {
#define TT_X_ROW(name, msg, http, code) {msg, http, code},
    TT_ERROR_TABLE(TT_X_ROW)
#undef TT_X_ROW
};

const char *tt_strerror(tt_rc rc)
{
    if ((int)rc < 0 || rc >= TT_RC__COUNT) return "unknown error";
    return tt_errtab[rc].msg;
}

int tt_rc_http_status(tt_rc rc)
{
    if ((int)rc < 0 || rc >= TT_RC__COUNT) return 500;
    return tt_errtab[rc].http;
}

const char *tt_rc_code(tt_rc rc)
{
    if ((int)rc < 0 || rc >= TT_RC__COUNT) return "internal";
    return tt_errtab[rc].code;
}

tt_rc tt_rc_from_code(const char *code)
{
    if (!code) return TT_EINTERNAL;
    for (int i = 0; i < TT_RC__COUNT; i++)
        if (strcmp(tt_errtab[i].code, code) == 0) return (tt_rc)i;
    return TT_EINTERNAL;
}

void tt_errinfo_clear(tt_errinfo *e)
{
    if (!e) return;
    e->rc = TT_OK;
    e->pos = -1;
    e->path[0] = '\0';
    e->msg[0] = '\0';
}

tt_rc tt_errf(tt_errinfo *e, tt_rc rc, const char *path, const char *fmt, ...)
{
    if (!e) return rc;
    e->rc = rc;
    e->pos = -1;
    snprintf(e->path, sizeof e->path, "%s", path ? path : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return rc;
}

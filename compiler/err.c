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

/* Rewrite the control bytes of s (capacity cap) as \xNN in place, cutting what no longer
 * fits: a message or path quotes user text, and stays one printable line. */
static void tt_err_oneline(char *s, size_t cap)
{
    size_t n = strlen(s), ctl = 0;
    for (size_t i = 0; i < n; i++) ctl += (unsigned char)s[i] < 0x20 || s[i] == 0x7f;
    if (!ctl) return;
    char tmp[512];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < sizeof tmp && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) o += (size_t)snprintf(tmp + o, sizeof tmp - o, "\\x%02x", c);
        else tmp[o++] = (char)c;
    }
    tmp[o] = '\0';
    memcpy(s, tmp, o + 1);
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
    tt_err_oneline(e->path, sizeof e->path);
    tt_err_oneline(e->msg, sizeof e->msg);
    return rc;
}

const char *tt_err_quote(char *buf, size_t cap, const char *s, size_t len, size_t max)
{
    size_t o = 0, i;
    if (cap == 0) return buf;
    for (i = 0; i < len && i < max && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
    }
    if (i < len && o + 4 < cap) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

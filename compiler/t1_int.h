/* SPDX-License-Identifier: MIT
 * t1_int.h - internals of the T1 import shared by t1.c and t1_values.c (not installed).
 */
#ifndef TT_T1_INT_H
#define TT_T1_INT_H

#include <jansson.h>

#include "tt_err.h"

#define TT_T1_MAX_VALUES 4096   /* as TT_MAX_PARAM_VALUES of template.h */

/* The values of a T1 "Values" string (t1_values.c: list literals, range(), list(range()),
 * comprehensions, joined by `+`; duplicates kept once) as a new JSON array of integers, or
 * TT_EUNSUPPORTED / TT_ENOMEM with err->path = path.  An empty result is not an error here. */
tt_rc tt__t1_values(const char *src, const char *path, json_t **out, tt_errinfo *err);

#endif

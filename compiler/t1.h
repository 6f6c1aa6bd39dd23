/* SPDX-License-Identifier: MIT
 * t1.h - import a T1 search-space file (the autotuning community's input format) as a
 * tiletune template document.
 *
 * From a T1 document this takes ConfigurationSpace.TuningParameters (each {"Name", "Type":
 * "int" or "bool" (True/False as 1/0), "Values": ...}: a JSON array of integers, or a string
 * with the Python list expression T1 files write -- "[16, 32]", "[1, 2] + list(range(32,
 * 1024+1, 32))", "[2**i for i in range(0, 6)]", with an optional `if` filter; t1_values.c)
 * as params (a repeated value kept once), and ConfigurationSpace.Conditions[].Expression as
 * constraints, verbatim (tiletune expressions are Python-compatible, `/` included).  The
 * template gets no inputs and no kernel: it serves the replay: and cmd: backends only.  Its
 * name is the given one, else General.BenchmarkName, else KernelSpecification.KernelName;
 * its description notes the origin.  Only integer (and bool) params are supported: any other
 * Type, or a value that is not an integer, is rejected with the JSON path of the offender.
 *
 * Ownership: the returned document is new (caller decrefs); the input is borrowed.
 * Thread-safety: pure; safe from many threads.
 */
#ifndef TT_T1_H
#define TT_T1_H

#include <jansson.h>

#include "tt_err.h"

/* Convert a parsed T1 document.  `name` (may be NULL) overrides the template name.
 * Returns TT_OK and *out (a new template document: {"tiletune": 1, "name", "version",
 * "description", "inputs": {}, "params", "constraints"}), or TT_EINVAL / TT_EUNSUPPORTED /
 * TT_ENOMEM with err->path naming the offending T1 field ("ConfigurationSpace.
 * TuningParameters[2].Values"); *out is then NULL. */
tt_rc tt_t1_to_template(const json_t *t1, const char *name, json_t **out, tt_errinfo *err);

/* Same from a file (TT_EIO if it cannot be read, TT_EJSON if it is not JSON). */
tt_rc tt_t1_file_to_template(const char *path, const char *name, json_t **out,
                             tt_errinfo *err);

#endif

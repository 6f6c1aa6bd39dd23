/* SPDX-License-Identifier: MIT
 * dataset.h - recorded tuning spaces: Kernel Tuner cache and T4 results files (gzip accepted),
 * read into one in-memory form with a config -> record hash index; T4 writer for export.
 *
 * A dataset is a header (format, device, kernel, problem size, param names and domains) and
 * records, one per config: status (ok / invalid / compile failed / runtime failed), runtime
 * samples in microseconds, their median, the recorded objective and the compile time.
 *
 * Formats (docs/datasets.md):
 *   - Kernel Tuner cache: {"device_name", "kernel_name", "problem_size", "tune_params_keys",
 *     "tune_params", "objective", "cache": {"v1,v2,..": {<param>: v, "time": ms | "InvalidConfig"
 *     | "CompilationFailedConfig" | "RuntimeFailedConfig", "times": [ms..], "compile_time": ms}}}
 *   - T4 results: {"schema_version", "metadata": {"timeunit": "milliseconds" (also the
 *     historical "miliseconds") | "microseconds" | "seconds" | "nanoseconds"}, "results":
 *     [{"configuration": {..}, "times": {"runtimes": [..], "compilation": t}, "invalidity":
 *     "correct" | "compile" | "runtime" | "timeout" | "correctness" | "constraints", ...}]}
 * The format is recognised from the content, gzip from the magic bytes (never from the file
 * name).  Param values must be integers (booleans read as 0/1).  The content hash is FNV-1a 64
 * of the decompressed bytes: it identifies the recording in backend fingerprints.
 *
 * Ownership: tt_dataset_load_*() and tt_dataset_new() return a new dataset freed with
 * tt_dataset_free() (NULL accepted); every pointer inside is owned by it.  A dataset that is
 * no longer being added to is immutable and may be read from many threads at once;
 * tt_dataset_add() needs exclusive access.  The process-wide cache (tt_dataset_cache_get) is
 * thread-safe.
 */
#ifndef TT_DATASET_H
#define TT_DATASET_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tt_err.h"

#define TT_DATASET_MAX_BYTES ((size_t)512 << 20)   /* decompressed size limit: TT_ETOOBIG */
#define TT_DATASET_MAX_PARAMS 64

typedef enum tt_ds_status {
    TT_DS_OK,               /* measured */
    TT_DS_INVALID,          /* KT "InvalidConfig", T4 "constraints" */
    TT_DS_COMPILE_FAILED,   /* KT "CompilationFailedConfig", T4 "compile" */
    TT_DS_RUNTIME_FAILED,   /* KT "RuntimeFailedConfig", T4 "runtime" / "timeout" / "correctness" */
    TT_DS__COUNT
} tt_ds_status;
/* "ok", "invalid", "compile_failed", "runtime_failed" ("?" when out of range). */
const char *tt_ds_status_name(tt_ds_status s);

typedef enum tt_ds_format { TT_DS_FORMAT_KT_CACHE, TT_DS_FORMAT_T4, TT_DS_FORMAT_BUILT } tt_ds_format;

typedef struct tt_ds_record {
    size_t index;             /* position in records[]: values at values[index * nparams] */
    tt_ds_status status;
    size_t sample_off;        /* samples at samples[sample_off .. +nsamples) */
    size_t nsamples;
    double median_us;         /* median of the samples; NAN when there are none */
    double value_us;          /* the recorded objective value (KT "time", T4 measurement
                                 "time"), µs; NAN when not numeric */
    double compile_s;         /* recorded compile time, seconds; NAN when unknown */
    char *timestamp;          /* as recorded, or NULL */
} tt_ds_record;

typedef struct tt_dataset {
    tt_ds_format format;
    char *device;             /* KT device_name, or NULL */
    char *kernel;             /* KT kernel_name, or NULL */
    int64_t *problem;         /* KT problem_size (integer entries), or NULL */
    size_t nproblem;
    char **params;            /* param names in the file's order */
    size_t nparams;
    int64_t **domains;        /* per param: KT tune_params, else the distinct values seen, sorted */
    size_t *ndomain;
    tt_ds_record *records;    /* in the file's order */
    size_t nrecords;
    int64_t *values;          /* nrecords x nparams */
    double *samples;          /* all samples, µs */
    size_t nsamples_total;
    size_t count[TT_DS__COUNT];  /* records by status */
    size_t nduplicates;       /* repeated configs (the first record is kept) */
    int reopened;             /* a Kernel Tuner cache left open by an interrupted session,
                                 read as Kernel Tuner reads it (docs/datasets.md) */
    uint64_t content_hash;    /* FNV-1a 64 of the decompressed bytes (0 for a built dataset) */
    char hash[17];            /* the same in 16 hex digits */
    /* private */
    size_t *index;            /* open addressing: record index + 1, 0 = empty */
    size_t index_cap;         /* power of two */
    size_t cap_records, cap_samples;
    /* the replay backend's (backend_replay.c): the median, spread, min and mean of each
     * record's runtimes (4 per record; NAN median: none), for replay_sum_n
     * records; built once, at the first replay_open of the dataset, under that file's lock;
     * freed with the dataset */
    double *replay_sum;
    size_t replay_sum_n;
} tt_dataset;

static inline const int64_t *tt_ds_values(const tt_dataset *ds, const tt_ds_record *r)
{
    return ds->values + r->index * ds->nparams;
}
static inline const double *tt_ds_samples(const tt_dataset *ds, const tt_ds_record *r)
{
    return ds->samples + r->sample_off;
}

/* Load from a file: Kernel Tuner cache or T4, plain or gzip.  TT_EIO (cannot read),
 * TT_EENCODING (truncated or corrupt gzip: bad input, a 400), TT_ETOOBIG, TT_EJSON (not JSON: line/column in err->msg), TT_EINVAL
 * (neither format, wrong-typed or missing fields, no records: err->path names the field, e.g.
 * "results[12].times.runtimes[3]"), TT_EUNSUPPORTED (non-integer param values, unknown time
 * unit), TT_ENOMEM.  *out is NULL on error. */
tt_rc tt_dataset_load_file(const char *path, tt_dataset **out, tt_errinfo *err);
/* Same from bytes in memory (e.g. a POST /v1/import body); borrowed for the call. */
tt_rc tt_dataset_load_buffer(const void *data, size_t len, tt_dataset **out, tt_errinfo *err);
/* Same with a smaller limit on the (decompressed) size: TT_ETOOBIG beyond max_bytes
 * (0 or more than TT_DATASET_MAX_BYTES: TT_DATASET_MAX_BYTES).  A gzip body stops inflating
 * at the limit, so a small bomb never takes more than max_bytes. */
tt_rc tt_dataset_load_buffer_max(const void *data, size_t len, size_t max_bytes,
                                 tt_dataset **out, tt_errinfo *err);
void tt_dataset_free(tt_dataset *ds);
/* Inflate gzip data (several members allowed) into a new buffer *out of *outlen bytes (caller
 * frees), stopping at max_bytes (0 or more than TT_DATASET_MAX_BYTES: TT_DATASET_MAX_BYTES):
 * TT_ETOOBIG beyond it, TT_EENCODING for corrupt or truncated data, TT_ENOMEM; *out is NULL
 * on error.  The readers above call it themselves; POST /v1/import inflates a T1 file. */
tt_rc tt_dataset_gunzip(const void *data, size_t len, size_t max_bytes, char **out,
                        size_t *outlen, tt_errinfo *err);

/* Index of a param name, or -1. */
int tt_dataset_param(const tt_dataset *ds, const char *name);
/* The record of a config (values in the dataset's param order), or NULL.  Borrowed. */
const tt_ds_record *tt_dataset_find(const tt_dataset *ds, const int64_t *values);

/* Builder (for export): an empty dataset with these param names (copied).  TT_EINVAL for
 * 0 or more than TT_DATASET_MAX_PARAMS params or a repeated name. */
tt_rc tt_dataset_new(const char *const *params, size_t nparams, tt_dataset **out,
                     tt_errinfo *err);
/* Append a record (everything copied; samples in µs, compile_s NAN when unknown, timestamp
 * may be NULL).  A config already present is not added: TT_EEXISTS.  Domains are updated. */
tt_rc tt_dataset_add(tt_dataset *ds, const int64_t *values, tt_ds_status status,
                     const double *samples_us, size_t nsamples, double compile_s,
                     const char *timestamp, tt_errinfo *err);

/* T4 results document of the dataset (new reference; NULL when out of memory).  Times are
 * written in microseconds ("timeunit": "microseconds"). */
json_t *tt_dataset_t4_json(const tt_dataset *ds);
/* Write it to a stream (TT_EIO on a write error) or to a new malloc'd NUL-terminated buffer
 * (*out, *len; caller frees).  Indented output when `pretty`. */
tt_rc tt_dataset_write_t4(const tt_dataset *ds, FILE *f, int pretty, tt_errinfo *err);
tt_rc tt_dataset_write_t4_buffer(const tt_dataset *ds, int pretty, char **out, size_t *len,
                                 tt_errinfo *err);

/* FNV-1a 64 of bytes: a dataset's content hash when they are its decompressed file. */
uint64_t tt_dataset_content_hash(const void *data, size_t len);

/* Files on disk (dataset_files.c).  The i-th file name suffix a dataset name is tried with
 * (".t4.json", ".t4.json.gz", ".kt-cache.json", ".kt-cache.json.gz", ".json", ".json.gz"),
 * NULL past the last. */
const char *tt_dataset_suffix(size_t i);
/* The file dataset `name` is in dir: the first <dir>/<name><suffix> that is a regular file,
 * into path (cap bytes); 1 when found, else 0 and path "".  The name is not checked. */
int tt_dataset_path(const char *dir, const char *name, char *path, size_t cap);
/* The content hash (16 hex digits) of the dataset file at path, read and hashed once per
 * (path, inode, size, mtime) and kept for the process (thread-safe): TT_OK, TT_EIO (not a
 * readable regular file), TT_ETOOBIG, TT_EENCODING (corrupt gzip; kept like a hash, so such
 * a file is not read again until it changes), TT_ENOMEM (not kept).  The bytes are not
 * parsed: a file that is not a dataset has a hash too. */
tt_rc tt_dataset_file_hash(const char *path, char hash[17]);
/* Number of files read by tt_dataset_file_hash so far (for tests). */
size_t tt_dataset_hash_reads(void);

/* Process-wide cache of loaded files (thread-safe).  Returns a borrowed dataset that stays
 * valid until the borrower gives it back with tt_dataset_cache_release (each get, one
 * release); a file is parsed once per (path, inode, size, mtime), so a changed file is
 * re-read, and the older parse is freed once no borrower holds it.  Errors as
 * tt_dataset_load_file(). */
tt_rc tt_dataset_cache_get(const char *path, const tt_dataset **out, tt_errinfo *err);
void tt_dataset_cache_release(const tt_dataset *ds);   /* NULL: nothing */
/* Number of parses the cache holds now (for tests). */
size_t tt_dataset_cache_held(void);
/* Number of files parsed by the cache so far (for tests and /metrics). */
size_t tt_dataset_cache_loads(void);
/* Free every cached dataset, held or not.  Only when no borrower is left (shutdown, tests). */
void tt_dataset_cache_clear(void);

#endif

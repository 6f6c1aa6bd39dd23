/* SPDX-License-Identifier: MIT
 * backend_cmd.c - the cmd:<toolchain> backend: render the template source, build and run it
 * with the server-configured toolchain commands, read the run's JSON result line.
 *
 * Layout under env->work_dir (docs/toolchains.md):
 *   cmd-<name>-<hash8>/                  one per toolchain definition
 *     <build hash>/                      one per hash(rendered source, toolchain fingerprint):
 *       <source>, build.out, build.err,  the build's working directory, also the run's
 *       run.out, run.err, .tt-built      (.tt-built: the build succeeded; later configs that
 *                                         render the same source skip the build)
 *     <build hash>.lock                  flock(2) serialising jobs that share the directory
 * A directory without the marker is wiped before building, so every build starts fresh.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "jsonutil.h"
#include "render.h"
#include "toolchain.h"

#define TT_CMD_MAX_ENV 64
#define TT_CMD_RESULT_MAX ((size_t)4 << 20)   /* bytes of run.out scanned for the JSON line */

typedef struct tt_cmd {
    char name[64];
    char *build, *run;          /* build may be NULL: nothing to build */
    char *env[TT_CMD_MAX_ENV];  /* "K=V" from the definition */
    size_t nenv;
    double build_timeout, run_timeout;
    uint64_t mem_bytes, cpu_s, fsize_bytes, output_cap;
    int repeats;
    uint64_t fp_hash;
    char dir[PATH_MAX];         /* absolute <work_dir>/cmd-<name>-<hash8> */
    atomic_int *stop;           /* borrowed from the backend env (may be NULL) */
    const char *src;            /* borrowed from the template */
    char src_name[128];
} tt_cmd;

static uint64_t tt_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void tt_cmd_free(tt_cmd *c)
{
    if (!c) return;
    free(c->build);
    free(c->run);
    for (size_t i = 0; i < c->nenv; i++) free(c->env[i]);
    free(c);
}

static int tt_mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -1;
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int tt_rm1(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    remove(p);
    return 0;
}

#define TT_CMD_NUM_MAX 1e9   /* largest number field (seconds, MiB, KiB, repeats) */

/* A number field in [lo, TT_CMD_NUM_MAX] with lo 0 or, when positive is set, above 0
 * (missing: dflt). */
static tt_rc tt_num(const json_t *def, const char *key, double dflt, int positive, double *out,
                    const char *name, tt_errinfo *err)
{
    const json_t *v = json_object_get(def, key);
    *out = dflt;
    if (!v) return TT_OK;
    double d = json_is_number(v) ? json_number_value(v) : -1;
    if (d < 0 || (positive && d == 0) || !(d <= TT_CMD_NUM_MAX)) {
        char path[128];
        snprintf(path, sizeof path, "toolchains.%s.%s", name, key);
        return tt_errf(err, TT_EINVAL, path, "expected a number %s 0 and at most %g",
                       positive ? "above" : "from", TT_CMD_NUM_MAX);
    }
    *out = d;
    return TT_OK;
}

static tt_rc tt_cmd_parse(tt_cmd *c, const json_t *def, tt_errinfo *err)
{
    char path[128];
    static const char *const keys[] = {"build", "run", "env", "build_timeout", "run_timeout",
                                       "memory_mb", "cpu_seconds", "file_size_mb", "output_kb",
                                       "repeats", "description", NULL};
    if (!json_is_object(def)) {
        snprintf(path, sizeof path, "toolchains.%s", c->name);
        return tt_errf(err, TT_EINVAL, path, "expected an object");
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)def, k, v) {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k) != 0) i++;
        if (!keys[i]) {
            snprintf(path, sizeof path, "toolchains.%s.%s", c->name, k);
            return tt_errf(err, TT_EINVAL, path, "unknown key");
        }
    }
    const json_t *run = json_object_get(def, "run"), *build = json_object_get(def, "build");
    snprintf(path, sizeof path, "toolchains.%s.run", c->name);
    if (!json_is_string(run) || !*json_string_value(run))
        return tt_errf(err, TT_EINVAL, path, "the run command (a string) is required");
    snprintf(path, sizeof path, "toolchains.%s.build", c->name);
    if (build && !json_is_string(build)) return tt_errf(err, TT_EINVAL, path, "not a string");
    if (!(c->run = strdup(json_string_value(run)))) return TT_ENOMEM;
    if (build && *json_string_value(build) && !(c->build = strdup(json_string_value(build))))
        return TT_ENOMEM;
    const json_t *env = json_object_get(def, "env");
    snprintf(path, sizeof path, "toolchains.%s.env", c->name);
    if (env && !json_is_object(env)) return tt_errf(err, TT_EINVAL, path, "expected an object");
    json_object_foreach((json_t *)env, k, v) {
        snprintf(path, sizeof path, "toolchains.%s.env.%s", c->name, k);
        if (!json_is_string(v)) return tt_errf(err, TT_EINVAL, path, "not a string");
        if (!*k || strchr(k, '=') || strncmp(k, "TT_", 3) == 0)
            return tt_errf(err, TT_EINVAL, path, "bad variable name (TT_* are set by tiletune)");
        if (c->nenv == TT_CMD_MAX_ENV - 8) return tt_errf(err, TT_EINVAL, path, "too many variables");
        size_t n = strlen(k) + strlen(json_string_value(v)) + 2;
        if (!(c->env[c->nenv] = malloc(n))) return TT_ENOMEM;
        snprintf(c->env[c->nenv++], n, "%s=%s", k, json_string_value(v));
    }
    double mem, cpu, fsz, outkb, reps;
    tt_rc rc;
    if ((rc = tt_num(def, "build_timeout", 600, 1, &c->build_timeout, c->name, err)) ||
        (rc = tt_num(def, "run_timeout", 120, 1, &c->run_timeout, c->name, err)) ||
        (rc = tt_num(def, "memory_mb", 0, 0, &mem, c->name, err)) ||
        (rc = tt_num(def, "cpu_seconds", 0, 0, &cpu, c->name, err)) ||
        (rc = tt_num(def, "file_size_mb", 0, 0, &fsz, c->name, err)) ||
        (rc = tt_num(def, "output_kb", 1024, 0, &outkb, c->name, err)) ||
        (rc = tt_num(def, "repeats", 1, 0, &reps, c->name, err)))
        return rc;
    if (reps < 1 || reps > TT_MAX_SAMPLES || reps != floor(reps)) {
        snprintf(path, sizeof path, "toolchains.%s.repeats", c->name);
        return tt_errf(err, TT_EINVAL, path, "expected an integer from 1 to %d", TT_MAX_SAMPLES);
    }
    c->repeats = (int)reps;
    c->mem_bytes = (uint64_t)(mem * 1048576.0);
    c->cpu_s = (uint64_t)ceil(cpu);
    c->fsize_bytes = (uint64_t)(fsz * 1048576.0);
    c->output_cap = (uint64_t)(outkb * 1024.0);
    if (c->output_cap < 4096) c->output_cap = 4096;
    return TT_OK;
}

/* 1 when name is a usable toolchain name: 1..47 letters, digits, '_' and '-'. */
static int tt_cmd_name_ok(const char *name)
{
    size_t n = strlen(name);
    int ok = n > 0 && n < 48;
    for (size_t i = 0; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
             (name[i] >= '0' && name[i] <= '9') || name[i] == '_' || name[i] == '-';
    return ok;
}

tt_rc tt_backend_cmd_work_dir_check(const char *work_dir, tt_errinfo *err)
{
    char probe[PATH_MAX];
    if (!work_dir || !*work_dir)
        return tt_errf(err, TT_EIO, "work_dir", "no work directory is configured for cmd: backends");
    if (snprintf(probe, sizeof probe, "%s/.tiletune-probe-XXXXXX", work_dir) >= (int)sizeof probe)
        return tt_errf(err, TT_EIO, "work_dir", "work directory path too long: %.200s", work_dir);
    if (tt_mkdirs(work_dir) != 0)
        return tt_errf(err, TT_EIO, "work_dir", "cannot create the work directory %s: %s",
                       work_dir, strerror(errno));
    int fd = mkstemp(probe);
    int bad = fd < 0 || write(fd, "x", 1) != 1;
    int e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(probe);
    }
    if (bad)
        return tt_errf(err, TT_EIO, "work_dir", "cannot write in the work directory %s: %s",
                       work_dir, strerror(e));
    return TT_OK;
}

tt_rc tt_backend_cmd_check(const char *name, const json_t *def, tt_errinfo *err)
{
    if (!tt_cmd_name_ok(name))
        return tt_errf(err, TT_EINVAL, "toolchains", "bad toolchain name '%.64s' (letters, "
                       "digits, '_' and '-', at most 47)", name);
    tt_cmd *c = calloc(1, sizeof *c);
    if (!c) return tt_errf(err, TT_ENOMEM, "toolchains", "out of memory");
    snprintf(c->name, sizeof c->name, "%s", name);
    tt_rc rc = tt_cmd_parse(c, def, err);
    if (rc == TT_ENOMEM) tt_errf(err, TT_ENOMEM, "toolchains", "out of memory");
    tt_cmd_free(c);
    return rc;
}

/* The hash of a toolchain: its name and the canonical JSON of its definition. */
static tt_rc tt_cmd_fp_hash(const char *name, const json_t *def, uint64_t *out)
{
    char *canon = tt_json_dumps(def, JSON_COMPACT | JSON_SORT_KEYS);
    if (!canon) return TT_ENOMEM;
    *out = tt_fnv(tt_fnv(14695981039346656037ULL, name, strlen(name) + 1), canon, strlen(canon));
    free(canon);
    return TT_OK;
}

tt_rc tt_backend_cmd_fingerprint(const char *name, const json_t *def, char *out, size_t cap)
{
    uint64_t h = 0;
    tt_rc rc = tt_cmd_fp_hash(name, def, &h);
    if (rc == TT_OK) snprintf(out, cap, "cmd:%s@%08llx", name, (unsigned long long)(h >> 32));
    return rc;
}

static tt_rc cmd_open(tt_backend *b, const char *arg, tt_errinfo *err)
{
    if (!tt_cmd_name_ok(arg))
        return tt_errf(err, TT_EINVAL, "backend", "bad toolchain name '%.64s' (letters, digits, "
                       "'_' and '-', at most 47)", arg);
    const json_t *def = b->env ? json_object_get(b->env->toolchains, arg) : NULL;
    if (!def)
        return tt_errf(err, TT_ENOTFOUND, "backend",
                       "toolchain '%s' is not defined in the server config", arg);
    const tt_template *t = b->t;
    const char *src = t->source_text ? t->source_text : t->source_script;
    if (!src)
        return tt_errf(err, TT_EUNSUPPORTED, "backend", t->source_file
                       ? "the template's source file was not loaded (template given without its directory)"
                       : "the template has no source (source.file or source.script) to build");
    if (!b->env->work_dir || !*b->env->work_dir)
        return tt_errf(err, TT_EINVAL, "backend", "no work directory is configured for cmd: backends");
    tt_cmd *c = calloc(1, sizeof *c);
    if (!c) return tt_errf(err, TT_ENOMEM, "backend", "out of memory");
    snprintf(c->name, sizeof c->name, "%s", arg);
    tt_rc rc = tt_cmd_parse(c, def, err);
    if (rc == TT_ENOMEM) tt_errf(err, TT_ENOMEM, "backend", "out of memory");
    if (rc == TT_OK && tt_cmd_fp_hash(arg, def, &c->fp_hash) != TT_OK)
        rc = tt_errf(err, TT_ENOMEM, "backend", "out of memory");
    if (rc != TT_OK) {
        tt_cmd_free(c);
        return rc;
    }
    c->src = src;
    c->stop = b->env->stop;
    if (t->source_text && t->source_file) {   /* gemm.py.in -> gemm.py */
        const char *base = strrchr(t->source_file, '/');
        base = base ? base + 1 : t->source_file;
        snprintf(c->src_name, sizeof c->src_name, "%s", base);
        size_t l = strlen(c->src_name);
        if (l > 3 && strcmp(c->src_name + l - 3, ".in") == 0) c->src_name[l - 3] = '\0';
    } else {
        snprintf(c->src_name, sizeof c->src_name, "source.script");
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/cmd-%s-%08llx", b->env->work_dir, arg,
             (unsigned long long)(c->fp_hash >> 32));
    if (tt_mkdirs(dir) != 0 || !realpath(dir, c->dir) || strlen(c->dir) > PATH_MAX - 256) {
        tt_errf(err, TT_EIO, "backend", "cannot create %s: %s", dir, strerror(errno));
        tt_cmd_free(c);
        return TT_EIO;
    }
    snprintf(b->fingerprint, sizeof b->fingerprint, "cmd:%s@%08llx", arg,
             (unsigned long long)(c->fp_hash >> 32));
    b->impl = c;
    return TT_OK;
}

/* The last TT_CMD_RESULT_MAX bytes of `path` (malloc'd, NUL-terminated, starting at a line
 * boundary), or NULL when it cannot be read. */
static char *tt_read_tail(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    long start = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        start = size > (long)TT_CMD_RESULT_MAX ? size - (long)TT_CMD_RESULT_MAX : 0;
    }
    char *buf = fseek(f, start, SEEK_SET) == 0 ? malloc(TT_CMD_RESULT_MAX + 1) : NULL;
    size_t n = buf ? fread(buf, 1, TT_CMD_RESULT_MAX, f) : 0;
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    size_t skip = 0;   /* mid-file: the first line is cut, drop it */
    if (start > 0)
        while (skip < n && buf[skip++] != '\n') {
        }
    memmove(buf, buf + skip, n - skip + 1);
    *len = n - skip;
    return buf;
}

/* The last line of the end of `path` that parses as a JSON object (new reference), or NULL;
 * then `why` quotes the last line that looks like the result (`{...}` naming "latency_us")
 * but is not JSON (NaN, Infinity, a typo) with jansson's reason, or is "" when none does. */
static json_t *tt_last_json_line(const char *path, char *why, size_t whycap)
{
    size_t n = 0;
    char *buf = tt_read_tail(path, &n);
    why[0] = '\0';
    if (!buf) return NULL;
    json_t *found = NULL;
    size_t end = n;
    while (end > 0 && !found) {
        size_t start = end;
        while (start > 0 && buf[start - 1] != '\n') start--;
        size_t s = start, e = end;
        while (s < e && (buf[s] == ' ' || buf[s] == '\t' || buf[s] == '\r')) s++;
        while (e > s && (buf[e - 1] == ' ' || buf[e - 1] == '\t' || buf[e - 1] == '\r' ||
                         buf[e - 1] == '\n'))
            e--;
        if (e > s && buf[s] == '{' && buf[e - 1] == '}') {
            json_error_t je;
            json_t *j = json_loadb(buf + s, e - s, 0, &je);
            if (json_is_object(j)) found = j;
            else json_decref(j);
            buf[e] = '\0';
            if (!j && !why[0] && strstr(buf + s, "\"latency_us\""))
                snprintf(why, whycap, "%.80s (%.100s)", buf + s, je.text);
        }
        end = start > 0 ? start - 1 : 0;
    }
    free(buf);
    if (found) why[0] = '\0';
    return found;
}

static void tt_fail(tt_measurement *out, tt_rc status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void tt_fail(tt_measurement *out, tt_rc status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out->status = status;
    vsnprintf(out->error, sizeof out->error, fmt, ap);
    va_end(ap);
}

/* The work directory failed us at path (errno): TT_EIO, the reason in out->error. */
static tt_rc tt_io_fail(tt_measurement *out, const char *path)
{
    snprintf(out->error, sizeof out->error, "cannot write %.200s: %s", path, strerror(errno));
    return TT_EIO;
}

/* Run one step: TT_OK with *ok = 1 when it succeeded, or TT_OK with out filled with `tmo` /
 * `fail` (a config failure); TT_EIO / TT_ENOMEM with out->error when the step could not be
 * run or its output not kept (a backend failure). */
static tt_rc tt_step(const tt_cmd *c, const char *cmd, const char *dir, const char *what,
                     char **env, double timeout, tt_rc tmo, tt_rc fail, tt_measurement *out,
                     double *wall, int *ok)
{
    char outn[32], errn[32], desc[96], tail[120], p[PATH_MAX + 96];
    snprintf(outn, sizeof outn, "%s.out", what);
    snprintf(errn, sizeof errn, "%s.err", what);
    tt_toolchain_opts o = {.cwd = dir, .env = (const char *const *)env, .timeout_s = timeout,
                           .mem_bytes = c->mem_bytes, .cpu_s = c->cpu_s,
                           .fsize_bytes = c->fsize_bytes, .stdout_name = outn,
                           .stderr_name = errn, .output_cap = c->output_cap, .stop = c->stop,
                           /* run.out keeps the whole span the result line is looked in */
                           .stdout_tail = strcmp(what, "run") == 0 ? TT_CMD_RESULT_MAX : 0};
    tt_toolchain_result r;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    *ok = 0;
    tt_rc rc = tt_toolchain_run(cmd, &o, &r, &e);
    if (rc != TT_OK) {
        snprintf(out->error, sizeof out->error, "%s: %.60s: %.150s", what, e.path, e.msg);
        return rc;
    }
    if (r.stopped) {   /* not the config's doing: nothing is recorded */
        snprintf(out->error, sizeof out->error, "%s stopped: the job is no longer this worker's",
                 what);
        return TT_ECANCELLED;
    }
    if (r.out_errno || r.err_errno) {   /* the output is incomplete: nothing to judge by */
        snprintf(out->error, sizeof out->error, "cannot write %.150s/%s: %s", dir,
                 r.out_errno ? outn : errn, strerror(r.out_errno ? r.out_errno : r.err_errno));
        return TT_EIO;
    }
    *wall += r.wall_s;
    if (r.timed_out) {
        out->status = tmo;
        snprintf(out->error, sizeof out->error, "%s timed out after %g s", what, timeout);
        return TT_OK;
    }
    if (r.exited && r.exit_code == 0) {
        *ok = 1;
        return TT_OK;
    }
    snprintf(p, sizeof p, "%s/%s", dir, errn);
    if (!tt_toolchain_tail(p, tail, sizeof tail)) {
        snprintf(p, sizeof p, "%s/%s", dir, outn);
        tt_toolchain_tail(p, tail, sizeof tail);
    }
    tt_toolchain_describe(&r, timeout, desc, sizeof desc);
    out->status = fail;
    snprintf(out->error, sizeof out->error, "%.8s failed (%.90s)%s%s", what, desc,
             tail[0] ? ": " : "", tail);
    return TT_OK;
}

/* Append at most `quota` of the run's samples (lat: positive numbers) to out: all of them when
 * they fit, else `quota` spread evenly over the run (first, ..., near the last), so every run of
 * `repeats` weighs the same in the pool and none is crowded out by an earlier one. */
static void tt_pool_samples(const json_t *lat, size_t quota, tt_measurement *out)
{
    size_t n = json_array_size(lat);
    size_t take = n < quota ? n : quota;
    for (size_t k = 0; k < take && out->nsamples < TT_MAX_SAMPLES; k++)
        out->samples_us[out->nsamples++] = json_number_value(json_array_get(lat, k * n / take));
}

/* Parse the result line of one run into out (*ok = 1 on success), keeping at most `quota` of
 * its samples. A launch cannot have taken longer than the whole run was allowed to take
 * (`timeout_s`): a larger number is a unit or print error of the runner, not a time. */
static void tt_read_result(const char *dir, size_t quota, double timeout_s, tt_measurement *out,
                           int *ok)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/run.out", dir);
    char why[200];
    *ok = 0;
    json_t *j = tt_last_json_line(p, why, sizeof why);
    if (!j && why[0]) {
        tt_fail(out, TT_ERUN, "invalid result line: not JSON: %s", why);
        return;
    }
    if (!j) {
        tt_fail(out, TT_ERUN, "run printed no JSON result line (expected {\"latency_us\": "
                "[...], \"correct\": true} on stdout)");
        return;
    }
    const json_t *lat = json_object_get(j, "latency_us"), *cor = json_object_get(j, "correct");
    char line[100];   /* the line taken, quoted in an error: which one was read matters */
    char *text = tt_json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    snprintf(line, sizeof line, "%.80s%s", text ? text : "?",
             text && strlen(text) > 80 ? "..." : "");
    free(text);
    if (!json_is_boolean(cor)) {
        tt_fail(out, TT_ERUN, "invalid result line %s: \"correct\" is missing or not a boolean "
                "(the result is the last line of stdout that is a JSON object)", line);
    } else if (json_is_false(cor)) {
        tt_fail(out, TT_EWRONG, "wrong result (the run reported \"correct\": false)");
    } else if (!json_is_array(lat) || json_array_size(lat) == 0) {
        tt_fail(out, TT_ERUN, "invalid result line %s: \"latency_us\" must be a non-empty array",
                line);
    } else {
        *ok = 1;
        for (size_t i = 0; i < json_array_size(lat) && *ok; i++) {
            const json_t *v = json_array_get(lat, i);
            double d = json_is_number(v) ? json_number_value(v) : -1;
            if (!(d > 0) || !isfinite(d)) {
                tt_fail(out, TT_ERUN, "invalid result line %s: latency_us[%zu] is not a positive "
                        "number", line, i);
                *ok = 0;
            } else if (d > timeout_s * 1e6) {
                tt_fail(out, TT_ERUN, "invalid result line %s: latency_us[%zu] = %g us is longer "
                        "than the whole run may take (run_timeout %g s)", line, i, d, timeout_s);
                *ok = 0;
            }
        }
        if (*ok) tt_pool_samples(lat, quota, out);
    }
    json_decref(j);
}

static char *tt_kv(const char *k, const char *v)
{
    size_t n = strlen(k) + strlen(v) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s=%s", k, v);
    return s;
}

static tt_rc cmd_measure(tt_backend *b, int64_t *slots, tt_measurement *out)
{
    const tt_cmd *c = b->impl;
    const tt_template *t = b->t;
    tt_errinfo e;
    tt_errinfo_clear(&e);
    if (tt_tmpl_eval_lets(t, slots, &e) != TT_OK) {
        tt_fail(out, TT_EINFEASIBLE, "invalid config: %s: %s", e.path, e.msg);
        return TT_OK;
    }
    char *text = NULL;
    size_t tlen = 0;
    tt_rc rc = tt_render(t, slots, c->src, strlen(c->src), &text, &tlen, &e);
    if (rc == TT_ENOMEM) return rc;
    if (rc != TT_OK) {
        tt_fail(out, TT_EINFEASIBLE, "invalid config: rendering failed: %s", e.msg);
        return TT_OK;
    }
    uint64_t h = tt_fnv(c->fp_hash, c->src_name, strlen(c->src_name) + 1);
    h = tt_fnv(h, text, tlen);
    char bdir[PATH_MAX + 32], lockp[PATH_MAX + 64], srcp[PATH_MAX + 192], mark[PATH_MAX + 64];
    snprintf(bdir, sizeof bdir, "%s/%016llx", c->dir, (unsigned long long)h);
    snprintf(lockp, sizeof lockp, "%s.lock", bdir);
    snprintf(mark, sizeof mark, "%s/.tt-built", bdir);
    snprintf(srcp, sizeof srcp, "%s/%s", bdir, c->src_name);

    char *env[TT_CMD_MAX_ENV] = {0};
    size_t ne = 0;
    for (size_t i = 0; i < c->nenv; i++) env[ne++] = c->env[i];
    size_t own = ne;   /* env[own..ne) are ours to free */
    size_t cl = tt_render_config_json(t, slots, NULL, 0), pl = tt_render_problem_json(t, slots, NULL, 0);
    char *cj = malloc(cl + 1), *pj = malloc(pl + 1), reps[16];
    int lockfd = -1;
    if (cj) tt_render_config_json(t, slots, cj, cl + 1);
    if (pj) tt_render_problem_json(t, slots, pj, pl + 1);
    snprintf(reps, sizeof reps, "%d", b->env->repeats > 0 ? b->env->repeats : 1);
    if (cj && pj) {
        env[ne++] = tt_kv("TT_CONFIG_JSON", cj);
        env[ne++] = tt_kv("TT_PROBLEM_JSON", pj);
        env[ne++] = tt_kv("TT_SOURCE", srcp);
        env[ne++] = tt_kv("TT_WORK_DIR", bdir);
        env[ne++] = tt_kv("TT_TARGET", b->tgt ? b->tgt->name : "");
        env[ne++] = tt_kv("TT_REPEATS", reps);
    }
    for (size_t i = own; i < ne && rc == TT_OK; i++)
        if (!env[i]) rc = TT_ENOMEM;
    if (!cj || !pj) rc = TT_ENOMEM;
    if (rc == TT_OK && tt_mkdirs(c->dir) != 0)   /* work_dir may have been cleaned since */
        rc = tt_io_fail(out, c->dir);
    if (rc == TT_OK && ((lockfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 ||
                        flock(lockfd, LOCK_EX) != 0))
        rc = tt_io_fail(out, lockp);

    int ok = 1;
    struct stat st;
    if (rc == TT_OK && (!c->build || stat(mark, &st) != 0)) {
        /* no successful build yet: start from a fresh directory */
        nftw(bdir, tt_rm1, 16, FTW_DEPTH | FTW_PHYS);
        if (mkdir(bdir, 0755) != 0) rc = tt_io_fail(out, bdir);
        FILE *f = rc == TT_OK ? fopen(srcp, "wb") : NULL;
        if (rc == TT_OK && (!f || fwrite(text, 1, tlen, f) != tlen)) rc = tt_io_fail(out, srcp);
        if (f && fclose(f) != 0 && rc == TT_OK) rc = tt_io_fail(out, srcp);
        if (f && rc == TT_OK && strcmp(c->src_name, "source.script") == 0) chmod(srcp, 0755);
        if (rc == TT_OK && c->build) {
            rc = tt_step(c, c->build, bdir, "build", env, c->build_timeout, TT_EBUILDTIMEOUT,
                         TT_EBUILD, out, &out->compile_s, &ok);
            if (rc == TT_OK && ok) {
                FILE *m = fopen(mark, "w");
                if (m) {
                    fprintf(m, "%s\n", b->fingerprint);
                    fclose(m);
                }
            }
        }
    }
    for (int i = 0; rc == TT_OK && ok && i < c->repeats; i++) {
        rc = tt_step(c, c->run, bdir, "run", env, c->run_timeout, TT_ERUNTIMEOUT, TT_ERUN, out,
                     &out->measure_s, &ok);
        if (rc == TT_OK && ok) tt_read_result(bdir, TT_MAX_SAMPLES / c->repeats, c->run_timeout, out, &ok);
    }
    if (rc == TT_OK && ok) out->status = TT_OK;
    else if (rc == TT_OK) out->nsamples = 0;
    if (lockfd >= 0) close(lockfd);   /* releases the lock */
    for (size_t i = own; i < ne; i++) free(env[i]);
    free(cj);
    free(pj);
    free(text);
    return rc;
}

static void cmd_close(tt_backend *b)
{
    tt_cmd_free(b->impl);
    b->impl = NULL;
}

const tt_backend_ops tt__backend_cmd_ops = {
    .kind = "cmd", .open = cmd_open, .measure = cmd_measure, .close = cmd_close};

/* SPDX-License-Identifier: MIT
 * tlctl.h - internals shared by the files of tlctl: exit codes, the option/command tables,
 * the HTTP client, output helpers and the progress bar.
 *
 * Ownership: tl_ctx and tl_args live for the whole run (main owns them); JSON returned by the
 * HTTP helpers is a new reference the caller decrefs.  Single-threaded.
 */
#ifndef TLCTL_H
#define TLCTL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* Exit codes (docs/tlctl.md, "Exit codes"). */
typedef enum tl_exit {
    TL_EXIT_OK = 0,           /* success (check: no regression) */
    TL_EXIT_REGRESSED = 1,    /* check found a regression (or a failed re-measurement) */
    TL_EXIT_USAGE = 2,        /* bad command line, unreadable input file (also when the
                               * server answers bad_encoding: corrupt gzip, invalid UTF-8) */
    TL_EXIT_UNREACHABLE = 3,  /* could not connect / transport error / timeout */
    TL_EXIT_AUTH = 4,         /* 401 or 403: missing, unknown or insufficient token */
    TL_EXIT_SERVER = 5,       /* any other error answer (404 not found, 4xx rejected, 5xx) */
    TL_EXIT_JOB = 6,          /* the job (tune --wait) failed or was cancelled */
    TL_EXIT_INTERRUPTED = 130 /* Ctrl-C during --wait; the job keeps running */
} tl_exit;

#define TL_MAX_OPTS 24
#define TL_MAX_POS 4

/* One option of a command: drives parsing, --help and docs/tlctl.md. */
typedef struct tl_opt {
    const char *name;         /* long name without dashes: "target" */
    char shortname;           /* 'p' or 0 */
    const char *arg;          /* NULL: a flag; else the value's placeholder "NAME" */
    const char *help;
    const char *env;          /* environment variable giving the default, or NULL */
    int multi;                /* 1: may repeat (values joined with ';') */
} tl_opt;

typedef struct tl_args {
    const char *val[TL_MAX_OPTS];   /* by option index; flags are "1" when given */
    char *owned[TL_MAX_OPTS];       /* joined values of repeated options */
    const char *pos[TL_MAX_POS];
    int npos;
} tl_args;

typedef struct tl_ctx tl_ctx;
typedef struct tl_cmd {
    const char *name;
    const char *usage;        /* after "tlctl NAME " */
    const char *summary;
    const char *details;      /* paragraph for --help and the docs, may be NULL */
    const tl_opt *opts;       /* terminated by {NULL} */
    int npos_min, npos_max;
    int (*run)(tl_ctx *c, const struct tl_cmd *cmd, const tl_args *a);
} tl_cmd;

struct tl_ctx {
    char url[512];
    char token[256];
    const char *url_src, *token_src;   /* "default", "file", "environment", "flag" */
    int json;                 /* --json */
    int color;                /* stdout is a terminal and not nocolor */
    int nocolor;              /* --no-color or NO_COLOR set, not empty: no colour on any stream (the
                               * live plot of tune --wait goes to stderr) */
    long timeout_s;
    int verbose;
};

/* ---- opts.c ---- */
extern const tl_opt tl_global_opts[];
extern const tl_cmd tl_cmds[];
const tl_cmd *tl_cmd_find(const char *name);
/* "did you mean": the command / option (of opts, else a global one) nearest a mistyped name,
 * or NULL (compiler/suggest.h) */
const char *tl_cmd_suggest(const char *word);
const char *tl_opt_suggest(const tl_opt *opts, const char *word, size_t len);
/* Value of option `name` of cmd in a (NULL when absent). */
const char *tl_arg(const tl_cmd *cmd, const tl_args *a, const char *name);
/* Parse argv for cmd (global options are accepted anywhere and applied to c).  Returns 0,
 * or TL_EXIT_USAGE after printing one line on stderr; 1 with *help set for -h/--help. */
int tl_args_parse(tl_ctx *c, const tl_cmd *cmd, int argc, char **argv, tl_args *a, int *help);
void tl_args_free(tl_args *a);
void tl_print_help(FILE *f, const tl_cmd *cmd);
void tl_print_usage(FILE *f);
void tl_print_markdown(FILE *f);
/* 0 when the positional arguments and the values of cmd's options in a are valid UTF-8
 * (options named in `skip`, NULL-terminated or NULL, are not looked at: local file names);
 * else TL_EXIT_USAGE after naming the first that is not ("bad_encoding", the code the server
 * answers for a query argument).  Commands that send a JSON body call it first: jansson
 * cannot hold such a string, and a value must never be dropped from the body silently. */
int tl_args_utf8(const tl_cmd *cmd, const tl_args *a, const char *const *skip);
/* The number given as option `opt` of cmd into *out (left alone when the option is absent):
 * 0, or TL_EXIT_USAGE after one line "--OPT is WHAT, got \"V\"" when it is not a number
 * in lo..hi (empty, trailing text, NaN, out of range, or out of double's range: 1e400,
 * and 1e-400 that strtod would read as 0).  Every floating-point option goes through it. */
int tl_num_arg(const tl_cmd *cmd, const tl_args *a, const char *opt, double lo, double hi,
               const char *what, double *out);
/* Print "tlctl CMD: out of memory" and return the exit code for it (TL_EXIT_SERVER). */
int tl_oom(const tl_cmd *cmd);
/* Configuration: defaults < file < environment (flags are applied by tl_args_parse).  Config
 * file values are checked as the flags are; returns 0 or TL_EXIT_USAGE after one line. */
int tl_ctx_load(tl_ctx *c, const char *config_path);

/* ---- http.c ---- */
typedef struct tl_resp {
    long status;
    char *body;
    size_t len;
    json_t *json;             /* parsed body or NULL */
} tl_resp;
/* Send a request; body may be NULL (len ignored) with its content type.  Returns 0 when an
 * answer arrived (any status), else TL_EXIT_UNREACHABLE after printing why. */
int tl_http(const tl_ctx *c, const char *method, const char *path, const char *ctype,
            const char *body, size_t len, tl_resp *r);
void tl_resp_free(tl_resp *r);
/* JSON request/answer; on an error answer prints one line ("tlctl: <message> (<code>)")
 * and returns the exit code for it; 0 with *out (new reference) on 2xx. */
int tl_call(const tl_ctx *c, const char *method, const char *path, json_t *body_stolen,
            json_t **out);
/* Exit code and stderr line for a non-2xx answer. */
int tl_resp_fail(const tl_resp *r);
/* URL-escape into a growing query string: appends "&k=v" (or "?k=v" first). */
void tl_query_add(char *buf, size_t cap, const char *k, const char *v);
/* Server-Sent Events: calls fn(event, data, ud) per event until the stream ends, fn returns
 * non-zero, or *stop becomes non-zero.  Returns 0, 1 when stopped by *stop, or an exit code. */
typedef int (*tl_sse_fn)(const char *event, const char *data, void *ud);
int tl_sse(const tl_ctx *c, const char *path, tl_sse_fn fn, void *ud,
           volatile const int *stop);

/* ---- out.c ---- */
typedef struct tl_table {
    size_t ncols, nrows, cap;
    char **cells;             /* header row first */
} tl_table;
void tl_table_init(tl_table *t, size_t ncols, const char *const *header);
/* ncols strings (NULL printed as "-"), each made safe for a terminal (tl_safe) */
void tl_table_add(tl_table *t, ...);
void tl_table_print(const tl_ctx *c, tl_table *t, FILE *f);   /* prints and frees */
void tl_print_json(const json_t *j);
/* Text from the server (names, messages quoting a toolchain's output, config values) as it may
 * reach a terminal: control characters (C0, DEL, C1, the bidirectional overrides) spelled
 * \xNN or \uNNNN, bytes that are not UTF-8 \xNN, valid UTF-8 kept, so no escape
 * sequence the server relays acts on the user's terminal.  Every text and table printer
 * passes server text through it; JSON output (--json, -f json) stays exact.  NULL is "".
 * tl_safe: into buf (cap bytes, cut before a sequence that does not fit), returns buf;
 * tl_safe_dup: a new string (caller frees), NULL only when out of memory. */
const char *tl_safe(const char *s, char *buf, size_t cap);
char *tl_safe_dup(const char *s);
/* Columns on a terminal of safe text s (East Asian wide characters 2, combining marks 0), and
 * its longest prefix of whole characters that fits in cols columns (into buf; returns the
 * prefix's width): tables and plots align by these, not by bytes. */
size_t tl_text_cols(const char *s);
size_t tl_text_fit(const char *s, size_t cols, char *buf, size_t cap);
/* A scalar JSON value as text (numbers %g, strings made safe by tl_safe). */
const char *tl_jstr(const json_t *v, char *buf, size_t cap);
/* "12.3 us" / "1.23 ms". */
const char *tl_fmt_us(double us, char *buf, size_t cap);
/* The same for the number at o[key] ("-" when missing or not positive). */
const char *tl_fmt_us_at(const json_t *o, const char *key, char *buf, size_t cap);
int tl_write_file(const char *path, const char *data, size_t len);
char *tl_read_file(const char *path, size_t *len);

/* ---- progress.c ---- */
typedef struct tl_progress {
    int tty;
    double t0;
    long long last_done;
    int drawn;
    int lines;                /* lines below the bar drawn last time (the live plot) */
    char *plot;               /* text drawn under the bar on a terminal (owned), or NULL */
} tl_progress;
void tl_progress_init(tl_progress *p, FILE *f);
/* Text to draw under the bar on the next update (a terminal only); takes ownership. */
void tl_progress_set_plot(tl_progress *p, char *text);
void tl_progress_update(tl_progress *p, long long done, long long planned, double best_us,
                        const char *state);
void tl_progress_end(tl_progress *p);

/* ---- plot.c ---- */
/* Convergence plot of n trials in order (times[i] <= 0: failed) in `width` columns and
 * `height` rows of braille cells, plus axis lines; colour: ANSI red for the best-so-far line.
 * Returns 0, or -1 when out of memory. */
int tl_plot_convergence(FILE *f, const double *times, size_t n, int width, int height,
                        int color);
/* Per-parameter effect: for each tunable, the best time seen per value as a bar chart of
 * eighth blocks (trials: the API's trial array, borrowed).  Returns 0, or -1 on no memory. */
int tl_plot_params(FILE *f, const json_t *trials, int width, int color);
/* Terminal width: $COLUMNS, else the terminal's, else 80. */
int tl_term_width(void);

/* ---- cmd_query.c, shared with cmd_ci.c ---- */
/* Whether template `name` needs a problem (GET /v1/templates/{name}; a document file: its
 * POST .../validate answer): 0 with *needs set (1: an input has no default), or the exit
 * code after printing the error (cmd names the command). */
int tl_template_needs_problem(const tl_ctx *c, const tl_cmd *cmd, const char *name, int *needs);
/* TEMPLATE arguments: a name, or a document file (a '/' in it or a ".json" tail) whose JSON
 * object is sent inline.  tl_template_value: 0 with a new reference, else TL_EXIT_USAGE
 * after one line. */
int tl_template_is_file(const char *arg);
int tl_template_value(const tl_cmd *cmd, const char *arg, json_t **out);
/* For commands that take -T NAME (export, check): *out = *a, with a document file given as
 * -T replaced by the template name inside it (name: its storage, cap bytes).  0, or
 * TL_EXIT_USAGE after one line (unreadable file, no "name"). */
int tl_template_named(const tl_cmd *cmd, const tl_args *a, tl_args *out, char *name, size_t cap);

/* ---- commands (cmd_*.c) ---- */
int tl_cmd_tune(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_jobs(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_job(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_cancel(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_best(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_templates(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_targets(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_predict(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_simulate(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_check(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_export(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_import(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_help(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);
int tl_cmd_version(tl_ctx *c, const tl_cmd *cmd, const tl_args *a);

#endif

/* SPDX-License-Identifier: MIT
 * template.h - kernel templates: JSON document -> validated intermediate representation.
 *
 * A template (docs/template-format.md) names a kernel family: inputs (shape symbols and
 * dtypes), tunable params with their domains, `let` bindings, constraints, global tensors,
 * on-chip buffers and the tile program ("kernel") that the cost model and the simulator read.
 *
 * Slots.  Every name an expression can read has a slot in one int64 vector, laid out as
 *     [inputs (declared order)] [params (declared order)] [lets (declared order)] [grid dims]
 * so slot i of a problem is slot i of the template.  A dtype value is its tt_dtype code.
 * Grid-dim slots hold the block index along that dim; the simulator sets them per block,
 * the analytic model at a representative block (docs/cost-model.md).
 *
 * Ownership: tt_tmpl_parse*() return a new template, freed with tt_tmpl_free() (NULL ok).
 * Every pointer inside is owned by the template.  A parsed template is immutable and may be
 * read from many threads at once.
 */
#ifndef TT_TEMPLATE_H
#define TT_TEMPLATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "expr.h"
#include "tt_err.h"

#define TT_TMPL_FORMAT 1        /* the "tiletune" version field this code reads */
#define TT_MAX_SLOTS 256        /* inputs + params + lets + grid dims */
#define TT_MAX_RANK 4           /* buffer / tensor rank */
#define TT_MAX_PARAM_VALUES 4096
/* Further limits of a template document (docs/template-format.md, "Limits"). */
#define TT_TMPL_MAX_BYTES (4 << 20)   /* text given to tt_tmpl_parse_string/file: TT_ETOOBIG */
#define TT_TMPL_MAX_NAME 63           /* identifiers and the template name */
/* The longest problem key ("M=4096,...") and export variant key ("gemm_M4096_...") any
 * problem of a template may have: the inputs are refused at load when their names and value
 * ranges could exceed them (the daemon keeps keys in buffers of one more byte). */
#define TT_TMPL_MAX_PROBLEM_KEY 1023
#define TT_TMPL_MAX_VARIANT_KEY 511
#define TT_TMPL_MAX_TENSORS 32
#define TT_TMPL_MAX_BUFFERS 64
#define TT_TMPL_MAX_CONSTRAINTS 256
#define TT_TMPL_MAX_DEPTH 16          /* nesting of kernel loops */
#define TT_TMPL_MAX_OPS 4096          /* ops in the whole kernel body */
#define TT_TMPL_MAX_SOURCE (1 << 20)  /* bytes of source.file / source.script */

/* Memory scopes.  GM is global memory (tensors); the others are per-core buffers. */
typedef enum tt_scope {
    TT_SCOPE_GM, TT_SCOPE_L1, TT_SCOPE_L0A, TT_SCOPE_L0B, TT_SCOPE_L0C, TT_SCOPE_UB,
    TT_SCOPE__COUNT
} tt_scope;
const char *tt_scope_name(tt_scope s);
int tt_scope_parse(const char *name);                 /* -1 if unknown ("UB", "L0A", ...) */

/* Hardware pipes (units) of a core; each is an in-order queue. */
typedef enum tt_unit {
    TT_UNIT_MTE2, TT_UNIT_MTE1, TT_UNIT_M, TT_UNIT_V, TT_UNIT_FIX, TT_UNIT_MTE3, TT_UNIT_S,
    TT_UNIT__COUNT
} tt_unit;
const char *tt_unit_name(tt_unit u);                  /* "MTE2", "MTE1", "M", "V", "FIX", ... */

/* Data paths of copies; the unit follows from the path (tt_path_unit). */
typedef enum tt_path {
    TT_PATH_GM_L1, TT_PATH_GM_UB, TT_PATH_GM_L0A, TT_PATH_GM_L0B,   /* MTE2 */
    TT_PATH_L1_L0A, TT_PATH_L1_L0B,                                  /* MTE1 */
    TT_PATH_L0C_GM, TT_PATH_L0C_L1,                                  /* FIX  */
    TT_PATH_UB_GM, TT_PATH_L1_GM,                                    /* MTE3 */
    TT_PATH_UB_UB,                                                   /* V    */
    TT_PATH__COUNT
} tt_path;
const char *tt_path_name(tt_path p);                  /* "GM->L1", ... */
tt_unit tt_path_unit(tt_path p);
/* The path from scope a to scope b, or -1 when no hardware path exists. */
int tt_path_of(tt_scope from, tt_scope to);

/* Which kind of core runs a kernel (`kernel.cores`) and which side runs an op. */
typedef enum tt_cores { TT_CORES_CUBE, TT_CORES_VECTOR, TT_CORES_MIX } tt_cores;
typedef enum tt_side { TT_SIDE_CUBE, TT_SIDE_VECTOR } tt_side;

/* Vector op classes: the per-element cost comes from the target's table for the class. */
typedef enum tt_vclass {
    TT_V_UNARY,     /* adds muls abs relu cast dup copy rec rsqrt fill ... ~255 B/cycle */
    TT_V_BINARY,    /* add sub mul max min sel axpy cmp ...              ~128 B/cycle */
    TT_V_EXP,       /* exp ln */
    TT_V_DIV,
    TT_V_SQRT,
    TT_V_MADD,      /* mla madd */
    TT_V_REDUCE,    /* reduce_sum reduce_max (cadd cmax) */
    TT_V_GATHER,
    TT_V_SCALAR,    /* scalar-unit reads/writes of single UB elements (a T.serial loop of
                     * `x[r, y[r]]` picks): each one waits out the vector pipe, so it is
                     * charged on the vector side as a per-element head */
    TT_V__COUNT
} tt_vclass;
const char *tt_vclass_name(tt_vclass c);
/* Class of a vector op name ("exp" -> TT_V_EXP, "reduce_max" -> TT_V_REDUCE, or a class
 * name itself); -1 if unknown. */
int tt_vop_class(const char *op);

/* A value that is either a dtype literal or an input of dtype kind. */
typedef struct tt_dtref {
    int slot;                 /* >= 0: the input slot holding the dtype; -1: literal */
    tt_dtype lit;
} tt_dtref;

typedef enum tt_input_kind { TT_INPUT_INT, TT_INPUT_DTYPE } tt_input_kind;
typedef struct tt_input {
    char *name;
    tt_input_kind kind;
    int64_t min, max;         /* TT_INPUT_INT: accepted range (default 1 .. 2^40) */
    tt_dtype *dtypes;         /* TT_INPUT_DTYPE: accepted dtypes */
    size_t ndtypes;
    int has_default;          /* 1: a problem may omit this input; then `def` is used */
    int64_t def;              /* the default (a tt_dtype code for TT_INPUT_DTYPE) */
} tt_input;

typedef struct tt_param {
    char *name;
    int64_t *values;          /* the expanded domain, in declared order, no duplicates */
    size_t nvalues;
    int has_default;          /* 1: a config may omit it and gets `def` (a domain value) */
    int64_t def;
} tt_param;

typedef struct tt_let {
    char *name;
    tt_expr *expr;
} tt_let;

typedef struct tt_constraint {
    tt_expr *expr;            /* feasible when it evaluates non-zero */
    char path[48];            /* "constraints[3]" */
} tt_constraint;

typedef struct tt_tensor {    /* a global-memory argument or workspace */
    char *name;
    tt_expr *shape[TT_MAX_RANK];
    int rank;
    tt_dtref dtype;
    int workspace;            /* 1: a GM workspace (not part of the kernel's ABI outputs) */
    int output;               /* 1: written by the kernel */
} tt_tensor;

typedef struct tt_buffer {    /* an on-chip buffer */
    char *name;
    tt_scope scope;           /* never TT_SCOPE_GM */
    tt_side side;             /* UB -> vector, L1/L0x -> cube */
    tt_expr *shape[TT_MAX_RANK];
    int rank;
    tt_dtref dtype;
    tt_expr *copies;          /* ring slots; NULL means 1 */
} tt_buffer;

/* A reference to memory in an op: a buffer or a GM tensor. */
typedef struct tt_ref {
    int is_gm;                /* 1: index into tensors[], 0: into buffers[] */
    int index;
} tt_ref;

/* One entry of a GM copy's `along`: a grid dim or an enclosing loop, or an index map of one
 * grid dim (`"bh // group"`: the tile depends on the map's value, so the blocks whose index
 * maps to one value read one tile; docs/template-format.md).  A map is non-decreasing in
 * the dim's block index (the model counts its distinct values as f(ext - 1) - f(0) + 1). */
typedef struct tt_along {
    int is_loop;              /* 1: index of the loop op (tt_op.loop.id); 0: grid dim index */
    int index;
    tt_expr *map;             /* grid dims only: the index map; NULL: the identity */
} tt_along;

typedef enum tt_op_kind { TT_OP_FOR, TT_OP_COPY, TT_OP_MMA, TT_OP_VEC, TT_OP_SYNC } tt_op_kind;
typedef enum tt_sync_kind { TT_SYNC_CROSS, TT_SYNC_BARRIER } tt_sync_kind;

typedef struct tt_op tt_op;
struct tt_op {
    tt_op_kind kind;
    tt_side side;             /* which core runs it (for FOR: the side of its first op) */
    char path[64];            /* JSON path, e.g. "kernel.body[0].body[1]" */
    union {
        struct {
            char *var;
            int id;           /* 0.. nloops-1, in document order */
            tt_expr *trip;
            tt_expr *stages;  /* NULL means 1 */
            tt_op *body;
            size_t nbody;
        } loop;
        struct {
            tt_ref src, dst;
            tt_path path;
            tt_along *along;  /* for GM copies: what selects the tile (may be empty) */
            size_t nalong;
            int nd2nz;        /* GM->L1 layout conversion: 1 yes, 0 no, -1 default of path,
                                 2 when nd2nz_if is non-zero */
            tt_expr *nd2nz_if; /* nd2nz given as an expression of the problem inputs (a
                                  layout input); NULL otherwise */
            tt_expr *rows;    /* gather (GM reads): the tile is this many rows, each its own
                                 transfer (selected by an index tensor); NULL: one transfer */
            tt_expr *atomic;  /* GM writes: non-zero means an atomic-add write (split-K
                                 partial sums); NULL: a plain write */
        } copy;
        struct {
            int a, b, c;      /* buffers: L0A [m,k], L0B [k,n], L0C [m,n] */
            int init;         /* 1: overwrite C (first k step), 0: accumulate */
        } mma;
        struct {
            char *op;         /* op name as written ("exp", "reduce_max", ...) */
            tt_vclass cls;
            int out;          /* buffer index */
            int in[4];
            int nin;
            tt_expr *elems;   /* elements processed; NULL: product of out's shape */
        } vec;
        struct {
            tt_sync_kind kind;
            tt_side from, to; /* TT_SYNC_CROSS: producer side sets, consumer side waits */
            int flag;         /* cross-core flag id 0..10 (default 0) */
            tt_expr *every;   /* cross: one hand-off per `every` iterations of the innermost
                                 enclosing loop (TileLang's cross_interval); NULL: 1 */
        } sync;
    } u;
};

typedef struct tt_grid_dim {
    char *name;
    tt_expr *extent;
    int slot;                 /* slot of this dim's block index */
} tt_grid_dim;

typedef struct tt_kernel {
    tt_cores cores;
    int launch_mix;           /* 1: launched as a MIX (cube + vector) task whatever `cores` says
                                 ("launch": "mix"; TileLang-Ascend launches every kernel so),
                                 so a vector-only kernel pays the MIX launch extra; 2: MIX
                                 when launch_if is non-zero (tt_kernel_launch_mix) */
    tt_expr *launch_if;       /* "launch" given as an expression of the problem inputs */
    tt_grid_dim *grid;
    size_t ngrid;
    tt_expr *persistent;      /* NULL: one block per grid point; else number of launched
                                 blocks (each walks grid points round-robin); a value < 1
                                 also means one block per grid point */
    tt_expr *swizzle;         /* NULL or < 2: grid points in row-major order (last dim
                                 fastest); w >= 2: block rasterisation in panels of w
                                 indices of the second-to-last grid dim, that dim fastest
                                 inside a panel (L2 re-use, docs/cost-model.md 4) */
    tt_op *body;
    size_t nbody;
    size_t nloops;            /* loops in the whole program (ids 0..nloops-1) */
} tt_kernel;

typedef struct tt_template {
    char *name;
    char *version;
    char *description;
    char hash[17];            /* 16 hex: FNV-1a 64 of the canonical document + source.file text */
    tt_input *inputs;   size_t ninputs;
    tt_param *params;   size_t nparams;
    tt_let *lets;       size_t nlets;
    tt_constraint *constraints; size_t nconstraints;
    tt_tensor *tensors; size_t ntensors;
    tt_buffer *buffers; size_t nbuffers;
    tt_kernel *kernel;        /* NULL: no tile program (replay/cmd backends only) */
    size_t nslots;            /* inputs + params + lets + grid dims */
    char *source_file;        /* "source.file" as written, or NULL */
    char *source_text;        /* its contents when loaded from a directory, or NULL */
    json_t *doc;              /* the document as given (owned reference) */
    char *source_script;      /* "source.script" as written, or NULL */
    /* The params in canonical order (by name, strcmp: tt_tmpl_config_key), set once by the
     * parse: a config's key, JSON text and hash are built on every trial. */
    uint16_t cfg_order[TT_MAX_SLOTS];
} tt_template;

/* Slot index helpers. */
static inline size_t tt_tmpl_param_slot(const tt_template *t, size_t i) { return t->ninputs + i; }
static inline size_t tt_tmpl_let_slot(const tt_template *t, size_t i)
{
    return t->ninputs + t->nparams + i;
}

/* Parse and validate a template document (borrowed; the template takes its own reference).
 * `base_dir` (may be NULL) is where "source.file" is read from.
 * Returns TT_OK and *out, or TT_ETEMPLATE / TT_EEXPR / TT_ENOMEM with err naming the JSON
 * path and the reason ("params.block_M[2]: not an integer"); *out is then NULL. */
tt_rc tt_tmpl_parse_json(const json_t *doc, const char *base_dir, tt_template **out,
                         tt_errinfo *err);
/* Same from text (TT_EJSON with line/column in err->msg for malformed JSON). */
tt_rc tt_tmpl_parse_string(const char *text, size_t len, const char *base_dir,
                           tt_template **out, tt_errinfo *err);
/* Same from a file; base_dir is the file's directory. TT_EIO if it cannot be read. */
tt_rc tt_tmpl_parse_file(const char *path, tt_template **out, tt_errinfo *err);
/* The parse functions may also return: TT_ETOOBIG (text over TT_TMPL_MAX_BYTES, source over
 * TT_TMPL_MAX_SOURCE), TT_EIO ("source.file" unreadable when base_dir is given), TT_EINVAL
 * (NULL document/text/path). */
void tt_tmpl_free(tt_template *t);

/* Distinct values of an `along` entry's index map over the `ext` blocks of its grid dim,
 * clamped to [1, ext] (ext when a->map is NULL), for the values in slots (lets evaluated;
 * the dim's own slot is ignored).  TT_OK, or the evaluation error. */
tt_rc tt_tmpl_along_count(const tt_template *t, const tt_along *a, const int64_t *slots,
                          int64_t ext, int64_t *out);

/* Index of a slot name (input, param, let or grid dim), or -1. */
int tt_tmpl_slot_of(const tt_template *t, const char *name);
/* Name of a slot (borrowed). */
const char *tt_tmpl_slot_name(const tt_template *t, size_t slot);
/* 1 when the GM->L1 copy o converts ND to NZ for the problem in slots[0..ninputs) (its
 * "nd2nz" is true, or its expression is non-zero), else 0. */
int tt_copy_nd2nz(const tt_op *o, const int64_t *slots);
/* 1 when kernel k is launched as a MIX task for the problem in slots[0..ninputs) ("launch":
 * "mix", `cores` mix, or its expression non-zero), else 0. */
int tt_kernel_launch_mix(const tt_kernel *k, const int64_t *slots);

/* Problems: values for the inputs, in slots[0 .. ninputs).
 * From "M=4096,N=4096,K=4096,dtype=float16" (every input required, no extra keys). */
tt_rc tt_tmpl_problem_parse(const tt_template *t, const char *kv, int64_t *slots,
                            tt_errinfo *err);
/* From a JSON object {"M":4096,...,"dtype":"float16"} (borrowed). */
tt_rc tt_tmpl_problem_from_json(const tt_template *t, const json_t *obj, int64_t *slots,
                                tt_errinfo *err);
/* Canonical key "M=4096,N=4096,K=4096,dtype=float16" (declared order).  Returns the length
 * it needs (like snprintf). */
size_t tt_tmpl_problem_key(const tt_template *t, const int64_t *slots, char *buf, size_t cap);
/* New JSON object of the problem (caller owns the reference). */
json_t *tt_tmpl_problem_json(const tt_template *t, const int64_t *slots);

/* Configs: values for the params, in slots[ninputs .. ninputs+nparams).  A value must be in
 * the param's domain (TT_ECONFIG otherwise); every param is required. */
tt_rc tt_tmpl_config_parse(const tt_template *t, const char *kv, int64_t *slots,
                           tt_errinfo *err);
tt_rc tt_tmpl_config_from_json(const tt_template *t, const json_t *obj, int64_t *slots,
                               tt_errinfo *err);
/* The canonical key of a config: "K_L1=256,S1=2,block_M=128,..." with the params in byte
 * order of their names (strcmp), whatever order the template declares them in, so that the
 * same config has one key everywhere (store, imports, caches) and across restarts (a stored
 * template is reloaded with sorted keys).  Returns the length it needs (like snprintf). */
size_t tt_tmpl_config_key(const tt_template *t, const int64_t *slots, char *buf, size_t cap);
/* New JSON object of the config, members in the same canonical order. */
json_t *tt_tmpl_config_json(const tt_template *t, const int64_t *slots);
/* Its compact text, byte for byte what tt_json_dumps(JSON_COMPACT | JSON_SORT_KEYS) makes of
 * it ({"K_L1":256,"S1":2,...}), without building the object (the runner writes one per
 * trial).  Returns the length it needs (like snprintf). */
size_t tt_tmpl_config_json_text(const tt_template *t, const int64_t *slots, char *buf,
                                size_t cap);
/* FNV-1a 64 of the config's param values, 8 little-endian bytes each, in the canonical
 * (name) order of tt_tmpl_config_key: stable across runs, hosts and declaration orders
 * (daemon/store/store_rekey.c computes the same from a stored key). */
uint64_t tt_tmpl_config_hash(const tt_template *t, const int64_t *slots);

/* Evaluate the lets in order (inputs and params already in slots).  TT_OK, or the
 * expression's error (TT_EOVERFLOW, TT_EDIVZERO, TT_EDOMAIN) with err naming "let.x". */
tt_rc tt_tmpl_eval_lets(const tt_template *t, int64_t *slots, tt_errinfo *err);

/* Evaluate a buffer's geometry for the values in slots (lets evaluated): elements of one
 * copy, element size, copies.  Errors as tt_tmpl_eval_lets. */
tt_rc tt_tmpl_buffer_geom(const tt_template *t, size_t b, const int64_t *slots,
                          int64_t dims[TT_MAX_RANK], int64_t *elems, int *esize,
                          int64_t *copies);
/* Same for a tensor (copies is not meaningful). */
tt_rc tt_tmpl_tensor_geom(const tt_template *t, size_t i, const int64_t *slots,
                          int64_t dims[TT_MAX_RANK], int64_t *elems, int *esize);
/* The dtype a dtref denotes for these slots. */
static inline tt_dtype tt_dtref_eval(tt_dtref r, const int64_t *slots)
{
    return r.slot >= 0 ? (tt_dtype)slots[r.slot] : r.lit;
}

#endif

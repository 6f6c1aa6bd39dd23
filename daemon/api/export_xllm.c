/* SPDX-License-Identifier: MIT
 * export_xllm.c - SPECIALIZATIONS (Python) and registry.inc (C++) in xLLM's TileLang shapes.
 */
#include "export_xllm.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"

/* xLLM's spelling of a dtype and its TilelangDType enumerator (dispatch_registry.h). */
static const struct {
    int dt;
    const char *name, *enumerator;
} g_dtypes[] = {
    {TT_DT_FLOAT16, "float16", "kFloat16"}, {TT_DT_BFLOAT16, "bf16", "kBF16"},
    {TT_DT_FLOAT32, "float32", "kFloat32"}, {TT_DT_INT8, "int8", "kInt8"},
    {TT_DT_INT32, "int32", "kInt32"},       {TT_DT_UINT8, "uint8", "kUInt8"},
};

static int tt_dt_index(int64_t dt)
{
    for (size_t i = 0; i < sizeof g_dtypes / sizeof g_dtypes[0]; i++)
        if (g_dtypes[i].dt == dt) return (int)i;
    return -1;
}

/* Keys xLLM takes out of an entry before the rest goes to generate_source(**spec). */
static const char *const g_reserved[] = {"variant_key", "specialization", "compile_definitions",
                                         "kernel_name", "target", "entry_name",
                                         "source_entry_symbol", NULL};

static int tt_is_reserved(const char *name)
{
    for (size_t i = 0; g_reserved[i]; i++)
        if (!strcmp(g_reserved[i], name)) return 1;
    return 0;
}

static int tt_is_ident(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

/* Keywords of C11 (langs 1), of C++17 (2) or of both (3): a member or parameter named so
 * does not compile. */
static const struct {
    const char *word;
    int langs;
} g_keywords[] = {
    {"auto", 3}, {"break", 3}, {"case", 3}, {"char", 3}, {"const", 3}, {"continue", 3},
    {"default", 3}, {"do", 3}, {"double", 3}, {"else", 3}, {"enum", 3}, {"extern", 3},
    {"float", 3}, {"for", 3}, {"goto", 3}, {"if", 3}, {"inline", 3}, {"int", 3}, {"long", 3},
    {"register", 3}, {"restrict", 1}, {"return", 3}, {"short", 3}, {"signed", 3},
    {"sizeof", 3}, {"static", 3}, {"struct", 3}, {"switch", 3}, {"typedef", 3}, {"union", 3},
    {"unsigned", 3}, {"void", 3}, {"volatile", 3}, {"while", 3}, {"alignas", 2},
    {"alignof", 2}, {"and", 2}, {"and_eq", 2}, {"asm", 2}, {"bitand", 2}, {"bitor", 2},
    {"bool", 2}, {"catch", 2}, {"char16_t", 2}, {"char32_t", 2}, {"class", 2}, {"compl", 2},
    {"const_cast", 2}, {"constexpr", 2}, {"decltype", 2}, {"delete", 2},
    {"dynamic_cast", 2}, {"explicit", 2}, {"export", 2}, {"false", 2}, {"friend", 2},
    {"mutable", 2}, {"namespace", 2}, {"new", 2}, {"noexcept", 2}, {"not", 2},
    {"not_eq", 2}, {"nullptr", 2}, {"operator", 2}, {"or", 2}, {"or_eq", 2}, {"private", 2},
    {"protected", 2}, {"public", 2}, {"reinterpret_cast", 2}, {"static_assert", 2},
    {"static_cast", 2}, {"template", 2}, {"this", 2}, {"thread_local", 2}, {"throw", 2},
    {"true", 2}, {"try", 2}, {"typeid", 2}, {"typename", 2}, {"using", 2}, {"virtual", 2},
    {"wchar_t", 2}, {"xor", 2}, {"xor_eq", 2},
};

/* <stdint.h>'s object-like limit macros: INT8_MAX, UINT_FAST16_MAX, SIZE_MAX, ... */
static int tt_is_limit_macro(const char *s)
{
    static const char *const pre[] = {"INT", "UINT", "PTRDIFF", "SIZE", "SIG_ATOMIC", "WCHAR",
                                      "WINT"};
    size_t n = strlen(s);
    if (n < 4 || (strcmp(s + n - 4, "_MAX") && strcmp(s + n - 4, "_MIN"))) return 0;
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (!strncmp(s, pre[i], strlen(pre[i]))) return 1;
    return 0;
}

int tt_xllm_c_reserved(const char *name, int cxx)
{
    if (name[0] == '_' && (name[1] == '_' || isupper((unsigned char)name[1]))) return 1;
    if (!strcmp(name, "NULL") || tt_is_limit_macro(name)) return 1;
    for (size_t i = 0; i < sizeof g_keywords / sizeof g_keywords[0]; i++)
        if ((g_keywords[i].langs & (cxx ? 2 : 1)) && !strcmp(g_keywords[i].word, name)) return 1;
    return 0;
}

static void tt_pascal(const char *in, int dtype_part, char *out, size_t cap);

/* TT_OK when each input's field wrapper struct <Family><Suffix> (PascalCase of the name,
 * xLLM's _dispatch_field_suffix) is a name of its own: M and m, or a_b and aB, give one
 * suffix, and kernel_fn the one of <Family>KernelFn, so xLLM's registry.inc (and ours) would
 * define one struct twice.  Else TT_EUNSUPPORTED naming both. */
static tt_rc tt_xllm_wrappers(const tt_template *t, tt_errinfo *err)
{
    static const char *const own[] = {"Specialization", "KernelFn"};
    char a[96], b[96];
    for (size_t i = 0; i < t->ninputs; i++) {
        tt_pascal(t->inputs[i].name, 1, a, sizeof a);
        for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
            if (!strcmp(a, own[k]))
                return tt_errf(err, TT_EUNSUPPORTED, "format", "template %s: input \"%s\" makes "
                               "the field wrapper struct <Family>%s, a name xLLM's registry.inc "
                               "already uses", t->name, t->inputs[i].name, a);
        for (size_t j = 0; j < i; j++) {
            tt_pascal(t->inputs[j].name, 1, b, sizeof b);
            if (!strcmp(a, b))
                return tt_errf(err, TT_EUNSUPPORTED, "format", "template %s: inputs \"%s\" and "
                               "\"%s\" make one field wrapper struct <Family>%s in xLLM's "
                               "registry.inc",
                               t->name, t->inputs[j].name, t->inputs[i].name, a);
        }
    }
    return TT_OK;
}

/* Everything that makes an export impossible, checked before writing anything. */
static tt_rc tt_xllm_check(const tt_template *t, const tt_xllm_row *rows, size_t n,
                           tt_errinfo *err)
{
    for (size_t i = 0; i < t->ninputs + t->nparams; i++) {
        const char *name = i < t->ninputs ? t->inputs[i].name : t->params[i - t->ninputs].name;
        if (!tt_is_ident(name) || tt_is_reserved(name))
            return tt_errf(err, TT_EUNSUPPORTED, "format", "template %s: \"%s\" is not usable as "
                           "an xLLM specialization key (reserved or not an identifier)",
                           t->name, name);
    }
    tt_rc rc = tt_xllm_wrappers(t, err);
    if (rc) return rc;
    if (!t->ninputs)   /* TilelangKernel.dispatch_schema() and the registry renderer refuse it */
        return tt_errf(err, TT_EUNSUPPORTED, "format", "template %s has no inputs: xLLM needs "
                       "a non-empty DISPATCH_SCHEMA (one dispatch field per input)", t->name);
    for (size_t r = 0; r < n; r++) {
        const char *vk = rows[r].variant_key;
        if (!vk || !*vk || strspn(vk, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_") != strlen(vk))
            return tt_errf(err, TT_EUNSUPPORTED, "format", "variant_key \"%.64s\" is not "
                           "letters, digits and underscores", vk ? vk : "");
        for (size_t i = 0; i < t->ninputs; i++) {
            int64_t v = rows[r].slots[i];
            if (t->inputs[i].kind == TT_INPUT_DTYPE) {
                if (tt_dt_index(v) < 0)
                    return tt_errf(err, TT_EUNSUPPORTED, "format", "%s=%s: xLLM's TilelangDType "
                                   "has no such dtype (float16, bfloat16, float32, int8, int32, "
                                   "uint8)", t->inputs[i].name, tt_dtype_name(v));
            } else if (v < INT32_MIN || v > INT32_MAX) {
                return tt_errf(err, TT_EUNSUPPORTED, "format", "%s=%" PRId64 " in %s does not "
                               "fit xLLM's int32 dispatch field", t->inputs[i].name, v, vk);
            }
        }
    }
    return TT_OK;
}

static void tt_py_value(FILE *f, const tt_template *t, size_t i, int64_t v)
{
    if (t->inputs[i].kind == TT_INPUT_DTYPE) fprintf(f, "\"%s\"", g_dtypes[tt_dt_index(v)].name);
    else fprintf(f, "%" PRId64, v);
}

/* Close a memstream; returns its buffer (which fclose may move), or NULL after freeing it. */
static char *tt_close(FILE *f, char **buf)
{
    if (fclose(f)) {
        free(*buf);
        return NULL;
    }
    return *buf;
}

tt_rc tt_xllm_specializations(const tt_template *t, const char *target, const tt_xllm_row *rows,
                              size_t n, char **out, tt_errinfo *err)
{
    *out = NULL;
    tt_rc rc = tt_xllm_check(t, rows, n, err);
    if (rc) return rc;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    fprintf(f, "# Generated by tiletune (GET /v1/export?format=specializations): template %s "
               "(hash %s),\n# target %s, %zu tuned shape(s).  For an xLLM TilelangKernel class "
               "(xllm/compiler/tilelang):\n# DISPATCH_SCHEMA = every template input; each "
               "SPECIALIZATIONS entry = variant_key, the schema\n# fields and the tuned params, "
               "all of which xLLM passes to generate_source(**spec).\n#\n# The import xLLM's "
               "kernels use (a module in xllm/compiler/tilelang/targets/ascend/kernels/);\n"
               "# adapt the relative path if this file lives elsewhere:\n"
               "from ....common.spec import DispatchField\n\n", t->name, t->hash, target, n);
    fprintf(f, "DISPATCH_SCHEMA = [\n");
    for (size_t i = 0; i < t->ninputs; i++)
        fprintf(f, "    DispatchField(\"%s\", \"%s\"),\n", t->inputs[i].name,
                t->inputs[i].kind == TT_INPUT_DTYPE ? "dtype" : "int32");
    fprintf(f, "]\n\nSPECIALIZATIONS = [\n");
    for (size_t r = 0; r < n; r++) {
        fprintf(f, "    # median %.6g us, spread %.3g us, measured by %s (trial %" PRId64
                   ", job %" PRId64 ")\n    {\"variant_key\": \"%s\"",
                rows[r].median_us, rows[r].spread_us,
                rows[r].measured_by ? rows[r].measured_by : "?", rows[r].trial, rows[r].job,
                rows[r].variant_key);
        for (size_t i = 0; i < t->ninputs; i++) {
            fprintf(f, ", \"%s\": ", t->inputs[i].name);
            tt_py_value(f, t, i, rows[r].slots[i]);
        }
        for (size_t i = 0; i < t->nparams; i++)
            fprintf(f, ", \"%s\": %" PRId64, t->params[i].name,
                    rows[r].slots[tt_tmpl_param_slot(t, i)]);
        fprintf(f, "},\n");
    }
    fprintf(f, "]\n");
    *out = tt_close(f, &buf);
    return *out ? TT_OK : tt_errf(err, TT_ENOMEM, NULL, "out of memory");
}

/* xLLM's names: snake_case -> PascalCase, with a "dtype" part spelled "DType". */
static void tt_pascal(const char *in, int dtype_part, char *out, size_t cap)
{
    size_t n = 0;
    int start = 1;
    for (const char *p = in; *p && n + 6 < cap; p++) {
        if (*p == '_') { start = 1; continue; }
        if (start && dtype_part && !strncmp(p, "dtype", 5) && (p[5] == '_' || !p[5])) {
            memcpy(out + n, "DType", 5);
            n += 5;
            p += 4;
        } else {
            out[n++] = start ? (char)toupper((unsigned char)*p) : *p;
        }
        start = 0;
    }
    out[n] = '\0';
}

static void tt_inc_header(FILE *f, const tt_template *t, const char *fam, const char *target,
                          size_t n)
{
    fprintf(f, "// Generated by tiletune (GET /v1/export?format=registry-inc): template %s "
               "(hash %s),\n// target %s, %zu tuned shape(s).  Shaped like the registry.inc "
               "xLLM's kernel family builder\n// generates: include it inside namespace "
               "xllm::kernel::npu::tilelang after\n// core/kernels/npu/tilelang/dispatch_registry.h "
               "(TilelangDType, KernelEntry, function_type_t,\n// find_kernel_entry, "
               "available_variant_keys).  %sKernelFn is TileLang's generated\n// `extern \"C\" "
               "void call(uint8_t* <tensor>_handle..., aclrtStream stream)` with the\n// template's "
               "tensors in declared order; check it against the generated source.\n\n",
            t->name, t->hash, target, n, fam);
}

tt_rc tt_xllm_registry_inc(const tt_template *t, const char *target, const tt_xllm_row *rows,
                           size_t n, char **out, tt_errinfo *err)
{
    *out = NULL;
    tt_rc rc = tt_xllm_check(t, rows, n, err);
    if (rc) return rc;
    if (n == 0) return tt_errf(err, TT_ENOTFOUND, NULL, "nothing tuned for %s", t->name);
    if (!tt_is_ident(t->name))
        return tt_errf(err, TT_EUNSUPPORTED, "format", "template name %s is not a C++ identifier",
                       t->name);
    for (size_t i = 0; i < t->ninputs; i++) {
        const char *in = t->inputs[i].name;
        /* the struct's member types: a member named so changes their meaning in it */
        if (tt_xllm_c_reserved(in, 1) || !strcmp(in, "int32_t") || !strcmp(in, "TilelangDType"))
            return tt_errf(err, TT_EUNSUPPORTED, "format", "template %s: input \"%s\" is a C++ "
                           "keyword, a reserved name or a type the struct uses (int32_t, "
                           "TilelangDType): it cannot name a member of %s's specialization "
                           "struct", t->name, in, t->name);
    }
    char fam[96], field[96], entry[256];
    tt_pascal(t->name, 0, fam, sizeof fam);
    snprintf(entry, sizeof entry, "KernelEntry<%sSpecialization, %sKernelFn>", fam, fam);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return tt_errf(err, TT_ENOMEM, NULL, "out of memory");
    tt_inc_header(f, t, fam, target, n);
    fprintf(f, "struct %sSpecialization {\n", fam);
    for (size_t i = 0; i < t->ninputs; i++)
        fprintf(f, "  %s %s;\n", t->inputs[i].kind == TT_INPUT_DTYPE ? "TilelangDType" : "int32_t",
                t->inputs[i].name);
    fprintf(f, "};\n\nconstexpr bool operator==(const %sSpecialization& lhs,\n"
               "                          const %sSpecialization& rhs) {\n  return ", fam, fam);
    for (size_t i = 0; i < t->ninputs; i++)
        fprintf(f, "%slhs.%s == rhs.%s", i ? " && " : "", t->inputs[i].name, t->inputs[i].name);
    fprintf(f, "%s;\n}\n\n", t->ninputs ? "" : "true");
    for (size_t i = 0; i < t->ninputs; i++) {
        tt_pascal(t->inputs[i].name, 1, field, sizeof field);
        fprintf(f, "struct %s%s {\n  %s value;\n};\n\n", fam, field,
                t->inputs[i].kind == TT_INPUT_DTYPE ? "TilelangDType" : "int32_t");
    }
    fprintf(f, "constexpr %sSpecialization make_%s_specialization(\n    ", fam, t->name);
    for (size_t i = 0; i < t->ninputs; i++) {
        tt_pascal(t->inputs[i].name, 1, field, sizeof field);
        fprintf(f, "%s%s%s %s", i ? ", " : "", fam, field, t->inputs[i].name);
    }
    fprintf(f, ") {\n  return %sSpecialization{", fam);
    for (size_t i = 0; i < t->ninputs; i++) fprintf(f, "%s%s.value", i ? ", " : "", t->inputs[i].name);
    fprintf(f, "};\n}\n\nusing %sKernelFn = void (*)(", fam);
    size_t k = 0;
    for (size_t i = 0; i < t->ntensors; i++)
        if (!t->tensors[i].workspace) fprintf(f, "%suint8_t* %s_handle", k++ ? ", " : "", t->tensors[i].name);
    fprintf(f, "%saclrtStream stream);\n\n", k ? ", " : "");
    for (size_t r = 0; r < n; r++)
        fprintf(f, "extern \"C\" function_type_t<%sKernelFn> %s__%s_call;\n", fam, t->name,
                rows[r].variant_key);
    fprintf(f, "\nconstexpr std::array<%s, %zu> k%sRegistry{{\n", entry, n, fam);
    for (size_t r = 0; r < n; r++) {
        fprintf(f, "    %s{make_%s_specialization(", entry, t->name);
        for (size_t i = 0; i < t->ninputs; i++) {
            tt_pascal(t->inputs[i].name, 1, field, sizeof field);
            int64_t v = rows[r].slots[i];
            if (t->inputs[i].kind == TT_INPUT_DTYPE)
                fprintf(f, "%s%s%s{TilelangDType::%s}", i ? ", " : "", fam, field,
                        g_dtypes[tt_dt_index(v)].enumerator);
            else
                fprintf(f, "%s%s%s{%" PRId64 "}", i ? ", " : "", fam, field, v);
        }
        fprintf(f, "), \"%s\", &%s__%s_call},  // median %.6g us (%s)\n", rows[r].variant_key,
                t->name, rows[r].variant_key, rows[r].median_us,
                rows[r].measured_by ? rows[r].measured_by : "?");
    }
    fprintf(f, "}};\n\ninline const %s* find_%s_kernel_entry(\n    const %sSpecialization& "
               "specialization) {\n  return find_kernel_entry(k%sRegistry, specialization);\n}\n\n"
               "inline std::string available_%s_variant_keys() {\n  return "
               "available_variant_keys(k%sRegistry);\n}\n", entry, t->name, fam, fam, t->name, fam);
    *out = tt_close(f, &buf);
    return *out ? TT_OK : tt_errf(err, TT_ENOMEM, NULL, "out of memory");
}

/*
 * names.c: kernel names as people read them. CUPTI gives the mangled C++ name
 * (_ZN2at6native29vectorized_elementwise_kernel...); libstdc++'s own demangler (__cxa_demangle,
 * present wherever libtorch is) turns it into C++, and the short form drops what makes it
 * unreadable in a column, as Nsight Systems' short names do: the return type, the parameter
 * list, and the template arguments, collapsed to "<…>":
 *   at::native::vectorized_elementwise_kernel<…>
 * Text shows the short form, JSON and CSV the full demangled name; --names picks another.
 */
#include "names.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

void name_demangled(const char *raw, char *out, size_t n)
{
    if (!n) return;
    int status = -1;
    char *d =
        raw && raw[0] == '_' && raw[1] == 'Z' ? __cxa_demangle(raw, NULL, NULL, &status) : NULL;
    const char *s = status == 0 && d ? d : raw ? raw : "";
    size_t len = strlen(s);
    if (len >= n) len = n - 1;
    memcpy(out, s, len);
    out[len] = 0;
    free(d);
}

static int ident_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int ends_with(const char *s, size_t len, const char *tail)
{
    size_t t = strlen(tail);
    return len >= t && !memcmp(s + len - t, tail, t);
}

/* The operation a template argument list names, if any: a functor (CUDAFunctor_add), an ATen
 * kernel or launcher (float16_copy_kernel_cuda, launch_clamp_scalar), a reduction's ops
 * (MeanOps). Its length, copied into out; 0 when none. */
static size_t template_gist(const char *s, size_t len, char *out, size_t n)
{
    size_t best = 0, best_len = 0;
    int depth = 0;
    for (size_t i = 0; i < len && depth >= 0; i++) {
        if (s[i] == '<') depth++;
        if (s[i] == '>') depth--;
        if (!ident_char(s[i]) || (i && ident_char(s[i - 1]))) continue;
        size_t j = i;
        while (j < len && ident_char(s[j])) j++;
        const char *id = s + i;
        size_t l = j - i;
        const char *f = strstr(id, "Functor");
        if ((f && f < id + l) || ends_with(id, l, "_kernel_cuda") ||
            (l > 7 && !strncmp(id, "launch_", 7)) || (l > 3 && ends_with(id, l, "Ops")))
            best = i, best_len = l;
        i = j - 1;
    }
    if (!best_len || best_len >= n) return 0;
    memcpy(out, s + best, best_len);
    out[best_len] = 0;
    return best_len;
}

/* The data type a template argument list names first (the element type, by the libraries'
 * convention: at::native's scalar_t, cuDNN's and cuBLAS's T), as the report writes types;
 * NULL when none. The dtype is what tells apart a kernel's fp32, fp16 and bf16 instances. */
static const char *template_dtype(const char *s, size_t len)
{
    static const struct {
        const char *id, *name;
    } types[] = {{"Half", "fp16"},           {"__half", "fp16"},
                 {"half", "fp16"},           {"BFloat16", "bf16"},
                 {"__nv_bfloat16", "bf16"},  {"float", "fp32"},
                 {"double", "fp64"},         {"Float8_e4m3fn", "fp8e4m3"},
                 {"Float8_e5m2", "fp8e5m2"}, {"__nv_fp8_e4m3", "fp8e4m3"}};
    int depth = 0;
    for (size_t i = 0; i < len && depth >= 0; i++) {
        if (s[i] == '<') depth++;
        if (s[i] == '>') depth--;
        if (!ident_char(s[i]) || (i && ident_char(s[i - 1]))) continue;
        size_t j = i;
        while (j < len && ident_char(s[j])) j++;
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
            if (j - i == strlen(types[k].id) && !memcmp(s + i, types[k].id, j - i))
                return types[k].name;
        i = j - 1;
    }
    return NULL;
}

/* The length of s[0..len) without its parameter list (the trailing "(...)" at depth 0). */
static size_t without_parameters(const char *s, size_t len)
{
    if (!len || s[len - 1] != ')') return len;
    int depth = 0;
    for (size_t i = len; i-- > 0;) {
        depth += s[i] == ')' ? 1 : s[i] == '(' ? -1 : 0;
        if (depth == 0) return i > 0 ? i : len;
    }
    return len;
}

void name_short(const char *raw, char *out, size_t n)
{
    char full[4096];
    name_demangled(raw, full, sizeof full);
    const char *s = full;
    size_t len = strlen(s);
    if (!strncmp(s, "void ", 5)) s += 5, len -= 5;
    len = without_parameters(s, len);
    /* Template arguments at depth 0 collapse to "<…>", or to the operation they name when
     * they name one ("operator<" aside: a '<' right after "operator" is part of the name). */
    size_t o = 0;
    int depth = 0;
    for (size_t i = 0; i < len && o + 4 < n; i++) {
        char c = s[i];
        if (c == '<' && !(i >= 8 && !strncmp(s + i - 8, "operator", 8))) {
            if (depth++ == 0) {
                char what[96];
                size_t w = template_gist(s + i + 1, len - i - 1, what, sizeof what - 16);
                const char *dtype = template_dtype(s + i + 1, len - i - 1);
                if (dtype)
                    w += (size_t)snprintf(what + w, sizeof what - w, "%s%s", w ? "," : "", dtype);
                if (w && o + w + 3 < n) {
                    out[o++] = '<';
                    memcpy(out + o, what, w);
                    o += w;
                    out[o++] = '>';
                } else {
                    memcpy(out + o, "<\xe2\x80\xa6>", 5); /* "<…>" */
                    o += 5;
                }
            }
            continue;
        }
        if (c == '>' && depth > 0) {
            depth--;
            continue;
        }
        if (depth == 0) out[o++] = c;
    }
    out[o < n ? o : n - 1] = 0;
}

/* The whole demangled name (malloc'd), whatever its length; raw when it is not a mangled one. */
static char *demangle_whole(const char *raw)
{
    raw = raw ? raw : "";
    int status = -1;
    char *d = raw[0] == '_' && raw[1] == 'Z' ? __cxa_demangle(raw, NULL, NULL, &status) : NULL;
    if (status == 0 && d) return d;
    free(d);
    d = strdup(raw);
    if (!d) abort(); /* out of memory */
    return d;
}

void name_base(const char *raw, char *out, size_t n)
{
    if (!n) return;
    char *full = demangle_whole(raw);
    const char *s = full;
    size_t len = strlen(s);
    len = without_parameters(s, len);
    /* Template arguments at depth 0 out ("operator<" keeps its '<'); the name starts after
     * the last space (a return type) or "::" at depth 0. */
    char *flat = malloc(len + 1);
    if (!flat) abort(); /* out of memory */
    size_t o = 0, from = 0;
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '<' && !(i >= 8 && !strncmp(s + i - 8, "operator", 8))) {
            depth++;
            continue;
        }
        if (c == '>' && depth > 0) {
            depth--;
            continue;
        }
        if (depth) continue;
        flat[o++] = c;
        if (c == ' ' || (c == ':' && o >= 2 && flat[o - 2] == ':')) from = o;
    }
    flat[o] = 0;
    snprintf(out, n, "%s", flat[from] ? flat + from : flat);
    free(flat);
    free(full);
}

char *name_demangled_whole(const char *raw)
{
    return demangle_whole(raw);
}

void name_for(const char *raw, enum name_style style, int text, char *out, size_t n)
{
    if (style == NAMES_MANGLED) {
        size_t len = strlen(raw ? raw : "");
        if (len >= n) len = n - 1;
        memcpy(out, raw ? raw : "", len);
        out[len] = 0;
    } else if (text && style == NAMES_SHORT) {
        name_short(raw, out, n);
    } else {
        name_demangled(raw, out, n);
    }
}

char *name_data(const char *raw, enum name_style style)
{
    raw = raw ? raw : "";
    int status = -1;
    char *d = style != NAMES_MANGLED && raw[0] == '_' && raw[1] == 'Z'
                  ? __cxa_demangle(raw, NULL, NULL, &status)
                  : NULL;
    if (status == 0 && d) return d;
    free(d);
    return strdup(raw);
}

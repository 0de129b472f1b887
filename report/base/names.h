/*
 * names.h: kernel names, demangled and shortened for people (names.c).
 */
#ifndef INFPROF_NAMES_H
#define INFPROF_NAMES_H

#include <stddef.h>

enum name_style { NAMES_SHORT, NAMES_FULL, NAMES_MANGLED };

/* --names: short (text default; JSON/CSV get the full demangled name), full, mangled; carried by
 * the render options (render.h), passed to the two functions below. */
/* The demangled C++ name, or the name as it is when it is not a mangled one. */
void name_demangled(const char *raw, char *out, size_t n);
/* "at::native::vectorized_elementwise_kernel<…>": no return type, parameters or template
 * arguments. */
void name_short(const char *raw, char *out, size_t n);
/* The base name, as Nsight Systems' shortName: "vectorized_elementwise_kernel" (no namespace,
 * return type, template arguments or parameters); a plain C name stays itself. */
void name_base(const char *raw, char *out, size_t n);
/* The whole demangled name, whatever --names says: malloc'd, the caller frees it. */
char *name_demangled_whole(const char *raw);
/* The name a rendering shows (text: 1 for text and Markdown) under the style. */
void name_for(const char *raw, enum name_style style, int text, char *out, size_t n);
/* The name JSON and CSV carry under the style (full or mangled), whole however long: malloc'd,
 * the caller frees it. */
char *name_data(const char *raw, enum name_style style);

#endif

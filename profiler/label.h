/*
 * label.h: program strings cut to a fixed size the same way in the library and in the report:
 * on a character boundary (never half a UTF-8 sequence), and, where cut, ending in "...~" and six
 * hex digits of a hash of the whole text, so that two long labels that differ only at their end
 * stay apart and the same text gives the same label in every run. No allocation, no lock: the
 * iteration event's label is cut on the program's thread (collectors/torch_iterations.c).
 */
#ifndef INFPROF_LABEL_H
#define INFPROF_LABEL_H

#include <stddef.h>
#include <wchar.h>

/* How many of the first len bytes of s, at most max, end on a character boundary (a byte that is
 * not UTF-8 counts as one character). */
size_t ip_utf8_cut(const char *s, size_t len, size_t max);
/* s[0..len) into out (n bytes, at least 16): as is when it fits in n - 1 bytes, else cut as
 * above. Returns the bytes written, the terminating zero not counted. */
size_t ip_label_cut(char *out, size_t n, const char *s, size_t len);
/* A wide string (wchar_t: UTF-32 on Linux) as UTF-8 into out (n bytes, at least 1), whatever the
 * locale (wcsrtombs in the C locale turns a non-ASCII name into nothing); cut on a character
 * where it does not fit; a value that is no character (a surrogate, past U+10FFFF) becomes U+FFFD.
 * Returns the bytes written, the terminating zero not counted; NULL gives "". */
size_t ip_label_wide(char *out, size_t n, const wchar_t *w);

#endif

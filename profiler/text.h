/*
 * text.h: program strings made safe for a person to read, one rule for the library's stderr
 * lines and every output of the report (report/base/fmt.c's fmt_escape calls it): nothing a
 * terminal obeys or an editor hides passes raw. No allocation, no lock.
 */
#ifndef INFPROF_TEXT_H
#define INFPROF_TEXT_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, nothing past
 * U+10FFFF), or 0. */
size_t ip_text_utf8_len(const unsigned char *p, const unsigned char *end);
/* A code point shown as \uNNNN (\UNNNNNNNN past the BMP) wherever a person reads a name: every
 * format character (Unicode category Cf: the soft hyphen, the bidirectional controls of "Trojan
 * Source", zero-width ones, U+180E, the tag characters U+E0000-E007F), the line and paragraph
 * separators, the variation selectors, the Hangul fillers, U+034F; `first`: a combining mark
 * at a name's start too (it would lean on what the output put before it). */
int ip_text_hidden(unsigned cp, int first);
/* s (len bytes) into out (n bytes, at least 1), always terminated, escaped: C0 controls, DEL and
 * bytes that are not UTF-8 as \xNN, C1 controls and the hidden characters above as \uNNNN (or
 * \UNNNNNNNN). Returns the bytes written, the terminating zero not counted; a cut (out full) is
 * on an escape's or a character's boundary. */
size_t ip_text_escape(char *out, size_t n, const char *s, size_t len);

#endif

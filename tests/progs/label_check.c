/*
 * label_check.c: profiler/label.c's wide-to-UTF-8 conversion (ip_label_wide) against known
 * encodings: ASCII, two-, three- and four-byte characters, a surrogate and a value past U+10FFFF
 * (U+FFFD each), NULL, and cuts that never split a character. Exit 0 when every one agrees.
 */
#include "profiler/label.h"

#include <stdio.h>
#include <string.h>

static int bad;

static void expect(const wchar_t *w, size_t n, const char *want, const char *what)
{
    char out[64];
    size_t k = ip_label_wide(out, n, w);
    if (k != strlen(want) || strcmp(out, want) != 0) {
        printf("FAIL %s: got \"%s\" (%zu bytes), want \"%s\"\n", what, out, k, want);
        bad = 1;
    }
}

int main(void)
{
    expect(L"iteration", 64, "iteration", "ascii");
    expect(L"pr\u00e4", 64, "pr\xc3\xa4", "two bytes");
    expect(L"\u2713", 64, "\xe2\x9c\x93", "three bytes");
    expect(L"\U0001F600", 64, "\xf0\x9f\x98\x80", "four bytes");
    wchar_t odd[] = {L'a', (wchar_t)0xd800, (wchar_t)0x110000, L'b', 0};
    expect(odd, 64,
           "a\xef\xbf\xbd\xef\xbf\xbd"
           "b",
           "no character: U+FFFD");
    expect(NULL, 64, "", "NULL");
    expect(L"pr\u00e4", 4, "pr", "a cut before a two-byte character");
    expect(L"ab\U0001F600", 6, "ab", "a cut before a four-byte character");
    expect(L"ab\U0001F600", 7, "ab\xf0\x9f\x98\x80", "room for it");
    expect(L"x", 1, "", "room for the zero only");
    if (!bad) printf("ok\n");
    return bad;
}

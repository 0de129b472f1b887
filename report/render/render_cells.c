/*
 * render_cells.c: what the text and Markdown renderings share: a cell as text, terminal widths of
 * UTF-8 text, names shortened in the middle and kept distinct, the columns shown.
 */
#include "render_impl.h"
#include "../base/names.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cell as text for the text and Markdown renderings. */
void render_cell_text(const struct col *col, const struct cell *c, enum name_style names, char *out,
                      size_t n)
{
    if (c->null) {
        snprintf(out, n, "-");
        return;
    }
    char simple[CELL_MAX];
    switch (col->type) {
    case COL_KERNEL:
        name_for(c->s, names, 1, simple, sizeof simple);
        fmt_escape(out, n, simple);
        break;
    case COL_TEXT:
    case COL_NAME:
    case COL_JSON:
        fmt_escape(out, n, c->s);
        break;
    case COL_INT:
        snprintf(out, n, "%lld", (long long)c->i);
        break;
    case COL_NS:
        fmt_ns(out, n, c->d);
        break;
    case COL_BYTES:
        fmt_bytes(out, n, c->d);
        break;
    case COL_PCT:
        snprintf(out, n, "%.1f", c->d);
        break;
    case COL_RATE:
        snprintf(out, n, c->d >= 100 ? "%.0f" : "%.2f", c->d);
        break;
    case COL_RATIO:
        snprintf(out, n, "%.2fx", c->d);
        break;
    }
}

int render_is_left(enum col_type t)
{
    return t == COL_TEXT || t == COL_NAME || t == COL_KERNEL || t == COL_JSON;
}

int render_is_name(enum col_type t)
{
    return t == COL_NAME || t == COL_KERNEL;
}

/* The columns a UTF-8 character takes on a terminal: 2 for East Asian wide and emoji ranges,
 * 1 for the rest (continuation bytes 0). */
static int char_width(const unsigned char *c, int *len)
{
    unsigned u = c[0];
    *len = u < 0x80             ? 1
           : (u & 0xe0) == 0xc0 ? 2
           : (u & 0xf0) == 0xe0 ? 3
           : (u & 0xf8) == 0xf0 ? 4
                                : 1;
    for (int i = 1; i < *len; i++)
        if ((c[i] & 0xc0) != 0x80) return *len = 1, 1; /* invalid: one column a byte */
    if (*len == 1) return 1;
    u &= 0xff >> (*len + 1);
    for (int i = 1; i < *len; i++) u = (u << 6) | (c[i] & 0x3f);
    return (u >= 0x1100 && u <= 0x115f) || (u >= 0x2e80 && u <= 0xa4cf) ||
                   (u >= 0xac00 && u <= 0xd7a3) || (u >= 0xf900 && u <= 0xfaff) ||
                   (u >= 0xfe30 && u <= 0xfe4f) || (u >= 0xff00 && u <= 0xff60) ||
                   (u >= 0xffe0 && u <= 0xffe6) || (u >= 0x1f300 && u <= 0x1faff) ||
                   (u >= 0x20000 && u <= 0x3fffd)
               ? 2
               : 1;
}

/* The columns s takes on a terminal. */
int render_disp_width(const char *s)
{
    int w = 0, len;
    for (const unsigned char *c = (const unsigned char *)s; *c; c += len) w += char_width(c, &len);
    return w;
}

/* Shorten s to at most w columns by cutting its middle, never inside a UTF-8 character. */
/* A place to cut a name: after a separator of words or of C++ scopes (" ", "::", "_", ".", "/",
 * ",", "(", "<", "-"). */
static int word_edge(char c)
{
    return c == ' ' || c == ':' || c == '_' || c == '.' || c == '/' || c == ',' || c == '(' ||
           c == '<' || c == '-';
}

void render_label_fit(char *out, size_t n, const char *s, int w)
{
    if (!n) return;
    /* Shortened whole first (its tail kept: a long label's hash is there), then cut on a
     * character to the room (cut first, the tail was lost and two names read alike). */
    char *buf = strdup(s);
    if (!buf) cli_fail("out of memory");
    render_shorten(buf, w);
    size_t len = strlen(buf);
    if (len >= n) len = fmt_utf8_cut(buf, n - 1);
    memcpy(out, buf, len);
    out[len] = 0;
    free(buf);
}

void render_shorten(char *s, int w)
{
    render_shorten_share(s, w, 50);
}

/* s starts an escape of fmt_escape's: a backslash, x and two hex digits. */
static int escape_at(const char *s)
{
    return s[0] == '\\' && s[1] == 'x' && isxdigit((unsigned char)s[2]) &&
           isxdigit((unsigned char)s[3]);
}

void render_shorten_share(char *s, int w, int head_pct)
{
    if (w < 8 || render_disp_width(s) <= w) return;
    int head_w = (w - 3) * head_pct / 100, tail_w = w - 3 - head_w, len = (int)strlen(s), cl;
    int head = 0, used = 0;
    while (s[head]) {
        int cw = char_width((const unsigned char *)s + head, &cl);
        if (used + cw > head_w) break;
        used += cw, head += cl;
    }
    /* The tail: the last characters that fit in tail_w columns. */
    int from = len;
    used = 0;
    while (from > head) {
        int b = from - 1;
        while (b > head && ((unsigned char)s[b] & 0xc0) == 0x80) b--;
        int cw = char_width((const unsigned char *)s + b, &cl);
        if (used + cw > tail_w) break;
        used += cw, from = b;
    }
    /* At a word's edge where one is near (within a third of each part): "aten::cudnn_..." and
     * "..._convolution", not "aten::cud...lution". The columns given up stay blank. Not for
     * the other shares, which tell apart names that the middle cut made alike. */
    for (int b = head; head_pct == 50 && b > 0 && head - b <= head_w / 3; b--)
        if (word_edge(s[b - 1]) && !word_edge(s[b])) {
            head = b;
            break;
        }
    for (int b = from; head_pct == 50 && b < len && b - from <= tail_w / 3; b++)
        if (word_edge(s[b]) && b + 1 < len && !word_edge(s[b + 1])) {
            from = b + 1 > from ? b : from; /* keep the separator: "..._convolution" */
            break;
        }
    /* Never inside an escape ("\x0a" for a control character): "New\x0...\x09Tab" read as a
     * name that never was (a fresh-eyes check). The head ends before it, the tail after it. */
    for (int j = head - 3 > 0 ? head - 3 : 0; j < head; j++)
        if (escape_at(s + j)) {
            head = j;
            break;
        }
    for (int j = from - 3 > head ? from - 3 : head; j < from; j++)
        if (escape_at(s + j)) {
            from = j + 4;
            break;
        }
    memmove(s + head + 3, s + from, (size_t)(len - from) + 1);
    memcpy(s + head, "...", 3);
}

/* s, padded with spaces to w columns (left-aligned, or right-aligned when right), then tail. */
void render_print_padded(FILE *out, const char *s, int w, int right, const char *tail)
{
    int pad = w - render_disp_width(s);
    if (right && pad > 0) fprintf(out, "%*s", pad, "");
    fputs(s, out);
    if (!right && pad > 0) fprintf(out, "%*s", pad, "");
    fputs(tail, out);
}

const int render_shares[RENDER_SHARES] = {75, 25, 90, 10};

/* Rows whose shown text equals another's while their names differ: flag[r] 1; how many. */
static int clashing(const struct table *t, int c, char **shown, int *flag)
{
    int n = 0;
    for (int r = 0; r < t->nrows; r++) {
        const struct cell *a = &t->cells[r * t->ncols + c];
        for (int q = r + 1; q < t->nrows && shown[r]; q++) {
            const struct cell *b = &t->cells[q * t->ncols + c];
            if (a->null || b->null || !shown[q] || strcmp(shown[r], shown[q]) ||
                !strcmp(a->s, b->s))
                continue;
            n += !flag[r] + !flag[q];
            flag[r] = flag[q] = 1;
        }
    }
    return n;
}

void render_name_clashes(const struct table *t, int c, int w, enum name_style names, int *need)
{
    memset(need, 0, (size_t)t->nrows * sizeof *need);
    if (t->nrows > 4000) return; /* quadratic: a table that long is read as data */
    char **shown = calloc((size_t)t->nrows, sizeof *shown);
    int *flag = calloc((size_t)t->nrows + 1, sizeof *flag);
    if (!shown || !flag) {
        free(shown), free(flag);
        return;
    }
    char buf[CELL_MAX];
    for (int r = 0; r < t->nrows; r++) {
        render_cell_text(&t->cols[c], &t->cells[r * t->ncols + c], names, buf, sizeof buf);
        if (w >= 0) render_shorten(buf, w);
        shown[r] = strdup(buf);
    }
    if (clashing(t, c, shown, need) && w >= 0) {
        /* Each one cut elsewhere (more of the head, or of the tail) where that shows a text no
         * other row shows, before a hash tag takes six of the column's characters:
         * "aten::cud...tion" beside "aten::con...tion", where the middle cut gave
         * "aten::...olution" twice. */
        for (int r = 0; r < t->nrows; r++) {
            if (!need[r]) continue;
            for (int s = 0; s < RENDER_SHARES && need[r] == 1; s++) {
                render_cell_text(&t->cols[c], &t->cells[r * t->ncols + c], names, buf, sizeof buf);
                render_shorten_share(buf, w, render_shares[s]);
                int alone = 1;
                for (int q = 0; q < t->nrows && alone; q++)
                    alone = q == r || !shown[q] || strcmp(buf, shown[q]) ||
                            !strcmp(t->cells[q * t->ncols + c].s, t->cells[r * t->ncols + c].s);
                if (!alone) continue;
                free(shown[r]);
                shown[r] = strdup(buf);
                need[r] = 2 + s;
            }
        }
    }
    for (int r = 0; r < t->nrows; r++) free(shown[r]);
    free(shown), free(flag);
}

/* " #a3f1": FNV-1a of the name, folded to 16 bits. */
void render_name_tag(const char *s, char *out, size_t n)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    snprintf(out, n, " #%04x", (unsigned)((h >> 16) ^ (h & 0xffff)));
}

/* The columns a rendering shows: text and Markdown those with a title, data those with a key. */
int render_visible(const struct table *t, int data, int *idx)
{
    int n = 0;
    for (int c = 0; c < t->ncols; c++)
        if (data ? t->cols[c].key != NULL : t->cols[c].title != NULL) idx[n++] = c;
    return n;
}

/*
 * render.c: the four renderings of a document made of tables (table.h). Text aligns columns in
 * 100 characters with human units and shortens long names in the middle; JSON and CSV carry
 * exact values (CSV: one tidy table per section with --section or --csv-dir); Markdown is for
 * pasting into issues. Program strings are escaped everywhere: control characters never reach a
 * terminal raw.
 */
#include "render.h"
#include "../base/cli.h"
#include "../base/json.h"
#include "../base/names.h"
#include "../base/table.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum out_format parse_format(const char *s)
{
    if (!strcmp(s, "text")) return OUT_TEXT;
    if (!strcmp(s, "json")) return OUT_JSON;
    if (!strcmp(s, "csv")) return OUT_CSV;
    if (!strcmp(s, "md") || !strcmp(s, "markdown")) return OUT_MD;
    cli_fail("unknown format '%s' (use text, json, csv or md)", s);
}

#define CELL_MAX 4096

/* A cell as text for the text and Markdown renderings. */
static void cell_text(const struct col *col, const struct cell *c, char *out, size_t n)
{
    if (c->null) {
        snprintf(out, n, "-");
        return;
    }
    char simple[CELL_MAX];
    switch (col->type) {
    case COL_KERNEL:
        name_for(c->s, 1, simple, sizeof simple);
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

static int is_left(enum col_type t)
{
    return t == COL_TEXT || t == COL_NAME || t == COL_KERNEL || t == COL_JSON;
}

static int is_name(enum col_type t)
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
static int disp_width(const char *s)
{
    int w = 0, len;
    for (const unsigned char *c = (const unsigned char *)s; *c; c += len) w += char_width(c, &len);
    return w;
}

/* Shorten s to at most w columns by cutting its middle, never inside a UTF-8 character. */
static void shorten(char *s, int w)
{
    if (w < 8 || disp_width(s) <= w) return;
    int head_w = (w - 3) / 2, tail_w = w - 3 - head_w, len = (int)strlen(s), cl;
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
    memmove(s + head + 3, s + from, (size_t)(len - from) + 1);
    memcpy(s + head, "...", 3);
}

/* s, padded with spaces to w columns (left-aligned, or right-aligned when right), then tail. */
static void print_padded(FILE *out, const char *s, int w, int right, const char *tail)
{
    int pad = w - disp_width(s);
    if (right && pad > 0) fprintf(out, "%*s", pad, "");
    fputs(s, out);
    if (!right && pad > 0) fprintf(out, "%*s", pad, "");
    fputs(tail, out);
}

/* Distinct names stay distinct on screen: rows of name column `c` whose shown text (shortened
 * to w, w < 0: not shortened) equals another row's while their names differ get a tag, a short
 * hash of the name (the same kernel has the same tag in every table). need[r]: 1 for those. */
static void name_clashes(const struct table *t, int c, int w, int *need)
{
    memset(need, 0, (size_t)t->nrows * sizeof *need);
    if (t->nrows > 4000) return; /* quadratic: a table that long is read as data */
    char **shown = calloc((size_t)t->nrows, sizeof *shown);
    if (!shown) return;
    char buf[CELL_MAX];
    for (int r = 0; r < t->nrows; r++) {
        cell_text(&t->cols[c], &t->cells[r * t->ncols + c], buf, sizeof buf);
        if (w >= 0) shorten(buf, w);
        shown[r] = strdup(buf);
    }
    for (int r = 0; r < t->nrows; r++) {
        const struct cell *a = &t->cells[r * t->ncols + c];
        for (int q = r + 1; q < t->nrows && shown[r]; q++) {
            const struct cell *b = &t->cells[q * t->ncols + c];
            if (a->null || b->null || !shown[q] || strcmp(shown[r], shown[q]) ||
                !strcmp(a->s, b->s))
                continue;
            need[r] = need[q] = 1;
        }
    }
    for (int r = 0; r < t->nrows; r++) free(shown[r]);
    free(shown);
}

/* " #a3f1": FNV-1a of the name, folded to 16 bits. */
static void name_tag(const char *s, char *out, size_t n)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    snprintf(out, n, " #%04x", (unsigned)((h >> 16) ^ (h & 0xffff)));
}

/* The columns a rendering shows: text and Markdown those with a title, data those with a key. */
static int visible(const struct table *t, int data, int *idx)
{
    int n = 0;
    for (int c = 0; c < t->ncols; c++)
        if (data ? t->cols[c].key != NULL : t->cols[c].title != NULL) idx[n++] = c;
    return n;
}

/* ---- text --------------------------------------------------------------------------------- */

/* Print s from column `at` on, wrapped at spaces to end before column `width`; continuation
 * lines start at column `at`. Nothing is cut: a word longer than the room goes on a line of
 * its own. Ends with a newline. */
static void print_wrapped(FILE *out, const char *s, int at, int width)
{
    int room = width - at;
    if (room < 20) room = 20;
    for (;;) {
        int len = (int)strlen(s);
        if (len <= room) {
            fprintf(out, "%s\n", s);
            return;
        }
        int cut = room;
        while (cut > 0 && s[cut] != ' ') cut--;
        if (cut == 0) { /* one long word: up to the next space */
            cut = room;
            while (s[cut] && s[cut] != ' ') cut++;
        }
        fprintf(out, "%.*s\n%*s", cut, s, at, "");
        s += cut;
        while (*s == ' ') s++;
        if (!*s) return;
    }
}

static void render_text_object(FILE *out, const struct table *t, const struct render_opts *o)
{
    char buf[CELL_MAX];
    int idx[TABLE_MAX_COLS], nv = visible(t, 0, idx), w = 0;
    for (int k = 0; k < nv; k++)
        if ((int)strlen(t->cols[idx[k]].title) > w) w = (int)strlen(t->cols[idx[k]].title);
    for (int k = 0; t->nrows && k < nv; k++) {
        const struct cell *cell = &t->cells[idx[k]];
        if (cell->null) continue;
        cell_text(&t->cols[idx[k]], cell, buf, sizeof buf);
        /* Warnings stand out on a terminal (yellow); everything else stays plain. Long values
         * wrap under themselves, never cut. */
        int warn = o->color && t->cols[idx[k]].key && !strcmp(t->cols[idx[k]].key, "warnings");
        fprintf(out, "  %-*s  %s", w, t->cols[idx[k]].title, warn ? "\033[33m" : "");
        if (o->wide)
            fprintf(out, "%s\n", buf);
        else
            print_wrapped(out, buf, w + 4, o->width);
        if (warn) fputs("\033[0m", out);
    }
}

static void render_text(FILE *out, const struct table *t, const struct render_opts *o)
{
    const char *bold = o->color ? "\033[1m" : "", *plain = o->color ? "\033[0m" : "";
    char title[CELL_MAX];
    fmt_escape(title, sizeof title, t->title); /* titles may quote a phase label or range */
    fprintf(out, "%s%s%s\n", bold, title, plain);
    if (t->object) {
        render_text_object(out, t, o);
    } else if (!t->nrows) {
        fprintf(out, "  (none)\n");
    } else {
        int width[TABLE_MAX_COLS], idx[TABLE_MAX_COLS], nv = visible(t, 0, idx);
        char buf[CELL_MAX];
        for (int k = 0; k < nv; k++) width[k] = disp_width(t->cols[idx[k]].title);
        for (int r = 0; r < t->nrows; r++)
            for (int k = 0; k < nv; k++) {
                cell_text(&t->cols[idx[k]], &t->cells[r * t->ncols + idx[k]], buf, sizeof buf);
                if (disp_width(buf) > width[k]) width[k] = disp_width(buf);
            }
        /* Names take what the other columns leave of the width. */
        int used = 2;
        for (int k = 0; k < nv; k++)
            if (!is_name(t->cols[idx[k]].type)) used += width[k] + 2;
        for (int k = 0; k < nv; k++)
            if (is_name(t->cols[idx[k]].type) && !o->wide) {
                int room = o->width - used;
                if (room < 16) room = 16;
                if (width[k] > room) width[k] = room;
            }
        int *clash = calloc((size_t)(t->nrows * nv) + 1, sizeof *clash);
        if (!clash) cli_fail("out of memory");
        for (int k = 0; k < nv; k++)
            if (is_name(t->cols[idx[k]].type))
                name_clashes(t, idx[k], o->wide ? -1 : width[k], clash + k * t->nrows);
        for (int r = -1; r < t->nrows; r++) {
            fputs("  ", out);
            int at = 2;
            for (int k = 0; k < nv; k++) {
                const struct col *col = &t->cols[idx[k]];
                if (r < 0)
                    snprintf(buf, sizeof buf, "%s", col->title);
                else
                    cell_text(col, &t->cells[r * t->ncols + idx[k]], buf, sizeof buf);
                if (r >= 0 && clash[k * t->nrows + r]) {
                    char tag[16];
                    name_tag(t->cells[r * t->ncols + idx[k]].s, tag, sizeof tag);
                    if (!o->wide) shorten(buf, width[k] - disp_width(tag));
                    strcat(buf, tag);
                } else if (is_name(col->type) && !o->wide) {
                    shorten(buf, width[k]);
                }
                int last = k + 1 == nv;
                if (last && is_left(col->type)) {
                    if (o->wide)
                        fprintf(out, "%s\n", buf);
                    else
                        print_wrapped(out, buf, at, o->width);
                } else {
                    print_padded(out, buf, width[k], !is_left(col->type), last ? "\n" : "  ");
                }
                at += width[k] + 2;
            }
        }
        free(clash);
    }
    if (t->note) {
        fputs("  ", out);
        print_wrapped(out, t->note, 2, o->width);
    }
    fputc('\n', out);
}

/* ---- JSON --------------------------------------------------------------------------------- */

static void json_string(FILE *out, const char *s)
{
    size_t len;
    char *q = json_quote(s ? s : "", s ? strlen(s) : 0, &len);
    if (!q) cli_fail("out of memory");
    fwrite(q, 1, len, out);
    free(q);
}

static void json_cell(FILE *out, const struct col *col, const struct cell *c)
{
    if (c->null) {
        fputs("null", out);
        return;
    }
    switch (col->type) {
    case COL_KERNEL: {
        char *name = name_data(c->s); /* whole: C++ names can pass any fixed size */
        if (!name) cli_fail("out of memory");
        json_string(out, name);
        free(name);
        break;
    }
    case COL_TEXT:
    case COL_NAME:
        json_string(out, c->s);
        break;
    case COL_JSON:
        fputs(c->s, out);
        break;
    case COL_INT:
    case COL_NS:
    case COL_BYTES:
        fprintf(out, "%lld", (long long)c->i);
        break;
    case COL_PCT:
    case COL_RATE:
    case COL_RATIO:
        fprintf(out, "%.9g", c->d);
        break;
    }
}

static void json_row(FILE *out, const struct table *t, int r, const char *indent)
{
    fputc('{', out);
    int idx[TABLE_MAX_COLS], nv = visible(t, 1, idx);
    for (int k = 0; k < nv; k++) {
        int c = idx[k];
        fprintf(out, "%s\n%s  ", k ? "," : "", indent);
        json_string(out, t->cols[c].key);
        fputs(": ", out);
        json_cell(out, &t->cols[c], &t->cells[r * t->ncols + c]);
    }
    fprintf(out, "\n%s}", indent);
}

/* The shape of the JSON document (docs/report.md): raised when a key is renamed or removed or
 * its meaning or unit changes; added keys keep it. */
#define JSON_SCHEMA_VERSION 1

static void render_json(FILE *out, struct table **tables, int n)
{
    fprintf(out, "{\n  \"json_schema_version\": %d", JSON_SCHEMA_VERSION);
    int first = 0;
    for (int i = 0; i < n; i++) {
        const struct table *t = tables[i];
        if (!t->key) continue; /* a text-only view */
        fprintf(out, "%s\n  ", first ? "" : ",");
        first = 0;
        json_string(out, t->key);
        fputs(": ", out);
        if (t->object) {
            if (t->nrows)
                json_row(out, t, 0, "  ");
            else
                fputs("null", out);
            continue;
        }
        fputc('[', out);
        for (int r = 0; r < t->nrows; r++) {
            fprintf(out, "%s\n    ", r ? "," : "");
            json_row(out, t, r, "    ");
        }
        fputs(t->nrows ? "\n  ]" : "]", out);
    }
    fputs("\n}\n", out);
}

/* ---- CSV and Markdown --------------------------------------------------------------------- */

static void csv_cell(FILE *out, const struct col *col, const struct cell *c)
{
    if (c->null) return;
    if (is_left(col->type)) {
        char *name = col->type == COL_KERNEL ? name_data(c->s) : NULL;
        const char *text = name ? name : c->s;
        size_t cap = 4 * strlen(text) + 8; /* an escape is at most 4 bytes a byte: no cut */
        char *buf = malloc(cap);
        if (!buf) cli_fail("out of memory");
        fmt_escape(buf, cap, text);
        free(name);
        fputc('"', out);
        /* A spreadsheet evaluates a cell that starts with = + - @ (a name such as "=cmd|..."
         * from the program): it is kept as text, OWASP's rule (a leading '). */
        if (strchr("=+-@", buf[0]) && buf[0]) fputc('\'', out);
        for (const char *p = buf; *p; p++) {
            if (*p == '"') fputc('"', out);
            fputc(*p, out);
        }
        fputc('"', out);
        free(buf);
    } else if (col->type == COL_PCT || col->type == COL_RATE || col->type == COL_RATIO) {
        fprintf(out, "%.9g", c->d);
    } else {
        fprintf(out, "%lld", (long long)c->i);
    }
}

/* One table as CSV; tidy (header and rows only, what pandas.read_csv reads) or, in the
 * all-sections document, headed by "# key" and followed by a blank line. */
static void render_csv(FILE *out, const struct table *t, int tidy)
{
    int idx[TABLE_MAX_COLS], nv = visible(t, 1, idx);
    if (!tidy) fprintf(out, "# %s\n", t->key);
    for (int k = 0; k < nv; k++) fprintf(out, "%s%s", k ? "," : "", t->cols[idx[k]].key);
    fputc('\n', out);
    for (int r = 0; r < t->nrows; r++) {
        for (int k = 0; k < nv; k++) {
            if (k) fputc(',', out);
            csv_cell(out, &t->cols[idx[k]], &t->cells[r * t->ncols + idx[k]]);
        }
        fputc('\n', out);
    }
    if (!tidy) fputc('\n', out);
}

static void md_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', out);
        fputc(*s, out);
    }
}

static void render_md(FILE *out, const struct table *t)
{
    char buf[CELL_MAX];
    int idx[TABLE_MAX_COLS], nv = visible(t, 0, idx);
    char title[CELL_MAX];
    fmt_escape(title, sizeof title, t->title);
    fprintf(out, "## %s\n\n", title);
    if (t->object) {
        fputs("| | |\n|---|---|\n", out);
        for (int k = 0; t->nrows && k < nv; k++) {
            const struct cell *cell = &t->cells[idx[k]];
            if (cell->null) continue;
            cell_text(&t->cols[idx[k]], cell, buf, sizeof buf);
            fprintf(out, "| %s | ", t->cols[idx[k]].title);
            md_text(out, buf);
            fputs(" |\n", out);
        }
    } else {
        for (int k = 0; k < nv; k++) fprintf(out, "| %s ", t->cols[idx[k]].title);
        fputs("|\n", out);
        for (int k = 0; k < nv; k++) fputs(is_left(t->cols[idx[k]].type) ? "|---" : "|---:", out);
        fputs("|\n", out);
        for (int r = 0; r < t->nrows; r++) {
            for (int k = 0; k < nv; k++) {
                cell_text(&t->cols[idx[k]], &t->cells[r * t->ncols + idx[k]], buf, sizeof buf);
                fputs("| ", out);
                md_text(out, buf);
                fputc(' ', out);
            }
            fputs("|\n", out);
        }
    }
    if (t->note) fprintf(out, "\n%s\n", t->note);
    fputc('\n', out);
}

/* --csv-dir: DIR/<key>.csv for each table, never over an existing file. */
static void render_csv_dir(struct table **tables, int n, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        cli_fail("cannot create directory %s: %s", dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        if (!tables[i]->key) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.csv", dir, tables[i]->key);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0)
            cli_fail("cannot write %s: %s%s", path, strerror(errno),
                     errno == EEXIST ? " (it is kept: give an empty directory)" : "");
        FILE *f = fdopen(fd, "w");
        if (!f) cli_fail("cannot write %s: %s", path, strerror(errno));
        render_csv(f, tables[i], 1);
        if (fclose(f) != 0) cli_fail("writing %s failed: %s", path, strerror(errno));
    }
}

void render(FILE *out, struct table **tables, int n, const struct render_opts *o)
{
    if (o->section) {
        int k = 0;
        while (k < n && !(tables[k]->key && !strcmp(tables[k]->key, o->section))) k++;
        if (k == n) {
            char known[1024] = "";
            for (int i = 0, len = 0; i < n && len + 40 < (int)sizeof known; i++)
                if (tables[i]->key)
                    len += snprintf(known + len, sizeof known - (size_t)len, "%s%s",
                                    len ? ", " : "", tables[i]->key);
            cli_fail("--section %s: no such section (sections: %s)", o->section, known);
        }
        tables += k;
        n = 1;
    }
    if (o->format == OUT_CSV && o->csv_dir) {
        render_csv_dir(tables, n, o->csv_dir);
        return;
    }
    if (o->format == OUT_JSON) {
        render_json(out, tables, n);
        return;
    }
    for (int i = 0; i < n; i++) {
        const struct table *t = tables[i];
        int shown = t->title && !(t->optional && !t->nrows) && !t->quiet;
        if (o->format == OUT_TEXT && (shown || o->section)) render_text(out, t, o);
        if (o->format == OUT_CSV && t->key) render_csv(out, t, o->section != NULL);
        if (o->format == OUT_MD && (shown || o->section)) render_md(out, t);
    }
}

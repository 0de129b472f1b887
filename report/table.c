/*
 * table.c: the report's table model and its four renderings (cli.h). Text aligns columns in 100
 * characters with human units and shortens long names in the middle; JSON and CSV carry exact
 * values; Markdown is for pasting into issues. Program strings are escaped everywhere: control
 * characters never reach a terminal raw.
 */
#include "cli.h"
#include "names.h"
#include "export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <errno.h>

struct table *table_new(const char *key, const char *title)
{
    struct table *t = calloc(1, sizeof *t);
    if (!t) cli_fail("out of memory");
    t->key = key;
    t->title = title;
    return t;
}

void table_col(struct table *t, const char *key, const char *title, enum col_type type)
{
    if (t->ncols == (int)(sizeof t->cols / sizeof t->cols[0]))
        cli_fail("internal: too many columns");
    t->cols[t->ncols++] = (struct col){key, title, type};
}

void table_row(struct table *t)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = realloc(t->cells, sizeof *t->cells * (size_t)t->cap * (size_t)t->ncols);
        if (!t->cells) cli_fail("out of memory");
    }
    struct cell *row = t->cells + (size_t)t->nrows * (size_t)t->ncols;
    for (int c = 0; c < t->ncols; c++) row[c] = (struct cell){1, 0, 0, NULL};
    t->nrows++;
}

static struct cell *cell_at(struct table *t, int col)
{
    return t->cells + (size_t)(t->nrows - 1) * (size_t)t->ncols + col;
}

void table_set_int(struct table *t, int col, int64_t v)
{
    struct cell *c = cell_at(t, col);
    c->null = 0;
    c->i = v;
    c->d = (double)v;
}

void table_set_num(struct table *t, int col, double v)
{
    struct cell *c = cell_at(t, col);
    if (isnan(v) || isinf(v)) return;
    c->null = 0;
    c->d = v;
    c->i = (int64_t)llround(v);
}

void table_set_text(struct table *t, int col, const char *s)
{
    struct cell *c = cell_at(t, col);
    if (!s) return;
    free(c->s);
    c->s = strdup(s);
    c->null = 0;
}

void table_free(struct table *t)
{
    if (!t) return;
    for (int i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i].s);
    free(t->cells);
    free(t);
}

/* ---- units and escaping ------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, nothing past
 * U+10FFFF), or 0. */
size_t fmt_utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t avail = (size_t)(end - p);
    unsigned char c = p[0];
    if (c >= 0xc2 && c <= 0xdf) return avail >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if (avail < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) return 0;
        if (c == 0xe0 && p[1] < 0xa0) return 0; /* overlong */
        if (c == 0xed && p[1] > 0x9f) return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if (avail < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if (c == 0xf0 && p[1] < 0x90) return 0; /* overlong */
        if (c == 0xf4 && p[1] > 0x8f) return 0; /* past U+10FFFF */
        return 4;
    }
    return 0;
}

void fmt_escape(char *out, size_t n, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : ""),
                        *end = p + strlen((const char *)p);
    size_t o = 0;
    while (p < end && o + 7 < n) {
        size_t len = *p < 0x80 ? 1 : fmt_utf8_len(p, end);
        if (*p < 0x20 || *p == 0x7f || len == 0) {
            /* C0 controls, DEL, and bytes that are not UTF-8. */
            o += (size_t)snprintf(out + o, n - o, "\\x%02x", *p++);
        } else if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
            /* C1 controls (U+0080..U+009F): a terminal reads U+009B as CSI. */
            o += (size_t)snprintf(out + o, n - o, "\\u%04x", p[1]);
            p += 2;
        } else {
            if (o + len + 1 > n) break;
            memcpy(out + o, p, len);
            o += len;
            p += len;
        }
    }
    out[o] = 0;
}

void fmt_ns(char *out, size_t n, double ns)
{
    double a = fabs(ns);
    if (a < 1e3)
        snprintf(out, n, "%.0fns", ns);
    else if (a < 1e6)
        snprintf(out, n, "%.2fus", ns / 1e3);
    else if (a < 1e9)
        snprintf(out, n, "%.2fms", ns / 1e6);
    else
        snprintf(out, n, "%.3fs", ns / 1e9);
}

void fmt_bytes(char *out, size_t n, double b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double a = fabs(b);
    int u = 0;
    while (a >= 1024 && u < 4) a /= 1024, b /= 1024, u++;
    if (u == 0)
        snprintf(out, n, "%.0fB", b);
    else
        snprintf(out, n, "%.2f%s", b, units[u]);
}

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

/* Shorten s to at most w bytes by cutting its middle, never inside a UTF-8 character. */
static void shorten(char *s, int w)
{
    int len = (int)strlen(s);
    if (w < 8 || len <= w) return;
    int head = (w - 3) / 2, tail = w - 3 - head;
    int from = len - tail;
    while (head > 0 && ((unsigned char)s[head] & 0xc0) == 0x80) head--;
    while (from < len && ((unsigned char)s[from] & 0xc0) == 0x80) from++;
    memmove(s + head + 3, s + from, (size_t)(len - from) + 1);
    memcpy(s + head, "...", 3);
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
        for (int k = 0; k < nv; k++) width[k] = (int)strlen(t->cols[idx[k]].title);
        for (int r = 0; r < t->nrows; r++)
            for (int k = 0; k < nv; k++) {
                cell_text(&t->cols[idx[k]], &t->cells[r * t->ncols + idx[k]], buf, sizeof buf);
                if ((int)strlen(buf) > width[k]) width[k] = (int)strlen(buf);
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
        for (int r = -1; r < t->nrows; r++) {
            fputs("  ", out);
            int at = 2;
            for (int k = 0; k < nv; k++) {
                const struct col *col = &t->cols[idx[k]];
                if (r < 0)
                    snprintf(buf, sizeof buf, "%s", col->title);
                else
                    cell_text(col, &t->cells[r * t->ncols + idx[k]], buf, sizeof buf);
                if (is_name(col->type) && !o->wide) shorten(buf, width[k]);
                int last = k + 1 == nv;
                if (last && is_left(col->type)) {
                    if (o->wide)
                        fprintf(out, "%s\n", buf);
                    else
                        print_wrapped(out, buf, at, o->width);
                } else {
                    fprintf(out, is_left(col->type) ? "%-*s%s" : "%*s%s", width[k], buf,
                            last ? "\n" : "  ");
                }
                at += width[k] + 2;
            }
        }
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
    char name[CELL_MAX];
    switch (col->type) {
    case COL_KERNEL:
        name_for(c->s, 0, name, sizeof name);
        json_string(out, name);
        break;
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

static void render_json(FILE *out, struct table **tables, int n)
{
    fputs("{", out);
    int first = 1;
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
        char buf[CELL_MAX], name[CELL_MAX];
        if (col->type == COL_KERNEL) name_for(c->s, 0, name, sizeof name);
        fmt_escape(buf, sizeof buf, col->type == COL_KERNEL ? name : c->s);
        fputc('"', out);
        for (const char *p = buf; *p; p++) {
            if (*p == '"') fputc('"', out);
            fputc(*p, out);
        }
        fputc('"', out);
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
        int shown = t->title && !(t->optional && !t->nrows);
        if (o->format == OUT_TEXT && (shown || o->section)) render_text(out, t, o);
        if (o->format == OUT_CSV && t->key) render_csv(out, t, o->section != NULL);
        if (o->format == OUT_MD && (shown || o->section)) render_md(out, t);
    }
}

/*
 * render.c: a document made of tables (table.h) rendered in the output format the command asked
 * for: each format is a file of its own (render_text.c, render_json.c, render_csv.c,
 * render_md.c) with a descriptor, and formats.c lists them. Program strings are escaped in every
 * format: control characters never reach a terminal raw.
 */
#include "render_impl.h"
#include "../base/cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

const char *output_format_names(const char *sep, const char *last)
{
    char known[256] = "";
    size_t o = 0;
    for (int i = 0; i < output_format_count && o < sizeof known; i++)
        o += (size_t)snprintf(known + o, sizeof known - o, "%s%s",
                              i == 0                         ? ""
                              : i + 1 == output_format_count ? last
                                                             : sep,
                              output_formats[i]->name);
    return pool_printf("%s", known);
}

const struct output_format *parse_format(const char *s)
{
    for (int i = 0; i < output_format_count; i++) {
        const struct output_format *f = output_formats[i];
        if (!strcmp(s, f->name) || (f->alias && !strcmp(s, f->alias))) return f;
    }
    cli_fail("unknown format '%s' (use %s)", s, output_format_names(", ", " or "));
}

const struct output_format *output_format_of(enum out_format views)
{
    for (int i = 0; i < output_format_count; i++)
        if (output_formats[i]->views == views) return output_formats[i];
    return output_formats[0];
}

int render_text_width(void)
{
    const char *c = getenv("COLUMNS");
    char *end = NULL;
    long v = c && *c ? strtol(c, &end, 10) : 0;
    if (end && !*end && v > 0) return v < 40 ? 40 : v > 1000 ? 1000 : (int)v; /* held to 40-1000 */
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return ws.ws_col > 1000 ? 1000 : ws.ws_col;
    return 100;
}

int render_shown(const struct table *t, const struct render_opts *o)
{
    if (o->section && t->key && !strcmp(t->key, o->section)) return 1;
    return t->title && !(t->optional && !t->nrows) && !t->quiet;
}

void render(FILE *out, struct table **tables, int n, const struct render_opts *o)
{
    const struct output_format *f = o->out ? o->out : output_format_of(o->format);
    struct table **picked = NULL, *made[RENDER_COLUMN_SPECS];
    int nmade = 0;
    if (o->ncolumns) {
        /* The page draws its charts from the sections' whole tables. */
        if (!strcmp(f->name, "html"))
            cli_fail("--columns is for text, md, csv and json, not html (the page draws its"
                     " charts from every column)");
        if (!(picked = malloc((size_t)(n ? n : 1) * sizeof *picked))) cli_fail("out of memory");
        n = render_columns(tables, n, o, picked, made);
        nmade = o->ncolumns;
        tables = picked;
    }
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
        /* The table, and the text views its section built right after it (phases: the
         * comparison against the baseline): JSON and CSV carry keyed tables only. */
        int views = 0;
        while (k + 1 + views < n && !tables[k + 1 + views]->key) views++;
        tables += k;
        n = 1 + views;
    }
    /* --section K in text and Markdown: a data table with no title of its own is JSON's and
     * CSV's; where views of it follow, they are what a reader asked for. */
    if (o->section && n > 1 && !tables[0]->title && (f->views == OUT_TEXT || f->views == OUT_MD))
        tables++, n--;
    f->document(out, tables, n, o);
    for (int i = 0; i < nmade; i++) table_free(made[i]);
    free(picked);
}

/*
 * render_columns.c: `--columns SECTION=COL,COL,...` (render.h), the columns a user picks for a
 * section, as perf report's -F picks its fields: the section's data table (its JSON key) shown
 * with those columns only, in that order, in text, Markdown, CSV and JSON alike. Each column is
 * the data table's own (its JSON key and CSV header, its text title where it has one): the one
 * computation every output reads. The section's own text views give way to it. An unknown
 * section or column is an error that lists what there is.
 */
#include "render_impl.h"
#include "../base/cli.h"

#include <stdlib.h>
#include <string.h>

/* The keys of t's columns ("phase, series, ..."), for an error. */
static const char *column_keys(const struct table *t)
{
    char known[2048] = "";
    size_t o = 0;
    for (int c = 0; c < t->ncols && o + 64 < sizeof known; c++)
        if (t->cols[c].key)
            o += (size_t)snprintf(known + o, sizeof known - o, "%s%s", o ? ", " : "",
                                  t->cols[c].key);
    return pool_printf("%s", known);
}

static int keyed(struct table **t, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (t[i]->key && !strcmp(t[i]->key, key)) return i;
    return -1;
}

/* The data table t with the columns of `list` ("a,b,c") only, titled as its text shows it. */
static struct table *project(const struct table *t, const char *key, const char *list,
                             const char *title)
{
    struct table *p = table_new(t->key, title);
    p->object = t->object;
    int src[TABLE_MAX_COLS], n = 0;
    const char *s = list;
    while (*s) {
        size_t len = strcspn(s, ",");
        int c = 0;
        while (c < t->ncols && !(t->cols[c].key && strlen(t->cols[c].key) == len &&
                                 !strncmp(t->cols[c].key, s, len)))
            c++;
        if (c == t->ncols)
            cli_fail("--columns %s=...: no column '%.*s' in %s (columns: %s)", key,
                     (int)(len < 64 ? len : 64), s, t->key, column_keys(t));
        for (int k = 0; k < n; k++)
            if (src[k] == c)
                cli_fail("--columns %s=...: column '%s' named twice", key, t->cols[c].key);
        if (n == TABLE_MAX_COLS) cli_fail("--columns %s=...: more than %d columns", key, n);
        src[n++] = c;
        table_col(p, t->cols[c].key, t->cols[c].title ? t->cols[c].title : t->cols[c].key,
                  t->cols[c].type);
        s += len + (s[len] == ',');
    }
    if (!n) cli_fail("--columns %s=: no column named (columns: %s)", key, column_keys(t));
    int64_t rows = table_rows(t);
    for (int64_t r = 0; r < rows; r++) {
        table_row(p);
        for (int k = 0; k < n; k++) table_copy_cell(p, k, t, r, src[k]);
    }
    return p;
}

int render_columns(struct table **in, int n, const struct render_opts *o, struct table **out,
                   struct table **made)
{
    int nmade = 0;
    memcpy(out, in, (size_t)n * sizeof *in);
    for (int k = 0; k < o->ncolumns; k++) {
        const char *spec = o->columns[k], *eq = strchr(spec, '=');
        if (!eq || eq == spec)
            cli_fail("--columns needs SECTION=COLUMN,COLUMN,... (e.g. series=series,"
                     "latency_p50_ns), not '%.64s'",
                     spec);
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(eq - spec < 127 ? eq - spec : 127), spec);
        for (int q = 0; q < k; q++) /* a second list for one section: one list each */
            if (!strncmp(o->columns[q], spec, (size_t)(eq - spec) + 1))
                cli_fail("--columns %s=...: given twice (one list per section)", key);
        int i = keyed(out, n, key);
        if (i < 0) {
            char known[1024] = "";
            for (int q = 0, len = 0; q < n && len + 40 < (int)sizeof known; q++)
                if (out[q]->key)
                    len += snprintf(known + len, sizeof known - (size_t)len, "%s%s",
                                    len ? ", " : "", out[q]->key);
            cli_fail("--columns %s=...: no such section (sections: %s)", key, known);
        }
        /* Its text views (the tables without a key right after it) give way: the title is the
         * first one's, or the data table's own, or its key. */
        int views = 0;
        while (i + 1 + views < n && !out[i + 1 + views]->key) views++;
        const char *title = out[i]->title ? out[i]->title : views ? out[i + 1]->title : NULL;
        made[nmade] = project(out[i], key, eq + 1, title ? title : out[i]->key);
        out[i] = made[nmade++];
        memmove(out + i + 1, out + i + 1 + views, (size_t)(n - i - 1 - views) * sizeof *out);
        n -= views;
    }
    return n;
}

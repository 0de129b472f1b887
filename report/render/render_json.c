/*
 * render_json.c: the JSON rendering: one object with a member per table (an array of row objects,
 * or one object), exact values, json_schema_version first.
 */
#include "render_impl.h"
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

static void json_string(FILE *out, const char *s)
{
    size_t len;
    char *q = json_quote(s ? s : "", s ? strlen(s) : 0, &len);
    if (!q) cli_fail("out of memory");
    fwrite(q, 1, len, out);
    free(q);
}

static void json_cell(FILE *out, const struct col *col, const struct cell *c, enum name_style names)
{
    if (c->null) {
        fputs("null", out);
        return;
    }
    switch (col->type) {
    case COL_KERNEL: {
        char *name = name_data(c->s, names); /* whole: C++ names can pass any fixed size */
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

static void json_row(FILE *out, const struct table *t, int64_t r, const char *indent,
                     enum name_style names)
{
    const struct cell *row = table_row_cells(t, r);
    fputc('{', out);
    int idx[TABLE_MAX_COLS], nv = render_visible(t, 1, idx);
    for (int k = 0; k < nv; k++) {
        int c = idx[k];
        fprintf(out, "%s\n%s  ", k ? "," : "", indent);
        json_string(out, t->cols[c].key);
        fputs(": ", out);
        json_cell(out, &t->cols[c], &row[c], names);
    }
    fprintf(out, "\n%s}", indent);
}

/* The shape of the JSON document (docs/report.md): raised when a key is renamed or removed or
 * its meaning or unit changes; added keys keep it. */
#define JSON_SCHEMA_VERSION 1

static void render_json(FILE *out, struct table **tables, int n, enum name_style names)
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
            if (table_rows(t))
                json_row(out, t, 0, "  ", names);
            else
                fputs("null", out);
            continue;
        }
        fputc('[', out);
        int64_t rows = table_rows(t);
        for (int64_t r = 0; r < rows; r++) {
            fprintf(out, "%s\n    ", r ? "," : "");
            json_row(out, t, r, "    ", names);
        }
        fputs(rows ? "\n  ]" : "]", out);
    }
    fputs("\n}\n", out);
}

static void json_document(FILE *out, struct table **tables, int n, const struct render_opts *o)
{
    render_json(out, tables, n, o->names);
}

const struct output_format out_json = {"json", NULL, OUT_JSON, json_document, NULL};

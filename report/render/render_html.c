/*
 * render_html.c: the HTML rendering: one self-contained page (no script, font or request
 * outside it) that opens by double-click and prints. The first screen (the Summary) on top as
 * text, each line linking to its chart or table; then the charts (html_charts.c: SVG from the
 * same tables every format renders); then every table the text report shows, as HTML tables.
 */
#include "render_impl.h"
#include "html_charts.h"
#include "../base/names.h"

#include <string.h>

static const char html_style[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;margin:0 auto;"
    "max-width:1100px;padding:16px 24px}h1{font-size:22px;margin:8px 0}h2{font-size:17px;"
    "margin:28px 0 8px;border-bottom:1px solid #ddd}h3{font-size:15px}"
    "dl.sum{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:#f6f8fa;"
    "padding:12px;border-radius:6px}dl.sum dt{font-weight:600}dl.sum dd{margin:0}"
    "dl.obj{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}dl.obj dd{margin:0;"
    "overflow-wrap:anywhere}table{border-collapse:collapse;margin:6px 0;font-size:13px}"
    "th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right;vertical-align:top}"
    "th{background:#f6f8fa;position:sticky;top:0}td.l,th.l{text-align:left}"
    "td.l{max-width:520px;overflow-wrap:anywhere}p.note{color:#555;font-size:13px;margin:4px 0}"
    "figure{margin:18px 0;break-inside:avoid}figcaption{font-weight:600;margin-bottom:4px}"
    "svg{max-width:100%;height:auto;font-size:11px;fill:#333}svg .g{stroke:#e5e5e5}"
    "svg .frame{fill:none;stroke:#999}p.alt{color:#555;font-size:12.5px;margin:4px 0}"
    "p.why{color:#8a5a00;background:#fff8e6;padding:6px 10px;border-radius:4px}"
    ".scroll{overflow-x:auto}a{color:#0b5cad}@media print{th{position:static}"
    "body{max-width:none}}";

/* The chart or table a Summary line points to (ids html_charts.c and the tables use). */
static const char *anchor_of(const char *key)
{
    static const struct {
        const char *key, *anchor;
    } map[] = {{"fastest", "chart-speedup"},
               {"inference_vs_no_grad", "chart-speedup"},
               {"series", "table-series"},
               {"memory", "chart-memory"},
               {"autocast", "chart-precision"},
               {"warmup", "chart-latency"},
               {"lost", "table-run"},
               {"clocks", "chart-clock"},
               {"tail", "table-tails"},
               {"suspect", "table-phases"},
               {"findings", "table-advice"},
               {"changes", "chart-compare"},
               {"no_clear_difference", "chart-compare"},
               {"same", "chart-compare"},
               {"no_verdict", "chart-compare"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i].key, key)) return map[i].anchor;
    return NULL;
}

/* The table of this key is on the page: shown, or a view of it right after it. */
static int html_has_table(struct table **tables, int n, const struct render_opts *o,
                          const char *key)
{
    for (int i = 0; i < n; i++)
        if (tables[i]->key && !strcmp(tables[i]->key, key))
            return render_shown(tables[i], o) ||
                   (i + 1 < n && !tables[i + 1]->key && render_shown(tables[i + 1], o));
    return 0;
}

/* An object table (the run header, the Summary) as title: value lines; the Summary's lines link
 * to their chart or table where the page has it. */
static void html_object(FILE *out, const struct table *t, int summary, struct table **tables, int n,
                        const struct render_opts *o, enum name_style names)
{
    fprintf(out, "<dl class=\"%s\">\n", summary ? "sum" : "obj");
    char buf[CELL_MAX];
    for (int c = 0; t->nrows && c < t->ncols; c++) {
        const struct cell *x = &t->cells[c];
        if (!t->cols[c].title || x->null) continue;
        const char *a = summary && t->cols[c].key ? anchor_of(t->cols[c].key) : NULL;
        if (a && !strncmp(a, "table-", 6) && !html_has_table(tables, n, o, a + 6)) a = NULL;
        fputs("<dt>", out);
        if (a) fprintf(out, "<a href=\"#%s\">", a);
        html_text(out, t->cols[c].title);
        fputs(a ? "</a></dt><dd>" : "</dt><dd>", out);
        render_cell_text(&t->cols[c], x, names, buf, sizeof buf);
        html_text(out, buf);
        fputs("</dd>\n", out);
    }
    fputs("</dl>\n", out);
}

/* A table under its heading; id: "table-<key>", which the first view of a data table not shown
 * itself takes (the phases' and the advice's views), else "view-<seq>". */
static void html_table(FILE *out, const struct table *t, int seq, const char *data_key,
                       enum name_style names)
{
    if (t->key || data_key)
        fprintf(out, "<h2 id=\"table-%s\">", t->key ? t->key : data_key);
    else
        fprintf(out, "<h2 id=\"view-%d\">", seq);
    html_text(out, t->title ? t->title : t->key);
    fputs("</h2>\n", out);
    if (t->object) {
        html_object(out, t, 0, NULL, 0, NULL, names);
    } else {
        int idx[TABLE_MAX_COLS], n = render_visible(t, t->title == NULL, idx);
        char buf[CELL_MAX];
        fputs("<div class=\"scroll\"><table><thead><tr>", out);
        for (int k = 0; k < n; k++) {
            const struct col *c = &t->cols[idx[k]];
            fprintf(out, "<th%s>", render_is_left(c->type) ? " class=\"l\"" : "");
            html_text(out, c->title ? c->title : c->key);
            fputs("</th>", out);
        }
        fputs("</tr></thead>\n<tbody>\n", out);
        for (int r = 0; r < t->nrows; r++) {
            fputs("<tr>", out);
            for (int k = 0; k < n; k++) {
                const struct col *c = &t->cols[idx[k]];
                render_cell_text(c, &t->cells[r * t->ncols + idx[k]], names, buf, sizeof buf);
                fprintf(out, "<td%s>", render_is_left(c->type) ? " class=\"l\"" : "");
                html_text(out, buf);
                fputs("</td>", out);
            }
            fputs("</tr>\n", out);
        }
        if (!t->nrows) fprintf(out, "<tr><td class=\"l\" colspan=\"%d\">(none)</td></tr>\n", n);
        fputs("</tbody></table></div>\n", out);
    }
    if (t->note) {
        fputs("<p class=\"note\">", out);
        html_text(out, t->note);
        fputs("</p>\n", out);
    }
}

/* A page of several processes (report_multi.c): their Summary, or every run header in JSON's
 * shape. */
static int several_runs(struct table **tables, int n)
{
    return table_by_key(tables, n, "job") || table_by_key(tables, n, "runs");
}

static void html_document(FILE *out, struct table **tables, int n, const struct render_opts *o)
{
    const struct table *run = table_by_key(tables, n, "run");
    const struct table *base = table_by_key(tables, n, "base");
    const struct table *summary = table_by_key(tables, n, "summary");
    const struct cell *cmd = run ? table_cell(run, 0, "command") : NULL;
    /* Offline by construction, and held to it by the browser: nothing may be loaded from
     * anywhere (a program's string that looked like markup could not fetch anything either),
     * nor a base URL or a form's target set (the two that default-src does not cover). */
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
          " style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>infprof ",
          out);
    fputs(base ? "compare" : "report", out);
    if (cmd && !cmd->null) {
        fputs(": ", out);
        html_text(out, cmd->s);
    }
    fprintf(out, "</title>\n<style>%s</style></head><body>\n<h1>infprof %s</h1>\n", html_style,
            base ? "compare" : "report");
    if (summary && summary->nrows && !o->section && !several_runs(tables, n)) {
        fputs("<section id=\"summary\"><h2>", out);
        html_text(out, summary->title);
        fputs("</h2>\n", out);
        html_object(out, summary, 1, tables, n, o, o->names);
        fputs("</section>\n", out);
    }
    int several = several_runs(tables, n);
    if (!o->section && !several) {
        fputs("<section id=\"charts\"><h2>Charts</h2>\n", out);
        if (table_by_key(tables, n, "base")) { /* infprof compare */
            html_charts_compare(out, tables, n, o->names);
        } else {
            html_charts_runs(out, tables, n);
            html_charts_over_time(out, tables, n);
            html_charts_bars(out, tables, n, o->names);
        }
        fputs("</section>\n", out);
    }
    fputs("<section id=\"tables\">\n", out);
    /* A data table not shown whose view comes right after it: the view takes its id (one run:
     * several runs' pages keep their data tables apart from the views). */
    for (int i = 0; i < n; i++) {
        if (tables[i] == summary && !o->section) continue;
        if (!render_shown(tables[i], o)) continue;
        const struct table *before = i ? tables[i - 1] : NULL;
        const char *data =
            !several && !tables[i]->key && before && before->key && !render_shown(before, o)
                ? before->key
                : NULL;
        html_table(out, tables[i], i, data, o->names);
    }
    fputs("</section>\n", out);
    /* Several processes' rows together: the answer (their Summary, side by side, combined)
     * first, and why there is no chart after it. */
    if (!o->section && several) {
        fputs("<section id=\"charts\"><h2>Charts</h2>\n", out);
        svg_none(out, "chart-runs", "Charts",
                 "no chart: the charts draw one process at a time (their time axes and series"
                 " are each run's own); each process's page has them: infprof report"
                 " --format html ONE.db. The tables above are the processes' together; --each"
                 " adds each one's own");
        fputs("</section>\n", out);
    }
    fputs("<p class=\"note\">Written by infprof; every figure here is in the text,"
          " JSON and CSV reports too (docs/report.md).</p>\n</body></html>\n",
          out);
}

/* A page has room for the kernels of each phase (its chart draws each phase's top), as
 * --by-phase gives them, unless one phase or an NVTX range was asked for; its charts read the
 * rows of a table text leaves out. */
static void html_defaults(struct report_opts *o)
{
    if (!o->phase && !o->nvtx) o->by_phase = 1;
    o->quiet_rows_unread = 0; /* the latency charts read the iterations table */
}

const struct output_format out_html = {"html", NULL, OUT_TEXT, html_document, html_defaults};

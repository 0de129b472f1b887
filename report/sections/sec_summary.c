/*
 * sec_summary.c: the first screen: the questions the report exists for, answered in a line
 * each with their numbers, before any table. The lines belong to the sections that answer them
 * (each section's descriptor lists its summary_line: sections.h); this file gathers them in the
 * order of their rank, gives each its column, and adds the one line of its own: which phases'
 * figures are suspect and which answers above quote them.
 */
#include "sections.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void summary_set(struct summary_out *o, const char *text)
{
    if (text && text[0]) table_set_text(o->t, o->col, text);
}

void summary_named(struct summary_out *o, const struct phase_info *ph, char *out, size_t n)
{
    phase_short_label(ph, out, n);
    if (!ph->suspect) return;
    o->hit = 1;
    size_t len = strlen(out);
    snprintf(out + len, n - len, " (suspect)");
}

#define SUMMARY_MAX_LINES 24

/* The Suspect line: which phases lost events, how, and which answers above quote them. */
static void suspect_line(struct table *t, const struct run_phases *p,
                         const struct summary_line *const *lines, const int *hit, int n, int col,
                         int col_phases, int col_lines)
{
    char buf[1024], js[512], jl[256], a[32];
    size_t o = 0, jo = 0, lo = 0;
    js[0] = jl[0] = 0;
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        if (!ph->suspect || ph->transient || o + 260 > sizeof buf) continue;
        phase_short_label(ph, a, sizeof a);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s (%s)", o ? ", " : "", a,
                              ph->suspect_why);
        if (jo + 80 < sizeof js)
            jo += (size_t)snprintf(js + jo, sizeof js - jo, "%s\"%s\"", jo ? ", " : "", ph->label);
    }
    if (!o) {
        /* No suspect phase: no line in text (null in JSON), the lists empty. */
        table_set_text(t, col_phases, "[]");
        table_set_text(t, col_lines, "[]");
        return;
    }
    int first = 1;
    for (int k = 0; k < n; k++) {
        if (!hit[k] || o + 64 > sizeof buf || lo + 48 > sizeof jl) continue;
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", first ? "; affects: " : ", ",
                              lines[k]->title);
        lo +=
            (size_t)snprintf(jl + lo, sizeof jl - lo, "%s\"%s\"", first ? "" : ", ", lines[k]->key);
        first = 0;
    }
    if (first) snprintf(buf + o, sizeof buf - o, "; no answer above quotes them");
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
             " (lost events: read these figures with care)");
    table_set_text(t, col, buf);
    char wrap[560];
    snprintf(wrap, sizeof wrap, "[%s]", js);
    table_set_text(t, col_phases, wrap);
    snprintf(wrap, sizeof wrap, "[%s]", jl);
    table_set_text(t, col_lines, wrap);
}

/* The Suspect line's place; its fill is suspect_line, once every other line is written. */
static const struct summary_line line_suspect = {
    "suspect", "Suspect", 90, NULL, {{"suspect_phases", COL_JSON}, {"suspect_answers", COL_JSON}}};
static const struct summary_line *const own_summary[] = {&line_suspect, NULL};

/* Every section's lines, by rank (stable: a section's own order breaks ties). */
static int gather(const struct summary_line **v)
{
    int n = 0;
    for (int i = 0; i < report_section_count; i++) {
        const struct summary_line *const *l = report_sections[i]->summary;
        for (; l && *l && n < SUMMARY_MAX_LINES; l++) {
            int k = n++;
            for (; k > 0 && v[k - 1]->rank > (*l)->rank; k--) v[k] = v[k - 1];
            v[k] = *l;
        }
    }
    return n;
}

static struct table *summary_table(const struct section_ctx *c)
{
    struct table *t = table_new("summary", "Summary");
    t->object = 1;
    const struct summary_line *v[SUMMARY_MAX_LINES];
    int n = gather(v), first_extra[SUMMARY_MAX_LINES], hit[SUMMARY_MAX_LINES] = {0};
    for (int k = 0; k < n; k++) table_col(t, v[k]->key, v[k]->title, COL_TEXT);
    /* The numbers beside the prose (JSON and CSV only), line by line. */
    for (int k = 0; k < n; k++) {
        first_extra[k] = t->ncols;
        for (const struct summary_col *x = v[k]->extra;
             x < v[k]->extra + SUMMARY_MAX_EXTRA && x->key; x++)
            table_col(t, x->key, NULL, x->type);
    }
    table_row(t);
    int own = -1;
    for (int k = 0; k < n; k++) {
        if (!v[k]->fill) {
            own = k;
            continue;
        }
        struct summary_out o = {t, k, first_extra[k], 0};
        v[k]->fill(c, &o);
        hit[k] = o.hit;
    }
    if (own >= 0) suspect_line(t, c->p, v, hit, n, own, first_extra[own], first_extra[own] + 1);
    return t;
}

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int summary_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    out[0] = summary_table(c);
    return 1;
}

const struct report_section sec_summary = {
    .summary = own_summary, .key = "summary", .build = summary_build, .shown_empty = 1};

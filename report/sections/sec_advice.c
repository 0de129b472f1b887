/*
 * sec_advice.c: the report's Advice section (sections.h). Each rule looks for one known waste in
 * the run's own figures and fires only when the evidence passes its threshold (docs/report.md
 * lists them); a row says what was measured, with the exact figures as a JSON object, and the
 * setting or code change to try. One data table (`advice`, JSON and CSV) and one view: wrapped
 * lines in text (100 columns), a row per finding in Markdown.
 */
#include "advice.h"
#include "sections.h"
#include "../base/json.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- small builders ----------------------------------------------------------------------- */

static void wrap_rows(struct table *t, const char *text, int indent, int width)
{
    /* Escaped here, where the width is counted (escaping again on output changes nothing). */
    char line[256], escaped[4096];
    fmt_escape(escaped, sizeof escaped, text);
    const char *s = escaped;
    while (*s) {
        int len = (int)strlen(s), cut = len;
        if (len > width) {
            cut = width;
            while (cut > 0 && s[cut] != ' ') cut--;
            if (cut == 0) /* one word longer than the line: cut it, not a UTF-8 sequence */
                for (cut = width; cut > 1 && ((unsigned char)s[cut] & 0xc0) == 0x80; cut--)
                    continue;
        }
        snprintf(line, sizeof line, "%*s%.*s", indent, "", cut, s);
        table_row(t);
        table_set_text(t, 0, line);
        s += cut;
        while (*s == ' ') s++;
    }
}

static void saving_text(const struct advice *a, char *out, size_t n)
{
    char b[32];
    out[0] = 0;
    if (a->saving_ns >= 0)
        advice_append(out, n, "%s of run time", advice_ns_text(b, sizeof b, (double)a->saving_ns));
    if (a->saving_bytes >= 0)
        advice_append(out, n, "%s%s of peak tensor memory", out[0] ? ", " : "",
                      advice_bytes_text(b, sizeof b, (double)a->saving_bytes));
}

static struct table *text_view(const struct advice_list *l, int width)
{
    struct table *t = table_new(NULL, "Advice (rules and thresholds: docs/report.md)");
    table_col(t, NULL, "Rule (phase): what was measured; what to try", COL_TEXT);
    char buf[1200], s[32];
    for (int i = 0; i < l->n; i++) {
        const struct advice *a = &l->v[i];
        if (a->phase) phase_short_label(a->phase, s, sizeof s);
        snprintf(buf, sizeof buf, "%s%s%s%s", a->rule, a->phase ? " (" : "", a->phase ? s : "",
                 a->phase ? ")" : "");
        wrap_rows(t, buf, 0, width);
        wrap_rows(t, a->finding, 2, width - 2);
        snprintf(buf, sizeof buf, "Try: %s.", a->try_);
        wrap_rows(t, buf, 2, width - 2);
        char saving[128];
        saving_text(a, saving, sizeof saving);
        if (saving[0]) {
            snprintf(buf, sizeof buf, "Measured cost: %s.", saving);
            wrap_rows(t, buf, 2, width - 2);
        }
    }
    if (!l->n) t->note = "no rule found evidence above its threshold";
    return t;
}

/* md_view's columns, in the order it declares them (asserted there). */
enum { AM_RULE, AM_PHASE, AM_FINDING, AM_TRY, AM_MEASURED_COST, AM_NCOLS };

static struct table *md_view(const struct advice_list *l)
{
    struct table *t = table_new(NULL, "Advice (rules and thresholds: docs/report.md)");
    table_col(t, NULL, "Rule", COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, NULL, "Finding", COL_TEXT);
    table_col(t, NULL, "Try", COL_TEXT);
    table_col(t, NULL, "Measured cost", COL_TEXT);
    assert(t->ncols == AM_NCOLS);
    char s[128];
    for (int i = 0; i < l->n; i++) {
        const struct advice *a = &l->v[i];
        table_row(t);
        table_set_text(t, AM_RULE, a->rule);
        if (a->phase) phase_short_label(a->phase, s, sizeof s), table_set_text(t, AM_PHASE, s);
        table_set_text(t, AM_FINDING, a->finding);
        table_set_text(t, AM_TRY, a->try_);
        saving_text(a, s, sizeof s);
        if (s[0]) table_set_text(t, AM_MEASURED_COST, s);
    }
    if (!l->n) t->note = "no rule found evidence above its threshold";
    return t;
}

/* data_table's columns, in the order it declares them (asserted there). */
enum {
    AD_RULE,
    AD_PHASE,
    AD_FINDING,
    AD_EVIDENCE,
    AD_TRY,
    AD_SAVING_NS,
    AD_SAVING_BYTES,
    AD_NCOLS
};

static struct table *data_table(const struct advice_list *l)
{
    struct table *t = table_new("advice", NULL);
    table_col(t, "rule", NULL, COL_TEXT);
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, "finding", NULL, COL_TEXT);
    table_col(t, "evidence", NULL, COL_JSON);
    table_col(t, "try", NULL, COL_TEXT);
    table_col(t, "saving_ns", NULL, COL_NS);
    table_col(t, "saving_bytes", NULL, COL_BYTES);
    assert(t->ncols == AD_NCOLS);
    char ev[1100];
    for (int i = 0; i < l->n; i++) {
        const struct advice *a = &l->v[i];
        table_row(t);
        table_set_text(t, AD_RULE, a->rule);
        if (a->phase) table_set_text(t, AD_PHASE, a->phase->label);
        table_set_text(t, AD_FINDING, a->finding);
        snprintf(ev, sizeof ev, "{%s}", a->evidence);
        table_set_text(t, AD_EVIDENCE, ev);
        table_set_text(t, AD_TRY, a->try_);
        if (a->saving_ns >= 0) table_set_int(t, AD_SAVING_NS, a->saving_ns);
        if (a->saving_bytes >= 0) table_set_int(t, AD_SAVING_BYTES, a->saving_bytes);
    }
    return t;
}

int section_advice(const struct advice_list *l, enum out_format format, struct table **out)
{
    out[0] = data_table(l);
    out[1] = format == OUT_MD ? md_view(l) : text_view(l, 98);
    return 2;
}

/* The Findings line: the top three advice rules, each with the phases it fired in and its
 * finding of most grounded saving (else its first), numbers included; the Advice section below
 * has them all. */
static void fill_findings(const struct section_ctx *c, struct summary_out *so)
{
    const struct advice_list *l = c->advice;
    char buf[2048];
    size_t o = 0;
    int shown = 0;
    /* The registered rules by their rank (advice.h): lost data first, then settings that make
     * the answers wrong (a model in train() mode, autograd on, autocast not casting), then
     * speed. Every rule that fired is ranked: none can go missing from this line. */
    const struct advice_rule *order[64];
    int nr = advice_rule_count < 64 ? advice_rule_count : 64;
    for (int r = 0; r < nr; r++) {
        order[r] = advice_rules[r];
        for (int q = r; q > 0 && order[q - 1]->rank > order[q]->rank; q--) {
            const struct advice_rule *x = order[q];
            order[q] = order[q - 1];
            order[q - 1] = x;
        }
    }
    for (int r = 0; r < nr; r++) {
        const struct advice *best = NULL;
        int n = 0;
        for (int i = 0; i < l->n; i++) {
            const struct advice *a = &l->v[i];
            if (strcmp(a->rule, order[r]->name)) continue;
            n++;
            if (!best || a->saving_ns > best->saving_ns) best = a;
        }
        if (!n) continue;
        if (shown == 3) break;
        shown++;
        char text[200];
        size_t len = strlen(best->finding);
        if (len < sizeof text) {
            memcpy(text, best->finding, len + 1);
            if (len && text[len - 1] == '.') text[len - 1] = 0; /* the list goes on */
        } else {                                                /* at a word, marked */
            size_t cut = sizeof text - 4;
            while (cut > 0 && best->finding[cut] != ' ') cut--;
            /* Not inside a parenthesis: before the one left open, at its space. */
            size_t open = 0;
            int depth = 0;
            for (size_t i = 0; i < cut; i++)
                if (best->finding[i] == '(' && depth++ == 0)
                    open = i;
                else if (best->finding[i] == ')' && depth > 0)
                    depth--;
            if (depth && open > 0) cut = open - (best->finding[open - 1] == ' ');
            while (cut > 0 && best->finding[cut - 1] == ',') cut--;
            snprintf(text, sizeof text, "%.*s...", (int)cut, best->finding);
        }
        /* Each finding is of a phase, or of a series where the rule reads series (two series
         * of one phase read "(2 phases)", a fresh-eyes check). */
        int phases = 0;
        for (int i = 0; i < l->n; i++) {
            if (strcmp(l->v[i].rule, order[r]->name)) continue;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = !strcmp(l->v[j].rule, order[r]->name) && l->v[j].phase == l->v[i].phase;
            phases += !seen;
        }
        char times[48] = "";
        if (n > 1 && phases == n)
            snprintf(times, sizeof times, " (%d phases)", n);
        else if (n > 1)
            snprintf(times, sizeof times, " (%d findings)", n);
        if (o + 300 < sizeof buf)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s%s: %s", o ? "; " : "", best->rule,
                                  times, text);
    }
    if (!o) {
        summary_set(so, "none: no advice rule fired (Advice below)");
        return;
    }
    snprintf(buf + o, sizeof buf - o, " (Advice below has them all)");
    summary_set(so, buf);
}

static const struct summary_line line_findings = {
    .key = "findings", .title = "Findings", .rank = 100, .fill = fill_findings};
static const struct summary_line *const advice_summary[] = {&line_findings, NULL};

/* ---- descriptor (sections.h) ------------------------------------------------------------- */

static int advice_build(const struct section_ctx *c, struct table **out, int max)
{
    (void)max;
    return section_advice(c->advice, c->o->format, out);
}

const struct report_section sec_advice = {.summary = advice_summary,
                                          .key = "advice",
                                          .build = advice_build,
                                          .shown_empty = 0,
                                          .compare = NULL};

/*
 * build.c: the report of one run as `infprof report` prints it (sections.h): every section, in
 * the order the report shows them (registry.c), built from one context.
 */
#include "sections.h"
#include "advice.h"

#include <stdlib.h>
#include <string.h>

int report_build(struct sqlite3 *db, const struct run_phases *phases, const struct report_opts *o,
                 struct table **t, int max)
{
    int n = 0;
    /* The advice, found once: the Summary's Findings line and the Advice section read it. */
    struct advice_list *advice = calloc(1, sizeof *advice);
    if (!advice) cli_fail("out of memory");
    advice_find(db, phases, advice);
    const struct section_ctx c = {db, phases, o, baseline_of(phases, o->baseline), advice};
    for (int i = 0; i < report_section_count; i++) {
        const struct report_section *s = report_sections[i];
        int first = n;
        /* A section may build up to SECTION_MAX_TABLES (some write that many without asking). */
        if (max - n < SECTION_MAX_TABLES)
            cli_fail("internal: more report tables than REPORT_TABLES (%d) hold, at section %s:"
                     " raise it in report/sections/sections.h",
                     max, s->key);
        if (s->build)
            n += s->build(&c, t + n, SECTION_MAX_TABLES);
        else
            t[n++] = s->table(&c);
        /* Beyond the run, the summary, the phases and the kernels, a table with nothing to
         * say stays out of text and Markdown (the run header says which collectors were off
         * and why); text views (no key) keep their own choice. */
        for (int k = first; k < n; k++)
            if (t[k]->key && !(s->shown_empty && !strcmp(t[k]->key, s->key))) t[k]->optional = 1;
    }
    free(advice); /* the tables hold copies of its text */
    return n;
}

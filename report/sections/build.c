/*
 * build.c: the report of one run as `infprof report` prints it (sections.h): every section, in
 * the order the report shows them, one line each. A new section is a file of its own and a line
 * here.
 */
#include "sections.h"
#include "advice.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int report_build(struct sqlite3 *db, const struct run_phases *phases, const struct report_opts *o,
                 struct table **t, int max)
{
    int n = 0;
    if (max < 32) cli_fail("internal: room for 32 report tables needed");
    /* The advice, found once: the Summary's Findings line and the Advice section read it. */
    struct advice_list *advice = calloc(1, sizeof *advice);
    if (!advice) cli_fail("out of memory");
    advice_find(db, phases, advice);
    t[n++] = section_summary(db, phases, baseline_of(phases, o->baseline), advice);
    t[n++] = section_run(db, phases);
    n += section_phases(phases, o, t + n);
    n += section_series(phases, t + n);
    t[n++] = section_precision(phases);
    t[n++] = section_operations(phases);
    t[n++] = section_memory(phases);
    n += section_operators(db, phases, o, t + n);
    n += section_energy(db, phases, baseline_of(phases, o->baseline), t + n);
    t[n++] = section_kernels(db, phases, o);
    t[n++] = section_memops_time(db);
    t[n++] = section_memops_size(db);
    t[n++] = section_segments(db);
    t[n++] = section_api(db, o);
    t[n++] = section_cuda_activity(db);
    n += section_cudnn(db, phases, o, t + n, max - n - 1);
    t[n++] = section_nvtx(db, o);
    n += section_advice(advice, o->format, t + n);
    free(advice); /* the tables hold copies of its text */
    /* Beyond the run, the phases and the kernels, a section with nothing to say stays out of
     * text and Markdown (the run header says which collectors were off and why). */
    for (int i = 0; i < n; i++)
        if (t[i]->key && strcmp(t[i]->key, "run") && strcmp(t[i]->key, "phases") &&
            strcmp(t[i]->key, "kernels") && strcmp(t[i]->key, "summary"))
            t[i]->optional = 1;
    return n;
}

void report_defaults(struct report_opts *o, struct render_opts *ro)
{
    if (o->top < 0) o->top = ro->format == OUT_TEXT || ro->format == OUT_MD ? 20 : 0;
    ro->color = ro->format == OUT_TEXT && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    o->format = ro->format;
}

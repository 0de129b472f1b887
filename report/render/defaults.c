/*
 * defaults.c: the report's options that depend on the output: --top's default for the format,
 * colour on a terminal (NO_COLOR honoured), and what the format's descriptor sets itself.
 */
#include "render.h"

#include <stdlib.h>
#include <unistd.h>

void report_defaults(struct report_opts *o, struct render_opts *ro)
{
    if (o->top < 0) o->top = ro->format == OUT_TEXT || ro->format == OUT_MD ? 20 : 0;
    ro->color = ro->format == OUT_TEXT && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    o->format = ro->format;
    /* A row per iteration is 0.6 KB and a 200,000-forward run's text report built 115 MB of them
     * to print none. */
    o->quiet_rows_unread =
        (ro->format == OUT_TEXT || ro->format == OUT_MD) && !ro->section && !ro->csv_dir;
    if (ro->out && ro->out->defaults) ro->out->defaults(o);
}

/*
 * cmd_compare.c: `infprof compare [options] BASE NEW`: two runs side by side. Each database is
 * read into the very tables `infprof report` prints (report_build), one after the other; the
 * sections are then matched row by row (compare_sections.c, compare_diff.c). Here: the options,
 * the two sides, and the header that names both runs and warns when the comparison is doubtful:
 * different GPUs or command lines, a run that did not finish, records lost.
 */
#include "compare.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void compare_usage(FILE *out)
{
    fprintf(out, "usage: infprof compare [--format text|json|csv|md] [--top N] [--wide]\n"
                 "                       [--by-phase] [--phase PHASE] [--nvtx RANGE] BASE NEW\n\n"
                 "The sections of two runs side by side: for each phase, kernel name, memory\n"
                 "figure, API function, memory operation and NVTX range the base value, the new\n"
                 "value, the delta, the change in %% (and new/base for throughput and latency);\n"
                 "rows in one run only are 'added' or 'removed'.\n\n"
                 "  --format F  text (default), json, csv or md\n"
                 "  --top N     rows per section, largest change first (default 20 in text and\n"
                 "              md, all in json and csv; 0: all)\n"
                 "  --by-phase  kernels matched by name and phase\n"
                 "  --phase P   kernels of phase P only ('no_grad/bf16' or its full label)\n"
                 "  --nvtx R    kernels launched inside NVTX ranges named R (a glob)\n"
                 "  --wide      do not shorten long names\n");
}

static void side_load(struct compare_side *s, const char *path, const struct report_opts *o)
{
    s->path = path;
    struct sqlite3 *db = db_open(path);
    phases_load(db, &s->phases);
    s->n = report_build(db, &s->phases, o, s->t, COMPARE_TABLES);
    db_close(db);
}

struct table *side_table(struct compare_side *s, const char *key)
{
    struct table *t = table_by_key(s->t, s->n, key);
    if (!t) cli_fail("internal: no section %s in %s", key, s->path);
    return t;
}

/* ---- the header: what was compared, and why the comparison may be doubtful ---------------- */

static const char *text_of(const struct table *run, const char *key)
{
    const struct cell *c = table_cell(run, 0, key);
    return c && !c->null && c->s ? c->s : "";
}

static int64_t int_of(const struct table *run, const char *key)
{
    const struct cell *c = table_cell(run, 0, key);
    return c && !c->null ? c->i : 0;
}

/* A collector state "on: ..." (not "off" or "passive"). */
static int collector_on(const char *state)
{
    return state[0] == 'o' && state[1] == 'n';
}

static void lost_records(const struct table *run, const char *side, const char *w[], int *nw)
{
    int64_t ev = int_of(run, "dropped_events"), rec = int_of(run, "cupti_dropped_records");
    int64_t refused = int_of(run, "cupti_buffers_refused"), errs = int_of(run, "write_errors");
    if (!ev && !rec && !refused && !errs) return;
    char what[160] = "";
    size_t o = 0;
    if (ev) o += (size_t)snprintf(what + o, sizeof what - o, "%lld events", (long long)ev);
    if (rec)
        o += (size_t)snprintf(what + o, sizeof what - o, "%s%lld CUDA records", o ? ", " : "",
                              (long long)rec);
    if (refused)
        o += (size_t)snprintf(what + o, sizeof what - o, "%s%lld CUPTI buffers", o ? ", " : "",
                              (long long)refused);
    if (errs)
        snprintf(what + o, sizeof what - o, "%s%lld database writes", o ? ", " : "",
                 (long long)errs);
    w[(*nw)++] = pool_printf("the %s run lost records (%s): its counts are low", side, what);
}

static int header(struct compare_side *b, struct compare_side *n, struct table **t)
{
    struct table *rb = side_table(b, "run"), *rn = side_table(n, "run");
    if (int_of(rb, "pid") == int_of(rn, "pid") &&
        !strcmp(text_of(rb, "host"), text_of(rn, "host")) &&
        int_of(rb, "start_unix_ns") == int_of(rn, "start_unix_ns"))
        cli_fail("%s and %s hold the same run (pid %lld, same host and start): compare two runs",
                 b->path, n->path, (long long)int_of(rb, "pid"));
    const char *w[8];
    int nw = 0;
    if (strcmp(text_of(rb, "gpus"), text_of(rn, "gpus")))
        w[nw++] = "the runs used different GPUs: kernel times are not comparable";
    if (strcmp(text_of(rb, "command"), text_of(rn, "command")))
        w[nw++] = "the command lines differ: the runs may not do the same work";
    if (collector_on(text_of(rb, "collector_cupti")) !=
        collector_on(text_of(rn, "collector_cupti")))
        w[nw++] = "CUDA activity was recorded in one run only";
    for (struct compare_side *s = b; s; s = s == b ? n : NULL) {
        const struct table *run = s == b ? rb : rn;
        const char *side = s == b ? "base" : "new";
        if (!int_of(run, "finished"))
            w[nw++] = pool_printf("the %s run did not finish (killed, or still running):"
                                  " its figures stop early",
                                  side);
        lost_records(run, side, w, &nw);
    }
    /* Data: both run headers under their own names, and what the comparison adds. */
    rb->key = "base", rn->key = "new";
    rb->title = rn->title = NULL;
    struct table *c = table_new("compare", NULL);
    c->object = 1;
    table_col(c, "base_file", NULL, COL_TEXT);
    table_col(c, "new_file", NULL, COL_TEXT);
    table_col(c, "warnings", NULL, COL_TEXT);
    table_row(c);
    table_set_text(c, 0, b->path);
    table_set_text(c, 1, n->path);
    char joined[1024] = "";
    for (int i = 0; i < nw; i++)
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", i ? "; " : "",
                 w[i]);
    if (nw) table_set_text(c, 2, joined);
    /* Text: the facts that say what ran, for each side, then the warnings one per line. */
    static const struct view_col facts[] = {
        {"command", NULL},
        {"host", NULL},
        {"pid", NULL},
        {"start_time", NULL},
        {"duration_ns", NULL},
        {"end_reason", NULL},
        {"gpus", NULL},
        {"collector_cupti", NULL},
        {"warnings", "Run warnings"},
    };
    int k = 0;
    t[k++] = rb;
    t[k++] = rn;
    t[k++] = c;
    for (struct compare_side *s = b; s; s = s == b ? n : NULL) {
        struct table *v =
            table_view(s == b ? rb : rn,
                       pool_printf("%s: %s", s == b ? "Base" : "New", pool_escaped(s->path, 80)),
                       facts, (int)(sizeof facts / sizeof *facts));
        v->object = 1;
        t[k++] = v;
    }
    struct table *wt = table_new(NULL, "Warnings: the comparison may mislead");
    wt->object = 1;
    wt->optional = 1;
    for (int i = 0; i < nw; i++) table_col(wt, NULL, "!", COL_TEXT);
    if (nw) {
        table_row(wt);
        for (int i = 0; i < nw; i++) table_set_text(wt, i, w[i]);
    }
    t[k++] = wt;
    return k;
}

/* Two names for one file (the same path, a link) compare a run with itself. */
static void check_distinct(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
        cli_fail("%s and %s are the same database: compare needs two runs", a, b);
}

int cmd_compare(int argc, char **argv)
{
    struct render_opts ro = {OUT_TEXT, 0, 0, 100, NULL, NULL};
    struct report_opts o = {.top = -1};
    const char *paths[2];
    int npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            compare_usage(stdout);
            return 0;
        } else if (report_option(argc, argv, &i, &o, &ro)) {
            continue;
        } else if (a[0] == '-' && a[1]) {
            cli_fail("unknown option '%s' (try 'infprof compare --help')", a);
        } else if (npaths == 2) {
            cli_fail("compare takes two databases, BASE and NEW (got a third: %s)", a);
        } else {
            paths[npaths++] = a;
        }
    }
    if (npaths < 2) cli_fail("compare needs two databases (usage: infprof compare BASE NEW)");
    report_defaults(&o, &ro);
    check_distinct(paths[0], paths[1]);

    /* Every row of every section on both sides: --top applies to the comparison, and --phase
     * is resolved against both runs (a phase may exist in one only). */
    struct report_opts all = {
        .by_phase = o.by_phase || o.phase, .nvtx = o.nvtx, .format = o.format};
    static struct compare_side b, n;
    side_load(&b, paths[0], &all);
    side_load(&n, paths[1], &all);
    const struct run_phases *both[2] = {&b.phases, &n.phases};
    const char *phase = o.phase ? phase_resolve(both, 2, o.phase) : NULL;

    struct table *t[64];
    int k = header(&b, &n, t);
    k += compare_sections(&b, &n, &o, phase, t + k);
    render(stdout, t, k, &ro);
    /* The run tables belong to the sides: free each table once. */
    for (int i = 0; i < k; i++)
        if (t[i] != table_by_key(b.t, b.n, "base") && t[i] != table_by_key(n.t, n.n, "new"))
            table_free(t[i]);
    for (int i = 0; i < b.n; i++) table_free(b.t[i]);
    for (int i = 0; i < n.n; i++) table_free(n.t[i]);
    pool_free();
    return fflush(stdout) == 0 ? 0 : 1;
}

/*
 * compare_runs.c: two runs side by side (compare.h). Each database is read into the very tables
 * `infprof report` prints (report_build), one after the other; the sections are then matched row
 * by row (compare_sections.c, compare_diff.c). Here: the two sides, and the header that names
 * both runs and warns when the comparison is doubtful: different GPUs or command lines, a run
 * that did not finish, records lost.
 */
#include "compare.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void side_load(struct compare_side *s, const char *path, const struct report_opts *o)
{
    s->path = path;
    struct sqlite3 *db = db_open(path);
    phases_load(db, &s->phases, &o->run);
    db_close(db);
}

/* The side's tables, from its run model (after pair_modes named its phase). */
static void side_build(struct compare_side *s, const struct report_opts *o)
{
    struct sqlite3 *db = db_open(s->path);
    s->n = report_build(db, &s->phases, o, s->t, REPORT_TABLES);
    db_close(db);
}

/* A run's one phase with iterations; NULL where it has none or several. */
static struct phase_info *lone_phase(struct run_phases *p)
{
    struct phase_info *one = NULL;
    for (int i = 0; i < p->n; i++) {
        if (p->v[i].iterations <= 0) continue;
        if (one) return NULL;
        one = &p->v[i];
    }
    return one;
}

/* Runs that share no phase with iterations, each side's runs one phase: a mode chosen per process
 * (MODE=no_grad, then MODE=inference_mode), the commonest way to ask whether inference_mode is
 * worth it. Compared as one phase, named for both ("no_grad | autocast off -> inference_mode |
 * autocast off", a name neither run has) on each side, and said among the warnings; before,
 * nothing was compared (a fresh-eyes check: "nothing to compare", and the no_grad row's "too few
 * iterations"). A phase without iterations keeps its name. Returns the warning, or NULL. */
static const char *pair_modes(struct compare_side *b, struct compare_side *n)
{
    struct phase_info *pb = lone_phase(&b->phases), *pn = lone_phase(&n->phases);
    if (!pb || !pn || !strcmp(pb->label, pn->label)) return NULL;
    /* "no_grad | autocast off -> inference_mode | autocast off"; what the two share said once
     * ("inference_mode | autocast bf16 -> fp16") where the whole would not fit */
    char both[sizeof pb->label];
    size_t len = (size_t)snprintf(both, sizeof both, "%s -> %s", pb->label, pn->label);
    if (len >= sizeof both && !strcmp(pb->grad_mode, pn->grad_mode))
        len = (size_t)snprintf(both, sizeof both, "%s | autocast %s -> %s", pb->grad_mode,
                               pb->autocast, pn->autocast);
    else if (len >= sizeof both && !strcmp(pb->autocast, pn->autocast))
        len = (size_t)snprintf(both, sizeof both, "%s -> %s | autocast %s", pb->grad_mode,
                               pn->grad_mode, pb->autocast);
    if (len >= sizeof both) return NULL;
    for (int k = 0; k < 2; k++) {
        const struct compare_side *s = k ? n : b;
        const char *own = k ? pn->label : pb->label;
        for (int i = 0; i < s->nmore; i++) {
            struct phase_info *x = lone_phase(&s->more[i]);
            if (!x || strcmp(x->label, own)) return NULL;
        }
    }
    const char *w = pool_printf("the runs share no phase: base's %s and new's %s are compared as"
                                " one phase, \"%s\" (each run ran its iterations in one)",
                                pb->label, pn->label, both);
    /* Short: "no_grad->inference" where autocast is the same (the warning names it), else with
     * each one's ("no_grad/off->no_grad/bf16"). */
    char sb[16], sn[16], brief[sizeof pb->short_as];
    phase_short_label(pb, sb, sizeof sb);
    phase_short_label(pn, sn, sizeof sn);
    if (!strcmp(pb->autocast, pn->autocast))
        snprintf(brief, sizeof brief, "%.*s->%.*s", (int)strcspn(sb, "/"), sb,
                 (int)strcspn(sn, "/"), sn);
    else
        snprintf(brief, sizeof brief, "%.15s->%.14s", sb, sn);
    for (int k = 0; k < 2; k++) {
        struct compare_side *s = k ? n : b;
        struct phase_info *x = lone_phase(&s->phases);
        snprintf(x->label, sizeof x->label, "%s", both);
        snprintf(x->short_as, sizeof x->short_as, "%s", brief);
        for (int i = 0; i < s->nmore; i++) {
            x = lone_phase(&s->more[i]);
            snprintf(x->label, sizeof x->label, "%s", both);
            snprintf(x->short_as, sizeof x->short_as, "%s", brief);
        }
    }
    return w;
}

/* The side's other runs: their run models, what the verdicts read (phases and series), the
 * rows they were made from let go. */
static void side_more(struct compare_side *s, const char *const *paths, int n,
                      const struct report_opts *o)
{
    if (n <= 0) return;
    if (!(s->more = calloc((size_t)n, sizeof *s->more))) cli_fail("out of memory");
    for (int i = 0; i < n; i++) {
        struct sqlite3 *db = db_open(paths[i]);
        phases_load(db, &s->more[i], &o->run);
        run_rows_drop(&s->more[i]);
        db_close(db);
    }
    s->more_paths = paths;
    s->nmore = n;
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

/* What tells one run from another (pid, host, start), and what the warnings read of it. */
struct run_id {
    int64_t pid, start, finished;
    char *host, *command;
};

static void run_id_of(const char *path, struct run_id *x)
{
    struct sqlite3 *db = db_open(path);
    memset(x, 0, sizeof *x);
    db_meta_int(db, "pid", &x->pid);
    db_meta_int(db, "start_unix_ns", &x->start);
    db_meta_int(db, "finished", &x->finished);
    x->host = db_meta_text(db, "host");
    x->command = db_meta_text(db, "command");
    db_close(db);
}

static int same_text(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

/* Every run of both sides, the first two included: none twice (a copy: the same pid, host and
 * start; exits 2), and the warnings the first runs' header does not give: another run that did
 * not finish, a command line other than the base run's. */
static int runs_checked(const char *const *base, int nb, const char *const *new, int nn,
                        const char **w, int room)
{
    int n = nb + nn > 0 ? nb + nn : 0, nw = 0;
    struct run_id *id = calloc((size_t)n + 1, sizeof *id);
    if (!id) cli_fail("out of memory");
    for (int i = 0; i < n; i++) run_id_of(i < nb ? base[i] : new[i - nb], &id[i]);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (id[i].pid > 0 && id[i].start > 0 && id[i].pid == id[j].pid &&
                id[i].start == id[j].start && same_text(id[i].host, id[j].host))
                cli_fail("%s and %s hold the same run (pid %lld, same host and start): compare"
                         " needs each run once",
                         i < nb ? base[i] : new[i - nb], j < nb ? base[j] : new[j - nb],
                         (long long)id[i].pid);
    int commands = 0;
    for (int i = 0; i < n; i++) {
        int first = i == 0 || i == nb; /* the first runs: header() says it */
        if (!first && !id[i].finished && nw < room)
            w[nw++] = pool_printf("the %s side's run %s did not finish (killed, or still"
                                  " running): its figures stop early",
                                  i < nb ? "base" : "new",
                                  pool_escaped(i < nb ? base[i] : new[i - nb], 60));
        commands |= i != nb && !same_text(id[i].command, id[0].command);
    }
    if (commands && nw < room)
        w[nw++] = "the runs' command lines differ (besides the first runs'): the runs may not do"
                  " the same work";
    for (int i = 0; i < n; i++) free(id[i].host), free(id[i].command);
    free(id);
    return nw;
}

/* "the command lines differ ('--out a.json' against '--out b.json'): ...": their first words
 * that differ, so that a file name alone reads as one (a fresh-eyes check compared two runs that
 * differed only in their output file and read "may not do the same work" alone). */
static const char *commands_differ(const char *a, const char *b)
{
    /* Word by word: the first pair that differs (a word missing on one side reads "") ... */
    const char *pa = a, *pb = b;
    size_t la, lb;
    for (;;) {
        while (*pa == ' ') pa++;
        while (*pb == ' ') pb++;
        la = strcspn(pa, " "), lb = strcspn(pb, " ");
        if (la != lb || strncmp(pa, pb, la) != 0 || !la) break;
        pa += la, pb += lb;
    }
    /* One ran out of words: what the other adds. */
    if (!la || !lb)
        return pool_printf("the command lines differ (the %s one adds '%s'): the runs may not do"
                           " the same work",
                           la ? "base" : "new", pool_escaped(la ? pa : pb, 60));
    /* ... and whether the words after it are alike. */
    int more = strcmp(pa + la, pb + lb) != 0;
    char x[64], y[64];
    snprintf(x, sizeof x, "%.*s", (int)(la < 60 ? la : 60), pa);
    snprintf(y, sizeof y, "%.*s", (int)(lb < 60 ? lb : 60), pb);
    return pool_printf("the command lines differ (%s'%s' against '%s'%s): the runs may not do the"
                       " same work",
                       more ? "first " : "", pool_escaped(x, 60), pool_escaped(y, 60),
                       more ? ", and more" : ", nothing else");
}

static int header(struct compare_side *b, struct compare_side *n, struct table **t,
                  const char *const *more_w, int more_nw)
{
    struct table *rb = side_table(b, "run"), *rn = side_table(n, "run");
    const char *w[12];
    int nw = 0;
    for (int i = 0; i < more_nw && nw < 5; i++) w[nw++] = more_w[i];
    if (strcmp(text_of(rb, "gpus"), text_of(rn, "gpus")))
        w[nw++] = "the runs used different GPUs: kernel times are not comparable";
    if (strcmp(text_of(rb, "command"), text_of(rn, "command")))
        w[nw++] = commands_differ(text_of(rb, "command"), text_of(rn, "command"));
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
    table_col(c, "runs_base", NULL, COL_INT);
    table_col(c, "runs_new", NULL, COL_INT);
    table_col(c, "base_files", NULL, COL_TEXT); /* every run's, "; " between */
    table_col(c, "new_files", NULL, COL_TEXT);
    table_row(c);
    table_set_int(c, 3, 1 + b->nmore);
    table_set_int(c, 4, 1 + n->nmore);
    for (int side = 0; side < 2; side++) {
        const struct compare_side *s = side ? n : b;
        const char *all = pool_printf("%s", s->path);
        for (int i = 0; i < s->nmore; i++) all = pool_printf("%s; %s", all, s->more_paths[i]);
        table_set_text(c, 5 + side, all);
    }
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

int compare_runs(struct compare_runs *r, const char *const *base, int nb, const char *const *new,
                 int nn, const struct report_opts *o, struct table **t)
{
    for (int i = 0; i < nb + nn; i++)
        for (int j = i + 1; j < nb + nn; j++)
            check_distinct(i < nb ? base[i] : new[i - nb], j < nb ? base[j] : new[j - nb]);
    const char *more_w[5];
    int more_nw = runs_checked(base, nb, new, nn, more_w, 4);
    const char *base_path = base[0], *new_path = new[0];

    /* Every row of every section on both sides: --top applies to the comparison, and --phase
     * is resolved against both runs (a phase may exist in one only). */
    struct report_opts all = {
        .by_phase = o->by_phase || o->phase, .nvtx = o->nvtx, .format = o->format, .run = o->run};
    struct compare_side *b = &r->base, *n = &r->new;
    side_load(b, base_path, &all);
    side_load(n, new_path, &all);
    side_more(b, base + 1, nb - 1, &all);
    side_more(n, new + 1, nn - 1, &all);
    const char *paired = pair_modes(b, n);
    if (paired) more_w[more_nw++] = paired;
    side_build(b, &all);
    side_build(n, &all);
    const struct run_phases *both[2] = {&b->phases, &n->phases};
    const char *phase = o->phase ? phase_resolve(both, 2, o->phase) : NULL;

    int k = header(b, n, t, more_w, more_nw);
    k += compare_sections(b, n, o, phase, t + k, COMPARE_OUT_TABLES - k - 1);
    /* The first screen, after the data headers (base, new, compare) and before every view. */
    struct table *summary = compare_summary(t, k);
    memmove(t + 4, t + 3, (size_t)(k - 3) * sizeof *t);
    t[3] = summary;
    return k + 1;
}

void compare_runs_free(struct compare_runs *r, struct table **t, int k)
{
    /* The run tables belong to the sides: free each table once. */
    for (int i = 0; i < k; i++)
        if (t[i] != table_by_key(r->base.t, r->base.n, "base") &&
            t[i] != table_by_key(r->new.t, r->new.n, "new"))
            table_free(t[i]);
    for (int i = 0; i < r->base.n; i++) table_free(r->base.t[i]);
    for (int i = 0; i < r->new.n; i++) table_free(r->new.t[i]);
    free(r->base.more);
    free(r->new.more);
    pool_free();
}

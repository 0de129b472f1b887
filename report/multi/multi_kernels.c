/*
 * multi_kernels.c: the kernels of several processes combined, by name (and phase with --by-phase
 * or --phase), in the columns of the single-run kernel table plus the number of processes.
 * Counts, totals, minima and maxima combine exactly. Medians do not: a name that one process
 * launched keeps that process's median (exact up to the sample size docs/report.md gives), and a
 * name that several launched gets its median and standard deviation from their launches, read
 * again from each database's kernel rows once all are folded (every launch up to 4,096 a name, a
 * uniform sample of 4,096 beyond, said under the table). Each process's kernel table is folded in
 * as it is read (multi_kernels_fold: merged into the groups sorted by key), so the report holds a
 * row per name, not a table per process.
 */
#include "multi.h"
#include "../../profiler/map.h"
#include "../../profiler/stats.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct group {
    char *key;        /* phase label (or "") \x1f name: the sort key */
    char *label;      /* NULL: all phases */
    const char *name; /* in key */
    int runs, order, first_run;
    int64_t count, total, min, max, med;
    double stddev;
    int raw; /* from every launch */
    struct ip_stats st;
};

/* The groups folded so far, sorted by key; the runs to read again (a name several launched). */
struct multi_kgroups {
    struct group *v;
    int n;
    char *reread;
    int nruns;
};

static char *key_of(const char *label, const char *name)
{
    size_t a = strlen(label), b = strlen(name);
    char *k = malloc(a + b + 2);
    if (!k) cli_fail("out of memory");
    memcpy(k, label, a);
    k[a] = '\x1f';
    memcpy(k + a + 1, name, b + 1);
    return k;
}

static int64_t int_at(const struct table *t, int r, const char *col)
{
    const struct cell *c = table_cell(t, r, col);
    return c && !c->null ? c->i : 0;
}

/* Phase id of a label in any run (the order of the single-run report); 0 for "none". */
static int phase_order(const struct multi_data *d, const char *label)
{
    for (int r = 0; label && r < d->n; r++)
        for (int i = 0; i < d->runs[r].phases.n; i++)
            if (!strcmp(d->runs[r].phases.v[i].label, label)) return d->runs[r].phases.v[i].id;
    return 0;
}

static int cmp_group(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->order != y->order) return x->order - y->order;
    if (x->total != y->total) return (x->total < y->total) - (x->total > y->total);
    return strcmp(x->name, y->name);
}

static int cmp_group_key(const void *key, const void *g)
{
    return strcmp(key, ((const struct group *)g)->key);
}

/* Every launch of the names several processes share, from one database's rows. */
static void read_launches(struct multi_data *d, int run, struct group *g, int ng, int by_phase)
{
    const struct multi_run *r = &d->runs[run];
    struct sqlite3 *db = db_open(r->path);
    struct ip_map sig = {0};
    sqlite3_stmt *st = db_prepare(db, "SELECT g.id, g.phase, s.value FROM launch_sigs g JOIN"
                                      " strings s ON s.id = g.name_id");
    while (db_step(st)) {
        const char *label = "";
        if (by_phase) {
            label = "none";
            for (int i = 0; i < r->phases.n; i++)
                if (r->phases.v[i].id == sqlite3_column_int(st, 1)) label = r->phases.v[i].label;
        }
        char *k = key_of(label, (const char *)sqlite3_column_text(st, 2));
        struct group *x = bsearch(k, g, (size_t)ng, sizeof *g, cmp_group_key);
        free(k);
        if (!x || !x->raw) continue;
        uint64_t *slot = ip_map_put(&sig, (uint64_t)sqlite3_column_int64(st, 0) + 1);
        if (!slot) cli_fail("out of memory");
        *slot = (uint64_t)(x - g) + 1;
    }
    sqlite3_finalize(st);
    st = db_prepare(db, "SELECT sig, dur FROM kernel_rows");
    while (db_step(st)) {
        uint64_t *slot = ip_map_get(&sig, (uint64_t)sqlite3_column_int64(st, 0) + 1);
        if (slot) ip_stats_add(&g[*slot - 1].st, sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
    ip_map_free(&sig);
    db_close(db);
}

struct entry {
    char *key;
    int row;
};

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->row - y->row;
}

/* One kernel row of run `run` into group x (new: x->runs is 0). */
static void fold_row(struct multi_kgroups *kg, struct group *x, const struct table *t, int row,
                     int run)
{
    if (!x->runs) {
        x->min = INT64_MAX;
        x->first_run = run;
    }
    x->runs++;
    x->count += int_at(t, row, "instances");
    x->total += int_at(t, row, "total_ns");
    int64_t lo = int_at(t, row, "min_ns"), hi = int_at(t, row, "max_ns");
    if (lo < x->min) x->min = lo;
    if (hi > x->max) x->max = hi;
    x->med = int_at(t, row, "med_ns");
    x->stddev = table_cell(t, row, "stddev_ns")->d;
    if (x->runs > 1) { /* several launched it: its median from every launch, read again */
        x->raw = 1;
        kg->reread[x->first_run] = kg->reread[run] = 1;
    }
}

void multi_kernels_fold(struct multi_data *d, int run, const struct table *t, int by_phase)
{
    struct multi_kgroups *kg = d->kg;
    if (!kg) {
        if (!(kg = d->kg = calloc(1, sizeof *kg)) ||
            !(kg->reread = calloc((size_t)(d->n > 0 ? d->n : 1), 1)))
            cli_fail("out of memory");
        kg->nruns = d->n;
    }
    if (!t || !t->nrows) return;
    struct entry *e = calloc((size_t)t->nrows, sizeof *e);
    struct group *g = calloc((size_t)(kg->n + t->nrows), sizeof *g);
    if (!e || !g) cli_fail("out of memory");
    for (int row = 0; row < t->nrows; row++) {
        const struct cell *ph = table_cell(t, row, "phase"), *nm = table_cell(t, row, "name");
        e[row] = (struct entry){
            key_of(by_phase && ph && ph->s ? ph->s : "", nm && nm->s ? nm->s : ""), row};
    }
    qsort(e, (size_t)t->nrows, sizeof *e, cmp_entry);
    /* Merge the sorted rows into the sorted groups. */
    int a = 0, b = 0, m = 0;
    while (a < kg->n || b < t->nrows) {
        int c = a == kg->n ? 1 : b == t->nrows ? -1 : strcmp(kg->v[a].key, e[b].key);
        if (c < 0) {
            g[m++] = kg->v[a++];
            continue;
        }
        if (c > 0) { /* a new name */
            struct group *x = &g[m++];
            const struct cell *ph = table_cell(t, e[b].row, "phase");
            x->key = e[b].key;
            x->name = strchr(x->key, '\x1f') + 1;
            if (by_phase && ph && ph->s && !(x->label = strdup(ph->s))) cli_fail("out of memory");
        } else {
            g[m] = kg->v[a++];
            free(e[b].key);
            m++;
        }
        struct group *x = &g[m - 1];
        fold_row(kg, x, t, e[b].row, run);
        /* The same key again in this run (each a row of its own, as a second process's). */
        for (b++; b < t->nrows && !strcmp(e[b].key, x->key); b++) {
            fold_row(kg, x, t, e[b].row, run);
            free(e[b].key);
        }
    }
    free(kg->v);
    free(e);
    kg->v = g;
    kg->n = m;
}

void multi_kernels_free(struct multi_data *d)
{
    struct multi_kgroups *kg = d->kg;
    if (!kg) return;
    for (int i = 0; i < kg->n; i++) {
        free(kg->v[i].key);
        free(kg->v[i].label);
        if (kg->v[i].raw) ip_stats_free(&kg->v[i].st);
    }
    free(kg->v);
    free(kg->reread);
    free(kg);
    d->kg = NULL;
}

struct table *multi_kernels(struct multi_data *d, const struct report_opts *o, const char *phase)
{
    int by_phase = o->by_phase || phase, show_phase = o->by_phase && !phase;
    multi_kernels_fold(d, 0, NULL, by_phase); /* no kernels at all: no groups */
    struct multi_kgroups *kg = d->kg;
    /* Bounded as the single-run report's are: every launch up to 4,096 a name, a uniform
     * sample of 4,096 beyond (a thousand processes' launches would take 40 MB and more). */
    for (int i = 0; i < kg->n; i++)
        if (kg->v[i].raw) ip_stats_init(&kg->v[i].st, 1);
    for (int r = 0; r < kg->nruns; r++)
        if (kg->reread[r]) read_launches(d, r, kg->v, kg->n, by_phase);
    /* --phase: that phase's names only (a phase of some processes: every one's rows folded). */
    struct group *g = calloc((size_t)kg->n + 1, sizeof *g);
    if (!g) cli_fail("out of memory");
    int ng = 0, sampled = 0;
    for (int i = 0; i < kg->n; i++)
        if (!phase || (kg->v[i].label && !strcmp(kg->v[i].label, phase))) g[ng++] = kg->v[i];
    for (int i = 0; i < ng; i++) {
        struct group *x = &g[i];
        x->order = phase_order(d, x->label);
        if (!x->raw) continue;
        x->count = (int64_t)x->st.count;
        x->total = x->st.total;
        x->min = x->st.min;
        x->max = x->st.max;
        int exact = 1;
        x->med = ip_stats_median(&x->st, &exact);
        sampled += !exact;
        x->stddev = ip_stats_stddev(&x->st);
    }
    qsort(g, (size_t)ng, sizeof *g, cmp_group);

    const char *title =
        phase ? pool_printf("All processes: CUDA kernels of phase %s", pool_escaped(phase, 60))
        : o->by_phase ? "All processes: CUDA kernels (by phase)"
                      : "All processes: CUDA kernels (all phases)";
    struct table *t = table_new("combined_kernels", title);
    if (show_phase) table_col(t, NULL, "Phase", COL_TEXT);
    int c0 = t->ncols;
    table_col(t, "phase", NULL, COL_TEXT);
    static const struct stat_cols stat = {"instances", "Instances", 0, 0, 0, 0};
    table_stat_cols(t, &stat);
    table_col(t, "processes", "Procs", COL_INT);
    table_col(t, "name", "Name", COL_KERNEL);
    int hidden = 0;
    for (int i = 0; i < ng; i++) {
        struct group *x = &g[i];
        double all = 0;
        int rank = 0;
        for (int j = 0; j < ng; j++)
            if (g[j].order == x->order) all += (double)g[j].total, rank += j < i;
        if (o->top && rank >= o->top) {
            hidden++;
            continue;
        }
        table_row(t);
        if (show_phase) {
            const struct phase_info *ph = NULL;
            for (int r = 0; r < d->n && !ph; r++)
                for (int k = 0; k < d->runs[r].phases.n; k++)
                    if (d->runs[r].phases.v[k].id == x->order && x->order)
                        ph = &d->runs[r].phases.v[k];
            char s[64] = "none";
            if (ph) phase_short_label(ph, s, sizeof s);
            table_set_text(t, 0, s);
        }
        if (x->label) table_set_text(t, c0, x->label);
        struct stat_cells s = {1, all, x->total, x->count, x->med, x->min, x->max, x->stddev};
        table_set_stats(t, c0 + 1, &s);
        table_set_int(t, c0 + 9, x->runs);
        table_set_text(t, c0 + 10, x->name);
    }
    if (hidden || sampled)
        t->note = pool_printf(
            "%s%s%s",
            hidden ? pool_printf("%d more kernel names not shown (--top 0 shows all)", hidden) : "",
            hidden && sampled ? "; " : "",
            sampled ? pool_printf("the median of %d name%s launched over 4,096 times from a"
                                  " uniform sample of 4,096 launches",
                                  sampled, sampled > 1 ? "s" : "")
                    : "");
    free(g);
    multi_kernels_free(d); /* read once */
    return t;
}

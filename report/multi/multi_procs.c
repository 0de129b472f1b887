/*
 * multi_procs.c: several processes compared (docs/report.md, "Several databases"): each
 * process's own figures side by side (its main phase, the one with the most steady iterations:
 * p50, p95, items/s, GPU busy, peak tensor memory, lost events), the ones that stand out named
 * against the median process with the band the others make, and a Summary over all of them:
 * how many ranks and helpers, the straggler and what it costs a job that steps in lockstep, the
 * highest peak, what was lost. Helpers (DataLoader workers, processes with no iteration) are
 * listed, never compared.
 */
#include "multi.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Items per second of a phase's steady iterations (their items over their summed latency). */
static double items_per_s(const struct phase_info *ph)
{
    double total = 0;
    for (size_t i = 0; i < ph->nsteady; i++) total += (double)ph->steady[i];
    return ph->items && total > 0 ? (double)ph->items / total * 1e9 : -1;
}

/* The process's figures, from its run model and metadata (while its database is open). */
void multi_process_facts(struct sqlite3 *db, struct multi_run *r)
{
    const struct run_phases *p = &r->phases;
    int best = -1;
    for (int i = 0; i < p->n; i++)
        if (p->v[i].nsteady && (best < 0 || p->v[i].nsteady > p->v[best].nsteady)) best = i;
    r->main = best;
    r->items_per_s = best >= 0 ? items_per_s(&p->v[best]) : -1;
    char *py = db_meta_text(db, "python_module_hooks");
    r->helper = py && !strncmp(py, "worker", 6) ? "DataLoader worker"
                : best < 0                      ? "no iteration"
                                                : NULL;
    free(py);
    /* A forked child whose every iteration was found without a mark or a module call. */
    char *role = db_meta_text(db, "role");
    r->fork_child = role && !strcmp(role, "fork_child");
    r->root = role && !strcmp(role, "root");
    r->forked_detected = r->fork_child && p->niters > 0;
    for (size_t k = 0; k < p->niters && r->forked_detected; k++)
        r->forked_detected = p->iters[k].source == 0;
    free(role);
    db_meta_int(db, "dropped_events", &r->dropped);
    db_meta_int(db, "pid", &r->pid);
    db_meta_int(db, "ppid", &r->ppid);
    r->peak = -1;
    for (int i = 0; i < p->n; i++)
        if (p->v[i].mem_dev >= 0 && p->v[i].peak_alloc > r->peak) r->peak = p->v[i].peak_alloc;
}

void multi_process_roles(struct multi_data *d)
{
    for (int i = 0; i < d->n; i++) {
        struct multi_run *r = &d->runs[i];
        int none = r->helper && !strcmp(r->helper, "no iteration");
        if (!none && !(r->forked_detected && !r->helper)) continue;
        for (int j = 0; j < d->n; j++) {
            if (j == i || d->runs[j].pid != r->ppid || r->ppid <= 0) continue;
            /* Without the Python module hooks a DataLoader worker's fetches repeat too: a
             * forked child whose loop was only found in its allocations, beside a parent with
             * iterations, is taken for one (said as a guess). */
            if (none)
                r->helper = pool_printf("no iteration, a child of %s", d->runs[j].label);
            else if (d->runs[j].main >= 0)
                r->helper = pool_printf("a forked child of %s whose iterations were only found in"
                                        " its allocations: a DataLoader worker?",
                                        d->runs[j].label);
            break;
        }
    }
}

/* The outlier rule's constants for a process (rstats.h): over the median of the ranks by more
 * than OUTLIER_SIGMAS robust deviations and OUTLIER_SHARE of the median. */
#define OUTLIER_SIGMAS 3
#define OUTLIER_SHARE  0.05

/* The one that stands out above the median of the ranks: its index, its ratio to the median,
 * and the band the others make (lo-hi ratios); -1 when none does. Several standing out with the
 * top not past the next of them by OUTLIER_SHARE are named together, none alone (CI once: three
 * ranks of 8 at 8.47, 8.52 and 8.50 ms by their own timers, and the Summary named one of them
 * "1.94x the median (the others 0.90-1.94x)"): nalike of them, cut the figure they are past,
 * alo-ahi their ratios. */
struct outlier {
    int who, nalike;
    double ratio, med, lo, hi, cut, alo, ahi;
};

static int compared(const struct multi_run *r, double (*fig)(const struct multi_run *))
{
    return !r->helper && fig(r) > 0;
}

/* One of those standing out together (o->nalike >= 2). */
static int alike(const struct outlier *o, const struct multi_run *r,
                 double (*fig)(const struct multi_run *))
{
    return o->nalike >= 2 && compared(r, fig) && fig(r) > o->cut;
}

static struct outlier stands_out(const struct multi_data *d,
                                 double (*fig)(const struct multi_run *))
{
    struct outlier o = {-1, 0, 0, 0, 0, 0, 0, 0, 0};
    double *v = malloc((size_t)(d->n ? d->n : 1) * sizeof *v),
           *dev = malloc((size_t)(d->n ? d->n : 1) * sizeof *dev);
    if (!v || !dev) cli_fail("out of memory");
    int n = 0, top = -1;
    for (int i = 0; i < d->n; i++) {
        if (!compared(&d->runs[i], fig)) continue;
        v[n++] = fig(&d->runs[i]);
        if (top < 0 || fig(&d->runs[i]) > fig(&d->runs[top])) top = i;
    }
    if (n >= 2) {
        o.med = rstats_median_f(v, (size_t)n);
        for (int i = 0; i < n; i++) dev[i] = v[i];
        double sigma = RSTATS_SIGMA_PER_MAD * rstats_mad_f(dev, (size_t)n, o.med);
        double x = fig(&d->runs[top]), next = 0;
        o.cut = o.med + rstats_margin(o.med, sigma, OUTLIER_SIGMAS, OUTLIER_SHARE);
        o.lo = INFINITY, o.hi = 0, o.alo = INFINITY;
        for (int i = 0; i < d->n; i++) {
            double y = fig(&d->runs[i]);
            if (!compared(&d->runs[i], fig)) continue;
            if (y > o.cut)
                o.nalike++, o.alo = fmin(o.alo, y / o.med), o.ahi = fmax(o.ahi, y / o.med);
            if (i == top) continue;
            o.lo = fmin(o.lo, y / o.med), o.hi = fmax(o.hi, y / o.med);
            if (y > o.cut) next = fmax(next, y);
        }
        if (x > o.cut && !(next > 0 && x <= next * (1 + OUTLIER_SHARE))) {
            o.who = top, o.ratio = x / o.med, o.nalike = 1;
        } else if (o.nalike < 2) {
            o.nalike = 0;
        }
    }
    free(v), free(dev);
    return o;
}

/* The Summary's line for those standing out together: how many, their figure (what) over the
 * median's (med, formatted), and their labels: the first three, then how many more. */
static const char *together(const struct multi_data *d, const struct outlier *o,
                            double (*fig)(const struct multi_run *), const char *what,
                            const char *med)
{
    const char *s = "";
    int shown = 0;
    for (int i = 0; i < d->n; i++) {
        if (!alike(o, &d->runs[i], fig)) continue;
        if (shown++ < 3) s = pool_printf("%s%s%s", s, *s ? "; " : "", d->runs[i].label);
    }
    if (shown > 3) s = pool_printf("%s; and %d more", s, shown - 3);
    return pool_printf("%d processes stand out together: %s %.2f-%.2fx the median process's %s"
                       " (%s)",
                       o->nalike, what, o->alo, o->ahi, med, s);
}

/* The ranks' main phases are not all the same one. */
static int phases_differ(const struct multi_data *d)
{
    const char *first = NULL;
    for (int i = 0; i < d->n; i++) {
        const struct multi_run *r = &d->runs[i];
        if (r->helper || r->main < 0) continue;
        if (!first)
            first = r->phases.v[r->main].label;
        else if (strcmp(first, r->phases.v[r->main].label))
            return 1;
    }
    return 0;
}

/* Why the ranks' p50s are not one work's, so that none is named a straggler (three unrelated
 * programs once read "13.70x the median process's", the median a phase pooling two batch
 * sizes); NULL where they are. */
static const char *work_differs(const struct multi_data *d)
{
    if (phases_differ(d)) return "their main phases differ: different work?";
    for (int i = 0; i < d->n; i++) {
        const struct multi_run *r = &d->runs[i];
        if (!r->helper && r->main >= 0 && r->phases.v[r->main].nseries > 1)
            return "a main phase pools several configurations: its p50 is of none of them";
    }
    return NULL;
}

/* The band the Summary and the Processes note give, one computation for both: the others'
 * beside the one that stands out, else every rank's, the top one too (the outlier's lo-hi leave
 * it out: the two once gave 0.05-1.95x and 0.05-0.05x for one run). 1-1 with no median. */
static void band_of(const struct multi_data *d, const struct outlier *o,
                    double (*fig)(const struct multi_run *), double *lo, double *hi)
{
    *lo = *hi = 1;
    if (!(o->med > 0)) return;
    if (o->who >= 0) {
        *lo = o->lo, *hi = o->hi;
        return;
    }
    double top = 0;
    for (int i = 0; i < d->n; i++)
        if (!d->runs[i].helper && fig(&d->runs[i]) > 0) top = fmax(top, fig(&d->runs[i]) / o->med);
    *lo = fmin(o->lo, 1), *hi = fmax(o->hi, top);
}

static double fig_p50(const struct multi_run *r)
{
    return r->main >= 0 ? (double)r->phases.v[r->main].lat_p50 : -1;
}

static double fig_peak(const struct multi_run *r)
{
    return (double)r->peak;
}

/* The straggler and the highest peak, by one rule for the Summary and the Processes table: no
 * straggler among different work (work_differs). */
static void outliers(const struct multi_data *d, struct outlier *slow, struct outlier *big)
{
    *slow = stands_out(d, fig_p50), *big = stands_out(d, fig_peak);
    if (work_differs(d)) slow->who = -1, slow->nalike = 0;
}

/* multi_processes's columns, in the order it declares them (asserted there). */
enum {
    MP_PROCESS,
    MP_ROLE,
    MP_PHASE,
    MP_SHORT,
    MP_STEADY_ITERATIONS,
    MP_LATENCY_P50_NS,
    MP_LATENCY_P95_NS,
    MP_ITEMS_PER_S,
    MP_GPU_BUSY_PCT,
    MP_PEAK_ALLOCATED_BYTES,
    MP_DROPPED_EVENTS,
    MP_P50_VS_MEDIAN,
    MP_STANDS_OUT,
    MP_ROLE2,
    MP_NCOLS
};

struct table *multi_processes(struct multi_data *d)
{
    struct outlier slow, big;
    outliers(d, &slow, &big);
    struct table *t = table_new("processes", "Processes (each one's main phase: the one with the"
                                             " most steady iterations)");
    int lost = 0;
    for (int i = 0; i < d->n; i++) lost |= d->runs[i].dropped > 0;
    /* Text keeps to 100 columns: the GPU busy share and (when nothing was lost) the drops are
     * JSON's and CSV's; a helper's reason too. */
    table_col(t, "process", "Process", COL_TEXT);
    table_col(t, "role", NULL, COL_TEXT);
    table_col(t, "phase", NULL, COL_TEXT);
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "steady_iterations", "Iters", COL_INT);
    table_col(t, "latency_p50_ns", "p50", COL_NS);
    table_col(t, "latency_p95_ns", "p95", COL_NS);
    table_col(t, "items_per_s", "Items/s", COL_RATE);
    table_col(t, "gpu_busy_pct", NULL, COL_PCT);
    table_col(t, "peak_allocated_bytes", "Peak", COL_BYTES);
    table_col(t, "dropped_events", lost ? "Dropped" : NULL, COL_INT);
    table_col(t, "p50_vs_median", "x median", COL_RATIO);
    table_col(t, "stands_out", "Stands out", COL_TEXT);
    table_col(t, NULL, "Role", COL_TEXT);
    assert(t->ncols == MP_NCOLS);
    for (int i = 0; i < d->n; i++) {
        const struct multi_run *r = &d->runs[i];
        table_row(t);
        table_set_text(t, MP_PROCESS, r->label);
        table_set_text(t, MP_ROLE, r->helper ? pool_printf("helper: %s", r->helper) : "rank");
        if (r->main >= 0) {
            const struct phase_info *ph = &r->phases.v[r->main];
            phase_cells(t, ph, MP_PHASE, MP_SHORT);
            table_set_int(t, MP_STEADY_ITERATIONS,
                          (int64_t)ph->nsteady); /* the captured apart, as its own */
            table_set_int(t, MP_LATENCY_P50_NS, ph->lat_p50);
            table_set_int(t, MP_LATENCY_P95_NS, ph->lat_p95);
            if (r->items_per_s > 0) table_set_num(t, MP_ITEMS_PER_S, r->items_per_s);
            if (ph->has_steady_gpu && ph->steady_window > 0)
                table_set_num(t, MP_GPU_BUSY_PCT,
                              100.0 * (double)ph->steady_gpu_busy / (double)ph->steady_window);
            if (slow.med > 0 && !r->helper)
                table_set_num(t, MP_P50_VS_MEDIAN, (double)ph->lat_p50 / slow.med);
        }
        if (r->peak >= 0) table_set_int(t, MP_PEAK_ALLOCATED_BYTES, r->peak);
        table_set_int(t, MP_DROPPED_EVENTS, r->dropped);
        const char *s = i == slow.who              ? "slowest"
                        : alike(&slow, r, fig_p50) ? pool_printf("slow, 1 of %d alike", slow.nalike)
                                                   : NULL;
        const char *b = i == big.who ? "highest peak"
                        : alike(&big, r, fig_peak)
                            ? pool_printf("high peak, 1 of %d alike", big.nalike)
                            : NULL;
        if (s || b)
            table_set_text(t, MP_STANDS_OUT,
                           s && b ? pool_printf("%s%s%s", s, i == slow.who ? ", " : "; ", b)
                           : s    ? s
                                  : b);
        table_set_text(t, MP_ROLE2, r->helper ? "helper" : "rank");
    }
    double plo, phi, mlo, mhi;
    band_of(d, &slow, fig_p50, &plo, &phi);
    band_of(d, &big, fig_peak, &mlo, &mhi);
    t->note = pool_printf("Stands out: past the median rank by 5%% and 3 robust deviations,"
                          " several together unless the top is 5%% past the next; %s"
                          " p50 within %.2f-%.2fx the median, %s peaks within %.2f-%.2fx."
                          " Helpers (DataLoader workers, processes with no iteration) are not"
                          " compared.",
                          slow.who >= 0 ? "the others'" : "every rank's", plo, phi,
                          big.who >= 0 ? "the others'" : "every rank's", mlo, mhi);
    return t;
}

/* multi_job_summary's columns, in the order it declares them (asserted there). */
enum {
    MJ_PROCESSES,
    MJ_STRAGGLER,
    MJ_MEMORY,
    MJ_LOST,
    MJ_SERIES,
    MJ_MODES,
    MJ_STRAGGLER_PROCESS,
    MJ_STRAGGLER_RATIO,
    MJ_PEAK_PROCESS,
    MJ_PEAK_RATIO,
    MJ_NCOLS
};

/* The first screen of several processes. */
struct table *multi_job_summary(struct multi_data *d)
{
    struct outlier slow, big;
    outliers(d, &slow, &big);
    struct table *t = table_new("job", "Summary (all processes)");
    t->object = 1;
    table_col(t, "processes", "Processes", COL_TEXT);
    table_col(t, "straggler", "Straggler", COL_TEXT);
    table_col(t, "memory", "Peak memory", COL_TEXT);
    table_col(t, "lost", "Lost", COL_TEXT);
    table_col(t, "series", "Series", COL_TEXT);
    table_col(t, "inference_vs_no_grad", "inference_mode", COL_TEXT);
    table_col(t, "straggler_process", NULL, COL_TEXT);
    table_col(t, "straggler_ratio", NULL, COL_RATIO);
    table_col(t, "peak_process", NULL, COL_TEXT);
    table_col(t, "peak_ratio", NULL, COL_RATIO);
    assert(t->ncols == MJ_NCOLS);
    table_row(t);
    int ranks = 0, helpers = 0, same = 1;
    int64_t lost = 0, iters = -1;
    for (int i = 0; i < d->n; i++) {
        const struct multi_run *r = &d->runs[i];
        lost += r->dropped;
        if (r->helper) {
            helpers++;
            continue;
        }
        ranks++;
        int64_t n = r->main >= 0 ? (int64_t)r->phases.v[r->main].nsteady : 0;
        if (iters >= 0 && llabs(n - iters) > iters / 20) same = 0;
        iters = n;
    }
    /* Forked children whose parent is not among the databases while a run's first process is:
     * another run's, left beside this one's (infprof run --force rewrites its output but not
     * the children's files of an earlier run; a fresh-eyes check merged 4 such with 5 of its
     * own into one job, silently). */
    int roots = 0, orphans = 0;
    const char *pids = "";
    for (int i = 0; i < d->n; i++) roots += d->runs[i].root;
    for (int i = 0; i < d->n && roots; i++) {
        /* Up its parents among the databases to the first without one: a forked child there
         * leaves this one another run's too (a grandchild of such a child, a fresh-eyes check). */
        int top = i;
        for (int hops = 0; hops < d->n; hops++) {
            int parent = -1;
            for (int j = 0; j < d->n && parent < 0; j++)
                if (j != top && d->runs[j].pid == d->runs[top].ppid) parent = j;
            if (parent < 0) break;
            top = parent;
        }
        if (!d->runs[i].fork_child || !d->runs[top].fork_child) continue;
        if (++orphans <= 4)
            pids =
                pool_printf("%s%s%lld", pids, orphans > 1 ? ", " : "", (long long)d->runs[i].pid);
    }
    table_set_text(
        t, MJ_PROCESSES,
        pool_printf("%d process%s: %d compared, %d helper%s (Processes below)%s", d->n,
                    d->n > 1 ? "es" : "", ranks, helpers, helpers == 1 ? "" : "s",
                    orphans ? pool_printf("; %d forked %s whose parents lead outside them"
                                          " (pid %s%s): another run's, left beside this one's?",
                                          orphans, orphans > 1 ? "processes" : "process", pids,
                                          orphans > 4 ? ", ..." : "")
                            : ""));
    char a[32], b[32];
    if (slow.who >= 0) {
        const struct multi_run *r = &d->runs[slow.who];
        fmt_ns(a, sizeof a, fig_p50(r));
        fmt_ns(b, sizeof b, slow.med);
        table_set_text(
            t, MJ_STRAGGLER,
            pool_printf("%s: p50 %s, %.2fx the median process's %s (the others"
                        " %.2f-%.2fx)%s",
                        r->label, a, slow.ratio, b, slow.lo, slow.hi,
                        same ? pool_printf("; the ranks ran the same number of"
                                           " iterations: if they step together, each"
                                           " step waits %s for it",
                                           pool_printf("%.2fms", (fig_p50(r) - slow.med) / 1e6))
                             : ""));
        table_set_text(t, MJ_STRAGGLER_PROCESS, r->label);
        table_set_num(t, MJ_STRAGGLER_RATIO, slow.ratio);
    } else if (slow.nalike >= 2) {
        fmt_ns(b, sizeof b, slow.med);
        table_set_text(t, MJ_STRAGGLER,
                       pool_printf("%s%s", together(d, &slow, fig_p50, "p50", b),
                                   same ? "; the ranks ran the same number of iterations: if"
                                          " they step together, each step waits for the"
                                          " slowest of them"
                                        : ""));
    } else if (ranks < 2 || !(slow.med > 0)) {
        table_set_text(t, MJ_STRAGGLER, "fewer than two processes with iterations to compare");
    } else {
        double lo, hi;
        band_of(d, &slow, fig_p50, &lo, &hi);
        const char *why = work_differs(d);
        table_set_text(
            t, MJ_STRAGGLER,
            why ? pool_printf("none named: their p50s spread %.2f-%.2fx the median's"
                              " (%s)",
                              lo, hi, why)
            : hi - lo <= 0.1
                ? pool_printf("none: every process's p50 within %.2f-%.2fx the median's", lo, hi)
                : pool_printf("none named: their p50s spread %.2f-%.2fx the median's,"
                              " too widely to single one out",
                              lo, hi));
    }
    if (big.who >= 0) {
        const struct multi_run *r = &d->runs[big.who];
        fmt_bytes(a, sizeof a, (double)r->peak);
        fmt_bytes(b, sizeof b, big.med);
        table_set_text(t, MJ_MEMORY,
                       pool_printf("%s: peak %s allocated, %.2fx the median process's %s", r->label,
                                   a, big.ratio, b));
        table_set_text(t, MJ_PEAK_PROCESS, r->label);
        table_set_num(t, MJ_PEAK_RATIO, big.ratio);
    } else if (big.nalike >= 2) {
        fmt_bytes(b, sizeof b, big.med);
        table_set_text(t, MJ_MEMORY, together(d, &big, fig_peak, "peaks", b));
    } else if (big.med > 0) {
        double lo, hi;
        band_of(d, &big, fig_peak, &lo, &hi);
        table_set_text(
            t, MJ_MEMORY,
            hi - lo <= 0.1
                ? pool_printf("none stands out: peaks within %.2f-%.2fx the median's", lo, hi)
                : pool_printf("none named: peaks spread %.2f-%.2fx the median's", lo, hi));
    } else {
        table_set_text(t, MJ_MEMORY,
                       ranks < 2 ? "fewer than two processes with iterations to compare"
                                 : "no allocator report in two processes or more");
    }
    table_set_text(t, MJ_LOST,
                   lost ? pool_printf("%lld events dropped (Processes: Dropped)", (long long)lost)
                        : "nothing");
    const char *series = multi_series_line(d);
    if (series) table_set_text(t, MJ_SERIES, series);
    const char *modes = multi_modes_line(d);
    if (modes) table_set_text(t, MJ_MODES, modes);
    return t;
}

/*
 * multi_combined.c: the sections of several processes combined (compare.h): phases merged by
 * label and tensor memory per shared device; the kernels are in multi_kernels.c.
 *
 * Phases: iterations (warm-up too, as each process's Phases table counts them), kernels and GPU
 * time are sums; latency percentiles are taken again from every steady iteration of every
 * process (a percentile of percentiles is no percentile); throughput is those iterations over
 * the union of their intervals on the wall clock (start_unix_ns + start), so processes running
 * side by side add up and processes running one after another average. Peak
 * memory of a phase is the largest peak of one process, named: phases of different processes do
 * not happen at the same time, and ranks usually hold separate GPUs, so that is what a device
 * must hold.
 *
 * Memory: a device shared by several processes (the host's memory, or one GPU known by its UUID
 * on one host) gets the peak of the sum of their allocated bytes over time, on the wall clock:
 * what it actually had to hold. A sum of peaks would add moments that never met.
 */
#include "multi.h"
#include "../../profiler/stats.h"

#include <assert.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap) return v;
    *cap = *cap ? *cap * 2 : 256;
    if (!(v = realloc(v, *cap * size))) cli_fail("out of memory");
    return v;
}

/* ---- gathering, while each database is open ---------------------------------------------- */

static int device_index(struct multi_data *d, const char *host, int64_t pid, int type, int index,
                        const char *uuid)
{
    struct multi_dev v;
    memset(&v, 0, sizeof v);
    snprintf(v.host, sizeof v.host, "%s", host);
    device_name(type, index, v.name, sizeof v.name);
    if (type == 1 && uuid && uuid[0]) snprintf(v.uuid, sizeof v.uuid, "%s", uuid);
    if (type == 0 || v.uuid[0])
        snprintf(v.id, sizeof v.id, "%s\x1f%s", host, type == 0 ? "cpu" : v.uuid);
    else
        snprintf(v.id, sizeof v.id, "%s\x1f%lld\x1f%s", host, (long long)pid, v.name);
    for (int i = 0; i < d->ndevs; i++)
        if (!strcmp(d->devs[i].id, v.id)) return i;
    size_t cap = (size_t)d->devcap;
    d->devs = grow(d->devs, (size_t)d->ndevs, &cap, sizeof *d->devs);
    d->devcap = (int)cap;
    d->devs[d->ndevs] = v;
    return d->ndevs++;
}

/* Each process's steady iterations, with the latency its own report uses (to GPU completion,
 * warm-up left out), on the wall clock. */
static void gather_iterations(const struct run_phases *p, struct multi_data *d, int64_t start_unix,
                              int proc)
{
    for (int i = 0; i < p->n; i++) {
        const struct phase_info *ph = &p->v[i];
        /* The steady iterations (their time on the wall clock), then the latencies the run's
         * own figures are over (the captured ones among them as it counts them). */
        for (size_t q = 0; q < ph->nsteady + ph->ncounted; q++) {
            d->iters = grow(d->iters, d->niters, &d->itercap, sizeof *d->iters);
            struct multi_iter *it = &d->iters[d->niters++];
            it->phase = ph->id;
            it->proc = proc;
            it->latency = q >= ph->nsteady;
            size_t k = it->latency ? 0 : q;
            it->start = it->latency ? 0 : start_unix + ph->steady_start[k];
            it->dur = it->latency ? ph->counted_lat[q - ph->nsteady] : ph->steady[k];
            it->batch = it->latency ? -1 : ph->steady_batch[k];
        }
    }
}

static void push_mem(struct multi_data *d, struct multi_mem m)
{
    d->mem = grow(d->mem, d->nmem, &d->memcap, sizeof *d->mem);
    d->mem[d->nmem++] = m;
}

void multi_gather(struct sqlite3 *db, const struct run_phases *p, struct multi_data *d, int proc)
{
    int64_t start = 0, dur = -1, pid = 0;
    db_meta_int(db, "start_unix_ns", &start);
    db_meta_int(db, "pid", &pid);
    /* A run that did not finish has no duration: its memory counts until its last report. */
    if (!db_meta_int(db, "duration_ns", &dur))
        dur = db_int(db, "SELECT max(ts) FROM tensor_memory", 0);
    gather_iterations(p, d, start, proc);
    char *host = db_meta_text(db, "host");
    char uuid[REPORT_MAX_DEVICES][48] = {{0}};
    sqlite3_stmt *st = db_prepare(db, "SELECT id, uuid FROM devices");
    while (db_step(st)) {
        int id = sqlite3_column_int(st, 0);
        if (id >= 0 && id < REPORT_MAX_DEVICES && sqlite3_column_text(st, 1))
            snprintf(uuid[id], sizeof uuid[id], "%s", sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    int used[REPORT_MAX_DEVICES * 2], nused = 0;
    /* Streamed, device by device in time order, never held whole: a process with more than
     * multi_mem_points changes on a device keeps that many intervals, each at its highest
     * totals (an upper bound of what the process held in it). */
    int64_t keep = multi_mem_points(d);
    st = db_prepare(db, "SELECT device_type, device_index, count(*), min(ts), max(ts) FROM"
                        " tensor_memory GROUP BY device_type, device_index");
    sqlite3_stmt *ev = db_prepare(db, "SELECT ts, allocated, reserved FROM tensor_memory WHERE"
                                      " device_type = ? AND device_index = ? AND " DB_TENSOR_TOTALS
                                      " ORDER BY ts, rowid");
    while (db_step(st)) {
        int type = sqlite3_column_int(st, 0), index = sqlite3_column_int(st, 1);
        int64_t count = sqlite3_column_int64(st, 2), first = sqlite3_column_int64(st, 3);
        int64_t last = sqlite3_column_int64(st, 4);
        int dev = device_index(d, host ? host : "?", pid, type, index,
                               type == 1 && index >= 0 && index < REPORT_MAX_DEVICES ? uuid[index]
                                                                                     : NULL);
        int seen = 0;
        for (int k = 0; k < nused; k++) seen |= used[k] == dev;
        if (!seen && nused < (int)(sizeof used / sizeof *used)) used[nused++] = dev;
        int64_t width = count > keep ? (last - first) / keep + 1 : 0;
        if (width > d->mem_width) d->mem_width = width;
        sqlite3_bind_int(ev, 1, type);
        sqlite3_bind_int(ev, 2, index);
        struct multi_mem cur = {0};
        int64_t bucket = -1;
        while (db_step(ev)) {
            struct multi_mem m = {start + sqlite3_column_int64(ev, 0),
                                  sqlite3_column_int64(ev, 1),
                                  sqlite3_column_int64(ev, 2),
                                  proc,
                                  dev,
                                  0};
            if (!width) {
                push_mem(d, m);
                continue;
            }
            int64_t b = (m.wall - start - first) / width;
            if (b == bucket) { /* the interval's highest totals, from its first reading on */
                if (m.allocated > cur.allocated) cur.allocated = m.allocated;
                if (m.reserved > cur.reserved) cur.reserved = m.reserved;
                continue;
            }
            if (bucket >= 0) push_mem(d, cur);
            cur = m;
            bucket = b;
        }
        if (bucket >= 0) push_mem(d, cur);
        sqlite3_reset(ev);
    }
    sqlite3_finalize(ev);
    sqlite3_finalize(st);
    /* When the process ended, what it held was given back. */
    for (int k = 0; k < nused; k++)
        push_mem(d, (struct multi_mem){start + dur, 0, 0, proc, used[k], 1});
    free(host);
}

void multi_free(struct multi_data *d)
{
    free(d->runs);
    free(d->iters);
    free(d->mem);
    free(d->devs);
    multi_kernels_free(d);
    memset(d, 0, sizeof *d);
}

/* ---- phases ------------------------------------------------------------------------------ */

enum {
    P_SHORT,
    P_LABEL,
    P_PROCS,
    P_ITERS,
    P_STEADY,
    P_TPUT,
    P_ITEMS,
    P_P50,
    P_P95,
    P_P99,
    P_KERNELS,
    P_GPU,
    P_PEAK,
    P_PEAK_PROC,
    P_RSRVD,
    P_CAPTURED,
    P_WARMUP
};

static void combined_iterations(struct multi_data *d, struct table *t, int id)
{
    struct ip_stats lat;
    ip_stats_init(&lat, 0);
    struct interval *v = malloc((d->niters + 1) * sizeof *v);
    if (!v) cli_fail("out of memory");
    size_t n = 0;
    int64_t items = 0;
    int batched = 1;
    for (size_t i = 0; i < d->niters; i++) {
        const struct multi_iter *it = &d->iters[i];
        if (it->phase != id || d->runs[it->proc].helper) continue; /* a worker's are not */
        if (it->latency) {
            ip_stats_add(&lat, it->dur);
            continue;
        }
        v[n++] = (struct interval){it->start, it->start + it->dur};
        if (it->batch < 0) batched = 0;
        items += it->batch;
    }
    if (n) {
        int64_t busy = union_length(v, n);
        ip_stats_median(&lat, NULL); /* sorts: the percentiles below need it */
        if (busy > 0) table_set_num(t, P_TPUT, (double)n * 1e9 / (double)busy);
        if (busy > 0 && batched) table_set_num(t, P_ITEMS, (double)items * 1e9 / (double)busy);
        table_set_int(t, P_P50, ip_stats_percentile(&lat, 50));
        table_set_int(t, P_P95, ip_stats_percentile(&lat, 95));
        table_set_int(t, P_P99, ip_stats_percentile(&lat, 99));
    }
    ip_stats_free(&lat);
    free(v);
}

static void combined_phase_row(struct multi_data *d, struct table *t, const struct phase_info *ph)
{
    char s[64];
    table_row(t);
    phase_short_label(ph, s, sizeof s);
    table_set_text(t, P_SHORT, s);
    table_set_text(t, P_LABEL, ph->label);
    int procs = 0, iters = 0, kernels = 0, memory = 0, reserved = 0;
    int64_t nk = 0, gpu = 0, peak = -1, rsrvd = 0, all = 0, steady = 0, captured = 0, warm = 0;
    const char *peak_proc = NULL;
    for (int r = 0; r < d->n; r++) {
        const struct run_phases *p = &d->runs[r].phases;
        for (int i = 0; i < p->n; i++) {
            const struct phase_info *x = &p->v[i];
            if (x->id != ph->id) continue;
            procs++;
            iters |= x->has_iterations;
            if (!d->runs[r].helper) /* as each run counts: warm-up + steady + captured */
                all += x->iterations, steady += (int64_t)x->nsteady, captured += x->captured_apart,
                    warm += x->warmup;
            if (x->has_kernels) kernels = 1, nk += x->kernels, gpu += x->gpu_time;
            if (x->mem_dev >= 0 && x->peak_alloc > peak)
                memory = 1, peak = x->peak_alloc, peak_proc = d->runs[r].label;
            if (x->has_memory && x->has_reserved && x->peak_reserved > rsrvd)
                reserved = 1, rsrvd = x->peak_reserved;
        }
    }
    table_set_int(t, P_PROCS, procs);
    if (iters) {
        table_set_int(t, P_ITERS, all), table_set_int(t, P_STEADY, steady);
        table_set_int(t, P_CAPTURED, captured);
        table_set_int(t, P_WARMUP, warm);
        combined_iterations(d, t, ph->id);
    }
    if (kernels) table_set_int(t, P_KERNELS, nk), table_set_int(t, P_GPU, gpu);
    if (memory) table_set_int(t, P_PEAK, peak), table_set_text(t, P_PEAK_PROC, peak_proc);
    if (reserved) table_set_int(t, P_RSRVD, rsrvd);
}

static struct table *combined_phases(struct multi_data *d)
{
    struct table *t = table_new("combined_phases", "All processes: phases (merged by label)");
    table_col(t, NULL, "Phase", COL_TEXT);
    table_col(t, "label", NULL, COL_TEXT);
    table_col(t, "processes", "Procs", COL_INT);
    /* Iters in text: the steady ones the latencies are over, as each process's Phases table
     * shows them (it showed every iteration, warm-up too: 479 beside a single report's 478). */
    table_col(t, "iterations", NULL, COL_INT);
    table_col(t, "steady_iterations", "Iters", COL_INT);
    table_col(t, "throughput_per_s", "Iter/s", COL_RATE);
    table_col(t, "items_per_s", NULL, COL_RATE);
    table_col(t, "latency_p50_ns", "p50", COL_NS);
    table_col(t, "latency_p95_ns", "p95", COL_NS);
    table_col(t, "latency_p99_ns", NULL, COL_NS);
    table_col(t, "kernels", "Kernels", COL_INT);
    table_col(t, "gpu_time_ns", "GPU time", COL_NS);
    table_col(t, "peak_allocated_max_bytes", "Max peak", COL_BYTES);
    table_col(t, "peak_allocated_max_process", NULL, COL_TEXT);
    table_col(t, "peak_reserved_max_bytes", NULL, COL_BYTES);
    /* Operators captured (sampled), apart from the latencies and from Iters. */
    table_col(t, "captured_iterations", NULL, COL_INT);
    table_col(t, "warmup_iterations", NULL, COL_INT); /* iterations = warm-up + steady + captured */
    /* Phase ids are fixed (1 + 3 * grad + autocast): the same label has the same id in every
     * database, and ids give the order the single-run report uses. */
    for (int id = 0; id < 64; id++)
        for (int r = 0; r < d->n; r++) {
            const struct run_phases *p = &d->runs[r].phases;
            int i = 0;
            while (i < p->n && p->v[i].id != id) i++;
            if (i == p->n) continue;
            combined_phase_row(d, t, &p->v[i]);
            break;
        }
    t->note = "Max peak: the largest of one process; percentiles from every iteration of the"
              " ranks (a helper's, a DataLoader worker's, are left out)";
    return t;
}

/* ---- memory ------------------------------------------------------------------------------ */

static int cmp_mem(const void *a, const void *b)
{
    const struct multi_mem *x = a, *y = b;
    if (x->dev != y->dev) return x->dev - y->dev;
    if (x->wall != y->wall) return (x->wall > y->wall) - (x->wall < y->wall);
    return y->end - x->end; /* a process that ends as another allocates held nothing then */
}

int64_t multi_mem_points(const struct multi_data *d)
{
    /* About 1 M readings in all (40 MB), at least 256 a device and process;
     * INFPROF_MULTI_MEM_POINTS sets it (docs/report.md: tests, and memory-bound machines). */
    const char *env = getenv("INFPROF_MULTI_MEM_POINTS");
    long long set = env ? atoll(env) : 0;
    if (set > 0) return set;
    int64_t k = 1000000 / (d->n > 0 ? d->n : 1) / 2;
    return k < 256 ? 256 : k;
}

/* combined_memory's columns, in the order it declares them (asserted there). */
enum {
    CM_HOST,
    CM_DEVICE,
    CM_UUID,
    CM_PROCESSES,
    CM_PEAK_ALLOCATED_BYTES,
    CM_PEAK_RESERVED_BYTES,
    CM_LARGEST_PROCESS_PEAK_BYTES,
    CM_NCOLS
};

static struct table *combined_memory(struct multi_data *d)
{
    struct table *t = table_new("combined_memory", "All processes: tensor memory per device");
    table_col(t, "host", "Host", COL_NAME);
    table_col(t, "device", "Device", COL_TEXT);
    table_col(t, "uuid", NULL, COL_TEXT);
    table_col(t, "processes", "Procs", COL_INT);
    table_col(t, "peak_allocated_bytes", "Peak alloc", COL_BYTES);
    table_col(t, "peak_reserved_bytes", "Peak rsrvd", COL_BYTES);
    table_col(t, "largest_process_peak_bytes", "Largest process", COL_BYTES);
    assert(t->ncols == CM_NCOLS);
    if (d->nmem) qsort(d->mem, d->nmem, sizeof *d->mem, cmp_mem); /* none: mem may be NULL */
    /* Per process, what its allocator holds now on the device being swept, and whether it
     * used the device at all. */
    int64_t *alloc = calloc((size_t)d->n * 2 + 1, sizeof *alloc);
    int *used = calloc((size_t)d->n + 1, sizeof *used);
    if (!alloc || !used) cli_fail("out of memory");
    int64_t *res = alloc + d->n;
    for (size_t i = 0; i < d->nmem;) {
        int dev = d->mem[i].dev, procs = 0;
        int64_t sum_a = 0, sum_r = 0, peak_a = 0, peak_r = 0, largest = 0;
        memset(alloc, 0, (size_t)d->n * 2 * sizeof *alloc);
        memset(used, 0, (size_t)d->n * sizeof *used);
        for (; i < d->nmem && d->mem[i].dev == dev; i++) {
            const struct multi_mem *m = &d->mem[i];
            used[m->proc] = 1;
            sum_a += m->allocated - alloc[m->proc];
            sum_r += m->reserved - res[m->proc];
            alloc[m->proc] = m->allocated;
            res[m->proc] = m->reserved;
            if (sum_a > peak_a) peak_a = sum_a;
            if (sum_r > peak_r) peak_r = sum_r;
            if (m->allocated > largest) largest = m->allocated;
        }
        for (int p = 0; p < d->n; p++) procs += used[p];
        const struct multi_dev *v = &d->devs[dev];
        table_row(t);
        table_set_text(t, CM_HOST, v->host);
        table_set_text(t, CM_DEVICE, v->name);
        if (v->uuid[0]) table_set_text(t, CM_UUID, v->uuid);
        table_set_int(t, CM_PROCESSES, procs);
        table_set_int(t, CM_PEAK_ALLOCATED_BYTES, peak_a);
        if (strcmp(v->name, "cpu"))
            table_set_int(t, CM_PEAK_RESERVED_BYTES, peak_r); /* no reserve on the CPU */
        table_set_int(t, CM_LARGEST_PROCESS_PEAK_BYTES, largest);
    }
    free(alloc);
    free(used);
    char width[32];
    fmt_ns(width, sizeof width, (double)d->mem_width);
    t->note = d->mem_width > 0
                  ? pool_printf("Peak: of the sum over the processes that share the device (one"
                                " host; a GPU by its UUID); a process with over %lld changes on"
                                " a device kept its highest totals per interval (at most %s):"
                                " the sums are upper bounds within that, Largest process exact",
                                (long long)multi_mem_points(d), width)
                  : "Peak: of the sum over the processes that share the device (one host; a GPU"
                    " by its UUID)";
    return t;
}

int multi_combined(struct multi_data *d, const struct report_opts *o, const char *phase,
                   struct table **t)
{
    int k = 0;
    t[k++] = combined_phases(d);
    t[k++] = multi_kernels(d, o, phase);
    t[k++] = combined_memory(d);
    t[2]->optional = 1;
    return k;
}

/*
 * timeline.c: the run over time (timeline.h), bucketed so that a picture of an hour-long server
 * run holds as many marks as one of a second: tensor memory from tensor_memory (a bucket without
 * a report keeps the level the last one left), the kernels' time from kernel_rows, power and
 * clocks from the energy readings (energy.c's, between consecutive readings), and the CPU cores
 * the program kept busy from cpu_samples.
 */
#include "timeline.h"
#include "kernels.h"
#include "operators.h"
#include "operators_iters.h"
#include "memrows.h"
#include "kernrows.h"
#include "cuda_run.h"
#include "cudnn_run.h"
#include "energy.h"
#include "tails.h"
#include "requests.h"
#include "runfacts.h"
#include "windows.h"

#include <assert.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static int bucket_of(const struct run_timeline *r, int64_t t)
{
    int64_t b = t / r->bucket_ns;
    return b < 0 ? 0 : b >= TIMELINE_BUCKETS ? TIMELINE_BUCKETS - 1 : (int)b;
}

/* Each device's allocated and reserved totals: per bucket the highest, else the level the last
 * report before it left. Read unsorted (a long run has millions of reports: no sort): each
 * bucket keeps its highest and its latest report. */
static void memory_of(sqlite3 *db, const struct run_phases *p, struct run_timeline *r)
{
    const struct mem_rows *m = mem_rows_get(db, p);
    static int64_t last_ts[TIMELINE_DEVICES][TIMELINE_BUCKETS];
    static double last_a[TIMELINE_DEVICES][TIMELINE_BUCKETS],
        last_r[TIMELINE_DEVICES][TIMELINE_BUCKETS];
    int seen[TIMELINE_DEVICES][TIMELINE_BUCKETS];
    memset(seen, 0, sizeof seen);
    int type[TIMELINE_DEVICES], index[TIMELINE_DEVICES];
    for (size_t i = 0; i < m->n; i++) {
        const struct mem_row *x = &m->v[i];
        int ty = x->type, ix = x->index, k = 0;
        while (k < r->nmem && (type[k] != ty || index[k] != ix)) k++;
        if (k == r->nmem) {
            if (k == TIMELINE_DEVICES) continue;
            type[k] = ty, index[k] = ix, r->nmem++;
            device_name(ty, ix, r->mem[k].device, sizeof r->mem[k].device);
            for (int b = 0; b < TIMELINE_BUCKETS; b++) r->mem[k].v2[b] = -1;
        }
        struct timeline_series *s = &r->mem[k];
        int64_t ts = x->ts;
        int b = bucket_of(r, ts);
        double a = (double)x->allocated;
        double rv = (double)x->reserved; /* -1: NULL */
        if (!seen[k][b] || a > s->v[b]) s->v[b] = a;
        if (rv > s->v2[b]) s->v2[b] = rv;
        if (!seen[k][b] || ts >= last_ts[k][b])
            last_ts[k][b] = ts, last_a[k][b] = a, last_r[k][b] = rv;
        seen[k][b] = 1;
    }
    for (int k = 0; k < r->nmem; k++) {
        struct timeline_series *s = &r->mem[k];
        double last = 0, rlast = -1;
        int any = 0;
        for (int b = 0; b < TIMELINE_BUCKETS && (int64_t)b * r->bucket_ns <= r->end_ns; b++) {
            if (!seen[k][b] && !any) continue; /* before its first report: nothing known */
            /* Compacted in place: the n-th kept bucket is never after bucket b. */
            s->t[s->n] = (int64_t)b * r->bucket_ns;
            s->v[s->n] = seen[k][b] ? s->v[b] : last;
            s->v2[s->n] = seen[k][b] ? s->v2[b] : rlast;
            if (seen[k][b]) any = 1, last = last_a[k][b], rlast = last_r[k][b];
            s->n++;
        }
    }
}

/* The kernels' time in each bucket (a kernel over two buckets counts in both, split). */
/* A kernel of [s, e) into the buckets it overlaps. */
static void busy_add(struct run_timeline *r, double *busy, int64_t s, int64_t e)
{
    for (int b = bucket_of(r, s); b < TIMELINE_BUCKETS && (int64_t)b * r->bucket_ns < e; b++) {
        int64_t lo = (int64_t)b * r->bucket_ns, hi = lo + r->bucket_ns;
        busy[b] += (double)((e < hi ? e : hi) - (s > lo ? s : lo));
    }
}

static void gpu_of(sqlite3 *db, const struct run_phases *p, struct run_timeline *r)
{
    double busy[TIMELINE_BUCKETS] = {0};
    if (r->fold_ns) { /* folded by the writer (collectors/cupti_fold.c): buckets of fold_ns */
        sqlite3_stmt *st = db_prepare(db, "SELECT bucket, ns FROM kernel_time");
        while (db_step(st)) {
            int64_t b = sqlite3_column_int64(st, 0) * r->fold_ns / r->bucket_ns;
            r->gpu = 1;
            if (b >= 0 && b < TIMELINE_BUCKETS) busy[b] += (double)sqlite3_column_int64(st, 1);
        }
        sqlite3_finalize(st);
    } else if (*run_lazy_slot(p, &run_model_kern_rows)) {
        /* the kernels are in memory (a run with iterations): read there */
        const struct kern_rows *kr = *run_lazy_slot(p, &run_model_kern_rows);
        for (size_t j = 0; j < kr->n; j++)
            r->gpu = 1, busy_add(r, busy, kr->v[j].start, kr->v[j].start + kr->v[j].dur);
    } else if (db_has_table(db, "kernel_rows")) { /* else one pass, nothing kept */
        sqlite3_stmt *st = db_prepare(db, "SELECT start, dur FROM kernel_rows");
        while (db_step(st)) {
            int64_t s = sqlite3_column_int64(st, 0);
            r->gpu = 1, busy_add(r, busy, s, s + sqlite3_column_int64(st, 1));
        }
        sqlite3_finalize(st);
    }
    struct timeline_series *g = &r->gpu_busy;
    snprintf(g->device, sizeof g->device, "gpu");
    for (int b = 0; r->gpu && b < TIMELINE_BUCKETS && (int64_t)b * r->bucket_ns <= r->end_ns; b++) {
        g->t[g->n] = (int64_t)b * r->bucket_ns;
        g->v[g->n] = fmin(100, 100 * busy[b] / (double)r->bucket_ns);
        g->v2[g->n++] = -1;
    }
}

/* Each device's power between its energy points (energy.c: where its counter moved, held to
 * its limit), the highest in each bucket. */
static void power_of(sqlite3 *db, const struct run_phases *p, struct run_timeline *r)
{
    const struct energy_run *e = run_energy(db, p);
    for (int k = 0; k < e->n && r->npower < TIMELINE_DEVICES; k++) {
        const struct energy_device *d = &e->d[k];
        if (!d->has_energy || d->n < 2) continue;
        struct timeline_series *s = &r->power[r->npower++];
        snprintf(s->device, sizeof s->device, "%s", d->label);
        int last = -1;
        for (size_t i = 1; i < d->n; i++) {
            double w = d->w[i];
            if (w < 0) continue;
            assert(energy_power_possible(d, w));
            int b = bucket_of(r, d->t[i]);
            if (b != last) {
                if (s->n == TIMELINE_BUCKETS) break;
                s->t[s->n] = (int64_t)b * r->bucket_ns, s->v[s->n] = w, s->v2[s->n] = -1;
                s->n++, last = b;
            } else if (w > s->v[s->n - 1]) {
                s->v[s->n - 1] = w;
            }
        }
    }
}

/* Each device's clock: a reading holds until the next, weighted by time within each bucket. */
static void clock_of(sqlite3 *db, const struct run_phases *p, struct run_timeline *r)
{
    const struct energy_run *e = run_energy(db, p);
    for (int k = 0; k < e->n && r->nclock < TIMELINE_DEVICES; k++) {
        const struct energy_device *d = &e->d[k];
        if (!d->has_sm || d->n < 2) continue;
        struct timeline_series *s = &r->clock[r->nclock++];
        snprintf(s->device, sizeof s->device, "%s", d->label);
        double sum = 0, len = 0;
        int cur = -1;
        for (size_t i = 0; i + 1 < d->n; i++) {
            if (d->sm[i] < 0 || d->t[i + 1] <= d->t[i]) continue;
            int b = bucket_of(r, d->t[i]);
            if (b != cur && len > 0 && s->n < TIMELINE_BUCKETS) {
                s->t[s->n] = (int64_t)cur * r->bucket_ns, s->v[s->n] = sum / len;
                s->v2[s->n++] = -1, sum = 0, len = 0;
            }
            cur = b;
            double dt = (double)(d->t[i + 1] - d->t[i]);
            sum += dt * (double)d->sm[i], len += dt;
        }
        if (len > 0 && s->n < TIMELINE_BUCKETS)
            s->t[s->n] = (int64_t)cur * r->bucket_ns, s->v[s->n] = sum / len, s->v2[s->n++] = -1;
    }
}

/* Cores busy a reading may show: at most the CPUs online, when known (meta cpus_online, from
 * 2026-11-28). Up to CPU_JITTER over them is the reading's timing (its clocks are read after
 * its time stamp, and the writer may be preempted between: 2.0008 cores on 2 CPUs here), held
 * to the bound; more is no reading. */
#define CPU_JITTER   1.05
#define CPU_SHORT_NS 10000000
static int cpu_possible(const struct run_timeline *r, double cores)
{
    return cores >= 0 && (r->cpus_online <= 0 || cores <= r->cpus_online * CPU_JITTER);
}

/* The program's CPU cores busy between consecutive readings of cpu_samples (its CPU time, ours
 * taken out, over the wall time), each interval in the bucket where it ends; a bucket with
 * several is their total over their total length. */
static void cpu_of(sqlite3 *db, struct run_timeline *r)
{
    int64_t online = 0;
    if (db_meta_int(db, "cpus_online", &online) && online > 0) r->cpus_online = (double)online;
    if (db_meta_int(db, "cpus_allowed", &online) && online > 0) r->cpus_allowed = (double)online;
    if (db_meta_int(db, "cpu_quota_milli", &online) && online > 0)
        r->cpu_quota = (double)online / 1000.0;
    if (!db_has_table(db, "cpu_samples")) return;
    static double cpu[TIMELINE_BUCKETS], ours[TIMELINE_BUCKETS], wall[TIMELINE_BUCKETS],
        thr[TIMELINE_BUCKETS];
    memset(cpu, 0, sizeof cpu), memset(ours, 0, sizeof ours), memset(wall, 0, sizeof wall);
    for (int b = 0; b < TIMELINE_BUCKETS; b++) thr[b] = -1;
    /* The quota's throttled time (from 2026-11-30; NULL where none was read). */
    int throttled = db_has_column(db, "cpu_samples", "throttled_ns");
    sqlite3_stmt *st = db_prepare(db, throttled ? "SELECT t, cpu_ns, ours_ns, throttled_ns FROM"
                                                  " cpu_samples WHERE cpu_ns IS NOT NULL ORDER BY t"
                                                : "SELECT t, cpu_ns, ours_ns, NULL FROM cpu_samples"
                                                  " WHERE cpu_ns IS NOT NULL ORDER BY t");
    int64_t t0 = -1, c0 = 0, o0 = 0, h0 = -1;
    while (db_step(st)) {
        int64_t t = sqlite3_column_int64(st, 0), c = sqlite3_column_int64(st, 1);
        int64_t o = sqlite3_column_type(st, 2) == SQLITE_NULL ? o0 : sqlite3_column_int64(st, 2);
        int64_t h = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 3);
        /* An interval under CPU_SHORT_NS (the reading at the finish, soon after a periodic one)
         * is too short to divide by: it goes into the next one (the start stays). */
        if (t0 >= 0 && t > t0 && t - t0 < CPU_SHORT_NS) continue;
        if (t0 >= 0 && t > t0 && c >= c0) {
            /* Ours is the writer thread's clock: a new writer thread (a fork's child, a restart)
             * starts it again from 0, counted from there (an H200 run read 32 cores on a 16-core
             * host when its 4.4 s were taken back). */
            int64_t dc = c - c0, d_ours = o >= o0 ? o - o0 : o;
            if (r->cpus_online > 0 && dc > (t - t0) * r->cpus_online &&
                cpu_possible(r, (double)dc / (double)(t - t0)))
                dc = (int64_t)((double)(t - t0) * r->cpus_online); /* its timing: held */
            if (d_ours > dc) d_ours = dc;
            if (!cpu_possible(r, (double)dc / (double)(t - t0))) {
                r->cpu_out_of_bounds++;
            } else {
                int b = bucket_of(r, t);
                if (h >= 0 && h0 >= 0 && h >= h0) thr[b] = fmax(thr[b], 0) + (double)(h - h0);
                wall[b] += (double)(t - t0), ours[b] += (double)d_ours;
                r->ours_cpu_ns += (double)d_ours;
                cpu[b] += (double)(dc - d_ours);
                r->cpu = 1;
            }
        }
        t0 = t, c0 = c, o0 = o, h0 = h;
    }
    sqlite3_finalize(st);
    struct timeline_series *s = &r->cpu_busy;
    snprintf(s->device, sizeof s->device, "cpu");
    for (int b = 0; r->cpu && b < TIMELINE_BUCKETS; b++) {
        if (wall[b] <= 0) continue;
        s->t[s->n] = (int64_t)b * r->bucket_ns;
        s->v[s->n] = fmax(0, cpu[b] / wall[b]), s->v2[s->n] = fmax(0, ours[b] / wall[b]);
        r->cpu_throttled[s->n] = thr[b] >= 0 ? thr[b] / wall[b] : -1;
        assert(r->cpus_online <= 0 || s->v[s->n] + s->v2[s->n] <= r->cpus_online * 1.000001);
        s->n++;
    }
}

const struct run_model run_model_timeline = {"timeline", free, 0};

const struct run_timeline *run_timeline(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_timeline);
    if (*slot) return *slot;
    struct run_timeline *r = calloc(1, sizeof *r);
    if (!r) cli_fail("out of memory");
    *slot = r;
    for (int i = 0; i < p->n; i++)
        if (p->v[i].end > r->end_ns) r->end_ns = p->v[i].end;
    int64_t duration = 0;
    if (db_meta_int(db, "duration_ns", &duration) && duration > r->end_ns) r->end_ns = duration;
    if (r->end_ns <= 0) return r;
    r->bucket_ns = r->end_ns / TIMELINE_BUCKETS + 1;
    /* The kernels' time folded by the writer: buckets of whole multiples of its width, so that
     * each of ours is the exact sum of its. */
    if (db_has_table(db, "kernel_time") && db_meta_int(db, "kernel_time.width_ns", &r->fold_ns) &&
        r->fold_ns > 0)
        r->bucket_ns = (r->bucket_ns + r->fold_ns - 1) / r->fold_ns * r->fold_ns;
    else
        r->fold_ns = 0;
    memory_of(db, p, r);
    gpu_of(db, p, r);
    power_of(db, p, r);
    clock_of(db, p, r);
    cpu_of(db, r);
    return r;
}

void run_bounds(struct sqlite3 *db, const struct run_phases *p, struct run_bounds *out)
{
    memset(out, 0, sizeof *out);
    const struct energy_run *e = run_energy(db, p);
    for (int k = 0; k < e->n; k++) {
        out->power += (int64_t)e->d[k].out_of_bounds;
        if (e->d[k].limit_w > out->power_limit_w) out->power_limit_w = e->d[k].limit_w;
    }
    /* The CPU's readings by the timeline's own rule, without the rest of the timeline. */
    struct run_timeline *r = *run_lazy_slot(p, &run_model_timeline);
    struct run_timeline *own = r ? NULL : calloc(1, sizeof *own);
    if (!r && !own) cli_fail("out of memory");
    if (!r) {
        own->end_ns = 1, own->bucket_ns = 1; /* every reading in the last bucket: counted only */
        cpu_of(db, own);
    }
    const struct run_timeline *c = r ? r : own;
    out->cpu = c->cpu_out_of_bounds;
    out->cpus_online = c->cpus_online;
    out->ours_cpu_ns = c->ours_cpu_ns;
    free(own);
    out->memory = mem_rows_get(db, p)->out_of_bounds;
}

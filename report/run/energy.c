/*
 * energy.c: energy, power and clocks over time intervals (energy.h), from the readings of the
 * energy collector. The counter is cumulative, so the energy between two moments is exact at
 * its energy points and interpolated linearly between them (readings are taken at every phase
 * change: where the counter moves at least as often as it is read, as RAPL's does, a phase's
 * edges are points, not interpolations). Without a counter (pre-Volta GPU, no
 * RAPL) the energy is the power readings integrated, each holding until the next (a reading at a
 * phase change is the new phase's). Clocks and reasons hold from one reading to the next.
 *
 * A counter read more often than it moves (NVML's moves about every 100 ms on an H100 or H200;
 * it is read every 20 ms and at every phase change) repeats its last value: such a reading is
 * no energy point (its energy is unknown, not unchanged), or two readings 20 ms apart around an
 * update would show five times the power (an H200 run drew 8,278 W for a 700 W GPU). The energy
 * points are where the counter was first seen moved; between two of them, energy is
 * interpolated and the power is their difference over their distance. Power above the device's
 * limit (NVML's enforced limit, kept in energy_gpus from 2026-11-28) is no reading: dropped and
 * counted (out_of_bounds), never drawn.
 */
#include "energy.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void meta_copy(struct sqlite3 *db, const char *key, char *out, size_t n)
{
    char *v = db_meta_text(db, key);
    snprintf(out, n, "%s", v ? v : "");
    free(v);
}

int energy_power_possible(const struct energy_device *d, double watts)
{
    return watts >= 0 && (d->limit_w <= 0 || watts <= d->limit_w);
}

/* The counter's readings that repeat the last value stop being energy points (above): the
 * first reading too, when the next repeats it (its update came before it, unseen); the last
 * ones after the last move are dropped (their energy is unknown). A counter that never moved
 * keeps every reading (no power drawn). */
static void counter_points(struct energy_device *d)
{
    long first = -1, moves = 0;
    double last = -1;
    for (size_t i = 0; i < d->n; i++) { /* does it move at all? */
        if (d->e[i] < 0) continue;
        if (first < 0)
            first = (long)i;
        else if (d->e[i] != last)
            moves++;
        last = d->e[i];
    }
    if (!moves) return;
    last = d->e[first];
    for (size_t i = (size_t)first + 1, moved = 0; i < d->n; i++) {
        if (d->e[i] < 0) continue;
        if (d->e[i] == last) {
            d->e[i] = -1, d->repeats++;
            continue;
        }
        if (!moved && i > (size_t)first + 1 && d->e[first + 1] < 0)
            d->e[first] = -1, d->repeats++; /* repeated right after: no point either */
        moved = 1, last = d->e[i];
    }
}

/* Power between consecutive energy points, and the power readings, held to the limit. */
static void power_points(struct energy_device *d)
{
    d->w = malloc((d->n ? d->n : 1) * sizeof *d->w);
    if (!d->w) cli_fail("out of memory");
    long prev = -1;
    for (size_t i = 0; i < d->n; i++) {
        d->w[i] = -1;
        if (d->p[i] >= 0 && !energy_power_possible(d, (double)d->p[i] / 1000))
            d->p[i] = -1, d->out_of_bounds++;
        if (d->e[i] < 0) continue;
        if (prev >= 0 && d->t[i] > d->t[prev]) {
            double w = (d->e[i] - d->e[prev]) / (double)(d->t[i] - d->t[prev]) * 1e6;
            if (energy_power_possible(d, w))
                d->w[i] = w;
            else
                d->out_of_bounds++;
        }
        prev = (long)i;
    }
}

static void load_device(struct sqlite3 *db, struct energy_device *d)
{
    sqlite3_stmt *st = db_prepare(db, "SELECT t, energy_mj, power_mw, sm_clock, reasons FROM"
                                      " energy_samples WHERE gpu = ? ORDER BY t");
    if (!st) return;
    sqlite3_bind_int(st, 1, d->gpu);
    size_t cap = 0;
    while (db_step(st) == 1) {
        if (d->n == cap) {
            cap = cap ? cap * 2 : 256;
            d->t = realloc(d->t, cap * sizeof *d->t);
            d->e = realloc(d->e, cap * sizeof *d->e);
            d->p = realloc(d->p, cap * sizeof *d->p);
            d->sm = realloc(d->sm, cap * sizeof *d->sm);
            d->reasons = realloc(d->reasons, cap * sizeof *d->reasons);
            if (!d->t || !d->e || !d->p || !d->sm || !d->reasons) cli_fail("out of memory");
        }
        size_t i = d->n++;
        d->t[i] = sqlite3_column_int64(st, 0);
        int null_e = sqlite3_column_type(st, 1) == SQLITE_NULL;
        d->e[i] = null_e ? -1 : (double)sqlite3_column_int64(st, 1);
        d->p[i] = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
        d->sm[i] = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 3);
        d->reasons[i] =
            sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4);
        if (!null_e) d->has_energy = 1;
        if (d->sm[i] >= 0) d->has_sm = 1;
        if (d->reasons[i] >= 0) d->has_reasons = 1;
    }
    sqlite3_finalize(st);
    /* No counter: the power readings integrated (mW x ns = 1e-9 mJ). */
    int has_power = 0;
    for (size_t i = 0; i < d->n; i++) has_power |= d->p[i] >= 0;
    if (!d->has_energy && has_power && d->n) {
        d->from_power = 1;
        double acc = 0;
        d->e[0] = 0;
        int64_t held = -1;
        for (size_t i = 1; i < d->n; i++) {
            if (d->p[i - 1] >= 0) held = d->p[i - 1];
            if (held >= 0) acc += (double)held * (double)(d->t[i] - d->t[i - 1]) / 1e9;
            d->e[i] = acc;
        }
        d->has_energy = 1;
    } else if (d->has_energy) {
        counter_points(d);
    }
    power_points(d);
}

void energy_load(struct sqlite3 *db, struct energy_run *r)
{
    memset(r, 0, sizeof *r);
    if (!db_has_table(db, "energy_samples") || !db_has_table(db, "energy_gpus")) return;
    r->present = 1;
    meta_copy(db, "energy.gpu", r->gpu_status, sizeof r->gpu_status);
    meta_copy(db, "energy.cpu", r->cpu_status, sizeof r->cpu_status);
    /* The power limit: from 2026-11-28 (older databases: unknown, nothing held to it). */
    sqlite3_stmt *st = db_prepare(db, db_has_column(db, "energy_gpus", "power_limit_mw")
                                          ? "SELECT gpu, cuda_device, name, status, power_limit_mw"
                                            " FROM energy_gpus WHERE cuda_device >= 0 ORDER BY"
                                            " cuda_device"
                                          : "SELECT gpu, cuda_device, name, status, NULL FROM"
                                            " energy_gpus WHERE cuda_device >= 0 ORDER BY"
                                            " cuda_device");
    while (st && db_step(st) == 1 && r->n < ENERGY_MAX_DEVICES - 1) {
        struct energy_device *d = &r->d[r->n++];
        d->gpu = sqlite3_column_int(st, 0);
        d->cuda = sqlite3_column_int(st, 1);
        snprintf(d->label, sizeof d->label, "cuda:%d", d->cuda);
        snprintf(d->name, sizeof d->name, "%s", (const char *)sqlite3_column_text(st, 2) ?: "");
        snprintf(d->status, sizeof d->status, "%s", (const char *)sqlite3_column_text(st, 3) ?: "");
        d->limit_w = (double)sqlite3_column_int64(st, 4) / 1000; /* NULL: 0, unknown */
        load_device(db, d);
    }
    if (st) sqlite3_finalize(st);
    struct energy_device *c = &r->d[r->n];
    memset(c, 0, sizeof *c);
    c->gpu = -1, c->cuda = -1;
    snprintf(c->label, sizeof c->label, "cpu");
    load_device(db, c);
    if (c->n && (c->has_energy || c->has_sm))
        r->n++;
    else
        energy_free(&(struct energy_run){.n = 1, .d[0] = *c});
}

void energy_free(struct energy_run *r)
{
    for (int i = 0; i < r->n; i++) {
        struct energy_device *d = &r->d[i];
        free(d->t), free(d->e), free(d->p), free(d->sm), free(d->reasons), free(d->w);
        d->t = NULL, d->e = d->w = NULL, d->p = d->sm = d->reasons = NULL;
        d->n = 0;
    }
}

/* The last reading at or before t, or -1. */
static long at_or_before(const struct energy_device *d, int64_t t)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->t[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

/* Cumulative energy at t (mJ), interpolated; -1 outside the readings or without energy. */
static double energy_at(const struct energy_device *d, int64_t t)
{
    long i = at_or_before(d, t);
    if (i < 0 || (size_t)i >= d->n) return -1;
    /* Skip readings without a value (a failed read) on either side. */
    long a = i;
    while (a >= 0 && d->e[a] < 0) a--;
    size_t b = (size_t)i + (d->t[i] == t ? 0 : 1);
    while (b < d->n && d->e[b] < 0) b++;
    if (a < 0 || b >= d->n) return -1;
    if (d->t[b] == d->t[a]) return d->e[a];
    return d->e[a] + (d->e[b] - d->e[a]) * (double)(t - d->t[a]) / (double)(d->t[b] - d->t[a]);
}

/* The first and last readings with an energy value (any reading without a counter), or 0. */
static int readings_span(const struct energy_device *d, int64_t *first, int64_t *last)
{
    size_t a = 0, b = d->n;
    while (a < d->n && d->has_energy && d->e[a] < 0) a++;
    while (b > a && d->has_energy && d->e[b - 1] < 0) b--;
    if (a >= b) return 0;
    *first = d->t[a], *last = d->t[b - 1];
    return 1;
}

void energy_over(const struct energy_device *d, const struct interval *v, size_t n, int whole,
                 struct energy_figures *f)
{
    memset(f, 0, sizeof *f);
    f->sm_mhz = f->throttle_share = -1;
    int64_t first, last;
    if (!readings_span(d, &first, &last)) return;
    f->ok = 1;
    double sm_ns = 0, sm_sum = 0, r_ns = 0, r_on = 0, held_peak = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t s = v[k].start, e = v[k].end;
        if (e <= s) continue;
        if (s < first || e > last) {
            f->unread++;
            int64_t cs = s < first ? first : s, ce = e > last ? last : e;
            if (whole || ce <= cs) {
                f->unread_s += (double)(e - s) / 1e9;
                continue;
            }
            f->unread_s += (double)((e - s) - (ce - cs)) / 1e9;
            s = cs, e = ce;
        }
        f->used++;
        f->seconds += (double)(e - s) / 1e9;
        double es = energy_at(d, s), ee = energy_at(d, e);
        if (es < 0 || ee < 0)
            f->ok = 0;
        else
            f->joules += (ee - es) / 1000;
        /* Held values over [s, e]: from the reading at or before s, then each one inside. */
        long i = at_or_before(d, s);
        if (i < 0) i = 0;
        for (size_t j = (size_t)i; j < d->n && d->t[j] < e; j++) {
            int64_t from = d->t[j] > s ? d->t[j] : s;
            int64_t to = j + 1 < d->n && d->t[j + 1] < e ? d->t[j + 1] : e;
            if (to <= from && d->t[j] < s) continue;
            double len = (double)(to - from);
            if (d->p[j] >= 0 && d->t[j] >= s && d->p[j] / 1000.0 > f->peak_w)
                f->peak_w = (double)d->p[j] / 1000.0;
            else if (d->p[j] >= 0 && d->t[j] < s)
                held_peak = held_peak > d->p[j] / 1000.0 ? held_peak : d->p[j] / 1000.0;
            if (d->sm[j] >= 0) sm_ns += len, sm_sum += len * (double)d->sm[j];
            if (d->reasons[j] >= 0) {
                r_ns += len;
                if (d->reasons[j] & ENERGY_THROTTLE_MASK) r_on += len;
                f->reasons |= d->reasons[j];
            }
        }
    }
    if (!f->used) f->ok = 0;
    if (f->peak_w == 0) f->peak_w = held_peak; /* no reading inside: the one in force */
    if (f->seconds > 0 && f->ok) f->avg_w = f->joules / f->seconds;
    if (sm_ns > 0) f->sm_mhz = sm_sum / sm_ns;
    if (r_ns > 0) f->throttle_share = r_on / r_ns;
}

size_t energy_phase_intervals(struct sqlite3 *db, int phase, struct interval **out)
{
    *out = NULL;
    sqlite3_stmt *st = db_prepare(db, "SELECT start, COALESCE(end, (SELECT max(t) FROM"
                                      " energy_samples)) FROM phase_spans WHERE phase = ?");
    if (!st) return 0;
    sqlite3_bind_int(st, 1, phase);
    size_t n = 0, cap = 0;
    struct interval *v = NULL;
    while (db_step(st) == 1) {
        if (n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v)))
            cli_fail("out of memory");
        v[n].start = sqlite3_column_int64(st, 0);
        v[n].end = sqlite3_column_int64(st, 1);
        if (v[n].end > v[n].start) n++;
    }
    sqlite3_finalize(st);
    if (!n) return free(v), 0;
    *out = v;
    return intervals_merge(v, n); /* spans of several threads overlap */
}

size_t energy_iteration_intervals(const struct phase_info *ph, struct interval **out)
{
    *out = NULL;
    if (!ph->nsteady || !ph->steady_start) return 0;
    struct interval *v = malloc(ph->nsteady * sizeof *v);
    if (!v) cli_fail("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < ph->nsteady; i++) {
        struct interval iv = {ph->steady_start[i], ph->steady_start[i] + ph->steady[i]};
        if (n && iv.start < v[n - 1].end) iv.start = v[n - 1].end; /* overlap counted once */
        if (iv.end > iv.start) v[n++] = iv;
    }
    *out = v;
    return n;
}

void energy_phase_figures(struct sqlite3 *db, const struct phase_info *ph,
                          const struct energy_device *d, struct energy_phase *out)
{
    memset(out, 0, sizeof *out);
    out->j_per_iter = out->mj_per_item = out->items_per_j = -1;
    struct interval *v;
    size_t n = energy_phase_intervals(db, ph->id, &v);
    energy_over(d, v, n, 0, &out->span);
    free(v);
    n = energy_iteration_intervals(ph, &v);
    energy_over(d, v, n, 1, &out->iter);
    free(v);
    /* Over the iterations the readings cover (all of them but where the phase began before the
     * GPU's first reading); items in the same proportion (the phase's mean batch). */
    out->iterations = (int64_t)(ph->nsteady - out->iter.unread);
    out->items =
        ph->nsteady
            ? (int64_t)((double)ph->items * (double)out->iterations / (double)ph->nsteady + 0.5)
            : 0;
    if (out->iter.ok && out->iterations > 0 && d->has_energy) {
        out->j_per_iter = out->iter.joules / (double)out->iterations;
        if (out->items > 0) {
            out->mj_per_item = out->iter.joules * 1000 / (double)out->items;
            if (out->iter.joules > 0) out->items_per_j = (double)out->items / out->iter.joules;
        }
    }
}

void energy_series_figures(struct sqlite3 *db, const struct run_phases *p,
                           const struct series_info *s, double *j_per_iter, double *mj_per_item,
                           const char **device)
{
    *j_per_iter = *mj_per_item = -1;
    *device = "";
    const struct energy_run *r = run_energy(db, p);
    const struct energy_device *d = NULL;
    for (int k = 0; k < r->n && !d; k++)
        if (r->d[k].gpu >= 0 && r->d[k].cuda >= 0 && r->d[k].has_energy) d = &r->d[k];
    for (int k = 0; k < r->n && !d; k++)
        if (r->d[k].gpu < 0 && r->d[k].has_energy) d = &r->d[k];
    if (!d || !s->nsteady) return;
    struct interval *v = calloc(s->nits + 1, sizeof *v);
    if (!v) cli_fail("out of memory");
    size_t n = 0;
    for (size_t k = 0; k < s->nits; k++) {
        if (!s->its[k].steady) continue;
        struct interval iv = {s->its[k].start, s->its[k].end};
        if (n && iv.start < v[n - 1].end) iv.start = v[n - 1].end; /* overlap counted once */
        if (iv.end > iv.start) v[n++] = iv;
    }
    struct energy_figures f = {0};
    if (n) energy_over(d, v, n, 1, &f);
    free(v);
    if (!f.ok || !f.used) return;
    *device = d->label;
    *j_per_iter = f.joules / (double)(s->nsteady - f.unread);
    if (s->items > 0) *mj_per_item = *j_per_iter * 1000 * (double)s->nsteady / (double)s->items;
}

void energy_reason_names(int64_t mask, char *out, size_t n)
{
    static const struct {
        int64_t bit;
        const char *name;
    } names[] = {{0x4, "SW power cap"},
                 {0x8, "HW slowdown"},
                 {0x20, "SW thermal"},
                 {0x40, "HW thermal"},
                 {0x80, "power brake"}};
    size_t o = 0;
    out[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && o < n; i++)
        if (mask & names[i].bit)
            o += (size_t)snprintf(out + o, n - o, "%s%s", o ? ", " : "", names[i].name);
}

static void energy_drop(void *r)
{
    energy_free(r);
    free(r);
}

const struct run_model run_model_energy = {"energy", energy_drop, 0};

const struct energy_run *run_energy(struct sqlite3 *db, const struct run_phases *p)
{
    void **slot = run_lazy_slot(p, &run_model_energy);
    if (!*slot) {
        struct energy_run *r = malloc(sizeof *r);
        if (!r) cli_fail("out of memory");
        energy_load(db, r);
        *slot = r;
    }
    return *slot;
}

size_t energy_clock_note(struct sqlite3 *db, const struct run_phases *p,
                         const struct phase_info *base, char *out, size_t n)
{
    out[0] = 0;
    const struct energy_run *r = run_energy(db, p);
    size_t o = 0;
    for (int k = 0; k < r->n; k++) {
        const struct energy_device *d = &r->d[k];
        if (d->gpu < 0) continue; /* the GPUs' clocks decide kernel speed */
        struct energy_phase b = {0};
        int have_base = base && (energy_phase_figures(db, base, d, &b), b.span.sm_mhz > 0);
        for (int i = 0; i < p->n && o + 160 < n; i++) {
            const struct phase_info *ph = &p->v[i];
            if (ph->transient || !ph->nsteady) continue;
            struct energy_phase f;
            energy_phase_figures(db, ph, d, &f);
            char a[64], why[96];
            phase_short_label(ph, a, sizeof a);
            if (f.span.throttle_share > ENERGY_THROTTLED_SHARE) {
                energy_reason_names(f.span.reasons, why, sizeof why);
                o += (size_t)snprintf(out + o, n - o,
                                      "%s%s ran throttled %.0f%% of the time on %s"
                                      " (%s)",
                                      o ? "; " : "", a, 100 * f.span.throttle_share, d->label, why);
            }
            if (have_base && ph != base && f.span.sm_mhz > 0 &&
                fabs(f.span.sm_mhz / b.span.sm_mhz - 1) > ENERGY_CLOCK_DIFFERS) {
                char bl[64];
                phase_short_label(base, bl, sizeof bl);
                o += (size_t)snprintf(out + o, n - o, "%s%s at SM %.0f MHz vs %.0f in %s",
                                      o ? "; " : "", a, f.span.sm_mhz, b.span.sm_mhz, bl);
            }
        }
    }
    if (o && o + 60 < n) o += (size_t)snprintf(out + o, n - o, ": distrust a small speed-up");
    return o;
}

/*
 * energy.h: the energy figures of the run model (energy.c), read from energy_samples and
 * energy_gpus (schema 4): for any set of time intervals (a phase's spans, a phase's or a series'
 * steady iterations) and one device, the energy, average and peak power, mean SM clock and the
 * share of time under a throttle reason.
 */
#ifndef INFPROF_ENERGY_H
#define INFPROF_ENERGY_H

#include "run.h"

#include <stddef.h>
#include <stdint.h>

#define ENERGY_MAX_DEVICES 17
/* Clock-event reasons that slow the clock for power or heat (NVML's SW/HW power cap, HW
 * slowdown, SW/HW thermal, power brake), not idle or application clocks. */
#define ENERGY_THROTTLE_MASK 0xECll

struct energy_device {
    int gpu;  /* NVML index, -1 the CPU */
    int cuda; /* CUDA ordinal the process used it as, -1 none */
    char label[32], name[96], status[160];
    size_t n;
    int64_t *t;       /* ns since t0 */
    double *e;        /* cumulative mJ (from the counter, or integrated power: from_power) */
    int64_t *p, *sm;  /* mW, MHz; -1 unknown */
    int64_t *reasons; /* -1 unknown */
    int from_power, has_energy, has_sm, has_reasons;
    /* Power over time (energy_load): w[i], the watts from the energy point before reading i to
     * it (-1 where i is no point, or the first). Energy points: where a counter moved (below). */
    double *w;
    double limit_w;       /* the power limit (energy_gpus.power_limit_mw), 0 unknown */
    size_t repeats;       /* counter readings that repeated the last value: not energy points */
    size_t out_of_bounds; /* power readings and intervals above limit_w (or below 0): dropped */
};

struct energy_run {
    int present; /* the tables exist (schema 4 with the energy collector) */
    int n;
    struct energy_device d[ENERGY_MAX_DEVICES];
    char gpu_status[256], cpu_status[256];
};

/* Power a reading may show: at most the device's limit, when it is known. */
int energy_power_possible(const struct energy_device *d, double watts);

/* The devices with readings that matter: the GPUs the process used, and the CPU when it has an
 * energy counter or a clock. */
void energy_load(struct sqlite3 *db, struct energy_run *r);
void energy_free(struct energy_run *r);
/* The run's readings, loaded once on first use and kept with the run model (p->lazy). */
const struct energy_run *run_energy(struct sqlite3 *db, const struct run_phases *p);

struct energy_figures {
    int ok;          /* the readings cover some of the intervals (what they miss: below) */
    double seconds;  /* the covered length: intervals clipped to the readings (whole: kept) */
    size_t used;     /* intervals counted */
    size_t unread;   /* intervals left out or clipped: they reach outside the readings */
    double unread_s; /* the time left out (seconds) */
    double joules, avg_w, peak_w;
    double sm_mhz;         /* time-weighted mean (each reading holds until the next); <0 none */
    double throttle_share; /* 0..1 of the time under ENERGY_THROTTLE_MASK; <0 unknown */
    int64_t reasons;       /* every reason seen in the intervals */
};
/* The figures of device d over n intervals (ns since t0, not overlapping). Time outside the
 * readings (a phase begun before the process first used the GPU, whose first reading comes
 * then) is left out and counted: with whole, an interval not wholly inside them is left out (an
 * iteration's energy is all of it or nothing); else it is clipped to them (a phase's span). */
void energy_over(const struct energy_device *d, const struct interval *v, size_t n, int whole,
                 struct energy_figures *f);
/* A phase's spans (phase_spans, overlaps merged) into *out (malloc'd); returns how many. */
size_t energy_phase_intervals(struct sqlite3 *db, int phase, struct interval **out);
/* The phase's steady iterations as intervals (malloc'd); returns how many. */
size_t energy_iteration_intervals(const struct phase_info *ph, struct interval **out);

/* Per phase and device, what the report shows. */
struct energy_phase {
    struct energy_figures span; /* over the phase's spans */
    struct energy_figures iter; /* over its steady iterations */
    int64_t iterations, items;
    double j_per_iter, mj_per_item, items_per_j; /* <0 unknown */
};
void energy_phase_figures(struct sqlite3 *db, const struct phase_info *ph,
                          const struct energy_device *d, struct energy_phase *out);

/* A series' energy over its steady iterations on the run's energy device (the first GPU the
 * process used, else the CPU when it has an energy counter): J per iteration and mJ per item
 * (<0 unknown: no readings, none covering the iterations, or no batch known); *device: its label
 * ("" none). */
void energy_series_figures(struct sqlite3 *db, const struct run_phases *p,
                           const struct series_info *s, double *j_per_iter, double *mj_per_item,
                           const char **device);

/* Clock-event reason bits in words: "SW power cap, HW thermal". */
void energy_reason_names(int64_t mask, char *out, size_t n);
/* The Summary's line: phases that ran throttled (over ENERGY_THROTTLED_SHARE of their time) or
 * at an SM clock more than ENERGY_CLOCK_DIFFERS away from the baseline's, on a GPU the process
 * used; "" (0) when none or no readings. */
#define ENERGY_THROTTLED_SHARE 0.05
#define ENERGY_CLOCK_DIFFERS   0.03
size_t energy_clock_note(struct sqlite3 *db, const struct run_phases *p,
                         const struct phase_info *base, char *out, size_t n);

#endif

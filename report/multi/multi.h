/*
 * multi.h: `infprof report A B ...` over several databases, one per process or rank
 * (report_multi.c): each process's report, then the phases, kernels and memory of all of them
 * combined (multi_combined.c, multi_kernels.c). It starts from the tables the single-run report
 * builds (report_build), so every figure means what it means in `infprof report`.
 */
#ifndef INFPROF_MULTI_H
#define INFPROF_MULTI_H

#include "../render/render.h"

/* multi_series.c: a phase of one run with several configurations (series_pick found a pair): its
 * series' names and p50s, the pair its Series line compares (fast, slow), and each pair's
 * verdict as that line would give it (series_pair_verdict; where the phase has at most
 * MULTI_JUDGED series, else the line's pair alone): judged[i][j] 1 where a band stood, v[i][j]
 * its verdict of i against j (faster: i is). */
#define MULTI_PHASES 4
#define MULTI_SERIES 8
#define MULTI_JUDGED 4
struct multi_phase_series {
    char phase[32];
    int n, fast, slow;
    char name[MULTI_SERIES][48];
    int64_t p50[MULTI_SERIES];
    signed char judged[MULTI_SERIES][MULTI_SERIES];
    signed char v[MULTI_SERIES][MULTI_SERIES];
};

struct multi_run {
    const char *path, *label; /* label: "pid 123 on host" (pool), unique among the runs */
    int64_t start_unix;       /* start_unix_ns: with the label, which run this is */
    struct run_phases phases;
    struct table *kernels; /* every kernel row of this process (no --top), for the combined */
    int own_kernels;       /* kernels is not one of the report's tables */
    /* multi_procs.c: its main phase (most steady iterations; -1 none), why it is a helper
     * (NULL: a rank, compared), its peak allocated tensor bytes (-1 none), events dropped. */
    int main;
    const char *helper;
    int64_t peak, dropped;
    int64_t pid, ppid;
    double items_per_s;  /* of its main phase's steady iterations; -1 none */
    int forked_detected; /* a forked child whose every iteration was detected (no mark) */
    int fork_child, root; /* meta role: fork_child, root (the process infprof started with) */
    struct multi_phase_series pairs[MULTI_PHASES];
    int npairs;
    const char *command; /* meta command (pool): runs of other commands are other work */
    struct mode_verdict modes[MULTI_PHASES]; /* its inference_mode line's (mode_verdicts) */
    int nmodes;
};

/* An iteration on the wall clock (start_unix_ns + start): processes share that clock. */
struct multi_iter {
    int64_t start, dur, batch; /* batch -1: unknown */
    int phase, proc;           /* proc: index in runs (a helper's are left out) */
    int latency; /* 1: one of the latencies a run's figures are over (phase_info.counted_lat),
                    for the percentiles; 0: a steady iteration on the clock, for the rates */
};

/* An allocator's totals after an event, on the wall clock; dev indexes multi_data.devs. */
struct multi_mem {
    int64_t wall, allocated, reserved;
    int proc, dev;
    int end; /* the process ended: what it held is released */
};

/* A device as memory sees it: one GPU (by UUID) or the host's memory, which processes on one
 * host share; a GPU whose UUID is unknown is the process's own. */
struct multi_dev {
    char id[192]; /* host and identity: what makes two processes' devices one */
    char host[64], name[32], uuid[48];
};

struct multi_data {
    struct multi_run *runs;
    int n;
    struct multi_iter *iters;
    size_t niters, itercap;
    struct multi_mem *mem;
    size_t nmem, memcap;
    int64_t mem_width; /* > 0: the widest interval a process's readings were merged into, ns */
    struct multi_dev *devs;
    int ndevs, devcap;
    struct multi_kgroups *kg; /* the kernels of the processes read so far (multi_kernels.c) */
};

/* Readings kept per process and device for the combined memory (bounded: about 1 M in all). */
int64_t multi_mem_points(const struct multi_data *d);
/* Read what the combined sections need from run `proc`'s open database. */
void multi_gather(struct sqlite3 *db, const struct run_phases *p, struct multi_data *d, int proc);
/* The combined sections (data and text tables) appended to t; returns how many (at most 8). */
int multi_combined(struct multi_data *d, const struct report_opts *o, const char *phase,
                   struct table **t);
void multi_free(struct multi_data *d);
/* The kernels of all processes by name (and phase): counts and totals summed; a name that
 * several processes launched gets its median and deviation from every launch (multi_kernels.c).
 * Each process's kernel table (every row, by phase when by_phase) is folded in as it is read, so
 * a thousand processes hold one row per name, not a thousand tables; multi_kernels reads the
 * databases of the shared names' launches again, once all are folded. */
void multi_kernels_fold(struct multi_data *d, int run, const struct table *kernels, int by_phase);
struct table *multi_kernels(struct multi_data *d, const struct report_opts *o, const char *phase);
void multi_kernels_free(struct multi_data *d);
/* multi_procs.c: a process's figures (its database open); the processes side by side, the ones
 * that stand out named; the Summary over all of them. */
void multi_process_facts(struct sqlite3 *db, struct multi_run *r);
struct table *multi_processes(struct multi_data *d);
/* After every process is read: a process with no iteration whose parent is in the set is that
 * parent's helper. */
void multi_process_roles(struct multi_data *d);
struct table *multi_job_summary(struct multi_data *d);
/* multi_series.c: run r's phases with a Series pair (its run model whole, its database open:
 * the command); the Series line across the runs that ran a pair some run's line compares
 * ("no_grad/off: int8 against fp32 in 3 of 3 runs: 37.98x, 35.10x, 40.20x; faster in all 3"),
 * NULL where no pair is in two runs. */
void multi_series_facts(struct sqlite3 *db, const struct run_phases *p, struct multi_run *r);
const char *multi_series_line(const struct multi_data *d);
/* The inference_mode line across runs: per autocast setting that two runs or more compared,
 * each run's speed-up over no_grad and whether one verdict holds in every run; NULL none. */
const char *multi_modes_line(const struct multi_data *d);
/* `infprof report A B ...`: each process, then all of them combined. */
int report_several(char **paths, int n, const struct report_opts *o, const struct render_opts *ro);

#endif

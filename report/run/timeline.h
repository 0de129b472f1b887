/*
 * timeline.h: the run over time, in buckets of equal length from its start to its end (the
 * pictures' memory, GPU and power charts): each device's tensor memory (the highest allocated and
 * reserved totals in each bucket), the GPU's busy share (kernel time in the bucket, over its
 * length), each device's power and clock, and the CPU cores the program kept busy. Read once, on
 * first use (run_timeline).
 */
#ifndef INFPROF_RUN_TIMELINE_H
#define INFPROF_RUN_TIMELINE_H

#include "run.h"

#include <stdint.h>

#define TIMELINE_BUCKETS 400
#define TIMELINE_DEVICES 4

struct timeline_series {
    char device[32];             /* "cuda:0", "cpu" */
    int n;                       /* buckets with a value, in time order */
    int64_t t[TIMELINE_BUCKETS]; /* each bucket's start, ns since t0 */
    double v[TIMELINE_BUCKETS];  /* memory: the highest allocated bytes; power: watts */
    double v2[TIMELINE_BUCKETS]; /* memory: the highest reserved bytes (< 0 none) */
};

struct run_timeline {
    int64_t bucket_ns, end_ns; /* 0: no run length known */
    int64_t fold_ns;           /* the writer's kernel_time bucket width, 0: read from the rows */
    int nmem;
    struct timeline_series mem[TIMELINE_DEVICES];
    int gpu;                         /* kernels recorded: gpu_busy below is known */
    struct timeline_series gpu_busy; /* v: percent of the bucket with a kernel running (the sum
                                        of kernel time, at most 100: streams may overlap) */
    int npower;
    struct timeline_series power[TIMELINE_DEVICES];
    double cpus_online;              /* the bound on cores busy (meta cpus_online), 0 unknown */
    double cpus_allowed;             /* those it may run on (meta cpus_allowed), 0 unknown */
    double cpu_quota; /* its cgroup's CPU quota, cores (meta cpu_quota_milli), 0 none */
    double cpu_throttled[TIMELINE_BUCKETS]; /* for each cpu_busy point: the quota's throttled time
                                               over its wall time (cpu_samples.throttled_ns,
                                               summed over CPUs: may pass 1), -1 unknown */
    int64_t cpu_out_of_bounds;       /* CPU readings above it (or going back): dropped */
    double ours_cpu_ns;              /* our writer thread's CPU time over the readings */
    int cpu;                         /* CPU time was read (cpu_samples): cpu_busy below is known */
    struct timeline_series cpu_busy; /* v: the program's cores busy (its CPU time over the wall
                                        time, ours taken out), v2: our writer thread's */
    int nclock;
    struct timeline_series clock[TIMELINE_DEVICES]; /* v: the SM clock, MHz (the CPU: cpufreq's
                                                       mean), time-weighted over the bucket */
};

extern const struct run_model run_model_timeline; /* its lazy part (report/run/lazy.c) */
const struct run_timeline *run_timeline(struct sqlite3 *db, const struct run_phases *p);

/* Readings no machine could give, dropped from every figure and counted (the run header's
 * warnings say so): power above a GPU's limit (energy.c), cores busy above the CPUs online. */
struct run_bounds {
    int64_t power, cpu, memory;        /* memory: CUDA allocator reports above the GPU's memory */
    double ours_cpu_ns; /* the writer thread's CPU time (every writer: cpu_samples) */
    double cpus_online, power_limit_w; /* 0 unknown (databases before 2026-11-28) */
};
void run_bounds(struct sqlite3 *db, const struct run_phases *p, struct run_bounds *out);

#endif

/*
 * nvml_internal.h: the energy collector's parts (nvml.c: NVML and the sampler thread,
 * nvml_cpu.c: RAPL and cpufreq, nvml_ingest.c: the writer side) and the one-way queue of
 * readings between the sampler and the writer.
 */
#ifndef INFPROF_NVML_INTERNAL_H
#define INFPROF_NVML_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct ip_store;

/* Why a reading was taken (energy_samples.kind). */
enum { IP_ENERGY_START = 0, IP_ENERGY_PERIODIC = 1, IP_ENERGY_PHASE = 2, IP_ENERGY_END = 3 };
#define IP_ENERGY_CPU        (-1) /* energy_samples.gpu of the CPU's readings */
#define IP_ENERGY_GPUS       16   /* NVML devices read at most */
#define IP_ENERGY_QUEUE      4096 /* readings waiting for the writer; past it they are counted */
#define IP_ENERGY_MIN_GAP_NS 1000000ull /* phase-change readings at most one per ms */

/* One reading; -1 in a field: not available. */
struct ip_energy_reading {
    int32_t gpu; /* NVML index, or IP_ENERGY_CPU */
    int32_t kind;
    uint64_t ts; /* ip_clock_now() */
    int64_t energy_mj, power_mw, sm_mhz, mem_mhz, temp_c, reasons;
};

/* Sampler thread -> writer. Single producer, single consumer, no lock. */
struct ip_energy_queue {
    struct ip_energy_reading v[IP_ENERGY_QUEUE];
    _Atomic uint64_t head, tail;
    _Atomic uint64_t dropped;
};
extern struct ip_energy_queue ip_energy_q;
/* 0, or -1 when full (counted in ip_energy_q.dropped). */
int ip_energy_push(struct ip_energy_queue *q, const struct ip_energy_reading *r);
/* 1 and the oldest reading, or 0 when none waits. */
int ip_energy_pop(struct ip_energy_queue *q, struct ip_energy_reading *out);

/* What the writer stores about each GPU at the end (energy_devices). */
struct ip_energy_gpu_info {
    int nvml_index, cuda; /* cuda: the CUDA ordinal mapped to it, -1 none */
    int mig;
    int64_t power_limit_mw; /* NVML's enforced power limit, -1 unknown */
    char name[96], uuid[96], status[160];
};
int ip_energy_gpu_infos(struct ip_energy_gpu_info *out, int max);
/* Facts for the run metadata: the sampler's thread id, CPU time, readings. */
struct ip_energy_facts {
    int tid;
    int64_t cpu_ns, readings;
    char gpu_status[256], cpu_status[256];
};
void ip_energy_facts(struct ip_energy_facts *f);

/* nvml_cpu.c: the CPU side. open returns 1 if anything can be read, reason filled either way. */
/* Open the CPU's counters (at start, before the program runs: see nvml_cpu.c). */
int ip_energy_cpu_open(const char *sysfs, char *reason, size_t n);
void ip_energy_cpu_close(void);
void ip_energy_cpu_forget(void);
void ip_energy_cpu_read(struct ip_energy_reading *r);

/* nvml_ingest.c: writer side. */
void ip_energy_prepare(struct ip_store *s);
void ip_energy_flush(struct ip_store *s, int final);
void ip_energy_finish(struct ip_store *s);

#endif

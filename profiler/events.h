/*
 * events.h: the fixed-layout records that hooks append to their thread's ring (ring.h) and the
 * writer thread turns into rows. Every record starts with struct ip_ev; sizes are multiples of 8.
 * The type's high byte names the collector that owns it (its index in collectors/registry.c),
 * so the writer dispatches without the core knowing any collector.
 */
#ifndef INFPROF_EVENTS_H
#define INFPROF_EVENTS_H

#include <stdint.h>

struct ip_ev {
    uint16_t type; /* (collector index << 8) | kind; 0 is padding */
    uint16_t size; /* whole record, bytes, multiple of 8 */
    uint32_t aux;  /* free for the owner */
};

#define IP_EV_PAD                   0
#define IP_EV_TYPE(collector, kind) ((uint16_t)(((collector) << 8) | (kind)))
#define IP_EV_OWNER(type)           ((type) >> 8)

/* Core events (collector index 0). */
enum {
    IP_EV_CORE_PHASE = 1,
    IP_EV_CORE_THREAD_NAME = 2,
    IP_EV_CORE_ATTRIB = 3,
    IP_EV_CORE_ITER_CPU = 4
};

/* An outermost iteration's thread: its CPU time and context switches while it ran (aux: the
 * iteration id). */
struct ip_ev_iter_cpu {
    struct ip_ev h;
    int64_t cpu_ns, voluntary, involuntary;
    /* The thread's from its last iteration's end to this one's begin; -1 none. */
    int64_t gap_cpu_ns, gap_voluntary, gap_involuntary;
    /* Its page faults (minor, major) and system time over the same reading as cpu_ns; -1 none. */
    int64_t minflt, majflt, sys_ns;
};

/* A thread entered a phase (aux: phase id). */
struct ip_ev_phase {
    struct ip_ev h;
    uint64_t ts;
    uint8_t cuda_autocast, cpu_autocast; /* dtype codes, 0 off */
    uint8_t pad[6];
};

/* What a thread is in changed (attrib.h; records mode only). aux: outermost iteration. */
struct ip_ev_attrib {
    struct ip_ev h;
    uint64_t ts;
    uint64_t nvtx;  /* innermost NVTX push/pop range, 0 none */
    uint64_t cudnn; /* cuDNN call in progress, 0 none */
    uint32_t op;    /* innermost PyTorch operator (opname.h), 0 none */
    uint32_t pad;
};

/* Names travel inline; longer ones are cut at IP_EV_TEXT_MAX bytes. */
#define IP_EV_TEXT_MAX 1024

struct ip_ev_text {
    struct ip_ev h; /* aux: text length */
    uint64_t ts;
    char text[];
};

static inline uint16_t ip_ev_size(uint32_t body)
{
    return (uint16_t)((body + 7u) & ~7u);
}

#endif

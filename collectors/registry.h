/*
 * registry.h: the collectors of libinfprof.so, their indexes (the high byte of their event
 * types, events.h) and the table preload/preload.c hands to the core.
 */
#ifndef INFPROF_REGISTRY_H
#define INFPROF_REGISTRY_H

#include "../profiler/collector.h"

enum {
    IP_COLLECTOR_CUPTI = 1,
    IP_COLLECTOR_TORCH = 2,
    IP_COLLECTOR_NVTX = 3,
    IP_COLLECTOR_CUDNN = 4,
    IP_COLLECTOR_ENERGY = 5,
    IP_COLLECTOR_CPU = 6,
    IP_COLLECTOR_WINDOW = 7,
    IP_COLLECTOR_COUNT
};

/* Indexed by the values above; slot 0 (the core) is NULL. */
extern const struct ip_collector *const ip_collectors[IP_COLLECTOR_COUNT];

#endif

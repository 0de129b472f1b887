/*
 * registry.c: the table of collectors (registry.h) that the preloaded library hands to the core.
 * Adding a collector means one line here, one index in registry.h and one file of its own.
 */
#include "registry.h"

extern const struct ip_collector ip_collector_cupti;
extern const struct ip_collector ip_collector_torch;
extern const struct ip_collector ip_collector_nvtx;
extern const struct ip_collector ip_collector_cudnn;
extern const struct ip_collector ip_collector_energy;
extern const struct ip_collector ip_collector_cpu;
extern const struct ip_collector ip_collector_window;

const struct ip_collector *const ip_collectors[IP_COLLECTOR_COUNT] = {
    [IP_COLLECTOR_CORE] = NULL,
    [IP_COLLECTOR_CUPTI] = &ip_collector_cupti,
    [IP_COLLECTOR_TORCH] = &ip_collector_torch,
    [IP_COLLECTOR_NVTX] = &ip_collector_nvtx,
    [IP_COLLECTOR_CUDNN] = &ip_collector_cudnn,
    [IP_COLLECTOR_ENERGY] = &ip_collector_energy,
    [IP_COLLECTOR_CPU] = &ip_collector_cpu,
    [IP_COLLECTOR_WINDOW] = &ip_collector_window,
};

/*
 * nvml_config.h: the settings of the energy collector (NVML, RAPL, cpufreq) (nvml_config.c), read
 * with ip_cfg_group_int(&ip_nvml_cfg, IP_NVML_CFG_...) and ip_cfg_group_str.
 */
#ifndef INFPROF_NVML_CONFIG_H
#define INFPROF_NVML_CONFIG_H

#include "../profiler/config.h"

enum ip_nvml_cfg_id {
    IP_NVML_CFG_ENERGY_MS,
    IP_NVML_CFG_NVML,
    IP_NVML_CFG_PATH,
    IP_NVML_CFG_SYSFS,
    IP_NVML_CFG_COUNT
};

extern const struct ip_cfg_group ip_nvml_cfg;

#endif

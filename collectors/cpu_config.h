/*
 * cpu_config.h: the settings of the CPU time collector (cpu_config.c), read with
 * ip_cfg_group_int(&ip_cpu_cfg, IP_CPU_CFG_...).
 */
#ifndef INFPROF_CPU_CONFIG_H
#define INFPROF_CPU_CONFIG_H

#include "../profiler/config.h"

enum ip_cpu_cfg_id { IP_CPU_CFG_MS, IP_CPU_CFG_COUNT };

extern const struct ip_cfg_group ip_cpu_cfg;

#endif

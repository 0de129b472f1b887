/*
 * nvtx_config.h: the settings of the NVTX collector (nvtx_config.c), read with
 * ip_cfg_group_int(&ip_nvtx_cfg, IP_NVTX_CFG_...) and ip_cfg_group_str.
 */
#ifndef INFPROF_NVTX_CONFIG_H
#define INFPROF_NVTX_CONFIG_H

#include "../profiler/config.h"

enum ip_nvtx_cfg_id { IP_NVTX_CFG_ON, IP_NVTX_CFG_COUNT };

extern const struct ip_cfg_group ip_nvtx_cfg;

#endif

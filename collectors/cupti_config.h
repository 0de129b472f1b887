/*
 * cupti_config.h: the settings of the CUPTI collector (cupti_config.c), read with
 * ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_...) and ip_cfg_group_str.
 */
#ifndef INFPROF_CUPTI_CONFIG_H
#define INFPROF_CUPTI_CONFIG_H

#include "../profiler/config.h"

enum ip_cupti_cfg_id {
    IP_CUPTI_CFG_ON,
    IP_CUPTI_CFG_PATH,
    IP_CUPTI_CFG_BUFFER_KB,
    IP_CUPTI_CFG_BUFFERS,
    IP_CUPTI_CFG_FLUSH_MS,
    IP_CUPTI_CFG_CUDA_API,
    IP_CUPTI_CFG_CALLBACKS,
    IP_CUPTI_CFG_ATTRIBUTION,
    IP_CUPTI_CFG_COUNT
};

extern const struct ip_cfg_group ip_cupti_cfg;

#endif

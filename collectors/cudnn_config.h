/*
 * cudnn_config.h: the settings of the cuDNN collector (cudnn_config.c), read with
 * ip_cfg_group_int(&ip_cudnn_cfg, IP_CUDNN_CFG_...) and ip_cfg_group_str.
 */
#ifndef INFPROF_CUDNN_CONFIG_H
#define INFPROF_CUDNN_CONFIG_H

#include "../profiler/config.h"

enum ip_cudnn_cfg_id { IP_CUDNN_CFG_ON, IP_CUDNN_CFG_NVTX, IP_CUDNN_CFG_COUNT };

extern const struct ip_cfg_group ip_cudnn_cfg;

#endif

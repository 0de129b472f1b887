/*
 * torch_config.h: the settings of the libtorch collector (and its Python module hooks)
 * (torch_config.c), read with ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_...) and
 * ip_cfg_group_str.
 */
#ifndef INFPROF_TORCH_CONFIG_H
#define INFPROF_TORCH_CONFIG_H

#include "../profiler/config.h"

enum ip_torch_cfg_id {
    IP_TORCH_CFG_ON,
    IP_TORCH_CFG_CPU_MEMORY,
    IP_TORCH_CFG_POLL,
    IP_TORCH_CFG_RECORD_FUNCTION,
    IP_TORCH_CFG_OPERATORS,
    IP_TORCH_CFG_OPERATORS_EVERY,
    IP_TORCH_CFG_OPERATORS_BUDGET,
    IP_TORCH_CFG_OPERATORS_STRATUM,
    IP_TORCH_CFG_OPERATORS_SEED,
    IP_TORCH_CFG_PYTHON,
    IP_TORCH_CFG_PYTHON_FAST,
    IP_TORCH_CFG_MEMORY_FOLD,
    IP_TORCH_CFG_COUNT
};

/* INFPROF_OPERATORS's values (the enum's indexes). */
enum { IP_OPERATORS_OFF, IP_OPERATORS_ALL, IP_OPERATORS_SAMPLED };

extern const struct ip_cfg_group ip_torch_cfg;

#endif

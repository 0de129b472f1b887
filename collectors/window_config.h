/*
 * window_config.h: the settings of the recording windows (window_config.c), read with
 * ip_cfg_group_int(&ip_window_cfg, IP_WINDOW_CFG_...) and ip_cfg_group_str.
 */
#ifndef INFPROF_WINDOW_CONFIG_H
#define INFPROF_WINDOW_CONFIG_H

#include "../profiler/config.h"

enum ip_window_cfg_id {
    IP_WINDOW_CFG_START,
    IP_WINDOW_CFG_DELAY_MS,
    IP_WINDOW_CFG_DURATION_MS,
    IP_WINDOW_CFG_CAPTURE,
    IP_WINDOW_CFG_CONTROL,
    IP_WINDOW_CFG_DIR,
    IP_WINDOW_CFG_SIGNAL,
    IP_WINDOW_CFG_COUNT
};

extern const struct ip_cfg_group ip_window_cfg;

#endif

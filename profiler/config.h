/*
 * config.h: the INFPROF_* settings, from one table (config.c) that the library reads at start
 * and `infprof info` prints. A bad value warns once, naming the variable and the fix, and the
 * default is used.
 */
#ifndef INFPROF_CONFIG_H
#define INFPROF_CONFIG_H

#include <stdint.h>

enum ip_cfg_id {
    IP_CFG_ENABLE,
    IP_CFG_MODE,
    IP_CFG_OUTPUT,
    IP_CFG_LOG,
    IP_CFG_FORK,
    IP_CFG_FOLLOW_EXEC,
    IP_CFG_BUFFER_MB,
    IP_CFG_BUFFER_WAIT_MS,
    IP_CFG_FLUSH_MS,
    IP_CFG_FINISH_TIMEOUT_MS,
    IP_CFG_DISK_RESERVE_MB,
    IP_CFG_CUPTI,
    IP_CFG_CUPTI_PATH,
    IP_CFG_CUPTI_BUFFER_KB,
    IP_CFG_CUPTI_BUFFERS,
    IP_CFG_CUPTI_FLUSH_MS,
    IP_CFG_CUDA_API,
    IP_CFG_CUPTI_CALLBACKS,
    IP_CFG_ATTRIBUTION,
    IP_CFG_TORCH,
    IP_CFG_CPU_MEMORY,
    IP_CFG_POLL,
    IP_CFG_ITERATION_RANGE,
    IP_CFG_RECORD_FUNCTION,
    IP_CFG_BATCH,
    IP_CFG_NVTX,
    IP_CFG_NVTX_EMIT,
    IP_CFG_CUDNN,
    IP_CFG_CUDNN_NVTX,
    IP_CFG_OPERATORS,
    IP_CFG_PYTHON,
    IP_CFG_ENERGY_MS,
    IP_CFG_NVML,
    IP_CFG_NVML_PATH,
    IP_CFG_ENERGY_SYSFS,
    IP_CFG_COUNT
};

enum ip_cfg_type { IP_CFG_BOOL, IP_CFG_INT, IP_CFG_STR, IP_CFG_ENUM };

struct ip_cfg_entry {
    const char *name; /* environment variable */
    enum ip_cfg_type type;
    const char *dflt;    /* default, as it would be written in the environment */
    int64_t min, max;    /* IP_CFG_INT range */
    const char *choices; /* IP_CFG_ENUM: "a|b|c"; the value is the index */
    const char *doc;
};

extern const struct ip_cfg_entry ip_cfg_table[IP_CFG_COUNT];

/* Reads every setting from the environment (warnings once per bad variable). */
void ip_cfg_load(void);
/* Sets one setting from a string as if it came from the environment; returns 0 if it is valid. */
int ip_cfg_parse(enum ip_cfg_id id, const char *text, int64_t *num_out);

int64_t ip_cfg_int(enum ip_cfg_id id); /* BOOL, INT and ENUM settings */
const char *ip_cfg_str(enum ip_cfg_id id);
int ip_cfg_is_set(enum ip_cfg_id id); /* present in the environment */

#endif

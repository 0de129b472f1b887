/*
 * nvtx_config.c: the settings of the NVTX collector, with their defaults and docs: read at start
 * by the core (the collector's descriptor hands them over), written to the run's metadata and
 * listed by `infprof info`.
 */
#include "nvtx_config.h"

#include <stddef.h>

/* clang-format off */
static const struct ip_cfg_entry entries[IP_NVTX_CFG_COUNT] = {
    [IP_NVTX_CFG_ON] = {"INFPROF_NVTX", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Capture the program's own NVTX ranges (chained: a tool injected before us still gets"
        " them).", NULL},
};
/* clang-format on */

static struct ip_cfg_value values[IP_NVTX_CFG_COUNT];

const struct ip_cfg_group ip_nvtx_cfg = {"nvtx", entries, values, IP_NVTX_CFG_COUNT};

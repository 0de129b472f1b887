/*
 * cudnn_config.c: the settings of the cuDNN collector, with their defaults and docs: read at start
 * by the core (the collector's descriptor hands them over), written to the run's metadata and
 * listed by `infprof info`.
 */
#include "cudnn_config.h"

#include <stddef.h>

/* clang-format off */
static const struct ip_cfg_entry entries[IP_CUDNN_CFG_COUNT] = {
    [IP_CUDNN_CFG_ON] = {"INFPROF_CUDNN", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Record cuDNN calls (interposition).", NULL},
    [IP_CUDNN_CFG_NVTX] = {"INFPROF_CUDNN_NVTX", IP_CFG_BOOL, "0", 0, 1, NULL,
        "Wrap each cuDNN call in an NVTX range in domain 'infprof', named after the operation,"
        " for Nsight Systems (1 with INFPROF_MODE=full).", "1"},
};
/* clang-format on */

static struct ip_cfg_value values[IP_CUDNN_CFG_COUNT];

const struct ip_cfg_group ip_cudnn_cfg = {"cudnn", entries, values, IP_CUDNN_CFG_COUNT};

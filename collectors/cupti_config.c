/*
 * cupti_config.c: the settings of the CUPTI collector, with their defaults and docs: read at start
 * by the core (the collector's descriptor hands them over), written to the run's metadata and
 * listed by `infprof info`.
 */
#include "cupti_config.h"

#include <stddef.h>

/* clang-format off */
static const struct ip_cfg_entry entries[IP_CUPTI_CFG_COUNT] = {
    [IP_CUPTI_CFG_ON] = {"INFPROF_CUPTI", IP_CFG_BOOL, "1", 0, 1, NULL,
        "CUDA activity through CUPTI. 0 is passive mode: no CUPTI (leave it to Nsight or"
        " torch.profiler); interposers and NVTX keep working.", NULL},
    [IP_CUPTI_CFG_PATH] = {"INFPROF_CUPTI_PATH", IP_CFG_STR, "", 0, 0, NULL,
        "libcupti to load; unset: libcupti.so.13 where the program's own CUDA came from (pip's"
        " nvidia packages, torch's RUNPATH), else the loader path or the CUDA install.", NULL},
    [IP_CUPTI_CFG_BUFFER_KB] = {"INFPROF_CUPTI_BUFFER_KB", IP_CFG_INT, "4096", 64, 262144, NULL,
        "Size of one CUPTI activity buffer, KiB.", NULL},
    [IP_CUPTI_CFG_BUFFERS] = {"INFPROF_CUPTI_BUFFERS", IP_CFG_INT, "16", 2, 4096, NULL,
        "CUPTI buffers in the pool, allocated once at start; none free means records are dropped"
        " (counted).", NULL},
    [IP_CUPTI_CFG_FLUSH_MS] = {"INFPROF_CUPTI_FLUSH_MS", IP_CFG_INT, "500", 0, 60000, NULL,
        "CUPTI flush period, ms (0: CUPTI's own policy).", NULL},
    [IP_CUPTI_CFG_CUDA_API] = {"INFPROF_CUDA_API", IP_CFG_BOOL, "0", 0, 1, NULL,
        "Record every CUDA runtime and driver API call: host time per call in the API summary"
        " (1 with INFPROF_MODE=full). Launches, copies and their latency are recorded either"
        " way.", "1"},
    [IP_CUPTI_CFG_CALLBACKS] = {"INFPROF_CUPTI_CALLBACKS", IP_CFG_BOOL, "1", 0, 1, NULL,
        "The launch callbacks that tie every kernel and copy to its thread, phase, iteration and"
        " cuDNN call. 0 only to measure what they cost: kernels are then unattributed.", NULL},
    [IP_CUPTI_CFG_ATTRIBUTION] = {"INFPROF_ATTRIBUTION", IP_CFG_ENUM, "callbacks", 0, 0,
        "callbacks|records",
        "How a kernel or copy finds the thread, phase, iteration and cuDNN call that issued it."
        " 'callbacks': a CUPTI callback on every launch, on the launching thread. 'records': no"
        " callback; CUPTI's API records of the issuing calls only, matched to each thread's"
        " history by time on the writer side (docs/cupti.md). Its cost on a GPU is not yet"
        " measured (docs/performance.md).", NULL},
};
/* clang-format on */

static struct ip_cfg_value values[IP_CUPTI_CFG_COUNT];

const struct ip_cfg_group ip_cupti_cfg = {"cupti", entries, values, IP_CUPTI_CFG_COUNT};

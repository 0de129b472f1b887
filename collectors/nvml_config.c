/*
 * nvml_config.c: the settings of the energy collector (NVML, RAPL, cpufreq), with their defaults
 * and docs: read at start by the core (the collector's descriptor hands them over), written to the
 * run's metadata and listed by `infprof info`.
 */
#include "nvml_config.h"

#include <stddef.h>

/* clang-format off */
static const struct ip_cfg_entry entries[IP_NVML_CFG_COUNT] = {
    /* 100: NVML's energy counter moves about every 100 ms on an H100 or H200, so reading it more
     * often gives no energy figure more, and each reading cost about 3.6 ms of CPU there (the
     * H200 fixture: 3.73 s of sampler CPU over 1,030 readings in 24 s, 15% of a core). */
    [IP_NVML_CFG_ENERGY_MS] = {"INFPROF_ENERGY_MS", IP_CFG_INT, "100", 0, 10000, NULL,
        "Energy, power, clocks and throttle reasons of the GPUs the process uses (NVML) and of the"
        " CPU (RAPL, cpufreq), read every this many ms by a thread of ours, and at every phase"
        " change, start and end (docs/energy.md). 0: off.", NULL},
    [IP_NVML_CFG_NVML] = {"INFPROF_NVML", IP_CFG_ENUM, "auto", 0, 0, "auto|start|off",
        "When NVML (GPU energy) is loaded; never once CUDA has started, which hung the program's"
        " next cuBLAS start on an H100 (docs/energy.md). auto: at start in a process that has a"
        " CUDA library loaded (libcudart, libcuda, libtorch_cuda), or when Python imports a CUDA"
        " build of torch; start: at start in every process; off: never (no GPU energy).", NULL},
    [IP_NVML_CFG_PATH] = {"INFPROF_NVML_PATH", IP_CFG_STR, "", 0, 0, NULL,
        "libnvidia-ml to load; unset: libnvidia-ml.so.1 from the loader path (the driver's).",
        NULL},
    [IP_NVML_CFG_SYSFS] = {"INFPROF_ENERGY_SYSFS", IP_CFG_STR, "/sys", 0, 0, NULL,
        "Where the CPU's RAPL counters (class/powercap) and cpufreq files are read (tests).", NULL},
};
/* clang-format on */

static struct ip_cfg_value values[IP_NVML_CFG_COUNT];

const struct ip_cfg_group ip_nvml_cfg = {"energy", entries, values, IP_NVML_CFG_COUNT};

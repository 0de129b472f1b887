/*
 * cpu_config.c: the settings of the CPU time collector, with their defaults and docs: read at
 * start by the core (the collector's descriptor hands them over), written to the run's metadata
 * and listed by `infprof info`.
 */
#include "cpu_config.h"

#include <stddef.h>

/* clang-format off */
static const struct ip_cfg_entry entries[IP_CPU_CFG_COUNT] = {
    [IP_CPU_CFG_MS] = {"INFPROF_CPU_MS", IP_CFG_INT, "100", 0, 60000, NULL,
        "The process's CPU time (every thread, user and system, and our writer thread's share),"
        " read every this many ms by our writer thread, and at start and end: the report's CPU"
        " cores busy over time (docs/report.md). 0: off; under 20: 20 (the CPU clock moves in"
        " scheduler ticks of a few ms).", NULL},
};
/* clang-format on */

static struct ip_cfg_value values[IP_CPU_CFG_COUNT];

const struct ip_cfg_group ip_cpu_cfg = {"cpu", entries, values, IP_CPU_CFG_COUNT};

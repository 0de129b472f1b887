/*
 * nvml_cpu.c: the CPU's side of the energy collector: the package energy counters of RAPL
 * (<sysfs>/class/powercap/intel-rapl:N/energy_uj, summed over packages, wraps at
 * max_energy_range_uj undone) and the mean current clock of cpufreq
 * (<sysfs>/devices/system/cpu/cpuN/cpufreq/scaling_cur_freq). Files are opened and closed at
 * every reading, so the program never sees a descriptor of ours. Read on the sampler thread only.
 */
#include "nvml_internal.h"
#include "../profiler/clock.h"
#include "../profiler/fdguard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RAPL_MAX 8
#define CPU_MAX  256

static struct {
    char rapl[RAPL_MAX][200];
    int nrapl;
    uint64_t range[RAPL_MAX], last[RAPL_MAX], wraps[RAPL_MAX];
    char cpufreq[200]; /* the sysfs root, when cpufreq is readable */
    int ncpu;
} cs;

/* The number in a small file, or -1 (errno kept). */
static int64_t read_num(const char *path)
{
    /* Through the fd guard's gate, at a high number, closed past the program's close hook: a
     * program closing everything at that moment can neither close it nor lose a file to us. */
    int fd = ip_fdguard_open_own(path, O_RDONLY, 0);
    if (fd < 0) return -1;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int err = errno;
    ip_fdguard_close_own(fd);
    errno = err;
    if (n <= 0) return -1;
    buf[n] = 0;
    return strtoll(buf, NULL, 10);
}

int ip_energy_cpu_open(const char *sysfs, char *reason, size_t n)
{
    memset(&cs, 0, sizeof cs);
    char rapl_why[120] = "", freq_why[100] = "";
    int denied = 0;
    for (int p = 0; p < RAPL_MAX; p++) {
        char path[200];
        snprintf(path, sizeof path, "%s/class/powercap/intel-rapl:%d/energy_uj", sysfs, p);
        if (access(path, F_OK) != 0) break;
        int64_t v = read_num(path);
        if (v < 0) {
            if (errno == EACCES || errno == EPERM) denied = 1;
            continue;
        }
        snprintf(cs.rapl[cs.nrapl], sizeof cs.rapl[0], "%s", path);
        snprintf(path, sizeof path, "%s/class/powercap/intel-rapl:%d/max_energy_range_uj", sysfs,
                 p);
        int64_t range = read_num(path);
        cs.range[cs.nrapl] = range > 0 ? (uint64_t)range : 0;
        cs.last[cs.nrapl] = (uint64_t)v;
        cs.nrapl++;
    }
    if (cs.nrapl)
        snprintf(rapl_why, sizeof rapl_why, "RAPL %d package%s", cs.nrapl,
                 cs.nrapl == 1 ? "" : "s");
    else if (denied)
        snprintf(rapl_why, sizeof rapl_why,
                 "no energy: RAPL energy_uj not readable (root only since Linux 5.10)");
    else
        snprintf(rapl_why, sizeof rapl_why, "no energy: no RAPL under %s/class/powercap", sysfs);
    for (int c = 0; c < CPU_MAX; c++) {
        char path[300];
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", sysfs,
                 c);
        if (read_num(path) < 0) break;
        cs.ncpu = c + 1;
    }
    if (cs.ncpu) {
        snprintf(cs.cpufreq, sizeof cs.cpufreq, "%s", sysfs);
        snprintf(freq_why, sizeof freq_why, "cpufreq %d CPUs", cs.ncpu);
    } else {
        snprintf(freq_why, sizeof freq_why, "no clocks: cpufreq not readable under %s", sysfs);
    }
    snprintf(reason, n, "%s, %s", rapl_why, freq_why);
    return cs.nrapl || cs.ncpu;
}

void ip_energy_cpu_read(struct ip_energy_reading *r)
{
    memset(r, 0xff, sizeof *r);
    r->gpu = IP_ENERGY_CPU;
    if (cs.nrapl) {
        uint64_t total_uj = 0;
        for (int p = 0; p < cs.nrapl; p++) {
            int64_t v = read_num(cs.rapl[p]);
            if (v < 0) continue;
            if ((uint64_t)v < cs.last[p] && cs.range[p]) cs.wraps[p]++;
            cs.last[p] = (uint64_t)v;
            total_uj += (uint64_t)v + cs.wraps[p] * cs.range[p];
        }
        r->energy_mj = (int64_t)(total_uj / 1000);
    }
    if (cs.ncpu) {
        int64_t sum = 0, got = 0;
        for (int c = 0; c < cs.ncpu; c++) {
            char path[340];
            snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq",
                     cs.cpufreq, c);
            int64_t khz = read_num(path);
            if (khz > 0) sum += khz, got++;
        }
        if (got) r->sm_mhz = sum / got / 1000;
    }
    r->ts = ip_clock_now();
}

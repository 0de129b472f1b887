/*
 * nvml_cpu.c: the CPU's side of the energy collector: the package energy counters of RAPL
 * (<sysfs>/class/powercap/intel-rapl:N/energy_uj, summed over packages, wraps at
 * max_energy_range_uj undone) and the mean current clock of cpufreq
 * (<sysfs>/devices/system/cpu/cpuN/cpufreq/scaling_cur_freq, of at most IP_CPUFREQ_MAX CPUs
 * spread over all of them). The files are opened once, at start, before the program runs, at high
 * numbers registered with the fd guard (a program that closes everything closes none of them),
 * and read with pread: an open at every reading took the lowest free number for a moment, and a
 * program's close(0); open() then missed fd 0. Read on the sampler thread only.
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

#define RAPL_MAX       4
#define CPU_MAX        4096
#define IP_CPUFREQ_MAX 8

static struct {
    int rapl_fd[RAPL_MAX];
    int nrapl;
    uint64_t range[RAPL_MAX], last[RAPL_MAX], wraps[RAPL_MAX];
    int freq_fd[IP_CPUFREQ_MAX];
    int nfreq, ncpu;
} cs;

/* The number in an open small file, or -1. */
static int64_t pread_num(int fd)
{
    char buf[32];
    ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    return strtoll(buf, NULL, 10);
}

/* The number in a small file, or -1 (errno kept). */
static int64_t read_num(const char *path)
{
    /* Through the fd guard's gate, at a high number, closed past the program's close hook: a
     * program closing everything at that moment can neither close it nor lose a file to us. */
    char buf[32];
    if (ip_fdguard_read_own(path, buf, sizeof buf) <= 0) return -1;
    return strtoll(buf, NULL, 10);
}

int ip_energy_cpu_open(const char *sysfs, char *reason, size_t n)
{
    ip_energy_cpu_close();
    char rapl_why[120] = "", freq_why[100] = "";
    int denied = 0;
    for (int p = 0; p < 64 && cs.nrapl < RAPL_MAX; p++) {
        char path[200];
        snprintf(path, sizeof path, "%s/class/powercap/intel-rapl:%d/energy_uj", sysfs, p);
        if (access(path, F_OK) != 0) break;
        int fd = ip_fdguard_open_own(path, O_RDONLY, 0);
        int64_t v = pread_num(fd);
        if (v < 0) {
            if (errno == EACCES || errno == EPERM) denied = 1;
            ip_fdguard_close_own(fd);
            continue;
        }
        snprintf(path, sizeof path, "%s/class/powercap/intel-rapl:%d/max_energy_range_uj", sysfs,
                 p);
        int64_t range = read_num(path);
        cs.rapl_fd[cs.nrapl] = fd;
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
    /* How many CPUs have a readable clock, then a sample of them spread evenly. */
    char path[300];
    for (int c = 0; c < CPU_MAX; c++) {
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", sysfs,
                 c);
        if (access(path, R_OK) != 0) break;
        cs.ncpu = c + 1;
    }
    int want = cs.ncpu < IP_CPUFREQ_MAX ? cs.ncpu : IP_CPUFREQ_MAX;
    for (int k = 0; k < want; k++) {
        int c = (int)((long)k * cs.ncpu / want);
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", sysfs,
                 c);
        int fd = ip_fdguard_open_own(path, O_RDONLY, 0);
        if (pread_num(fd) < 0) {
            ip_fdguard_close_own(fd);
            continue;
        }
        cs.freq_fd[cs.nfreq++] = fd;
    }
    if (cs.nfreq)
        snprintf(freq_why, sizeof freq_why, "cpufreq %d CPUs%s", cs.ncpu,
                 cs.nfreq < cs.ncpu ? " (a sample read)" : "");
    else
        snprintf(freq_why, sizeof freq_why, "no clocks: cpufreq not readable under %s", sysfs);
    snprintf(reason, n, "%s, %s", rapl_why, freq_why);
    return cs.nrapl || cs.nfreq;
}

void ip_energy_cpu_close(void)
{
    for (int p = 0; p < cs.nrapl; p++) ip_fdguard_close_own(cs.rapl_fd[p]);
    for (int k = 0; k < cs.nfreq; k++) ip_fdguard_close_own(cs.freq_fd[k]);
    memset(&cs, 0, sizeof cs);
}

void ip_energy_cpu_forget(void)
{
    memset(&cs, 0, sizeof cs); /* a forked child: the guard let go of the parent's descriptors */
}

void ip_energy_cpu_read(struct ip_energy_reading *r)
{
    memset(r, 0xff, sizeof *r);
    r->gpu = IP_ENERGY_CPU;
    if (cs.nrapl) {
        uint64_t total_uj = 0;
        for (int p = 0; p < cs.nrapl; p++) {
            int64_t v = pread_num(cs.rapl_fd[p]);
            if (v < 0) continue;
            if ((uint64_t)v < cs.last[p] && cs.range[p]) cs.wraps[p]++;
            cs.last[p] = (uint64_t)v;
            total_uj += (uint64_t)v + cs.wraps[p] * cs.range[p];
        }
        r->energy_mj = (int64_t)(total_uj / 1000);
    }
    if (cs.nfreq) {
        int64_t sum = 0, got = 0;
        for (int k = 0; k < cs.nfreq; k++) {
            int64_t khz = pread_num(cs.freq_fd[k]);
            if (khz > 0) sum += khz, got++;
        }
        if (got) r->sm_mhz = sum / got / 1000;
    }
    r->ts = ip_clock_now();
}

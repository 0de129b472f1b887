/*
 * cpu_limits.c: what bounds the process's CPU time beside the CPUs online (the cpu collector's
 * part, cpu.c): the CPUs it may run on (sched_getaffinity: taskset, a container's cpuset), its
 * cgroup's CPU quota (v2 cpu.max; v1 cpu.cfs_quota_us over cpu.cfs_period_us) and how much that
 * quota held it back (cpu.stat: periods, periods throttled, time throttled), read at the start
 * and with each CPU reading. A container's CPU limit stops every thread of the cgroup for the rest
 * of a period once they used its quota: slow iterations that no allocation, operator or kernel
 * explains, the report's Tail guess (report/run/tails.c).
 *
 * Writer thread only. One descriptor of ours, cpu.stat's, opened at the start through fdguard (at
 * a high number, close-on-exec) and read with pread, kept only where the cgroup has a quota.
 */
#include "cpu_limits.h"
#include "../profiler/fdguard.h"
#include "../profiler/store.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    int fd;                            /* cpu.stat, -1 none */
    int v2;                            /* its keys: throttled_usec (v2), throttled_time (v1) */
    int64_t quota_milli;               /* the quota in thousandths of a core, 0 none */
    int64_t periods0, throttled0, ns0; /* cpu.stat at the start */
} cl = {.fd = -1};

/* The process's cgroup directory holding file `name`: v2 ("0::/path" in /proc/self/cgroup) under
 * /sys/fs/cgroup, v1 the cpu controller's ("N:cpu,cpuacct:/path") under its usual mounts; the
 * path itself first, then the mount's root (a container that sees its own cgroup at the root of
 * an unshared mount). 1 when found (dir filled). */
static int cgroup_dir(const char *name, char dir[4096], int *v2)
{
    char text[4096];
    if (ip_fdguard_read_own("/proc/self/cgroup", text, sizeof text) <= 0) return 0;
    static const char *const v1_mounts[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
                                            "/sys/fs/cgroup/cpuacct,cpu"};
    char *save = NULL; /* strtok_r: a program thread's strtok keeps its own place */
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        const char *path = c2 + 1;
        int is_v2 = c2 == c1 + 1; /* "0::/path" */
        if (!is_v2) {
            *c2 = 0; /* the controllers, comma-separated */
            int cpu = 0;
            for (char *k = c1 + 1; *k && !cpu;) {
                size_t n = strcspn(k, ",");
                cpu = n == 3 && !strncmp(k, "cpu", 3);
                k += n + (k[n] == ',');
            }
            if (!cpu) continue;
        }
        size_t nm = is_v2 ? 1 : sizeof v1_mounts / sizeof *v1_mounts;
        for (size_t m = 0; m < nm; m++) {
            const char *mount = is_v2 ? "/sys/fs/cgroup" : v1_mounts[m];
            for (int root = 0; root < 2; root++) {
                char probe[8300];
                snprintf(dir, 4096, "%s%s", mount, root || !strcmp(path, "/") ? "" : path);
                snprintf(probe, sizeof probe, "%s/%s", dir, name);
                if (!access(probe, R_OK)) {
                    *v2 = is_v2;
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* The quota in thousandths of a core (0: none, "max" or -1). */
static int64_t quota_of(const char *dir, int v2)
{
    char path[4200], text[128];
    long long q = -1, p = 0;
    if (v2) {
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        if (ip_fdguard_read_own(path, text, sizeof text) <= 0 ||
            sscanf(text, "%lld %lld", &q, &p) != 2)
            return 0; /* "max 100000" reads no number */
    } else {
        snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
        if (ip_fdguard_read_own(path, text, sizeof text) <= 0) return 0;
        q = strtoll(text, NULL, 10);
        snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
        if (ip_fdguard_read_own(path, text, sizeof text) <= 0) return 0;
        p = strtoll(text, NULL, 10);
    }
    return q > 0 && p > 0 ? (int64_t)(1000.0 * (double)q / (double)p + 0.5) : 0;
}

/* cpu.stat now: periods, periods throttled, time throttled (ns). 0 when unreadable. */
static int stat_read(int64_t *periods, int64_t *throttled, int64_t *ns)
{
    char text[1024];
    if (cl.fd < 0) return 0;
    ssize_t n = pread(cl.fd, text, sizeof text - 1, 0);
    if (n <= 0) return 0;
    text[n] = 0;
    int got = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        long long v;
        char key[64];
        if (sscanf(line, "%63s %lld", key, &v) != 2) continue;
        if (!strcmp(key, "nr_periods")) *periods = v, got |= 1;
        if (!strcmp(key, "nr_throttled")) *throttled = v, got |= 2;
        if (cl.v2 && !strcmp(key, "throttled_usec")) *ns = v * 1000, got |= 4;
        if (!cl.v2 && !strcmp(key, "throttled_time")) *ns = v, got |= 4;
    }
    return got == 7;
}

void ip_cpu_limits_prepare(struct ip_store *s)
{
    cpu_set_t set;
    if (!sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 0)
        ip_store_meta_int(s, "cpus_allowed", CPU_COUNT(&set));
    if (cl.fd < 0) { /* a forked child keeps its parent's (the same cgroup) */
        char dir[4096];
        if (!cgroup_dir("cpu.stat", dir, &cl.v2)) return;
        cl.quota_milli = quota_of(dir, cl.v2);
        if (!cl.quota_milli) return; /* nothing holds it back: no descriptor kept */
        char path[4200];
        snprintf(path, sizeof path, "%s/cpu.stat", dir);
        cl.fd = ip_fdguard_open_own(path, O_RDONLY, 0);
    }
    if (cl.quota_milli > 0) ip_store_meta_int(s, "cpu_quota_milli", cl.quota_milli);
    if (!stat_read(&cl.periods0, &cl.throttled0, &cl.ns0)) cl.periods0 = -1;
}

int64_t ip_cpu_limits_throttled_ns(void)
{
    int64_t p, t, ns;
    if (cl.periods0 < 0 || !cl.quota_milli || !stat_read(&p, &t, &ns)) return -1;
    return ns - cl.ns0 >= 0 ? ns - cl.ns0 : -1;
}

void ip_cpu_limits_finish(struct ip_store *s, char *words, size_t size)
{
    int64_t p, t, ns;
    words[0] = 0;
    if (cl.periods0 < 0 || !cl.quota_milli || !stat_read(&p, &t, &ns)) return;
    p -= cl.periods0, t -= cl.throttled0, ns -= cl.ns0;
    if (p < 0 || t < 0 || ns < 0) return; /* counters that went back: another cgroup */
    ip_store_meta_int(s, "cpu_periods", p);
    ip_store_meta_int(s, "cpu_throttled_periods", t);
    ip_store_meta_int(s, "cpu_throttled_ns", ns);
    snprintf(words, size,
             "; the cgroup's CPU quota, %.2f cores, held the process back in %lld of the %lld"
             " periods recorded (%.1f ms, summed over CPUs)",
             (double)cl.quota_milli / 1000.0, (long long)t, (long long)p, (double)ns / 1e6);
}

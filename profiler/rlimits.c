/*
 * rlimits.c: profiling stays off, with one line, where it would take what the program's
 * resource limits leave it (rlimits.h). Read once at start, before any descriptor, thread or
 * mapping of ours exists.
 */
#include "rlimits.h"
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

static int lim_privileged(void)
{
    /* CAP_SYS_RESOURCE or CAP_SYS_ADMIN: RLIMIT_NPROC does not bind (the kernel's rule). */
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    if (syscall(SYS_capget, &h, d) != 0) return geteuid() == 0;
    return (d[0].effective & (1u << CAP_SYS_RESOURCE)) || (d[0].effective & (1u << CAP_SYS_ADMIN));
}

static void lim_size(char *out, size_t n, unsigned long long bytes)
{
    if (bytes >= (1ull << 30))
        snprintf(out, n, "%.1f GiB", bytes / 1073741824.0);
    else if (bytes >= (1ull << 20))
        snprintf(out, n, "%.1f MiB", bytes / 1048576.0);
    else
        snprintf(out, n, "%llu KiB", bytes >> 10);
}

int ip_limits_check(const char *output_dir, char *why, size_t n)
{
    struct rlimit rl;
    char a[32], b[32];
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < IP_LIMIT_MIN_NOFILE) {
        snprintf(why, n,
                 "the descriptor limit (ulimit -n) is %llu: infprof's descriptors would come"
                 " out of the program's (it needs %d or more)",
                 (unsigned long long)rl.rlim_cur, IP_LIMIT_MIN_NOFILE);
        return -1;
    }
    if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < IP_LIMIT_MIN_NPROC && !lim_privileged()) {
        snprintf(why, n,
                 "the process limit (ulimit -u) is %llu: infprof's thread would come out of the"
                 " program's (it needs %d or more)",
                 (unsigned long long)rl.rlim_cur, IP_LIMIT_MIN_NPROC);
        return -1;
    }
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < IP_LIMIT_MIN_AS) {
        lim_size(a, sizeof a, rl.rlim_cur);
        lim_size(b, sizeof b, IP_LIMIT_MIN_AS);
        snprintf(why, n,
                 "the address-space limit (ulimit -v) is %s: infprof's buffers and thread would"
                 " come out of the program's (it needs %s or more)",
                 a, b);
        return -1;
    }
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < IP_LIMIT_MIN_FSIZE) {
        lim_size(a, sizeof a, rl.rlim_cur);
        lim_size(b, sizeof b, IP_LIMIT_MIN_FSIZE);
        snprintf(why, n,
                 "the file-size limit (ulimit -f) is %s: the database could not grow (it needs %s"
                 " or more)",
                 a, b);
        return -1;
    }
    unsigned long long reserve = (unsigned long long)ip_cfg_int(IP_CFG_DISK_RESERVE_MB) << 20;
    struct statvfs vfs;
    /* A device or system path is refused by name where the file is claimed (output.c). */
    int system =
        output_dir && (!strncmp(output_dir, "/dev", 4) || !strncmp(output_dir, "/proc", 5) ||
                       !strncmp(output_dir, "/sys", 4));
    if (reserve && output_dir && !system && statvfs(output_dir, &vfs) == 0) {
        unsigned long long avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
        if (avail < 2 * reserve) {
            lim_size(a, sizeof a, avail);
            lim_size(b, sizeof b, reserve);
            snprintf(why, n,
                     "%s free on the disk of %s, below twice the %s infprof leaves to the"
                     " program (INFPROF_DISK_RESERVE_MB)",
                     a, output_dir, b);
            return -1;
        }
    }
    return 0;
}

int ip_limits_disk_low(const char *path, unsigned long long pending)
{
    unsigned long long reserve = (unsigned long long)ip_cfg_int(IP_CFG_DISK_RESERVE_MB) << 20;
    struct statvfs vfs;
    if (!reserve || !path || !path[0] || statvfs(path, &vfs) != 0) return 0;
    return (unsigned long long)vfs.f_bavail * vfs.f_frsize < reserve + pending;
}

int ip_limits_file_full(const char *path, unsigned long long pending)
{
    struct rlimit rl;
    if (!path || !path[0] || getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    unsigned long long limit = (unsigned long long)rl.rlim_cur, have = pending;
    unsigned long long reserve = limit / 8;
    if (reserve < IP_LIMIT_FSIZE_RESERVE_MIN) reserve = IP_LIMIT_FSIZE_RESERVE_MIN;
    if (reserve > IP_LIMIT_FSIZE_RESERVE_MAX) reserve = IP_LIMIT_FSIZE_RESERVE_MAX;
    struct stat st;
    char wal[PATH_MAX + 8];
    if (stat(path, &st) == 0) have += (unsigned long long)st.st_size;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &st) == 0) have += (unsigned long long)st.st_size;
    return have + reserve >= limit;
}

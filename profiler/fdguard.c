/*
 * fdguard.c: our database can never become someone else's file (fdguard.h).
 *
 * A daemon-like program closes every descriptor from 3 up and then opens files of its own; the
 * kernel hands it the lowest free numbers, which were ours, and SQLite would then write its pages
 * into the program's file. Two defences:
 *  1. The descriptors of the database, its WAL and its shared-memory index are registered the
 *     moment SQLite opens them (store_vfs.c); the close, close_range and closefrom hooks
 *     (preload.c) leave them open and report success, as if they had been closed. The program
 *     cannot tell: it never knew them.
 *  2. Every write and truncation SQLite makes goes through a thin VFS (store_vfs.c) that first
 *     checks each registered descriptor still names the file it named (device and inode); if one
 *     does not (a raw syscall, a dup2 onto it), nothing is written and the store stops, once,
 *     with one warning.
 */
#include "fdguard.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GUARD_MAX IP_FDGUARD_MAX

/* Registered descriptors. A slot's fd is -1 once forgotten; readers (the close hooks, any
 * thread) take no lock; adders and forgetters hold guard_lock. */
static struct {
    _Atomic int fd;
    dev_t dev;
    ino_t ino;
} guard[GUARD_MAX];
static _Atomic int guard_n;
static _Atomic int guard_broken;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the gate: no program close while one of ours sits at a number not yet registered ------
 * Two flags in Dekker's pattern (sequentially consistent atomics): the opener raises
 * gate_owner and then waits for closers in flight to leave; a closer counts itself in and
 * then looks at gate_owner, stepping out and waiting while it is raised. One of the two
 * always sees the other. The opener's section is a few system calls long. */
static _Atomic int gate_owner, gate_closers;
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int gate_mine __attribute__((tls_model("initial-exec")));

void ip_fdguard_own_begin(void)
{
    pthread_mutex_lock(&gate_lock);
    atomic_store(&gate_owner, 1);
    gate_mine = 1;
    /* A close in flight takes microseconds; one that blocks (a socket lingering, a network file
     * flushing) is waited for at most a second: then the open goes ahead. */
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&gate_closers)) {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 1) break;
    }
}

void ip_fdguard_own_end(void)
{
    gate_mine = 0;
    atomic_store(&gate_owner, 0);
    pthread_mutex_unlock(&gate_lock);
}

void ip_fdguard_close_enter(void)
{
    if (gate_mine) return; /* a signal handler on the opener's own thread: it cannot wait */
    for (;;) {
        atomic_fetch_add(&gate_closers, 1);
        if (!atomic_load(&gate_owner)) return;
        atomic_fetch_sub(&gate_closers, 1);
        while (atomic_load(&gate_owner)) sched_yield();
    }
}

void ip_fdguard_close_leave(void)
{
    if (!gate_mine) atomic_fetch_sub(&gate_closers, 1);
}

/* ---- high numbers ------------------------------------------------------------------------- */

static _Atomic int high_min = -1;

int ip_fdguard_high_min(void)
{
    int m = atomic_load(&high_min);
    if (m >= 0) return m;
    /* 32 below the soft limit, at most 1024 - 32 (a table of a million descriptors would cost
     * the process memory); none under a limit below 256. */
    struct rlimit rl;
    m = 0;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= 256)
        m = (int)(rl.rlim_cur < 1024 ? rl.rlim_cur : 1024) - 32;
    atomic_store(&high_min, m);
    return m;
}

int ip_fdguard_move_up(int fd, int cloexec)
{
    int min = ip_fdguard_high_min();
    if (fd < 0 || fd >= min || !min) return fd;
    int high = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, min);
    if (high < 0) return fd; /* none free up there: it stays where it is, registered */
    syscall(SYS_close, fd);
    return high;
}

int ip_fdguard_open_own(const char *path, int flags, int mode)
{
    ip_fdguard_own_begin();
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
    int err = errno;
    fd = ip_fdguard_move_up(fd, 1);
    if (fd >= 0) ip_fdguard_add(fd);
    ip_fdguard_own_end();
    errno = err;
    return fd;
}

ssize_t ip_fdguard_read_own(const char *path, char *buf, size_t size)
{
    if (!size) return -1;
    buf[0] = 0;
    int fd = ip_fdguard_open_own(path, O_RDONLY, 0);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, size - 1);
    int err = errno;
    ip_fdguard_close_own(fd);
    errno = err;
    buf[n > 0 ? n : 0] = 0;
    return n;
}

/* ---- the table ---------------------------------------------------------------------------- */

static int guard_wanted(const char *target, const char *base)
{
    size_t n = strlen(base);
    return strncmp(target, base, n) == 0 &&
           (!target[n] || !strcmp(target + n, "-wal") || !strcmp(target + n, "-shm"));
}

static int guard_listed(int fd)
{
    int n = atomic_load_explicit(&guard_n, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (atomic_load_explicit(&guard[i].fd, memory_order_relaxed) == fd) return 1;
    return 0;
}

static void guard_put(int fd, const struct stat *st)
{
    int n = atomic_load(&guard_n), slot = n;
    for (int i = 0; i < n; i++)
        if (atomic_load(&guard[i].fd) < 0) {
            slot = i;
            break;
        }
    if (slot >= GUARD_MAX) return;
    guard[slot].dev = st->st_dev;
    guard[slot].ino = st->st_ino;
    atomic_store_explicit(&guard[slot].fd, fd, memory_order_release);
    if (slot == n) atomic_store_explicit(&guard_n, n + 1, memory_order_release);
}

void ip_fdguard_protect(const char *path)
{
    char base[PATH_MAX];
    if (!realpath(path, base)) return;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return;
    pthread_mutex_lock(&guard_lock);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char link[300], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%.255s", e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = 0;
        int fd = atoi(e->d_name);
        struct stat st;
        if (fd == dirfd(d) || !guard_wanted(target, base) || guard_listed(fd) ||
            fstat(fd, &st) != 0)
            continue;
        guard_put(fd, &st);
    }
    pthread_mutex_unlock(&guard_lock);
    closedir(d);
}

void ip_fdguard_add(int fd)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return;
    pthread_mutex_lock(&guard_lock);
    if (!guard_listed(fd)) guard_put(fd, &st);
    pthread_mutex_unlock(&guard_lock);
}

static void guard_forget(int fd)
{
    pthread_mutex_lock(&guard_lock);
    int n = atomic_load(&guard_n);
    for (int i = 0; i < n; i++)
        if (atomic_load(&guard[i].fd) == fd) atomic_store(&guard[i].fd, -1);
    pthread_mutex_unlock(&guard_lock);
}

void ip_fdguard_release(void)
{
    atomic_store_explicit(&guard_n, 0, memory_order_release);
}

void ip_fdguard_reset(void)
{
    ip_fdguard_release();
    atomic_store(&guard_broken, 0);
}

/* Slot i still names the file it was registered with (a dup2 onto its number, or a raw close
 * and a new open there, makes the number the program's). */
static int guard_still(int i, int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == guard[i].dev && st.st_ino == guard[i].ino;
}

int ip_fdguard_is_ours(int fd)
{
    if (fd < 0) return 0;
    int n = atomic_load_explicit(&guard_n, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (atomic_load_explicit(&guard[i].fd, memory_order_acquire) == fd)
            return guard_still(i, fd);
    return 0;
}

int ip_fdguard_count(void)
{
    return atomic_load_explicit(&guard_n, memory_order_acquire);
}

int ip_fdguard_fd(int i)
{
    int fd = atomic_load_explicit(&guard[i].fd, memory_order_acquire);
    return fd >= 0 && guard_still(i, fd) ? fd : -1;
}

int ip_fdguard_intact(void)
{
    if (atomic_load(&guard_broken)) return 0;
    int n = atomic_load_explicit(&guard_n, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        int fd = atomic_load_explicit(&guard[i].fd, memory_order_acquire);
        if (fd < 0) continue;
        if (!guard_still(i, fd)) {
            if (!atomic_exchange(&guard_broken, 1))
                ip_warn("the program closed or replaced the profile database's file descriptor"
                        " %d: infprof stopped writing (the program's file was not touched)",
                        fd);
            return 0;
        }
    }
    return 1;
}

void ip_fdguard_atfork_child(void)
{
    /* The parent's database is the parent's: the child lets go of its copies of those
     * descriptors (the parent's locks are the parent's and stay), so that a child that closes
     * everything, or that never does, holds none of them. The gate's state may have been
     * copied mid-section from another thread: it starts over. */
    pthread_mutex_init(&gate_lock, NULL);
    pthread_mutex_init(&guard_lock, NULL);
    atomic_store(&gate_owner, 0);
    atomic_store(&gate_closers, 0);
    gate_mine = 0;
    int n = atomic_load(&guard_n);
    for (int i = 0; i < n; i++) {
        int fd = atomic_load(&guard[i].fd);
        if (fd >= 0 && guard_still(i, fd)) syscall(SYS_close, fd);
    }
    ip_fdguard_reset();
}

void ip_fdguard_close_own(int fd)
{
    if (fd < 0) return;
    guard_forget(fd);
    syscall(SYS_close, fd);
}

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
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GUARD_MAX 8

static struct {
    int fd;
    dev_t dev;
    ino_t ino;
} guard[GUARD_MAX];
static _Atomic int guard_n;
static _Atomic int guard_broken;

static int guard_wanted(const char *target, const char *base)
{
    size_t n = strlen(base);
    return strncmp(target, base, n) == 0 &&
           (!target[n] || !strcmp(target + n, "-wal") || !strcmp(target + n, "-shm"));
}

void ip_fdguard_protect(const char *path)
{
    char base[PATH_MAX];
    if (!realpath(path, base)) return;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return;
    int n = atomic_load(&guard_n);
    struct dirent *e;
    while ((e = readdir(d)) && n < GUARD_MAX) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char link[300], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%.255s", e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = 0;
        int fd = atoi(e->d_name);
        struct stat st;
        if (fd == dirfd(d) || !guard_wanted(target, base) || ip_fdguard_is_ours(fd) ||
            fstat(fd, &st) != 0)
            continue;
        guard[n].fd = fd;
        guard[n].dev = st.st_dev;
        guard[n].ino = st.st_ino;
        n++;
    }
    closedir(d);
    atomic_store_explicit(&guard_n, n, memory_order_release);
}

void ip_fdguard_add(int fd)
{
    struct stat st;
    int n = atomic_load(&guard_n);
    if (n >= GUARD_MAX || ip_fdguard_is_ours(fd) || fstat(fd, &st) != 0) return;
    guard[n].fd = fd;
    guard[n].dev = st.st_dev;
    guard[n].ino = st.st_ino;
    atomic_store_explicit(&guard_n, n + 1, memory_order_release);
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

int ip_fdguard_is_ours(int fd)
{
    int n = atomic_load_explicit(&guard_n, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (guard[i].fd == fd) return 1;
    return 0;
}

int ip_fdguard_count(void)
{
    return atomic_load_explicit(&guard_n, memory_order_acquire);
}

int ip_fdguard_fd(int i)
{
    return guard[i].fd;
}

int ip_fdguard_intact(void)
{
    if (atomic_load(&guard_broken)) return 0;
    int n = atomic_load_explicit(&guard_n, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (fstat(guard[i].fd, &st) != 0 || st.st_dev != guard[i].dev ||
            st.st_ino != guard[i].ino) {
            if (!atomic_exchange(&guard_broken, 1))
                ip_warn("the program closed or replaced the profile database's file descriptor"
                        " %d: infprof stopped writing (the program's file was not touched)",
                        guard[i].fd);
            return 0;
        }
    }
    return 1;
}

void ip_fdguard_atfork_child(void)
{
    /* The parent's database is the parent's: the child may close those descriptors. */
    ip_fdguard_reset();
}

void ip_fdguard_close_own(int fd)
{
    if (fd >= 0) syscall(SYS_close, fd);
}

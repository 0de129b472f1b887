/*
 * runsig.c: the page `infprof run` shares with its program so that a signal reaches the program
 * once (runsig.h): made by the run (a memfd), mapped by the library in the run's own child,
 * written in the program's signal handlers, read in the run's.
 */
#include "runsig.h"
#include "fdguard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RUNSIG_MAGIC 0x67737069u /* "ipsg" */

struct runsig_page {
    uint32_t magic;
    int32_t parent;           /* the run's pid: only its own child notes */
    _Atomic uint32_t handled; /* bit per signal: the child's handler is the program's own */
    _Atomic int64_t when[32]; /* per signal: the last receipt (CLOCK_MONOTONIC ns), 0 none */
    _Atomic int32_t from[32]; /* and its sender (si_pid; 0 the kernel's or unknown) */
};

static struct runsig_page *_Atomic runsig_mine; /* the library's mapping */

int64_t runsig_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct runsig_page *runsig_create(char *env, size_t n)
{
    if (n) env[0] = 0;
    int fd = memfd_create("infprof-run-signals", MFD_CLOEXEC);
    if (fd < 0) return NULL;
    struct runsig_page *pg = MAP_FAILED;
    if (ftruncate(fd, sizeof *pg) == 0)
        pg = mmap(NULL, sizeof *pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (pg == MAP_FAILED || (size_t)snprintf(env, n, "%d:%d", (int)getpid(), fd) >= n) {
        if (pg != MAP_FAILED) munmap(pg, sizeof *pg);
        close(fd);
        if (n) env[0] = 0;
        return NULL;
    }
    pg->parent = (int32_t)getpid();
    pg->magic = RUNSIG_MAGIC;
    return pg; /* fd stays open (close-on-exec) for the child to open through /proc */
}

int runsig_attach(void)
{
    const char *v = getenv(RUNSIG_ENV);
    char *end;
    if (!v || !*v || atomic_load(&runsig_mine)) return 0;
    long pid = strtol(v, &end, 10);
    if (*end != ':' || pid <= 1 || pid != (long)getppid()) return 0; /* not the run's child */
    long fd = strtol(end + 1, &end, 10);
    if (*end || fd < 0) return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%ld", pid, fd);
    ip_fdguard_own_begin(); /* a program's close cannot take the number while it is ours */
    int f = open(path, O_RDWR | O_CLOEXEC);
    void *m = MAP_FAILED;
    if (f >= 0) {
        m = mmap(NULL, sizeof(struct runsig_page), PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
        close(f);
    }
    ip_fdguard_own_end();
    if (m == MAP_FAILED) return 0;
    struct runsig_page *pg = m;
    if (pg->magic != RUNSIG_MAGIC || pg->parent != (int32_t)pid) {
        munmap(m, sizeof *pg);
        return 0;
    }
    atomic_store(&pg->handled, 0); /* an image this one replaced had its own handlers */
    atomic_store(&runsig_mine, pg);
    return 1;
}

int runsig_attached(void)
{
    return atomic_load_explicit(&runsig_mine, memory_order_relaxed) != NULL;
}

void runsig_note(int sig, const siginfo_t *si)
{
    struct runsig_page *pg = atomic_load(&runsig_mine);
    if (!pg || sig <= 0 || sig >= 32 || !(RUNSIG_SET & (1u << sig))) return;
    int saved = errno;
    if (getppid() == pg->parent) { /* not a process the program forked */
        atomic_store(&pg->from[sig], si ? (int32_t)si->si_pid : 0);
        atomic_store(&pg->when[sig], runsig_now_ns());
    }
    errno = saved;
}

void runsig_handled(int sig, int on)
{
    struct runsig_page *pg = atomic_load(&runsig_mine);
    if (!pg || sig <= 0 || sig >= 32 || getppid() != pg->parent) return;
    if (on)
        atomic_fetch_or(&pg->handled, 1u << sig);
    else
        atomic_fetch_and(&pg->handled, ~(1u << sig));
}

/* The 64-bit hexadecimal mask after `key` in the text of /proc/PID/status; 0 none. */
static uint64_t status_mask(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    if (!p) return 0;
    p += strlen(key);
    while (*p == ' ' || *p == '\t') p++;
    uint64_t v = 0;
    for (;; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0) return v;
        v = v << 4 | (uint64_t)d;
    }
}

/* From /proc/child/status: sig pending there (1), not caught there (2: its default action or
 * ignored, where a second delivery changes nothing), caught and not pending (0); -1 unreadable. */
static int child_state(pid_t child, int sig)
{
    char path[64], text[4096]; /* about 1.5 KB; past it (a long Groups line), passed on */
    snprintf(path, sizeof path, "/proc/%d/status", (int)child);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t got = 0, r;
    while (got < (ssize_t)sizeof text - 1 &&
           (r = read(fd, text + got, sizeof text - 1 - (size_t)got)) > 0)
        got += r;
    close(fd);
    text[got > 0 ? got : 0] = 0;
    uint64_t bit = 1ull << (sig - 1);
    if ((status_mask(text, "\nSigPnd:") | status_mask(text, "\nShdPnd:")) & bit) return 1;
    if (!strstr(text, "\nSigCgt:")) return -1;
    return status_mask(text, "\nSigCgt:") & bit ? 0 : 2;
}

int runsig_child_got(struct runsig_page *pg, pid_t child, int sig, pid_t sender, int64_t since_ns)
{
    /* Where the program has no handler of its own, a second delivery changes nothing (it dies
     * of the first, or ignores both): passed on at once, as docker stop's must be. */
    if (!pg || child <= 0 || sig <= 0 || sig >= 32 || !(atomic_load(&pg->handled) & (1u << sig)))
        return 0;
    int saved = errno, got = 0;
    for (int waited = 0;; waited++) {
        int64_t when = atomic_load(&pg->when[sig]);
        if (when && when >= since_ns - (int64_t)RUNSIG_RECENT_MS * 1000000 &&
            atomic_load(&pg->from[sig]) == (int32_t)sender) {
            got = 1;
            break;
        }
        int st = child_state(child, sig);
        if (st == 1) got = 1;
        if (st != 0 || waited >= RUNSIG_WAIT_MS) break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    errno = saved;
    return got;
}

/*
 * run_signals.c: the run's side of the page it shares with its program (profiler/runsig.h): made
 * here (a memfd), read in the run's signal handler before a signal is passed on.
 */
#include "run_signals.h"
#include "../../profiler/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct runsig_page *run_signals_create(char *env, size_t n)
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

int run_signals_child_got(struct runsig_page *pg, pid_t child, int sig, pid_t sender,
                          int64_t since_ns)
{
    if (!pg || child <= 0 || sig <= 0 || sig >= 32) return 0;
    int saved = errno, got = 0;
    for (;;) {
        /* The child's state first, then the note, which its handler writes before it runs on:
         * one that set the default again as it ran ("clean up, then die of the next one") has no
         * handler of its own by now, and a second signal killed it (a fresh-eyes check: exit
         * -15 after 17 ms where it drained for 600 ms alone). */
        int st = child_state(child, sig);
        for (int k = 0; k < RUNSIG_NOTES && st != 1; k++) {
            int64_t when = atomic_load(&pg->when[sig][k]);
            if (when && when >= since_ns - (int64_t)RUNSIG_RECENT_MS * 1000000 &&
                atomic_load(&pg->from[sig][k]) == (int32_t)sender)
                st = 1;
        }
        if (st == 1) {
            got = 1;
            break;
        }
        /* Where the program has no handler of its own, a second delivery changes nothing (it
         * dies of the first, or ignores both): passed on at once, as docker stop's must be. */
        if (st != 0 || !(atomic_load(&pg->handled) & (1u << sig)) ||
            (int64_t)ip_clock_gettime() - since_ns >= (int64_t)RUNSIG_WAIT_MS * 1000000)
            break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    errno = saved;
    return got;
}

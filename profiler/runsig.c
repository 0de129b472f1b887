/*
 * runsig.c: the library's side of the page `infprof run` shares with its program so that a
 * signal reaches the program once (runsig.h): mapped in the run's own child, written in the
 * program's signal handlers (the run's side: report/cli/run_signals.c).
 */
#include "runsig.h"
#include "clock.h"
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

static struct runsig_page *_Atomic runsig_mine; /* the library's mapping */

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
    /* Through the fd guard's gate: a number the program could not close or be given. */
    int f = ip_fdguard_open_own(path, O_RDWR, 0);
    void *m = MAP_FAILED;
    if (f >= 0) {
        m = mmap(NULL, sizeof(struct runsig_page), PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
        ip_fdguard_close_own(f);
    }
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
        uint32_t k = atomic_fetch_add(&pg->next[sig], 1) % RUNSIG_NOTES;
        atomic_store(&pg->when[sig][k], 0); /* no reader pairs this sender with the old time */
        atomic_store(&pg->from[sig][k], si ? (int32_t)si->si_pid : 0);
        atomic_store(&pg->when[sig][k], (int64_t)ip_clock_gettime());
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

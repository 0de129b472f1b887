/*
 * writer.c: the writer thread (writer.h). One cycle: drain every ring, dispatching each event to
 * its owner (the core's phase tracker, or a collector by the type's high byte), then let each
 * collector flush what it holds (CUPTI buffers), then commit when due.
 *
 * Locking: writer_lock is held for a whole cycle; fork() takes it in its prepare handler so the
 * child never inherits SQLite mid-call. Nothing else takes it, and the writer never waits for an
 * application lock while holding it.
 */
#include "writer.h"
#include "attrib.h"
#include "clock.h"
#include "config.h"
#include "futex.h"
#include "iteration.h"
#include "collector.h"
#include "log.h"
#include "output.h"
#include "phase.h"
#include "ring.h"
#include "runinfo.h"
#include "store.h"
#include "process.h"
#include "rlimits.h"
#include "thread.h"
#include "watch.h"
#include "fdguard.h"
#include "store_vfs.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t writer_thread;
static _Atomic uint32_t writer_wake_seq;
static _Atomic uint32_t writer_final;
static _Atomic uint32_t writer_done;
static _Atomic int writer_alive;
static const char *_Atomic writer_end_reason;

static struct ip_store *writer_store;
static char writer_path[PATH_MAX];
static char writer_pattern[PATH_MAX];
static int writer_role, writer_lazy, writer_open_failed;
static uint64_t writer_t0, writer_last_commit;
/* Where the writer's time goes, per part of its cycle (meta writer_*_ns). */
static struct {
    uint64_t cycles, rings_ns, collectors_ns, commit_ns, max_cycle_ns, records;
} wt;

const char *ip_writer_path(void)
{
    return writer_path;
}

int ip_writer_running(void)
{
    return atomic_load(&writer_alive);
}

static void writer_dispatch(void *ctx, uint32_t tid, const struct ip_ev *ev)
{
    struct ip_store *s = ctx;
    unsigned owner = IP_EV_OWNER(ev->type);
    if (owner == IP_COLLECTOR_CORE) {
        if ((ev->type & 0xff) == IP_EV_CORE_PHASE) ip_phase_ingest(s, tid, ev);
        if ((ev->type & 0xff) == IP_EV_CORE_ATTRIB) ip_attrib_ingest(tid, ev);
        if ((ev->type & 0xff) == IP_EV_CORE_ITER_CPU) ip_iter_cpu_ingest(ev);
        ip_runinfo_thread_seen(s, tid, ev);
        return;
    }
    ip_runinfo_thread_seen(s, tid, ev);
    const struct ip_collector *c = ip_collector_at(owner);
    if (c && c->ingest) c->ingest(s, tid, ev);
}

static void writer_discard(void *ctx, uint32_t tid, const struct ip_ev *ev)
{
    (void)ctx, (void)tid, (void)ev;
}

/* The disk of the database fell below INFPROF_DISK_RESERVE_MB (rlimits.h): from then on the
 * writer drains and counts, stores nothing more, and still writes the end. */
static uint64_t writer_reserve_hit_ns;

static void writer_count_lost(void *ctx, uint32_t tid, const struct ip_ev *ev)
{
    (void)ctx, (void)tid, (void)ev;
    ip_ring_note_lost(1);
}

/* Checked between turns over the rings and before every commit, with what the commit may
 * write (the page cache) counted as already gone. 1 once the reserve is reached. */
static uint64_t writer_disk_checked_ns;
static int writer_disk_low(struct ip_store *s, uint64_t now)
{
    if (writer_reserve_hit_ns) return 1;
    if (now - writer_disk_checked_ns < 1000000ull) return 0; /* a statvfs a millisecond at most */
    writer_disk_checked_ns = now;
    if (ip_limits_file_full(writer_path, ip_store_uncommitted_bytes(s))) {
        /* The WAL's file keeps its largest size: folded and emptied, the room may be there. */
        ip_store_commit(s);
        int folded = ip_store_fold_wal(s) == 0;
        ip_store_begin(s);
        if (folded && !ip_limits_file_full(writer_path, 0)) return 0;
    }
    uint64_t pending = ip_store_pending_bytes(s);
    if (ip_limits_file_full(writer_path, ip_store_uncommitted_bytes(s))) {
        /* Before a commit fails on it: a failed commit loses its rows, and one at the end the
         * run's end itself (its counters, the finished flag). */
        writer_reserve_hit_ns = now;
        ip_warn("%s came near the file-size limit (ulimit -f): recording stopped (what follows"
                " is counted as dropped, not stored)",
                writer_path);
        ip_store_meta_int(s, "file_size_stop_ns", ip_store_rel(s, now));
        return 1;
    }
    if (!ip_limits_disk_low(writer_path, pending)) return 0;
    writer_reserve_hit_ns = now;
    ip_warn("the disk of %s has less than INFPROF_DISK_RESERVE_MB=%lld MiB free: recording"
            " stopped (what follows is counted as dropped, not stored)",
            writer_path, (long long)ip_cfg_int(IP_CFG_DISK_RESERVE_MB));
    ip_store_meta_int(s, "disk_reserve_stop_ns", ip_store_rel(s, now));
    return 1;
}

/* A thread needs room in its buffer: drain now. 0 when no writer runs to do it. */
static int writer_wake_for_ring(void)
{
    if (!atomic_load_explicit(&writer_alive, memory_order_relaxed) ||
        atomic_load_explicit(&writer_final, memory_order_relaxed) || !ip_process_owns())
        return 0;
    ip_writer_wake();
    return 1;
}

static void writer_meta(struct ip_store *s)
{
    ip_store_meta_int(s, "writer_cycles", (int64_t)wt.cycles);
    ip_store_meta_int(s, "writer_rings_ns", (int64_t)wt.rings_ns);
    ip_store_meta_int(s, "writer_collectors_ns", (int64_t)wt.collectors_ns);
    ip_store_meta_int(s, "writer_commit_ns", (int64_t)wt.commit_ns);
    ip_store_meta_int(s, "writer_max_cycle_ns", (int64_t)wt.max_cycle_ns);
    int source;
    uint64_t steps;
    int64_t max_error;
    ip_clock_summary(&source, &steps, &max_error);
    ip_store_meta_text(s, "clock_source",
                       source == 1    ? "tsc"
                       : source == -1 ? "clock_gettime (tsc given up)"
                                      : "clock_gettime");
    ip_store_meta_int(s, "clock_steps", (int64_t)steps);
    ip_store_meta_int(s, "clock_max_error_ns", max_error);
}

/* Create the output file (its name claimed). 0 on success; failures are said at once. */
static int writer_claim(void)
{
    if (writer_path[0]) return 0;
    if (ip_output_claim(writer_pattern, writer_role, writer_path, sizeof writer_path) == 0)
        return 0;
    writer_open_failed = 1;
    writer_path[0] = 0;
    return -1;
}

static int writer_open(void)
{
    if (writer_store || writer_open_failed) return writer_store != NULL;
    if (writer_claim() != 0 || !(writer_store = ip_store_open(writer_path, writer_t0))) {
        writer_open_failed = 1;
        writer_path[0] = 0;
        atomic_store(&ip_state_v, IP_STATE_OFF);
        return 0;
    }
    ip_info("writing %s", writer_path);
    if (writer_lazy) ip_store_lazy_batches(writer_store);
    ip_store_begin(writer_store);
    ip_runinfo_write_start(writer_store, writer_path, writer_role);
    ip_phase_prepare(writer_store);
    ip_attrib_prepare();
    ip_iter_prepare(writer_store);
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->prepare)
            ip_collector_at(i)->prepare(writer_store);
    ip_store_commit(writer_store);
    writer_last_commit = ip_clock_now();
    return 1;
}

/* Between turns over the rings: commit at least every IP_WRITER_BACKLOG_COMMIT_MS while a
 * backlog drains, so that no single commit stalls the writer (and the threads waiting on it)
 * for long. */
static _Atomic uint32_t writer_forks; /* fork()s waiting for the writer to leave */
/* 1: the thread left for a fork and is not back; 2: coming back. */
static _Atomic uint32_t writer_parked;
static int writer_resuming; /* the next thread continues the loop (no start, no open) */
/* The fork under way wants no thread of ours in the process (Python 3.12 and later): the
 * writer leaves instead of waiting; elsewhere it only lets the fork take writer_lock. */
static _Atomic int writer_fork_parks;
static uint64_t writer_late_written; /* ip_events_after_end as written at close */

/* A fork waits for the writer to be outside SQLite, never for a whole backlog: between turns
 * over the rings the drain stops and the thread leaves (parks) before the fork; what was not
 * drained waits in the rings. */
/* The finish's own deadline (ip_writer_stop): past it the last drain stops storing, counts what is
 * left as dropped and writes the end, so a backlog larger than the time allowed never costs the
 * run its end. */
static _Atomic uint64_t writer_soft_deadline;
static uint64_t writer_cut_ns;

/* The cycle's drain stopped before the rings were empty (a fork waiting, the finish's deadline,
 * the disk's reserve): what the collectors flush then may have been issued by events still in
 * the rings. */
static int writer_drain_cut;

static int writer_between_turns(void *ctx)
{
    if (atomic_load(&writer_forks)) return writer_drain_cut = 1;
    struct ip_store *s = ctx;
    uint64_t now = ip_clock_now();
    uint64_t soft = atomic_load(&writer_soft_deadline);
    if (soft && now >= soft) {
        writer_cut_ns = now;
        return writer_drain_cut = 1;
    }
    if (writer_disk_low(s, now)) return writer_drain_cut = 1; /* counted by the next cycles */
    if (now - writer_last_commit < IP_WRITER_BACKLOG_COMMIT_MS * 1000000ull) return 0;
    ip_store_commit(s);
    ip_store_begin(s);
    uint64_t done = ip_clock_now();
    wt.commit_ns += done - now;
    wt.rings_ns -= done - now; /* counted as commit time, not ring time */
    writer_last_commit = done;
    return 0;
}

static void writer_cycle(int final)
{
    if (!writer_store && writer_lazy) {
        struct ip_ring_totals t;
        ip_ring_totals(&t);
        if (t.appended + t.dropped == 0) return; /* nothing happened here yet: no file */
    }
    if (!writer_open()) {
        ip_ring_drain_all(writer_discard, NULL, NULL);
        return;
    }
    struct ip_store *s = writer_store;
    uint64_t t0 = ip_clock_now();
    if (writer_reserve_hit_ns) {
        ip_ring_drain_all(writer_count_lost, NULL, NULL);
        if (final) writer_meta(s), ip_runinfo_write_counters(s);
        return;
    }
    ip_store_begin(s);
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->snapshot) ip_collector_at(i)->snapshot();
    writer_drain_cut = 0;
    wt.records += ip_ring_drain_all(writer_dispatch, s, writer_between_turns);
    uint64_t t1 = ip_clock_now();
    /* A drain cut short (or stopped by the fork's stop word) leaves events in the rings that
     * issued what a collector holds: a kernel read before its launch's event would lose its
     * phase, iteration and cuDNN call. The collectors flush after the next, full drain (the
     * last cycle always). */
    int cut = writer_drain_cut || atomic_load(&writer_forks);
    for (int i = 0; i < ip_collector_count() && (!cut || final); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->flush) ip_collector_at(i)->flush(s, final);
    uint64_t t2 = ip_clock_now();
    writer_disk_low(s, t2);
    if (final || (t2 - writer_last_commit >= IP_WRITER_COMMIT_MS * 1000000ull &&
                  !atomic_load(&writer_forks))) {
        writer_meta(s);
        ip_runinfo_write_counters(s);
        ip_store_commit(s);
        writer_last_commit = t2;
    }
    uint64_t t3 = ip_clock_now();
    wt.cycles++;
    wt.rings_ns += t1 - t0;
    wt.collectors_ns += t2 - t1;
    wt.commit_ns += t3 - t2;
    if (t3 - t0 > wt.max_cycle_ns) wt.max_cycle_ns = t3 - t0;
}

static void writer_close(void)
{
    struct ip_store *s = writer_store;
    if (!s) return;
    if (writer_cut_ns) {
        /* What the deadline left in the buffers: counted, not stored. */
        struct ip_ring_totals before, after;
        ip_ring_totals(&before);
        ip_ring_drain_all(writer_count_lost, NULL, NULL);
        ip_ring_totals(&after);
        ip_store_meta_int(s, "finish_cut_ns", ip_store_rel(s, writer_cut_ns));
        ip_store_hurry(s);
        ip_info("the finish ran out of time (INFPROF_FINISH_TIMEOUT_MS): the last %llu events are"
                " counted as dropped, not stored",
                (unsigned long long)(after.lost - before.lost));
    }
    uint64_t end = ip_clock_now();
    ip_store_begin(s);
    ip_phase_finish(s, end);
    for (int i = 0; i < ip_collector_count(); i++)
        if (ip_collector_at(i) && ip_collector_at(i)->finish) ip_collector_at(i)->finish(s);
    ip_iter_finish(s); /* after the collectors' last records: every GPU end is known */
    writer_meta(s);
    writer_late_written = atomic_load(&ip_events_after_end);
    ip_store_meta_int(s, "events_after_end", (int64_t)writer_late_written);
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        ip_store_meta_int(s, "writer_cpu_ns", (int64_t)cpu.tv_sec * 1000000000 + cpu.tv_nsec);
    ip_runinfo_write_end(s, atomic_load(&writer_end_reason), end);
    ip_store_close(s);
    writer_store = NULL;
}

/* The collectors' ticks (collector.h): the earliest time one wants the next call, 0 none. */
static uint64_t writer_ticks(uint64_t now, int final)
{
    uint64_t due = 0;
    for (int i = 0; i < ip_collector_count(); i++) {
        const struct ip_collector *c = ip_collector_at(i);
        uint64_t t = c && c->tick ? c->tick(now, final) : 0;
        if (t && (!due || t < due)) due = t;
    }
    return due;
}

/* The writer's open at start: 1 while pending, then 0 (opened) or 2 (failed). */
static _Atomic uint32_t writer_boot;

/* ---- main ended with pthread_exit --------------------------------------------------------
 * The process lives on while any thread does, ours included: once the program's last thread is
 * gone, the writer finishes and ends the process as glibc's last thread would (exit(0)). The
 * group leader stays counted in /proc/self/stat while it is a zombie. */
static _Atomic int writer_main_gone;
static int writer_stat_fd = -1;

void ip_writer_main_thread_ended(void)
{
    atomic_store(&writer_main_gone, 1);
    ip_writer_wake();
}

/* The process's thread count (field 20 of /proc/self/stat), or -1. */
static int writer_thread_count(void)
{
    if (writer_stat_fd < 0) writer_stat_fd = ip_fdguard_open_own("/proc/self/stat", O_RDONLY, 0);
    char buf[1024];
    ssize_t n = writer_stat_fd < 0 ? -1 : pread(writer_stat_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    for (int field = 2; p && field < 20; field++) p = strchr(p + 1, ' ');
    return p ? atoi(p + 1) : -1;
}

/* Only the zombie leader and our own threads are left. */
static int writer_orphaned(void)
{
    if (!atomic_load(&writer_main_gone)) return 0;
    int n = writer_thread_count();
    return n > 0 && n <= 1 + atomic_load(&ip_our_threads);
}

static void writer_end_orphan(void)
{
    int expect = IP_STATE_ACTIVE;
    if (!atomic_compare_exchange_strong(&ip_state_v, &expect, IP_STATE_FINISHING)) return;
    ip_finisher = 1;
    atomic_store(&writer_end_reason, "exit");
    ip_process_set_exit_status(0);
    writer_ticks(ip_clock_now(), 1);
    pthread_mutex_lock(&writer_lock);
    writer_cycle(1);
    writer_close();
    pthread_mutex_unlock(&writer_lock);
    atomic_store(&ip_state_v, IP_STATE_DONE);
    atomic_store(&writer_alive, 0);
    atomic_store(&writer_done, 1);
    ip_futex_wake(&writer_done);
    /* The process's exit, as glibc's last thread calls it (through the process-wide lookup:
     * the preloaded exit hook records the status, then libc's runs the exit handlers). */
    void (*process_exit)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "exit");
    if (process_exit) process_exit(0);
    syscall(SYS_exit_group, 0);
}

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "infprof-writer");
    ip_ring_mark_writer();
    atomic_fetch_add(&ip_our_threads, 1);
    uint64_t period = (uint64_t)ip_cfg_int(IP_CFG_FLUSH_MS);
    if (!writer_lazy && !writer_resuming) {
        /* The database is created here, not on the program's thread: a file-size limit's
         * SIGXFSZ stays pending on this thread (every signal blocked) and the write fails
         * instead; SQLite's stack and its other opens (/dev/urandom) are this thread's. */
        pthread_mutex_lock(&writer_lock);
        int ok = writer_open();
        pthread_mutex_unlock(&writer_lock);
        atomic_store(&writer_boot, ok ? 0 : 2);
        ip_futex_wake(&writer_boot);
        if (!ok) {
            atomic_store(&writer_alive, 0);
            atomic_fetch_sub(&ip_our_threads, 1);
            return NULL;
        }
    }
    /* One thread for everything: a cycle (drain, flush, commit) every INFPROF_FLUSH_MS or when a
     * ring asks, and the collectors' ticks (the energy sampler) when they are due or a phase
     * changes. The energy sampler's phase edges wake it without a cycle. */
    /* The word is read before the ticks run: a phase change during them or during a cycle makes
     * the next wait return at once (its reading is not left for the next period). */
    uint32_t seq = atomic_load(&ip_watch_seq);
    uint64_t last_cycle = ip_clock_now(), tick_due = writer_ticks(last_cycle, 0);
    uint32_t drains_seen = atomic_load(&writer_wake_seq);
    /* A forked child's writer makes its file at the first cycle that finds an event (lazy). It
     * looks 1 ms after the fork, then 2, 4, ... up to the period, so that the file is made while
     * the child works: made at its exit, the child's exit waited 4 ms more for it (a
     * multiprocessing Pool then found its workers still alive and killed them: their exit codes
     * read -15 where they read 0 without us). */
    uint64_t lazy_ms = 1;
    for (;;) {
        uint64_t cur = writer_lazy && !writer_store && lazy_ms < period ? lazy_ms : period;
        if (atomic_load(&writer_forks) && !atomic_load(&writer_final) && !writer_fork_parks) {
            /* A fork is waiting: it takes writer_lock now; the thread goes on after it. */
            while (atomic_load(&writer_forks)) sched_yield();
            continue;
        }
        if (atomic_load(&writer_forks) && !atomic_load(&writer_final)) {
            /* A fork is waiting: leave, so that the child's parent has no thread of ours at
             * that moment (Python 3.12 warns of a "multi-threaded" fork). The connection stays
             * open, its transaction too (no SQLite call is under way: the child forgets it), and
             * ip_writer_resume starts a thread that goes on with it. */
            atomic_fetch_sub(&ip_our_threads, 1);
            atomic_store(&ip_watch_parked, 1);
            atomic_store(&writer_parked, 1);
            ip_futex_wake(&writer_parked);
            return NULL;
        }
        /* The clock's line kept on CLOCK_MONOTONIC (clock.h) at every wake (the ticks' too, not
         * only the cycles: INFPROF_FLUSH_MS may be a second), under the lock: a fork, which takes
         * it, never copies a line half written. */
        pthread_mutex_lock(&writer_lock);
        ip_clock_calibrate();
        pthread_mutex_unlock(&writer_lock);
        uint64_t now = ip_clock_now(), due = last_cycle + cur * 1000000ull;
        if (atomic_load(&writer_main_gone) && due > now + IP_WRITER_ORPHAN_POLL_MS * 1000000ull)
            due = now + IP_WRITER_ORPHAN_POLL_MS * 1000000ull;
        if (tick_due && tick_due < due) due = tick_due;
        if (!atomic_load(&writer_final) && atomic_load(&writer_wake_seq) == drains_seen &&
            now < due) {
            atomic_store(&ip_watch_waiters, tick_due != 0 && atomic_load(&ip_watch_wants_edges));
            ip_futex_wait(&ip_watch_seq, seq, (due - now + 999999) / 1000000);
            atomic_store(&ip_watch_waiters, 0);
        }
        if (!atomic_load(&writer_final) && writer_orphaned()) writer_end_orphan();
        int final = atomic_load(&writer_final) != 0;
        now = ip_clock_now();
        seq = atomic_load(&ip_watch_seq);
        tick_due = writer_ticks(now, final);
        uint32_t drains = atomic_load(&writer_wake_seq);
        if (!final && drains == drains_seen && now < last_cycle + cur * 1000000ull &&
            !atomic_load(&writer_forks))
            continue;
        drains_seen = drains;
        last_cycle = now;
        if (writer_lazy && !writer_store) lazy_ms *= 2;
        pthread_mutex_lock(&writer_lock);
        writer_cycle(final);
        if (final) writer_close();
        pthread_mutex_unlock(&writer_lock);
        if (final) break;
    }
    atomic_fetch_sub(&ip_our_threads, 1);
    atomic_store(&writer_alive, 0);
    atomic_store(&writer_done, 1);
    ip_futex_wake(&writer_done);
    return NULL;
}

/* The writer thread, joinable: a fork waits for it to be gone. */
static int writer_spawn(void)
{
    return ip_thread_spawn(&writer_thread, writer_main, NULL, 0);
}

int ip_writer_resume(void)
{
    uint32_t expect = 1;
    if (!atomic_compare_exchange_strong(&writer_parked, &expect, 2)) return 0;
    writer_resuming = 1;
    atomic_store(&ip_watch_parked, 0);
    atomic_store(&writer_parked, 0); /* before: the new thread may park again at once */
    if (writer_spawn() != 0) {
        atomic_store(&writer_parked, 1); /* later, then: the next wake tries again */
        atomic_store(&ip_watch_parked, 1);
        return -1;
    }
    return 0;
}

static void writer_resume_quietly(void)
{
    ip_writer_resume();
}

int ip_writer_start(const char *pattern, int role, int lazy, uint64_t t0)
{
    snprintf(writer_pattern, sizeof writer_pattern, "%s", pattern ? pattern : "");
    writer_role = role;
    writer_lazy = lazy;
    writer_t0 = t0;
    writer_store = NULL;
    writer_open_failed = 0;
    writer_path[0] = 0;
    atomic_store(&writer_final, 0);
    atomic_store(&writer_done, 0);
    atomic_store(&writer_end_reason, "exit");
    memset(&wt, 0, sizeof wt);
    ip_clock_init(); /* on this thread, at the start: the clocksource file (clock.h) */
    ip_ring_set_waker(writer_wake_for_ring);
    ip_ring_set_stop_word(&writer_forks);
    atomic_store(&ip_watch_resume, writer_resume_quietly);

    atomic_store(&writer_alive, 1);
    atomic_store(&writer_parked, 0);
    writer_resuming = 0;
    atomic_store(&writer_boot, lazy ? 0 : 1);
    int rc = writer_spawn();
    if (rc != 0) {
        atomic_store(&writer_alive, 0);
        ip_warn("cannot start the writer thread (%s); profiling off", strerror(rc));
        return -1;
    }
    /* The database exists, with its descriptors at their high numbers and registered, before
     * the program runs on (before main, at start): a program that closes everything in its
     * first microseconds has nothing of ours to race with, and a warning that it cannot be
     * created reaches stderr before the program can close it. A forked child's writer creates
     * its file on its first event. */
    /* Bounded: the writer may need the loader's lock, held by a dlopen on this very thread
     * that runs our constructor (a library's NVTX loading us by path); it then opens the file
     * as soon as that dlopen returns. */
    uint64_t deadline = ip_clock_now() + IP_WRITER_BOOT_WAIT_MS * 1000000ull;
    while (atomic_load(&writer_boot) == 1 && ip_clock_now() < deadline)
        ip_futex_wait(&writer_boot, 1, 20);
    return atomic_load(&writer_boot) == 2 ? -1 : 0;
}

void ip_writer_wake(void)
{
    atomic_fetch_add(&writer_wake_seq, 1); /* a cycle is asked for */
    if (atomic_load_explicit(&writer_parked, memory_order_relaxed)) ip_writer_resume();
    ip_watch_kick();
}

int ip_writer_stop(const char *reason, uint64_t timeout_ms)
{
    if (!atomic_load(&writer_alive) && !atomic_load(&writer_done)) return 0;
    if (atomic_load(&writer_parked)) ip_writer_resume();
    atomic_store(&writer_end_reason, reason);
    /* Four fifths of the time for the drain, the rest for the end and the close. */
    atomic_store(&writer_soft_deadline, ip_clock_now() + timeout_ms * 800000ull);
    atomic_store(&writer_final, 1);
    ip_writer_wake();
    uint64_t deadline = ip_clock_now() + timeout_ms * 1000000ull;
    while (!atomic_load(&writer_done)) {
        uint64_t now = ip_clock_now();
        if (now >= deadline) return -1;
        uint64_t left_ms = (deadline - now) / 1000000ull + 1;
        ip_futex_wait(&writer_done, 0, left_ms < 50 ? left_ms : 50);
    }
    return 0;
}

/* Python 3.12 and later count the process's threads right after fork() returns in the parent,
 * and warn of a "multi-threaded" fork on the program's stderr: there, the writer comes back on
 * the next wake (a ring asking for room, a phase change, the finish), not in the fork itself. */
static int writer_defer_resume(void)
{
    const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version"); /* 3.11 and later */
    return version && *version >= 0x030c0000ul;
}

void ip_writer_atfork_prepare(void)
{
    writer_fork_parks = writer_defer_resume();
    atomic_fetch_add(&writer_forks, 1);
    int alive = atomic_load(&writer_alive) && !atomic_load(&writer_parked) &&
                !pthread_equal(pthread_self(), writer_thread);
    if (alive && writer_fork_parks) {
        ip_watch_kick();
        /* It parks at its next turn, or ends (a final cycle under way). */
        while (!atomic_load(&writer_parked) && !atomic_load(&writer_done))
            ip_futex_wait(&writer_parked, 0, 5);
        if (atomic_load(&writer_parked)) pthread_join(writer_thread, NULL);
    }
    pthread_mutex_lock(&writer_lock);
}

/* ---- after the end ----------------------------------------------------------------------- */

static _Atomic uint32_t late_done;

static void *late_main(void *arg)
{
    (void)arg;
    ip_ring_mark_writer(); /* its opens go to high numbers, as the writer's */
    uint64_t n = atomic_load(&ip_events_after_end);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(writer_path, &db, SQLITE_OPEN_READWRITE, ip_store_vfs()) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 50);
        char sql[120];
        snprintf(sql, sizeof sql,
                 "INSERT OR REPLACE INTO meta(key, value) VALUES ('events_after_end', %llu)",
                 (unsigned long long)n);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    ip_fdguard_release(); /* our own closes follow */
    sqlite3_close(db);
    atomic_store(&late_done, 1);
    ip_futex_wake(&late_done);
    return NULL;
}

void ip_writer_count_late(void)
{
    if (!writer_path[0] || atomic_load(&ip_events_after_end) == writer_late_written ||
        !atomic_load(&writer_done))
        return;
    atomic_store(&late_done, 0);
    int rc = ip_thread_spawn(NULL, late_main, NULL, 1);
    uint64_t deadline = ip_clock_now() + 200000000ull;
    while (rc == 0 && !atomic_load(&late_done) && ip_clock_now() < deadline)
        ip_futex_wait(&late_done, 0, 20);
}

void ip_writer_atfork_parent(void)
{
    pthread_mutex_unlock(&writer_lock);
    atomic_fetch_sub(&writer_forks, 1);
    if (atomic_load(&writer_parked) && !writer_defer_resume()) ip_writer_resume();
}

void ip_writer_atfork_child(void)
{
    pthread_mutex_init(&writer_lock, NULL);
    atomic_store(&writer_forks, 0);
    atomic_store(&writer_parked, 0);
    atomic_store(&ip_watch_parked, 0);
    atomic_store(&writer_alive, 0);
    atomic_store(&writer_done, 0);
    /* The parent's connection is the parent's: forget it without closing it. */
    writer_store = NULL;
}

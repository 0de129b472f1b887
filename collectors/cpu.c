/*
 * cpu.c: the CPU time collector. The writer thread (ours, never a program thread) calls its tick
 * at every wake: every INFPROF_CPU_MS, and once at start and at the end, it reads the process's
 * CPU time (every thread, user and system: CLOCK_PROCESS_CPUTIME_ID), its system part (getrusage)
 * and the writer thread's own (CLOCK_THREAD_CPUTIME_ID), into a small buffer that the same
 * thread's flush writes to cpu_samples (cpu.sql). Three clock reads per period, no allocation:
 * the program cannot notice; where its cgroup has a CPU quota, also one pread of the cgroup's
 * cpu.stat (cpu_limits.c: a descriptor of ours, at a high number). A buffer that fills between two
 * flushes (it cannot: the writer flushes after every wake) counts what it drops.
 *
 * The report turns consecutive readings into cores busy (CPU time over wall time) over time: a
 * host-bound loop, a DataLoader's work in the main process, threads that intra-op
 * parallelism keeps busy (report/run/timeline.c), held to the CPUs online (meta cpus_online).
 */
#include "cpu_config.h"
#include "cpu_limits.h"
#include "registry.h"
#include "../profiler/clock.h"
#include "../profiler/process.h"
#include "../profiler/store.h"

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define CPU_PENDING 64

struct cpu_reading {
    uint64_t ts;
    int64_t cpu_ns, sys_ns, ours_ns, throttled_ns;
};

/* Writer thread only (tick, prepare, flush, finish). */
static struct {
    uint64_t period, next;
    int started;
    int n;
    struct cpu_reading v[CPU_PENDING];
    int64_t readings, dropped;
    struct ip_batch *rows;
} cs;

extern const char ip_schema_cpu[]; /* collectors/cpu.sql, embedded at build time */

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts)) return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void cpu_read(uint64_t now)
{
    if (cs.n == CPU_PENDING) {
        cs.dropped++;
        return;
    }
    struct cpu_reading *r = &cs.v[cs.n++];
    struct rusage ru;
    /* Stamped at the process clock's read, not at the wake (`now`): the writer preempted between
     * the two made a short interval read more cores than the machine has (over 2.1 on 2 CPUs). */
    (void)now;
    uint64_t before = ip_clock_now();
    r->cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    r->ts = before + (ip_clock_now() - before) / 2;
    r->sys_ns = getrusage(RUSAGE_SELF, &ru) ? -1
                                            : (int64_t)ru.ru_stime.tv_sec * 1000000000 +
                                                  (int64_t)ru.ru_stime.tv_usec * 1000;
    r->ours_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    r->throttled_ns = ip_cpu_limits_throttled_ns(); /* -1 where no quota (no read made) */
    cs.readings++;
}

/* The process's CPU clock may move in scheduler ticks (4 ms on a 250 Hz kernel): readings
 * closer than this would show a one-thread program at 4 cores, then at none. */
#define CPU_MIN_MS 20

static void cpu_start(void)
{
    int64_t ms = ip_cfg_group_int(&ip_cpu_cfg, IP_CPU_CFG_MS);
    if (ms > 0 && ms < CPU_MIN_MS) {
        ip_collector_status(IP_COLLECTOR_CPU, "on",
                            "every %d ms (INFPROF_CPU_MS=%lld raised: the CPU clock moves in"
                            " scheduler ticks)",
                            CPU_MIN_MS, (long long)ms);
        ms = CPU_MIN_MS;
    } else if (ms) {
        ip_collector_status(IP_COLLECTOR_CPU, "on", "every %lld ms", (long long)ms);
    } else {
        ip_collector_status(IP_COLLECTOR_CPU, "off", "INFPROF_CPU_MS=0");
    }
    cs.period = (uint64_t)ms * 1000000;
}

/* Writer thread, at every wake: a reading when one is due, at the first wake and the last. */
static uint64_t cpu_tick(uint64_t now, int final)
{
    if (!cs.period) return 0;
    if (!cs.started || final || now >= cs.next) {
        cpu_read(now);
        cs.started = 1;
        /* The next one a period after the last due time: a late wake does not shift them all. */
        cs.next = cs.next && now < cs.next + cs.period ? cs.next + cs.period : now + cs.period;
    }
    return final ? 0 : cs.next;
}

static void cpu_prepare(struct ip_store *s)
{
    cs.rows = ip_batch_open(s, "cpu_samples", 5);
    /* The bound on cores busy the report holds its readings to (from 2026-11-28). */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > 0) ip_store_meta_int(s, "cpus_online", online);
    ip_cpu_limits_prepare(s); /* the CPUs it may use, its cgroup's quota */
    /* A forked child's readings start again (its CPU clocks did, at the fork). */
    if (ip_role() == IP_ROLE_FORK_CHILD) cs.n = 0, cs.started = 0, cs.next = 0, cs.readings = 0;
}

static int64_t or_null(int64_t v)
{
    return v < 0 ? IP_NULL : v;
}

static void cpu_flush(struct ip_store *s, int final)
{
    (void) final;
    for (int i = 0; i < cs.n; i++) {
        int64_t *row = ip_batch_row(cs.rows);
        row[0] = ip_store_rel(s, cs.v[i].ts);
        row[1] = or_null(cs.v[i].cpu_ns);
        row[2] = or_null(cs.v[i].sys_ns);
        row[3] = or_null(cs.v[i].ours_ns);
        row[4] = or_null(cs.v[i].throttled_ns);
    }
    cs.n = 0;
}

static void cpu_finish(struct ip_store *s)
{
    cpu_flush(s, 1);
    if (!cs.period) return;
    char words[200];
    ip_cpu_limits_finish(s, words, sizeof words);
    if (words[0])
        ip_collector_status(IP_COLLECTOR_CPU, "on", "every %lld ms%s",
                            (long long)(cs.period / 1000000), words);
    ip_store_meta_int(s, "cpu_readings", cs.readings);
    ip_store_meta_int(s, "cpu_readings_dropped", cs.dropped);
}

const struct ip_collector ip_collector_cpu = {
    .name = "cpu",
    .title = "CPU time",
    .settings = &ip_cpu_cfg,
    .schema = ip_schema_cpu,
    .start = cpu_start,
    .tick = cpu_tick,
    .prepare = cpu_prepare,
    .flush = cpu_flush,
    .finish = cpu_finish,
};

/*
 * clock.c: the writer's side of the run's clock (clock.h): the line that turns the TSC into
 * CLOCK_MONOTONIC nanoseconds, kept on it.
 *
 * Used only where the kernel itself times CLOCK_MONOTONIC with the TSC (its clocksource is
 * "tsc": it found the TSC constant, invariant and in step across CPUs) and INFPROF_CLOCK is
 * auto. At each step (every IP_CLOCK_STEP_MS at most, from the writer's cycle) one pair is read,
 * (TSC, CLOCK_MONOTONIC), CLOCK_MONOTONIC on both sides of the TSC, the closest of four tries
 * (none wider than CLOCK_PAIR_MAX_NS: a preempted writer takes no step):
 *  - the first pair starts the baseline; the line is used from the first step at least
 *    CLOCK_FIRST_NS later, on that step's pair, its slope the rate since the first pair (a
 *    thread's clock that read a little past it waits: ip_clock_monotone);
 *  - every later step starts a new line where the old one is at that moment (the anchor is a TSC
 *    read after the sequence count went odd: every reading of the old line came before it), its
 *    slope the rate over the last CLOCK_WINDOW_NS or more (so that it follows NTP slewing
 *    CLOCK_MONOTONIC) less what takes the line's distance from CLOCK_MONOTONIC back to 0 over
 *    CLOCK_HORIZON_NS, or twice the time since the last step where that is longer (at most 500
 *    ppm either way);
 *  - a distance over CLOCK_GIVE_UP_NS (the kernel gave the TSC up, or a suspended VM) ends the
 *    line for good: clock_gettime from then on (a thread's clock waits, never goes back).
 * Between steps the line keeps its slope: a writer held up for seconds (a long commit) leaves it
 * to drift by what its last steer was (distances here: under 200 ns, so under a microsecond). The
 * writer alone calls these; the state below is its own (a forked child's writer goes on with a
 * copy).
 * The metadata says which (clock_source, clock_steps, clock_max_error_ns).
 */
#include "clock.h"
#include "config.h"
#include "fdguard.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLOCK_FIRST_NS   20000000ll   /* the baseline before the line is used */
#define CLOCK_WINDOW_NS  500000000ll  /* the slope: the rate over at least this long, recent */
#define CLOCK_HORIZON_NS 500000000ll  /* a distance is taken back over this long, at least */
#define CLOCK_GIVE_UP_NS 1000000ll

struct ip_clock_line ip_clock_line;
_Thread_local uint64_t ip_clock_last __attribute__((tls_model("initial-exec")));

enum { CAL_UNSEEN = 0, CAL_BASELINE = 1, CAL_ON = 2, CAL_UNUSABLE = -1, CAL_GIVEN_UP = -2 };
static struct {
    int state;
    uint64_t tsc_start, ns_start; /* the baseline's first pair */
    uint64_t last_step_ns;
    uint64_t steps;
    int64_t max_error;
    struct {
        uint64_t tsc, ns;
    } past[32];     /* the last pairs stepped with, oldest overwritten */
    unsigned npast; /* pairs ever put in past */
} cal;

/* The pair to take the rate from at CLOCK_MONOTONIC ns: the latest one at least CLOCK_WINDOW_NS
 * old, else the baseline's first. The rate follows a change of CLOCK_MONOTONIC's own (NTP
 * slewing it) within a window, not the run's average. */
static void clock_rate_from(uint64_t ns, uint64_t *tsc_from, uint64_t *ns_from)
{
    *tsc_from = cal.tsc_start, *ns_from = cal.ns_start;
    unsigned n = cal.npast < 32 ? cal.npast : 32;
    for (unsigned k = 1; k <= n; k++) {
        unsigned i = (cal.npast - k) % 32;
        if (cal.past[i].ns + (uint64_t)CLOCK_WINDOW_NS <= ns) {
            *tsc_from = cal.past[i].tsc, *ns_from = cal.past[i].ns;
            return;
        }
    }
}

/* The writer's side of the sequence count: open (odd) before the line changes, close (even)
 * with the new line. */
static uint32_t clock_open(void)
{
    uint32_t s = atomic_load_explicit(&ip_clock_line.seq, memory_order_relaxed);
    atomic_store_explicit(&ip_clock_line.seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    return s;
}

static void clock_close(uint32_t s, uint64_t tsc0, uint64_t ns0, uint64_t frac0, uint64_t mult,
                        uint32_t on)
{
    atomic_store_explicit(&ip_clock_line.tsc0, tsc0, memory_order_relaxed);
    atomic_store_explicit(&ip_clock_line.ns0, ns0, memory_order_relaxed);
    atomic_store_explicit(&ip_clock_line.frac0, frac0, memory_order_relaxed);
    atomic_store_explicit(&ip_clock_line.mult, mult, memory_order_relaxed);
    atomic_store_explicit(&ip_clock_line.on, on, memory_order_relaxed);
    atomic_store_explicit(&ip_clock_line.seq, s + 2, memory_order_release);
}

#if defined(__x86_64__)
/* One step with the pair (tsc, ns). live: the writer's own step (the new line's anchor is read
 * then); else a test's (the anchor is the pair's TSC). */
static void clock_step_at(uint64_t tsc, uint64_t ns, int live)
{
    if (tsc <= cal.tsc_start || ns <= cal.ns_start) return; /* nothing sensible to go by */
    if (cal.state == CAL_BASELINE && ns - cal.ns_start < (uint64_t)CLOCK_FIRST_NS) return;
    uint64_t tsc_from, ns_from;
    clock_rate_from(ns, &tsc_from, &ns_from);
    if (tsc <= tsc_from || ns <= ns_from) return;
    unsigned __int128 r = ((unsigned __int128)(ns - ns_from) << 32) / (tsc - tsc_from);
    if (!r || r >> 63) return;
    int64_t rate = (int64_t)r;
    cal.steps++;
    cal.past[cal.npast % 32].tsc = tsc, cal.past[cal.npast % 32].ns = ns;
    cal.npast++;
    if (cal.state == CAL_BASELINE) {
        /* On the pair: a thread whose last clock_gettime reading lies a little past it waits
         * that long (ip_clock_monotone). */
        clock_close(clock_open(), tsc, ns, 0, (uint64_t)rate, 1);
        cal.state = CAL_ON;
        return;
    }
    uint64_t tsc0 = atomic_load_explicit(&ip_clock_line.tsc0, memory_order_relaxed);
    uint64_t ns0 = atomic_load_explicit(&ip_clock_line.ns0, memory_order_relaxed);
    uint64_t mult = atomic_load_explicit(&ip_clock_line.mult, memory_order_relaxed);
    uint64_t frac0 = atomic_load_explicit(&ip_clock_line.frac0, memory_order_relaxed);
    int64_t error = (int64_t)(ip_clock_line_at(tsc, tsc0, ns0, frac0, mult) - ns);
    if (llabs(error) > cal.max_error) cal.max_error = llabs(error);
    if (error > CLOCK_GIVE_UP_NS || error < -CLOCK_GIVE_UP_NS) {
        clock_close(clock_open(), tsc0, ns0, frac0, mult, 0);
        cal.state = CAL_GIVEN_UP;
        return;
    }
    /* Over at least twice the time since the last step: steps further apart than the horizon
     * (a long INFPROF_FLUSH_MS, a stopped process) would overshoot, each the last's distance
     * the other way and larger. At most 500 ppm. */
    uint64_t last = cal.npast >= 2 ? cal.past[(cal.npast - 2) % 32].ns : cal.ns_start;
    int64_t horizon = CLOCK_HORIZON_NS;
    if (ns > last && (int64_t)(ns - last) > horizon / 2) horizon = 2 * (int64_t)(ns - last);
    int64_t most = horizon / 2000;
    int64_t steer = error > most ? most : error < -most ? -most : error;
    int64_t slope = rate - (int64_t)((__int128)rate * steer / horizon);
    /* The anchor is read once the count is odd (live): every reading of the old line that
     * stands was taken before it. */
    uint32_t s = clock_open();
    uint64_t anchor = live ? ip_clock_rdtsc() : tsc;
    if (anchor < tsc0) anchor = tsc0;
    /* The old line at the anchor, its fraction kept (steps taken often would lose it). */
    unsigned __int128 at =
        ((unsigned __int128)ns0 << 32) + frac0 + (unsigned __int128)(anchor - tsc0) * mult;
    clock_close(s, anchor, (uint64_t)(at >> 32), (uint64_t)(at & 0xffffffffu), (uint64_t)slope, 1);
}
#endif

void ip_clock_step(uint64_t tsc, uint64_t ns, int usable)
{
#if defined(__x86_64__)
    if (cal.state < 0) return;
    if (cal.state == CAL_UNSEEN) {
        cal.state = usable ? CAL_BASELINE : CAL_UNUSABLE;
        cal.tsc_start = tsc, cal.ns_start = ns;
        return;
    }
    clock_step_at(tsc, ns, 0);
#else
    (void)tsc, (void)ns, (void)usable;
    cal.state = CAL_UNUSABLE;
#endif
}

void ip_clock_reset(void)
{
    clock_close(clock_open(), 0, 0, 0, 0, 0);
    memset(&cal, 0, sizeof cal);
}

#if defined(__x86_64__)
/* The kernel times CLOCK_MONOTONIC with the TSC, and INFPROF_CLOCK lets us do the same. */
static int clock_tsc_usable(void)
{
    if (ip_cfg_int(IP_CFG_CLOCK) != 0) return 0;
    /* Through the gate, at a high number (fdguard.h): the program never sees it. */
    char buf[16];
    ssize_t n = ip_fdguard_read_own(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource", buf, sizeof buf);
    return n >= 3 && memcmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

/* A (TSC, CLOCK_MONOTONIC) pair: CLOCK_MONOTONIC on both sides of the TSC, the closest of four
 * tries. 0 when even the closest is CLOCK_PAIR_MAX_NS wide (the thread was preempted in each):
 * no step is taken with it. */
#define CLOCK_PAIR_MAX_NS 20000u
static int clock_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        uint64_t a = ip_clock_gettime(), t = ip_clock_rdtsc(), b = ip_clock_gettime();
        if (b >= a && b - a < best) best = b - a, *tsc = t, *ns = a + (b - a) / 2;
    }
    return best <= CLOCK_PAIR_MAX_NS;
}
#endif

/* Whether the TSC may be used, read once by ip_clock_init (-1: not yet). */
static int clock_usable = -1;

void ip_clock_init(void)
{
#if defined(__x86_64__)
    if (clock_usable < 0) clock_usable = clock_tsc_usable();
#endif
}

void ip_clock_step_now(void)
{
#if defined(__x86_64__)
    uint64_t tsc, ns;
    if (cal.state == CAL_UNSEEN) {
        if (!(clock_usable >= 0 ? clock_usable : clock_tsc_usable())) {
            ip_clock_step(0, 0, 0);
            return;
        }
        if (clock_pair(&tsc, &ns)) ip_clock_step(tsc, ns, 1); /* else at the next step */
        return;
    }
    if (cal.state > 0 && clock_pair(&tsc, &ns)) clock_step_at(tsc, ns, 1);
#endif
}

void ip_clock_calibrate(void)
{
#if defined(__x86_64__)
    if (cal.state < 0) return;
    uint64_t now = ip_clock_gettime();
    if (cal.state != CAL_UNSEEN && now - cal.last_step_ns < IP_CLOCK_STEP_MS * 1000000ull) return;
    cal.last_step_ns = now;
    ip_clock_step_now();
#endif
}

void ip_clock_atfork_child(void)
{
    cal.steps = 0;
    cal.max_error = 0;
    uint32_t s = atomic_load(&ip_clock_line.seq);
    if (!(s & 1)) return;
    /* Caught half written: clock_gettime until the child's writer has a baseline of its own. */
    atomic_store(&ip_clock_line.on, 0);
    atomic_store(&ip_clock_line.seq, s + 1);
    memset(&cal, 0, sizeof cal);
}

void ip_clock_summary(int *source, uint64_t *steps, int64_t *max_error_ns)
{
    *source = cal.state == CAL_ON ? 1 : cal.state == CAL_GIVEN_UP ? -1 : 0;
    *steps = cal.steps;
    *max_error_ns = cal.max_error;
}

/*
 * clock_check.c: unit checks of the run's clock (profiler/clock.h, clock.c): the TSC line the
 * writer keeps on CLOCK_MONOTONIC. With synthetic (TSC, ns) pairs: no line before the baseline is
 * long enough, the line placed just ahead at the switch, continuous at every step, steered back
 * to CLOCK_MONOTONIC when the two run at different rates, never going back, given up for good
 * past a millisecond, never used where the TSC is not the kernel's clocksource; following NTP's
 * slewing of CLOCK_MONOTONIC; a fork's child with counts of its own, and without a line caught
 * half written. Live, where this
 * machine's clocksource is the TSC: the writer's own steps, readers on four threads hammering the
 * line while it moves, every reading between the clock_gettime before and after it. Exit 0 when
 * every check holds.
 */
#include "profiler/clock.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL line %d: ", __LINE__);                                                    \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#if defined(__x86_64__)
static uint64_t line(uint64_t tsc)
{
    return ip_clock_line_at(tsc, atomic_load(&ip_clock_line.tsc0), atomic_load(&ip_clock_line.ns0),
                            atomic_load(&ip_clock_line.frac0), atomic_load(&ip_clock_line.mult));
}

/* A TSC of 2.5 GHz (0.4 ns a tick); CLOCK_MONOTONIC runs `ppm` faster than the TSC says. */
static uint64_t mono_at(uint64_t tsc, double ppm)
{
    return 5000000000ull + (uint64_t)((double)tsc * 0.4 * (1.0 + ppm * 1e-6));
}

static void synthetic(void)
{
    const uint64_t ms = 2500000; /* ticks */
    ip_clock_reset();
    uint64_t t = 1000 * ms;
    ip_clock_step(t, mono_at(t, 0), 1);
    CHECK(!atomic_load(&ip_clock_line.on), "on after the first pair");
    ip_clock_step(t + 10 * ms, mono_at(t + 10 * ms, 0), 1);
    CHECK(!atomic_load(&ip_clock_line.on), "on before the baseline's 20 ms");
    t += 25 * ms;
    ip_clock_step(t, mono_at(t, 0), 1);
    CHECK(atomic_load(&ip_clock_line.on), "not on after 25 ms");
    int64_t ahead = (int64_t)(line(t) - mono_at(t, 0));
    CHECK(ahead >= -1 && ahead <= 1, "placed %lld ns from the pair at the switch",
          (long long)ahead);
    CHECK(line(t + 4 * ms) - line(t) >= 3999999 && line(t + 4 * ms) - line(t) <= 4000001,
          "slope: 4 ms of ticks read %llu ns", (unsigned long long)(line(t + 4 * ms) - line(t)));
    CHECK(line(t - 100) < line(t) && line(t) - line(t - 100) >= 39 && line(t) - line(t - 100) <= 40,
          "a tick before the anchor: %llu against %llu", (unsigned long long)line(t - 100),
          (unsigned long long)line(t));

    /* CLOCK_MONOTONIC now runs 200 ppm faster (NTP slewing): steps every 50 ms for 20 s. */
    uint64_t prev = line(t);
    int64_t last_error = 0, worst_late = 0;
    for (int k = 1; k <= 400; k++) {
        uint64_t tk = t + (uint64_t)k * 50 * ms;
        uint64_t before = line(tk);
        CHECK(before >= prev, "went back before step %d", k);
        ip_clock_step(tk, mono_at(tk, 200) - (uint64_t)(200e-6 * 0.4 * (double)t), 1);
        uint64_t after = line(tk);
        CHECK(after == before, "step %d not continuous: %llu then %llu", k,
              (unsigned long long)before, (unsigned long long)after);
        prev = after;
        last_error =
            (int64_t)before - (int64_t)(mono_at(tk, 200) - (uint64_t)(200e-6 * 0.4 * (double)t));
        if (k > 200 && llabs(last_error) > worst_late) worst_late = llabs(last_error);
    }
    CHECK(worst_late < 20000, "still %lld ns from CLOCK_MONOTONIC after 10 s of steering",
          (long long)worst_late);
    int source;
    uint64_t steps;
    int64_t max_error;
    ip_clock_summary(&source, &steps, &max_error);
    CHECK(source == 1 && steps == 401, "summary: source %d steps %llu", source,
          (unsigned long long)steps);

    /* Two milliseconds off: given up for good, clock_gettime again. */
    uint64_t tk = t + 401 * 50 * ms;
    ip_clock_step(tk, line(tk) + 2000000, 1);
    CHECK(!atomic_load(&ip_clock_line.on), "still on 2 ms off");
    ip_clock_summary(&source, &steps, &max_error);
    CHECK(source == -1 && max_error >= 2000000, "summary after giving up: %d %lld", source,
          (long long)max_error);
    ip_clock_step(tk + 50 * ms, mono_at(tk + 50 * ms, 0), 1);
    CHECK(!atomic_load(&ip_clock_line.on), "on again after giving up");

    /* Not the kernel's clocksource: never on. */
    ip_clock_reset();
    ip_clock_step(t, mono_at(t, 0), 0);
    ip_clock_step(t + 100 * ms, mono_at(t + 100 * ms, 0), 1);
    CHECK(!atomic_load(&ip_clock_line.on), "on where the TSC is not the clocksource");
}

/* CLOCK_MONOTONIC steady, then slewed 100 ppm faster from 5 s on (NTP): the line follows within
 * half a second's window, and is back on it once the rate has held. */
static void slewed(void)
{
    const double hz = 2.5e9;
    ip_clock_reset();
    double worst_early = 0, worst_late = 0;
    for (int k = 0; k <= 200; k++) { /* a step every 100 ms for 20 s */
        double sec = k * 0.1, extra = sec > 5 ? (sec - 5) * 100e-6 : 0;
        uint64_t tsc = 1000000 + (uint64_t)(sec * hz), ns = (uint64_t)(1e9 * (10 + sec + extra));
        if (atomic_load(&ip_clock_line.on)) {
            double d =
                (double)line(tsc) - (double)ns; /* before this step: the drift since the last */
            if (sec > 5 && sec <= 8 && fabs(d) > worst_early) worst_early = fabs(d);
            if (sec > 12 && fabs(d) > worst_late) worst_late = fabs(d);
        }
        ip_clock_step(tsc, ns, 1);
    }
    CHECK(worst_early > 1000 && worst_early < 25000,
          "100 ppm slew: %.0f ns from CLOCK_MONOTONIC in its first 3 s (about 19 us expected)",
          worst_early);
    CHECK(worst_late < 1000, "100 ppm slew held 7 s: still %.0f ns from CLOCK_MONOTONIC",
          worst_late);
}

/* Steps 1.5 s apart (INFPROF_FLUSH_MS=1000, a process stopped now and then), CLOCK_MONOTONIC
 * 50 ppm faster from 5 s on: steered over twice the gap, the distance shrinks at each step
 * instead of swinging back larger (a fixed half-second horizon swung to +-250 us). */
static void sparse(void)
{
    const double hz = 2.5e9;
    ip_clock_reset();
    double worst_late = 0;
    for (int k = 0; k <= 80; k++) {
        double sec = k < 2 ? k * 0.05 : (k - 1) * 1.5, extra = sec > 5 ? (sec - 5) * 50e-6 : 0;
        uint64_t tsc = 1000000 + (uint64_t)(sec * hz), ns = (uint64_t)(1e9 * (10 + sec + extra));
        if (atomic_load(&ip_clock_line.on) && sec > 60) {
            double d = fabs((double)line(tsc) - (double)ns);
            if (d > worst_late) worst_late = d;
        }
        ip_clock_step(tsc, ns, 1);
    }
    CHECK(atomic_load(&ip_clock_line.on), "sparse steps: the line was given up");
    CHECK(worst_late < 5000, "sparse steps: still %.0f ns from CLOCK_MONOTONIC after a minute",
          worst_late);
}

/* A fork: the child's counts are its own; a line caught half written is dropped. */
static void forked(void)
{
    const uint64_t ms = 2500000;
    ip_clock_reset();
    for (int k = 0; k < 5; k++)
        ip_clock_step(1000 * ms + (uint64_t)k * 50 * ms,
                      mono_at(1000 * ms + (uint64_t)k * 50 * ms, 0), 1);
    int source;
    uint64_t steps;
    int64_t max_error;
    ip_clock_atfork_child(); /* caught at rest */
    ip_clock_summary(&source, &steps, &max_error);
    CHECK(atomic_load(&ip_clock_line.on) && source == 1 && steps == 0,
          "fork at rest: on %u source %d steps %llu", atomic_load(&ip_clock_line.on), source,
          (unsigned long long)steps);
    atomic_fetch_add(&ip_clock_line.seq, 1); /* caught half written */
    ip_clock_atfork_child();
    ip_clock_summary(&source, &steps, &max_error);
    CHECK(!atomic_load(&ip_clock_line.on) && !(atomic_load(&ip_clock_line.seq) & 1) && source == 0,
          "fork mid-step: on %u seq %u source %d", atomic_load(&ip_clock_line.on),
          atomic_load(&ip_clock_line.seq), source);
    uint64_t a = ip_clock_gettime(), v = ip_clock_now(), b = ip_clock_gettime();
    CHECK(v >= a && v <= b, "fork mid-step: the clock reads %llu outside [%llu, %llu]",
          (unsigned long long)v, (unsigned long long)a, (unsigned long long)b);
    /* Its writer begins a baseline of its own and the line comes back. */
    ip_clock_step(2000 * ms, mono_at(2000 * ms, 0), 1);
    ip_clock_step(2030 * ms, mono_at(2030 * ms, 0), 1);
    CHECK(atomic_load(&ip_clock_line.on), "fork mid-step: no line after a new baseline");
    ip_clock_reset();
    ip_clock_last = 0;
}

static _Atomic int stop;
static _Atomic long bad, reads;

static void *reader(void *arg)
{
    (void)arg;
    long n = 0, wrong = 0;
    uint64_t last = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        uint64_t a = ip_clock_gettime();
        uint64_t v = ip_clock_now();
        uint64_t b = ip_clock_gettime();
        /* Within 50 us of the readings around it (the line's distance, a preempted reader) and
         * never behind this thread's last. */
        if (v + 50000 < a || v > b + 50000 || v < last) wrong++;
        last = v;
        n++;
    }
    atomic_fetch_add(&bad, wrong);
    atomic_fetch_add(&reads, n);
    return NULL;
}

static void live(void)
{
    char src[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        if (!fgets(src, sizeof src, f)) src[0] = 0;
        fclose(f);
    }
    src[strcspn(src, "\n")] = 0;
    ip_clock_reset();
    ip_clock_calibrate(); /* the first pair: INFPROF_CLOCK is not read here (its default, auto) */
    uint64_t start = ip_clock_gettime();
    while (ip_clock_gettime() - start < 60000000ull) ip_clock_calibrate();
    if (strcmp(src, "tsc") != 0) {
        CHECK(!atomic_load(&ip_clock_line.on), "on with clocksource '%s'", src);
        printf("live: clocksource is '%s': the TSC line is not used (checked)\n", src);
        return;
    }
    CHECK(atomic_load(&ip_clock_line.on), "not on after 60 ms with clocksource tsc");
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, reader, NULL);
    /* The line moved as fast as it can be (the writer moves it every 50 ms), for 300 ms. */
    start = ip_clock_gettime();
    int moves = 0;
    while (ip_clock_gettime() - start < 300000000ull) {
        ip_clock_step_now();
        moves++;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    int source;
    uint64_t steps;
    int64_t max_error;
    ip_clock_summary(&source, &steps, &max_error);
    CHECK(atomic_load(&bad) == 0, "%ld of %ld readings outside the clock_gettime around them",
          atomic_load(&bad), atomic_load(&reads));
    CHECK(source == 1, "the line was given up (largest distance %lld ns)", (long long)max_error);
    printf("live: %d moves, %ld readings on 4 threads, largest distance %lld ns\n", moves,
           atomic_load(&reads), (long long)max_error);
}
#endif

int main(void)
{
#if defined(__x86_64__)
    synthetic();
    slewed();
    sparse();
    forked();
    live();
#else
    printf("not x86-64: the clock is clock_gettime throughout (nothing to check)\n");
#endif
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}

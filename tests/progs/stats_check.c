/*
 * stats_check.c: unit checks of profiler/stats.c: exact median and sample standard deviation,
 * the bounded reservoir beyond IP_STATS_SAMPLES values, and merging (exact when every part kept
 * all its values, close when they did not). Exit 0 when every check holds.
 */
#include "profiler/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

static void check(int ok, const char *what, double got, double want)
{
    if (!ok) {
        failures++;
        printf("FAIL %s: got %.6g, want %.6g\n", what, got, want);
    }
}

int main(void)
{
    struct ip_stats a, b, c, all;
    int exact;
    /* 1..5: median 3, stddev sqrt(2.5). */
    ip_stats_init(&a, 1);
    for (int v = 5; v >= 1; v--) ip_stats_add(&a, v);
    int64_t med = ip_stats_median(&a, &exact);
    check(med == 3 && exact, "median of 1..5", (double)med, 3);
    check(fabs(ip_stats_stddev(&a) - sqrt(2.5)) < 1e-9, "stddev of 1..5", ip_stats_stddev(&a),
          sqrt(2.5));
    /* An even count: the mean of the two middle values, as nsys. */
    ip_stats_add(&a, 6);
    med = ip_stats_median(&a, &exact);
    check(med == 3, "median of 1..6 (integer mean of 3 and 4)", (double)med, 3);
    /* Large nanosecond values: no loss in the sum of squares. */
    ip_stats_init(&b, 1);
    for (int i = 0; i < 1000; i++) ip_stats_add(&b, 4000000000000LL + (i % 2 ? 10 : -10));
    check(fabs(ip_stats_stddev(&b) - 10.005) < 0.01, "stddev around 4e12", ip_stats_stddev(&b),
          10.005);
    /* Beyond the sample: a uniform reservoir, the median within 2% of the truth. */
    ip_stats_init(&c, 1);
    for (int i = 0; i < 200000; i++) ip_stats_add(&c, (int64_t)((i * 7919L) % 200000) + 1);
    med = ip_stats_median(&c, &exact);
    check(!exact && c.nsamples == IP_STATS_SAMPLES, "reservoir size", c.nsamples, IP_STATS_SAMPLES);
    check(fabs((double)med - 100000) < 2000, "reservoir median", (double)med, 100000);
    check(c.count == 200000 && c.min == 1 && c.max == 200000, "reservoir count/min/max",
          (double)c.count, 200000);
    /* Merging exact parts is exact. */
    struct ip_stats *parts[2] = {&a, &b};
    ip_stats_init(&all, 1);
    ip_stats_merge(&all, parts, 2);
    med = ip_stats_median(&all, &exact);
    check(exact && all.count == 1006 && med == 4000000000000LL - 10, "exact merge", (double)med,
          4e12 - 10);
    check(all.min == 1 && all.max == 4000000000010LL, "merge min/max", (double)all.min, 1);
    ip_stats_free(&all);
    /* Merging a sampled part: proportional, close. */
    parts[0] = &c;
    parts[1] = &a;
    ip_stats_init(&all, 1);
    ip_stats_merge(&all, parts, 2);
    med = ip_stats_median(&all, &exact);
    check(!exact && fabs((double)med - 100000) < 2000, "sampled merge", (double)med, 100000);
    check(all.count == 200006, "sampled merge count", (double)all.count, 200006);
    ip_stats_free(&all);
    ip_stats_free(&a);
    ip_stats_free(&b);
    ip_stats_free(&c);
    printf("%s\n", failures ? "stats: failures" : "stats: all checks hold");
    return failures != 0;
}

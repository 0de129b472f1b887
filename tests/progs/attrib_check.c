/*
 * attrib_check.c: unit checks of profiler/attrib.c, the writer side of attribution by time: a
 * thread's state at a moment, before and between its changes, threads kept apart, history let go
 * past the 10 s horizon and past the per-thread cap, and those times then said to be unknown.
 * Exit 0 when every check holds.
 */
#include "profiler/attrib.h"
#include "profiler/collector.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void feed(uint32_t tid, uint64_t ts, uint32_t iter, uint64_t nvtx, uint64_t cudnn)
{
    struct ip_ev_attrib e;
    memset(&e, 0, sizeof e);
    e.h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_CORE, IP_EV_CORE_ATTRIB), sizeof e, iter};
    e.ts = ts;
    e.nvtx = nvtx;
    e.cudnn = cudnn;
    ip_attrib_ingest(tid, &e.h);
}

/* Thread tid at ts: known (1) or not (0), and if known, this state. */
static void expect(const char *what, uint32_t tid, uint64_t ts, int known, uint32_t iter,
                   uint64_t nvtx, uint64_t cudnn)
{
    struct ip_attrib_state st;
    int k = ip_attrib_at(tid, ts, &st);
    if (k != known || (k && (st.iter != iter || st.nvtx != nvtx || st.cudnn != cudnn))) {
        failures++;
        printf("FAIL %s: known %d iter %u nvtx %llu cudnn %llu\n", what, k, st.iter,
               (unsigned long long)st.nvtx, (unsigned long long)st.cudnn);
    }
}

int main(void)
{
    const uint64_t s = 1000000000ull;
    ip_attrib_prepare();
    expect("a thread that never changed", 7, 123, 1, 0, 0, 0);

    feed(1, 100, 1, 0, 0);
    feed(1, 200, 1, 5, 0);
    feed(1, 250, 1, 5, 9);
    feed(1, 300, 0, 0, 0);
    feed(2, 150, 4, 0, 0);
    expect("before the first change", 1, 50, 1, 0, 0, 0);
    expect("at a change", 1, 100, 1, 1, 0, 0);
    expect("in the iteration", 1, 150, 1, 1, 0, 0);
    expect("in the NVTX range", 1, 220, 1, 1, 5, 0);
    expect("in the cuDNN call", 1, 260, 1, 1, 5, 9);
    expect("after everything ended", 1, 1000, 1, 0, 0, 0);
    expect("another thread", 2, 220, 1, 4, 0, 0);

    /* Horizon: one change every 0.5 s for 60 s; the first 64 fill the array, and from then on
     * what is older than 10 s before the newest change goes. */
    for (uint64_t i = 0; i < 120; i++) feed(3, 1000 + i * s / 2, (uint32_t)i + 1, 0, 0);
    expect("long ago: let go", 3, 1000 + s, 0, 0, 0, 0);
    expect("within the horizon", 3, 1000 + 55 * s + 1, 1, 111, 0, 0);
    expect("the newest", 3, 1000 + 70 * s, 1, 120, 0, 0);

    /* Cap: 2^18 + 1 changes within one second keep the newer half. */
    const uint32_t n = (1u << 18) + 1;
    for (uint32_t i = 0; i < n; i++) feed(4, 5000 + i, i + 1, 0, 0);
    expect("past the cap: let go", 4, 5000, 0, 0, 0, 0);
    expect("past the cap: kept", 4, 5000 + n - 10, 1, n - 9, 0, 0);
    expect("other threads untouched", 1, 260, 1, 1, 5, 9);

    /* A thread that leaves inside its iteration: a later thread with its id starts in none. */
    feed(5, 100, 3, 8, 0);
    ip_attrib_thread_left(5, 200);
    expect("before it left", 5, 150, 1, 3, 8, 0);
    expect("after it left", 5, 250, 1, 0, 0, 0);

    ip_attrib_prepare();
    expect("after prepare: forgotten", 1, 260, 1, 0, 0, 0);
    if (!failures) printf("attrib_check: all checks hold\n");
    return failures != 0;
}

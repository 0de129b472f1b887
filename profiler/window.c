/*
 * window.c: recording windows (window.h): the gate every hook reads through ip_recording(), and
 * the list of windows. Opening and closing are rare (a person's request, a program's range), so
 * each takes a slot with one atomic increment and publishes it with release stores; the writer
 * reads the list at every cycle. The collectors hear of each edge (collector.h, window) on the
 * thread that made it: CUPTI turns its activity kinds off outside windows.
 */
#include "window.h"
#include "clock.h"
#include "collector.h"
#include "process.h"

#include <stdatomic.h>
#include <string.h>

_Atomic int ip_window_closed;
_Atomic int64_t ip_iters_open;

static _Atomic int used;
static _Atomic uint32_t count; /* windows opened */
static _Atomic uint64_t overflow;
static struct ip_window wins[IP_WINDOW_MAX];
static _Atomic uint64_t ends[IP_WINDOW_MAX]; /* published end, 0 open */
static _Atomic int toggling;                 /* one edge at a time */

void ip_window_use(int closed)
{
    atomic_store(&used, 1);
    atomic_store(&ip_window_closed, closed);
    if (!closed) ip_window_open(IP_WIN_START);
}

int ip_window_used(void)
{
    return atomic_load_explicit(&used, memory_order_relaxed);
}

static void tell_collectors(int open)
{
    for (int i = 0; i < ip_collector_count(); i++) {
        const struct ip_collector *c = ip_collector_at(i);
        if (c && c->window) c->window(open);
    }
}

uint32_t ip_window_open(enum ip_window_how how)
{
    if (!ip_window_used() || !ip_active() || atomic_exchange(&toggling, 1)) return 0;
    uint32_t n = 0;
    if (atomic_load(&ip_window_closed) || !atomic_load(&count)) {
        n = atomic_load(&count);
        if (n < IP_WINDOW_MAX) {
            struct ip_window *w = &wins[n];
            memset(w, 0, sizeof *w);
            w->start = how == IP_WIN_START ? ip_t0() : ip_clock_now();
            w->opened_by = (uint8_t)how;
            atomic_store_explicit(&ends[n], 0, memory_order_relaxed);
            atomic_store_explicit(&count, n + 1, memory_order_release);
            n++;
        } else {
            atomic_fetch_add(&overflow, 1);
            n = 0;
        }
        tell_collectors(1);
        atomic_store(&ip_window_closed, 0);
    }
    atomic_store(&toggling, 0);
    return n;
}

uint32_t ip_window_close(enum ip_window_how how)
{
    if (!ip_window_used() || atomic_exchange(&toggling, 1)) return 0;
    uint32_t n = 0;
    if (!atomic_load(&ip_window_closed)) {
        atomic_store(&ip_window_closed, 1);
        tell_collectors(0);
        n = atomic_load(&count);
        if (n && n <= IP_WINDOW_MAX) {
            struct ip_window *w = &wins[n - 1];
            w->closed_by = (uint8_t)how;
            w->open_at_close = atomic_load(&ip_iters_open);
            atomic_store_explicit(&ends[n - 1], ip_clock_now(), memory_order_release);
        }
    }
    atomic_store(&toggling, 0);
    return n;
}

int ip_window_list(struct ip_window *out, int max)
{
    uint32_t n = atomic_load_explicit(&count, memory_order_acquire);
    if (n > IP_WINDOW_MAX) n = IP_WINDOW_MAX;
    int k = 0;
    for (uint32_t i = 0; i < n && k < max; i++, k++) {
        out[k] = wins[i];
        out[k].end = atomic_load_explicit(&ends[i], memory_order_acquire);
        if (!out[k].end) out[k].closed_by = 0;
    }
    return k;
}

uint64_t ip_window_overflow(void)
{
    return atomic_load(&overflow);
}

int ip_window_covers(uint64_t ts)
{
    if (!ip_window_used()) return 1;
    uint32_t n = atomic_load_explicit(&count, memory_order_acquire);
    if (n > IP_WINDOW_MAX) n = IP_WINDOW_MAX;
    uint32_t lo = 0, hi = n; /* the last window that started at or before ts */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (wins[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return n && wins[0].opened_by == IP_WIN_START; /* before t0: the run's first */
    uint64_t end = atomic_load_explicit(&ends[lo - 1], memory_order_acquire);
    return !end || ts <= end;
}

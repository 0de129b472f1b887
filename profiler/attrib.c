/*
 * attrib.c: attribution by time (attrib.h). App side: one critical event per change of what a
 * thread is in. Writer side: per thread, the states in time order (threads' events arrive in
 * order), looked up by binary search; history older than ATTRIB_KEEP_NS before the thread's
 * newest change is let go once the array is full (an API record arrives well within a second of
 * its call: CUPTI's flush period is 500 ms by default), and the older half once a thread holds
 * ATTRIB_MAX_POINTS (8 MiB), so a thread changing state faster than that keeps less than 10 s.
 */
#include "attrib.h"
#include "clock.h"
#include "collector.h"
#include "map.h"
#include "opname.h"
#include "process.h"
#include "ring.h"
#include "thread.h"

#include <stdlib.h>
#include <string.h>

#define ATTRIB_KEEP_NS    (10ull * 1000000000ull)
#define ATTRIB_MAX_POINTS ((size_t)1 << 18)

int ip_attrib_by_time;
void (*ip_attrib_kernel_in_call)(uint64_t ext, int64_t dur);

void ip_attrib_changed(void)
{
    if (!ip_attrib_by_time || !ip_recording()) return;
    struct ip_ring *r;
    struct ip_ev_attrib *e = ip_ring_begin_critical(sizeof *e, &r);
    if (!e) return;
    e->h =
        (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_CORE, IP_EV_CORE_ATTRIB), sizeof *e, ip_self.iter};
    e->ts = ip_clock_now();
    e->nvtx = ip_thread_nvtx_top();
    e->cudnn = ip_self.cudnn_call;
    e->op = ip_thread_op();
    e->pad = 0;
    ip_ring_commit(r, sizeof *e);
}

/* ---- writer side -------------------------------------------------------------------------- */

struct point {
    uint64_t ts;
    struct ip_attrib_state st;
};

struct history {
    struct point *p;
    size_t n, cap;
    int trimmed; /* points before p[0] were let go: earlier times are unknown */
};

static struct ip_slots attrib_threads; /* tid -> struct history */

void ip_attrib_prepare(void)
{
    /* A forked child's writer starts from the parent's copy: start clean. */
    for (size_t i = 0; i < attrib_threads.n; i++)
        free(((struct history *)ip_slots_at(&attrib_threads, i))->p);
    ip_slots_free(&attrib_threads);
}

static struct history *history_of(uint32_t tid, int create)
{
    return ip_slots_get(&attrib_threads, tid, sizeof(struct history), create);
}

/* Room for one more point: let go of what is older than the horizon (keeping the last point
 * before it, which says the state at the horizon), else grow. 0 on success. */
static int history_room(struct history *h)
{
    if (h->n < h->cap) return 0;
    if (h->n) {
        uint64_t newest = h->p[h->n - 1].ts;
        size_t drop = 0;
        while (drop + 1 < h->n && h->p[drop + 1].ts + ATTRIB_KEEP_NS < newest) drop++;
        if (h->cap >= ATTRIB_MAX_POINTS && drop < h->n / 2) drop = h->n / 2;
        if (drop >= h->n / 2) {
            memmove(h->p, h->p + drop, (h->n - drop) * sizeof *h->p);
            h->n -= drop;
            h->trimmed = 1;
            return 0;
        }
    }
    size_t cap = h->cap ? h->cap * 2 : 64;
    struct point *p = realloc(h->p, cap * sizeof *p);
    if (!p) return -1;
    h->p = p;
    h->cap = cap;
    return 0;
}

void ip_attrib_ingest(uint32_t tid, const struct ip_ev *ev)
{
    const struct ip_ev_attrib *e = (const struct ip_ev_attrib *)ev;
    struct history *h = history_of(tid, 1);
    if (!h || history_room(h) != 0) return;
    h->p[h->n++] = (struct point){e->ts, {e->h.aux, e->nvtx, e->cudnn, e->op}};
}

void ip_attrib_thread_left(uint32_t tid, uint64_t ts)
{
    struct history *h = history_of(tid, 0);
    if (!h || !h->n) return;
    const struct ip_attrib_state *last = &h->p[h->n - 1].st;
    if ((!last->iter && !last->nvtx && !last->cudnn && !last->op) || history_room(h) != 0) return;
    h->p[h->n++] = (struct point){ts, {0, 0, 0, 0}};
}

int ip_attrib_at(uint32_t tid, uint64_t ts, struct ip_attrib_state *out)
{
    memset(out, 0, sizeof *out);
    const struct history *h = history_of(tid, 0);
    /* A thread that never changed state was in none all along. */
    if (!h || !h->n) return 1;
    if (ts < h->p[0].ts) return !h->trimmed;
    *out = h->p[ip_clock_index(h->p, h->n, sizeof *h->p, ts)].st;
    return 1;
}

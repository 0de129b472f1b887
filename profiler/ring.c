/*
 * ring.c: the per-thread event rings (see ring.h for the contract).
 *
 * Layout: head and tail are byte counts that only grow; a record never wraps: when it would, a
 * padding record fills the end and the record starts at offset 0. The producer caches the tail
 * and re-reads it only when the ring looks full.
 */
#include "ring.h"
#include "thread.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

static struct ip_ring *_Atomic ring_slots[IP_RING_MAX];
static _Atomic uint32_t ring_nslots;
static _Atomic uint64_t ring_cap = 1u << 20;
static _Atomic uint64_t ring_lost_events;
/* Totals of rings that were recycled (writer-owned). */
static uint64_t ring_done_appended, ring_done_dropped;
static _Atomic uint64_t ring_threads;

static pthread_key_t ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;

static void ring_thread_exit(void *arg)
{
    (void)arg;
    ip_ring_retire_self();
}

static void ring_key_create(void)
{
    pthread_key_create(&ring_key, ring_thread_exit);
}

void ip_ring_configure(size_t bytes)
{
    uint64_t cap = 4096;
    while (cap < bytes) cap <<= 1;
    atomic_store(&ring_cap, cap);
}

static struct ip_ring *ring_reuse(uint64_t cap, uint32_t tid)
{
    uint32_t n = atomic_load_explicit(&ring_nslots, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < IP_RING_MAX; i++) {
        struct ip_ring *r = atomic_load_explicit(&ring_slots[i], memory_order_acquire);
        uint32_t expect = IP_RING_FREE;
        if (r && r->cap == cap &&
            atomic_compare_exchange_strong(&r->state, &expect, IP_RING_OWNED)) {
            r->tid = tid;
            return r;
        }
    }
    return NULL;
}

static struct ip_ring *ring_create(uint64_t cap, uint32_t tid)
{
    uint32_t slot = atomic_fetch_add(&ring_nslots, 1);
    if (slot >= IP_RING_MAX) {
        atomic_fetch_sub(&ring_nslots, 1);
        return NULL;
    }
    size_t bytes = sizeof(struct ip_ring) + cap;
    /* Populated now, so that first appends do not take page faults on the app thread. */
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED) {
        /* The slot stays empty (NULL); the writer skips it. */
        return NULL;
    }
    struct ip_ring *r = mem;
    r->cap = cap;
    r->mapped = bytes;
    r->tid = tid;
    atomic_store(&r->state, IP_RING_OWNED);
    atomic_store_explicit(&ring_slots[slot], r, memory_order_release);
    return r;
}

struct ip_ring *ip_ring_self(void)
{
    if (ip_self.ring) return ip_self.ring;
    if (ip_self.ring_failed) return NULL;
    uint32_t tid = ip_thread_tid();
    uint64_t cap = atomic_load(&ring_cap);
    struct ip_ring *r = ring_reuse(cap, tid);
    if (!r) r = ring_create(cap, tid);
    if (!r) {
        ip_self.ring_failed = 1;
        return NULL;
    }
    pthread_once(&ring_key_once, ring_key_create);
    pthread_setspecific(ring_key, r);
    atomic_fetch_add(&ring_threads, 1);
    ip_self.ring = r;
    return r;
}

static inline void ring_bump(_Atomic uint64_t *counter)
{
    /* Only the owning thread writes these counters: no locked instruction needed. */
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

void *ip_ring_reserve(struct ip_ring *r, uint16_t size)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t off = head & (r->cap - 1);
    uint64_t pad = off + size > r->cap ? r->cap - off : 0;
    uint64_t need = pad + size;
    if (r->cap - (head - r->cached_tail) < need) {
        r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (r->cap - (head - r->cached_tail) < need) {
            ring_bump(&r->dropped);
            return NULL;
        }
    }
    if (pad) {
        struct ip_ev *p = (struct ip_ev *)(r->data + off);
        p->type = IP_EV_PAD;
        p->size = 0;
        p->aux = 0;
        atomic_store_explicit(&r->head, head + pad, memory_order_release);
        off = 0;
    }
    return r->data + off;
}

void ip_ring_commit(struct ip_ring *r, uint16_t size)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    ring_bump(&r->appended);
    atomic_store_explicit(&r->head, head + size, memory_order_release);
}

uint64_t ip_ring_drain_all(ip_ring_visit_fn fn, void *ctx)
{
    uint64_t records = 0;
    uint32_t n = atomic_load_explicit(&ring_nslots, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < IP_RING_MAX; i++) {
        struct ip_ring *r = atomic_load_explicit(&ring_slots[i], memory_order_acquire);
        if (!r) continue;
        uint32_t state = atomic_load_explicit(&r->state, memory_order_acquire);
        if (state == IP_RING_FREE) continue;
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
        while (pos < head) {
            uint64_t off = pos & (r->cap - 1);
            const struct ip_ev *ev = (const struct ip_ev *)(r->data + off);
            if (ev->type == IP_EV_PAD) {
                pos += r->cap - off;
                continue;
            }
            fn(ctx, r->tid, ev);
            records++;
            pos += ev->size;
        }
        atomic_store_explicit(&r->tail, pos, memory_order_release);
        if (state == IP_RING_RETIRED) {
            ring_done_appended += atomic_load(&r->appended);
            ring_done_dropped += atomic_load(&r->dropped);
            atomic_store(&r->appended, 0);
            atomic_store(&r->dropped, 0);
            atomic_store(&r->head, 0);
            atomic_store(&r->tail, 0);
            r->cached_tail = 0;
            atomic_store_explicit(&r->state, IP_RING_FREE, memory_order_release);
        }
    }
    return records;
}

void ip_ring_totals(uint64_t *appended, uint64_t *dropped, uint64_t *threads)
{
    uint64_t a = ring_done_appended, d = ring_done_dropped;
    uint32_t n = atomic_load(&ring_nslots);
    for (uint32_t i = 0; i < n && i < IP_RING_MAX; i++) {
        struct ip_ring *r = atomic_load(&ring_slots[i]);
        if (!r) continue;
        a += atomic_load_explicit(&r->appended, memory_order_relaxed);
        d += atomic_load_explicit(&r->dropped, memory_order_relaxed);
    }
    *appended = a;
    *dropped = d + atomic_load(&ring_lost_events);
    *threads = atomic_load(&ring_threads);
}

uint64_t ip_ring_lost(void)
{
    return atomic_load(&ring_lost_events);
}

void *ip_ring_begin(uint16_t size, struct ip_ring **out)
{
    struct ip_ring *r = ip_ring_self();
    if (!r) {
        atomic_fetch_add_explicit(&ring_lost_events, 1, memory_order_relaxed);
        return NULL;
    }
    *out = r;
    return ip_ring_reserve(r, size);
}

void ip_ring_retire_self(void)
{
    struct ip_ring *r = ip_self.ring;
    if (!r) return;
    ip_self.ring = NULL;
    atomic_store_explicit(&r->state, IP_RING_RETIRED, memory_order_release);
}

void ip_ring_atfork_child(void)
{
    uint32_t n = atomic_load(&ring_nslots);
    for (uint32_t i = 0; i < n && i < IP_RING_MAX; i++) {
        struct ip_ring *r = atomic_load(&ring_slots[i]);
        if (!r) continue;
        atomic_store(&r->head, 0);
        atomic_store(&r->tail, 0);
        atomic_store(&r->appended, 0);
        atomic_store(&r->dropped, 0);
        r->cached_tail = 0;
        atomic_store(&r->state, r == ip_self.ring ? IP_RING_OWNED : IP_RING_FREE);
    }
    if (ip_self.ring) ip_self.ring->tid = ip_thread_tid();
    ring_done_appended = ring_done_dropped = 0;
    atomic_store(&ring_lost_events, 0);
    atomic_store(&ring_threads, ip_self.ring ? 1 : 0);
}

/*
 * ring.c: the per-thread event buffers (see ring.h for the contract).
 *
 * A ring is a cycle of blocks. The producer writes into its block `wb` until a record does not
 * fit; then it seals the block and moves to the next one in the cycle if the writer has drained
 * it (BLOCK_FREE), or maps a new block and links it in right after `wb`. The consumer reads from
 * its block `rb` up to the block's head; a sealed block it has read to the end is marked free and
 * left behind. Records never straddle blocks. Ordering: the producer links the next block before
 * it seals the current one (release), and the consumer reads `sealed` before `head` (acquire),
 * so a sealed block's head is final and its `next` is the block that follows.
 *
 * Memory is never unmapped (a ring of an exited thread goes to the next new thread): the budget
 * bounds what is mapped, and pages are committed only as they are first written.
 *
 * Invariants, asserted in debug builds where they matter:
 *  R1. A record lies whole inside one block: committed only where head + size <= cap, and at
 *      least an event header long.
 *  R2. The consumer reads no further than a committed head: rpos <= head, always.
 *  R3. A block is handed back (BLOCK_FREE) only sealed and read to its final head.
 */
#include "ring.h"
#include "clock.h"
#include "futex.h"
#include "thread.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#define FIRST_BLOCK (16u << 10) /* bytes mapped for a ring and its first block */
#define MAX_BLOCK   (256u << 10)

enum { BLOCK_FREE = 0, BLOCK_ACTIVE = 1 };

struct ip_block {
    struct ip_block *_Atomic next;
    _Atomic uint32_t state;
    _Atomic uint32_t sealed;
    uint32_t cap;      /* bytes of data */
    uint32_t critical; /* mapped past the budget: for critical events only, until reused */
    _Atomic uint64_t head;
    _Alignas(64) unsigned char data[];
};

static struct ip_ring *_Atomic ring_list; /* oldest first */
static _Atomic uint64_t ring_budget = 256ull << 20;
static _Atomic uint64_t ring_wait_ns = 100ull * 1000000;
static _Atomic uint64_t ring_mapped, ring_peak, ring_overcommit, ring_lost_events, ring_threads;
static int (*_Atomic ring_waker)(void);
/* Bumped by the writer after every drain; threads waiting for room sleep on it. */
static _Atomic uint32_t ring_progress, ring_waiters;
static __thread uint8_t ring_is_writer __attribute__((tls_model("initial-exec")));

/* Drops of rings that were recycled (writer-owned). */
struct retired_drop {
    uint32_t tid;
    int phase;
    uint64_t count, first, last;
};
static struct retired_drop *retired_drops;
static size_t retired_n, retired_cap;

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

void ip_ring_configure(size_t budget_bytes, uint64_t wait_ms)
{
    atomic_store(&ring_budget, budget_bytes);
    atomic_store(&ring_wait_ns, wait_ms * 1000000ull);
}

void ip_ring_set_waker(int (*wake)(void))
{
    atomic_store(&ring_waker, wake);
}

void ip_ring_mark_writer(void)
{
    ring_is_writer = 1;
}

int ip_ring_is_writer(void)
{
    return ring_is_writer;
}

/* ---- memory ------------------------------------------------------------------------------- */

/* Map `bytes` within the budget, or (over_budget) within a quarter more than it: what critical
 * events may use when the writer cannot keep up. */
static void *ring_map(size_t bytes, int over_budget)
{
    uint64_t now = atomic_fetch_add(&ring_mapped, bytes) + bytes;
    uint64_t budget = atomic_load(&ring_budget);
    if (now > budget) {
        if (!over_budget || now > budget + budget / 4) {
            atomic_fetch_sub(&ring_mapped, bytes);
            return NULL;
        }
        atomic_fetch_add(&ring_overcommit, 1);
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        atomic_fetch_sub(&ring_mapped, bytes);
        return NULL;
    }
    uint64_t peak = atomic_load(&ring_peak);
    while (now > peak && !atomic_compare_exchange_weak(&ring_peak, &peak, now)) {
    }
    return p;
}

static void block_init(struct ip_block *b, size_t bytes)
{
    b->cap = (uint32_t)(bytes - sizeof *b);
    b->critical = 0;
    atomic_store_explicit(&b->head, 0, memory_order_relaxed);
    atomic_store_explicit(&b->sealed, 0, memory_order_relaxed);
    atomic_store_explicit(&b->state, BLOCK_ACTIVE, memory_order_relaxed);
    atomic_store_explicit(&b->next, b, memory_order_relaxed);
}

/* A new ring and its first block, in one mapping. Rings are always granted (past the budget if
 * need be: a thread's first 16 KiB are what let its phase be known); growth is what is bounded. */
static struct ip_ring *ring_create(uint32_t tid)
{
    size_t head = (sizeof(struct ip_ring) + 63) & ~(size_t)63;
    unsigned char *mem = ring_map(FIRST_BLOCK, 1);
    if (!mem) return NULL;
    struct ip_ring *r = (struct ip_ring *)mem;
    struct ip_block *b = (struct ip_block *)(mem + head);
    block_init(b, FIRST_BLOCK - head);
    r->tid = tid;
    r->wb = r->rb = b;
    r->next_size = 2 * FIRST_BLOCK;
    atomic_store(&r->mapped, FIRST_BLOCK);
    for (int p = 0; p < IP_RING_PHASES; p++) atomic_store(&r->first_drop[p], UINT64_MAX);
    atomic_store(&r->state, IP_RING_OWNED);
    /* Appended at the tail: the writer drains rings in the order threads began recording, so a
     * range started on one thread comes before its end on a later one within a cycle. */
    struct ip_ring *_Atomic *link = &ring_list;
    for (;;) {
        struct ip_ring *expect = NULL;
        if (atomic_compare_exchange_strong(link, &expect, r)) break;
        link = &expect->next_ring;
    }
    return r;
}

static struct ip_ring *ring_reuse(uint32_t tid)
{
    for (struct ip_ring *r = atomic_load(&ring_list); r; r = atomic_load(&r->next_ring)) {
        uint32_t expect = IP_RING_FREE;
        if (atomic_load_explicit(&r->state, memory_order_relaxed) == IP_RING_FREE &&
            atomic_compare_exchange_strong(&r->state, &expect, IP_RING_OWNED)) {
            r->tid = tid;
            return r;
        }
    }
    return NULL;
}

void ip_ring_thread_name(uint32_t tid, char out[16])
{
    out[0] = 0;
    for (struct ip_ring *r = atomic_load(&ring_list); r; r = atomic_load(&r->next_ring))
        if (r->tid == tid && atomic_load(&r->state) != IP_RING_FREE) {
            memcpy(out, r->name, 15);
            out[15] = 0;
            return;
        }
}

struct ip_ring *ip_ring_self(void)
{
    if (ip_self.ring) return ip_self.ring;
    if (ip_self.ring_failed) return NULL;
    uint32_t tid = ip_thread_tid();
    struct ip_ring *r = ring_reuse(tid);
    if (!r) r = ring_create(tid);
    if (!r) {
        ip_self.ring_failed = 1;
        return NULL;
    }
    memset(r->name, 0, sizeof r->name);
    prctl(PR_GET_NAME, r->name);
    pthread_once(&ring_key_once, ring_key_create);
    pthread_setspecific(ring_key, r);
    atomic_fetch_add(&ring_threads, 1);
    ip_self.ring = r;
    return r;
}

/* ---- producer ----------------------------------------------------------------------------- */

static inline void ring_bump(_Atomic uint64_t *counter, uint64_t by)
{
    /* Only the owning thread writes these counters: no locked instruction needed. */
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + by,
                          memory_order_relaxed);
}

/* Move the producer from its full block to `n` (already linked after it) and return room. */
static void *ring_switch(struct ip_ring *r, struct ip_block *n)
{
    struct ip_block *b = r->wb;
    atomic_store_explicit(&b->sealed, 1, memory_order_release);
    atomic_store_explicit(&r->wb, n, memory_order_release);
    return n->data;
}

/* A new block linked in after the producer's, or NULL when the budget is spent. */
static struct ip_block *ring_grow(struct ip_ring *r, int over_budget)
{
    size_t bytes = r->next_size;
    void *mem = ring_map(bytes, 0);
    if (!mem && over_budget) mem = ring_map(bytes = FIRST_BLOCK, 1);
    if (!mem) return NULL;
    if (r->next_size < MAX_BLOCK) r->next_size *= 2;
    ring_bump(&r->mapped, bytes);
    struct ip_block *n = mem, *b = r->wb;
    block_init(n, bytes);
    atomic_store_explicit(&n->next, atomic_load_explicit(&b->next, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&b->next, n, memory_order_release);
    return n;
}

static void ring_note_drop(struct ip_ring *r)
{
    uint64_t now = ip_clock_now();
    uint8_t phase = ip_self.phase < IP_RING_PHASES ? ip_self.phase : 0;
    ring_bump(&r->dropped, 1);
    ring_bump(&r->dropped_in[phase], 1);
    if (atomic_load_explicit(&r->first_drop[phase], memory_order_relaxed) == UINT64_MAX)
        atomic_store_explicit(&r->first_drop[phase], now, memory_order_relaxed);
    atomic_store_explicit(&r->last_drop[phase], now, memory_order_relaxed);
}

/* Room past the end of the producer's block: the next drained block, else a new one within the
 * budget, else a wait for the writer (at most INFPROF_BUFFER_WAIT_MS); past that a critical
 * event takes a block beyond the budget (up to a quarter more), anything else is dropped
 * (counted). NULL: dropped. */
static void *ring_slow(struct ip_ring *r, int critical)
{
    uint64_t start = 0, deadline = 0, limit = 0;
    uint32_t seen = 0;
    int (*wake)(void) = atomic_load_explicit(&ring_waker, memory_order_relaxed);
    for (;;) {
        struct ip_block *b = r->wb;
        struct ip_block *n = atomic_load_explicit(&b->next, memory_order_acquire);
        if (n != b && atomic_load_explicit(&n->state, memory_order_acquire) == BLOCK_FREE) {
            atomic_store_explicit(&n->head, 0, memory_order_relaxed);
            atomic_store_explicit(&n->sealed, 0, memory_order_relaxed);
            atomic_store_explicit(&n->state, BLOCK_ACTIVE, memory_order_relaxed);
            n->critical = 0;
            break;
        }
        if (ring_grow(r, 0)) {
            if (wake) wake(); /* growing means the writer is behind: let it drain now */
            break;
        }
        if (critical && !start && ring_grow(r, 1)) {
            /* Kept for critical events: others would fill it before the writer frees any. */
            atomic_load_explicit(&r->wb->next, memory_order_relaxed)->critical = 1;
            break;
        }
        uint64_t now = ip_clock_now();
        uint64_t wait = atomic_load_explicit(&ring_wait_ns, memory_order_relaxed);
        /* Critical events wait for the writer even when others may not (at least 100 ms). */
        if (critical && wait < 100000000ull) wait = 100000000ull;
        if (!start) {
            start = now;
            deadline = ring_is_writer || !wake || !wait || !wake() ? now : now + wait;
            limit = start + 10 * wait;
            seen = atomic_load(&ring_progress);
        } else if (atomic_load(&ring_progress) != seen && deadline > start) {
            /* The writer is draining, only behind: the wait is for a writer that went silent
             * for INFPROF_BUFFER_WAIT_MS, never longer than ten times that in all. */
            seen = atomic_load(&ring_progress);
            deadline = now + wait < limit ? now + wait : limit;
        }
        if (now >= deadline) {
            if (now > start) {
                ring_bump(&r->waited_ns, now - start);
                ring_bump(&r->waits, 1);
            }
            ring_note_drop(r);
            return NULL;
        }
        uint32_t seq = atomic_load(&ring_progress);
        atomic_fetch_add(&ring_waiters, 1);
        if (wake())
            ip_futex_wait(&ring_progress, seq, 1);
        else
            deadline = now; /* the writer is gone: decide at the next turn */
        atomic_fetch_sub(&ring_waiters, 1);
    }
    if (start) {
        ring_bump(&r->waited_ns, ip_clock_now() - start);
        ring_bump(&r->waits, 1);
    }
    return ring_switch(r, atomic_load_explicit(&r->wb->next, memory_order_relaxed));
}

static inline void *ring_reserve(struct ip_ring *r, uint16_t size, int critical)
{
    struct ip_block *b = atomic_load_explicit(&r->wb, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed);
    if (head + size <= b->cap && (critical || !b->critical)) return b->data + head;
    return ring_slow(r, critical);
}

void ip_ring_commit(struct ip_ring *r, uint16_t size)
{
    struct ip_block *b = atomic_load_explicit(&r->wb, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed);
    assert(size >= sizeof(struct ip_ev) && head + size <= b->cap); /* R1 */
    ring_bump(&r->appended, 1);
    atomic_store_explicit(&b->head, head + size, memory_order_release);
}

void ip_ring_note_lost(uint64_t n)
{
    atomic_fetch_add_explicit(&ring_lost_events, n, memory_order_relaxed);
}

void ip_ring_note_dropped(uint64_t n)
{
    atomic_fetch_add_explicit(&ring_lost_events, n, memory_order_relaxed);
}

void ip_ring_note_skipped(void)
{
    struct ip_ring *r = ip_self.ring; /* never created here: this may run in a signal handler */
    if (r)
        ring_note_drop(r);
    else
        atomic_fetch_add_explicit(&ring_lost_events, 1, memory_order_relaxed);
}

static void *ring_begin(uint16_t size, struct ip_ring **out, int critical)
{
    struct ip_ring *r = ip_ring_self();
    if (!r) {
        atomic_fetch_add_explicit(&ring_lost_events, 1, memory_order_relaxed);
        return NULL;
    }
    *out = r;
    return ring_reserve(r, size, critical);
}

void *ip_ring_begin(uint16_t size, struct ip_ring **out)
{
    return ring_begin(size, out, 0);
}

void *ip_ring_begin_critical(uint16_t size, struct ip_ring **out)
{
    return ring_begin(size, out, 1);
}

/* ---- consumer ----------------------------------------------------------------------------- */

/* Drain one block of `r` at most, up to the ring's snapshot (r->snap_block, r->snap_head: what
 * was committed when the cycle began, and no further, so that a producer faster than the writer
 * cannot keep a cycle going forever). Returns 1 when the ring is drained to its snapshot. */
/* Nonzero while the consumer is asked to stop draining soon (ip_ring_set_stop_word). */
static _Atomic uint32_t *_Atomic ring_stop_word;

void ip_ring_set_stop_word(_Atomic uint32_t *word)
{
    atomic_store(&ring_stop_word, word);
}

static int ring_drain_block(struct ip_ring *r, ip_ring_visit_fn fn, void *ctx, uint64_t *records)
{
    _Atomic uint32_t *stop = atomic_load_explicit(&ring_stop_word, memory_order_relaxed);
    unsigned k = 0;
    struct ip_block *b = r->rb;
    int sealed = atomic_load_explicit(&b->sealed, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&b->head, memory_order_acquire);
    int last = b == r->snap_block;
    if (last && head > r->snap_head) {
        head = r->snap_head;
        sealed = 0;
    }
    while (r->rpos < head) {
        const struct ip_ev *ev = (const struct ip_ev *)(b->data + r->rpos);
        if (ev->size < sizeof *ev) break; /* never written: defensive */
        fn(ctx, r->tid, ev);
        (*records)++;
        r->rpos += ev->size;
        /* A block may hold tens of thousands of records: a fork waiting is let in within 256. */
        if (!(++k & 255) && stop && atomic_load_explicit(stop, memory_order_relaxed)) return 0;
    }
    assert(r->rpos <= head); /* R2 */
    if (!sealed) return 1;
    assert(r->rpos == atomic_load_explicit(&b->head, memory_order_acquire)); /* R3 */
    struct ip_block *n = atomic_load_explicit(&b->next, memory_order_acquire);
    atomic_store_explicit(&b->state, BLOCK_FREE, memory_order_release);
    r->rb = n;
    r->rpos = 0;
    return last;
}

static void ring_keep_drops(struct ip_ring *r)
{
    for (int p = 0; p < IP_RING_PHASES; p++) {
        uint64_t n = atomic_exchange(&r->dropped_in[p], 0);
        if (!n) continue;
        if (retired_n == retired_cap) {
            size_t cap = retired_cap ? retired_cap * 2 : 16;
            struct retired_drop *d = realloc(retired_drops, cap * sizeof *d);
            if (!d) continue;
            retired_drops = d;
            retired_cap = cap;
        }
        retired_drops[retired_n++] = (struct retired_drop){
            r->tid, p, n, atomic_load(&r->first_drop[p]), atomic_load(&r->last_drop[p])};
        atomic_store(&r->first_drop[p], UINT64_MAX);
    }
}

/* A drained ring of an exited thread: every block free but the one it restarts from. */
static void ring_recycle(struct ip_ring *r)
{
    ring_keep_drops(r);
    struct ip_block *b = r->rb;
    atomic_store_explicit(&b->head, 0, memory_order_relaxed);
    atomic_store_explicit(&b->sealed, 0, memory_order_relaxed);
    atomic_store_explicit(&b->state, BLOCK_ACTIVE, memory_order_relaxed);
    r->wb = b;
    r->rpos = 0;
    atomic_store_explicit(&r->state, IP_RING_FREE, memory_order_release);
}

/* Rings are drained a block at a time in turn, and threads waiting for room are woken after
 * each turn: a thread whose buffer is full gets a block back within one turn, not after every
 * other thread's backlog. */
uint64_t ip_ring_drain_all(ip_ring_visit_fn fn, void *ctx, int (*between)(void *ctx))
{
    uint64_t records = 0;
    int pending = 0;
    for (struct ip_ring *r = atomic_load(&ring_list); r; r = atomic_load(&r->next_ring)) {
        r->snap_state = atomic_load_explicit(&r->state, memory_order_acquire);
        if (r->snap_state == IP_RING_FREE) continue;
        r->snap_block = atomic_load_explicit(&r->wb, memory_order_acquire);
        r->snap_head = atomic_load_explicit(&r->snap_block->head, memory_order_acquire);
        r->snap_done = 0;
        pending++;
    }
    while (pending) {
        for (struct ip_ring *r = atomic_load(&ring_list); r; r = atomic_load(&r->next_ring)) {
            if (r->snap_state == IP_RING_FREE || r->snap_done) continue;
            if (!ring_drain_block(r, fn, ctx, &records)) continue;
            r->snap_done = 1;
            pending--;
            if (r->snap_state == IP_RING_RETIRED) ring_recycle(r);
        }
        atomic_fetch_add(&ring_progress, 1);
        if (atomic_load(&ring_waiters)) ip_futex_wake(&ring_progress);
        if (between && pending && between(ctx)) break;
    }
    return records;
}

void ip_ring_totals(struct ip_ring_totals *t)
{
    memset(t, 0, sizeof *t);
    for (struct ip_ring *r = atomic_load(&ring_list); r; r = atomic_load(&r->next_ring)) {
        t->appended += atomic_load_explicit(&r->appended, memory_order_relaxed);
        t->dropped += atomic_load_explicit(&r->dropped, memory_order_relaxed);
        t->waited_ns += atomic_load_explicit(&r->waited_ns, memory_order_relaxed);
        t->waits += atomic_load_explicit(&r->waits, memory_order_relaxed);
    }
    t->lost = atomic_load(&ring_lost_events);
    t->dropped += t->lost;
    t->threads = atomic_load(&ring_threads);
    t->mapped = atomic_load(&ring_mapped);
    t->peak_mapped = atomic_load(&ring_peak);
    t->overcommit = atomic_load(&ring_overcommit);
    t->budget = atomic_load(&ring_budget);
}

void ip_ring_drops(ip_ring_drop_fn fn, void *ctx)
{
    for (size_t i = 0; i < retired_n; i++)
        fn(ctx, retired_drops[i].tid, retired_drops[i].phase, retired_drops[i].count,
           retired_drops[i].first, retired_drops[i].last);
    for (struct ip_ring *r = atomic_load(&ring_list); r; r = atomic_load(&r->next_ring)) {
        if (atomic_load_explicit(&r->state, memory_order_acquire) == IP_RING_FREE) continue;
        for (int p = 0; p < IP_RING_PHASES; p++) {
            uint64_t n = atomic_load_explicit(&r->dropped_in[p], memory_order_relaxed);
            if (n)
                fn(ctx, r->tid, p, n, atomic_load(&r->first_drop[p]),
                   atomic_load(&r->last_drop[p]));
        }
    }
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
    for (struct ip_ring *r = atomic_load(&ring_list); r; r = atomic_load(&r->next_ring)) {
        struct ip_block *b = r->rb;
        for (struct ip_block *x = atomic_load(&b->next); x != b; x = atomic_load(&x->next))
            atomic_store(&x->state, BLOCK_FREE);
        atomic_store(&b->head, 0);
        atomic_store(&b->sealed, 0);
        atomic_store(&b->state, BLOCK_ACTIVE);
        r->wb = b;
        r->rpos = 0;
        atomic_store(&r->appended, 0);
        atomic_store(&r->dropped, 0);
        atomic_store(&r->waited_ns, 0);
        atomic_store(&r->waits, 0);
        for (int p = 0; p < IP_RING_PHASES; p++) {
            atomic_store(&r->dropped_in[p], 0);
            atomic_store(&r->first_drop[p], UINT64_MAX);
        }
        atomic_store(&r->state, r == ip_self.ring ? IP_RING_OWNED : IP_RING_FREE);
    }
    if (ip_self.ring) ip_self.ring->tid = ip_thread_tid();
    retired_n = 0;
    atomic_store(&ring_lost_events, 0);
    atomic_store(&ring_threads, ip_self.ring ? 1 : 0);
    atomic_store(&ring_progress, 0);
    atomic_store(&ring_waiters, 0);
}

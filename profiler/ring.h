/*
 * ring.h: per-thread bounded event buffers between hooks and the writer thread.
 *
 * Each thread that records gets one single-producer single-consumer byte ring, mapped with mmap
 * on its first event (never malloc, so hooks may run under other libraries' locks) and recycled
 * after the thread exits. Appending takes no lock: reserve, fill, commit. A full ring drops the
 * event and counts it; nothing waits. Only the writer thread consumes.
 */
#ifndef INFPROF_RING_H
#define INFPROF_RING_H

#include "events.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define IP_RING_MAX 4096

struct ip_ring {
    _Atomic uint32_t state; /* IP_RING_FREE, _OWNED, _RETIRED */
    uint32_t tid;
    uint64_t cap; /* bytes, a power of two */
    uint64_t mapped;
    _Alignas(64) _Atomic uint64_t head; /* producer: bytes committed */
    uint64_t cached_tail;
    _Atomic uint64_t dropped; /* events lost because the ring was full */
    _Atomic uint64_t appended;
    _Alignas(64) _Atomic uint64_t tail; /* consumer: bytes consumed */
    _Alignas(64) unsigned char data[];
};

enum { IP_RING_FREE = 0, IP_RING_OWNED = 1, IP_RING_RETIRED = 2 };

/* Ring size for rings created from now on (bytes, rounded up to a power of two). */
void ip_ring_configure(size_t bytes);

/* The calling thread's ring, created on first use; NULL when none can be had (counted). */
struct ip_ring *ip_ring_self(void);

/* Room for `size` bytes in the calling thread's ring, or NULL (the drop is counted). The caller
 * fills the record (header included) and calls ip_ring_commit with the same size. */
void *ip_ring_reserve(struct ip_ring *r, uint16_t size);
/* The usual entry: the calling thread's ring and room in it, or NULL (counted either way). */
void *ip_ring_begin(uint16_t size, struct ip_ring **out);
void ip_ring_commit(struct ip_ring *r, uint16_t size);

/* Writer side. Calls fn for every committed record of every ring, then frees drained rings of
 * exited threads. Returns the number of records. */
typedef void (*ip_ring_visit_fn)(void *ctx, uint32_t tid, const struct ip_ev *ev);
uint64_t ip_ring_drain_all(ip_ring_visit_fn fn, void *ctx);

/* Totals over all rings, for the run metadata. */
void ip_ring_totals(uint64_t *appended, uint64_t *dropped, uint64_t *threads);
/* Rings that could not be created (no slot or mmap failed): their events are counted here. */
uint64_t ip_ring_lost(void);

/* Thread exit: the ring is drained and then recycled by the writer. */
void ip_ring_retire_self(void);
/* In a forked child: every ring is emptied (the parent's events stay the parent's) and only the
 * calling thread's remains owned. */
void ip_ring_atfork_child(void);

#endif

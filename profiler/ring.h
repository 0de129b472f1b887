/*
 * ring.h: per-thread event buffers between hooks and the writer thread.
 *
 * Each thread that records gets one single-producer single-consumer buffer: a cycle of blocks
 * mapped with mmap (never malloc, so hooks may run under other libraries' locks), small at first
 * (16 KiB) and grown block by block, each twice the last up to 256 KiB, from one process-wide
 * budget (INFPROF_BUFFER_MB). Blocks the writer has drained are reused in turn. Appending takes
 * no lock: reserve, fill, commit.
 *
 * Nothing is lost by default. A full block moves on to a drained one, else grows; when the
 * budget is spent the thread waits for the writer (counted as time the program waited) while
 * the writer drains, until it has been silent for INFPROF_BUFFER_WAIT_MS, and ten times that at
 * most in all; only then is an event dropped, counted with the phase it
 * was recorded in and the time, so the report can say which phases and iterations it touches.
 * Critical events (phase changes, iteration bounds, NVTX ranges) first take a block past the
 * budget (a quarter more at most, counted, kept for critical events), then wait for the writer
 * (at least 100 ms of silence, whatever INFPROF_BUFFER_WAIT_MS says): they are dropped only
 * past that.
 *
 * Rings of exited threads are drained and then handed to new threads; there is no limit on the
 * number of threads. Only the writer thread consumes.
 */
#ifndef INFPROF_RING_H
#define INFPROF_RING_H

#include "events.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define IP_RING_PHASES 10 /* phase ids 0..9 (phase.h), for drop attribution */

struct ip_block;

struct ip_ring {
    struct ip_ring *_Atomic next_ring; /* every ring, oldest first */
    _Atomic uint32_t state;            /* IP_RING_FREE, _OWNED, _RETIRED */
    uint32_t tid;
    char name[16];               /* the owning thread's name when it took the ring (PR_GET_NAME) */
    struct ip_block *_Atomic wb; /* producer's block (read by the writer to bound a drain) */
    struct ip_block *rb;         /* consumer's block */
    uint64_t rpos;               /* consumer's offset in rb */
    /* The consumer's snapshot for the cycle in progress (ip_ring_drain_all). */
    struct ip_block *snap_block;
    uint64_t snap_head;
    uint32_t snap_state, snap_done;
    uint32_t next_size; /* bytes of the next block this ring maps */
    _Atomic uint64_t appended, dropped, waited_ns, waits, mapped;
    /* Drops by the phase the thread was in, and when the first and the last happened. */
    _Atomic uint64_t dropped_in[IP_RING_PHASES];
    _Atomic uint64_t first_drop[IP_RING_PHASES], last_drop[IP_RING_PHASES];
};

enum { IP_RING_FREE = 0, IP_RING_OWNED = 1, IP_RING_RETIRED = 2 };

/* The process-wide budget for every thread's buffers, and the longest a thread waits for room
 * for one event before it is dropped. */
void ip_ring_configure(size_t budget_bytes, uint64_t wait_ms);
/* Called when a thread needs the writer to drain (set by the writer: no upward include); it
 * returns 0 when no writer will drain (then nobody waits). */
void ip_ring_set_waker(int (*wake)(void));
/* The calling thread is the writer: it never waits for itself. */
void ip_ring_mark_writer(void);

/* The calling thread's ring, created on first use; NULL when none can be had (counted). */
struct ip_ring *ip_ring_self(void);
/* The calling thread is the writer (ip_ring_mark_writer). */
int ip_ring_is_writer(void);
/* Writer side: the name thread `tid` had when it took its ring ("" unknown). Read from the ring,
 * not from /proc: opening a file would take, for a moment, a descriptor number the program's
 * next open would otherwise get. */
void ip_ring_thread_name(uint32_t tid, char out[16]);

/* Room for `size` bytes in the calling thread's ring, or NULL (the drop is counted). The caller
 * fills the record (header included) and calls ip_ring_commit with the same size. */
void *ip_ring_begin(uint16_t size, struct ip_ring **out);
/* The same for an event that must not be lost (phase, iteration, NVTX range): NULL only when
 * no memory can be mapped at all. */
void *ip_ring_begin_critical(uint16_t size, struct ip_ring **out);
void ip_ring_commit(struct ip_ring *r, uint16_t size);
/* An event the calling thread could not record at all (a signal handler interrupted one of our
 * hooks, whose re-entrancy guard turned it away): counted as a drop, async-signal-safe. */
void ip_ring_note_skipped(void);
/* n events lost without a record of their own (a collector's record that stood for n more, which
 * could not be appended): counted as dropped, from any thread. */
void ip_ring_note_dropped(uint64_t n);
/* Writer side: n events drained but not stored (the disk reserve reached): counted as dropped. */
void ip_ring_note_lost(uint64_t n);

/* Writer side. Calls fn for every committed record of every ring, then recycles drained rings
 * of exited threads and wakes threads waiting for room. Returns the number of records. */
typedef void (*ip_ring_visit_fn)(void *ctx, uint32_t tid, const struct ip_ev *ev);
/* between(ctx), when not NULL, runs after each turn over the rings (the writer commits there
 * when a long backlog would otherwise make one large, slow commit); when it returns nonzero the
 * drain stops there (a fork waiting): what is left stays in the rings for the next one. */
uint64_t ip_ring_drain_all(ip_ring_visit_fn fn, void *ctx, int (*between)(void *ctx));

/* A word that, while nonzero, makes the drain stop within 256 records of each block (a fork
 * waiting for the writer); what is left is drained next time. */
void ip_ring_set_stop_word(_Atomic uint32_t *word);

/* Totals over all rings, for the run metadata. */
struct ip_ring_totals {
    uint64_t appended, dropped, threads, waited_ns, waits;
    uint64_t mapped, peak_mapped, overcommit, budget, lost; /* lost: no ring could be had */
};
void ip_ring_totals(struct ip_ring_totals *t);
/* Each thread's drops by phase: fn(ctx, tid, phase, count, first_ts, last_ts). */
typedef void (*ip_ring_drop_fn)(void *ctx, uint32_t tid, int phase, uint64_t count, uint64_t first,
                                uint64_t last);
void ip_ring_drops(ip_ring_drop_fn fn, void *ctx);

/* Thread exit: the ring is drained and then recycled by the writer. */
void ip_ring_retire_self(void);
/* In a forked child: every ring is emptied (the parent's events stay the parent's) and only the
 * calling thread's remains owned. */
void ip_ring_atfork_child(void);

#endif

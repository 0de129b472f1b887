/*
 * cupti_pool.c: the CUPTI collector's buffer pool, behind the two buffer callbacks CUPTI calls.
 *
 * All buffers are mapped and touched once, at start (MAP_POPULATE), so that handing CUPTI a
 * buffer on the application's launch path costs a pop from a free stack, never an allocation or
 * a page fault. A completed buffer is queued for the writer thread (cupti_ingest.c), which reads
 * it and puts it back. No buffer free means CUPTI drops records: both the refused request and
 * CUPTI's dropped count are counted and end in the run metadata.
 *
 * Locking: pool.lock guards the stack and the queue, is held for a few instructions, and never
 * across a call into CUPTI or the writer. CUPTI calls both callbacks under its own locks, from
 * application threads and from its worker thread.
 */
#include "cupti_internal.h"
#include "../profiler/clock.h"
#include "../profiler/futex.h"
#include "../profiler/writer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>

static struct {
    pthread_mutex_t lock;
    unsigned char *base;
    size_t size;
    uint32_t count, nfree;
    uint32_t *free_stack;
    struct {
        uint32_t index;
        size_t valid;
    } * done; /* FIFO of completed buffers, at most count */
    uint32_t done_head, done_len, snapshot;
    uint32_t ingesting;        /* taken by the writer, not yet released */
    _Atomic uint32_t released; /* bumped (and futex-woken) whenever a buffer comes back */
    _Atomic uint64_t dropped_records, refused, completed;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

int ip_cupti_pool_init(size_t size, uint32_t count)
{
    if (pool.base) return 0;
    if (!size || !count) return -1;
    void *mem = mmap(NULL, size * count, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_POPULATE, -1, 0);
    pool.free_stack = calloc(count, sizeof *pool.free_stack);
    pool.done = calloc(count, sizeof *pool.done);
    if (mem == MAP_FAILED || !pool.free_stack || !pool.done) {
        if (mem != MAP_FAILED) munmap(mem, size * count);
        free(pool.free_stack);
        free(pool.done);
        pool.free_stack = NULL;
        pool.done = NULL;
        return -1;
    }
    pool.base = mem;
    pool.size = size;
    pool.count = count;
    for (uint32_t i = 0; i < count; i++) pool.free_stack[i] = count - 1 - i;
    pool.nfree = count;
    return 0;
}

void CUPTIAPI ip_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    pthread_mutex_lock(&pool.lock);
    if (pool.nfree) {
        uint32_t i = pool.free_stack[--pool.nfree];
        *buffer = pool.base + (size_t)i * pool.size;
        *size = pool.size;
    }
    pthread_mutex_unlock(&pool.lock);
    /* No buffer: CUPTI drops records until one is free again; both are counted. */
    if (!*buffer) atomic_fetch_add(&pool.refused, 1);
}

void CUPTIAPI ip_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid)
{
    (void)size;
    size_t dropped = 0;
    /* Outside our lock: CUPTI may call us back under its own. */
    if (ip_cupti.ActivityGetNumDroppedRecords &&
        ip_cupti.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&pool.dropped_records, dropped);
    unsigned char *p = buffer;
    /* Only our own buffers can come back; anything else is ignored rather than trusted. */
    if (!p || !pool.base || p < pool.base || p >= pool.base + pool.size * pool.count ||
        (size_t)(p - pool.base) % pool.size)
        return;
    if (valid > pool.size) valid = pool.size;
    atomic_fetch_add(&pool.completed, 1);
    uint32_t index = (uint32_t)((size_t)(p - pool.base) / pool.size);
    pthread_mutex_lock(&pool.lock);
    uint32_t tail = (pool.done_head + pool.done_len) % pool.count;
    pool.done[tail].index = index;
    pool.done[tail].valid = valid;
    pool.done_len++;
    uint32_t pending = pool.done_len;
    pthread_mutex_unlock(&pool.lock);
    if (pending * 2 >= pool.count) ip_writer_wake();
}

uint32_t ip_cupti_pool_snapshot(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.snapshot = pool.done_len;
    uint32_t n = pool.snapshot;
    pthread_mutex_unlock(&pool.lock);
    return n;
}

int ip_cupti_pool_take(uint8_t **buffer, size_t *valid)
{
    int ok = 0;
    pthread_mutex_lock(&pool.lock);
    if (pool.snapshot && pool.done_len) {
        *buffer = pool.base + (size_t)pool.done[pool.done_head].index * pool.size;
        *valid = pool.done[pool.done_head].valid;
        pool.done_head = (pool.done_head + 1) % pool.count;
        pool.done_len--;
        pool.snapshot--;
        pool.ingesting++;
        ok = 1;
    }
    pthread_mutex_unlock(&pool.lock);
    return ok;
}

void ip_cupti_pool_release(uint8_t *buffer)
{
    uint32_t index = (uint32_t)((size_t)(buffer - pool.base) / pool.size);
    pthread_mutex_lock(&pool.lock);
    pool.free_stack[pool.nfree++] = index;
    if (pool.ingesting) pool.ingesting--;
    pthread_mutex_unlock(&pool.lock);
    atomic_fetch_add(&pool.released, 1);
    ip_futex_wake(&pool.released);
}

void ip_cupti_pool_counters(uint64_t *dropped_records, uint64_t *refused_buffers,
                            uint64_t *completed_buffers)
{
    *dropped_records = atomic_load(&pool.dropped_records);
    *refused_buffers = atomic_load(&pool.refused);
    *completed_buffers = atomic_load(&pool.completed);
}

void ip_cupti_pool_add_dropped(uint64_t n)
{
    atomic_fetch_add(&pool.dropped_records, n);
}

int ip_cupti_pool_wait_idle(uint64_t timeout_ms)
{
    uint64_t deadline = ip_clock_now() + timeout_ms * 1000000ull;
    for (;;) {
        uint32_t seq = atomic_load(&pool.released);
        pthread_mutex_lock(&pool.lock);
        int idle = pool.done_len == 0 && pool.ingesting == 0;
        pthread_mutex_unlock(&pool.lock);
        if (idle) return 0;
        uint64_t now = ip_clock_now();
        if (now >= deadline) return -1;
        ip_writer_wake();
        ip_futex_wait(&pool.released, seq, 50);
    }
}

void ip_cupti_pool_atfork_child(void)
{
    /* The parent's completed buffers are the parent's: the child forgets them. */
    pthread_mutex_init(&pool.lock, NULL);
    for (uint32_t i = 0; i < pool.count; i++) pool.free_stack[i] = pool.count - 1 - i;
    pool.nfree = pool.count;
    pool.done_head = pool.done_len = pool.snapshot = pool.ingesting = 0;
}

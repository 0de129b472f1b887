/*
 * cupti_park.c: the CUPTI collector, writer side: work records waiting for the API record of the
 * call that issued them (INFPROF_ATTRIBUTION=records). CUPTI fills kernel records and API
 * records into different buffers, which complete in any order: a kernel may reach us before the
 * call that launched it. Such a record is copied here, in arrival order, and read once its call
 * is known; a record waits at most a bounded time, and the queue holds at most PARK_MAX_BYTES
 * (then it is read unattributed, counted). Order is kept: once one record waits, those after it
 * wait behind it, so the GPU busy time still sees records nearly in time order.
 */
#include "cupti_internal.h"
#include "cupti_layout.h"

#include <stdlib.h>
#include <string.h>

#define PARK_MAX_BYTES (64u << 20)

/* A parked record: when it was parked (writer's clock), then the record itself. */
struct parked {
    uint64_t since;
    uint32_t size; /* of the record, bytes, multiple of 8 */
    uint32_t pad;
};

static struct {
    uint8_t *buf;
    size_t head, tail, cap; /* live bytes: [head, tail) */
    size_t count;
    uint64_t parked, expired;
} pk;

void ip_cupti_park_reset(void)
{
    free(pk.buf);
    memset(&pk, 0, sizeof pk);
}

size_t ip_cupti_park_count(void)
{
    return pk.count;
}

int ip_cupti_park_add(const CUpti_Activity *r, uint64_t now)
{
    size_t size = ip_cupti_record_size(r->kind);
    size_t need = sizeof(struct parked) + size;
    if (pk.tail + need > pk.cap && pk.head) { /* move the live bytes to the front */
        memmove(pk.buf, pk.buf + pk.head, pk.tail - pk.head);
        pk.tail -= pk.head;
        pk.head = 0;
    }
    if (pk.tail + need > pk.cap) {
        size_t cap = pk.cap ? pk.cap * 2 : 1u << 20;
        while (cap < pk.tail + need) cap *= 2;
        if (cap > PARK_MAX_BYTES) return -1;
        uint8_t *b = realloc(pk.buf, cap);
        if (!b) return -1;
        pk.buf = b;
        pk.cap = cap;
    }
    struct parked *p = (struct parked *)(pk.buf + pk.tail);
    p->since = now;
    p->size = (uint32_t)size;
    p->pad = 0;
    memcpy(p + 1, r, size);
    pk.tail += need;
    pk.count++;
    pk.parked++;
    return 0;
}

const CUpti_Activity *ip_cupti_park_head(uint64_t *since)
{
    if (!pk.count) return NULL;
    const struct parked *p = (const struct parked *)(pk.buf + pk.head);
    *since = p->since;
    return (const CUpti_Activity *)(p + 1);
}

void ip_cupti_park_pop(int expired)
{
    if (!pk.count) return;
    const struct parked *p = (const struct parked *)(pk.buf + pk.head);
    pk.head += sizeof *p + p->size;
    pk.count--;
    pk.expired += expired != 0;
    if (!pk.count) pk.head = pk.tail = 0;
}

void ip_cupti_park_counters(uint64_t *parked, uint64_t *expired)
{
    *parked = pk.parked;
    *expired = pk.expired;
}

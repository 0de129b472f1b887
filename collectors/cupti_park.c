/*
 * cupti_park.c: the CUPTI collector, writer side: work records waiting for the API record of the
 * call that issued them (INFPROF_ATTRIBUTION=records). CUPTI fills kernel records and API
 * records into different buffers, which complete in any order: a kernel may reach us before the
 * call that launched it. Such a record is copied here, in arrival order, and read once its call
 * is known; a record waits at most a bounded time, and the queue holds at most PARK_MAX_BYTES
 * (then it is read unattributed, counted). Order is kept: once one record waits, those after it
 * wait behind it, so the GPU busy time still sees records nearly in time order.
 */
#include "cupti_config.h"
#include "cupti_internal.h"
#include "cupti_layout.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"

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

static int park_add(const CUpti_Activity *r, uint64_t now)
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

static const CUpti_Activity *park_head(uint64_t *since)
{
    if (!pk.count) return NULL;
    const struct parked *p = (const struct parked *)(pk.buf + pk.head);
    *since = p->since;
    return (const CUpti_Activity *)(p + 1);
}

static void park_pop(int expired)
{
    if (!pk.count) return;
    const struct parked *p = (const struct parked *)(pk.buf + pk.head);
    pk.head += sizeof *p + p->size;
    pk.count--;
    pk.expired += expired != 0;
    if (!pk.count) pk.head = pk.tail = 0;
}

/* How long a work record waits for its call: a few of CUPTI's flush periods. */
static uint64_t wait_ns(void)
{
    uint64_t ms = (uint64_t)ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_FLUSH_MS);
    ms = ms ? 4 * ms : 10000;
    return (ms < 2000 ? 2000 : ms) * 1000000ull;
}

void ip_cupti_park_release(struct ip_store *s, int all, ip_cupti_known_fn known,
                           ip_cupti_read_fn read)
{
    uint64_t since, now = ip_clock_now(), limit = wait_ns();
    const CUpti_Activity *r;
    while ((r = park_head(&since))) {
        int k = known(r);
        if (!k && !all && now - since < limit) break;
        read(s, r);
        park_pop(!k);
    }
}

void ip_cupti_park_work(struct ip_store *s, const CUpti_Activity *r, ip_cupti_known_fn known,
                        ip_cupti_read_fn read)
{
    if (!pk.count && known(r)) {
        read(s, r);
        return;
    }
    uint64_t since, now = ip_clock_now();
    while (park_add(r, now) != 0) {
        /* Full: the oldest goes as it is. */
        const CUpti_Activity *old = park_head(&since);
        if (!old) {
            read(s, r);
            return;
        }
        read(s, old);
        park_pop(!known(old));
    }
}

void ip_cupti_park_counters(uint64_t *parked, uint64_t *expired)
{
    *parked = pk.parked;
    *expired = pk.expired;
}

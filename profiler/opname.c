/*
 * opname.c: operator names interned without a lock (opname.h). Open addressing over a static
 * table: a slot's key is 0 (free), 1 (being written) or the name's hash with the top bit set
 * (ready, published with release order after the name). A writer claims a free slot with one
 * compare-and-swap; a reader that finds a slot being written moves on, so two threads interning
 * the same new name at once may take two slots (both map to the same string).
 */
#include "opname.h"
#include "store.h"
#include "thread.h"

#include <stdatomic.h>
#include <string.h>

#define KEY_BUSY 1u

static struct {
    _Atomic uint32_t key;
    uint16_t len;
    char name[IP_OPNAME_MAX];
} slots[IP_OPNAME_SLOTS];

static const char *(*name_source)(const void *rf);
static _Atomic uint64_t overflow;

void ip_opname_source(const char *(*name_of)(const void *rf))
{
    name_source = name_of;
}

uint32_t ip_opname_id(const char *name)
{
    if (!name) return 0;
    size_t len = strnlen(name, IP_OPNAME_MAX - 1);
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)name[i]) * 16777619u;
    h |= 0x80000000u;
    for (uint32_t probe = 0; probe < IP_OPNAME_SLOTS; probe++) {
        uint32_t i = (h + probe) & (IP_OPNAME_SLOTS - 1);
        uint32_t k = atomic_load_explicit(&slots[i].key, memory_order_acquire);
        if (!k) {
            uint32_t free_key = 0;
            if (atomic_compare_exchange_strong_explicit(&slots[i].key, &free_key, KEY_BUSY,
                                                        memory_order_acquire,
                                                        memory_order_relaxed)) {
                memcpy(slots[i].name, name, len);
                slots[i].name[len] = 0;
                slots[i].len = (uint16_t)len;
                atomic_store_explicit(&slots[i].key, h, memory_order_release);
                return i + 1;
            }
            k = free_key;
        }
        if (k == h && slots[i].len == len && !memcmp(slots[i].name, name, len)) return i + 1;
    }
    atomic_fetch_add_explicit(&overflow, 1, memory_order_relaxed);
    return 0;
}

uint32_t ip_thread_op(void)
{
    if (!ip_self.op_rf || !name_source) return 0;
    if (!ip_self.op_id) {
        uint32_t id = ip_opname_id(name_source(ip_self.op_rf));
        ip_self.op_id = id ? id : UINT32_MAX; /* table full: not asked again for this operator */
    }
    return ip_self.op_id == UINT32_MAX ? 0 : ip_self.op_id;
}

int64_t ip_opname_string(struct ip_store *s, uint32_t id)
{
    if (!id || id > IP_OPNAME_SLOTS) return IP_NULL;
    uint32_t i = id - 1;
    if (atomic_load_explicit(&slots[i].key, memory_order_acquire) <= KEY_BUSY) return IP_NULL;
    return ip_store_intern(s, slots[i].name, slots[i].len);
}

uint64_t ip_opname_overflow(void)
{
    return atomic_load_explicit(&overflow, memory_order_relaxed);
}

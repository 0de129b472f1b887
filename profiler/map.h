/*
 * map.h: a small open-addressing hash map from uint64 keys to uint64 values, for the writer
 * thread's bookkeeping (thread ids, range ids, pointers), and a table of items found by key on
 * top of it (ip_slots). Key 0 cannot be stored.
 */
#ifndef INFPROF_MAP_H
#define INFPROF_MAP_H

#include <stddef.h>
#include <stdint.h>

struct ip_map {
    uint64_t *keys, *vals;
    size_t cap, used;
};

/* The value slot for key, inserted (value 0) when absent; NULL when out of memory or key 0. */
uint64_t *ip_map_put(struct ip_map *m, uint64_t key);
/* The value slot for key, or NULL. */
uint64_t *ip_map_get(const struct ip_map *m, uint64_t key);
void ip_map_del(struct ip_map *m, uint64_t key);
void ip_map_free(struct ip_map *m);

/* Items of one size found by key (a thread id): the map gives an index into a growable array.
 * A pointer to an item is valid until the next insert. */
struct ip_slots {
    struct ip_map index; /* key -> index + 1 */
    unsigned char *items;
    size_t n, cap, size;
};

/* The item for key, zeroed when inserted (create); NULL when absent, out of memory or key 0.
 * size: the item's size, the same at every call. */
void *ip_slots_get(struct ip_slots *t, uint64_t key, size_t size, int create);
/* The i-th item inserted (i < t->n). */
static inline void *ip_slots_at(const struct ip_slots *t, size_t i)
{
    return t->items + i * t->size;
}
/* Forget every item (the caller frees what they own first). */
void ip_slots_free(struct ip_slots *t);

#endif

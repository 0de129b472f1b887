/*
 * map.h: a small open-addressing hash map from uint64 keys to uint64 values, for the writer
 * thread's bookkeeping (thread ids, range ids, pointers). Key 0 cannot be stored.
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

#endif

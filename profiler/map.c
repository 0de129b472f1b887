/*
 * map.c: the writer's hash map (map.h): linear probing, backward-shift deletion, grows at half
 * full.
 */
#include "map.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static int map_grow(struct ip_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys), *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = slot_of(m->keys[i], cap);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

uint64_t *ip_map_get(const struct ip_map *m, uint64_t key)
{
    if (!m->cap || !key) return NULL;
    for (size_t j = slot_of(key, m->cap); m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == key) return &m->vals[j];
    return NULL;
}

uint64_t *ip_map_put(struct ip_map *m, uint64_t key)
{
    if (!key) return NULL;
    uint64_t *v = ip_map_get(m, key);
    if (v) return v;
    if ((m->used + 1) * 2 > m->cap && map_grow(m) != 0) return NULL;
    size_t j = slot_of(key, m->cap);
    while (m->keys[j]) j = (j + 1) & (m->cap - 1);
    m->keys[j] = key;
    m->vals[j] = 0;
    m->used++;
    return &m->vals[j];
}

void ip_map_del(struct ip_map *m, uint64_t key)
{
    if (!m->cap || !key) return;
    size_t j = slot_of(key, m->cap);
    while (m->keys[j] && m->keys[j] != key) j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) return;
    m->keys[j] = 0;
    m->used--;
    /* Shift back the entries of the same probe run that follow. */
    for (size_t k = (j + 1) & (m->cap - 1); m->keys[k]; k = (k + 1) & (m->cap - 1)) {
        size_t home = slot_of(m->keys[k], m->cap);
        int between = j <= k ? (j < home && home <= k) : (j < home || home <= k);
        if (between) continue;
        m->keys[j] = m->keys[k];
        m->vals[j] = m->vals[k];
        m->keys[k] = 0;
        j = k;
    }
}

void ip_map_free(struct ip_map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
    m->cap = m->used = 0;
}

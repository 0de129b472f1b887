/*
 * map.c: the writer's hash map (map.h): linear probing, backward-shift deletion, grows at half
 * full; and the table of items by key built on it.
 */
#include "map.h"

#include <stdlib.h>
#include <string.h>

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

void *ip_slots_get(struct ip_slots *t, uint64_t key, size_t size, int create)
{
    uint64_t *slot = create ? ip_map_put(&t->index, key) : ip_map_get(&t->index, key);
    if (!slot) return NULL;
    if (*slot) return ip_slots_at(t, *slot - 1);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        unsigned char *items = realloc(t->items, cap * size);
        if (!items) {
            ip_map_del(&t->index, key);
            return NULL;
        }
        t->items = items;
        t->cap = cap;
    }
    t->size = size;
    memset(t->items + t->n * size, 0, size);
    *slot = ++t->n;
    return ip_slots_at(t, t->n - 1);
}

void ip_slots_free(struct ip_slots *t)
{
    free(t->items);
    ip_map_free(&t->index);
    memset(t, 0, sizeof *t);
}

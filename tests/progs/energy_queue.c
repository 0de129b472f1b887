/*
 * energy_queue.c: the overflow path of the energy collector's queue (collectors/nvml_internal.h):
 * readings past IP_ENERGY_QUEUE waiting for the writer are counted and dropped, the ones kept
 * come out whole and in order, and the queue takes readings again once drained.
 */
#include "collectors/nvml_internal.h"

#include <stdio.h>
#include <string.h>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "energy_queue: %s failed (line %d)\n", #c, __LINE__);                  \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    static struct ip_energy_queue q;
    struct ip_energy_reading r, out;
    memset(&r, 0, sizeof r);
    int refused = 0;
    for (int i = 0; i < IP_ENERGY_QUEUE + 100; i++) {
        r.ts = (uint64_t)i, r.energy_mj = i * 10;
        refused += ip_energy_push(&q, &r) != 0;
    }
    CHECK(refused == 100);
    CHECK(atomic_load(&q.dropped) == 100);
    for (int i = 0; i < IP_ENERGY_QUEUE; i++) {
        CHECK(ip_energy_pop(&q, &out) == 1);
        CHECK(out.ts == (uint64_t)i && out.energy_mj == i * 10);
    }
    CHECK(ip_energy_pop(&q, &out) == 0);
    r.ts = 7;
    CHECK(ip_energy_push(&q, &r) == 0);
    CHECK(ip_energy_pop(&q, &out) == 1 && out.ts == 7);
    printf("energy_queue: %d readings kept, 100 counted as dropped\n", IP_ENERGY_QUEUE);
    return 0;
}

/*
 * torch_internal.h: what the libtorch collector's files share: its ring events and the writer
 * side's entry points, with torch_symbols.h (what it interposes) and torch_state.h (what was
 * found, the thread's state).
 *
 *   torch.c         app side: the hooks (setters, allocator reports, TorchScript calls)
 *   torch_state.c   app side: finding libtorch, its getters, the thread's state, the poller
 *   torch_ingest.c  writer side: rows, the run metadata (torch_api, collector status)
 */
#ifndef INFPROF_TORCH_INTERNAL_H
#define INFPROF_TORCH_INTERNAL_H

#include "torch_state.h"
#include "torch_symbols.h"
#include "../profiler/events.h"

#include <stdatomic.h>
#include <stdint.h>

struct ip_store;

enum { IP_EV_TORCH_MEMORY = 1, IP_EV_TORCH_ITERATION = 2 };

/* One allocator report (c10::reportMemoryUsageToProfiler). aux: phase of the calling thread. */
struct ip_ev_torch_memory {
    struct ip_ev h;
    uint64_t ts;
    uint64_t ptr;
    int64_t bytes;     /* > 0 allocation, < 0 free */
    int64_t allocated; /* the allocator's totals after the event */
    int64_t reserved;
    int8_t device_type, device_index; /* c10::Device */
    uint8_t pad[6];
};

/* One outermost TorchScript Method call that returned (an exception is no iteration). */
struct ip_ev_torch_iteration {
    struct ip_ev h;
    uint64_t start, end;
    uint64_t nvtx; /* innermost NVTX push/pop range of the thread at the call, 0 none */
};

/* ---- torch_ingest.c (writer side) ---- */

void ip_torch_ingest_prepare(struct ip_store *s);
void ip_torch_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
void ip_torch_ingest_flush(struct ip_store *s, int final);
void ip_torch_ingest_finish(struct ip_store *s);

#endif

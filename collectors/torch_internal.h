/*
 * torch_internal.h: what the libtorch collector's files share: its ring events and the writer
 * side's entry points, with torch_symbols.h (what it interposes) and torch_state.h (what was
 * found, the thread's state).
 *
 *   torch.c         app side: the hooks (setters, allocator reports, TorchScript calls)
 *   torch_state.c   app side: finding libtorch, its getters, the thread's state, the poller
 *   torch_scope.c   app side: record_function scopes as iterations (a RecordFunction callback)
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

/* One iteration seen by the torch collector: an outermost TorchScript Method call that returned
 * (an exception is no iteration), or a record_function scope (torch_scope.c). aux: its id. */
struct ip_ev_torch_iteration {
    struct ip_ev h;
    uint64_t start, end;
    uint64_t nvtx;   /* innermost NVTX push/pop range of the thread at the call, 0 none */
    int64_t batch;   /* from the scope's name ('batch=N'), 0 unknown */
    uint32_t source; /* the iterations table's: 1 TorchScript call, 3 record_function scope */
    uint32_t pad;
};

/* ---- app side ---- */

/* Record an iteration that ended (torch_scope.c); the caller holds the hook guard. */
void ip_torch_iteration_emit(uint32_t iter, uint64_t start, uint64_t end, uint64_t nvtx,
                             int64_t batch, uint32_t source);
/* At a safe point once libtorch is found: register the record_function callback, once
 * (torch_scope.c). */
void ip_torch_scope_arm(void);

/* ---- torch_ingest.c (writer side) ---- */

void ip_torch_ingest_prepare(struct ip_store *s);
void ip_torch_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
void ip_torch_ingest_flush(struct ip_store *s, int final);
void ip_torch_ingest_finish(struct ip_store *s);

#endif

/*
 * attrib.h: attribution by time, for INFPROF_ATTRIBUTION=records. There no callback runs on the
 * thread that launches a kernel; CUPTI's API record of the launch says only which thread made the
 * call and when. So each thread tells the writer whenever what it is in changes (its outermost
 * iteration, its innermost NVTX range, the cuDNN call in progress, its innermost operator): one
 * small event per change, never one per launch. The writer keeps each thread's recent history of
 * those states and answers "what was thread T in at time t" when the API record arrives. The phase
 * has its own history (phase.h, ip_phase_at).
 */
#ifndef INFPROF_ATTRIB_H
#define INFPROF_ATTRIB_H

#include "events.h"

#include <stdint.h>

struct ip_store;

/* App side: 1 once records mode is chosen (set at start, before any hook runs). */
extern int ip_attrib_by_time;

/* App side: the calling thread's iteration, innermost NVTX range or cuDNN call changed. Appends
 * the state event in records mode; does nothing otherwise. Call inside the hook guard. */
void ip_attrib_changed(void);

/* What a thread was in at a moment. */
struct ip_attrib_state {
    uint32_t iter;  /* outermost open iteration, 0 none */
    uint64_t nvtx;  /* innermost NVTX push/pop range, 0 none */
    uint64_t cudnn; /* cuDNN call in progress (its ext id), 0 none */
    uint32_t op;    /* innermost PyTorch operator (opname.h), 0 none */
};

/* Writer side. */
/* The kernels launched inside cuDNN calls, told to the collector that folds those calls
 * (collectors/cudnn_fold.c) by CUPTI's writer side: the call's ext id and the kernel's GPU time;
 * ext 0: a kernel whose launch is no longer known (it may have been made in one). NULL: none. */
extern void (*ip_attrib_kernel_in_call)(uint64_t ext, int64_t dur);
void ip_attrib_prepare(void);
void ip_attrib_ingest(uint32_t tid, const struct ip_ev *ev);
/* Thread tid left (it exited with a phase, phase.c): from ts on it is in nothing, so a later
 * thread given the same id does not inherit an iteration or range left open. */
void ip_attrib_thread_left(uint32_t tid, uint64_t ts);
/* Thread tid's state at ts (our clock), and 1; a thread that never changed state was in none.
 * 0 (state none) only when ts is older than the history kept for that thread. */
int ip_attrib_at(uint32_t tid, uint64_t ts, struct ip_attrib_state *out);

#endif

/*
 * iteration.h: the calling thread's current iteration, for attribution. An iteration is one
 * forward call of the program (a TorchScript Method call, an NVTX range named like
 * INFPROF_ITERATION_RANGE); every launch a thread issues inside it carries its id, so each kernel
 * and copy is tied to its iteration directly and the iteration's GPU work can be waited for
 * (latency to GPU completion, docs/report.md).
 *
 * Ids are unique in the process (1, 2, ...). Iterations may nest (an NVTX iteration range around
 * a TorchScript call): each gets an id, and the outermost owns the work launched inside it.
 */
#ifndef INFPROF_ITERATION_H
#define INFPROF_ITERATION_H

#include <stdint.h>

struct ip_store;

/* A new iteration begins on the calling thread; returns its id. Lock-free. */
uint32_t ip_iter_begin(void);
/* The same for one that may end on another thread (an NVTX start/end range): where it is the
 * outermost, ip_self.iter_loose says so to the edge observers (what they keep for the thread
 * until its end would be kept for ever if it ends elsewhere). */
uint32_t ip_iter_begin_loose(void);
/* The iteration `id` of the calling thread ended (it stops owning new work if it did). */
void ip_iter_end(uint32_t id);
/* The calling thread's outermost open iteration, 0 none. */
uint32_t ip_iter_current(void);

/* A collector's observer of outermost iterations (collectors/torch_memfold.c: the allocator's
 * reports folded, and through it the sampled operator capture), called on the iteration's thread
 * as it begins (begin 1, after it owns the thread's work; while recording) and ends (begin 0);
 * NULL none. Set once, at a safe point. */
typedef void (*ip_iter_edge_fn)(uint32_t id, int begin);
void ip_iter_observe(ip_iter_edge_fn fn);

/* The batch size a range or scope name gives ('batch=N'), 0 none. */
int64_t ip_iter_batch_in(const char *name);

/* Writer side: the one writer of table iterations. */
void ip_iter_prepare(struct ip_store *s);
/* An iteration that ended: its row. phase: the one its thread spent most of it in. source: 1
 * TorchScript call, 2 NVTX range. batch, nvtx: IP_NULL when unknown. label_id: the string id of
 * the mark's name (the NVTX range's or record_function scope's text), IP_NULL none. Times in
 * our clock. */
void ip_iter_row(struct ip_store *s, uint32_t id, uint32_t tid, uint64_t start, uint64_t end,
                 int source, int64_t batch, int64_t nvtx, int64_t label_id);
/* An outermost iteration's CPU time and context switches (IP_EV_CORE_ITER_CPU): its row of
 * iteration_cpu. */
struct ip_ev;
void ip_iter_cpu_ingest(const struct ip_ev *ev);
/* GPU work launched inside iteration `id` ended at `end` (our clock). */
void ip_iter_gpu_work(uint32_t id, uint64_t end);
/* At the end of the run: each iteration's gpu_end and gpu_items. */
void ip_iter_finish(struct ip_store *s);

#endif

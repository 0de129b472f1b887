/*
 * phase.h: the phase tracker. A phase is a (grad mode, autocast) pair; a thread is in exactly one
 * at a time, and everything it issues (kernels, allocations, cuDNN calls, API calls) belongs to
 * it. Ids are fixed: 1 + 3 * grad + autocast; 0 means no libtorch phase is known.
 *
 * App side: hooks report the thread's state with ip_phase_set(); a change appends a phase event
 * and (at a safe point, ip_phase_emit) moves the thread's NVTX range in domain "infprof".
 * Writer side: spans go to phase_spans; ip_phase_at() answers "which phase was thread T in at
 * time t" for records that arrive later (CUPTI API records).
 */
#ifndef INFPROF_PHASE_H
#define INFPROF_PHASE_H

#include "events.h"

#include <stdint.h>

struct ip_store;

enum { IP_GRAD = 0, IP_NO_GRAD = 1, IP_INFERENCE_MODE = 2 };
enum { IP_AUTOCAST_OFF = 0, IP_AUTOCAST_FP16 = 1, IP_AUTOCAST_BF16 = 2 };
/* c10::ScalarType codes used for autocast dtypes. */
enum { IP_DTYPE_HALF = 5, IP_DTYPE_FLOAT = 6, IP_DTYPE_BFLOAT16 = 15 };
#define IP_PHASE_COUNT 10 /* ids 0..9 */

uint8_t ip_phase_id(uint8_t grad, uint8_t cuda_ac, uint8_t cpu_ac);
const char *ip_phase_grad_name(uint8_t id);
const char *ip_phase_autocast_name(uint8_t id);
/* "inference_mode | autocast bf16"; "none" for 0. */
const char *ip_phase_label(uint8_t id);

/* App side: the calling thread's state is (grad, cuda_ac, cpu_ac) as of now. Lock-free; safe
 * under other libraries' locks (no NVTX call here). */
void ip_phase_set(uint8_t grad, uint8_t cuda_ac, uint8_t cpu_ac);
/* Confirmation by polling: the libtorch collector installs a poller that reads the getters and
 * calls ip_phase_set. IP_POLL_LAUNCH (inside an op: grad mode only, autocast reads false there)
 * or IP_POLL_SAFE (outside ops: grad mode and autocast). NULL until libtorch is found. */
enum { IP_POLL_LAUNCH = 0, IP_POLL_SAFE = 1 };
extern void (*ip_phase_poller)(int where);

/* App side: the calling thread leaves libtorch's phases (it is exiting): its span closes now,
 * rather than at the end of the run. */
void ip_phase_leave(void);

/* App side, at a point where calling NVTX is safe: bring the thread's infprof NVTX range in line
 * with its phase. */
void ip_phase_emit(void);
/* App side: end this thread's open infprof range (finish). */
void ip_phase_emit_end(void);

/* Writer side. */
void ip_phase_prepare(struct ip_store *s);
void ip_phase_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
uint8_t ip_phase_at(uint32_t tid, uint64_t ts);
/* The phase thread `tid` spent most of [start, end] in (iterations that cross a guard); one
 * that begins in the default mode (grad, autocast off) and enters another inside takes the mode
 * it entered (the model's), however long its default part. */
uint8_t ip_phase_dominant(uint32_t tid, uint64_t start, uint64_t end);
void ip_phase_finish(struct ip_store *s, uint64_t end_ts);

#endif

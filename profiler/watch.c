/*
 * watch.c: the words of watch.h (phase changes, CUDA started and the CUDA devices used, for our
 * samplers).
 */
#include "watch.h"

_Atomic uint32_t ip_watch_seq;
_Atomic uint32_t ip_watch_phase;
_Atomic int ip_watch_parked;
void (*_Atomic ip_watch_resume)(void);
_Atomic int ip_watch_waiters;
_Atomic int ip_watch_wants_edges;
_Atomic uint64_t ip_watch_device_mask;
_Atomic int ip_watch_cuda_started;
void (*_Atomic ip_watch_gpu_soon_fn)(void);

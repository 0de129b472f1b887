/*
 * emit.h: the NVTX ranges infprof itself emits, in domain "infprof" (the phase ranges of
 * phase.c, the cuDNN call ranges of collectors/cudnn.c), so that Nsight Systems shows them. Call
 * these with the hook guard held: our own NVTX capture then skips them while a chained tool
 * still receives them.
 */
#ifndef INFPROF_EMIT_H
#define INFPROF_EMIT_H

#include <nvtx3/nvToolsExt.h>
#include <stdatomic.h>

/* The domain, created on first use (threads racing here get the same domain by name). */
nvtxDomainHandle_t ip_emit_domain(void);
/* The same, never created here (NULL until then): safe in a signal handler. */
nvtxDomainHandle_t ip_emit_domain_peek(void);
/* Event attributes naming `text`, registered once in *cache (falls back to the ASCII text when
 * the tool registers nothing). */
void ip_emit_attr(nvtxEventAttributes_t *a, _Atomic(nvtxStringHandle_t) *cache, const char *text);

#endif

/*
 * emit.c: infprof's own NVTX ranges (emit.h).
 */
#include "emit.h"

#include <string.h>

static _Atomic(nvtxDomainHandle_t) emit_domain;

nvtxDomainHandle_t ip_emit_domain(void)
{
    nvtxDomainHandle_t d = atomic_load(&emit_domain);
    if (!d) {
        d = nvtxDomainCreateA("infprof");
        atomic_store(&emit_domain, d);
    }
    return d;
}

nvtxDomainHandle_t ip_emit_domain_peek(void)
{
    return atomic_load(&emit_domain);
}

void ip_emit_attr(nvtxEventAttributes_t *a, _Atomic(nvtxStringHandle_t) *cache, const char *text)
{
    nvtxStringHandle_t s = atomic_load(cache);
    if (!s) {
        s = nvtxDomainRegisterStringA(ip_emit_domain(), text);
        atomic_store(cache, s);
    }
    memset(a, 0, sizeof *a);
    a->version = NVTX_VERSION;
    a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a->messageType = s ? NVTX_MESSAGE_TYPE_REGISTERED : NVTX_MESSAGE_TYPE_ASCII;
    if (s)
        a->message.registered = s;
    else
        a->message.ascii = text;
}

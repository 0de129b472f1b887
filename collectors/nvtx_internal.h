/*
 * nvtx_internal.h: the NVTX collector's event, shared by its app side (nvtx.c: the injection and
 * the wrapped NVTX entry points) and its writer side (nvtx_ingest.c: ranges, iterations).
 */
#ifndef INFPROF_NVTX_INTERNAL_H
#define INFPROF_NVTX_INTERNAL_H

#include "../profiler/events.h"

#include <stdint.h>

struct ip_store;

enum {
    IP_NVTX_PUSH = 1,
    IP_NVTX_POP,
    IP_NVTX_START,
    IP_NVTX_END,
    IP_NVTX_MARK,
    IP_NVTX_DOMAIN, /* id: domain handle, text: its name */
    IP_NVTX_STRING, /* id: string handle, text: the string */
    IP_NVTX_THREAD, /* id: OS thread id, text: its name */
};

struct ip_ev_nvtx {
    struct ip_ev h; /* aux: text length */
    uint64_t ts;
    uint64_t id;         /* our range id (push, start), or a handle */
    uint64_t ext;        /* start/end: the id the program holds (a chained tool's, or ours) */
    uint64_t domain;     /* domain handle, 0 for the default domain */
    uint64_t registered; /* message given as a registered string handle (no text then) */
    uint32_t category, color;
    uint8_t kind, phase, pad[2];
    uint32_t iter; /* push, start: the iteration this range is (iteration.h), 0 none */
    char text[];
};

void ip_nvtx_ingest_prepare(struct ip_store *s);
void ip_nvtx_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
void ip_nvtx_ingest_finish(struct ip_store *s);

#endif

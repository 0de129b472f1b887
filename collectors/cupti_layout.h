/*
 * cupti_layout.h: the layout of synthetic CUPTI activity buffers, shared by the replay path and
 * the test stub of libcupti: records of the real CUPTI 13 types, back to back, each padded to
 * 8 bytes, sized by kind. (Real buffers are read only through cuptiActivityGetNextRecord, so
 * this layout never meets a real one.)
 */
#ifndef INFPROF_CUPTI_LAYOUT_H
#define INFPROF_CUPTI_LAYOUT_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

static inline size_t ip_cupti_record_size(CUpti_ActivityKind kind)
{
    size_t n;
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
        n = sizeof(CUpti_ActivityKernel10);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        n = sizeof(CUpti_ActivityMemcpy6);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        n = sizeof(CUpti_ActivityMemcpyPtoP4);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        n = sizeof(CUpti_ActivityMemset4);
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        n = sizeof(CUpti_ActivityMemory4);
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        n = sizeof(CUpti_ActivityMemoryPool3);
        break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        n = sizeof(CUpti_ActivityAPI);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        n = sizeof(CUpti_ActivitySynchronization2);
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        n = sizeof(CUpti_ActivityExternalCorrelation);
        break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        n = sizeof(CUpti_ActivityGraphTrace2);
        break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
        n = sizeof(CUpti_ActivityDevice5);
        break;
    default:
        n = sizeof(CUpti_Activity);
        break;
    }
    return (n + 7) & ~(size_t)7;
}

/* cuptiActivityGetNextRecord over that layout, with CUPTI's results: MAX_LIMIT_REACHED at the
 * end, INVALID_KIND for a record of kind INVALID (what CUPTI says of an incomplete record) or one
 * cut by the end of the valid bytes. */
static inline CUptiResult ip_cupti_layout_next(uint8_t *buffer, size_t valid,
                                               CUpti_Activity **record)
{
    if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t *p = *record ? (uint8_t *)*record + ip_cupti_record_size((*record)->kind) : buffer;
    if (p + sizeof(CUpti_Activity) > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    CUpti_Activity *r = (CUpti_Activity *)p;
    if (r->kind == CUPTI_ACTIVITY_KIND_INVALID ||
        p + ip_cupti_record_size(r->kind) > buffer + valid)
        return CUPTI_ERROR_INVALID_KIND;
    *record = r;
    return CUPTI_SUCCESS;
}

#endif

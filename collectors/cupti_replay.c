/*
 * cupti_replay.c: the replay path (replay.h): CUPTI's entry points that the writer uses are
 * replaced by readers of the synthetic layout (cupti_layout.h); buffers go through the real
 * buffer callbacks and pool.
 */
#include "cupti_config.h"
#include "replay.h"
#include "registry.h"
#include "cupti_internal.h"
#include "cupti_layout.h"
#include "../profiler/config.h"

#include <stdatomic.h>
#include <string.h>

static size_t replay_dropped;

static CUptiResult replay_dropped_records(CUcontext ctx, uint32_t stream, size_t *dropped)
{
    (void)ctx, (void)stream;
    *dropped = replay_dropped;
    replay_dropped = 0;
    return CUPTI_SUCCESS;
}

int ip_replay_begin(void)
{
    if (ip_cupti_pool_init((size_t)ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_BUFFER_KB) * 1024,
                           (uint32_t)ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_BUFFERS)) != 0)
        return -1;
    ip_cupti.ActivityGetNextRecord = ip_cupti_layout_next;
    ip_cupti.ActivityGetNumDroppedRecords = replay_dropped_records;
    ip_cupti_clock_offset = 0;
    atomic_store(&ip_cupti_by_records,
                 ip_cfg_group_int(&ip_cupti_cfg, IP_CUPTI_CFG_ATTRIBUTION) == 1);
    ip_collector_status(IP_COLLECTOR_CUPTI, "on", "replay of synthetic records");
    return 0;
}

int ip_replay_buffer(struct ip_replay_buf *b)
{
    size_t max_records;
    ip_cupti_buffer_requested(&b->data, &b->size, &max_records);
    b->used = 0;
    return b->data != NULL;
}

void *ip_replay_add(struct ip_replay_buf *b, CUpti_ActivityKind kind)
{
    size_t n = ip_cupti_record_size(kind);
    if (!b->data || b->used + n > b->size) return NULL;
    CUpti_Activity *r = (CUpti_Activity *)(b->data + b->used);
    memset(r, 0, n);
    r->kind = kind;
    b->used += n;
    return r;
}

void ip_replay_complete(struct ip_replay_buf *b, size_t dropped)
{
    replay_dropped = dropped;
    ip_cupti_buffer_completed(NULL, 0, b->data, b->size, b->used);
    b->data = NULL;
}

void ip_replay_launch(uint32_t corr)
{
    ip_cupti_note_issue(corr, 0, 0, 0, 1);
}

void ip_replay_issue(uint32_t corr, int domain, uint32_t cbid, uint64_t ts, int launch)
{
    ip_cupti_note_issue(corr, (uint8_t)domain, cbid, ts, launch);
}

int ip_replay_sync(void)
{
    return ip_cupti_pool_wait_idle(10000);
}

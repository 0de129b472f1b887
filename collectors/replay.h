/*
 * replay.h: feeding synthetic CUPTI records through the collector without a GPU. Buffers are
 * requested and completed through the very callbacks CUPTI calls (ip_cupti_buffer_requested /
 * _completed), filled with records of the real CUPTI 13 types; launches go through the launch
 * callback's own path. Used by the fixture tests and by infprof-bench.
 */
#ifndef INFPROF_REPLAY_H
#define INFPROF_REPLAY_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

struct ip_replay_buf {
    uint8_t *data;
    size_t size, used;
};

/* Put the CUPTI collector in replay mode (after the pipeline started). 0 on success. */
int ip_replay_begin(void);
/* A buffer from the pool, as CUPTI would request it; 0 when the pool is empty (counted). */
int ip_replay_buffer(struct ip_replay_buf *b);
/* A zeroed record of `kind` with its kind set, or NULL when the buffer is full. */
void *ip_replay_add(struct ip_replay_buf *b, CUpti_ActivityKind kind);
/* Hand the buffer back as completed, CUPTI reporting `dropped` records lost with it. */
void ip_replay_complete(struct ip_replay_buf *b, size_t dropped);
/* What the issue callback does for a kernel launch with this correlation id, on this thread
 * (call and entry time unknown: the API record gives them). */
void ip_replay_launch(uint32_t corr);
/* The same for any call: domain 1 runtime / 2 driver, its callback id, its entry time (our
 * clock, 0 unknown), launch: a kernel or graph launch. */
void ip_replay_issue(uint32_t corr, int domain, uint32_t cbid, uint64_t ts, int launch);
/* Wait until the writer has ingested every buffer completed so far (tests that need records to
 * land in different writer cycles). 0 on success, -1 after 10 s. */
int ip_replay_sync(void);

#endif

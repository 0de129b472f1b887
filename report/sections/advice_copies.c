/*
 * advice_copies.c: the advice rules pageable_copies and synchronous_copies (docs/report.md,
 * "Advice"): host-device copies of the steady state from pageable memory, and copies made with
 * the synchronous CUDA calls that stall the host. The figures come from the run model
 * (run/cuda_run.h).
 */
#include "advice.h"
#include "../base/json.h"
#include "../run/cuda_run.h"
#include "sections.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Thresholds, as docs/report.md states them. */
#define PAGEABLE_PCT_MIN 1  /* pageable_copies: share of the GPU's busy time, at least */
#define SYNC_COPIES_MIN  10 /* synchronous_copies: calls, at least */

static void rule_pageable(const struct advice_ctx *c, const struct phase_info *ph,
                          struct advice_list *l)
{
    (void)ph;
    /* Copies of the steady state only: loading weights once from pageable memory is the norm
     * (cuda_run.h's cuda_pageable says which count). */
    const struct cuda_run *r = run_cuda(c->db, c->p);
    const struct cuda_pageable *pg = &r->pageable;
    int64_t busy = r->gpu_busy;
    if (!pg->copies || pg->ns * 100 < PAGEABLE_PCT_MIN * busy) return;
    struct advice *a = advice_add(l, "pageable_copies", NULL);
    if (!a) return;
    char b1[32], b2[32], b3[32];
    snprintf(a->finding, sizeof a->finding,
             "%lld %s%s (%lld to the GPU, %lld from it; %s, %s) went through pageable host"
             " memory, %.1f%% of the GPU's busy time (%s): each is staged through a driver"
             " buffer and blocks the calling thread.",
             (long long)pg->copies, advice_plural(pg->copies, "copy", "copies"),
             pg->windows ? " during iterations" : "", (long long)pg->to_device,
             (long long)pg->from_device, advice_bytes_text(b1, sizeof b1, (double)pg->bytes),
             advice_ns_text(b2, sizeof b2, (double)pg->ns), advice_pct(pg->ns, busy),
             advice_ns_text(b3, sizeof b3, (double)busy));
    advice_ev_int(a, "copies", pg->copies);
    advice_ev_int(a, "to_device", pg->to_device);
    advice_ev_int(a, "from_device", pg->from_device);
    advice_ev_int(a, "bytes", pg->bytes);
    advice_ev_int(a, "copy_ns", pg->ns);
    advice_ev_int(a, "copies_outside_iterations", pg->outside);
    advice_ev_int(a, "gpu_busy_ns", busy);
    advice_ev_num(a, "copy_pct_of_busy", advice_pct(pg->ns, busy));
    snprintf(a->try_, sizeof a->try_,
             "pin the host tensors (tensor.pin_memory(), or"
             " at::TensorOptions().pinned_memory(true)) and copy with non_blocking=true");
}

/* cudaMemcpy, cudaMemcpy2D, cuMemcpyHtoD, ...: every copy function without "Async". */
static int sync_copy(const char *name)
{
    return (!strncmp(name, "cudaMemcpy", 10) || !strncmp(name, "cuMemcpy", 8)) &&
           !advice_has(name, "Async");
}

static void rule_sync_copies(const struct advice_ctx *c, const struct phase_info *ph,
                             struct advice_list *l)
{
    (void)ph;
    /* Calls: the API records' count, or at the default settings (no API records, count 0) the
     * calls the issue callback saw issue a copy (cuda_api_fn.issued); host time only from API
     * records. Most calls first. */
    const struct cuda_run *r = run_cuda(c->db, c->p);
    char by[512] = "", names[256] = "";
    int64_t calls = 0, total = 0;
    int more = 0, timed = 0;
    for (int i = 0; i < r->napi; i++) {
        const struct cuda_api_fn *f = r->api_by_issued[i];
        const char *name = f->name;
        if (!sync_copy(name)) continue;
        int64_t n = f->issued;
        calls += n;
        if (f->timed) timed = 1, total += f->total;
        size_t len;
        char *q = json_quote(name, strlen(name), &len);
        if (!q) cli_fail("out of memory");
        /* A name too long for the room is left out of both lists: "calls" still counts it. */
        if (strlen(by) + len + 32 < sizeof by && strlen(names) + strlen(name) + 40 < sizeof names) {
            advice_append(by, sizeof by, "%s%s: %lld", by[0] ? ", " : "", q, (long long)n);
            advice_append(names, sizeof names, "%s%s %lld", names[0] ? ", " : "", name,
                          (long long)n);
        } else {
            more = 1;
        }
        free(q);
    }
    if (calls < SYNC_COPIES_MIN) return;
    if (more) advice_append(names, sizeof names, "%s...", names[0] ? ", " : "");
    struct advice *a = advice_add(l, "synchronous_copies", NULL);
    if (!a) return;
    char b1[32];
    char host[96];
    if (timed)
        snprintf(host, sizeof host, "%s of host time in all",
                 advice_ns_text(b1, sizeof b1, (double)total));
    else
        snprintf(host, sizeof host,
                 "their host time was not recorded (INFPROF_CUDA_API=1 records it)");
    snprintf(a->finding, sizeof a->finding,
             "The program called synchronous copy functions %lld times (%s), %s: each returns only"
             " once the copy, and the GPU work queued before it, is done.",
             (long long)calls, names, host);
    advice_ev_int(a, "calls", calls);
    if (timed)
        advice_ev_int(a, "host_ns", total);
    else
        advice_append(a->evidence, sizeof a->evidence, ", \"host_ns\": null");
    advice_append(a->evidence, sizeof a->evidence, ", \"by_function\": {%s}", by);
    snprintf(a->try_, sizeof a->try_,
             "copy with cudaMemcpyAsync on the work's stream from pinned memory"
             " (tensor.to(device, /*non_blocking=*/true)) and synchronise once per iteration");
}

const struct advice_rule advice_rule_pageable = {
    "pageable_copies", 90, ADVICE_AFTER, rule_pageable,
    "copies to or from pageable host memory took at least 1% of the GPU's busy time"};
const struct advice_rule advice_rule_sync_copies = {
    "synchronous_copies", 80, ADVICE_AFTER, rule_sync_copies,
    "the program called copy functions without Async at least 10 times"};

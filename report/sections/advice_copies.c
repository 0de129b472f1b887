/*
 * advice_copies.c: the advice rules pageable_copies and synchronous_copies (docs/report.md,
 * "Advice"): host-device copies of the steady state from pageable memory, and copies made with
 * the synchronous CUDA calls that stall the host.
 */
#include "advice.h"
#include "../base/json.h"
#include "sections.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The run's iterations as sorted, merged intervals; 0 when there are none. */
static int iteration_windows_load(sqlite3 *db, int64_t (**out)[2])
{
    int64_t(*v)[2] = NULL;
    int n = 0, cap = 0;
    sqlite3_stmt *st = db_prepare(db, "SELECT start, start + dur FROM iterations ORDER BY start");
    while (db_step(st)) {
        int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
        if (n && s <= v[n - 1][1]) {
            if (e > v[n - 1][1]) v[n - 1][1] = e;
            continue;
        }
        if (n == cap && !(v = realloc(v, sizeof *v * (size_t)(cap = cap ? cap * 2 : 64))))
            cli_fail("out of memory");
        v[n][0] = s, v[n][1] = e;
        n++;
    }
    sqlite3_finalize(st);
    *out = v;
    return n;
}

static int inside(int64_t (*v)[2], int n, int64_t t)
{
    int lo = 0, hi = n; /* the first interval that ends after t */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid][1] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo][0] <= t;
}

static void rule_pageable(const struct advice_ctx *c, const struct phase_info *ph,
                          struct advice_list *l)
{
    (void)ph;
    sqlite3 *db = c->db;
    /* Copies of the steady state only: loading weights once from pageable memory is the norm.
     * With iterations recorded, only copies that start inside one count. The host side of a
     * copy: the source of HtoD, HtoA, HtoH; the destination of DtoH, AtoH
     * (CUpti_ActivityMemcpyKind); 1 is CUPTI's pageable memory kind. */
    int64_t(*iv)[2];
    int niv = iteration_windows_load(db, &iv);
    sqlite3_stmt *st =
        db_prepare(db, "SELECT start, bytes, dur, copy_kind FROM memcpy WHERE (copy_kind IN"
                       " (1, 3, 9) AND src_kind = 1) OR (copy_kind IN (2, 4) AND dst_kind = 1)");
    int64_t v[6] = {0}; /* copies, bytes, ns, to the device, from it, outside iterations */
    while (db_step(st)) {
        if (niv && !inside(iv, niv, sqlite3_column_int64(st, 0))) {
            v[5]++;
            continue;
        }
        int kind = sqlite3_column_int(st, 3);
        v[0]++;
        v[1] += sqlite3_column_int64(st, 1);
        v[2] += sqlite3_column_int64(st, 2);
        v[3] += kind == 1 || kind == 3;
        v[4] += kind == 2 || kind == 4;
    }
    sqlite3_finalize(st);
    free(iv);
    int64_t busy =
        db_has_table(db, "phase_gpu") ? db_int(db, "SELECT sum(busy_ns) FROM phase_gpu", 0) : 0;
    if (busy <= 0)
        busy = db_int(db,
                      "SELECT (SELECT coalesce(sum(dur), 0) FROM kernels) +"
                      " (SELECT coalesce(sum(dur), 0) FROM memcpy)",
                      0);
    if (!v[0] || v[2] * 100 < PAGEABLE_PCT_MIN * busy) return;
    struct advice *a = advice_add(l, "pageable_copies", NULL);
    if (!a) return;
    char b1[32], b2[32], b3[32];
    snprintf(a->finding, sizeof a->finding,
             "%lld %s%s (%lld to the GPU, %lld from it; %s, %s) went through pageable host"
             " memory, %.1f%% of the GPU's busy time (%s): each is staged through a driver"
             " buffer and blocks the calling thread.",
             (long long)v[0], advice_plural(v[0], "copy", "copies"),
             niv ? " during iterations" : "", (long long)v[3], (long long)v[4],
             advice_bytes_text(b1, sizeof b1, (double)v[1]),
             advice_ns_text(b2, sizeof b2, (double)v[2]), advice_pct(v[2], busy),
             advice_ns_text(b3, sizeof b3, (double)busy));
    advice_ev_int(a, "copies", v[0]);
    advice_ev_int(a, "to_device", v[3]);
    advice_ev_int(a, "from_device", v[4]);
    advice_ev_int(a, "bytes", v[1]);
    advice_ev_int(a, "copy_ns", v[2]);
    advice_ev_int(a, "copies_outside_iterations", v[5]);
    advice_ev_int(a, "gpu_busy_ns", busy);
    advice_ev_num(a, "copy_pct_of_busy", advice_pct(v[2], busy));
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
    sqlite3 *db = c->db;
    /* Calls: the API records' count, or at the default settings (no API records, count 0) the
     * calls the issue callback saw issue a copy (launches); host time only from API records. */
    int summary = db_int(db, "SELECT count(*) FROM api_summary", 0) > 0;
    sqlite3_stmt *st = db_prepare(
        db, summary ? "SELECT s.value, max(coalesce(a.count, 0), coalesce(a.launches, 0)),"
                      " CASE WHEN a.count > 0 THEN a.total END FROM api_summary a JOIN strings s"
                      " ON s.id = a.name_id ORDER BY 2 DESC, s.value"
                    : "SELECT s.value, count(*), sum(a.dur) FROM cuda_api a JOIN strings s"
                      " ON s.id = a.name_id GROUP BY a.name_id ORDER BY 2 DESC, 1");
    char by[512] = "", names[256] = "";
    int64_t calls = 0, total = 0;
    int more = 0, timed = 0;
    while (db_step(st)) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name || !sync_copy(name)) continue;
        int64_t n = sqlite3_column_int64(st, 1);
        calls += n;
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) timed = 1;
        total += sqlite3_column_int64(st, 2);
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
    sqlite3_finalize(st);
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

const struct advice_rule advice_rule_pageable = {"pageable_copies", 90, ADVICE_AFTER,
                                                 rule_pageable};
const struct advice_rule advice_rule_sync_copies = {"synchronous_copies", 80, ADVICE_AFTER,
                                                    rule_sync_copies};

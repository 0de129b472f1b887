/*
 * phase.c: the phase tracker (phase.h): per-thread transitions on the app side, spans and
 * time lookups on the writer side, and the NVTX ranges we emit in domain "infprof".
 */
#include "phase.h"
#include "watch.h"
#include "attrib.h"
#include "clock.h"
#include "emit.h"
#include "config.h"
#include "map.h"
#include "ring.h"
#include "store.h"
#include "thread.h"
#include "collector.h"

#include <nvtx3/nvToolsExt.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>

static const char *const grad_names[3] = {"grad", "no_grad", "inference_mode"};
static const char *const autocast_names[3] = {"off", "fp16", "bf16"};
static const char *const labels[IP_PHASE_COUNT] = {
    "none",
    "grad | autocast off",
    "grad | autocast fp16",
    "grad | autocast bf16",
    "no_grad | autocast off",
    "no_grad | autocast fp16",
    "no_grad | autocast bf16",
    "inference_mode | autocast off",
    "inference_mode | autocast fp16",
    "inference_mode | autocast bf16",
};

static uint8_t autocast_of(uint8_t dtype)
{
    if (dtype == IP_DTYPE_HALF) return IP_AUTOCAST_FP16;
    if (dtype == IP_DTYPE_BFLOAT16) return IP_AUTOCAST_BF16;
    return IP_AUTOCAST_OFF;
}

uint8_t ip_phase_id(uint8_t grad, uint8_t cuda_ac, uint8_t cpu_ac)
{
    /* CUDA autocast decides for GPU work; a thread with only CPU autocast on is labelled by it. */
    uint8_t ac = cuda_ac ? autocast_of(cuda_ac) : autocast_of(cpu_ac);
    if (grad > IP_INFERENCE_MODE) grad = IP_GRAD;
    return (uint8_t)(1 + 3 * grad + ac);
}

const char *ip_phase_grad_name(uint8_t id)
{
    return id ? grad_names[(id - 1) / 3] : "none";
}

const char *ip_phase_autocast_name(uint8_t id)
{
    return id ? autocast_names[(id - 1) % 3] : "none";
}

const char *ip_phase_label(uint8_t id)
{
    return id < IP_PHASE_COUNT ? labels[id] : "none";
}

void (*ip_phase_poller)(int where);

/* ---- app side ----------------------------------------------------------------------------- */

void ip_phase_set(uint8_t grad, uint8_t cuda_ac, uint8_t cpu_ac)
{
    ip_self.grad = grad;
    ip_self.cuda_ac = cuda_ac;
    ip_self.cpu_ac = cpu_ac;
    uint8_t id = ip_phase_id(grad, cuda_ac, cpu_ac);
    if (id == ip_self.phase) return;
    ip_self.phase = id;
    struct ip_ring *r;
    struct ip_ev_phase *e = ip_ring_begin_critical(sizeof *e, &r);
    if (!e) return;
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_CORE, IP_EV_CORE_PHASE), sizeof *e, id};
    e->ts = ip_clock_now();
    e->cuda_autocast = cuda_ac;
    e->cpu_autocast = cpu_ac;
    ip_ring_commit(r, sizeof *e);
    ip_watch_phase_changed();
}

void ip_phase_leave(void)
{
    if (!ip_self.phase) return;
    ip_self.phase = 0;
    struct ip_ring *r;
    struct ip_ev_phase *e = ip_ring_begin_critical(sizeof *e, &r);
    if (!e) return;
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_CORE, IP_EV_CORE_PHASE), sizeof *e, 0};
    e->ts = ip_clock_now();
    e->cuda_autocast = e->cpu_autocast = 0;
    ip_ring_commit(r, sizeof *e);
    ip_watch_phase_changed();
}

static _Atomic(nvtxStringHandle_t) emit_labels[IP_PHASE_COUNT];

void ip_phase_emit(void)
{
    uint8_t want = ip_self.phase;
    if (want == ip_self.emitted_phase || !ip_cfg_int(IP_CFG_NVTX_EMIT)) return;
    nvtxDomainHandle_t d = ip_emit_domain();
    if (ip_self.emit_range) nvtxDomainRangeEnd(d, ip_self.emit_range);
    ip_self.emit_range = 0;
    ip_self.emitted_phase = want;
    if (!want) return;
    nvtxEventAttributes_t a;
    ip_emit_attr(&a, &emit_labels[want], labels[want]);
    ip_self.emit_range = nvtxDomainRangeStartEx(d, &a);
}

void ip_phase_emit_end(void)
{
    if (ip_self.emit_range) nvtxDomainRangeEnd(ip_emit_domain(), ip_self.emit_range);
    ip_self.emit_range = 0;
}

/* ---- writer side -------------------------------------------------------------------------- */

struct span_point {
    uint64_t ts;
    uint8_t phase;
};

struct span_thread {
    int64_t rowid; /* open span's row, 0 none */
    size_t n, cap;
    struct span_point *hist;
};

static struct ip_slots span_threads; /* tid -> struct span_thread */
static sqlite3_stmt *st_span_insert, *st_span_end, *st_phase_insert;
static uint8_t phase_written[IP_PHASE_COUNT];

void ip_phase_prepare(struct ip_store *s)
{
    /* A forked child's writer starts from the parent's copy: start clean. */
    for (size_t i = 0; i < span_threads.n; i++)
        free(((struct span_thread *)ip_slots_at(&span_threads, i))->hist);
    ip_slots_free(&span_threads);
    for (int i = 0; i < IP_PHASE_COUNT; i++) phase_written[i] = 0;
    st_span_insert = ip_store_prepare(s, "INSERT INTO phase_spans(tid, phase, start, end,"
                                         " cuda_autocast, cpu_autocast) VALUES (?,?,?,NULL,?,?)");
    st_span_end = ip_store_prepare(s, "UPDATE phase_spans SET end = ? WHERE rowid = ?");
    st_phase_insert = ip_store_prepare(s, "INSERT OR IGNORE INTO phases(id, grad_mode, autocast,"
                                          " label) VALUES (?,?,?,?)");
}

static struct span_thread *span_thread_of(uint32_t tid, int create)
{
    return ip_slots_get(&span_threads, tid, sizeof(struct span_thread), create);
}

static void phase_write_row(struct ip_store *s, uint8_t id)
{
    if (id >= IP_PHASE_COUNT || phase_written[id]) return;
    phase_written[id] = 1;
    sqlite3_bind_int(st_phase_insert, 1, id);
    sqlite3_bind_text(st_phase_insert, 2, ip_phase_grad_name(id), -1, SQLITE_STATIC);
    sqlite3_bind_text(st_phase_insert, 3, ip_phase_autocast_name(id), -1, SQLITE_STATIC);
    sqlite3_bind_text(st_phase_insert, 4, labels[id], -1, SQLITE_STATIC);
    ip_store_step(s, st_phase_insert);
}

static void span_close(struct ip_store *s, struct span_thread *t, uint64_t ts)
{
    if (!t->rowid) return;
    sqlite3_bind_int64(st_span_end, 1, ip_store_rel(s, ts));
    sqlite3_bind_int64(st_span_end, 2, t->rowid);
    ip_store_step(s, st_span_end);
    t->rowid = 0;
}

void ip_phase_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev)
{
    const struct ip_ev_phase *e = (const struct ip_ev_phase *)ev;
    uint8_t id = (uint8_t)e->h.aux;
    struct span_thread *t = span_thread_of(tid, 1);
    if (!t || id >= IP_PHASE_COUNT) return;
    span_close(s, t, e->ts);
    if (id) phase_write_row(s, id);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct span_point *h = realloc(t->hist, cap * sizeof *h);
        if (!h) return;
        t->hist = h;
        t->cap = cap;
    }
    t->hist[t->n++] = (struct span_point){e->ts, id};
    if (!id) { /* the thread left (ip_phase_leave): no span until it has a phase again */
        ip_attrib_thread_left(tid, e->ts);
        return;
    }
    sqlite3_bind_int64(st_span_insert, 1, tid);
    sqlite3_bind_int(st_span_insert, 2, id);
    /* A forked child's first span is the phase its thread held at the fork, from when the parent
     * entered it: it begins with the child (a fresh-eyes check found a child's phase begin
     * 0.11 ms before the child itself). */
    int64_t start = ip_store_rel(s, e->ts);
    sqlite3_bind_int64(st_span_insert, 3, start > 0 ? start : 0);
    sqlite3_bind_int(st_span_insert, 4, e->cuda_autocast);
    sqlite3_bind_int(st_span_insert, 5, e->cpu_autocast);
    if (ip_store_step(s, st_span_insert) == 0) t->rowid = sqlite3_last_insert_rowid(ip_store_db(s));
}

/* Index of the last history point at or before ts (0 if none). */
static size_t span_index_at(const struct span_thread *t, uint64_t ts)
{
    return ip_clock_index(t->hist, t->n, sizeof *t->hist, ts);
}

uint8_t ip_phase_at(uint32_t tid, uint64_t ts)
{
    struct span_thread *t = span_thread_of(tid, 0);
    if (!t || !t->n || ts < t->hist[0].ts) return 0;
    return t->hist[span_index_at(t, ts)].phase;
}

uint8_t ip_phase_dominant(uint32_t tid, uint64_t start, uint64_t end)
{
    struct span_thread *t = span_thread_of(tid, 0);
    if (!t || !t->n || end <= start) return ip_phase_at(tid, start);
    uint64_t spent[IP_PHASE_COUNT] = {0};
    for (size_t i = span_index_at(t, start); i < t->n && t->hist[i].ts < end; i++) {
        uint64_t a = t->hist[i].ts, b = i + 1 < t->n ? t->hist[i + 1].ts : UINT64_MAX;
        if (b <= start) continue;
        spent[t->hist[i].phase] += (b < end ? b : end) - (a > start ? a : start);
    }
    /* An iteration that begins in the default mode (grad, autocast off, or none known) and
     * enters a mode inside (`with torch.inference_mode(): model(x)` under the mark) ran the model
     * in that mode: the mode the program chose wins, however long the default part (input
     * preparation, a garbage collection) took. */
    if (ip_phase_at(tid, start) <= 1) {
        uint8_t mode = 0;
        for (uint8_t p = 2; p < IP_PHASE_COUNT; p++)
            if (spent[p] && (!mode || spent[p] > spent[mode])) mode = p;
        if (mode) return mode;
    }
    uint8_t best = 0;
    for (uint8_t p = 1; p < IP_PHASE_COUNT; p++)
        if (spent[p] > spent[best]) best = p;
    return best;
}

void ip_phase_finish(struct ip_store *s, uint64_t end_ts)
{
    for (size_t i = 0; i < span_threads.n; i++)
        span_close(s, ip_slots_at(&span_threads, i), end_ts);
}

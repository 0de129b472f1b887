/*
 * nvtx_ingest.c: the NVTX collector, writer side. Pairs pushes with pops (per thread and domain)
 * and starts with ends (by the id the program holds), writes nvtx_ranges rows when a range
 * closes, and turns ranges whose text matches INFPROF_ITERATION_RANGE into iterations.
 */
#include "registry.h"
#include "nvtx_internal.h"
#include "../profiler/config.h"
#include "../profiler/glob.h"
#include "../profiler/iteration.h"
#include "../profiler/map.h"
#include "../profiler/phase.h"
#include "../profiler/store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct open_range {
    uint64_t id, domain, ext;
    uint32_t tid, category, color, depth;
    uint64_t parent;
    int64_t text_id;
    uint64_t start;
    uint8_t kind, phase;
    uint32_t iter; /* the iteration id the app side gave it, 0 none */
    char *text;    /* kept only when it may be an iteration */
};

struct tid_stack {
    struct open_range *v;
    size_t n, cap;
};

static struct {
    struct ip_batch *ranges;
    struct ip_map domains;  /* handle -> row id */
    struct ip_map strings;  /* registered handle -> text id */
    struct ip_map stack_of; /* tid -> index + 1 into stacks */
    struct ip_map started;  /* program-held id -> index + 1 into starts */
    struct tid_stack *stacks;
    size_t nstacks, capstacks;
    struct open_range *starts;
    size_t nstarts, capstarts;
    int64_t next_domain;
    sqlite3_stmt *st_domain, *st_thread;
    const char *pattern;
    int64_t batch;
} nv;

static void nvtx_reset(void)
{
    for (size_t i = 0; i < nv.nstacks; i++) {
        for (size_t k = 0; k < nv.stacks[i].n; k++) free(nv.stacks[i].v[k].text);
        free(nv.stacks[i].v);
    }
    for (size_t i = 0; i < nv.nstarts; i++) free(nv.starts[i].text);
    free(nv.stacks);
    free(nv.starts);
    ip_map_free(&nv.domains);
    ip_map_free(&nv.strings);
    ip_map_free(&nv.stack_of);
    ip_map_free(&nv.started);
    memset(&nv, 0, sizeof nv);
}

void ip_nvtx_ingest_prepare(struct ip_store *s)
{
    nvtx_reset();
    nv.ranges = ip_batch_open(s, "nvtx_ranges", 13);
    nv.st_domain = ip_store_prepare(s, "INSERT INTO nvtx_domains(id, name_id) VALUES (?, ?)");
    nv.st_thread = ip_store_prepare(s, "INSERT INTO threads(tid, name_id) VALUES (?, ?) ON"
                                       " CONFLICT(tid) DO UPDATE SET name_id = excluded.name_id");
    nv.pattern = ip_cfg_str(IP_CFG_ITERATION_RANGE);
    nv.batch = ip_cfg_int(IP_CFG_BATCH);
}

static struct tid_stack *stack_for(uint32_t tid)
{
    uint64_t *slot = ip_map_put(&nv.stack_of, tid);
    if (!slot) return NULL;
    if (!*slot) {
        if (nv.nstacks == nv.capstacks) {
            size_t cap = nv.capstacks ? nv.capstacks * 2 : 16;
            struct tid_stack *p = realloc(nv.stacks, cap * sizeof *p);
            if (!p) return NULL;
            nv.stacks = p;
            nv.capstacks = cap;
        }
        nv.stacks[nv.nstacks] = (struct tid_stack){0};
        *slot = ++nv.nstacks;
    }
    return &nv.stacks[*slot - 1];
}

static int64_t text_id(struct ip_store *s, const struct ip_ev_nvtx *e, const char **text)
{
    *text = NULL;
    if (e->registered) {
        uint64_t *id = ip_map_get(&nv.strings, e->registered);
        return id ? (int64_t)*id : IP_NULL;
    }
    if (!e->h.aux) return IP_NULL;
    *text = e->text;
    return ip_store_intern(s, e->text, e->h.aux);
}

static int64_t batch_of(const char *text)
{
    int64_t v = ip_iter_batch_in(text);
    return v > 0 ? v : nv.batch > 0 ? nv.batch : IP_NULL;
}

static void write_range(struct ip_store *s, const struct open_range *r, uint64_t end,
                        uint32_t end_tid)
{
    int64_t *row = ip_batch_row(nv.ranges);
    uint64_t *dom = r->domain ? ip_map_get(&nv.domains, r->domain) : NULL;
    row[0] = (int64_t)r->id;
    row[1] = r->tid;
    row[2] = dom ? (int64_t)*dom : (r->domain ? IP_NULL : 0);
    row[3] = r->kind;
    row[4] = ip_store_rel(s, r->start);
    row[5] = end ? ip_store_rel(s, end) : IP_NULL;
    row[6] = r->text_id;
    row[7] = r->category;
    row[8] = r->color ? (int64_t)r->color : IP_NULL;
    row[9] = r->depth;
    row[10] = r->parent ? (int64_t)r->parent : IP_NULL;
    row[11] = r->phase;
    row[12] = end_tid ? (int64_t)end_tid : IP_NULL;
    if (end && r->text && nv.pattern[0] && ip_glob_match(nv.pattern, r->text))
        ip_iter_row(s, r->iter, r->tid, r->start, end, 2, batch_of(r->text), (int64_t)r->id,
                    r->text_id ? (int64_t)r->text_id : IP_NULL);
}

static struct open_range open_of(struct ip_store *s, uint32_t tid, const struct ip_ev_nvtx *e)
{
    const char *text;
    struct open_range r = {
        e->id, e->domain, e->ext,   tid,     e->category, e->color, 0, 0, text_id(s, e, &text),
        e->ts, 0,         e->phase, e->iter, NULL};
    r.kind = e->kind == IP_NVTX_PUSH ? 1 : e->kind == IP_NVTX_START ? 2 : 3;
    if (text && nv.pattern[0] && ip_glob_match(nv.pattern, text)) r.text = strdup(text);
    return r;
}

void ip_nvtx_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev)
{
    const struct ip_ev_nvtx *e = (const struct ip_ev_nvtx *)ev;
    switch (e->kind) {
    case IP_NVTX_PUSH: {
        struct tid_stack *st = stack_for(tid);
        if (!st) return;
        if (st->n == st->cap) {
            size_t cap = st->cap ? st->cap * 2 : 16;
            struct open_range *p = realloc(st->v, cap * sizeof *p);
            if (!p) return;
            st->v = p;
            st->cap = cap;
        }
        struct open_range r = open_of(s, tid, e);
        r.depth = (uint32_t)st->n;
        r.parent = st->n ? st->v[st->n - 1].id : 0;
        st->v[st->n++] = r;
        break;
    }
    case IP_NVTX_POP: {
        struct tid_stack *st = stack_for(tid);
        if (!st) return;
        size_t k = st->n;
        while (k > 0 && st->v[k - 1].domain != e->domain) k--;
        if (!k) return; /* a pop without a push (or pushed before we started) */
        struct open_range r = st->v[k - 1];
        memmove(&st->v[k - 1], &st->v[k], (st->n - k) * sizeof *st->v);
        st->n--;
        write_range(s, &r, e->ts, 0);
        free(r.text);
        break;
    }
    case IP_NVTX_START: {
        if (nv.nstarts == nv.capstarts) {
            size_t cap = nv.capstarts ? nv.capstarts * 2 : 64;
            struct open_range *p = realloc(nv.starts, cap * sizeof *p);
            if (!p) return;
            nv.starts = p;
            nv.capstarts = cap;
        }
        uint64_t *slot = ip_map_put(&nv.started, e->ext);
        if (!slot) return;
        nv.starts[nv.nstarts] = open_of(s, tid, e);
        *slot = ++nv.nstarts;
        break;
    }
    case IP_NVTX_END: {
        uint64_t *slot = ip_map_get(&nv.started, e->ext);
        if (!slot) return;
        size_t i = *slot - 1;
        write_range(s, &nv.starts[i], e->ts, tid);
        free(nv.starts[i].text);
        ip_map_del(&nv.started, e->ext);
        /* Keep the array dense: move the last open start into the hole. */
        if (i != nv.nstarts - 1) {
            nv.starts[i] = nv.starts[nv.nstarts - 1];
            uint64_t *moved = ip_map_get(&nv.started, nv.starts[i].ext);
            if (moved) *moved = i + 1;
        }
        nv.nstarts--;
        break;
    }
    case IP_NVTX_MARK: {
        struct open_range r = open_of(s, tid, e);
        write_range(s, &r, e->ts, 0);
        free(r.text);
        break;
    }
    case IP_NVTX_DOMAIN: {
        uint64_t *slot = ip_map_put(&nv.domains, e->id);
        if (!slot || *slot) return;
        *slot = (uint64_t)++nv.next_domain;
        sqlite3_bind_int64(nv.st_domain, 1, nv.next_domain);
        sqlite3_bind_int64(nv.st_domain, 2, ip_store_intern(s, e->text, e->h.aux));
        ip_store_step(s, nv.st_domain);
        break;
    }
    case IP_NVTX_STRING: {
        uint64_t *slot = ip_map_put(&nv.strings, e->id);
        if (slot) *slot = (uint64_t)ip_store_intern(s, e->text, e->h.aux);
        break;
    }
    case IP_NVTX_THREAD:
        sqlite3_bind_int64(nv.st_thread, 1, (int64_t)e->id);
        sqlite3_bind_int64(nv.st_thread, 2, ip_store_intern(s, e->text, e->h.aux));
        ip_store_step(s, nv.st_thread);
        break;
    }
}

void ip_nvtx_ingest_finish(struct ip_store *s)
{
    /* Ranges still open at the end are written with no end. */
    for (size_t i = 0; i < nv.nstacks; i++)
        for (size_t k = 0; k < nv.stacks[i].n; k++) write_range(s, &nv.stacks[i].v[k], 0, 0);
    for (size_t i = 0; i < nv.nstarts; i++) write_range(s, &nv.starts[i], 0, 0);
    nvtx_reset();
}

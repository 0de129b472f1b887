/*
 * cudnn_fold.c: the cuDNN calls folded by the writer as it writes their rows (cudnn_call_sums),
 * so that a report reads a few rows per kind of call, not every call (issue 49: a report that
 * does not grow with the run; docs/performance.md). A kind is what the report groups by: the
 * function, operation, phase, plan, data type and shape. Per kind: the calls, their errors and
 * host time, the first call's start and place among the calls as stored (the report orders by
 * start, a tie by that place: threads' calls reach the writer out of start order), the calls that
 * pushed an external id, and the GPU time and count of the kernels those calls launched. Each
 * call's host time is kept too, FOLD_CHUNK to a row (a blob of int64 values), for an exact p95;
 * past FOLD_HELD of them held over all kinds, every kind's row is written and its times let go
 * (the process's memory stays a few MiB whatever the kinds). The calls whose order the findings
 * read (algorithm searches, v7 heuristic queries, plan builds) get a row each, as in
 * cudnn_calls; their kernels go to their kind's row, whose calls are then 0.
 *
 * The kernels come from CUPTI's writer side, by the cuDNN call they were launched in (its ext
 * id), before or after that call's own event: a window of FOLD_WINDOW ext ids keeps, for each,
 * its kind, or the kernels that came before it. What the window cannot join (an id that left it,
 * a kernel whose launch CUPTI's side no longer knows), a kind past FOLD_KINDS, or a row not
 * written, is counted in meta cudnn_fold_lost: the report then reads cudnn_calls, as it does
 * for a run that did not finish. Writer thread only.
 */
#include "cudnn_internal.h"
#include "../profiler/attrib.h"
#include "../profiler/store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_KINDS  4096       /* kinds of call; a call of one more is counted lost */
#define FOLD_SLOTS  8192       /* the kinds' hash table (twice FOLD_KINDS) */
#define FOLD_CHUNK  4096       /* host times kept per kind before its row is written */
#define FOLD_HELD   (1u << 18) /* host times held over all kinds (2 MiB) */
#define FOLD_WINDOW (1u << 16) /* ext ids whose kernels may still arrive */

struct kind {
    int64_t fn_id, op, phase, plan, dtype, shape; /* as cudnn_calls stores them (IP_NULL) */
    int64_t calls, errors, host, first, seq, linked, gpu, kernels; /* seq: the first's place */
    int64_t *durs;
    uint32_t n, cap;
};

struct link {
    uint64_t ext;
    int32_t kind; /* -1: its call not seen yet (gpu, kernels wait here) */
    int64_t gpu, kernels;
};

static struct {
    struct kind *kinds;
    uint32_t nkinds;
    int32_t *slots; /* kind index + 1, 0 empty */
    struct link *window;
    sqlite3_stmt *ins;
    int64_t rows, lost;
    uint32_t held; /* host times held over all kinds */
} fd;

void ip_cudnn_fold_reset(void)
{
    for (uint32_t i = 0; i < fd.nkinds; i++) free(fd.kinds[i].durs);
    free(fd.kinds), free(fd.slots), free(fd.window);
    memset(&fd, 0, sizeof fd);
}

static uint64_t mix(uint64_t h, int64_t v)
{
    h ^= (uint64_t)v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* The kind of a call (its index), made when new; -1 past FOLD_KINDS or out of memory. */
static int32_t kind_of(const int64_t key[6])
{
    if (!fd.slots && !(fd.slots = calloc(FOLD_SLOTS, sizeof *fd.slots))) return -1;
    uint64_t h = 0;
    for (int i = 0; i < 6; i++) h = mix(h, key[i]);
    for (uint32_t j = (uint32_t)(h >> 40) & (FOLD_SLOTS - 1);; j = (j + 1) & (FOLD_SLOTS - 1)) {
        int32_t at = fd.slots[j];
        if (!at) break;
        struct kind *k = &fd.kinds[at - 1];
        if (k->fn_id == key[0] && k->op == key[1] && k->phase == key[2] && k->plan == key[3] &&
            k->dtype == key[4] && k->shape == key[5])
            return at - 1;
    }
    if (fd.nkinds == FOLD_KINDS) return -1;
    if (!fd.kinds && !(fd.kinds = calloc(FOLD_KINDS, sizeof *fd.kinds))) return -1;
    struct kind *k = &fd.kinds[fd.nkinds];
    memset(k, 0, sizeof *k);
    k->fn_id = key[0], k->op = key[1], k->phase = key[2], k->plan = key[3];
    k->dtype = key[4], k->shape = key[5];
    k->first = k->seq = IP_NULL;
    uint32_t j = (uint32_t)(h >> 40) & (FOLD_SLOTS - 1);
    while (fd.slots[j]) j = (j + 1) & (FOLD_SLOTS - 1);
    fd.slots[j] = (int32_t)++fd.nkinds;
    return (int32_t)(fd.nkinds - 1);
}

/* One row: a kind's sums since its last row, or one call (tid set). */
static void row_write(struct ip_store *s, const struct kind *k, int64_t tid)
{
    if (!fd.ins)
        fd.ins = ip_store_prepare(s, "INSERT INTO cudnn_call_sums(fn_id, op_kind, phase, plan,"
                                     " dtype, shape, calls, errors, host, first_start,"
                                     " first_seq, tid, linked, gpu, kernels, durs)"
                                     " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!fd.ins) {
        fd.lost++;
        return;
    }
    const int64_t v[15] = {k->fn_id, k->op,    k->phase,  k->plan, k->dtype,
                           k->shape, k->calls, k->errors, k->host, k->first,
                           k->seq,   tid,      k->linked, k->gpu,  k->kernels};
    for (int i = 0; i < 15; i++) {
        if (v[i] == IP_NULL)
            sqlite3_bind_null(fd.ins, i + 1);
        else
            sqlite3_bind_int64(fd.ins, i + 1, v[i]);
    }
    if (k->n)
        sqlite3_bind_blob(fd.ins, 16, k->durs, (int)(k->n * sizeof *k->durs), SQLITE_STATIC);
    else
        sqlite3_bind_null(fd.ins, 16);
    if (ip_store_step(s, fd.ins) != 0)
        fd.lost++;
    else
        fd.rows++;
}

/* A kind's sums written and begun again (its key kept: kernels may still come to it). */
static void kind_flush(struct ip_store *s, struct kind *k)
{
    if (!k->calls && !k->linked && !k->kernels) return;
    row_write(s, k, IP_NULL);
    k->calls = k->errors = k->host = k->linked = k->gpu = k->kernels = 0;
    k->first = k->seq = IP_NULL;
    fd.held -= k->n;
    k->n = 0;
}

/* Every kind's row written, and the host times' memory let go. */
static void kinds_flush(struct ip_store *s)
{
    for (uint32_t i = 0; i < fd.nkinds; i++) {
        kind_flush(s, &fd.kinds[i]);
        free(fd.kinds[i].durs);
        fd.kinds[i].durs = NULL;
        fd.kinds[i].cap = 0;
    }
}

/* The kernels of call `ext` reach its kind, whichever of the two came first. */
static void link_call(uint64_t ext, int32_t kind)
{
    if (!fd.window && !(fd.window = calloc(FOLD_WINDOW, sizeof *fd.window))) {
        fd.lost++;
        return;
    }
    struct link *l = &fd.window[ext & (FOLD_WINDOW - 1)];
    if (l->ext > ext) { /* its slot moved on: kernels that came before it may be gone */
        fd.lost++;
        return;
    }
    if (l->ext == ext && l->kind < 0 && kind >= 0) {
        fd.kinds[kind].gpu += l->gpu;
        fd.kinds[kind].kernels += l->kernels;
    }
    *l = (struct link){ext, kind, 0, 0};
}

static void on_kernel(uint64_t ext, int64_t dur)
{
    if (!ext) { /* a kernel whose launch is no longer known: it may have been one of ours */
        fd.lost++;
        return;
    }
    if (!fd.window && !(fd.window = calloc(FOLD_WINDOW, sizeof *fd.window))) {
        fd.lost++;
        return;
    }
    struct link *l = &fd.window[ext & (FOLD_WINDOW - 1)];
    if (l->ext > ext) {
        fd.lost++;
        return;
    }
    if (l->ext != ext) *l = (struct link){ext, -1, 0, 0};
    if (l->kind >= 0) {
        fd.kinds[l->kind].gpu += dur;
        fd.kinds[l->kind].kernels++;
    } else {
        l->gpu += dur;
        l->kernels++;
    }
}

void ip_cudnn_fold_prepare(void)
{
    ip_cudnn_fold_reset();
    ip_attrib_kernel_in_call = on_kernel;
}

/* A call whose order the findings read: a row of its own. */
static int one_row(uint32_t fn)
{
    return fn == IP_CUDNN_FN_BACKEND_FINALIZE || fn == IP_CUDNN_FN_FIND_CONV_FWD_ALGO ||
           fn == IP_CUDNN_FN_FIND_CONV_FWD_ALGO_EX || fn == IP_CUDNN_FN_GET_CONV_FWD_ALGO_V7;
}

void ip_cudnn_fold_call(struct ip_store *s, uint32_t fn, const int64_t *row, int64_t seq)
{
    /* row: cudnn_calls' columns (cudnn_ingest.c): start, dur, tid, phase, fn_id, status, handle,
     * stream, op_kind, dtype, plan, ext_id, shape */
    const int64_t key[6] = {row[4], row[8], row[3], row[10], row[9], row[12]};
    int linked = row[11] != IP_NULL;
    int32_t kind = !one_row(fn) || linked ? kind_of(key) : -1;
    if (one_row(fn)) {
        struct kind c = {key[0], key[1],      key[2], key[3], key[4], key[5],
                         1,      row[5] != 0, row[1], row[0], seq,    linked,
                         0,      0,           NULL,   0,      0};
        row_write(s, &c, row[2]);
    } else if (kind >= 0) {
        struct kind *k = &fd.kinds[kind];
        if (k->n == k->cap) {
            uint32_t cap = k->cap ? k->cap * 2 : 16;
            int64_t *d = cap <= FOLD_CHUNK ? realloc(k->durs, cap * sizeof *d) : NULL;
            if (!d) {
                fd.lost++;
                return;
            }
            k->durs = d, k->cap = cap;
        }
        k->calls++;
        k->errors += row[5] != 0;
        k->host += row[1];
        if (k->first == IP_NULL || row[0] < k->first) k->first = row[0], k->seq = seq;
        k->linked += linked;
        k->durs[k->n++] = row[1];
        fd.held++;
        if (k->n == FOLD_CHUNK)
            kind_flush(s, k);
        else if (fd.held >= FOLD_HELD)
            kinds_flush(s);
    }
    if (kind < 0 && (linked || !one_row(fn)))
        fd.lost++;
    else if (linked)
        link_call((uint64_t)row[11], kind);
}

void ip_cudnn_fold_finish(struct ip_store *s)
{
    ip_attrib_kernel_in_call = NULL;
    kinds_flush(s);
    ip_store_meta_int(s, "cudnn_call_sums", fd.rows);
    ip_store_meta_int(s, "cudnn_fold_lost", fd.lost);
    ip_cudnn_fold_reset();
}

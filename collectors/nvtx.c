/*
 * nvtx.c: the NVTX collector, app side: the program's own NVTX ranges, captured by injection.
 *
 * The constructor points NVTX_INJECTION64_PATH at this library, keeping any previous value (an
 * Nsight tool, libcupti) in INFPROF_NVTX_NEXT. Each module's NVTX loader then calls our
 * InitializeInjectionNvtx2: we first let the previous tool initialise (so it still receives
 * everything), then wrap the slots of the CORE and CORE2 callback tables, recording and calling
 * through. Return values come from the chained tool when there is one, else from us.
 *
 * Our own NVTX calls (the phase ranges in domain "infprof", cuDNN ranges) run inside a hook,
 * so the re-entrancy guard keeps them out of the capture while they still reach the chained tool.
 */
#include "nvtx_config.h"
#include "registry.h"
#include "nvtx_internal.h"
#include "../profiler/label.h"
#include "../profiler/attrib.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/emit.h"
#include "../profiler/glob.h"
#include "../profiler/iteration.h"
#include "../profiler/lifecycle.h"
#include "../profiler/log.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"
#include "../profiler/window.h"
#include "window_config.h"

#include <dlfcn.h>
#include <limits.h>
#include <nvtx3/nvToolsExt.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define IP_EXPORT __attribute__((visibility("default")))

static char nvtx_next_path[PATH_MAX];
static _Atomic uint64_t nvtx_ids = 1; /* our range, domain and string ids */
static _Atomic int nvtx_chained;

/* The chained tool's entry points, per slot (NULL: none). */
static NvtxFunctionPointer next_core[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer next_core2[NVTX_CBID_CORE2_SIZE];

#define NEXT(table, id, type) ((type)(table)[id])

/* ---- recording ---------------------------------------------------------------------------- */

/* A wide name (the W entry points, a unicode message) in UTF-8 on the stack: room for a label's
 * cut and the hash of all of it (a longer one is hashed by its first NVTX_WIDE_MAX - 1 bytes). */
#define NVTX_WIDE_MAX (2 * IP_EV_TEXT_MAX)

static void message_of(const nvtxEventAttributes_t *a, const char **ascii, char *wide_buf, size_t n,
                       uint64_t *registered)
{
    *ascii = NULL;
    *registered = 0;
    if (!a) return;
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) {
        *ascii = a->message.ascii;
    } else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        *registered = (uint64_t)(uintptr_t)a->message.registered;
    } else if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE && a->message.unicode) {
        ip_label_wide(wide_buf, n, a->message.unicode); /* UTF-8, whatever the locale */
        *ascii = wide_buf;
    }
}

/* A range whose text matches INFPROF_ITERATION_RANGE is an iteration: it begins now, on this
 * thread (registered strings are matched by the writer only, for the row). A start/end range
 * (kind IP_NVTX_START) may end on another thread: a loose one. */
static uint32_t iteration_of(const char *text, uint8_t kind)
{
    const char *pattern = ip_cfg_str(IP_CFG_ITERATION_RANGE);
    if (!text || !pattern[0] || !ip_glob_match(pattern, text)) return 0;
    return kind == IP_NVTX_START ? ip_iter_begin_loose() : ip_iter_begin();
}

/* INFPROF_CAPTURE_RANGE=nvtx:NAME: the push/pop range whose text matches NAME (a glob) is a
 * recording window; the level of this thread's open one (1-based), 0 none. */
static __thread uint32_t capture_level __attribute__((tls_model("initial-exec")));
/* The range being popped was pushed inside a window: its pop is recorded in any case. */
static __thread int pop_recorded __attribute__((tls_model("initial-exec")));

static int capture_match(const char *text)
{
    const char *c = ip_cfg_group_str(&ip_window_cfg, IP_WINDOW_CFG_CAPTURE);
    return text && !strncmp(c, "nvtx:", 5) && c[5] && ip_glob_match(c + 5, text);
}

/* Ranges, their names and domains are never dropped (a lost push would unpair its pop); marks
 * may be. Returns the iteration the range begins (push, start), 0 none. Outside every recording
 * window nothing is recorded (the caller keeps its stack), unless this push opens one. */
static uint32_t record(uint8_t kind, uint64_t id, uint64_t ext, uint64_t domain,
                       const nvtxEventAttributes_t *a, const char *text)
{
    char wide[NVTX_WIDE_MAX];
    uint64_t registered = 0;
    if (a) message_of(a, &text, wide, sizeof wide, &registered);
    if (kind == IP_NVTX_PUSH && !capture_level && capture_match(text) &&
        ip_window_open(IP_WIN_NVTX))
        capture_level = ip_self.nvtx_depth;
    if (!ip_recording() && !(kind == IP_NVTX_POP && pop_recorded)) return 0;
    uint32_t iter = kind == IP_NVTX_PUSH || kind == IP_NVTX_START ? iteration_of(text, kind) : 0;
    /* A longer name is cut on a character, with a hash of the whole (profiler/label.h). */
    size_t full = text ? strnlen(text, 1 << 16) : 0;
    size_t len = full > IP_EV_TEXT_MAX ? IP_EV_TEXT_MAX : full;
    uint16_t size = ip_ev_size((uint32_t)(sizeof(struct ip_ev_nvtx) + len + 1));
    struct ip_ring *r;
    struct ip_ev_nvtx *e =
        kind == IP_NVTX_MARK ? ip_ring_begin(size, &r) : ip_ring_begin_critical(size, &r);
    if (!e) return iter;
    e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_NVTX, 1), size, (uint32_t)len};
    e->ts = ip_clock_now();
    e->id = id;
    e->ext = ext;
    e->domain = domain;
    e->registered = registered;
    e->category = a ? a->category : 0;
    e->color = a && a->colorType == NVTX_COLOR_ARGB ? a->color : 0;
    e->kind = kind;
    e->phase = ip_self.phase;
    e->pad[0] = e->pad[1] = 0;
    e->iter = iter;
    if (full > len) {
        len = ip_label_cut(e->text, IP_EV_TEXT_MAX + 1, text, full);
        e->h.aux = (uint32_t)len;
    } else {
        memcpy(e->text, text ? text : "", len);
        e->text[len] = 0;
    }
    ip_ring_commit(r, size);
    return iter;
}

/* The run is on (windows or not: the stacks are kept outside windows too, record() records
 * only inside). */
static int guard(void)
{
    return ip_active() && ip_hook_enter();
}

/* guard() for an event that begins a range or marks a point: one the re-entrancy guard turns
 * away (a signal handler interrupted one of our hooks on this thread) is counted as dropped,
 * unless it is our own phase range (emitted from inside a hook on purpose). */
static int guard_counted(uint64_t domain)
{
    if (!ip_active()) {
        ip_note_after_end(); /* a range or mark after the finish: counted, not stored */
        return 0;
    }
    if (ip_hook_enter()) return 1;
    if (!domain || domain != (uint64_t)(uintptr_t)ip_emit_domain_peek()) ip_ring_note_skipped();
    return 0;
}

/* Push: our id on the thread's stack; returns the 0-based level as NVTX does. */
static int push(uint64_t domain, const nvtxEventAttributes_t *a, const char *text)
{
    uint64_t id = atomic_fetch_add(&nvtx_ids, 1);
    uint32_t d = ip_self.nvtx_depth;
    if (d < IP_NVTX_STACK_MAX) {
        ip_self.nvtx_stack[d] = id;
        ip_self.nvtx_domain[d] = domain;
    } else {
        ip_self.nvtx_overflow++;
    }
    ip_self.nvtx_depth = d + 1;
    uint32_t iter = record(IP_NVTX_PUSH, id, 0, domain, a, text);
    /* Pushed outside every window: its pop is not recorded either (one pushed inside is, to
     * close it, whenever it comes). */
    if (!ip_recording() && d < IP_NVTX_STACK_MAX) ip_self.nvtx_stack[d] |= IP_NVTX_UNRECORDED;
    if (iter && ip_iter_current() == iter) ip_self.nvtx_iter_level = d + 1;
    ip_attrib_changed();
    return (int)d;
}

static int pop(uint64_t domain)
{
    uint32_t d = ip_self.nvtx_depth;
    if (!d) return -1;
    /* The innermost range of that domain (domains keep separate stacks in NVTX). Past the
     * array's bound the innermost range is not kept: it is the one that ends (its id is found
     * again by the writer, which keeps every level), and nothing in the array moves. */
    uint32_t k = d;
    uint64_t id = 0;
    if (d <= IP_NVTX_STACK_MAX) {
        while (k > 0 && ip_self.nvtx_domain[k - 1] != domain) k--;
        id = k ? ip_self.nvtx_stack[k - 1] : 0;
        if (k) {
            memmove(&ip_self.nvtx_stack[k - 1], &ip_self.nvtx_stack[k], (d - k) * sizeof(uint64_t));
            memmove(&ip_self.nvtx_domain[k - 1], &ip_self.nvtx_domain[k],
                    (d - k) * sizeof(uint64_t));
        }
    }
    ip_self.nvtx_depth = d - 1;
    /* The range that began the thread's iteration closes: so does the iteration. */
    if (ip_self.nvtx_iter_level && k == ip_self.nvtx_iter_level) {
        ip_iter_end(ip_iter_current());
        ip_self.nvtx_iter_level = 0;
    } else if (ip_self.nvtx_iter_level > k) {
        ip_self.nvtx_iter_level--; /* a range below it closed: it moved down one level */
    }
    pop_recorded = id && !(id & IP_NVTX_UNRECORDED);
    record(IP_NVTX_POP, id & ~IP_NVTX_UNRECORDED, 0, domain, NULL, NULL);
    pop_recorded = 0;
    ip_attrib_changed();
    if (capture_level && k == capture_level) {
        capture_level = 0;
        ip_window_close(IP_WIN_NVTX);
    }
    return (int)d - 1;
}

/* ---- CORE wrappers ------------------------------------------------------------------------ */

static void NVTX_API w_MarkEx(const nvtxEventAttributes_t *a)
{
    if (guard_counted(0))
        record(IP_NVTX_MARK, atomic_fetch_add(&nvtx_ids, 1), 0, 0, a, NULL), ip_hook_leave();
    if (next_core[NVTX_CBID_CORE_MarkEx])
        NEXT(next_core, NVTX_CBID_CORE_MarkEx, void (*)(const nvtxEventAttributes_t *))(a);
}

static void NVTX_API w_MarkA(const char *m)
{
    if (guard_counted(0))
        record(IP_NVTX_MARK, atomic_fetch_add(&nvtx_ids, 1), 0, 0, NULL, m), ip_hook_leave();
    if (next_core[NVTX_CBID_CORE_MarkA])
        NEXT(next_core, NVTX_CBID_CORE_MarkA, void (*)(const char *))(m);
}

static void NVTX_API w_MarkW(const wchar_t *m)
{
    if (guard_counted(0)) {
        char text[NVTX_WIDE_MAX];
        ip_label_wide(text, sizeof text, m);
        record(IP_NVTX_MARK, atomic_fetch_add(&nvtx_ids, 1), 0, 0, NULL, text);
        ip_hook_leave();
    }
    if (next_core[NVTX_CBID_CORE_MarkW])
        NEXT(next_core, NVTX_CBID_CORE_MarkW, void (*)(const wchar_t *))(m);
}

static nvtxRangeId_t start(uint64_t domain, const nvtxEventAttributes_t *a, const char *m,
                           nvtxRangeId_t ext)
{
    uint64_t id = atomic_fetch_add(&nvtx_ids, 1);
    if (!ext) ext = id;
    if (guard_counted(domain)) {
        uint32_t iter = record(IP_NVTX_START, id, ext, domain, a, m);
        /* A start/end iteration owns its thread's work until an end on this thread. */
        if (iter && ip_iter_current() == iter) ip_self.nvtx_iter_ext = ext;
        ip_hook_leave();
    }
    return ext;
}

static nvtxRangeId_t NVTX_API w_RangeStartEx(const nvtxEventAttributes_t *a)
{
    nvtxRangeId_t ext = 0;
    if (next_core[NVTX_CBID_CORE_RangeStartEx])
        ext = NEXT(next_core, NVTX_CBID_CORE_RangeStartEx,
                   nvtxRangeId_t(*)(const nvtxEventAttributes_t *))(a);
    return start(0, a, NULL, ext);
}

static nvtxRangeId_t NVTX_API w_RangeStartA(const char *m)
{
    nvtxRangeId_t ext = 0;
    if (next_core[NVTX_CBID_CORE_RangeStartA])
        ext = NEXT(next_core, NVTX_CBID_CORE_RangeStartA, nvtxRangeId_t(*)(const char *))(m);
    return start(0, NULL, m, ext);
}

static nvtxRangeId_t NVTX_API w_RangeStartW(const wchar_t *m)
{
    nvtxRangeId_t ext = 0;
    if (next_core[NVTX_CBID_CORE_RangeStartW])
        ext = NEXT(next_core, NVTX_CBID_CORE_RangeStartW, nvtxRangeId_t(*)(const wchar_t *))(m);
    char text[NVTX_WIDE_MAX];
    ip_label_wide(text, sizeof text, m);
    return start(0, NULL, text, ext);
}

static void end(uint64_t domain, nvtxRangeId_t ext)
{
    if (!guard()) return;
    if (ip_self.nvtx_iter_ext && ip_self.nvtx_iter_ext == ext) {
        ip_iter_end(ip_iter_current());
        ip_self.nvtx_iter_ext = 0;
    }
    record(IP_NVTX_END, 0, ext, domain, NULL, NULL);
    ip_hook_leave();
}

static void NVTX_API w_RangeEnd(nvtxRangeId_t id)
{
    end(0, id);
    if (next_core[NVTX_CBID_CORE_RangeEnd])
        NEXT(next_core, NVTX_CBID_CORE_RangeEnd, void (*)(nvtxRangeId_t))(id);
}

static int NVTX_API w_RangePushEx(const nvtxEventAttributes_t *a)
{
    int level = -1;
    if (guard_counted(0)) level = push(0, a, NULL), ip_hook_leave();
    if (next_core[NVTX_CBID_CORE_RangePushEx])
        return NEXT(next_core, NVTX_CBID_CORE_RangePushEx,
                    int (*)(const nvtxEventAttributes_t *))(a);
    return level;
}

static int NVTX_API w_RangePushA(const char *m)
{
    int level = -1;
    if (guard_counted(0)) level = push(0, NULL, m), ip_hook_leave();
    if (next_core[NVTX_CBID_CORE_RangePushA])
        return NEXT(next_core, NVTX_CBID_CORE_RangePushA, int (*)(const char *))(m);
    return level;
}

/* Not wrapped, a wide push ended its parent range at its pop (a 3 ms iteration read 131 us). */
static int NVTX_API w_RangePushW(const wchar_t *m)
{
    int level = -1;
    if (guard_counted(0)) {
        char text[NVTX_WIDE_MAX];
        ip_label_wide(text, sizeof text, m);
        level = push(0, NULL, text);
        ip_hook_leave();
    }
    if (next_core[NVTX_CBID_CORE_RangePushW])
        return NEXT(next_core, NVTX_CBID_CORE_RangePushW, int (*)(const wchar_t *))(m);
    return level;
}

static int NVTX_API w_RangePop(void)
{
    int level = -1;
    if (guard()) level = pop(0), ip_hook_leave();
    if (next_core[NVTX_CBID_CORE_RangePop])
        return NEXT(next_core, NVTX_CBID_CORE_RangePop, int (*)(void))();
    return level;
}

static void NVTX_API w_NameOsThreadA(uint32_t tid, const char *name)
{
    if (guard()) record(IP_NVTX_THREAD, tid, 0, 0, NULL, name), ip_hook_leave();
    if (next_core[NVTX_CBID_CORE_NameOsThreadA])
        NEXT(next_core, NVTX_CBID_CORE_NameOsThreadA, void (*)(uint32_t, const char *))(tid, name);
}

static void NVTX_API w_NameOsThreadW(uint32_t tid, const wchar_t *name)
{
    if (guard()) {
        char text[NVTX_WIDE_MAX];
        ip_label_wide(text, sizeof text, name);
        record(IP_NVTX_THREAD, tid, 0, 0, NULL, text);
        ip_hook_leave();
    }
    if (next_core[NVTX_CBID_CORE_NameOsThreadW])
        NEXT(next_core, NVTX_CBID_CORE_NameOsThreadW, void (*)(uint32_t, const wchar_t *))
    (tid, name);
}

/* ---- CORE2 (domain) wrappers -------------------------------------------------------------- */

#define DOMAIN(h) ((uint64_t)(uintptr_t)(h))

static void NVTX_API w_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    if (guard_counted(DOMAIN(d)))
        record(IP_NVTX_MARK, atomic_fetch_add(&nvtx_ids, 1), 0, DOMAIN(d), a, NULL),
            ip_hook_leave();
    if (next_core2[NVTX_CBID_CORE2_DomainMarkEx])
        NEXT(next_core2, NVTX_CBID_CORE2_DomainMarkEx,
             void (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t *))
    (d, a);
}

static nvtxRangeId_t NVTX_API w_DomainRangeStartEx(nvtxDomainHandle_t d,
                                                   const nvtxEventAttributes_t *a)
{
    nvtxRangeId_t ext = 0;
    if (next_core2[NVTX_CBID_CORE2_DomainRangeStartEx])
        ext = NEXT(next_core2, NVTX_CBID_CORE2_DomainRangeStartEx,
                   nvtxRangeId_t(*)(nvtxDomainHandle_t, const nvtxEventAttributes_t *))(d, a);
    return start(DOMAIN(d), a, NULL, ext);
}

static void NVTX_API w_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    end(DOMAIN(d), id);
    if (next_core2[NVTX_CBID_CORE2_DomainRangeEnd])
        NEXT(next_core2, NVTX_CBID_CORE2_DomainRangeEnd,
             void (*)(nvtxDomainHandle_t, nvtxRangeId_t))
    (d, id);
}

static int NVTX_API w_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    int level = -1;
    if (guard_counted(DOMAIN(d))) level = push(DOMAIN(d), a, NULL), ip_hook_leave();
    if (next_core2[NVTX_CBID_CORE2_DomainRangePushEx])
        return NEXT(next_core2, NVTX_CBID_CORE2_DomainRangePushEx,
                    int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t *))(d, a);
    return level;
}

static int NVTX_API w_DomainRangePop(nvtxDomainHandle_t d)
{
    int level = -1;
    if (guard()) level = pop(DOMAIN(d)), ip_hook_leave();
    if (next_core2[NVTX_CBID_CORE2_DomainRangePop])
        return NEXT(next_core2, NVTX_CBID_CORE2_DomainRangePop, int (*)(nvtxDomainHandle_t))(d);
    return level;
}

static nvtxStringHandle_t NVTX_API w_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    nvtxStringHandle_t h = NULL;
    if (next_core2[NVTX_CBID_CORE2_DomainRegisterStringA])
        h = NEXT(next_core2, NVTX_CBID_CORE2_DomainRegisterStringA,
                 nvtxStringHandle_t(*)(nvtxDomainHandle_t, const char *))(d, s);
    if (!h) h = (nvtxStringHandle_t)(uintptr_t)atomic_fetch_add(&nvtx_ids, 1);
    if (guard())
        record(IP_NVTX_STRING, (uint64_t)(uintptr_t)h, 0, DOMAIN(d), NULL, s), ip_hook_leave();
    return h;
}

static nvtxStringHandle_t NVTX_API w_DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s)
{
    nvtxStringHandle_t h = NULL;
    if (next_core2[NVTX_CBID_CORE2_DomainRegisterStringW])
        h = NEXT(next_core2, NVTX_CBID_CORE2_DomainRegisterStringW,
                 nvtxStringHandle_t(*)(nvtxDomainHandle_t, const wchar_t *))(d, s);
    if (!h) h = (nvtxStringHandle_t)(uintptr_t)atomic_fetch_add(&nvtx_ids, 1);
    if (guard()) {
        char text[NVTX_WIDE_MAX];
        ip_label_wide(text, sizeof text, s);
        record(IP_NVTX_STRING, (uint64_t)(uintptr_t)h, 0, DOMAIN(d), NULL, text);
        ip_hook_leave();
    }
    return h;
}

static nvtxDomainHandle_t NVTX_API w_DomainCreateW(const wchar_t *name)
{
    nvtxDomainHandle_t h = NULL;
    if (next_core2[NVTX_CBID_CORE2_DomainCreateW])
        h = NEXT(next_core2, NVTX_CBID_CORE2_DomainCreateW,
                 nvtxDomainHandle_t(*)(const wchar_t *))(name);
    if (!h) h = (nvtxDomainHandle_t)(uintptr_t)atomic_fetch_add(&nvtx_ids, 1);
    if (guard()) {
        char text[NVTX_WIDE_MAX];
        ip_label_wide(text, sizeof text, name);
        record(IP_NVTX_DOMAIN, DOMAIN(h), 0, 0, NULL, text);
        ip_hook_leave();
    }
    return h;
}

static nvtxDomainHandle_t NVTX_API w_DomainCreateA(const char *name)
{
    nvtxDomainHandle_t h = NULL;
    if (next_core2[NVTX_CBID_CORE2_DomainCreateA])
        h = NEXT(next_core2, NVTX_CBID_CORE2_DomainCreateA,
                 nvtxDomainHandle_t(*)(const char *))(name);
    if (!h) h = (nvtxDomainHandle_t)(uintptr_t)atomic_fetch_add(&nvtx_ids, 1);
    if (guard()) record(IP_NVTX_DOMAIN, DOMAIN(h), 0, 0, NULL, name), ip_hook_leave();
    return h;
}

/* ---- injection ---------------------------------------------------------------------------- */

/* Slot values before the chained tool initialised: the module's own init stubs. A slot the tool
 * left as it was has no tool function behind it (calling the stub would recurse into us). */
static NvtxFunctionPointer stub_core[NVTX_CBID_CORE_SIZE], stub_core2[NVTX_CBID_CORE2_SIZE];

static void snapshot(NvtxFunctionTable table, unsigned size, NvtxFunctionPointer *stubs,
                     unsigned count)
{
    for (unsigned id = 1; id < count; id++) stubs[id] = id < size && table[id] ? *table[id] : NULL;
}

static void wrap(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer *next,
                 const NvtxFunctionPointer *stubs, NvtxFunctionPointer ours)
{
    if (id >= size || !table[id]) return;
    NvtxFunctionPointer current = *table[id];
    if (current && current != ours && current != stubs[id] && !next[id]) next[id] = current;
    *table[id] = ours;
}

#define WRAP(t, n, cb, next, stubs, fn) wrap(t, n, cb, next, stubs, (NvtxFunctionPointer)fn)

static const NvtxExportTableCallbacks *callbacks_of(NvtxGetExportTableFunc_t get_table)
{
    const NvtxExportTableCallbacks *cb = get_table ? get_table(NVTX_ETID_CALLBACKS) : NULL;
    return cb && cb->GetModuleFunctionTable ? cb : NULL;
}

/* A library's NVTX reached us before our constructor ran: start the preloaded library's run now,
 * with its collectors (the same start as preload/preload.c's). Never where the core is linked
 * into a program (tests), which starts it itself. */
static void nvtx_start_early(void)
{
    char self[PATH_MAX];
    if (atomic_load(&ip_state_v) != IP_STATE_UNINIT ||
        ip_lifecycle_library_path(self, sizeof self) != 0)
        return;
    static const struct ip_start_opts opts = {NULL, 1, ip_collectors, IP_COLLECTOR_COUNT};
    ip_lifecycle_start(&opts);
}

IP_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    /* A library's constructor may reach NVTX before ours ran (its loader found us through
     * NVTX_INJECTION64_PATH, which `infprof run` sets before exec): start now, so its ranges are
     * recorded (the copy of the library NVTX loads by that path is the active one). */
    nvtx_start_early();
    const NvtxExportTableCallbacks *cb = callbacks_of(get_table);
    NvtxFunctionTable t;
    unsigned n;
    if (cb && cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n))
        snapshot(t, n, stub_core, NVTX_CBID_CORE_SIZE);
    if (cb && cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n))
        snapshot(t, n, stub_core2, NVTX_CBID_CORE2_SIZE);
    if (nvtx_next_path[0]) {
        void *h = dlopen(nvtx_next_path, RTLD_NOW | RTLD_GLOBAL);
        NvtxInitializeInjectionNvtxFunc_t init =
            h ? (NvtxInitializeInjectionNvtxFunc_t)dlsym(h, "InitializeInjectionNvtx2") : NULL;
        if (init && init(get_table))
            atomic_store(&nvtx_chained, 1);
        else
            ip_info("NVTX: cannot chain to %s", nvtx_next_path);
    }
    if (!ip_cfg_group_int(&ip_nvtx_cfg, IP_NVTX_CFG_ON) || !cb) return 1;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
        NvtxFunctionPointer *x = next_core, *st = stub_core;
        WRAP(t, n, NVTX_CBID_CORE_MarkEx, x, st, w_MarkEx);
        WRAP(t, n, NVTX_CBID_CORE_MarkA, x, st, w_MarkA);
        WRAP(t, n, NVTX_CBID_CORE_RangeStartEx, x, st, w_RangeStartEx);
        WRAP(t, n, NVTX_CBID_CORE_RangeStartA, x, st, w_RangeStartA);
        WRAP(t, n, NVTX_CBID_CORE_RangeEnd, x, st, w_RangeEnd);
        WRAP(t, n, NVTX_CBID_CORE_RangePushEx, x, st, w_RangePushEx);
        WRAP(t, n, NVTX_CBID_CORE_RangePushA, x, st, w_RangePushA);
        WRAP(t, n, NVTX_CBID_CORE_RangePop, x, st, w_RangePop);
        WRAP(t, n, NVTX_CBID_CORE_NameOsThreadA, x, st, w_NameOsThreadA);
        WRAP(t, n, NVTX_CBID_CORE_MarkW, x, st, w_MarkW);
        WRAP(t, n, NVTX_CBID_CORE_RangeStartW, x, st, w_RangeStartW);
        WRAP(t, n, NVTX_CBID_CORE_RangePushW, x, st, w_RangePushW);
        WRAP(t, n, NVTX_CBID_CORE_NameOsThreadW, x, st, w_NameOsThreadW);
    }
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
        NvtxFunctionPointer *x = next_core2, *st = stub_core2;
        WRAP(t, n, NVTX_CBID_CORE2_DomainMarkEx, x, st, w_DomainMarkEx);
        WRAP(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, x, st, w_DomainRangeStartEx);
        WRAP(t, n, NVTX_CBID_CORE2_DomainRangeEnd, x, st, w_DomainRangeEnd);
        WRAP(t, n, NVTX_CBID_CORE2_DomainRangePushEx, x, st, w_DomainRangePushEx);
        WRAP(t, n, NVTX_CBID_CORE2_DomainRangePop, x, st, w_DomainRangePop);
        WRAP(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, x, st, w_DomainRegisterStringA);
        WRAP(t, n, NVTX_CBID_CORE2_DomainCreateA, x, st, w_DomainCreateA);
        WRAP(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, x, st, w_DomainRegisterStringW);
        WRAP(t, n, NVTX_CBID_CORE2_DomainCreateW, x, st, w_DomainCreateW);
    }
    ip_collector_status(IP_COLLECTOR_NVTX, "on", "capturing%s%s",
                        atomic_load(&nvtx_chained) ? "; chained to " : "",
                        atomic_load(&nvtx_chained) ? nvtx_next_path : "");
    return 1;
}

static void nvtx_init(void)
{
    char self[PATH_MAX], cur_real[PATH_MAX];
    if (ip_lifecycle_library_path(self, sizeof self) != 0) {
        /* Linked into a program (tests): its NVTX calls reach us through nvtx3's static injection
         * (InitializeInjectionNvtx2_fnptr), not through a library path. */
        ip_collector_status(IP_COLLECTOR_NVTX, "on", "the program made no NVTX call");
        return;
    }
    const char *cur = getenv("NVTX_INJECTION64_PATH");
    const char *inherited = getenv("INFPROF_NVTX_NEXT");
    if (cur && *cur && !(realpath(cur, cur_real) && strcmp(cur_real, self) == 0)) {
        snprintf(nvtx_next_path, sizeof nvtx_next_path, "%s", cur);
        setenv("INFPROF_NVTX_NEXT", cur, 1);
    } else if (inherited && *inherited) {
        snprintf(nvtx_next_path, sizeof nvtx_next_path, "%s", inherited);
    }
    if (!ip_cfg_group_int(&ip_nvtx_cfg, IP_NVTX_CFG_ON) && !ip_cfg_int(IP_CFG_NVTX_EMIT)) {
        ip_collector_status(IP_COLLECTOR_NVTX, "off", "INFPROF_NVTX=0");
        return;
    }
    if (!ip_cfg_group_int(&ip_nvtx_cfg, IP_NVTX_CFG_ON)) {
        /* Emitting only: leave the injection to whichever tool was set. */
        ip_collector_status(IP_COLLECTOR_NVTX, "off",
                            "INFPROF_NVTX=0 (phase ranges still"
                            " emitted)");
        return;
    }
    setenv("NVTX_INJECTION64_PATH", self, 1);
    ip_collector_status(IP_COLLECTOR_NVTX, "on", "the program made no NVTX call");
}

extern const char ip_schema_nvtx[]; /* collectors/nvtx.sql, embedded at build time */

const struct ip_collector ip_collector_nvtx = {
    .name = "nvtx",
    .title = "NVTX",
    .settings = &ip_nvtx_cfg,
    .schema = ip_schema_nvtx,
    .init = nvtx_init,
    .prepare = ip_nvtx_ingest_prepare,
    .ingest = ip_nvtx_ingest,
    .finish = ip_nvtx_ingest_finish,
};

/*
 * torch_ingest.c: the libtorch collector, writer side. Allocator reports become tensor_memory
 * rows, TorchScript calls and Python module calls become iterations (in the phase the thread spent
 * most of the call in), DataLoader waits input_waits rows, at::Context setters become settings
 * rows, and what the app side found becomes the run metadata: torch_api (which API and symbols) and
 * the collector's status, including a libtorch linked statically into the program, which
 * interposition cannot see.
 *
 * The CPU total stored is the process's CPU tensor memory: c10's CPU allocator's total plus the
 * shared-memory blocks held (c10's MapAllocator: a DataLoader's batches, which it reports with a
 * total of 0 and its own block's size; with num_workers=0 the same batch is the CPU allocator's).
 * Where our table keeps the CPU blocks' sizes (torch_cpumem.c) a shared block's report carries the
 * CPU allocator's total (its reserved field): its row does not depend on the reports drained
 * before it, and a MapAllocator free is known for one. Elsewhere it is told from the CPU
 * allocator's free of its last block by the total: that one empties the CPU allocator (a
 * coincidence of sizes reads as the other). The shared blocks held are kept with the times they
 * changed, so that a total stored for an earlier time (a fold's level, written at its
 * iteration's end) adds what was held then.
 *
 * A forked child (a DataLoader worker, a pre-forked server's worker) inherits libtorch's CPU
 * allocator total with the parent's tensors: its reports would count the parent's model as its
 * own, and a sum over processes would count it once per child. Its CPU totals are stored less
 * what it held at the fork (the total before its first CPU allocator report), never below 0, and
 * that amount is meta cpu_memory_inherited_bytes.
 */
#include "registry.h"
#include "torch_config.h"
#include "torch_internal.h"
#include "../profiler/watch.h"
#include "../profiler/config.h"
#include "../profiler/fdguard.h"
#include "../profiler/iteration.h"
#include "../profiler/opname.h"
#include "../profiler/phase.h"
#include "../profiler/process.h"
#include "../profiler/store.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TI_SHARED_HISTORY 256

static struct {
    struct ip_batch *memory, *folds, *settings, *waits, *gc;
    int64_t batch;
    uint32_t written; /* ip_torch_found as of the last metadata written */
    int wrote;
    int64_t inherited; /* a forked child's CPU total at the fork; -1 until its first report */
    int64_t cpu_total; /* c10's CPU allocator's total, as last reported */
    int64_t shared;    /* shared-memory blocks held (MapAllocator) */
    struct {           /* its last changes (when, the value after), for totals at a time */
        uint64_t ts[TI_SHARED_HISTORY];
        int64_t v[TI_SHARED_HISTORY];
        uint32_t n, next;
        int64_t before; /* the value before the oldest kept */
    } sh;
} ti;

/* The shared blocks held changed at ts (a report's: its thread's clock, the run's). */
static void shared_changed(uint64_t ts)
{
    if (ti.sh.n == TI_SHARED_HISTORY) ti.sh.before = ti.sh.v[ti.sh.next];
    ti.sh.ts[ti.sh.next] = ts;
    ti.sh.v[ti.sh.next] = ti.shared;
    ti.sh.next = (ti.sh.next + 1) % TI_SHARED_HISTORY;
    if (ti.sh.n < TI_SHARED_HISTORY) ti.sh.n++;
}

/* The shared blocks held at ts: a thread's rows are drained in turn, not in time order, so a
 * block another thread mapped after ts may be known already (a DataLoader's pin-memory thread
 * while the main thread is inside a forward, whose fold comes at its end). */
static int64_t shared_at(uint64_t ts)
{
    for (uint32_t k = 0; k < ti.sh.n; k++) {
        uint32_t i = (ti.sh.next + TI_SHARED_HISTORY - 1 - k) % TI_SHARED_HISTORY;
        if (ti.sh.ts[i] <= ts) return ti.sh.v[i];
    }
    return ti.sh.n ? ti.sh.before : ti.shared;
}

/* The process's CPU tensor memory at ts: c10's CPU allocator's total as last reported, less what
 * a forked child was forked holding, plus the shared blocks held then. */
static int64_t cpu_memory_at(uint64_t ts)
{
    int64_t base = ti.inherited > 0 ? ti.inherited : 0;
    int64_t own = ti.cpu_total > base ? ti.cpu_total - base : 0;
    return own + shared_at(ts);
}

/* The CPU total to store for a CPU report (above). */
static int64_t cpu_memory_total(const struct ip_ev_torch_memory *e)
{
    if (e->allocated == 0 && e->cpu_total_known) ti.cpu_total = e->reserved; /* a shared one */
    if (e->allocated == 0 && e->bytes > 0) { /* a shared block mapped */
        ti.shared += e->bytes;
        shared_changed(e->ts);
    } else if (e->allocated == 0 && e->bytes < 0 &&
               (e->cpu_total_known || ti.cpu_total != -e->bytes)) {
        ti.shared = ti.shared + e->bytes > 0 ? ti.shared + e->bytes : 0; /* one unmapped */
        shared_changed(e->ts);
    } else { /* the CPU allocator's */
        if (ti.inherited < 0) {
            int64_t before = e->allocated - e->bytes;
            ti.inherited = before > 0 ? before : 0;
        }
        ti.cpu_total = e->allocated;
    }
    return cpu_memory_at(e->ts);
}

/* The CPU total to store for a level of a fold at ts: as a report's after the same total. */
static int64_t cpu_memory_level(int64_t allocated, uint64_t ts)
{
    ti.cpu_total = allocated;
    return cpu_memory_at(ts);
}

/* A fold of reports (torch_memfold.c): its levels in time order as tensor_memory rows (a level
 * at the same time as the last one kept, or the same as it, is left out: the highest first of a
 * tie, with its operator), and its allocations as one tensor_memory_folds row. */
static void memory_fold(struct ip_store *s, uint32_t tid, const struct ip_ev_torch_memory_fold *e)
{
    if (!ti.memory || !ti.folds) return;
    int cpu = e->device_type == 0;
    if (e->device_type == 1) ip_watch_device((uint32_t)e->device_index);
    if (cpu && ti.inherited < 0) ti.inherited = e->first_before > 0 ? e->first_before : 0;
    struct {
        uint64_t ts;
        int64_t a, r, op;
    } v[5] = {{e->hi_ts, e->hi, e->hi_res, e->op}, /* first of a tie: the one kept */
              {e->lo_ts, e->lo, e->lo_res, 0},
              {e->after_ts, e->after, e->after_res, 0},
              {e->rmax_ts, e->rmax_alloc, e->rmax, 0},
              {e->end, e->last, e->last_res, 0}};
    for (int i = 1; i < 5; i++) /* in time order, stable (five) */
        for (int k = i; k > 0 && v[k].ts < v[k - 1].ts; k--) {
            __typeof__(v[0]) t = v[k];
            v[k] = v[k - 1], v[k - 1] = t;
        }
    for (int i = 0, kept = -1; i < 5; i++) {
        if (kept >= 0 && (v[i].ts == v[kept].ts || (v[i].a == v[kept].a && v[i].r == v[kept].r)))
            continue;
        kept = i;
        int64_t *row = ip_batch_row(ti.memory);
        row[0] = ip_store_rel(s, v[i].ts);
        row[1] = tid;
        row[2] = e->h.aux;
        row[3] = e->device_type;
        row[4] = e->device_index;
        row[5] = 0;
        row[6] = 0;
        row[7] = cpu ? cpu_memory_level(v[i].a, v[i].ts) : v[i].a;
        row[8] = cpu ? 0 : v[i].r;
        row[9] = ip_opname_string(s, (uint32_t)v[i].op);
        row[10] = e->reports;
    }
    if (cpu) ti.cpu_total = e->last;
    int64_t *row = ip_batch_row(ti.folds);
    row[0] = tid;
    row[1] = e->h.aux;
    row[2] = e->device_type;
    row[3] = e->device_index;
    row[4] = e->iter;
    row[5] = ip_store_rel(s, e->start);
    row[6] = ip_store_rel(s, e->end);
    row[7] = e->reports;
    row[8] = e->allocs;
    row[9] = e->alloc_bytes;
    for (int k = 0; k < 3; k++) row[10 + k] = e->largest[k];
}

void ip_torch_ingest_prepare(struct ip_store *s)
{
    memset(&ti, 0, sizeof ti);
    ti.memory = ip_batch_open(s, "tensor_memory", 11);
    ti.folds = ip_batch_open(s, "tensor_memory_folds", 13);
    ti.settings = ip_batch_open(s, "settings", 4);
    ti.waits = ip_batch_open(s, "input_waits", 4);
    ti.gc = ip_batch_open(s, "gc_pauses", 5);
    ti.batch = ip_cfg_int(IP_CFG_BATCH);
    ti.inherited = ip_role() == IP_ROLE_FORK_CHILD ? -1 : 0;
    ip_torch_ops_prepare(s);
}

void ip_torch_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev)
{
    switch (ev->type & 0xff) {
    case IP_EV_TORCH_MEMORY: {
        const struct ip_ev_torch_memory *e = (const struct ip_ev_torch_memory *)ev;
        if (!ti.memory) return;
        int64_t *row = ip_batch_row(ti.memory);
        row[0] = ip_store_rel(s, e->ts);
        row[1] = tid;
        row[2] = e->h.aux;
        row[3] = e->device_type;
        row[4] = e->device_index;
        if (e->device_type == 1) ip_watch_device((uint32_t)e->device_index); /* c10 CUDA */
        row[5] = (int64_t)e->ptr;
        row[6] = e->bytes;
        row[7] = e->device_type == 0 ? cpu_memory_total(e) : e->allocated;
        row[8] = e->device_type == 0 ? 0 : e->reserved; /* a shared block's own size: none */
        row[9] = ip_opname_string(s, e->op);
        row[10] = IP_NULL;
        break;
    }
    case IP_EV_TORCH_MEMORY_FOLD: {
        const struct ip_ev_torch_memory_fold *e = (const struct ip_ev_torch_memory_fold *)ev;
        memory_fold(s, e->tid ? e->tid : tid, e); /* tid: another thread's, written at the finish */
        break;
    }
    case IP_EV_TORCH_ITERATION: {
        const struct ip_ev_torch_iteration *e = (const struct ip_ev_torch_iteration *)ev;
        int64_t batch = e->batch > 0 ? e->batch : ti.batch > 0 ? ti.batch : IP_NULL;
        uint32_t len = e->len < IP_ITER_LABEL_MAX ? e->len : IP_ITER_LABEL_MAX - 1;
        ip_iter_row(s, e->h.aux, tid, e->start, e->end, (int)e->source, batch,
                    e->nvtx ? (int64_t)e->nvtx : IP_NULL,
                    len ? (int64_t)ip_store_intern(s, e->label, len) : IP_NULL);
        break;
    }
    case IP_EV_TORCH_INPUT_WAIT: {
        const struct ip_ev_torch_input_wait *e = (const struct ip_ev_torch_input_wait *)ev;
        if (!ti.waits) return;
        int64_t *row = ip_batch_row(ti.waits);
        row[0] = tid;
        row[1] = e->h.aux;
        row[2] = ip_store_rel(s, e->start);
        row[3] = (int64_t)(e->end - e->start);
        break;
    }
    case IP_EV_TORCH_GC: {
        const struct ip_ev_torch_gc *e = (const struct ip_ev_torch_gc *)ev;
        if (!ti.gc) return;
        int64_t *row = ip_batch_row(ti.gc);
        row[0] = tid;
        row[1] = e->h.aux;
        row[2] = ip_store_rel(s, e->start);
        row[3] = (int64_t)(e->end - e->start);
        row[4] = e->generation;
        break;
    }
    case IP_EV_TORCH_OP:
        ip_torch_ops_ingest(s, tid, (const struct ip_ev_torch_op *)ev);
        break;
    case IP_EV_TORCH_OP_WINDOW:
        ip_torch_ops_window_ingest(s, tid, (const struct ip_ev_torch_op_window *)ev);
        break;
    case IP_EV_TORCH_SETTING: {
        const struct ip_ev_torch_setting *e = (const struct ip_ev_torch_setting *)ev;
        int64_t *row = ip_batch_row(ti.settings);
        row[0] = ip_store_rel(s, e->ts);
        row[1] = tid;
        row[2] = ip_store_intern_static(s, ip_torch_setting_name(e->h.aux));
        row[3] = ip_store_intern_static(s, ip_torch_setting_text(e->h.aux, e->value));
        break;
    }
    }
}

/* Is `needle` among the symbol names of the executable (its string tables)? A libtorch linked
 * statically leaves its names there (unless stripped) and no libc10.so in the process. */
static int exe_has_symbol(const char *needle)
{
    int fd = ip_fdguard_open_own("/proc/self/exe", O_RDONLY, 0);
    if (fd < 0) return 0;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(Elf64_Ehdr))
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    ip_fdguard_close_own(fd);
    if (map == MAP_FAILED) return 0;
    const unsigned char *base = map;
    size_t size = (size_t)st.st_size, nlen = strlen(needle);
    const Elf64_Ehdr *eh = map;
    int found = 0;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
        eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff < size &&
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) >= eh->e_shnum) {
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
        for (unsigned i = 0; i < eh->e_shnum && !found; i++) {
            if (sh[i].sh_type != SHT_STRTAB || sh[i].sh_offset > size ||
                sh[i].sh_size > size - sh[i].sh_offset)
                continue;
            found = memmem(base + sh[i].sh_offset, sh[i].sh_size, needle, nlen + 1) != NULL;
        }
    }
    munmap(map, size);
    return found;
}

static void add(char *out, size_t n, const char *text)
{
    size_t len = strlen(out);
    snprintf(out + len, n - len, "%s%s", len ? "; " : "", text);
}

static void write_metadata(struct ip_store *s, uint32_t f, int final)
{
    ti.written = f;
    ti.wrote = 1;
    if (!(f & IP_TORCH_ON)) return; /* INFPROF_TORCH=0: init said so */
    if (!(f & IP_TORCH_GRAD_GETTERS)) {
        if (final && exe_has_symbol("_ZN3c108GradMode10is_enabledEv"))
            ip_collector_status(IP_COLLECTOR_TORCH, "off",
                                "libtorch is linked statically into"
                                " the program: its calls cannot be interposed");
        else
            ip_collector_status(IP_COLLECTOR_TORCH, "off", "no libtorch in this process");
        return;
    }
    /* Where the getters answered from. The executable itself means libtorch is part of it:
     * its calls inside never reach us, only polling (launches, TorchScript) sees the grad mode. */
    char lib[PATH_MAX] = "?", api[1024] = "";
    Dl_info info;
    struct link_map *map = NULL;
    void *addr = atomic_load(&ip_torch_lib_addr), *main_map = dlopen(NULL, RTLD_LAZY);
    if (addr && dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP) && info.dli_fname)
        snprintf(lib, sizeof lib, "%s", info.dli_fname);
    int inside = map && (void *)map == main_map;
    if (main_map) dlclose(main_map);
    if (inside)
        ip_collector_status(IP_COLLECTOR_TORCH, "passive",
                            "libtorch is linked into the program:"
                            " no interposition, grad mode by polling only");
    else
        ip_collector_status(IP_COLLECTOR_TORCH, "on", "%s", lib);

    char part[256];
    snprintf(part, sizeof part, "grad mode: c10::GradMode/InferenceMode::is_enabled in %.160s",
             strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib);
    add(api, sizeof api, part);
    if (f & (IP_TORCH_SEEN_GRAD_SET | IP_TORCH_SEEN_TLS_SET)) {
        snprintf(part, sizeof part, "guards seen:%s%s",
                 f & IP_TORCH_SEEN_GRAD_SET ? " GradMode::set_enabled" : "",
                 f & IP_TORCH_SEEN_TLS_SET ? " AutogradState::set_tls_state" : "");
        add(api, sizeof api, part);
    }
    add(api, sizeof api,
        f & IP_TORCH_AUTOCAST_2X    ? "autocast: 2.4+ API (is_autocast_enabled(DeviceType))"
        : f & IP_TORCH_AUTOCAST_113 ? "autocast: 1.13 API (is_enabled, is_cpu_enabled)"
                                    : "autocast: no getters found");
    if (f & (IP_TORCH_SEEN_AC_SET_113 | IP_TORCH_SEEN_AC_SET_2X))
        add(api, sizeof api,
            f & IP_TORCH_SEEN_AC_SET_2X ? "autocast setters seen: 2.4+"
                                        : "autocast setters seen: 1.13");
    if (f & (IP_TORCH_SEEN_MEMORY_113 | IP_TORCH_SEEN_MEMORY_2X))
        add(api, sizeof api,
            f & IP_TORCH_SEEN_MEMORY_2X
                ? "memory: reportMemoryUsageToProfiler(void*, long, size_t,"
                  " size_t, Device) (2.x)"
                : "memory: reportMemoryUsageToProfiler(void*, long, long, long,"
                  " Device) (1.13)");
    else
        add(api, sizeof api, "memory: no allocator report seen");
    add(api, sizeof api,
        !(f & IP_TORCH_CPU_MEMORY) ? "CPU memory: off"
        : f & IP_TORCH_CPU_TABLE   ? "CPU memory: on (our table)"
                                   : "CPU memory: on (memoryProfilingEnabled)");
    if (f & (IP_TORCH_SEEN_JIT | IP_TORCH_SEEN_JIT_OLD))
        add(api, sizeof api,
            f & IP_TORCH_SEEN_JIT ? "TorchScript: Method::operator() (C++11 ABI)"
                                  : "TorchScript: Method::operator() (old ABI)");
    if (f & IP_TORCH_SEEN_AOTI) add(api, sizeof api, "AOTInductor: model runs seen");
    if (f & IP_TORCH_SEEN_SETTING) add(api, sizeof api, "at::Context settings: set");
    if (f & IP_TORCH_SCOPES) add(api, sizeof api, "record_function scopes: on");
    if (f & IP_TORCH_OPERATORS) add(api, sizeof api, "operators: on");
    ip_store_meta_text(s, "torch_api", api);
}

void ip_torch_ingest_flush(struct ip_store *s, int final)
{
    (void) final;
    uint32_t f = atomic_load(&ip_torch_found);
    if (!ti.wrote || f != ti.written) write_metadata(s, f, 0);
}

void ip_torch_ingest_finish(struct ip_store *s)
{
    write_metadata(s, atomic_load(&ip_torch_found), 1);
    if (ti.inherited > 0) ip_store_meta_int(s, "cpu_memory_inherited_bytes", ti.inherited);
    int64_t untracked, untracked_bytes;
    ip_torch_cpumem_untracked(&untracked, &untracked_bytes);
    if (untracked) {
        ip_store_meta_int(s, "cpu_memory_untracked_blocks", untracked);
        ip_store_meta_int(s, "cpu_memory_untracked_bytes", untracked_bytes);
    }
    uint64_t marks_dropped = ip_torch_marks_dropped();
    if (marks_dropped) ip_store_meta_int(s, "torch_marks_dropped", (int64_t)marks_dropped);
    const char *py = ip_torch_python_status();
    if (py[0]) {
        ip_store_meta_text(s, "python_module_hooks", py);
        uint64_t unseen;
        int64_t open;
        ip_torch_python_counts(&unseen, &open);
        ip_store_meta_int(s, "python_module_calls_unseen", (int64_t)unseen);
        ip_store_meta_int(s, "python_module_calls_open_at_end", open > 0 ? open : 0);
        uint64_t late_n, late_ns;
        ip_torch_python_late(&late_n, &late_ns);
        ip_store_meta_int(s, "python_threads_watched_late", (int64_t)late_n);
        ip_store_meta_int(s, "python_threads_watched_late_ns", (int64_t)late_ns);
        uint64_t gc_n, gc_ns;
        ip_torch_gc_counts(&gc_n, &gc_ns);
        ip_store_meta_int(s, "python_gc_short_pauses", (int64_t)gc_n);
        ip_store_meta_int(s, "python_gc_short_ns", (int64_t)gc_ns);
    }
    /* Setter calls made by libtorch's own guards, which left the phase alone. */
    ip_store_meta_int(s, "torch_internal_setter_calls", (int64_t)ip_torch_internal_calls());
    if (atomic_load(&ip_torch_found) & (IP_TORCH_SEEN_MEMORY_113 | IP_TORCH_SEEN_MEMORY_2X)) {
        uint64_t folded, folds;
        ip_torch_memfold_counts(&folded, &folds);
        ip_store_meta_text(s, "tensor_memory_mode",
                           ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_MEMORY_FOLD)
                               ? "folded per forward iteration"
                               : "every report");
        ip_store_meta_int(s, "tensor_memory_folded_reports", (int64_t)folded);
        ip_store_meta_int(s, "tensor_memory_folds", (int64_t)folds);
    }
    ip_torch_ops_finish(s);
}

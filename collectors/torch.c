/*
 * torch.c: the libtorch collector, app side (docs/libtorch.md). With no change to the
 * program it learns, per thread:
 *  - the grad mode, from the interposed c10::GradMode::set_enabled and
 *    c10::AutogradState::set_tls_state (the guards are inline in the program, so their calls
 *    reach us through the PLT); after forwarding, libc10's getters say where the thread is now;
 *  - the autocast state, from the interposed setters of 1.13 and of 2.4+, kept in a per-thread
 *    shadow (ip_self.cuda_ac / cpu_ac): the getters read false inside autocast-wrapped ops,
 *    exactly where the GEMM and conv kernels launch;
 *  - confirmation by polling the getters (CUPTI launch callback, TorchScript calls);
 *  - tensor memory: c10::reportMemoryUsageToProfiler (both signatures) is recorded and then
 *    forwarded; the CPU allocator's reports come from torch_cpumem.c (its own table of block
 *    sizes), or, where libc10 binds those calls inside itself, from libtorch's reporter, made to
 *    report by c10::memoryProfilingEnabled answering true;
 *  - iterations: the outermost torch::jit::Method::operator() or AOTInductor run of each thread
 *    (torch_iterations.c, which also takes record_function and TorchScript scopes).
 *
 * Every hook forwards to the real function whatever happens here (torch_state.c finds it).
 * Before the pipeline runs, or with INFPROF_TORCH=0, hooks only forward.
 */
#include "torch_config.h"
#include "registry.h"
#include "torch_internal.h"
#include "../profiler/clock.h"
#include "../profiler/config.h"
#include "../profiler/futex.h"
#include "../profiler/iteration.h"
#include "../profiler/opname.h"
#include "../profiler/process.h"
#include "../profiler/phase.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"

#include <stdbool.h>
#include <stdlib.h>

#define IP_EXPORT      __attribute__((visibility("default")))
#define REAL(id, type) ((type)ip_torch_real_or_die(id))

/* ---- grad mode setters -------------------------------------------------------------------- */

/* After a grad-mode setter was forwarded. Autocast is left to its shadow: libtorch's own
 * NoGradGuards run inside autocast-wrapped ops too, where the autocast getters read false.
 * caller: the setter's return address (libtorch's own guards are not the program's phases). */
static void torch_after_grad_setter(uint32_t seen, const void *caller)
{
    ip_torch_seen(seen);
    if (!ip_torch_enter()) return;
    if (ip_torch_ready(1) && !ip_torch_internal_caller(caller)) {
        ip_torch_scope_arm();
        ip_torch_note(ip_torch_grad_now(), ip_self.cuda_ac, ip_self.cpu_ac, 1);
        ip_phase_emit();
    }
    ip_hook_leave();
}

IP_EXPORT void ip_torch_grad_set_enabled(bool on) IP_TORCH_LINKAGE(GRAD_SET);
void ip_torch_grad_set_enabled(bool on)
{
    REAL(IP_TORCH_R_GRAD_SET, void (*)(bool))(on);
    torch_after_grad_setter(IP_TORCH_SEEN_GRAD_SET, __builtin_return_address(0));
}

/* c10::AutogradState is passed by value in one register (or by a hidden pointer in that same
 * register): forwarded untouched, never read, since its layout changed between versions. */
IP_EXPORT void ip_torch_set_tls_state(uintptr_t state) IP_TORCH_LINKAGE(TLS_SET);
void ip_torch_set_tls_state(uintptr_t state)
{
    REAL(IP_TORCH_R_TLS_SET, void (*)(uintptr_t))(state);
    torch_after_grad_setter(IP_TORCH_SEEN_TLS_SET, __builtin_return_address(0));
}

/* ---- autocast setters --------------------------------------------------------------------- */

/* After an autocast setter was forwarded. device_type: c10::DeviceType (others are not ours);
 * enabled: 0 or 1, -1 when only the dtype was set; dtype: the one set, -1 to ask libtorch;
 * caller: the setter's return address. */
static void torch_after_autocast_setter(uint32_t seen, int device_type, int enabled, int dtype,
                                        const void *caller)
{
    ip_torch_seen(seen);
    if (device_type != 0 && device_type != 1) return;
    if (!ip_torch_enter()) return;
    if (ip_torch_ready(1) && !ip_torch_internal_caller(caller)) {
        uint8_t ac[2] = {ip_self.cpu_ac, ip_self.cuda_ac};
        if (enabled < 0) enabled = ac[device_type] != 0;
        ac[device_type] = !enabled    ? 0
                          : dtype > 0 ? (uint8_t)dtype
                                      : ip_torch_dtype_now(device_type);
        ip_torch_note(ip_torch_grad_now(), ac[1], ac[0], 1);
        ip_phase_emit();
    }
    ip_hook_leave();
}

#define AUTOCAST_113(fn, id, type, device_type, enabled_expr, dtype_expr)                          \
    IP_EXPORT void fn(type v) IP_TORCH_LINKAGE(id);                                                \
    void fn(type v)                                                                                \
    {                                                                                              \
        REAL(IP_TORCH_R_##id, void (*)(type))(v);                                                  \
        torch_after_autocast_setter(IP_TORCH_SEEN_AC_SET_113, device_type, enabled_expr,           \
                                    dtype_expr, __builtin_return_address(0));                      \
    }

AUTOCAST_113(ip_torch_ac_set_enabled, AC_ENABLED, bool, 1, v, -1)
AUTOCAST_113(ip_torch_ac_set_cpu_enabled, AC_CPU_ON, bool, 0, v, -1)
AUTOCAST_113(ip_torch_ac_set_gpu_dtype, AC_GPU_DTYPE, int8_t, 1, -1, v)
AUTOCAST_113(ip_torch_ac_set_cpu_dtype, AC_CPU_DTYPE, int8_t, 0, -1, v)

IP_EXPORT void ip_torch_ac_set_autocast_enabled(int8_t device_type, bool on)
    IP_TORCH_LINKAGE(AC_ENABLED_2X);
void ip_torch_ac_set_autocast_enabled(int8_t device_type, bool on)
{
    REAL(IP_TORCH_R_AC_ENABLED_2X, void (*)(int8_t, bool))(device_type, on);
    torch_after_autocast_setter(IP_TORCH_SEEN_AC_SET_2X, device_type, on, -1,
                                __builtin_return_address(0));
}

IP_EXPORT void ip_torch_ac_set_autocast_dtype(int8_t device_type, int8_t dtype)
    IP_TORCH_LINKAGE(AC_DTYPE_2X);
void ip_torch_ac_set_autocast_dtype(int8_t device_type, int8_t dtype)
{
    REAL(IP_TORCH_R_AC_DTYPE_2X, void (*)(int8_t, int8_t))(device_type, dtype);
    torch_after_autocast_setter(IP_TORCH_SEEN_AC_SET_2X, device_type, -1, dtype,
                                __builtin_return_address(0));
}

/* ---- tensor memory ------------------------------------------------------------------------ */

/* Whether we make the CPU allocator report: decided once, on the first question, and kept until
 * the program exits. Its reporter keeps a table of live blocks only while profiling is on, and
 * warns on stderr about a block freed that it never saw: the answer may never turn on later.
 *
 * The table is a static object of libc10, destroyed among the program's exit handlers while
 * threads that are still running may allocate and free: with profiling on they would use the
 * destroyed table (a crash, or libtorch's "unknown size" warning), which the program without us
 * never does. So the answer turns off in an exit handler registered at the first CPU report (the
 * reporter was constructed, and its destructor registered, before it reported: ours runs first).
 * Threads told "on" just before may still be queued on the reporter's mutex: each such operation
 * is counted open from the answer to its report (counted before the answer is read a last time),
 * and the handler waits, at most IP_CPU_MEMORY_EXIT_MS, until none is. An operation that never
 * reports (a free the table did not know) stays open until the thread's next question: the bound
 * covers it. */
#define IP_CPU_MEMORY_EXIT_MS 100

static _Atomic int cpu_memory = -1;
static _Atomic int cpu_memory_exit_armed;
static _Atomic uint32_t cpu_memory_open; /* operations told "on" that have not reported */

static void cpu_memory_close(void)
{
    if (!ip_self.cpu_mem_open) return;
    ip_self.cpu_mem_open = 0;
    /* The last one out once the answer is off wakes the exit handler, if it waits. */
    if (atomic_fetch_sub(&cpu_memory_open, 1) == 1 && atomic_load(&cpu_memory) == 0)
        ip_futex_wake(&cpu_memory_open);
}

static void torch_cpu_memory_exit(void)
{
    atomic_store(&cpu_memory, 0);
    cpu_memory_close();
    uint64_t deadline = ip_clock_now() + IP_CPU_MEMORY_EXIT_MS * 1000000ull;
    for (;;) {
        uint32_t n = atomic_load(&cpu_memory_open);
        uint64_t now = ip_clock_now();
        if (!n || now >= deadline) break;
        ip_futex_wait(&cpu_memory_open, n, (deadline - now) / 1000000ull + 1);
    }
}

/* c10::Device, passed by value in one register. */
struct ip_torch_device {
    int8_t type, index;
};

/* A CUDA report runs under the caching allocator's mutex: no lock, no allocation, no NVTX, no
 * loader. The CPU allocator reports after releasing its own lock, so a CPU report is a safe point
 * (a thread seen only through its CPU tensors still gets its NVTX phase range). */
static inline __attribute__((always_inline)) void
torch_memory_record(void *ptr, int64_t bytes, int64_t allocated, int64_t reserved,
                    struct ip_torch_device dev, int from_c10)
{
    if (!ip_torch_enter()) return;
    int safe = dev.type == 0;
    if (!ip_self.phase && ip_torch_ready(safe))
        ip_torch_note(ip_torch_grad_now(), ip_self.cuda_ac, ip_self.cpu_ac, safe);
    if (safe) {
        if (ip_torch_ready(0)) ip_torch_scope_arm();
        if (ip_self.phase != ip_self.emitted_phase) ip_phase_emit();
    }
    ip_torch_py_watch(); /* another Python thread's work while the watched one's forward runs */
    /* Inside a forward iteration: folded (torch_memfold.c), no record of its own. */
    if (ip_torch_memfold_on &&
        ip_torch_memfold_add(bytes, allocated, reserved, dev.type, dev.index)) {
        ip_hook_leave();
        return;
    }
    struct ip_ring *r;
    struct ip_ev_torch_memory *e = ip_ring_begin(sizeof *e, &r);
    if (e) {
        e->h = (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_MEMORY), sizeof *e,
                              ip_self.phase};
        e->ts = ip_clock_now();
        e->ptr = (uint64_t)(uintptr_t)ptr;
        e->bytes = bytes;
        e->allocated = allocated;
        e->reserved = reserved;
        e->device_type = dev.type;
        e->device_index = dev.index;
        e->cpu_total_known = 0;
        e->pad = 0;
        /* A shared block's report (c10's MapAllocator: the CPU allocator's own come through
         * torch_cpumem.c): the CPU allocator's total with it, so that the writer need not take it
         * from the reports drained before (another thread's may wait in a fold). */
        if (from_c10 && dev.type == 0 && allocated == 0 && ip_torch_cpumem_is_ours()) {
            e->reserved = atomic_load_explicit(&ip_torch_cpumem_total, memory_order_relaxed);
            e->cpu_total_known = 1;
        }
        e->op = ip_self.op_rf ? ip_thread_op() : 0; /* lock-free: safe under the allocator's */
        ip_ring_commit(r, sizeof *e);
    }
    ip_hook_leave();
}

static void torch_memory(uint32_t seen, void *ptr, int64_t bytes, int64_t allocated,
                         int64_t reserved, struct ip_torch_device dev)
{
    ip_torch_seen(seen);
    /* libtorch's table keeps the CPU blocks (torch_cpumem.c): its exit handshake. */
    if (dev.type == 0 && !ip_torch_cpumem_is_ours()) {
        cpu_memory_close();
        /* A load first: the exchange would write a shared line on every CPU report. */
        if (!atomic_load_explicit(&cpu_memory_exit_armed, memory_order_relaxed) &&
            !atomic_exchange(&cpu_memory_exit_armed, 1))
            atexit(torch_cpu_memory_exit);
    }
    torch_memory_record(ptr, bytes, allocated, reserved, dev, 1);
}

/* c10's reportMemoryUsageToProfiler, either signature (the same registers), and the bit that
 * says which: looked up on the first CPU report torch_cpumem.c makes (a safe point). */
typedef void (*report_fn)(void *, int64_t, int64_t, int64_t, struct ip_torch_device);
static report_fn _Atomic cpu_report_real;

void ip_torch_cpu_report(void *ptr, int64_t bytes, int64_t allocated, int forward)
{
    report_fn fn = atomic_load_explicit(&cpu_report_real, memory_order_acquire);
    if (!fn) {
        uint32_t seen = IP_TORCH_SEEN_MEMORY_2X;
        fn = (report_fn)ip_torch_real(IP_TORCH_R_MEMORY_2X);
        if (!fn) {
            seen = IP_TORCH_SEEN_MEMORY_113;
            fn = (report_fn)ip_torch_real(IP_TORCH_R_MEMORY_113);
        }
        if (!fn) return; /* no libc10 behind the allocator: cannot be */
        atomic_store_explicit(&cpu_report_real, fn, memory_order_release);
        ip_torch_seen(seen);
    }
    const struct ip_torch_device cpu = {0, -1}; /* c10::Device(DeviceType::CPU) */
    torch_memory_record(ptr, bytes, allocated, 0, cpu, 0);
    if (forward) fn(ptr, bytes, allocated, 0, cpu);
}

IP_EXPORT void ip_torch_report_memory_113(void *ptr, int64_t bytes, int64_t allocated,
                                          int64_t reserved, struct ip_torch_device dev)
    IP_TORCH_LINKAGE(MEMORY_113);
void ip_torch_report_memory_113(void *ptr, int64_t bytes, int64_t allocated, int64_t reserved,
                                struct ip_torch_device dev)
{
    torch_memory(IP_TORCH_SEEN_MEMORY_113, ptr, bytes, allocated, reserved, dev);
    void (*fn)(void *, int64_t, int64_t, int64_t, struct ip_torch_device) =
        ip_torch_real(IP_TORCH_R_MEMORY_113);
    if (fn) fn(ptr, bytes, allocated, reserved, dev);
}

IP_EXPORT void ip_torch_report_memory_2x(void *ptr, int64_t bytes, uint64_t allocated,
                                         uint64_t reserved, struct ip_torch_device dev)
    IP_TORCH_LINKAGE(MEMORY_2X);
void ip_torch_report_memory_2x(void *ptr, int64_t bytes, uint64_t allocated, uint64_t reserved,
                               struct ip_torch_device dev)
{
    torch_memory(IP_TORCH_SEEN_MEMORY_2X, ptr, bytes, (int64_t)allocated, (int64_t)reserved, dev);
    void (*fn)(void *, int64_t, uint64_t, uint64_t, struct ip_torch_device) =
        ip_torch_real(IP_TORCH_R_MEMORY_2X);
    if (fn) fn(ptr, bytes, allocated, reserved, dev);
}

static int env_flag(const struct ip_cfg_group *g, int id)
{
    return ip_cfg_entry_env(&g->entries[id]) != 0;
}

int ip_torch_cpu_memory_wanted(void)
{
    int v = atomic_load_explicit(&cpu_memory, memory_order_relaxed);
    if (v >= 0) return v;
    int want;
    int state = atomic_load(&ip_state_v);
    if (state == IP_STATE_UNINIT) /* asked before our constructor ran: the environment decides */
        want = env_flag(&ip_cfg_core, IP_CFG_ENABLE) && env_flag(&ip_torch_cfg, IP_TORCH_CFG_ON) &&
               env_flag(&ip_torch_cfg, IP_TORCH_CFG_CPU_MEMORY) &&
               !(getenv("INFPROF_SESSION") && !env_flag(&ip_cfg_core, IP_CFG_FOLLOW_EXEC));
    else
        want = state != IP_STATE_OFF && ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_ON) &&
               ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_CPU_MEMORY);
    int expect = -1;
    atomic_compare_exchange_strong(&cpu_memory, &expect, want);
    v = atomic_load(&cpu_memory);
    if (v) ip_torch_seen(IP_TORCH_CPU_MEMORY);
    return v;
}

IP_EXPORT bool ip_torch_memory_profiling_enabled(void) IP_TORCH_LINKAGE(MEMORY_QUERY);
bool ip_torch_memory_profiling_enabled(void)
{
    /* Asked before our New was reached, libtorch's table keeps the sizes (torch_cpumem.c). */
    if (ip_torch_cpumem_libtorch() && ip_torch_cpu_memory_wanted()) {
        if (!ip_self.cpu_mem_open) {
            ip_self.cpu_mem_open = 1;
            atomic_fetch_add(&cpu_memory_open, 1);
        }
        /* Counted first, then asked again: the exit handler turns the answer off first, then
         * reads the count (both sequentially consistent), so either it waits for this
         * operation or this operation sees the answer off. */
        if (atomic_load(&cpu_memory) == 1) return 1;
        cpu_memory_close();
    }
    bool (*fn)(void) = ip_torch_real(IP_TORCH_R_MEMORY_QUERY);
    return fn ? fn() : 0;
}

/* ---- TorchScript calls -------------------------------------------------------------------- */

/* Method::operator() returns its IValue through a hidden pointer: the four argument registers
 * (result, this, the vector passed by reference, kwargs) go through untouched, and the result
 * pointer comes back in rax. */
typedef void *(*method_fn)(void *ret, void *self, void *args, void *kwargs);

static void *torch_method_call(int id, uint32_t seen, uint8_t source, void *ret, void *self,
                               void *args, void *kwargs)
{
    method_fn fn = REAL(id, method_fn);
    struct ip_torch_call c __attribute__((cleanup(ip_torch_call_end))) =
        ip_torch_call_begin(seen, source);
    void *r = fn(ret, self, args, kwargs);
    c.returned = 1;
    return r;
}

#define METHOD_CALL(fn, id, seen, source)                                                          \
    IP_EXPORT void *fn(void *ret, void *self, void *args, void *kwargs) IP_TORCH_LINKAGE(id);      \
    void *fn(void *ret, void *self, void *args, void *kwargs)                                      \
    {                                                                                              \
        return torch_method_call(IP_TORCH_R_##id, seen, source, ret, self, args, kwargs);          \
    }

METHOD_CALL(ip_torch_method_call, METHOD, IP_TORCH_SEEN_JIT, 1)
METHOD_CALL(ip_torch_method_call_old, METHOD_OLD, IP_TORCH_SEEN_JIT_OLD, 1)

/* AOTInductor: a model run from a package (AOTIModelPackageLoader) or a .so (the runner), by
 * C++ or by Python (torch._inductor.aoti_load_package calls boxed_run). The same shape as a
 * TorchScript call: the vector comes back through a hidden pointer, then this, the inputs (by
 * reference) and the stream handle; the package's run calls the runner's, nested, not counted. */
METHOD_CALL(ip_torch_aoti_package_run, AOTI_PACKAGE_RUN, IP_TORCH_SEEN_AOTI, 4)
METHOD_CALL(ip_torch_aoti_package_boxed, AOTI_PACKAGE_BOXED, IP_TORCH_SEEN_AOTI, 4)
METHOD_CALL(ip_torch_aoti_runner_run, AOTI_RUNNER_RUN, IP_TORCH_SEEN_AOTI, 4)
METHOD_CALL(ip_torch_aoti_runner_boxed, AOTI_RUNNER_BOXED, IP_TORCH_SEEN_AOTI, 4)

/* ---- collector ---------------------------------------------------------------------------- */

static void torch_init(void)
{
    if (!ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_ON)) {
        ip_collector_status(IP_COLLECTOR_TORCH, "off", "INFPROF_TORCH=0");
        return;
    }
    ip_torch_state_init();
    ip_torch_cpu_memory_wanted();
    ip_torch_python_init();
}

static void torch_start(void)
{
    if (!ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_ON)) return;
    ip_torch_memfold_arm();
    ip_torch_seen(IP_TORCH_ON);
    ip_torch_resolve();
}

/* A program linked to libtorch: its user scopes are seen from main's first line. */
static void torch_main_begins(void)
{
    if (ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_ON) && ip_torch_ready(1)) ip_torch_scope_arm();
}

static void torch_stop(void)
{
    ip_torch_memfold_finish_all(); /* every thread's open folds: an exit inside a forward */
    atomic_store(&cpu_memory, 0);
}

/* A forked child's database starts empty: announce the thread's phase again. */
static void torch_atfork_child(void)
{
    atomic_store(&cpu_memory_open, ip_self.cpu_mem_open); /* the other threads are gone */
    ip_torch_ops_atfork_child();
    ip_torch_memfold_atfork_child();
    ip_torch_python_atfork_child();
    if (!ip_self.phase) return;
    uint8_t grad = ip_self.grad, cuda = ip_self.cuda_ac, cpu = ip_self.cpu_ac;
    ip_self.phase = 0;
    ip_self.emitted_phase = 0;
    ip_phase_set(grad, cuda, cpu);
}

extern const char ip_schema_torch[]; /* collectors/torch.sql, embedded at build time */

const struct ip_collector ip_collector_torch = {
    .name = "torch",
    .title = "libtorch hooks",
    .settings = &ip_torch_cfg,
    .schema = ip_schema_torch,
    .init = torch_init,
    .start = torch_start,
    .main_begins = torch_main_begins,
    .stop = torch_stop,
    .exit_now = ip_torch_memfold_finish_all,
    .atfork_child = torch_atfork_child,
    .prepare = ip_torch_ingest_prepare,
    .ingest = ip_torch_ingest,
    .flush = ip_torch_ingest_flush,
    .finish = ip_torch_ingest_finish,
};

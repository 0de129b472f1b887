/*
 * torch_state.c: the libtorch collector's view of libtorch (app side). Finds libtorch (the real
 * functions behind our hooks, and the getters: next in the global scope, else inside libtorch's
 * own libraries, which Python loads RTLD_LOCAL), reads the calling thread's grad mode and
 * autocast state from the getters, polls them for the phase tracker, and closes the phase of a
 * thread that exits. Which API was found is left in ip_torch_found for the metadata.
 */
#include "torch_config.h"
#include "torch_state.h"
#include "torch_symbols.h"
#include "../profiler/config.h"
#include "../profiler/process.h"
#include "../profiler/log.h"
#include "../profiler/phase.h"
#include "../profiler/thread.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

_Atomic uint32_t ip_torch_found;
void *_Atomic ip_torch_lib_addr;
_Atomic int ip_torch_getters_ready;

/* ---- finding libtorch --------------------------------------------------------------------- */

static const char *const torch_libs[] = {"libc10.so", "libtorch_cpu.so", "libtorch.so"};

struct torch_find {
    const char *name;
    void *found;
};

/* dl_iterate_phdr callback: an object named like one of libtorch's libraries (any version
 * suffix: Debian's are libc10.so.1.13) that defines the symbol. */
static int torch_find_in(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct torch_find *f = arg;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    base = base ? base + 1 : info->dlpi_name;
    int ours = 0;
    for (size_t i = 0; base && i < sizeof torch_libs / sizeof torch_libs[0]; i++)
        ours |= strncmp(base, torch_libs[i], strlen(torch_libs[i])) == 0;
    if (!ours) return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    f->found = dlsym(h, f->name);
    dlclose(h);
    return f->found != NULL;
}

/* Where `name` is defined, not counting us: next in the global scope, else inside libtorch's
 * libraries through a handle of their own (a handle's scope is the object and its dependencies,
 * never a preloaded library): Python loads them RTLD_LOCAL, out of RTLD_NEXT's reach. */
static void *torch_lookup(const char *name, int any_scope)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        struct torch_find f = {name, NULL};
        dl_iterate_phdr(torch_find_in, &f);
        p = f.found;
    }
    /* A getter may live in the executable itself (libtorch linked in with -rdynamic). */
    if (!p && any_scope) p = dlsym(RTLD_DEFAULT, name);
    return p;
}

void *ip_torch_symbol(const char *name)
{
    return torch_lookup(name, 1);
}

/* The real function behind one of our hooks. */
struct torch_real {
    const char *name;
    void *_Atomic fn;
};

static void *torch_real_fn(struct torch_real *r)
{
    void *p = atomic_load_explicit(&r->fn, memory_order_acquire);
    if (!p && (p = torch_lookup(r->name, 0)))
        atomic_store_explicit(&r->fn, p, memory_order_release);
    return p;
}

/* Looked up once libtorch is there (ip_torch_resolve), else on a hook's first call: a CUDA
 * allocator report should not be the one to call the dynamic loader, under the allocator's lock. */
static struct torch_real reals[IP_TORCH_R_COUNT] = {
    [IP_TORCH_R_GRAD_SET] = {IP_TORCH_SYM_GRAD_SET, NULL},
    [IP_TORCH_R_TLS_SET] = {IP_TORCH_SYM_TLS_SET, NULL},
    [IP_TORCH_R_AC_ENABLED] = {IP_TORCH_SYM_AC_ENABLED, NULL},
    [IP_TORCH_R_AC_CPU_ON] = {IP_TORCH_SYM_AC_CPU_ON, NULL},
    [IP_TORCH_R_AC_GPU_DTYPE] = {IP_TORCH_SYM_AC_GPU_DTYPE, NULL},
    [IP_TORCH_R_AC_CPU_DTYPE] = {IP_TORCH_SYM_AC_CPU_DTYPE, NULL},
    [IP_TORCH_R_AC_ENABLED_2X] = {IP_TORCH_SYM_AC_ENABLED_2X, NULL},
    [IP_TORCH_R_AC_DTYPE_2X] = {IP_TORCH_SYM_AC_DTYPE_2X, NULL},
    [IP_TORCH_R_MEMORY_113] = {IP_TORCH_SYM_MEMORY_113, NULL},
    [IP_TORCH_R_MEMORY_2X] = {IP_TORCH_SYM_MEMORY_2X, NULL},
    [IP_TORCH_R_MEMORY_QUERY] = {IP_TORCH_SYM_MEMORY_QUERY, NULL},
    [IP_TORCH_R_CPU_NEW] = {IP_TORCH_SYM_CPU_NEW, NULL},
    [IP_TORCH_R_CPU_DELETE] = {IP_TORCH_SYM_CPU_DELETE, NULL},
    [IP_TORCH_R_DEBUG_PUSH] = {IP_TORCH_SYM_DEBUG_PUSH, NULL},
    [IP_TORCH_R_METHOD] = {IP_TORCH_SYM_METHOD, NULL},
    [IP_TORCH_R_METHOD_OLD] = {IP_TORCH_SYM_METHOD_OLD, NULL},
    [IP_TORCH_R_AOTI_PACKAGE_RUN] = {IP_TORCH_SYM_AOTI_PACKAGE_RUN, NULL},
    [IP_TORCH_R_AOTI_PACKAGE_BOXED] = {IP_TORCH_SYM_AOTI_PACKAGE_BOXED, NULL},
    [IP_TORCH_R_AOTI_RUNNER_RUN] = {IP_TORCH_SYM_AOTI_RUNNER_RUN, NULL},
    [IP_TORCH_R_AOTI_RUNNER_BOXED] = {IP_TORCH_SYM_AOTI_RUNNER_BOXED, NULL},
    [IP_TORCH_R_SET_BENCHMARK] = {IP_TORCH_SYM_SET_BENCHMARK, NULL},
    [IP_TORCH_R_SET_TF32_CUDNN] = {IP_TORCH_SYM_SET_TF32_CUDNN, NULL},
    [IP_TORCH_R_SET_TF32_CUBLAS] = {IP_TORCH_SYM_SET_TF32_CUBLAS, NULL},
    [IP_TORCH_R_SET_MATMUL] = {IP_TORCH_SYM_SET_MATMUL, NULL},
    [IP_TORCH_R_SET_MATMUL_STR] = {IP_TORCH_SYM_SET_MATMUL_STR, NULL},
};

_Atomic int ip_torch_cpumem_mode;
_Atomic int64_t ip_torch_cpumem_total;

void *ip_torch_real(int id)
{
    return torch_real_fn(&reals[id]);
}

/* A hook whose real function cannot be found cannot stand in for it: the program linked against
 * it, so this means a broken installation, and carrying on would change what the program does. */
void *ip_torch_real_or_die(int id)
{
    struct torch_real *r = &reals[id];
    void *p = torch_real_fn(r);
    if (!p) {
        ip_log(IP_LOG_WARN, "cannot find the real %s; aborting", r->name);
        abort();
    }
    return p;
}

/* ---- who called a setter ------------------------------------------------------------------ */

/* libtorch sets grad mode and autocast around its own internals and restores them before it
 * returns: nn modules initialise their parameters under a NoGradGuard, and PyTorch 2.x fills
 * autocast's weight-cast cache with grad mode on, inside a no_grad forward (seen on an H100:
 * four flips to grad mode around the fp16 weight casts of a no_grad/fp16 iteration). Those are
 * not the program's phases. A setter call counts only when it comes from outside libtorch's core
 * libraries: from the program (its guards are inline), libtorch_python (torch.no_grad and the
 * other context managers), or a compiled model's own library. The core's executable segments are
 * listed once libtorch is found. */
#define TORCH_CORE_MAX 32
static const char *const torch_core_libs[] = {
    "libc10.so",   "libc10_cuda.so",          "libtorch_cpu.so",        "libtorch_cuda.so",
    "libtorch.so", "libtorch_cuda_linalg.so", "libtorch_global_deps.so"};
static struct {
    uintptr_t lo, hi;
} core_text[TORCH_CORE_MAX];
static _Atomic int core_n;

static int torch_core_lib(const char *path)
{
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    for (size_t i = 0; base && i < sizeof torch_core_libs / sizeof torch_core_libs[0]; i++)
        if (strncmp(base, torch_core_libs[i], strlen(torch_core_libs[i])) == 0) return 1;
    return 0;
}

static int torch_core_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    if (!torch_core_lib(info->dlpi_name)) return 0;
    int n = atomic_load_explicit(&core_n, memory_order_relaxed);
    for (int i = 0; i < info->dlpi_phnum && n < TORCH_CORE_MAX; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        core_text[n].lo = info->dlpi_addr + ph->p_vaddr;
        core_text[n].hi = core_text[n].lo + ph->p_memsz;
        n++;
    }
    atomic_store_explicit(&core_n, n, memory_order_release);
    return 0;
}

static _Atomic uint64_t internal_calls;

int ip_torch_internal_caller(const void *return_address)
{
    uintptr_t a = (uintptr_t)return_address;
    int n = atomic_load_explicit(&core_n, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        if (a >= core_text[i].lo && a < core_text[i].hi) {
            atomic_fetch_add_explicit(&internal_calls, 1, memory_order_relaxed);
            return 1;
        }
    }
    return 0;
}

uint64_t ip_torch_internal_calls(void)
{
    return atomic_load_explicit(&internal_calls, memory_order_relaxed);
}

/* The getters. All are plain reads of libtorch's thread-local state. */
static struct {
    bool (*grad_is)(void);
    bool (*inference_is)(void);
    bool (*ac_is)(int8_t device_type);            /* 2.4+ */
    int8_t (*ac_dtype)(int8_t device_type);       /* 2.4+ */
    bool (*ac_cuda_is)(void), (*ac_cpu_is)(void); /* 1.13 .. 2.3 */
    int8_t (*ac_cuda_dtype)(void), (*ac_cpu_dtype)(void);
} get;
static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int resolve_misses;

/* Once the getters are all there, never again. A libtorch whose getters cannot be found stays
 * so: after a few misses (the constructor's may come before a late dlopen) hooks stop calling
 * the loader. */
void ip_torch_resolve(void)
{
    if (atomic_load(&resolve_misses) >= 4) return;
    pthread_mutex_lock(&resolve_lock);
    if (atomic_load(&ip_torch_getters_ready)) goto out;
    for (int i = 0; i < IP_TORCH_R_COUNT; i++) torch_real_fn(&reals[i]);
    get.grad_is = (bool (*)(void))torch_lookup("_ZN3c108GradMode10is_enabledEv", 1);
    get.inference_is = (bool (*)(void))torch_lookup("_ZN3c1013InferenceMode10is_enabledEv", 1);
    if (!get.grad_is) {
        atomic_fetch_add(&resolve_misses, 1);
        goto out;
    }
    get.ac_is = (bool (*)(int8_t))torch_lookup(
        "_ZN2at8autocast19is_autocast_enabledEN3c1010DeviceTypeE", 1);
    get.ac_dtype = (int8_t(*)(int8_t))torch_lookup(
        "_ZN2at8autocast18get_autocast_dtypeEN3c1010DeviceTypeE", 1);
    if (!get.ac_is || !get.ac_dtype) {
        get.ac_is = NULL;
        get.ac_dtype = NULL;
        get.ac_cuda_is = (bool (*)(void))torch_lookup("_ZN2at8autocast10is_enabledEv", 1);
        get.ac_cpu_is = (bool (*)(void))torch_lookup("_ZN2at8autocast14is_cpu_enabledEv", 1);
        get.ac_cuda_dtype =
            (int8_t(*)(void))torch_lookup("_ZN2at8autocast22get_autocast_gpu_dtypeEv", 1);
        get.ac_cpu_dtype =
            (int8_t(*)(void))torch_lookup("_ZN2at8autocast22get_autocast_cpu_dtypeEv", 1);
    }
    atomic_store(&core_n, 0);
    dl_iterate_phdr(torch_core_segments, NULL);
    atomic_store(&ip_torch_lib_addr, (void *)get.grad_is);
    ip_torch_seen(IP_TORCH_GRAD_GETTERS | (get.ac_is ? IP_TORCH_AUTOCAST_2X : 0) |
                  (get.ac_cuda_is && get.ac_cpu_is && get.ac_cuda_dtype && get.ac_cpu_dtype
                       ? IP_TORCH_AUTOCAST_113
                       : 0));
    atomic_store(&ip_torch_getters_ready, 1);
    if (ip_cfg_group_int(&ip_torch_cfg, IP_TORCH_CFG_POLL)) ip_phase_poller = ip_torch_poll;
out:
    pthread_mutex_unlock(&resolve_lock);
}

/* ---- the thread's state ------------------------------------------------------------------- */

uint8_t ip_torch_grad_now(void)
{
    if (get.inference_is && get.inference_is()) return IP_INFERENCE_MODE;
    return get.grad_is() ? IP_GRAD : IP_NO_GRAD;
}

/* device_type: c10::DeviceType, 0 CPU, 1 CUDA. */
uint8_t ip_torch_dtype_now(int device_type)
{
    int8_t d = 0;
    if (get.ac_dtype)
        d = get.ac_dtype((int8_t)device_type);
    else if (device_type ? get.ac_cuda_dtype != NULL : get.ac_cpu_dtype != NULL)
        d = device_type ? get.ac_cuda_dtype() : get.ac_cpu_dtype();
    /* libtorch's defaults when it cannot be asked: fp16 on CUDA, bf16 on CPU. */
    if (d <= 0) d = device_type ? IP_DTYPE_HALF : IP_DTYPE_BFLOAT16;
    return (uint8_t)d;
}

/* Autocast as the getters see it now: exact outside ops only (IP_POLL_SAFE). */
static uint8_t torch_autocast_now(int device_type, uint8_t shadow)
{
    int on;
    if (get.ac_is)
        on = get.ac_is((int8_t)device_type);
    else if (device_type ? get.ac_cuda_is != NULL : get.ac_cpu_is != NULL)
        on = device_type ? get.ac_cuda_is() : get.ac_cpu_is();
    else
        return shadow;
    return on ? ip_torch_dtype_now(device_type) : 0;
}

/* A thread that leaves with a phase closes its span and its NVTX range (an exited worker must
 * not hold a phase open until the end of the run). The key is created in the constructor, before
 * the ring's, so this destructor runs while the thread's ring still exists. */
static pthread_key_t exit_key;
static int exit_key_ok;
static __thread uint8_t exit_armed __attribute__((tls_model("initial-exec")));

static void (*_Atomic on_phase_changed)(void), (*_Atomic on_thread_exit)(void);

void ip_torch_state_observe(void (*phase_changed)(void), void (*thread_exit)(void))
{
    atomic_store(&on_phase_changed, phase_changed);
    atomic_store(&on_thread_exit, thread_exit);
}

static void torch_thread_exit(void *arg)
{
    (void)arg;
    exit_armed = 0;
    if (!ip_active() || !ip_hook_enter()) return;
    void (*fn)(void) = atomic_load_explicit(&on_thread_exit, memory_order_relaxed);
    if (fn) fn();
    ip_phase_emit_end();
    if (ip_self.ring) ip_phase_leave();
    ip_hook_leave();
}

/* safe: pthread_setspecific may allocate for a key past the first 32; only where that is
 * allowed (not under the CUDA allocator's lock). */
static void torch_arm_exit(int safe)
{
    if (exit_armed || !exit_key_ok || !ip_self.phase) return;
    if (!safe && exit_key >= 32) return;
    if (pthread_setspecific(exit_key, (void *)1) == 0) exit_armed = 1;
}

void ip_torch_note(uint8_t grad, uint8_t cuda_ac, uint8_t cpu_ac, int safe)
{
    uint8_t before = ip_self.phase;
    ip_phase_set(grad, cuda_ac, cpu_ac);
    if (ip_self.phase != before) {
        void (*fn)(void) = atomic_load_explicit(&on_phase_changed, memory_order_relaxed);
        if (fn) fn(); /* torch_memfold.c: a fold ends with its phase */
    }
    torch_arm_exit(safe);
}

/* The phase poller (phase.h), installed once the getters are found and INFPROF_POLL=1. Runs
 * inside the caller's re-entrancy guard. Inside an op (IP_POLL_LAUNCH) the autocast getters read
 * false, so only the grad mode is taken there and the shadow stays. */
void ip_torch_poll(int where)
{
    if (!ip_torch_ready(0)) return;
    /* Inside an op, once the program's setters are seen, they have said it all: a launch may
     * come inside one of libtorch's own guards (see ip_torch_internal_caller). A thread's first
     * phase still comes from here. */
    if (where == IP_POLL_LAUNCH && ip_self.phase &&
        (atomic_load_explicit(&ip_torch_found, memory_order_relaxed) &
         (IP_TORCH_SEEN_GRAD_SET | IP_TORCH_SEEN_TLS_SET)))
        return;
    uint8_t cuda = ip_self.cuda_ac, cpu = ip_self.cpu_ac;
    if (where == IP_POLL_SAFE) {
        cuda = torch_autocast_now(1, cuda);
        cpu = torch_autocast_now(0, cpu);
    }
    ip_torch_note(ip_torch_grad_now(), cuda, cpu, where == IP_POLL_SAFE);
}

void ip_torch_state_init(void)
{
    /* Before any ring exists, so that its destructor runs before the ring's (keys in order). */
    exit_key_ok = pthread_key_create(&exit_key, torch_thread_exit) == 0;
}

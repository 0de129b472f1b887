/*
 * torch_internal.h: what the libtorch collector's files share: the symbols it interposes, its
 * ring events, the bits that say which parts of the libtorch API were found, and the entry
 * points each file offers the others.
 *
 *   torch.c         app side: the hooks (setters, allocator reports, TorchScript calls)
 *   torch_state.c   app side: finding libtorch, its getters, the thread's state, the poller
 *   torch_ingest.c  writer side: rows, the run metadata (torch_api, collector status)
 */
#ifndef INFPROF_TORCH_INTERNAL_H
#define INFPROF_TORCH_INTERNAL_H

#include "../profiler/events.h"

#include <stdatomic.h>
#include <stdint.h>

struct ip_store;

/* What we interpose, by linkage name (design.md sections 2 and 3). */
/* clang-format off */
#define IP_TORCH_SYM_GRAD_SET      "_ZN3c108GradMode11set_enabledEb"
#define IP_TORCH_SYM_TLS_SET       "_ZN3c1013AutogradState13set_tls_stateES0_"
#define IP_TORCH_SYM_AC_ENABLED    "_ZN2at8autocast11set_enabledEb"
#define IP_TORCH_SYM_AC_CPU_ON     "_ZN2at8autocast15set_cpu_enabledEb"
#define IP_TORCH_SYM_AC_GPU_DTYPE  "_ZN2at8autocast22set_autocast_gpu_dtypeEN3c1010ScalarTypeE"
#define IP_TORCH_SYM_AC_CPU_DTYPE  "_ZN2at8autocast22set_autocast_cpu_dtypeEN3c1010ScalarTypeE"
#define IP_TORCH_SYM_AC_ENABLED_2X "_ZN2at8autocast20set_autocast_enabledEN3c1010DeviceTypeEb"
#define IP_TORCH_SYM_AC_DTYPE_2X                                                                   \
    "_ZN2at8autocast18set_autocast_dtypeEN3c1010DeviceTypeENS1_10ScalarTypeE"
#define IP_TORCH_SYM_MEMORY_113    "_ZN3c1027reportMemoryUsageToProfilerEPvlllNS_6DeviceE"
#define IP_TORCH_SYM_MEMORY_2X     "_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE"
#define IP_TORCH_SYM_MEMORY_QUERY  "_ZN3c1022memoryProfilingEnabledEv"
/* torch::jit::Method::operator()(std::vector<IValue>, const Kwargs &) const, with std::string in
 * the C++11 ABI (Debian, PyTorch 2.7+ wheels) and in the old one. */
#define IP_TORCH_SYM_METHOD                                                                        \
    "_ZNK5torch3jit6MethodclESt6vectorIN3c106IValueESaIS4_EERKSt13unordered_map"                   \
    "INSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES4_St4hashISD_ESt8equal_toISD_E"         \
    "SaISt4pairIKSD_S4_EEE"
#define IP_TORCH_SYM_METHOD_OLD                                                                    \
    "_ZNK5torch3jit6MethodclESt6vectorIN3c106IValueESaIS4_EERKSt13unordered_map"                   \
    "ISsS4_St4hashISsESt8equal_toISsESaISt4pairIKSsS4_EEE"

/* Index of each in the table of real functions (torch_state.c). */
enum {
    IP_TORCH_R_GRAD_SET, IP_TORCH_R_TLS_SET, IP_TORCH_R_AC_ENABLED, IP_TORCH_R_AC_CPU_ON,
    IP_TORCH_R_AC_GPU_DTYPE, IP_TORCH_R_AC_CPU_DTYPE, IP_TORCH_R_AC_ENABLED_2X,
    IP_TORCH_R_AC_DTYPE_2X, IP_TORCH_R_MEMORY_113, IP_TORCH_R_MEMORY_2X, IP_TORCH_R_MEMORY_QUERY,
    IP_TORCH_R_METHOD, IP_TORCH_R_METHOD_OLD, IP_TORCH_R_COUNT
};
/* clang-format on */

enum { IP_EV_TORCH_MEMORY = 1, IP_EV_TORCH_ITERATION = 2 };

/* One allocator report (c10::reportMemoryUsageToProfiler). aux: phase of the calling thread. */
struct ip_ev_torch_memory {
    struct ip_ev h;
    uint64_t ts;
    uint64_t ptr;
    int64_t bytes;     /* > 0 allocation, < 0 free */
    int64_t allocated; /* the allocator's totals after the event */
    int64_t reserved;
    int8_t device_type, device_index; /* c10::Device */
    uint8_t pad[6];
};

/* One outermost TorchScript Method call that returned (an exception is no iteration). */
struct ip_ev_torch_iteration {
    struct ip_ev h;
    uint64_t start, end;
    uint64_t nvtx; /* innermost NVTX push/pop range of the thread at the call, 0 none */
};

/* What was found or seen, set once by the app side, read by the writer (torch_api, status). */
enum {
    IP_TORCH_ON = 1u << 0,           /* INFPROF_TORCH=1 and the pipeline started */
    IP_TORCH_GRAD_GETTERS = 1u << 1, /* GradMode/InferenceMode::is_enabled resolved */
    IP_TORCH_AUTOCAST_2X = 1u << 2,  /* is_autocast_enabled(DeviceType) (2.4+) resolved */
    IP_TORCH_AUTOCAST_113 = 1u << 3, /* is_enabled()/is_cpu_enabled() (1.13 .. 2.3) resolved */
    IP_TORCH_CPU_MEMORY = 1u << 4,   /* memoryProfilingEnabled() answers true for us */
    IP_TORCH_SEEN_GRAD_SET = 1u << 5,
    IP_TORCH_SEEN_TLS_SET = 1u << 6,
    IP_TORCH_SEEN_AC_SET_113 = 1u << 7,
    IP_TORCH_SEEN_AC_SET_2X = 1u << 8,
    IP_TORCH_SEEN_MEMORY_113 = 1u << 9, /* reportMemoryUsageToProfiler(void*, l, l, l, Device) */
    IP_TORCH_SEEN_MEMORY_2X = 1u << 10, /* reportMemoryUsageToProfiler(void*, l, m, m, Device) */
    IP_TORCH_SEEN_JIT = 1u << 11,       /* Method::operator() (C++11 std::string ABI) */
    IP_TORCH_SEEN_JIT_OLD = 1u << 12,   /* Method::operator() (pre-C++11 std::string ABI) */
};
extern _Atomic uint32_t ip_torch_found;
/* An address inside the library the getters came from (writer: dladdr for its path). */
extern void *_Atomic ip_torch_lib_addr;

static inline void ip_torch_seen(uint32_t bit)
{
    if (!(atomic_load_explicit(&ip_torch_found, memory_order_relaxed) & bit))
        atomic_fetch_or(&ip_torch_found, bit);
}

/* ---- torch_state.c (app side) ---- */

/* The real function behind hook `id` (R_*), looked up on first use; NULL if there is none. */
void *ip_torch_real(int id);
/* The same for a hook that cannot stand in for the real one: aborts, logged, if there is none. */
void *ip_torch_real_or_die(int id);
/* Look libtorch up (its getters, every real function). Only where calling the dynamic loader is
 * safe: the constructor, setters, TorchScript calls, CPU allocator reports. */
void ip_torch_resolve(void);
extern _Atomic int ip_torch_getters_ready;
/* The getters are there (resolving first when may_resolve). */
static inline int ip_torch_ready(int may_resolve)
{
    if (atomic_load_explicit(&ip_torch_getters_ready, memory_order_acquire)) return 1;
    if (may_resolve) ip_torch_resolve();
    return atomic_load_explicit(&ip_torch_getters_ready, memory_order_acquire);
}
/* The setter was called from libtorch's own code (a guard around its internals), not by the
 * program: it does not change the phase. Counted (ip_torch_internal_calls). */
int ip_torch_internal_caller(const void *return_address);
uint64_t ip_torch_internal_calls(void);
/* The thread's grad mode (IP_GRAD...) and autocast dtype for a device type (0 CPU, 1 CUDA) as
 * libtorch's getters say now. Only once ip_torch_ready(). */
uint8_t ip_torch_grad_now(void);
uint8_t ip_torch_dtype_now(int device_type);
/* Report the thread's state (ip_phase_set) and make sure its span closes when it exits. safe:
 * pthread_setspecific may be called (not under the CUDA allocator's lock). */
void ip_torch_note(uint8_t grad, uint8_t cuda_ac, uint8_t cpu_ac, int safe);
/* The phase poller (phase.h). */
void ip_torch_poll(int where);
/* Constructor: the thread-exit handler, before any ring exists. */
void ip_torch_state_init(void);

/* ---- torch_ingest.c (writer side) ---- */

void ip_torch_ingest_prepare(struct ip_store *s);
void ip_torch_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
void ip_torch_ingest_flush(struct ip_store *s, int final);
void ip_torch_ingest_finish(struct ip_store *s);

#endif

/*
 * torch_symbols.h: what the libtorch collector interposes, by linkage name (docs/libtorch.md):
 * torch.c declares each hook under its name, torch_state.c finds the real function behind it.
 */
#ifndef INFPROF_TORCH_SYMBOLS_H
#define INFPROF_TORCH_SYMBOLS_H

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
/* c10::ProfiledCPUMemoryReporter::New(void *, size_t) and ::Delete(void *) (torch_cpumem.c). */
#define IP_TORCH_SYM_CPU_NEW       "_ZN3c1025ProfiledCPUMemoryReporter3NewEPvm"
#define IP_TORCH_SYM_CPU_DELETE    "_ZN3c1025ProfiledCPUMemoryReporter6DeleteEPv"
/* c10::ThreadLocalDebugInfo::_push(DebugInfoKind, std::shared_ptr<DebugInfoBase>): how
 * torch.profiler puts its state on a thread (torch_cpumem.c). */
#define IP_TORCH_SYM_DEBUG_PUSH                                                                   \
    "_ZN3c1020ThreadLocalDebugInfo5_pushENS_13DebugInfoKindESt10shared_ptrINS_13DebugInfoBaseEE"
/* torch::jit::Method::operator()(std::vector<IValue>, const Kwargs &) const, with std::string in
 * the C++11 ABI (Debian, PyTorch 2.7+ wheels) and in the old one. */
#define IP_TORCH_SYM_METHOD                                                                        \
    "_ZNK5torch3jit6MethodclESt6vectorIN3c106IValueESaIS4_EERKSt13unordered_map"                   \
    "INSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES4_St4hashISD_ESt8equal_toISD_E"         \
    "SaISt4pairIKSD_S4_EEE"
#define IP_TORCH_SYM_METHOD_OLD                                                                    \
    "_ZNK5torch3jit6MethodclESt6vectorIN3c106IValueESaIS4_EERKSt13unordered_map"                   \
    "ISsS4_St4hashISsESt8equal_toISsESaISt4pairIKSsS4_EEE"
/* torch::inductor::AOTIModelPackageLoader and AOTIModelContainerRunner: run(const
 * std::vector<at::Tensor>&, void *stream) and boxed_run(std::vector<at::Tensor>&&, void *). */
#define IP_TORCH_SYM_AOTI_PACKAGE_RUN                                                              \
    "_ZN5torch8inductor22AOTIModelPackageLoader3runERKSt6vectorIN2at6TensorESaIS4_EEPv"
#define IP_TORCH_SYM_AOTI_PACKAGE_BOXED                                                            \
    "_ZN5torch8inductor22AOTIModelPackageLoader9boxed_runEOSt6vectorIN2at6TensorESaIS4_EEPv"
#define IP_TORCH_SYM_AOTI_RUNNER_RUN                                                               \
    "_ZN5torch8inductor24AOTIModelContainerRunner3runERKSt6vectorIN2at6TensorESaIS4_EEPv"
#define IP_TORCH_SYM_AOTI_RUNNER_BOXED                                                             \
    "_ZN5torch8inductor24AOTIModelContainerRunner9boxed_runEOSt6vectorIN2at6TensorESaIS4_EEPv"
/* at::Context's setters of the settings a series is told apart by (torch_settings.c): member
 * functions, `this` first; the string overload with std::string in the C++11 ABI only. */
#define IP_TORCH_SYM_SET_BENCHMARK  "_ZN2at7Context17setBenchmarkCuDNNEb"
#define IP_TORCH_SYM_SET_TF32_CUDNN "_ZN2at7Context17setAllowTF32CuDNNEb"
#define IP_TORCH_SYM_SET_TF32_CUBLAS "_ZN2at7Context18setAllowTF32CuBLASEb"
#define IP_TORCH_SYM_SET_MATMUL                                                                    \
    "_ZN2at7Context25setFloat32MatmulPrecisionENS_22Float32MatmulPrecisionE"
#define IP_TORCH_SYM_SET_MATMUL_STR                                                                \
    "_ZN2at7Context25setFloat32MatmulPrecisionERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
/* clang-format on */

/* A hook's linkage name: `void hook(bool) IP_TORCH_LINKAGE(GRAD_SET);` makes the function
 * interpose c10::GradMode::set_enabled (torch.c). */
#define IP_TORCH_LINKAGE(id) __asm__(IP_TORCH_SYM_##id)

/* Index of each in the table of real functions (torch_state.c). */
enum {
    IP_TORCH_R_GRAD_SET,
    IP_TORCH_R_TLS_SET,
    IP_TORCH_R_AC_ENABLED,
    IP_TORCH_R_AC_CPU_ON,
    IP_TORCH_R_AC_GPU_DTYPE,
    IP_TORCH_R_AC_CPU_DTYPE,
    IP_TORCH_R_AC_ENABLED_2X,
    IP_TORCH_R_AC_DTYPE_2X,
    IP_TORCH_R_MEMORY_113,
    IP_TORCH_R_MEMORY_2X,
    IP_TORCH_R_MEMORY_QUERY,
    IP_TORCH_R_CPU_NEW,
    IP_TORCH_R_CPU_DELETE,
    IP_TORCH_R_DEBUG_PUSH,
    IP_TORCH_R_METHOD,
    IP_TORCH_R_METHOD_OLD,
    IP_TORCH_R_AOTI_PACKAGE_RUN,
    IP_TORCH_R_AOTI_PACKAGE_BOXED,
    IP_TORCH_R_AOTI_RUNNER_RUN,
    IP_TORCH_R_AOTI_RUNNER_BOXED,
    IP_TORCH_R_SET_BENCHMARK,
    IP_TORCH_R_SET_TF32_CUDNN,
    IP_TORCH_R_SET_TF32_CUBLAS,
    IP_TORCH_R_SET_MATMUL,
    IP_TORCH_R_SET_MATMUL_STR,
    IP_TORCH_R_COUNT
};

#endif

// torch_compat.h: the one place where the programs built against libtorch (the samples, the
// torch test programs, the hook benchmark) meet the two libtorch generations they are built
// against: Debian's 1.13 (CI, CPU) and PyTorch 2.4+ (GPU machines). Their autocast API differs:
// 2.4 added calls that take a device type and 2.x deprecates the 1.13 per-device calls. The
// choice is made by libtorch's own version macros, never by silencing deprecation warnings, so
// each world compiles the calls it supports and our hooks see the names that world exports.
// CI compiles these programs against both (tests/build/torch2x marks the 1.13 calls deprecated).
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#define INFPROF_TORCH_2_4                                                                          \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

namespace torch_compat
{

// cuda: CUDA autocast, else CPU autocast.
inline void set_autocast_enabled(bool cuda, bool on)
{
#if INFPROF_TORCH_2_4
    at::autocast::set_autocast_enabled(cuda ? at::kCUDA : at::kCPU, on);
#else
    if (cuda)
        at::autocast::set_enabled(on);
    else
        at::autocast::set_cpu_enabled(on);
#endif
}

inline void set_autocast_dtype(bool cuda, at::ScalarType dtype)
{
#if INFPROF_TORCH_2_4
    at::autocast::set_autocast_dtype(cuda ? at::kCUDA : at::kCPU, dtype);
#else
    if (cuda)
        at::autocast::set_autocast_gpu_dtype(dtype);
    else
        at::autocast::set_autocast_cpu_dtype(dtype);
#endif
}

inline bool is_autocast_enabled(bool cuda)
{
#if INFPROF_TORCH_2_4
    return at::autocast::is_autocast_enabled(cuda ? at::kCUDA : at::kCPU);
#else
    return cuda ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline at::ScalarType get_autocast_dtype(bool cuda)
{
#if INFPROF_TORCH_2_4
    return at::autocast::get_autocast_dtype(cuda ? at::kCUDA : at::kCPU);
#else
    return cuda ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
}

} // namespace torch_compat

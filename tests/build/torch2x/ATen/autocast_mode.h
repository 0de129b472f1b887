// tests/build/torch2x: libtorch 1.13's autocast API as PyTorch 2.x presents it: the DeviceType
// calls added in 2.4, and the 1.13 per-device calls marked deprecated (2.x deprecates them, and
// -Werror turns a use into a build failure, as on a GPU machine). Compile only.
#pragma once
#include_next <ATen/autocast_mode.h>

namespace at
{
namespace autocast
{
TORCH_API bool is_autocast_enabled(at::DeviceType device_type);
TORCH_API void set_autocast_enabled(at::DeviceType device_type, bool enabled);
TORCH_API at::ScalarType get_autocast_dtype(at::DeviceType device_type);
TORCH_API void set_autocast_dtype(at::DeviceType device_type, at::ScalarType dtype);

#define INFPROF_DEPRECATED_113(use) [[deprecated("deprecated in PyTorch 2.x: use " use)]]
INFPROF_DEPRECATED_113("is_autocast_enabled(at::kCUDA)") TORCH_API bool is_enabled();
INFPROF_DEPRECATED_113("set_autocast_enabled(at::kCUDA, enabled)")
TORCH_API void set_enabled(bool enabled);
INFPROF_DEPRECATED_113("is_autocast_enabled(at::kCPU)") TORCH_API bool is_cpu_enabled();
INFPROF_DEPRECATED_113("set_autocast_enabled(at::kCPU, enabled)")
TORCH_API void set_cpu_enabled(bool enabled);
INFPROF_DEPRECATED_113("get_autocast_dtype(at::kCUDA)")
TORCH_API at::ScalarType get_autocast_gpu_dtype();
INFPROF_DEPRECATED_113("get_autocast_dtype(at::kCPU)")
TORCH_API at::ScalarType get_autocast_cpu_dtype();
INFPROF_DEPRECATED_113("set_autocast_dtype(at::kCUDA, dtype)")
TORCH_API void set_autocast_gpu_dtype(at::ScalarType dtype);
INFPROF_DEPRECATED_113("set_autocast_dtype(at::kCPU, dtype)")
TORCH_API void set_autocast_cpu_dtype(at::ScalarType dtype);
#undef INFPROF_DEPRECATED_113
} // namespace autocast
} // namespace at

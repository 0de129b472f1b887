// common.h: what the two libtorch samples share: their command-line flags, the phases they run
// (grad mode x autocast), and the reference figures they print for each phase, which the tests
// hold infprof's numbers against:
//
//   ref {"phase": "no_grad | autocast bf16", "grad_mode": "no_grad", "autocast": "bf16",
//        "iterations": 20, "p50_ms": 1.234, "mean_ms": 1.301, "max_memory_allocated": 123456}
//
// An iteration is one forward call, timed on the host around the call (and a device
// synchronisation on CUDA). max_memory_allocated is the CUDA caching allocator's peak for the
// phase, reset when the phase starts (what torch.cuda.max_memory_allocated() would say); null
// on CPU. Builds against Debian's libtorch 1.13 (CPU) and PyTorch 2.x's libtorch (CUDA).
#pragma once

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/version.h>
#if INFPROF_SAMPLE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif
#include <nvtx3/nvToolsExt.h>

#include "torch_compat.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sample
{

inline const char *grad_names[] = {"grad", "no_grad", "inference_mode"};
inline const char *autocast_names[] = {"off", "fp16", "bf16"};

struct Options {
    std::string device = "cpu";
    int64_t batch = 8;
    int iters = 10;
    std::vector<int> modes = {0, 1, 2};
    std::vector<int> precisions; // empty: all the device supports
    bool eval = true;
    bool channels_last = false;
    bool cudnn_benchmark = false;
    int threads = 0; // 0: libtorch's default
};

[[noreturn]] inline void usage(const char *prog, const char *extra)
{
    std::fprintf(stderr,
                 "usage: %s %s[--device cpu|cuda] [--batch N] [--iters N]\n"
                 "       [--modes grad,no_grad,inference_mode] [--precisions off,fp16,bf16]\n"
                 "       [--no-eval] [--channels-last] [--cudnn-benchmark] [--threads N]\n",
                 prog, extra);
    std::exit(2);
}

inline std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

inline int index_of(const char *const *names, int n, const std::string &s)
{
    for (int i = 0; i < n; i++)
        if (s == names[i]) return i;
    return -1;
}

// Parses the shared flags; `extra(flag, value)` gets the others and says whether it took them.
inline Options parse(int argc, char **argv, const char *extra_usage,
                     const std::function<bool(const std::string &, const char *)> &extra)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string f = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto need = [&]() {
            if (!v) usage(argv[0], extra_usage);
            i++;
            return std::string(v);
        };
        if (f == "--device") {
            o.device = need();
        } else if (f == "--batch") {
            o.batch = std::atol(need().c_str());
        } else if (f == "--iters") {
            o.iters = std::atoi(need().c_str());
        } else if (f == "--threads") {
            o.threads = std::atoi(need().c_str());
        } else if (f == "--modes") {
            o.modes.clear();
            for (auto &m : split(need(), ',')) {
                int k = index_of(grad_names, 3, m);
                if (k < 0) usage(argv[0], extra_usage);
                o.modes.push_back(k);
            }
        } else if (f == "--precisions") {
            o.precisions.clear();
            for (auto &p : split(need(), ',')) {
                int k = index_of(autocast_names, 3, p);
                if (k < 0) usage(argv[0], extra_usage);
                o.precisions.push_back(k);
            }
        } else if (f == "--no-eval") {
            o.eval = false;
        } else if (f == "--channels-last") {
            o.channels_last = true;
        } else if (f == "--cudnn-benchmark") {
            o.cudnn_benchmark = true;
        } else if (v && extra(f, v)) {
            i++;
        } else {
            usage(argv[0], extra_usage);
        }
    }
    if (o.device != "cpu" && o.device != "cuda") usage(argv[0], extra_usage);
    if (o.batch <= 0 || o.iters <= 0) usage(argv[0], extra_usage);
    return o;
}

inline bool cuda(const Options &o)
{
    return o.device == "cuda";
}

// Autocast as Python's torch.autocast does it: dtype, enable, nesting; the cast cache cleared
// when the outermost region ends.
class Autocast
{
  public:
    Autocast(bool on_cuda, int precision) : cuda_(on_cuda), on_(precision != 0)
    {
        if (!on_) return;
        at::ScalarType dtype = precision == 1 ? at::kHalf : at::kBFloat16;
        prev_dtype_ = torch_compat::get_autocast_dtype(cuda_);
        prev_on_ = torch_compat::is_autocast_enabled(cuda_);
        torch_compat::set_autocast_dtype(cuda_, dtype);
        torch_compat::set_autocast_enabled(cuda_, true);
        at::autocast::increment_nesting();
    }
    ~Autocast()
    {
        if (!on_) return;
        if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
        torch_compat::set_autocast_enabled(cuda_, prev_on_);
        torch_compat::set_autocast_dtype(cuda_, prev_dtype_);
    }
    Autocast(const Autocast &) = delete;
    Autocast &operator=(const Autocast &) = delete;

  private:
    bool cuda_, on_, prev_on_ = false;
    at::ScalarType prev_dtype_ = at::kFloat;
};

// The grad mode of one phase, held for its lifetime: nothing, NoGradGuard or InferenceMode.
class GradMode
{
  public:
    explicit GradMode(int mode)
    {
        if (mode == 1) no_grad_ = std::make_unique<c10::NoGradGuard>();
        if (mode == 2) inference_ = std::make_unique<c10::InferenceMode>();
    }

  private:
    std::unique_ptr<c10::NoGradGuard> no_grad_;
    std::unique_ptr<c10::InferenceMode> inference_;
};

inline void synchronize(const Options &o)
{
    if (cuda(o)) torch::cuda::synchronize();
}

inline void reset_peak(const Options &o)
{
#if INFPROF_SAMPLE_CUDA
    if (cuda(o)) c10::cuda::CUDACachingAllocator::resetPeakStats(0);
#else
    (void)o;
#endif
}

// The CUDA caching allocator's peak allocated bytes since the last reset (aggregate pool: index
// 0 of its StatType), or -1 where there is none.
inline int64_t peak_allocated(const Options &o)
{
#if INFPROF_SAMPLE_CUDA
    if (cuda(o)) return c10::cuda::CUDACachingAllocator::getDeviceStats(0).allocated_bytes[0].peak;
#else
    (void)o;
#endif
    return -1;
}

// Precisions to run: those asked for, else all the device supports (a bf16 probe decides on CUDA;
// CPU autocast supports bf16 only).
inline std::vector<int> precisions(const Options &o)
{
    if (!o.precisions.empty()) return o.precisions;
    if (!cuda(o)) return {0, 2};
    std::vector<int> p = {0, 1};
    try {
        auto a =
            torch::ones({8, 8}, torch::TensorOptions().device(torch::kCUDA).dtype(at::kBFloat16));
        (void)torch::matmul(a, a).sum().item<float>();
        p.push_back(2);
    } catch (const std::exception &) {
    }
    return p;
}

// Runs `forward` o.iters times in every phase asked for and prints each phase's reference line.
// `nvtx_iterations`: wrap each call in an NVTX range named "iteration batch=N" (eager programs
// mark their iterations so; TorchScript calls are seen by infprof on their own). `end` runs at
// the end of each phase, still inside it (drop the outputs: the next phase starts clean).
// `release`, when given, runs before each iteration, untimed (drop the previous output, whose
// autograd graph would otherwise be freed inside the timed interval but outside the forward call
// that infprof times).
inline void run_phases(const Options &o, bool nvtx_iterations, const std::function<void()> &forward,
                       const std::function<void()> &end,
                       const std::function<void()> &release = nullptr)
{
    std::vector<int> precs = precisions(o);
    char label[96], range[64];
    std::snprintf(range, sizeof range, "iteration batch=%lld", (long long)o.batch);
    for (int mode : o.modes) {
        for (int prec : precs) {
            std::snprintf(label, sizeof label, "%s | autocast %s", grad_names[mode],
                          autocast_names[prec]);
            std::vector<double> ms;
            int64_t peak;
            {
                GradMode grad(mode);
                Autocast autocast(cuda(o), prec);
                nvtxRangePushA(label);
                synchronize(o);
                reset_peak(o);
                for (int i = 0; i < o.iters; i++) {
                    if (release) release();
                    if (nvtx_iterations) nvtxRangePushA(range);
                    auto t0 = std::chrono::steady_clock::now();
                    forward();
                    synchronize(o);
                    auto t1 = std::chrono::steady_clock::now();
                    if (nvtx_iterations) nvtxRangePop();
                    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
                }
                end();
                peak = peak_allocated(o);
                nvtxRangePop();
            }
            std::vector<double> sorted = ms;
            std::sort(sorted.begin(), sorted.end());
            double sum = 0;
            for (double v : ms) sum += v;
            char peak_text[32] = "null";
            if (peak >= 0) std::snprintf(peak_text, sizeof peak_text, "%lld", (long long)peak);
            // The lower median, as infprof's p50 is a value of the sample.
            std::printf("ref {\"phase\": \"%s\", \"grad_mode\": \"%s\", \"autocast\": \"%s\", "
                        "\"iterations\": %d, \"p50_ms\": %.4f, \"mean_ms\": %.4f, "
                        "\"max_memory_allocated\": %s}\n",
                        label, grad_names[mode], autocast_names[prec], (int)ms.size(),
                        sorted[(sorted.size() - 1) / 2], sum / (double)ms.size(), peak_text);
            std::fflush(stdout);
        }
    }
}

inline torch::Device device_of(const Options &o)
{
    return cuda(o) ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
}

inline void setup(const Options &o)
{
    if (cuda(o) && !torch::cuda::is_available()) {
        std::fprintf(stderr, "sample: --device cuda but CUDA is not available\n");
        std::exit(1);
    }
    if (o.threads > 0) at::set_num_threads(o.threads);
    if (o.cudnn_benchmark) at::globalContext().setBenchmarkCuDNN(true);
    torch::manual_seed(0);
}

} // namespace sample

// torch_modes.cpp: a libtorch program whose phases and tensor memory are known exactly, for the
// torch tests. Each phase holds one uint8 tensor of a size that names it, freed before the phase
// ends, so a phase's peak allocated CPU memory is exactly that size. Output is deterministic (no
// times, no addresses), so runs with and without infprof can be compared byte for byte.
//
//   torch_modes sequence   grad, no_grad, inference_mode, each with CPU autocast off and bf16,
//                          then CUDA autocast fp16 and bf16 (the flag needs no GPU)
//   torch_modes nested     NoGradGuard inside InferenceMode, autocast inside no_grad
//   torch_modes threads    two threads in different modes at the same time, then the main
//                          thread alone
//   torch_modes jit N      a TorchScript module's forward, N calls in each grad mode; one call
//                          in three raises and is caught
//   torch_modes prealloc   a tensor allocated at static initialisation, freed at exit
//   torch_modes burst T N [nvtx]
//                          T threads at once, each N allocator reports pairs (a 256-byte tensor
//                          made and freed), switching between grad and no_grad every 100, and
//                          with nvtx an NVTX range around each: the event path under load
//   torch_modes timed      iterations of known length (NVTX ranges "iteration"): grad 3 x 150 ms
//                          warm-up then 20 x 50 ms, no_grad 2 x 110 ms then 20 x 37.5 ms,
//                          inference_mode 1 x 100 ms then 20 x 31.25 ms; prints each phase's
//                          iteration times by its own clock, "timed grad ns ..."
//   torch_modes internal   nn::Linear modules built in grad mode and in inference mode: libtorch
//                          initialises their weights under its own NoGradGuard (in
//                          libtorch_cpu), which is not a phase of the program
//   torch_modes scopes     record_function user scopes: grad 3 named "iteration batch=4" (each
//                          holding an "inner" scope), no_grad 2, and 2 named "other"
//   torch_modes unmarked [N]
//                          a torch::nn module called N times with no mark in no_grad, then in
//                          inference_mode; prints each call's time by the program's own timer
//   torch_modes rounds [R N W]
//                          a torch::nn module (W wide, default 256) called in R rounds (default
//                          2) of N calls (default 1000) under no_grad, each round with a fresh
//                          input of the same shape; prints each round's call times, "roundK ..."
//   torch_modes workers [T N W [other]]
//                          T threads (default 2) at once, each its own torch::nn module (W wide,
//                          default 128) called N times (default 600) under no_grad with no mark,
//                          as a server's workers run one model (with other, thread K's is
//                          (K + 1) W wide: a model of its own); prints each thread's call times,
//                          "workerK ..."
//   torch_modes batches [N W B [cyclic|random|mixed|conv|deep|every10]]
//                          a torch::nn module (W wide, default 128) called N times (default
//                          2000) under no_grad with no mark, each call on a fresh input of batch
//                          1, 2, ... B (default 8) in turn (cyclic), or drawn at random in 1 .. B
//                          (a fixed seed): a server's requests as they come; with mixed, half the
//                          requests at random also go through one more layer (another model);
//                          conv: two Conv2d layers on 16x16 images at random batches (batch 1
//                          takes another path); deep: 16 alike Linear + ReLU layers at random
//                          batches; every10: batch B but every 10th call batch 1; prints each
//                          call's time (its input made too), "batches ..."
//   torch_modes series     two TorchScript modules in inference_mode, each call in an NVTX range
//                          "iteration small" / "iteration big" (8 calls each), then cudnn.benchmark
//                          turned on and "small" 8 more times; the float32 matmul precision set
//                          to "high" first: three series, one setting constant
//   torch_modes window [N] [unmarked]
//                          a torch::nn model in inference_mode, N calls (default 80), each in an
//                          NVTX range "iteration" (none with unmarked); calls 20-39 and 60-79
//                          inside an NVTX range "capture" (recording windows under
//                          INFPROF_CAPTURE_RANGE=nvtx:capture); prints each call's time by the
//                          program's own timer: "own I NS"
//   torch_modes loose N    N iterations in no_grad, each an NVTX start/end range "iteration"
//                          begun here and ended on another thread, holding a tensor of
//                          (i + 1) x 64 KiB at its middle: nothing may stay open on this thread
//                          for ever (a fold of the allocator's reports would take every later
//                          one); then 1 MiB outside every iteration
//   torch_modes exitthreads
//                          main returns while four threads still make and free CPU tensors: the
//                          static destructors run under them (libtorch must print nothing)
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/nn/modules/linear.h>
#include <torch/script.h>

#include <nvtx3/nvToolsExt.h>

#include "samples/torch_compat.h"

#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <memory>

static void hold(const char *what, int64_t bytes)
{
    at::Tensor t = at::empty({bytes}, at::TensorOptions().dtype(at::kByte));
    t.fill_(1);
    std::printf("%s: held %lld bytes\n", what, (long long)t.numel());
}

// CPU autocast on with `dtype` for the lifetime of the object.
struct CpuAutocast {
    explicit CpuAutocast(at::ScalarType dtype)
    {
        torch_compat::set_autocast_dtype(false, dtype);
        torch_compat::set_autocast_enabled(false, true);
    }
    ~CpuAutocast()
    {
        torch_compat::set_autocast_enabled(false, false);
        torch_compat::set_autocast_dtype(false, at::kBFloat16);
    }
};

static int sequence()
{
    hold("grad | autocast off", 1000000);
    {
        CpuAutocast ac(at::kBFloat16);
        // An autocast-wrapped op: its output is bf16, and inside it the getters read false.
        at::Tensor a = at::ones({4, 4});
        std::printf("matmul under autocast: %s\n", c10::toString(at::mm(a, a).scalar_type()));
        hold("grad | autocast bf16", 2000000);
    }
    {
        c10::AutoGradMode no_grad(false);
        hold("no_grad | autocast off", 3000000);
        CpuAutocast ac(at::kBFloat16);
        hold("no_grad | autocast bf16", 4000000);
    }
    {
        c10::InferenceMode inference;
        hold("inference_mode | autocast off", 5000000);
        CpuAutocast ac(at::kBFloat16);
        hold("inference_mode | autocast bf16", 6000000);
    }
    {
        // CUDA autocast (fp16 by default) decides the label when it is on; the flag alone needs
        // no GPU. Changing its dtype while it is on moves the thread to bf16.
        torch_compat::set_autocast_enabled(true, true);
        hold("grad | autocast fp16", 7000000);
        torch_compat::set_autocast_dtype(true, at::kBFloat16);
        hold("grad | autocast bf16 (CUDA autocast)", 8000000);
        torch_compat::set_autocast_enabled(true, false);
        torch_compat::set_autocast_dtype(true, at::kHalf);
    }
    return 0;
}

static int nested()
{
    hold("grad | autocast off", 100000);
    {
        c10::InferenceMode inference;
        hold("inference_mode | autocast off", 200000);
        {
            at::NoGradGuard no_grad; // inside InferenceMode: still inference_mode
            hold("inference_mode | autocast off (no_grad inside)", 300000);
        }
        hold("inference_mode | autocast off (after no_grad)", 400000);
    }
    {
        at::NoGradGuard no_grad;
        hold("no_grad | autocast off", 500000);
        {
            CpuAutocast ac(at::kBFloat16);
            hold("no_grad | autocast bf16", 600000);
        }
        hold("no_grad | autocast off (after autocast)", 700000);
    }
    hold("grad | autocast off (at the end)", 50000);
    return 0;
}

static pthread_barrier_t both_hold, checked;

static void worker(int mode, int64_t bytes)
{
    std::unique_ptr<at::NoGradGuard> no_grad;
    std::unique_ptr<c10::InferenceMode> inference;
    if (mode == 1) no_grad = std::make_unique<at::NoGradGuard>();
    if (mode == 2) inference = std::make_unique<c10::InferenceMode>();
    at::Tensor t = at::empty({bytes}, at::TensorOptions().dtype(at::kByte));
    pthread_barrier_wait(&both_hold); // both threads hold their tensor, each in its mode
    pthread_barrier_wait(&checked);
}

static int threads()
{
    pthread_barrier_init(&both_hold, nullptr, 3);
    pthread_barrier_init(&checked, nullptr, 3);
    std::thread a(worker, 1, 1100000), b(worker, 2, 2200000);
    pthread_barrier_wait(&both_hold);
    std::printf("both threads hold their tensors\n");
    pthread_barrier_wait(&checked);
    a.join();
    b.join();
    // After both threads left: their phases must not cover this.
    hold("main thread, grad, after the workers exited", 9900000);
    return 0;
}

static int jit(int n)
{
    torch::jit::Module m("Affine");
    m.define(R"(
def forward(self, x):
    return x.view(4, 4) * 2 + 1
)");
    // 15 elements cannot be viewed as 4 x 4: the call raises.
    at::Tensor ok = at::ones({16}), bad = at::ones({15});
    int calls = 0, raised = 0;
    for (int mode = 0; mode < 3; mode++) {
        std::unique_ptr<at::NoGradGuard> no_grad;
        std::unique_ptr<c10::InferenceMode> inference;
        if (mode == 1) no_grad = std::make_unique<at::NoGradGuard>();
        if (mode == 2) inference = std::make_unique<c10::InferenceMode>();
        for (int i = 0; i < n; i++) {
            calls++;
            (void)m.forward({ok});
            if (i % 3 == 2) {
                try {
                    (void)m.forward({bad});
                } catch (const std::exception &) {
                    raised++;
                }
            }
        }
    }
    std::printf("jit: %d calls returned, %d raised\n", calls, raised);
    return 0;
}

// A block allocated by a static initialiser and freed by a static destructor, after infprof
// finished: the CPU allocator must never warn about a block it did not see.
static at::Tensor early = at::zeros({1000}, at::TensorOptions().dtype(at::kByte));

static int prealloc()
{
    hold("grad | autocast off", 1000);
    std::printf("early tensor: %lld bytes, freed at exit\n", (long long)early.numel());
    return 0;
}

// The iteration's work: waiting for a deadline (a busy loop would stretch to the scheduler's
// time slices on a loaded machine; a timed sleep wakes within a fraction of a millisecond).
static void busy_ms(double ms)
{
    std::this_thread::sleep_until(std::chrono::steady_clock::now() +
                                  std::chrono::duration<double, std::milli>(ms));
}

// Prints each iteration's time by the program's own clock: "timed NAME ns ns ...".
static void timed_phase(const char *name, int warm, double warm_ms, int steady, double ms)
{
    std::vector<long long> own;
    for (int i = 0; i < warm + steady; i++) {
        auto t0 = std::chrono::steady_clock::now();
        nvtxRangePushA("iteration");
        busy_ms(i < warm ? warm_ms : ms);
        nvtxRangePop();
        own.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - t0)
                          .count());
    }
    std::printf("timed %s", name);
    for (long long t : own) std::printf(" %lld", t);
    std::printf("\n");
}

static int timed()
{
    timed_phase("grad", 3, 150, 20, 50);
    {
        at::NoGradGuard no_grad;
        timed_phase("no_grad", 2, 110, 20, 37.5);
    }
    {
        c10::InferenceMode inference;
        timed_phase("inference", 1, 100, 20, 31.25);
    }
    std::printf("timed: grad 50 ms, no_grad 37.5 ms, inference_mode 31.25 ms\n");
    return 0;
}

static int internal()
{
    torch::nn::Linear a(64, 64);
    hold("grad | autocast off", 2000);
    {
        c10::InferenceMode inference;
        torch::nn::Linear b(64, 64);
        hold("inference_mode | autocast off", 3000);
    }
    std::printf("internal: %lld + %lld weights\n", (long long)a->weight.numel(),
                (long long)a->bias.numel());
    return 0;
}

/* A torch::nn module called in a loop with no mark, in no_grad and then in inference_mode; the
 * program times each call itself and prints each phase's p50 (ns) after its own 3 warm-up calls:
 * what detected iterations must agree with. */
static int unmarked(int n)
{
    torch::nn::Linear first(256, 512), second(512, 256);
    at::Tensor x = at::randn({32, 256});
    for (int mode = 1; mode <= 2; mode++) {
        std::unique_ptr<at::NoGradGuard> no_grad;
        std::unique_ptr<c10::InferenceMode> inference;
        if (mode == 1) no_grad = std::make_unique<at::NoGradGuard>();
        if (mode == 2) inference = std::make_unique<c10::InferenceMode>();
        std::vector<long long> own;
        at::Tensor y;
        for (int i = 0; i < n; i++) {
            auto t0 = std::chrono::steady_clock::now();
            y = second->forward(at::relu(first->forward(x)));
            auto t1 = std::chrono::steady_clock::now();
            own.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        }
        std::printf("%s", mode == 1 ? "no_grad" : "inference_mode");
        for (long long ns : own) std::printf(" %lld", ns);
        std::printf("\n");
    }
    return 0;
}

static int rounds(int r, int n, int width)
{
    torch::nn::Linear first(width, 2 * width), second(2 * width, width);
    at::NoGradGuard no_grad;
    at::Tensor y;
    for (int k = 1; k <= r; k++) {
        at::Tensor x = at::randn({8, width}); /* a fresh input each round, of the same shape */
        std::vector<long long> own;
        for (int i = 0; i < n; i++) {
            auto t0 = std::chrono::steady_clock::now();
            y = second->forward(at::relu(first->forward(x)));
            auto t1 = std::chrono::steady_clock::now();
            own.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        }
        std::printf("round%d", k);
        for (long long ns : own) std::printf(" %lld", ns);
        std::printf("\n");
    }
    return 0;
}

static int workers(int t, int n, int width, bool other)
{
    std::vector<std::vector<long long>> own(t);
    std::vector<std::thread> v;
    for (int k = 0; k < t; k++)
        v.emplace_back([&own, k, n, width, other] {
            int w = other ? (k + 1) * width : width;
            torch::nn::Linear first(w, 2 * w), second(2 * w, w);
            at::NoGradGuard no_grad;
            at::Tensor x = at::randn({4, w}), y;
            for (int i = 0; i < n; i++) {
                auto t0 = std::chrono::steady_clock::now();
                y = second->forward(at::relu(first->forward(x)));
                auto t1 = std::chrono::steady_clock::now();
                own[k].push_back(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
            }
        });
    for (auto &th : v) th.join();
    for (int k = 0; k < t; k++) {
        std::printf("worker%d", k);
        for (long long ns : own[k]) std::printf(" %lld", ns);
        std::printf("\n");
    }
    return 0;
}

static int batches(int n, int width, int most, const std::string &how)
{
    torch::nn::Linear first(width, 2 * width), second(2 * width, width), third(width, width);
    at::Tensor k1 = at::randn({16, 3, 3, 3}), k2 = at::randn({32, 16, 3, 3}); /* conv weights */
    bool mixed = how == "mixed", conv = how == "conv", deep = how == "deep";
    std::vector<torch::nn::Linear> alike; /* deep: 16 alike layers */
    for (int k = 0; deep && k < 16; k++) alike.emplace_back(width, width);
    at::NoGradGuard no_grad;
    std::vector<long long> own;
    unsigned seed = 12345;
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        int b = how == "cyclic"    ? 1 + i % most
                : how == "every10" ? (i % 10 == 9 ? 1 : most)
                                   : 1 + (int)((seed >> 16) % (unsigned)most);
        auto t0 = std::chrono::steady_clock::now();
        at::Tensor x = conv ? at::randn({b, 3, 16, 16}) : at::randn({b, width}), y;
        if (conv) /* at batch 1 another path: fewer allocations than at other batches */
            y = at::max_pool2d(
                at::relu(at::conv2d(at::max_pool2d(at::relu(at::conv2d(x, k1, {}, 1, 1)), 2), k2,
                                    {}, 1, 1)),
                2);
        else if (deep) {
            y = x;
            for (auto &layer : alike) y = at::relu(layer->forward(y));
        } else
            y = second->forward(at::relu(first->forward(x)));
        if (mixed && (seed >> 8) % 2) y = third->forward(y); /* another model, one layer more */
        auto t1 = std::chrono::steady_clock::now();
        own.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    }
    std::printf("batches");
    for (long long ns : own) std::printf(" %lld", ns);
    std::printf("\n");
    return 0;
}

static int window(int n, bool marked)
{
    torch::nn::Linear first(512, 1024), second(1024, 512);
    at::Tensor x = at::randn({16, 512});
    c10::InferenceMode inference;
    at::Tensor y;
    for (int i = 0; i < n; i++) {
        bool in = (i / 20) % 2 == 1;
        if (in && i % 20 == 0) nvtxRangePushA("capture");
        auto t0 = std::chrono::steady_clock::now();
        if (marked) nvtxRangePushA("iteration");
        y = second->forward(at::relu(first->forward(x)));
        if (marked) nvtxRangePop();
        auto t1 = std::chrono::steady_clock::now();
        if (in && i % 20 == 19) nvtxRangePop();
        std::printf("own %d %lld\n", i,
                    (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    }
    return 0;
}

static void burst_thread(int n, bool nvtx)
{
    for (int block = 0; block < n / 100; block++) {
        std::unique_ptr<at::NoGradGuard> no_grad;
        if (block % 2) no_grad = std::make_unique<at::NoGradGuard>();
        for (int i = 0; i < 100; i++) {
            if (nvtx) nvtxRangePushA("burst");
            at::Tensor t = at::empty({256}, at::TensorOptions().dtype(at::kByte));
            if (nvtx) nvtxRangePop();
        }
    }
}

static int burst(int threads, int n, bool nvtx)
{
    std::vector<std::thread> v;
    for (int i = 0; i < threads; i++) v.emplace_back(burst_thread, n, nvtx);
    for (auto &t : v) t.join();
    std::printf("burst: %d threads x %d tensors, %d phase changes each%s\n", threads, n,
                n / 100 - 1, nvtx ? ", an NVTX range around each" : "");
    return 0;
}

// Each worker keeps one block alive across the next allocation, so a free at any moment may be of
// a block made before the static destructors began. The blocks come from the CPU allocator itself
// (the path every CPU tensor takes): an operator call would meet libtorch's dispatcher already
// destroyed, which aborts the program whether or not it is profiled.
static std::atomic<int> exit_ready{0};

static void exit_worker()
{
    c10::Allocator *cpu = c10::GetCPUAllocator();
    c10::DataPtr keep = cpu->allocate(4096);
    for (long i = 0;; i++) {
        keep = cpu->allocate(4096 + (size_t)(i % 64));
        if (i == 1000) exit_ready.fetch_add(1);
    }
}

static int exitthreads()
{
    for (int i = 0; i < 4; i++) std::thread(exit_worker).detach();
    while (exit_ready.load() < 4) std::this_thread::yield();
    std::printf("exitthreads: main returns with 4 threads allocating\n");
    std::fflush(stdout);
    return 0;
}

// collectors/torch_iterations.c registers C structs laid out as at::RecordFunctionCallback, for
// the user and TorchScript-function scopes: a libtorch where these differ must fail to build
// here, not crash there.
static_assert(sizeof(at::RecordFunctionCallback) == 40, "see collectors/torch_scope.c");
static_assert(static_cast<int>(at::RecordScope::TORCHSCRIPT_FUNCTION) == 2 &&
                  static_cast<int>(at::RecordScope::USER_SCOPE) == 7 &&
                  static_cast<int>(at::RecordScope::NUM_SCOPES) == 10,
              "see collectors/torch_scope.c");

static void scope_step(const char *name, int64_t bytes)
{
    RECORD_USER_SCOPE(name);
    at::Tensor t = at::empty({bytes}, at::TensorOptions().dtype(at::kByte));
    {
        RECORD_USER_SCOPE("inner");
        at::Tensor u = at::empty({bytes}, at::TensorOptions().dtype(at::kByte));
    }
}

static int scopes()
{
    for (int i = 0; i < 3; i++) scope_step("iteration batch=4", 4000);
    {
        at::NoGradGuard no_grad;
        for (int i = 0; i < 2; i++) scope_step("iteration batch=4", 4000);
    }
    for (int i = 0; i < 2; i++) scope_step("other", 4000);
    std::printf("scopes: 5 iterations, 2 other\n");
    return 0;
}

static int series()
{
    at::globalContext().setFloat32MatmulPrecision("high");
    torch::jit::Module small("Small"), big("Big");
    small.define(R"(
def forward(self, x):
    return x * 2 + 1
)");
    big.define(R"(
def forward(self, x):
    return (x.mm(x) * 2 + 1).sum()
)");
    c10::InferenceMode guard;
    at::Tensor a = at::ones({8, 8}), b = at::ones({200, 200});
    auto run = [](torch::jit::Module &m, const at::Tensor &x, const char *name) {
        for (int i = 0; i < 8; i++) {
            nvtxRangePushA(name);
            (void)m.forward({x});
            nvtxRangePop();
        }
    };
    run(small, a, "iteration small");
    run(big, b, "iteration big");
    at::globalContext().setBenchmarkCuDNN(true);
    run(small, a, "iteration small");
    std::printf("series: 3 x 8 calls\n");
    return 0;
}

static int loose(int n)
{
    at::NoGradGuard no_grad;
    for (int i = 0; i < n; i++) {
        nvtxRangeId_t id = nvtxRangeStartA("iteration");
        {
            at::Tensor t = at::empty({(i + 1) * 65536}, at::kByte);
            t.fill_(1);
        }
        std::thread([id] { nvtxRangeEnd(id); }).join();
    }
    {
        at::Tensor t = at::empty({1 << 20}, at::kByte);
        t.fill_(1);
    }
    std::printf("loose: %d iterations\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    std::string what = argc > 1 ? argv[1] : "";
    if (what == "sequence") return sequence();
    if (what == "nested") return nested();
    if (what == "threads") return threads();
    if (what == "jit") return jit(argc > 2 ? std::atoi(argv[2]) : 5);
    if (what == "prealloc") return prealloc();
    if (what == "internal") return internal();
    if (what == "timed") return timed();
    if (what == "exitthreads") return exitthreads();
    if (what == "unmarked") return unmarked(argc > 2 ? std::atoi(argv[2]) : 30);
    if (what == "rounds")
        return rounds(argc > 2 ? std::atoi(argv[2]) : 2, argc > 3 ? std::atoi(argv[3]) : 1000,
                      argc > 4 ? std::atoi(argv[4]) : 256);
    if (what == "workers")
        return workers(argc > 2 ? std::atoi(argv[2]) : 2, argc > 3 ? std::atoi(argv[3]) : 600,
                       argc > 4 ? std::atoi(argv[4]) : 128,
                       argc > 5 && !std::strcmp(argv[5], "other"));
    if (what == "batches")
        return batches(argc > 2 ? std::atoi(argv[2]) : 2000, argc > 3 ? std::atoi(argv[3]) : 128,
                       argc > 4 ? std::atoi(argv[4]) : 8,
                       argc > 5 ? argv[5] : "cyclic");
    if (what == "scopes") return scopes();
    if (what == "window")
        return window(argc > 2 ? std::atoi(argv[2]) : 80,
                      !(argc > 3 && !std::strcmp(argv[3], "unmarked")));
    if (what == "series") return series();
    if (what == "loose") return loose(argc > 2 ? std::atoi(argv[2]) : 10);
    if (what == "burst" && argc > 3)
        return burst(std::atoi(argv[2]), std::atoi(argv[3]),
                     argc > 4 && !std::strcmp(argv[4], "nvtx"));
    std::fprintf(stderr, "usage: torch_modes sequence|nested|threads|jit N|prealloc|internal|"
                         "burst T N [nvtx]|timed|exitthreads|scopes|series|unmarked [N]|"
                         "window [N] [unmarked]|loose [N]|workers [T N W [other]]|"
                         "batches [N W B [cyclic|random|mixed|conv|deep|every10]]\n");
    return 2;
}

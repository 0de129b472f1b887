// torch_bench.cpp: infprof-bench-torch, the cost of the libtorch hooks (docs/performance.md).
// Figures are printed, never asserted.
//
//   infprof-bench-torch [--n N] [--only NAME]
//
// Runs each measurement in a process of its own: without the library, preloaded with the
// defaults, with INFPROF_CPU_MEMORY=0, with INFPROF_NVTX_EMIT=0, with INFPROF_RECORD_FUNCTION=0
// and with INFPROF_OPERATORS=1 (op_inplace then pays the operator callback);
// prints ns per operation for each and what the library adds with its defaults:
//   report_cpu      c10::reportMemoryUsageToProfiler for a CPU block (what our hook records)
//   report_cuda     the same for a CUDA block (no NVTX check), called directly: no GPU needed
//   grad_toggle     one NoGradGuard transition (constructor or destructor): a phase change each
//   grad_same       one transition that leaves the phase as it was (NoGradGuard inside no_grad)
//   inference_toggle one InferenceMode transition
//   autocast_toggle one CPU autocast enable or disable call, switching CPU autocast
//   cpu_alloc_free  at::empty of 256 bytes and its free: the CPU allocator, with its reports
//                   when memory profiling is on (INFPROF_CPU_MEMORY)
//   cpu_fold        the same inside an iteration (a RECORD_USER_SCOPE "iteration" around 40 of
//                   them, two blocks live at a time, as a small MLP's forward makes them): the
//                   reports folded (torch_memfold.c); the iteration's edges shared by the 40
//   jit_call        one TorchScript forward of a trivial module
//   op_inplace      x.add_(1) on 64 floats: a dispatched operator, no allocation (our user-scope
//                   callback must leave operators on libtorch's fast path)
//   scope_other     a RECORD_USER_SCOPE named "other": our callback runs, matches nothing
//   scope_iter      a RECORD_USER_SCOPE named "iteration": an iteration begins and ends
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/script.h>

#include "samples/torch_compat.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

// ns per operation: the least, over chunks of `chunk` calls of `op` (each does `per_call`
// operations), of the time per operation (the chunk least disturbed by other work on the
// machine). Between chunks a pause, untimed, lets the writer thread drain the ring
// (INFPROF_FLUSH_MS=1): what is timed is the hook recording into a warm ring, as in a program
// that does other work between its calls; never a full ring dropping events.
static double time_ns(long n, int per_call, const std::function<void()> &op, long chunk = 500)
{
    std::vector<double> per_op;
    for (long done = 0; done < n; done += chunk) {
        long k = std::min(chunk, n - done);
        auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < k; i++) op();
        auto t1 = std::chrono::steady_clock::now();
        per_op.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                         (double)(k * per_call));
        usleep(4000);
    }
    return *std::min_element(per_op.begin(), per_op.end());
}

// One measurement, in a process of its own: each starts with an idle writer thread.
static int child(const std::string &what, long n)
{
    char block[64];
    c10::Device cpu(c10::DeviceType::CPU), gpu(c10::DeviceType::CUDA, 0);
    double ns = -1;
    if (what == "report_cpu")
        ns = time_ns(n, 1, [&] { c10::reportMemoryUsageToProfiler(block, 64, 4096, 0, cpu); });
    else if (what == "report_cuda")
        ns = time_ns(n, 1, [&] { c10::reportMemoryUsageToProfiler(block, 64, 4096, 8192, gpu); });
    else if (what == "grad_toggle")
        ns = time_ns(n, 2, [] { at::NoGradGuard guard; });
    else if (what == "grad_same") {
        at::NoGradGuard outer;
        ns = time_ns(n, 2, [] { at::NoGradGuard guard; });
    } else if (what == "inference_toggle")
        ns = time_ns(n, 2, [] { c10::InferenceMode guard; });
    else if (what == "autocast_toggle")
        ns = time_ns(n, 2, [] {
            torch_compat::set_autocast_enabled(false, true);
            torch_compat::set_autocast_enabled(false, false);
        });
    else if (what == "cpu_alloc_free")
        ns = time_ns(n, 1, [] { at::Tensor t = at::empty({64}, at::kFloat); });
    else if (what == "cpu_fold")
        ns = time_ns(
            n / 40, 40,
            [] {
                RECORD_USER_SCOPE("iteration");
                at::Tensor a = at::empty({64}, at::kFloat);
                for (int i = 0; i < 39; i++) a = at::empty({64}, at::kFloat);
            },
            50);
    else if (what == "jit_call") {
        torch::jit::Module m("Add");
        m.define("def forward(self, x):\n    return x + 1\n");
        at::Tensor x = at::ones({4});
        c10::InferenceMode inference;
        ns = time_ns(
            n / 10, 1, [&] { (void)m.forward({x}); }, 20);
    } else if (what == "op_inplace") {
        at::Tensor x = at::zeros({64});
        c10::InferenceMode inference;
        ns = time_ns(n, 1, [&] { x.add_(1); });
    } else if (what == "scope_other")
        ns = time_ns(n, 1, [] { RECORD_USER_SCOPE("other"); });
    else if (what == "scope_iter")
        ns = time_ns(n, 1, [] { RECORD_USER_SCOPE("iteration"); });
    std::printf("%.1f\n", ns);
    return ns < 0;
}

static const char *const measures[] = {"report_cpu",     "report_cuda",      "grad_toggle",
                                       "grad_same",      "inference_toggle", "autocast_toggle",
                                       "cpu_alloc_free", "cpu_fold",         "jit_call",
                                       "op_inplace",     "scope_other",      "scope_iter"};

static std::string dir_of_self()
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = 0;
    char *slash = std::strrchr(self, '/');
    if (slash) *slash = 0;
    return self;
}

static long dropped_events(const std::string &db)
{
    sqlite3 *h;
    long v = -1;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, "SELECT value FROM meta WHERE key = 'dropped_events'", -1, &st,
                               nullptr) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(h);
    return v;
}

// Runs one measurement in a child with `env` added; returns ns per operation.
static double run(const char *self, const char *what, long n, const std::vector<std::string> &env)
{
    int fds[2];
    if (pipe(fds) != 0) std::exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        for (const auto &e : env) putenv(strdup(e.c_str()));
        dup2(fds[1], 1);
        close(fds[0]);
        std::string count = std::to_string(n);
        execl(self, self, "--child", what, count.c_str(), (char *)nullptr);
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    double v = -1;
    if (std::fscanf(in, "%lf", &v) != 1) v = -1;
    std::fclose(in);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || v < 0) {
        std::fprintf(stderr, "infprof-bench-torch: %s failed\n", what);
        std::exit(1);
    }
    return v;
}

int main(int argc, char **argv)
{
    long n = 50000;
    const char *only = nullptr;
    if (argc == 4 && !std::strcmp(argv[1], "--child")) return child(argv[2], std::atol(argv[3]));
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !std::strcmp(argv[i], "--n") && std::atol(argv[i + 1]) > 0)
            n = std::atol(argv[++i]);
        else if (i + 1 < argc && !std::strcmp(argv[i], "--only"))
            only = argv[++i];
        else {
            std::fprintf(stderr, "usage: infprof-bench-torch [--n N] [--only NAME]\n");
            return 2;
        }
    }
    if (only && std::none_of(std::begin(measures), std::end(measures),
                             [&](const char *m) { return !std::strcmp(m, only); })) {
        std::fprintf(stderr, "infprof-bench-torch: no measure '%s'\n", only);
        return 2;
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = 0;
    std::string lib = dir_of_self() + "/../lib/libinfprof.so";
    char tmp[] = "/tmp/infprof-bench-torch-XXXXXX";
    if (!mkdtemp(tmp)) return 1;
    std::string db = std::string(tmp) + "/bench.db";
    std::vector<std::string> with = {"LD_PRELOAD=" + lib, "INFPROF_FLUSH_MS=1",
                                     "INFPROF_OUTPUT=" + db};
    std::vector<std::string> mem_off = with, emit_off = with, rf_off = with, ops_on = with;
    mem_off.push_back("INFPROF_CPU_MEMORY=0");
    emit_off.push_back("INFPROF_NVTX_EMIT=0");
    rf_off.push_back("INFPROF_RECORD_FUNCTION=0");
    ops_on.push_back("INFPROF_OPERATORS=1");
    std::printf("%-17s %8s %10s %10s %10s %10s %10s %8s %8s\n", "ns per op", "plain", "infprof",
                "CPU_MEM=0", "EMIT=0", "RF=0", "OPS=1", "added", "dropped");
    for (const char *what : measures) {
        if (only && std::strcmp(what, only)) continue;
        double v[6];
        long dropped = 0;
        const std::vector<std::string> *envs[6] = {nullptr,   &with,   &mem_off,
                                                   &emit_off, &rf_off, &ops_on};
        for (int k = 0; k < 6; k++) {
            v[k] = run(self, what, n, envs[k] ? *envs[k] : std::vector<std::string>());
            if (!envs[k]) continue;
            dropped += dropped_events(db);
            unlink(db.c_str());
        }
        std::printf("%-17s %8.1f %10.1f %10.1f %10.1f %10.1f %10.1f %8.1f %8ld\n", what, v[0],
                    v[1], v[2], v[3], v[4], v[5], v[1] - v[0], dropped);
        std::fflush(stdout);
    }
    rmdir(tmp);
    return 0;
}

// script.cpp: infprof-sample-script, the usual libtorch deployment path: load a TorchScript file
// and run its forward in every phase asked for, printing each phase's reference figures
// (common.h). Every forward call is a TorchScript Method call, which infprof counts as an
// iteration on its own (no NVTX iteration range here, so nothing is counted twice).
//
//   infprof-sample-script MODEL.pt [--shape 3,224,224] [--dtype float32|float16|bfloat16|int64]
//                         [--device cpu|cuda] [--batch N] [--iters N] [--modes ...]
//                         [--precisions ...] [--no-eval] [--channels-last] [--threads N]
//
// torchvision_script.py writes such a file from a torchvision model with random weights.
#include "common.h"

#include <torch/script.h>

int main(int argc, char **argv)
{
    const char *extra = "MODEL.pt [--shape C,H,W] [--dtype float32|float16|bfloat16|int64] ";
    std::string path, shape_text = "3,224,224", dtype_name = "float32";
    std::vector<char *> args = {argv[0]};
    for (int i = 1; i < argc; i++) {
        if (path.empty() && argv[i][0] != '-')
            path = argv[i];
        else
            args.push_back(argv[i]);
    }
    sample::Options o = sample::parse((int)args.size(), args.data(), extra,
                                      [&](const std::string &f, const char *v) {
                                          if (f == "--shape") return (void)(shape_text = v), true;
                                          if (f == "--dtype") return (void)(dtype_name = v), true;
                                          return false;
                                      });
    if (path.empty()) sample::usage(argv[0], extra);
    std::vector<int64_t> shape = {o.batch};
    for (auto &d : sample::split(shape_text, ',')) shape.push_back(std::atol(d.c_str()));
    sample::setup(o);
    torch::Device dev = sample::device_of(o);

    torch::jit::Module module;
    try {
        module = torch::jit::load(path, dev);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "sample: cannot load %s: %s\n", path.c_str(), e.what());
        return 1;
    }
    if (o.eval) module.eval();

    torch::Tensor input;
    if (dtype_name == "int64") {
        input = torch::randint(0, 100, shape, torch::TensorOptions().dtype(torch::kLong));
    } else {
        at::ScalarType dtype = dtype_name == "float16"    ? at::kHalf
                               : dtype_name == "bfloat16" ? at::kBFloat16
                                                          : at::kFloat;
        if (dtype_name != "float32" && dtype != at::kHalf && dtype != at::kBFloat16)
            sample::usage(argv[0], extra);
        input = torch::randn(shape).to(dtype);
    }
    input = input.to(dev);
    if (o.channels_last && input.dim() == 4)
        input = input.contiguous(torch::MemoryFormat::ChannelsLast);
    std::printf("model {\"name\": \"%s\", \"input_bytes\": %lld}\n", path.c_str(),
                (long long)(input.numel() * (int64_t)input.element_size()));
    std::fflush(stdout);

    torch::jit::IValue out;
    // The timed interval is the forward call and the synchronisation, as infprof's iteration
    // (the TorchScript call, to GPU completion): the previous output is dropped before it.
    sample::run_phases(
        o, false, [&] { out = module.forward({input}); }, [&] { out = torch::jit::IValue(); },
        [&] { out = torch::jit::IValue(); });
    return 0;
}

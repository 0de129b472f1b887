// infer.cpp: infprof-sample-infer, an eager libtorch inference program to profile. A small conv
// net (conv, batch norm, relu, pooling, linear) and a small transformer encoder with random
// weights run in every phase asked for (default: grad, no_grad and inference_mode, each with
// autocast off, fp16 and bf16 where the device supports them); each forward call is an NVTX range
// "iteration batch=N", and each phase prints its reference figures (common.h).
//
//   infprof-sample-infer [--model conv|transformer|all] [--image N] [--device cpu|cuda]
//                        [--batch N] [--iters N] [--modes ...] [--precisions ...] [--no-eval]
//                        [--channels-last] [--cudnn-benchmark] [--threads N]
#include "common.h"

#include <torch/torch.h>

namespace nn = torch::nn;

struct ConvNetImpl : nn::Module {
    nn::Sequential body;
    explicit ConvNetImpl(int64_t classes)
    {
        auto conv = [](int64_t in, int64_t out) {
            return nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1).bias(false));
        };
        body = register_module(
            "body",
            nn::Sequential(conv(3, 32), nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2),
                           conv(32, 64), nn::BatchNorm2d(64), nn::ReLU(), nn::MaxPool2d(2),
                           conv(64, 128), nn::BatchNorm2d(128), nn::ReLU(),
                           nn::AdaptiveAvgPool2d(1), nn::Flatten(), nn::Linear(128, classes)));
    }
    torch::Tensor forward(torch::Tensor x)
    {
        return body->forward(x);
    }
};
TORCH_MODULE(ConvNet);

struct EncoderImpl : nn::Module {
    nn::TransformerEncoder encoder{nullptr};
    nn::Linear head{nullptr};
    EncoderImpl(int64_t dim, int64_t heads, int64_t layers)
    {
        auto layer = nn::TransformerEncoderLayer(
            nn::TransformerEncoderLayerOptions(dim, heads).dim_feedforward(4 * dim));
        encoder = register_module("encoder", nn::TransformerEncoder(layer, layers));
        head = register_module("head", nn::Linear(dim, dim));
    }
    torch::Tensor forward(torch::Tensor x) // (sequence, batch, dim)
    {
        return head->forward(encoder->forward(x));
    }
};
TORCH_MODULE(Encoder);

static int64_t bytes_of(const std::vector<torch::Tensor> &v)
{
    int64_t n = 0;
    for (const auto &t : v) n += t.numel() * (int64_t)t.element_size();
    return n;
}

int main(int argc, char **argv)
{
    const char *extra = "[--model conv|transformer|all] [--image N] ";
    std::string model = "all";
    int64_t side = 64;
    sample::Options o = sample::parse(argc, argv, extra, [&](const std::string &f, const char *v) {
        if (f == "--model") return (void)(model = v), true;
        if (f == "--image") return (void)(side = std::atol(v)), true;
        return false;
    });
    if ((model != "conv" && model != "transformer" && model != "all") || side < 8)
        sample::usage(argv[0], extra);
    sample::setup(o);
    torch::Device dev = sample::device_of(o);

    std::vector<std::function<torch::Tensor()>> models;
    auto describe = [&](const char *name, nn::Module &m, const torch::Tensor &input) {
        m.to(dev);
        m.train(!o.eval);
        std::vector<torch::Tensor> state = m.parameters();
        for (auto &b : m.buffers()) state.push_back(b);
        std::printf("model {\"name\": \"%s\", \"state_bytes\": %lld, \"input_bytes\": %lld}\n",
                    name, (long long)bytes_of(state), (long long)bytes_of({input}));
    };
    // Both models and their inputs live for the whole run: each phase's peak starts from them.
    ConvNet conv(10);
    Encoder encoder(128, 4, 2);
    torch::Tensor image, tokens;
    if (model != "transformer") {
        image = torch::randn({o.batch, 3, side, side}).to(dev);
        if (o.channels_last) {
            image = image.contiguous(torch::MemoryFormat::ChannelsLast);
            torch::NoGradGuard no_grad;
            for (auto &p : conv->parameters())
                if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
        }
        describe("conv", *conv, image);
        models.push_back([&] { return conv->forward(image); });
    }
    if (model != "conv") {
        tokens = torch::randn({32, o.batch, 128}).to(dev);
        describe("transformer", *encoder, tokens);
        models.push_back([&] { return encoder->forward(tokens); });
    }
    std::fflush(stdout);

    // One iteration runs every model once; its outputs live until the next one replaces them,
    // as a serving loop's would.
    std::vector<torch::Tensor> out(models.size());
    sample::run_phases(
        o, true,
        [&] {
            for (size_t i = 0; i < models.size(); i++) out[i] = models[i]();
        },
        [&] {
            for (auto &t : out) t = torch::Tensor();
        });
    return 0;
}

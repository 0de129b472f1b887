// aoti_fake.cpp: a stand-in for libtorch's AOTInductor runner (aoti_fake.h), in a shared library
// of its own. The "model" adds one to its input; the package's runs call the runner's, across the
// PLT as inside libtorch_cpu, so infprof sees a nested call it must not count twice.
#include "aoti_fake.h"

namespace torch::inductor
{
std::vector<at::Tensor> AOTIModelContainerRunner::run(const std::vector<at::Tensor> &inputs, void *)
{
    return {inputs.at(0) + 1};
}

std::vector<at::Tensor> AOTIModelContainerRunner::boxed_run(std::vector<at::Tensor> &&inputs,
                                                            void *stream)
{
    std::vector<at::Tensor> in = std::move(inputs);
    return run(in, stream);
}

std::vector<at::Tensor> AOTIModelPackageLoader::run(const std::vector<at::Tensor> &inputs,
                                                    void *stream)
{
    return runner_.run(inputs, stream);
}

std::vector<at::Tensor> AOTIModelPackageLoader::boxed_run(std::vector<at::Tensor> &&inputs,
                                                          void *stream)
{
    return runner_.boxed_run(std::move(inputs), stream);
}
} // namespace torch::inductor

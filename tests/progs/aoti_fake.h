// aoti_fake.h: torch::inductor's two AOTInductor entry points, declared with the signatures of
// PyTorch 2.x (torch/csrc/inductor/aoti_package/model_package_loader.h and
// aoti_runner/model_container_runner.h): a libtorch without AOTInductor (CI's 1.13) still gets
// their linkage names, so infprof's hooks on them are tested on any machine.
#pragma once
#include <ATen/ATen.h>
#include <vector>

namespace torch::inductor
{
class AOTIModelContainerRunner
{
  public:
    std::vector<at::Tensor> run(const std::vector<at::Tensor> &inputs, void *stream = nullptr);
    std::vector<at::Tensor> boxed_run(std::vector<at::Tensor> &&inputs, void *stream = nullptr);
};

class AOTIModelPackageLoader
{
  public:
    std::vector<at::Tensor> run(const std::vector<at::Tensor> &inputs, void *stream = nullptr);
    std::vector<at::Tensor> boxed_run(std::vector<at::Tensor> &&inputs, void *stream = nullptr);

  private:
    AOTIModelContainerRunner runner_;
};
} // namespace torch::inductor

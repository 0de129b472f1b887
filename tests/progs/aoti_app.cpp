// aoti_app.cpp: a program running an AOTInductor model the ways libtorch's API offers
// (aoti_fake.h): the package's run 3 times in grad mode, its boxed_run (Python's path) 2 times in
// no_grad, the runner's own run 4 times in inference_mode; each run is one iteration. One run in
// inference_mode throws (an input missing) and is caught: no iteration. Deterministic output.
#include "aoti_fake.h"

#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include <cstdio>
#include <stdexcept>

int main()
{
    torch::inductor::AOTIModelPackageLoader package;
    torch::inductor::AOTIModelContainerRunner runner;
    at::Tensor x = at::zeros({256});
    double sum = 0;
    for (int i = 0; i < 3; i++) sum += package.run({x})[0].sum().item<double>();
    {
        at::NoGradGuard no_grad;
        for (int i = 0; i < 2; i++) sum += package.boxed_run({x})[0].sum().item<double>();
    }
    int raised = 0;
    {
        c10::InferenceMode inference;
        for (int i = 0; i < 4; i++) sum += runner.run({x})[0].sum().item<double>();
        try {
            runner.run({});
        } catch (const std::out_of_range &) {
            raised++;
        }
    }
    std::printf("aoti: sum %.0f, %d raised\n", sum, raised);
    return 0;
}

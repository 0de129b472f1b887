// tests/build/torch2x: a PyTorch 2.x view over Debian's libtorch 1.13 headers, for compiling the
// torch-facing programs as a 2.x build would see them (tests/CMakeLists.txt, torch_api_2x).
// Compile only: nothing built with these headers is linked or run.
#pragma once
#define TORCH_VERSION_MAJOR 2
#define TORCH_VERSION_MINOR 11
#define TORCH_VERSION_PATCH 0
#define TORCH_VERSION "2.11.0"

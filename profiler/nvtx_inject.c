/*
 * nvtx_inject.c: NVTX3's static-injection pointer for programs that link the core without
 * defining it (tests, benchmarks): null, weak. The preloaded library's strong, exported
 * definition (preload/preload.c) and a test program's own take its place (nvtx_inject.h).
 */
#include "nvtx_inject.h"

#include <stddef.h>

__attribute__((weak)) int (*InitializeInjectionNvtx2_fnptr)(const void *(*)(uint32_t)) = NULL;

/*
 * nvtx_inject.h: included first in every file of the core (CMakeLists.txt, with
 * NVTX_STATIC_INJECTION_IMPL): NVTX3's static-injection pointer, declared with default
 * visibility and defined once, exported, by preload/preload.c (or by a program that links the
 * core). NVTX3's own weak definition, hidden in each of our objects under -fvisibility=hidden,
 * would hide the exported one.
 */
#ifndef INFPROF_NVTX_INJECT_H
#define INFPROF_NVTX_INJECT_H

#include <stdint.h>

extern __attribute__((visibility("default"))) int (*InitializeInjectionNvtx2_fnptr)(
    const void *(*)(uint32_t));

#endif

/*
 * nvtx.c: the run model's NVTX ranges and the GPU time inside them (nvtx.h).
 */
#include "nvtx.h"

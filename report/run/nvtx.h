/*
 * nvtx.h: the run model's NVTX ranges and the GPU time inside them, read from the database once (run.h's lazy part).
 */
#ifndef INFPROF_RUN_NVTX_H
#define INFPROF_RUN_NVTX_H

#include "run.h"

#endif

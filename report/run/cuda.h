/*
 * cuda.h: the run model's copies, memsets, memory operations and CUDA API calls, read from the database once (run.h's lazy part).
 */
#ifndef INFPROF_RUN_CUDA_H
#define INFPROF_RUN_CUDA_H

#include "run.h"

#endif

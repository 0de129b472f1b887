/*
 * cuda.c: the run model's copies, memsets, memory operations and CUDA API calls (cuda.h).
 */
#include "cuda.h"

/*
 * kernels.h: the run model's kernel rows by name and phase, read from the database once (run.h's lazy part).
 */
#ifndef INFPROF_RUN_KERNELS_H
#define INFPROF_RUN_KERNELS_H

#include "run.h"

#endif

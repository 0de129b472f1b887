/*
 * cudnn.h: the run model's cuDNN calls, plans and findings, read from the database once (run.h's lazy part).
 */
#ifndef INFPROF_RUN_CUDNN_H
#define INFPROF_RUN_CUDNN_H

#include "run.h"

#endif

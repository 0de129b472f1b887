/*
 * runinfo.h: the run model's the run header's facts, read from the database once (run.h's lazy part).
 */
#ifndef INFPROF_RUN_RUNINFO_H
#define INFPROF_RUN_RUNINFO_H

#include "run.h"

#endif

/*
 * runinfo.c: the run model's the run header's facts (runinfo.h).
 */
#include "runinfo.h"

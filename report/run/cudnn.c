/*
 * cudnn.c: the run model's cuDNN calls, plans and findings (cudnn.h).
 */
#include "cudnn.h"

/*
 * kernels.c: the run model's kernel rows by name and phase (kernels.h).
 */
#include "kernels.h"

/*
 * classify.h: what a kernel computes in, and what kind of operation it is, read from its name
 * (rules in classify.c and docs/report.md; tested against tests/data/kernel_names.tsv).
 */
#ifndef INFPROF_CLASSIFY_H
#define INFPROF_CLASSIFY_H

enum precision {
    PREC_FP32,
    PREC_TF32,
    PREC_FP16,
    PREC_BF16,
    PREC_FP8,
    PREC_INT8,
    PREC_OTHER,   /* a known type outside the list above (fp64, fp4, ...) */
    PREC_UNKNOWN, /* the name does not say */
    PREC_COUNT
};

enum opclass {
    OP_GEMM,
    OP_CONV,
    OP_ATTENTION,
    OP_NORM,
    OP_LAYOUT, /* NCHW <-> NHWC conversions */
    OP_DROPOUT,
    OP_COPY,        /* copies and casts (ATen copy kernels) */
    OP_REDUCTION,   /* reductions, softmax */
    OP_ELEMENTWISE, /* ATen's elementwise and pointwise kernels */
    OP_OTHER,
    OP_COUNT
};

void classify_kernel(const char *name, enum precision *p, enum opclass *op);
/* A Triton kernel (torch.compile, AOTInductor): its compute type is never known. */
int classify_is_triton(const char *name);
const char *precision_name(enum precision p); /* "fp32", "tf32", ... "unknown" */
const char *opclass_name(enum opclass op);    /* "gemm", "conv", ... "other" */

#endif

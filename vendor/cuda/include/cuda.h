/*
 * cuda.h: infprof's own declarations of the part of the CUDA driver API it uses, for a build
 * without the CUDA toolkit (docs/install.md). Not NVIDIA's header: the types and the constants
 * CUDA 13.0 defines, held to NVIDIA's headers by tests/build/test_vendored_cuda.py where the
 * toolkit is installed. libcuda is looked up at run time (dlsym), never linked.
 */
#ifndef INFPROF_VENDORED_CUDA_H
#define INFPROF_VENDORED_CUDA_H

typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_FORCE_INT = 0x7fffffff } CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUuuid_st {
    char bytes[16];
} CUuuid;

typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_FORCE_INT = 0x7fffffff
} CUdevice_attribute;

#endif

/*
 * cudnn_real.c: where the cuDNN collector finds the real cuDNN functions behind its wrappers
 * (dlvsym/dlsym(RTLD_NEXT), or the already loaded libcudnn.so.9), and the collector's counters.
 * Both cudnn.c (the wrappers) and cudnn_classify.c (the descriptor getters it calls) use them.
 */
#include "cudnn_internal.h"

#include <dlfcn.h>
#include <string.h>

const char *const ip_cudnn_fn_names[IP_CUDNN_FN_COUNT] = {
    "cudnnCreate",
    "cudnnDestroy",
    "cudnnSetStream",
    "cudnnBackendFinalize",
    "cudnnBackendExecute",
    "cudnnConvolutionForward",
    "cudnnConvolutionBiasActivationForward",
    "cudnnBatchNormalizationForwardInference",
    "cudnnBatchNormalizationForwardTraining",
    "cudnnBatchNormalizationForwardTrainingEx",
    "cudnnFindConvolutionForwardAlgorithm",
    "cudnnFindConvolutionForwardAlgorithmEx",
    "cudnnGetConvolutionForwardAlgorithm_v7",
    "cudnnBackendCreateDescriptor",
    "cudnnBackendDestroyDescriptor",
    "cudnnBackendSetAttribute",
    "cudnnBackendGetAttribute",
};

struct ip_cudnn_counters ip_cudnn_counters;

static void *real_fns[IP_CUDNN_FN_COUNT];
static void *real_lib;

static void *lookup(const char *name)
{
    void *p = dlvsym(RTLD_NEXT, name, "libcudnn.so.9");
    if (!p) p = dlsym(RTLD_NEXT, name);
    if (p) return p;
    /* Loaded into a local scope (libtorch_cuda dlopened by Python): not visible to RTLD_NEXT. */
    void *lib = __atomic_load_n(&real_lib, __ATOMIC_ACQUIRE);
    if (!lib) {
        lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
        if (!lib) return NULL;
        __atomic_store_n(&real_lib, lib, __ATOMIC_RELEASE);
    }
    p = dlvsym(lib, name, "libcudnn.so.9");
    return p ? p : dlsym(lib, name);
}

void *ip_cudnn_real(enum ip_cudnn_fn fn)
{
    void *p = __atomic_load_n(&real_fns[fn], __ATOMIC_ACQUIRE);
    if (p) return p;
    /* Not cached on failure: cuDNN may be loaded later. */
    p = lookup(ip_cudnn_fn_names[fn]);
    if (p) __atomic_store_n(&real_fns[fn], p, __ATOMIC_RELEASE);
    return p;
}

static struct {
    const char *name;
    void *fn;
} real_syms[] = {
    {"cudnnGetTensorNdDescriptor", NULL},
    {"cudnnGetFilterNdDescriptor", NULL},
    {"cudnnGetConvolutionNdDescriptor", NULL},
};

void *ip_cudnn_real_sym(const char *name)
{
    for (size_t i = 0; i < sizeof real_syms / sizeof real_syms[0]; i++) {
        if (strcmp(real_syms[i].name, name) != 0) continue;
        void *p = __atomic_load_n(&real_syms[i].fn, __ATOMIC_ACQUIRE);
        if (!p && (p = lookup(name))) __atomic_store_n(&real_syms[i].fn, p, __ATOMIC_RELEASE);
        return p;
    }
    return NULL;
}

cudnnStatus_t ip_cudnn_missing(enum ip_cudnn_fn fn)
{
    atomic_fetch_add(&ip_cudnn_counters.missing, 1);
    uint32_t none = 0;
    atomic_compare_exchange_strong(&ip_cudnn_counters.missing_first, &none, (uint32_t)fn + 1);
    return CUDNN_STATUS_NOT_INITIALIZED;
}

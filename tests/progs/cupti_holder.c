/*
 * cupti_holder.c: a program that is itself a CUPTI client (as one running torch.profiler is):
 * it subscribes to CUPTI as "holder-test" before its first CUDA call, then initialises CUDA.
 * Under the library, infprof must find CUPTI taken, name the holder and stay passive
 * (tests/gpu/test_real_cupti.py). Prints what its own subscription returned.
 */
#include <cupti.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

static void CUPTIAPI on_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId c,
                                 const void *data)
{
    (void)u, (void)d, (void)c, (void)data;
}

int main(void)
{
    static const char *const paths[] = {"libcupti.so.13",
                                        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                        "/usr/local/cuda/lib64/libcupti.so.13"};
    void *h = NULL;
    for (unsigned i = 0; !h && i < sizeof paths / sizeof *paths; i++)
        h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("holder: no libcupti.so.13\n");
        return 2;
    }
    typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                        CUpti_SubscriberParams *);
    typedef CUptiResult (*unsubscribe_fn)(CUpti_SubscriberHandle);
    subscribe_fn subscribe = (subscribe_fn)dlsym(h, "cuptiSubscribe_v2");
    unsubscribe_fn unsubscribe = (unsubscribe_fn)dlsym(h, "cuptiUnsubscribe");
    if (!subscribe || !unsubscribe) return 2;
    char old[128] = "";
    CUpti_SubscriberParams p = {CUpti_SubscriberParams_STRUCT_SIZE, "holder-test", old, sizeof old};
    CUpti_SubscriberHandle sub;
    CUptiResult r = subscribe(&sub, on_callback, NULL, &p);
    printf("holder: subscribe %d%s%s\n", (int)r, old[0] ? " held by " : "", old);
    cudaError_t e = cudaFree(0);
    printf("holder: cuda %s\n", e == cudaSuccess ? "ok" : cudaGetErrorString(e));
    if (r == CUPTI_SUCCESS) unsubscribe(sub);
    return e == cudaSuccess ? 0 : 3;
}

/*
 * floor_tracer.c: libinfprof-floor.so, the least a CUPTI tracer can do, as the floor infprof's
 * overhead is held against (bench/overhead.py, docs/performance.md). Injected by the CUDA driver
 * through CUDA_INJECTION64_PATH, it enables kernel activity records only (CONCURRENT_KERNEL),
 * hands CUPTI 8 MiB buffers, counts the kernel records it gets back, and flushes at exit. No
 * callbacks, no database, no other activity kind.
 *
 *   CUDA_INJECTION64_PATH=build/lib/libinfprof-floor.so ./app
 *   FLOOR_OUT=FILE   write "kernels N" there at exit
 */
#include <cupti.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))
#define BUFFER (8u << 20)

static CUptiResult (*act_enable)(CUpti_ActivityKind);
static CUptiResult (*act_register)(CUpti_BuffersCallbackRequestFunc,
                                   CUpti_BuffersCallbackCompleteFunc);
static CUptiResult (*act_flush)(uint32_t);
static CUptiResult (*act_next)(uint8_t *, size_t, CUpti_Activity **);
static _Atomic long floor_kernels;

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER);
    *size = *buffer ? BUFFER : 0;
    *max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                               size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *r = NULL;
    long n = 0;
    while (act_next(buffer, valid, &r) == CUPTI_SUCCESS)
        n += r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    atomic_fetch_add(&floor_kernels, n);
    free(buffer);
}

static void at_exit(void)
{
    act_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const char *out = getenv("FLOOR_OUT");
    FILE *f = out ? fopen(out, "w") : NULL;
    if (f) {
        fprintf(f, "kernels %ld\n", atomic_load(&floor_kernels));
        fclose(f);
    }
}

EXPORT int InitializeInjection(void)
{
    const char *names[] = {"libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                           "/usr/local/cuda/lib64/libcupti.so.13"};
    void *h = NULL;
    for (size_t i = 0; !h && i < sizeof names / sizeof *names; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) return 1;
    act_enable = (CUptiResult(*)(CUpti_ActivityKind))dlsym(h, "cuptiActivityEnable");
    act_register =
        (CUptiResult(*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))dlsym(
            h, "cuptiActivityRegisterCallbacks");
    act_flush = (CUptiResult(*)(uint32_t))dlsym(h, "cuptiActivityFlushAll");
    act_next = (CUptiResult(*)(uint8_t *, size_t, CUpti_Activity **))dlsym(
        h, "cuptiActivityGetNextRecord");
    if (!act_enable || !act_register || !act_flush || !act_next) return 1;
    if (act_register(requested, completed) != CUPTI_SUCCESS) return 1;
    if (act_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) return 1;
    atexit(at_exit);
    return 1;
}

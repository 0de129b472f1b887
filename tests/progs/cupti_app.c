/*
 * cupti_app.c: a "CUDA program" for the stub libcupti (stub_cupti.c). It does what the CUDA
 * driver does for an injected tool, calling InitializeInjection when the preloaded library
 * exports one (cuInit would), then has the stub run launches and copies on two threads, as CUDA
 * would under CUPTI. Its own output and exit status (3) never depend on the library.
 *
 * Usage: [CUPTI_APP_LOAD=LIB:LIB] cupti_app STUB_LIBCUPTI [LAUNCHES_PER_THREAD]
 *   thread A: LAUNCHES x kernel_a (5 us each)
 *   thread B: LAUNCHES x kernel_b (7 us each) and LAUNCHES/10 copies of 64 KiB
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*launch_fn)(const char *, int, uint64_t);
typedef int (*memcpy_fn)(uint64_t, int);

static launch_fn launch;
static memcpy_fn copy;
static int per_thread = 1000;

static void *thread_a(void *arg)
{
    (void)arg;
    launch("kernel_a", per_thread, 5000);
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++) {
        launch("kernel_b", per_thread / 10, 7000);
        copy(65536, per_thread / 100);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cupti_app STUB_LIBCUPTI [LAUNCHES_PER_THREAD]\n");
        return 2;
    }
    if (argc > 2) per_thread = atoi(argv[2]);
    /* CUPTI_APP_LOAD: libraries loaded first, as a Python program's `import torch` loads its CUDA
     * (colon-separated paths). */
    char load[4096];
    snprintf(load, sizeof load, "%s", getenv("CUPTI_APP_LOAD") ? getenv("CUPTI_APP_LOAD") : "");
    for (char *save = NULL, *lib = strtok_r(load, ":", &save); lib;
         lib = strtok_r(NULL, ":", &save))
        if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) {
            fprintf(stderr, "cupti_app: %s\n", dlerror());
            return 2;
        }
    int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
    if (init) init();
    void *stub = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!stub) {
        fprintf(stderr, "cupti_app: %s\n", dlerror());
        return 2;
    }
    launch = (launch_fn)dlsym(stub, "stubcupti_launch");
    copy = (memcpy_fn)dlsym(stub, "stubcupti_memcpy");
    if (!launch || !copy) return 2;
    pthread_t a, b;
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("cupti_app: %d launches and %d copies per run\n", 2 * per_thread, per_thread / 10);
    fprintf(stderr, "cupti_app: done\n");
    return 3;
}

/*
 * torch_dlopen.c: loads libtorch the way Python does, RTLD_LOCAL and by a name that is not
 * "libc10.so" (its dependencies come in as libc10.so.1.13), so that dlsym(RTLD_NEXT) cannot see
 * it; then calls c10::GradMode::set_enabled through the global scope (the preloaded hook, when
 * there is one) and asks libc10 what it thinks. Usage: torch_dlopen [PATH_TO_LIBTORCH_CPU]
 * (default: the one the tests were built with). Prints "grad mode after set_enabled(false): 0"
 * and exits 0.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    void *torch = dlopen(argc > 1 ? argv[1] : TORCH_CPU, RTLD_NOW | RTLD_LOCAL);
    if (!torch) {
        fprintf(stderr, "torch_dlopen: %s\n", dlerror());
        return 1;
    }
    /* The global scope has no libc10: the definition found here is the preloaded hook, if any. */
    void (*set_enabled)(bool) =
        (void (*)(bool))dlsym(RTLD_DEFAULT, "_ZN3c108GradMode11set_enabledEb");
    bool (*is_enabled)(void) = (bool (*)(void))dlsym(torch, "_ZN3c108GradMode10is_enabledEv");
    if (!set_enabled) set_enabled = (void (*)(bool))dlsym(torch, "_ZN3c108GradMode11set_enabledEb");
    if (!set_enabled || !is_enabled) return 1;
    set_enabled(false);
    printf("grad mode after set_enabled(false): %d\n", is_enabled());
    set_enabled(true);
    return 0;
}

/*
 * static_torch.c: stands in for a program with libtorch linked in statically: it defines
 * libtorch's grad-mode getters itself and loads no libc10.so. Built twice: static_torch keeps
 * the names in its symbol table only; static_torch_exported also exports them (-rdynamic).
 * Prints one line and exits 0.
 */
#include <stdbool.h>
#include <stdio.h>

/* c10::GradMode::is_enabled() and c10::InferenceMode::is_enabled(), by their linkage names. */
bool grad_mode_is_enabled(void) __asm__("_ZN3c108GradMode10is_enabledEv");
bool grad_mode_is_enabled(void)
{
    return true;
}

bool inference_mode_is_enabled(void) __asm__("_ZN3c1013InferenceMode10is_enabledEv");
bool inference_mode_is_enabled(void)
{
    return false;
}

int main(void)
{
    printf("grad mode %d, inference mode %d\n", grad_mode_is_enabled(),
           inference_mode_is_enabled());
    return 0;
}

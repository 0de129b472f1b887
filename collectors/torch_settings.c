/*
 * torch_settings.c: the libtorch collector's settings (docs/libtorch.md, "Settings"). What a
 * program changes between configurations without marking it: `torch.backends.cudnn.benchmark`,
 * `torch.backends.cudnn.allow_tf32`, `torch.backends.cuda.matmul.allow_tf32` and
 * `torch.set_float32_matmul_precision` (the same calls from C++: at::globalContext().set...).
 * Each reaches libtorch's at::Context setter through the PLT; the hook forwards first, then, when
 * the value differs from the last one recorded, appends one event with the time (the writer's
 * table `settings`). Values are taken from the setter's argument, never from a getter: a getter
 * may warn on the program's stderr in some versions. cuBLAS TF32 is the matmul precision
 * ("high" on, "highest" off), as libtorch itself keeps it. The report tells series apart by the
 * settings their iterations ran with (report/run/settings.c).
 *
 * Settings are the process's, not a thread's. A value set before recording began is not seen.
 */
#include "registry.h"
#include "torch_internal.h"
#include "../profiler/clock.h"
#include "../profiler/ring.h"
#include "../profiler/thread.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define IP_EXPORT      __attribute__((visibility("default")))
#define REAL(id, type) ((type)ip_torch_real_or_die(id))

/* at::Float32MatmulPrecision's order (1.13 and 2.x). */
enum { MATMUL_HIGHEST = 0, MATMUL_HIGH = 1, MATMUL_MEDIUM = 2 };

/* The last value recorded of each setting, -1 none yet. */
static _Atomic int32_t last[IP_SETTING_COUNT] = {-1, -1, -1};

const char *ip_torch_setting_name(uint32_t which)
{
    static const char *const names[IP_SETTING_COUNT] = {"cudnn.benchmark", "cudnn.allow_tf32",
                                                        "matmul.precision"};
    return which < IP_SETTING_COUNT ? names[which] : "?";
}

const char *ip_torch_setting_text(uint32_t which, int32_t value)
{
    if (which == IP_SETTING_MATMUL) {
        static const char *const p[] = {"highest", "high", "medium"};
        return value >= 0 && value <= MATMUL_MEDIUM ? p[value] : "?";
    }
    return value ? "on" : "off";
}

/* After a setter was forwarded: record the setting's value if it changed. */
static void setting_after(uint32_t which, int32_t value)
{
    ip_torch_seen(IP_TORCH_SEEN_SETTING);
    if (value < 0 || atomic_exchange(&last[which], value) == value) return;
    if (!ip_torch_enter()) return;
    struct ip_ring *r;
    struct ip_ev_torch_setting *e = ip_ring_begin(sizeof *e, &r);
    if (e) {
        e->h =
            (struct ip_ev){IP_EV_TYPE(IP_COLLECTOR_TORCH, IP_EV_TORCH_SETTING), sizeof *e, which};
        e->ts = ip_clock_now();
        e->value = value;
        e->pad = 0;
        ip_ring_commit(r, sizeof *e);
    }
    ip_hook_leave();
}

IP_EXPORT void ip_torch_set_benchmark(void *ctx, bool on) IP_TORCH_LINKAGE(SET_BENCHMARK);
void ip_torch_set_benchmark(void *ctx, bool on)
{
    REAL(IP_TORCH_R_SET_BENCHMARK, void (*)(void *, bool))(ctx, on);
    setting_after(IP_SETTING_BENCHMARK, on);
}

IP_EXPORT void ip_torch_set_tf32_cudnn(void *ctx, bool on) IP_TORCH_LINKAGE(SET_TF32_CUDNN);
void ip_torch_set_tf32_cudnn(void *ctx, bool on)
{
    REAL(IP_TORCH_R_SET_TF32_CUDNN, void (*)(void *, bool))(ctx, on);
    setting_after(IP_SETTING_TF32_CUDNN, on);
}

IP_EXPORT void ip_torch_set_tf32_cublas(void *ctx, bool on) IP_TORCH_LINKAGE(SET_TF32_CUBLAS);
void ip_torch_set_tf32_cublas(void *ctx, bool on)
{
    REAL(IP_TORCH_R_SET_TF32_CUBLAS, void (*)(void *, bool))(ctx, on);
    setting_after(IP_SETTING_MATMUL, on ? MATMUL_HIGH : MATMUL_HIGHEST);
}

/* at::Float32MatmulPrecision: an enum class of int's size, in one register. */
IP_EXPORT void ip_torch_set_matmul(void *ctx, int precision) IP_TORCH_LINKAGE(SET_MATMUL);
void ip_torch_set_matmul(void *ctx, int precision)
{
    REAL(IP_TORCH_R_SET_MATMUL, void (*)(void *, int))(ctx, precision);
    setting_after(IP_SETTING_MATMUL,
                  precision >= MATMUL_HIGHEST && precision <= MATMUL_MEDIUM ? precision : -1);
}

/* std::string in the C++11 ABI begins with its data pointer and its length. A name libtorch does
 * not know is its error to report: nothing is recorded. */
struct cxx11_string {
    const char *data;
    size_t len;
};

IP_EXPORT void ip_torch_set_matmul_str(void *ctx, const struct cxx11_string *s)
    IP_TORCH_LINKAGE(SET_MATMUL_STR);
void ip_torch_set_matmul_str(void *ctx, const struct cxx11_string *s)
{
    REAL(IP_TORCH_R_SET_MATMUL_STR, void (*)(void *, const struct cxx11_string *))(ctx, s);
    static const char *const names[] = {"highest", "high", "medium"};
    int32_t v = -1;
    for (int i = 0; s && s->data && i < 3; i++)
        if (s->len == strlen(names[i]) && !memcmp(s->data, names[i], s->len)) v = i;
    setting_after(IP_SETTING_MATMUL, v);
}

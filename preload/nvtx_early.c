/*
 * nvtx_early.c: NVTX from a library's constructor under plain LD_PRELOAD.
 *
 * Such a constructor runs before ours. NVTX3 reads NVTX_INJECTION64_PATH once, at a module's
 * first NVTX call, and keeps its static-injection pointer hidden in each library (a `#pragma GCC
 * visibility push(hidden)` in nvtxImpl.h), so the only door is the variable itself: `infprof
 * run` sets it before exec; under plain LD_PRELOAD our constructor sets it too late, and the
 * library's NVTX stayed silent for the whole run. Until our constructor begins, a lookup of that
 * unset variable answers this library's own path: the library's NVTX then loads us (already
 * loaded: the same copy) and collectors/nvtx.c starts the run there, as under `infprof run`.
 * Every other lookup, and every one after our constructor began, is glibc's own answer.
 */
#include "../profiler/lifecycle.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define IP_EXPORT __attribute__((visibility("default")))

static _Atomic int early_over;   /* our constructor began: lookups are glibc's alone */
static _Atomic int early_filled; /* 0 not yet, 1 filling, 2 early_path holds our path */
static char early_path[PATH_MAX];

void ip_preload_nvtx_early_over(void)
{
    atomic_store(&early_over, 1);
}

extern char **environ;
static __thread int early_resolving __attribute__((tls_model("initial-exec")));

/* glibc's own lookup, for a getenv made while dlsym finds the next one (a preloaded allocator
 * whose first malloc reads its settings). */
static char *early_environ(const char *name)
{
    size_t n = strlen(name);
    for (char **e = environ; n && e && *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

static char *(*early_next(void))(const char *)
{
    static char *(*_Atomic next)(const char *);
    char *(*fn)(const char *) = atomic_load_explicit(&next, memory_order_acquire);
    if (fn || early_resolving) return fn;
    early_resolving = 1;
    fn = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");
    early_resolving = 0;
    atomic_store_explicit(&next, fn, memory_order_release);
    return fn;
}

/* Our path, once; NULL where we should stay out (switched off, NVTX capture off, linked into a
 * program rather than preloaded). */
static char *early_self(char *(*next)(const char *))
{
    const char *on = next("INFPROF_ENABLE"), *nvtx = next("INFPROF_NVTX");
    if ((on && !strcmp(on, "0")) || (nvtx && !strcmp(nvtx, "0"))) return NULL;
    int expect = 0;
    if (atomic_compare_exchange_strong(&early_filled, &expect, 1)) {
        int ok = ip_lifecycle_library_path(early_path, sizeof early_path) == 0;
        atomic_store(&early_filled, ok ? 2 : 3);
    }
    return atomic_load(&early_filled) == 2 ? early_path : NULL;
}

/* getenv itself, exported under glibc's name (the alias below). */
static char *early_getenv(const char *name)
{
    char *(*next)(const char *) = early_next();
    if (!next) return early_environ(name);
    char *v = next(name);
    if (v || atomic_load_explicit(&early_over, memory_order_relaxed) ||
        strcmp(name, "NVTX_INJECTION64_PATH") != 0)
        return v;
    return early_self(next);
}

IP_EXPORT char *getenv(const char *name) __attribute__((alias("early_getenv")));

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

static char *(*early_next(void))(const char *)
{
    static char *(*next)(const char *);
    if (!next) next = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");
    return next;
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
    char *v = next ? next(name) : NULL;
    if (v || !next || atomic_load_explicit(&early_over, memory_order_relaxed) ||
        strcmp(name, "NVTX_INJECTION64_PATH") != 0)
        return v;
    return early_self(next);
}

IP_EXPORT char *getenv(const char *name) __attribute__((alias("early_getenv")));

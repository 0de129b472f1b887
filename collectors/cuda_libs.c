/*
 * cuda_libs.c: where to look for a CUDA library the program did not load itself (libcupti), in
 * the folders its own CUDA came from, before the system's.
 *
 * A program whose PyTorch came from pip has CUDA's runtime, CUPTI and cuDNN in pip's `nvidia`
 * packages (site-packages/nvidia/<package>/lib for CUDA 12 wheels; for CUDA 13 ones, as their
 * RECORD files list them, nvidia/cu13/lib/libcudart.so.13 and libcupti.so.13 together, and
 * nvidia/cudnn/lib/libcudnn.so.9), often with no toolkit on the machine, and torch's
 * libtorch_cuda.so finds them through its RUNPATH ($ORIGIN/../../nvidia/...). Candidates, best
 * first: the copy already loaded (torch's profiler may have loaded it); the folder of each loaded
 * CUDA library (libcudart, libcudnn, libcublas, libnvrtc) and that folder's pip sibling
 * (nvidia/<package>/lib beside nvidia/<x>/lib); the RUNPATH entries of a loaded libtorch_cuda.so,
 * $ORIGIN expanded. Each comes with the words that say where it came from, for the run header.
 */
#include "cuda_libs.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The libraries whose folder is where the process's CUDA came from. */
static const char *const cuda_libs_known[] = {"libcudart.so", "libcudnn", "libcublas", "libnvrtc"};

struct cuda_libs_scan {
    const char *soname;
    const char *const *pip_packages;
    struct cuda_lib_candidate *out;
    int n, max;
    char torch_cuda[PATH_MAX]; /* a loaded libtorch_cuda.so, "" none */
};

static void cuda_libs_add(struct cuda_libs_scan *s, const char *dir, const char *file,
                          const char *how)
{
    if (s->n >= s->max) return;
    struct cuda_lib_candidate *c = &s->out[s->n];
    char joined[PATH_MAX];
    if (snprintf(joined, sizeof joined, "%s/%s", dir, file) >= (int)sizeof joined) return;
    /* The file itself, its path without "..": what the run header shows. */
    if (!realpath(joined, c->path) || access(c->path, R_OK) != 0) return;
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->out[i].path, c->path)) return; /* once, at its best place */
    snprintf(c->how, sizeof c->how, "%s", how);
    s->n++;
}

/* dir ends in nvidia/<x>/lib: the same soname in nvidia/<package>/lib, for each of the pip
 * folders it may be in (CUDA 12 wheels: one package a library; CUDA 13: nvidia/cu13/lib). */
static void cuda_libs_sibling(struct cuda_libs_scan *s, const char *dir, const char *loaded)
{
    char up[PATH_MAX];
    size_t n = strlen(dir);
    if (n < 4 || strcmp(dir + n - 4, "/lib") != 0 || n >= sizeof up) return;
    memcpy(up, dir, n - 4);
    up[n - 4] = 0;
    char *pkg = strrchr(up, '/');
    if (!pkg || pkg - up < 7 || strncmp(pkg - 7, "/nvidia", 7) != 0) return;
    for (const char *const *p = s->pip_packages; *p; p++) {
        char how[128];
        snprintf(how, sizeof how, "pip's nvidia/%.30s, beside the loaded %.40s", *p, loaded);
        snprintf(pkg + 1, sizeof up - (size_t)(pkg + 1 - up), "%s/lib", *p);
        cuda_libs_add(s, up, s->soname, how);
    }
}

static int cuda_libs_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct cuda_libs_scan *s = arg;
    const char *path = info->dlpi_name;
    const char *base = path ? strrchr(path, '/') : NULL;
    if (!base) return 0;
    base++;
    char dir[PATH_MAX];
    size_t dn = (size_t)(base - 1 - path);
    if (dn >= sizeof dir) return 0;
    memcpy(dir, path, dn);
    dir[dn] = 0;
    if (!strncmp(base, "libtorch_cuda.so", 16) && !s->torch_cuda[0])
        snprintf(s->torch_cuda, sizeof s->torch_cuda, "%s", path);
    for (size_t i = 0; i < sizeof cuda_libs_known / sizeof *cuda_libs_known; i++) {
        if (strncmp(base, cuda_libs_known[i], strlen(cuda_libs_known[i])) != 0) continue;
        char how[128];
        snprintf(how, sizeof how, "beside the loaded %.60s", base);
        cuda_libs_add(s, dir, s->soname, how);
        cuda_libs_sibling(s, dir, base);
    }
    return 0;
}

/* The RUNPATH (else RPATH) folders of the loaded libtorch_cuda.so, read from its dynamic section
 * with $ORIGIN expanded to its folder (dlinfo's RTLD_DI_SERINFO lists them too, but glibc does
 * not say which entries are the object's own). */
static void cuda_libs_runpath(struct cuda_libs_scan *s)
{
    void *h = dlopen(s->torch_cuda, RTLD_LAZY | RTLD_NOLOAD);
    struct link_map *m = NULL;
    if (!h) return;
    if (dlinfo(h, RTLD_DI_LINKMAP, &m) != 0 || !m || !m->l_ld) {
        dlclose(h);
        return;
    }
    const char *strtab = NULL;
    long runpath = -1, rpath = -1;
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB) {
            ElfW(Addr) a = d->d_un.d_ptr;
            strtab = (const char *)(a < m->l_addr ? a + m->l_addr : a); /* relocated or not */
        } else if (d->d_tag == DT_RUNPATH) {
            runpath = (long)d->d_un.d_val;
        } else if (d->d_tag == DT_RPATH) {
            rpath = (long)d->d_un.d_val;
        }
    }
    long at = runpath >= 0 ? runpath : rpath;
    char list[4096], origin[PATH_MAX];
    const char *slash = strrchr(s->torch_cuda, '/');
    if (strtab && at >= 0 && slash && (size_t)(slash - s->torch_cuda) < sizeof origin) {
        memcpy(origin, s->torch_cuda, (size_t)(slash - s->torch_cuda));
        origin[slash - s->torch_cuda] = 0;
        snprintf(list, sizeof list, "%s", strtab + at);
        for (char *save = NULL, *e = strtok_r(list, ":", &save); e;
             e = strtok_r(NULL, ":", &save)) {
            char dir[PATH_MAX];
            const char *rest = !strncmp(e, "$ORIGIN", 7)     ? e + 7
                               : !strncmp(e, "${ORIGIN}", 9) ? e + 9
                                                             : NULL;
            if (rest)
                snprintf(dir, sizeof dir, "%s%s", origin, rest);
            else
                snprintf(dir, sizeof dir, "%s", e);
            cuda_libs_add(s, dir, s->soname, "in the RUNPATH of torch's libtorch_cuda.so");
        }
    }
    dlclose(h);
}

int ip_cuda_lib_candidates(const char *soname, const char *const *pip_packages,
                           struct cuda_lib_candidate *out, int max)
{
    struct cuda_libs_scan s = {soname, pip_packages, out, 0, max, ""};
    void *loaded = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (loaded) {
        struct link_map *m = NULL;
        if (dlinfo(loaded, RTLD_DI_LINKMAP, &m) == 0 && m && m->l_name && m->l_name[0] &&
            s.n < max) {
            snprintf(out[s.n].path, sizeof out[s.n].path, "%s", m->l_name);
            snprintf(out[s.n].how, sizeof out[s.n].how, "already loaded by the program");
            s.n++;
        }
        dlclose(loaded);
    }
    dl_iterate_phdr(cuda_libs_visit, &s);
    if (s.torch_cuda[0]) cuda_libs_runpath(&s);
    return s.n;
}

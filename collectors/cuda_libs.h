/*
 * cuda_libs.h: candidate paths of a CUDA library in the folders the process's own CUDA came from
 * (pip's nvidia packages, torch's RUNPATH), best first (cuda_libs.c).
 */
#ifndef IP_CUDA_LIBS_H
#define IP_CUDA_LIBS_H

#include <limits.h>

struct cuda_lib_candidate {
    char path[PATH_MAX];
    char how[128]; /* where it came from, for the run header: "beside the loaded libcudart..." */
};

/* Up to max readable candidates for soname ("libcupti.so.13"); pip_packages, NULL-terminated,
 * are the pip folders it may be in (nvidia/<package>/lib: "cuda_cupti", "cu13"). Returns how
 * many. */
int ip_cuda_lib_candidates(const char *soname, const char *const *pip_packages,
                           struct cuda_lib_candidate *out, int max);

#endif

/*
 * run_asan.c: a program built with AddressSanitizer needs the ASan runtime first in the list of
 * loaded libraries; `infprof run` preloads libinfprof.so, which would come before it, and the
 * program would stop at once ("ASan runtime does not come first"). Here: does the program need
 * libasan (a DT_NEEDED entry of its ELF file), and where is that library (the directories the
 * loader searches by default, and LD_LIBRARY_PATH)?
 */
#include "run_asan.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The program's file as execvp would find it. */
static int program_file(const char *prog, char *out, size_t n)
{
    if (strchr(prog, '/')) return snprintf(out, n, "%s", prog) < (int)n ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        if (snprintf(out, n, "%.*s/%s", (int)len, len ? path : ".", prog) < (int)n &&
            access(out, X_OK) == 0)
            return 0;
        path += len + (path[len] == ':');
    }
    return -1;
}

/* The DT_NEEDED name of the ELF file at `file` that begins with `prefix`, into out. */
static int needed_with_prefix(const char *file, const char *prefix, char *out, size_t n)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(Elf64_Ehdr))
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return -1;
    const unsigned char *base = map;
    size_t size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = map;
    int found = -1;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
        eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff < size &&
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) >= eh->e_shnum) {
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
        for (unsigned i = 0; i < eh->e_shnum && found < 0; i++) {
            if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh->e_shnum) continue;
            const Elf64_Shdr *str = &sh[sh[i].sh_link];
            if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
                str->sh_offset > size || str->sh_size > size - str->sh_offset)
                continue;
            const Elf64_Dyn *d = (const Elf64_Dyn *)(base + sh[i].sh_offset);
            size_t nd = sh[i].sh_size / sizeof *d;
            for (size_t k = 0; k < nd && d[k].d_tag != DT_NULL; k++) {
                if (d[k].d_tag != DT_NEEDED || d[k].d_un.d_val >= str->sh_size) continue;
                const char *name = (const char *)base + str->sh_offset + d[k].d_un.d_val;
                size_t left = str->sh_size - d[k].d_un.d_val;
                if (strnlen(name, left) < left && !strncmp(name, prefix, strlen(prefix)) &&
                    snprintf(out, n, "%s", name) < (int)n) {
                    found = 0;
                    break;
                }
            }
        }
    }
    munmap(map, size);
    return found;
}

/* `name` in LD_LIBRARY_PATH's directories, then the default ones. */
static int library_file(const char *name, char *out, size_t n)
{
    static const char *const dirs[] = {"/lib/x86_64-linux-gnu",
                                       "/usr/lib/x86_64-linux-gnu",
                                       "/lib64",
                                       "/usr/lib64",
                                       "/lib",
                                       "/usr/lib",
                                       "/usr/local/lib"};
    const char *lp = getenv("LD_LIBRARY_PATH");
    while (lp && *lp) {
        size_t len = strcspn(lp, ":");
        if (len && snprintf(out, n, "%.*s/%s", (int)len, lp, name) < (int)n &&
            access(out, R_OK) == 0)
            return 0;
        lp += len + (lp[len] == ':');
    }
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (snprintf(out, n, "%s/%s", dirs[i], name) < (int)n && access(out, R_OK) == 0) return 0;
    return -1;
}

int run_asan_runtime(const char *prog, char *out, size_t n)
{
    char file[PATH_MAX], name[256];
    if (program_file(prog, file, sizeof file) != 0) return -1;
    if (needed_with_prefix(file, "libasan.so", name, sizeof name) != 0 &&
        needed_with_prefix(file, "libclang_rt.asan", name, sizeof name) != 0)
        return -1;
    return library_file(name, out, n);
}

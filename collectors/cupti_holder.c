/*
 * cupti_holder.c: who else holds CUPTI. When cuptiSubscribe refuses us because another client
 * subscribed first, CUPTI 13 passes that client's name back, but compute-sanitizer (seen on an
 * H100) and older tools give none ("<not provided>"). Then the tool is named from what it left in
 * the process: a library of its own mapped in, CUDA_INJECTION64_PATH, LD_PRELOAD. When nothing
 * identifies it, the line says so plainly rather than guess.
 *
 * Called once, from InitializeInjection (the driver's cuInit, an ordinary point of the program):
 * it reads /proc/self/maps with plain read(2) into a stack buffer.
 */
#include "cupti_internal.h"
#include "../profiler/fdguard.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Markers in a library's file name, and the tool they belong to. */
static const struct {
    const char *marker, *tool;
} holder_tools[] = {
    {"sanitizer", "compute-sanitizer"},
    {"TreeLauncher", "Nsight Systems"},
    {"ToolsInjection", "Nsight Systems"},
    {"nsys", "Nsight Systems"},
    {"InterceptorInjection", "Nsight Compute"},
    {"nvperf", "Nsight Compute"},
    {"cudbg", "cuda-gdb"},
    {"kineto", "torch.profiler (Kineto)"},
};

/* The tool a library path belongs to, or NULL. */
const char *ip_cupti_holder_tool(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof holder_tools / sizeof holder_tools[0]; i++)
        if (strcasestr(base, holder_tools[i].marker)) return holder_tools[i].tool;
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* The first mapped library that belongs to a known tool: its tool and file name. */
static int holder_from_maps(char *out, size_t n)
{
    int fd = ip_fdguard_open_own("/proc/self/maps", O_RDONLY, 0);
    if (fd < 0) return 0;
    char buf[8192], line[4096];
    size_t len = 0;
    int found = 0;
    ssize_t got;
    while (!found && (got = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < got && !found; i++) {
            if (buf[i] != '\n') {
                if (len < sizeof line - 1) line[len++] = buf[i];
                continue;
            }
            line[len] = 0;
            len = 0;
            const char *path = strchr(line, '/');
            const char *tool = path ? ip_cupti_holder_tool(path) : NULL;
            if (tool) {
                snprintf(out, n, "%s (%s is loaded)", tool, base_name(path));
                found = 1;
            }
        }
    }
    ip_fdguard_close_own(fd);
    return found;
}

/* A library named in an environment list (':' or ' ' separated) that belongs to a known tool. */
static int holder_from_env(const char *var, char *out, size_t n)
{
    const char *v = getenv(var);
    if (!v) return 0;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", v);
    for (char *save = NULL, *p = strtok_r(copy, ": ", &save); p; p = strtok_r(NULL, ": ", &save)) {
        const char *tool = ip_cupti_holder_tool(p);
        if (tool) {
            snprintf(out, n, "%s (%s in %s)", tool, base_name(p), var);
            return 1;
        }
    }
    return 0;
}

void ip_cupti_name_holder(const char *reported, char *out, size_t n)
{
    if (reported && reported[0] && strcmp(reported, "<not provided>") != 0) {
        snprintf(out, n, "%s", reported);
        return;
    }
    if (holder_from_maps(out, n) || holder_from_env("CUDA_INJECTION64_PATH", out, n) ||
        holder_from_env("LD_PRELOAD", out, n))
        return;
    snprintf(out, n,
             "another CUPTI client that gave no name (none of the libraries of Nsight Systems,"
             " Nsight Compute, compute-sanitizer or cuda-gdb is loaded; torch.profiler holds"
             " CUPTI from inside the process)");
}

/*
 * nvtx_tool.c: a stand-in for Nsight Systems as an NVTX tool: an injection library
 * (NVTX_INJECTION64_PATH) that writes the ranges it is given to the file named by
 * NVTX_TOOL_LOG, one line each: "push DOMAIN TEXT", "pop DOMAIN". The tests point NVTX at it
 * before infprof starts, so infprof chains to it and the ranges infprof emits must arrive here.
 */
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

struct named {
    char text[128];
};

static void say(const char *fmt, const char *a, const char *b)
{
    const char *path = getenv("NVTX_TOOL_LOG");
    if (!path) return;
    char line[320];
    int n = snprintf(line, sizeof line, fmt, a, b);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) return;
    if (write(fd, line, (size_t)n) < 0) {
    }
    close(fd);
}

static struct named *named(const char *text)
{
    struct named *p = calloc(1, sizeof *p);
    if (p) snprintf(p->text, sizeof p->text, "%s", text ? text : "");
    return p;
}

static const char *domain_name(nvtxDomainHandle_t d)
{
    return d ? ((struct named *)(void *)d)->text : "default";
}

static const char *message(const nvtxEventAttributes_t *a)
{
    if (!a) return "";
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return a->message.ascii;
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
        return ((struct named *)(void *)a->message.registered)->text;
    return "?";
}

static nvtxDomainHandle_t NVTX_API t_DomainCreateA(const char *name)
{
    return (nvtxDomainHandle_t)(void *)named(name);
}

static nvtxStringHandle_t NVTX_API t_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)(void *)named(s);
}

static int NVTX_API t_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    say("push %s %s\n", domain_name(d), message(a));
    return 0;
}

static int NVTX_API t_DomainRangePop(nvtxDomainHandle_t d)
{
    say("pop %s%s\n", domain_name(d), "");
    return 0;
}

static int NVTX_API t_RangePushA(const char *m)
{
    say("push %s %s\n", "default", m);
    return 0;
}

static int NVTX_API t_RangePop(void)
{
    say("pop %s%s\n", "default", "");
    return 0;
}

static void put(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, unsigned id,
                NvtxFunctionPointer fn)
{
    NvtxFunctionTable t;
    unsigned n;
    if (cb->GetModuleFunctionTable(module, &t, &n) && id < n && t[id]) *t[id] = fn;
}

API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    const NvtxExportTableCallbacks *cb = get_table(NVTX_ETID_CALLBACKS);
    if (!cb || !cb->GetModuleFunctionTable) return 0;
    put(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)t_RangePushA);
    put(cb, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)t_RangePop);
    put(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainCreateA,
        (NvtxFunctionPointer)t_DomainCreateA);
    put(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRegisterStringA,
        (NvtxFunctionPointer)t_DomainRegisterStringA);
    put(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePushEx,
        (NvtxFunctionPointer)t_DomainRangePushEx);
    put(cb, NVTX_CB_MODULE_CORE2, NVTX_CBID_CORE2_DomainRangePop,
        (NvtxFunctionPointer)t_DomainRangePop);
    return 1;
}

/*
 * nvtx_tool.c: a small NVTX injection library that stands in for Nsight Systems in the tests.
 * Point NVTX_INJECTION64_PATH at it (infprof, preloaded, then chains to it); it appends one line
 * per NVTX call it receives to the file NVTX_TOOL_LOG names (O_APPEND, one write per line):
 *
 *   domain NAME                    nvtxDomainCreateA
 *   push DOMAIN TID TEXT           nvtxRangePush*, nvtxDomainRangePushEx
 *   pop DOMAIN TID
 *   start DOMAIN ID TID TEXT       nvtxRangeStart*, nvtxDomainRangeStartEx
 *   end DOMAIN ID TID
 *   mark DOMAIN TID TEXT
 *
 * DOMAIN is the domain's name ("-" for the default domain); registered strings are resolved, so
 * TEXT is always the text. Ids are the tool's own, as Nsight's would be.
 */
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_DOMAINS 64
#define MAX_STRINGS 1024

static int log_fd = -1;
static char domains[MAX_DOMAINS][64];
static _Atomic unsigned ndomains;
static char strings[MAX_STRINGS][128];
static _Atomic unsigned nstrings;
static _Atomic uint64_t next_id = 1;

static void emit(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || log_fd < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(log_fd, line, (size_t)n) < 0) return;
}

static unsigned tid(void)
{
    return (unsigned)syscall(SYS_gettid);
}

static const char *domain_name(nvtxDomainHandle_t d)
{
    uintptr_t i = (uintptr_t)d;
    return i == 0 ? "-" : i <= MAX_DOMAINS ? domains[i - 1] : "?";
}

static const char *text_of(const nvtxEventAttributes_t *a)
{
    if (!a) return "";
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return a->message.ascii;
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        uintptr_t i = (uintptr_t)a->message.registered;
        return i && i <= MAX_STRINGS ? strings[i - 1] : "?";
    }
    return "?";
}

static __thread int depth; /* push levels of the calling thread */

static void NVTX_API t_MarkA(const char *m)
{
    emit("mark - %u %s", tid(), m);
}

static void NVTX_API t_MarkEx(const nvtxEventAttributes_t *a)
{
    emit("mark - %u %s", tid(), text_of(a));
}

static nvtxRangeId_t start(nvtxDomainHandle_t d, const char *text)
{
    uint64_t id = atomic_fetch_add(&next_id, 1);
    emit("start %s %llu %u %s", domain_name(d), (unsigned long long)id, tid(), text);
    return id;
}

static nvtxRangeId_t NVTX_API t_RangeStartA(const char *m)
{
    return start(NULL, m);
}

static nvtxRangeId_t NVTX_API t_RangeStartEx(const nvtxEventAttributes_t *a)
{
    return start(NULL, text_of(a));
}

static void NVTX_API t_RangeEnd(nvtxRangeId_t id)
{
    emit("end - %llu %u", (unsigned long long)id, tid());
}

static int NVTX_API t_RangePushA(const char *m)
{
    emit("push - %u %s", tid(), m);
    return depth++;
}

static int NVTX_API t_RangePushEx(const nvtxEventAttributes_t *a)
{
    emit("push - %u %s", tid(), text_of(a));
    return depth++;
}

static int NVTX_API t_RangePop(void)
{
    emit("pop - %u", tid());
    return --depth;
}

static void NVTX_API t_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    emit("mark %s %u %s", domain_name(d), tid(), text_of(a));
}

static nvtxRangeId_t NVTX_API t_DomainRangeStartEx(nvtxDomainHandle_t d,
                                                   const nvtxEventAttributes_t *a)
{
    return start(d, text_of(a));
}

static void NVTX_API t_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    emit("end %s %llu %u", domain_name(d), (unsigned long long)id, tid());
}

static int NVTX_API t_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    emit("push %s %u %s", domain_name(d), tid(), text_of(a));
    return depth++;
}

static int NVTX_API t_DomainRangePop(nvtxDomainHandle_t d)
{
    emit("pop %s %u", domain_name(d), tid());
    return --depth;
}

static nvtxStringHandle_t NVTX_API t_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    unsigned i = atomic_fetch_add(&nstrings, 1);
    if (i >= MAX_STRINGS) return NULL;
    snprintf(strings[i], sizeof strings[i], "%s", s);
    return (nvtxStringHandle_t)(uintptr_t)(i + 1);
}

static nvtxDomainHandle_t NVTX_API t_DomainCreateA(const char *name)
{
    for (unsigned i = 0; i < atomic_load(&ndomains) && i < MAX_DOMAINS; i++)
        if (strcmp(domains[i], name) == 0) return (nvtxDomainHandle_t)(uintptr_t)(i + 1);
    unsigned i = atomic_fetch_add(&ndomains, 1);
    if (i >= MAX_DOMAINS) return NULL;
    snprintf(domains[i], sizeof domains[i], "%s", name);
    emit("domain %s", name);
    return (nvtxDomainHandle_t)(uintptr_t)(i + 1);
}

static void set(NvtxFunctionTable t, unsigned n, unsigned id, NvtxFunctionPointer fn)
{
    if (id < n && t[id]) *t[id] = fn;
}

#define SET(t, n, id, fn) set(t, n, id, (NvtxFunctionPointer)fn)

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    if (log_fd < 0) {
        const char *path = getenv("NVTX_TOOL_LOG");
        if (path) log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
    const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    if (!cb || !cb->GetModuleFunctionTable) return 0;
    NvtxFunctionTable t;
    unsigned n;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
        SET(t, n, NVTX_CBID_CORE_MarkA, t_MarkA);
        SET(t, n, NVTX_CBID_CORE_MarkEx, t_MarkEx);
        SET(t, n, NVTX_CBID_CORE_RangeStartA, t_RangeStartA);
        SET(t, n, NVTX_CBID_CORE_RangeStartEx, t_RangeStartEx);
        SET(t, n, NVTX_CBID_CORE_RangeEnd, t_RangeEnd);
        SET(t, n, NVTX_CBID_CORE_RangePushA, t_RangePushA);
        SET(t, n, NVTX_CBID_CORE_RangePushEx, t_RangePushEx);
        SET(t, n, NVTX_CBID_CORE_RangePop, t_RangePop);
    }
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
        SET(t, n, NVTX_CBID_CORE2_DomainMarkEx, t_DomainMarkEx);
        SET(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, t_DomainRangeStartEx);
        SET(t, n, NVTX_CBID_CORE2_DomainRangeEnd, t_DomainRangeEnd);
        SET(t, n, NVTX_CBID_CORE2_DomainRangePushEx, t_DomainRangePushEx);
        SET(t, n, NVTX_CBID_CORE2_DomainRangePop, t_DomainRangePop);
        SET(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, t_DomainRegisterStringA);
        SET(t, n, NVTX_CBID_CORE2_DomainCreateA, t_DomainCreateA);
    }
    return 1;
}

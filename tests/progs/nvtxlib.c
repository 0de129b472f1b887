/*
 * nvtxlib.c: a shared library that uses NVTX before and after the program runs: 100 ranges in
 * its constructor, 100 in an atexit handler it registers there, 100 in its destructor, and 100
 * through a domain it creates in its constructor (a C++ global's nvtxDomainCreateA). Linked into
 * nvtxlib_app, whose own main makes 100 more (tests/core/test_hostile3.py).
 */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>

static nvtxDomainHandle_t lib_domain;

static void ranges(const char *name, int n)
{
    for (int i = 0; i < n; i++) {
        nvtxRangePushA(name);
        nvtxRangePop();
    }
}

static void lib_atexit(void)
{
    ranges("lib atexit", 100);
}

__attribute__((constructor)) static void lib_init(void)
{
    lib_domain = nvtxDomainCreateA("nvtxlib");
    ranges("lib constructor", 100);
    atexit(lib_atexit);
}

__attribute__((visibility("default"))) void nvtxlib_work(void)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "lib domain";
    for (int i = 0; i < 100; i++) {
        nvtxDomainRangePushEx(lib_domain, &a);
        nvtxDomainRangePop(lib_domain);
    }
}

__attribute__((destructor)) static void lib_fini(void)
{
    ranges("lib destructor", 100);
}

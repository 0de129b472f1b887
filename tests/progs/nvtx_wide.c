/*
 * nvtx_wide.c: a program that names its NVTX ranges, marks, domain, registered string and thread
 * with wide strings (the W entry points and unicode messages), under the C locale, with names
 * outside ASCII (tests/core/test_nvtx_wide.py). Each of N iterations is a narrow range
 * "iteration step" holding a wide range "prä" around 100 us of work, then 3 ms of work of its
 * own: unwrapped, the wide push left the stack one short and its pop ended the iteration
 * (131 us read for 3 ms). Usage: nvtx_wide N; prints the mean iteration in ns by its own clock.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t ns)
{
    uint64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    nvtxDomainHandle_t d = nvtxDomainCreateW(L"appé");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringW(d, L"registriert ü");
    nvtxNameOsThreadW((uint32_t)syscall(SYS_gettid), L"wörker");
    nvtxMarkW(L"bereit \u2713");
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = now_ns();
        nvtxRangePushA("iteration step");
        nvtxRangePushW(L"prä");
        spin(100000);
        nvtxRangePop();
        spin(3000000);
        nvtxRangePop();
        total += now_ns() - t0;
    }
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"größe \U0001F600";
    nvtxRangePushEx(&a);
    nvtxRangePop();
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg;
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);
    nvtxRangeEnd(nvtxRangeStartW(L"ganz"));
    printf("mean %llu\n", (unsigned long long)(total / (uint64_t)n));
    return 0;
}

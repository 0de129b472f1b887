/*
 * nvtx_ranges.c: a plain C program that marks its work with NVTX ranges (the events a test can
 * count without a GPU or libtorch). Usage: nvtx_ranges [ITERATIONS] [RANGE_TEXT]
 * Prints one line per iteration to stdout.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    const char *text = argc > 2 ? argv[2] : "iteration batch=4";
    nvtxDomainHandle_t d = nvtxDomainCreateA("app");
    nvtxRangePushA("setup");
    nvtxMarkA("ready");
    nvtxRangePop();
    for (int i = 0; i < n; i++) {
        nvtxRangePushA(text);
        nvtxEventAttributes_t a = {0};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "inner";
        nvtxDomainRangePushEx(d, &a);
        printf("iteration %d\n", i);
        nvtxDomainRangePop(d);
        nvtxRangePop();
    }
    nvtxRangeId_t r = nvtxRangeStartA("whole");
    nvtxRangeEnd(r);
    return 0;
}

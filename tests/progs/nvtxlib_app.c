/* nvtxlib_app.c: a program linked to libnvtxlib.so (nvtxlib.c); 100 NVTX ranges of its own. */
#include <nvtx3/nvToolsExt.h>

void nvtxlib_work(void);

int main(void)
{
    nvtxlib_work();
    for (int i = 0; i < 100; i++) {
        nvtxRangePushA("main");
        nvtxRangePop();
    }
    return 0;
}

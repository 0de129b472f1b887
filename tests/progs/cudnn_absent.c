/*
 * cudnn_absent.c: a program that finds cuDNN functions at run time (dlsym) where no cuDNN is
 * loaded. Alone it finds none; under infprof it finds our wrappers, which have no real function
 * to forward to and must answer CUDNN_STATUS_NOT_INITIALIZED, without crashing.
 */
#include <cudnn.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    cudnnStatus_t (*create)(cudnnHandle_t *) =
        (cudnnStatus_t(*)(cudnnHandle_t *))dlsym(RTLD_DEFAULT, "cudnnCreate");
    cudnnStatus_t (*execute)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t) =
        (cudnnStatus_t(*)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t))dlsym(
            RTLD_DEFAULT, "cudnnBackendExecute");
    if (!create || !execute) {
        printf("no cudnn\n");
        return 0;
    }
    cudnnHandle_t h = NULL;
    printf("create %d\n", (int)create(&h));
    printf("execute %d\n", (int)execute(h, NULL, NULL));
    printf("execute %d\n", (int)execute(h, NULL, NULL));
    return 0;
}

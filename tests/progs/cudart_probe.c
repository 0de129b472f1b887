/*
 * cudart_probe.c: a CUDA runtime program that needs no GPU to run: asks for the device count
 * and prints the answer. Without a driver that answer is an error, which it prints and survives.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void)
{
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount: %s, %d device(s)\n", e == cudaSuccess ? "ok" : "error",
           e == cudaSuccess ? n : 0);
    return e == cudaSuccess ? 0 : 3;
}

// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_cuda.cu - the CUDA implementation of the device interface (dev.h):
 * an SGP's buffers are device memory, copied with cudaMemcpy. Built only
 * when nvcc is found (module.mk); select with pdbp_set_device(&pdbp_dev_cuda).
 */
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "dev.h"

static int cuda_to_host(void *host, const void *dev, size_t n)
{
    cudaError_t e = cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess)
        fprintf(stderr, "pdbp: cudaMemcpy to host: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : -1;
}

static int cuda_from_host(void *dev, const void *host, size_t n)
{
    cudaError_t e = cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice);
    if (e != cudaSuccess)
        fprintf(stderr, "pdbp: cudaMemcpy to device: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : -1;
}

static void *cuda_alloc(size_t n)
{
    void *p = NULL;
    return cudaMalloc(&p, n) == cudaSuccess ? p : NULL;
}

static void cuda_release(void *p)
{
    cudaFree(p);
}

extern const struct pdbp_dev_ops pdbp_dev_cuda;
const struct pdbp_dev_ops pdbp_dev_cuda = {
    "cuda", cuda_to_host, cuda_from_host, cuda_alloc, cuda_release,
};

/* 1 if a CUDA device can be used, else 0 with the reason in why. */
int pdbp_cuda_available(const char **why)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        *why = cudaGetErrorString(e);
        return 0;
    }
    if (n == 0) {
        *why = "no CUDA device";
        return 0;
    }
    return 1;
}
}

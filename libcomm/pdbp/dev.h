/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dev.h - the one interface SGP device transfers go through. A stream GP's
 * buffers live in device memory; sendData copies them to host memory with
 * to_host and recvData copies into them with from_host.
 *
 * pdbp_dev_host: host memory (memcpy), always built, used by the tests.
 * pdbp_dev_cuda: CUDA (cudaMemcpy), built only when nvcc is found; see
 * dev_cuda.c. Select with pdbp_set_device() before prcsReg of an SGP.
 */
#ifndef PDBP_DEV_H
#define PDBP_DEV_H

#include <stddef.h>

struct pdbp_dev_ops {
    const char *name;
    int (*to_host)(void *host, const void *dev, size_t n);   /* 0 or -1 */
    int (*from_host)(void *dev, const void *host, size_t n); /* 0 or -1 */
    void *(*alloc)(size_t n);
    void (*release)(void *p);
};

extern const struct pdbp_dev_ops pdbp_dev_host;

/* Device back end used by SGPs registered from now on (NULL: host). */
void pdbp_set_device(const struct pdbp_dev_ops *ops);

#endif

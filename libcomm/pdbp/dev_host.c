// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_host.c - the host-memory implementation of the device interface: an
 * SGP whose "device" is ordinary memory. Lets every SGP path run and be
 * tested on machines without a GPU.
 */
#include "dev.h"

#include <stdlib.h>
#include <string.h>

static int host_copy_out(void *host, const void *dev, size_t n)
{
    memcpy(host, dev, n);
    return 0;
}

static int host_copy_in(void *dev, const void *host, size_t n)
{
    memcpy(dev, host, n);
    return 0;
}

const struct pdbp_dev_ops pdbp_dev_host = {
    .name = "host",
    .to_host = host_copy_out,
    .from_host = host_copy_in,
    .alloc = malloc,
    .release = free,
};

// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_cuda_check.c - the CUDA device back end round trip: host -> device ->
 * host through pdbp_dev_cuda, compared byte for byte. Exits 77 (skip) with
 * the reason when no GPU is usable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dev.h"

extern const struct pdbp_dev_ops pdbp_dev_cuda;
int pdbp_cuda_available(const char **why);

int main(void)
{
    const char *why = "";
    if (!pdbp_cuda_available(&why)) {
        printf("SKIP: %s\n", why);
        return 77;
    }
    size_t n = 1 << 20;
    unsigned char *a = malloc(n), *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        a[i] = (unsigned char)(i * 7 + 3);
    void *d = pdbp_dev_cuda.alloc(n);
    if (!d || pdbp_dev_cuda.from_host(d, a, n) || pdbp_dev_cuda.to_host(b, d, n)) {
        printf("FAIL: CUDA copy failed\n");
        return 1;
    }
    pdbp_dev_cuda.release(d);
    int ok = !memcmp(a, b, n);
    printf("%s: 1 MiB host -> device -> host\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

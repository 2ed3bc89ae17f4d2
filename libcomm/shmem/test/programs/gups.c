// SPDX-License-Identifier: BSD-3-Clause
/* RandomAccess in the HPCC style: xor updates to a distributed table with
 * shmem_longlong_atomic_xor, then verified by replaying the updates. */
#include <stdio.h>
#include <stdlib.h>
#include <shmem.h>

#define LOCAL 1024
#define UPDATES 4096
#define POLY 0x0000000000000007ULL

static unsigned long long next(unsigned long long x)
{
    return (x << 1) ^ ((long long)x < 0 ? POLY : 0);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    unsigned long long *table = shmem_malloc(LOCAL * sizeof *table);
    for (int i = 0; i < LOCAL; i++)
        table[i] = (unsigned long long)(me * LOCAL + i);
    shmem_barrier_all();
    unsigned long long ran = 0x123456789ULL + me;
    for (int u = 0; u < UPDATES; u++) {
        ran = next(ran);
        unsigned long long g = ran % ((unsigned long long)LOCAL * n);
        shmem_ulonglong_atomic_xor(&table[g % LOCAL], ran, (int)(g / LOCAL));
    }
    shmem_barrier_all();
    /* replay every PE's updates locally on PE 0's view, check PE 0's part */
    int errors = 0;
    if (me == 0) {
        unsigned long long *ref = malloc(LOCAL * sizeof *ref);
        for (int i = 0; i < LOCAL; i++)
            ref[i] = (unsigned long long)i;
        for (int p = 0; p < n; p++) {
            unsigned long long r = 0x123456789ULL + p;
            for (int u = 0; u < UPDATES; u++) {
                r = next(r);
                unsigned long long g = r % ((unsigned long long)LOCAL * n);
                if (g / LOCAL == 0)
                    ref[g % LOCAL] ^= r;
            }
        }
        for (int i = 0; i < LOCAL; i++)
            errors += ref[i] != table[i];
        printf("gups: %d PEs, %d errors\n", n, errors);
        free(ref);
    }
    shmem_free(table);
    shmem_finalize();
    return errors != 0;
}

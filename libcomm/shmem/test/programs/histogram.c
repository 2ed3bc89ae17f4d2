// SPDX-License-Identifier: BSD-3-Clause
/* Distributed histogram with atomic adds, checked with a sum reduction. */
#include <stdio.h>
#include <stdlib.h>
#include <shmem.h>

#define BINS 64
#define SAMPLES 2000

long hist[BINS];
long total, mine;
long pSync[SHMEM_REDUCE_SYNC_SIZE];
long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    srand(me + 1);
    for (int i = 0; i < SAMPLES; i++) {
        int bin = rand() % (BINS * n);
        shmem_long_atomic_add(&hist[bin / n], 1, bin % n);
    }
    shmem_barrier_all();
    mine = 0;
    for (int b = 0; b < BINS; b++)
        mine += hist[b];
    shmem_long_sum_to_all(&total, &mine, 1, 0, 0, n, pWrk, pSync);
    if (total != (long)SAMPLES * n) {
        printf("PE %d: histogram total %ld, want %ld\n", me, total, (long)SAMPLES * n);
        return 1;
    }
    if (me == 0)
        printf("histogram: %ld samples counted\n", total);
    shmem_finalize();
    return 0;
}

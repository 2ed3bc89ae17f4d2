// SPDX-License-Identifier: BSD-3-Clause
/* Broadcast a parameter block, fcollect a result per PE, in C11 generic style. */
#include <stdio.h>
#include <shmem.h>

long params[4], results[256], mine;
long pSync[SHMEM_BCAST_SYNC_SIZE];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    if (me == 0)
        for (int i = 0; i < 4; i++)
            params[i] = 10 * (i + 1);
    shmem_barrier_all();
    shmem_broadcast64(params, params, 4, 0, 0, 0, n, pSync);
    shmem_barrier_all();
    mine = params[me % 4] + me;
    shmem_fcollect64(results, &mine, 1, 0, 0, n, pSync);
    shmem_barrier_all();   /* collect completes locally only */
    long x = 0;
    shmem_get(&x, &results[n - 1], 1, (me + 1) % n);
    int ok = x == params[(n - 1) % 4] + n - 1;
    for (int p = 0; p < n; p++)
        ok &= results[p] == params[p % 4] + p;
    printf("PE %d: bcast/collect %s (x=%ld)\n", me, ok ? "ok" : "WRONG", x);
    for (int p = 0; p < n && !ok; p++)
        printf("  results[%d]=%ld params[%d]=%ld\n", p, results[p], p % 4, params[p % 4]);
    shmem_finalize();
    return !ok;
}

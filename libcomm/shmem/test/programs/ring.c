// SPDX-License-Identifier: BSD-3-Clause
/* A token travels round the ring of PEs, each hop a put plus wait_until. */
#include <stdio.h>
#include <shmem.h>

int token = -1;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), laps = 10;
    for (int lap = 0; lap < laps; lap++) {
        int want = lap * n + me;
        if (!(lap == 0 && me == 0))
            shmem_int_wait_until(&token, SHMEM_CMP_EQ, want);
        shmem_int_p(&token, want + 1, (me + 1) % n);
    }
    if (me == 0)
        shmem_int_wait_until(&token, SHMEM_CMP_EQ, laps * n);
    shmem_barrier_all();
    if (me == 0)
        printf("ring: %d laps of %d PEs done\n", laps, n);
    shmem_finalize();
    return 0;
}

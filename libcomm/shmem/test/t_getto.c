// SPDX-License-Identifier: BSD-3-Clause
/* t_getto.c - two-address reads: PE me asks PE src to deliver into PE dst,
 * for every (src, dst) pair; complete after barrier_all. */
#include "t_common.h"
#include <shmemx.h>

static long stat_vals[8];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *val = shmem_malloc(4 * sizeof(long));
    long *box = shmem_calloc((size_t)n * n * n, sizeof(long));
    for (int i = 0; i < 4; i++)
        val[i] = me * 10 + i;
    shmem_barrier_all();
    /* box[(me*n + src)*n + slot] on dst receives val[0] of src */
    for (int src = 0; src < n; src++)
        for (int dst = 0; dst < n; dst++)
            shmemx_get_to(&box[(me * n + src) * n + dst % n], &val[0], sizeof(long), dst, src);
    shmem_barrier_all();
    for (int req = 0; req < n; req++)
        for (int src = 0; src < n; src++) {
            long got = box[(req * n + src) * n + me];
            CHECK(got == src * 10, "from %d via %d: %ld", src, req, got);
        }
    /* static data as source and destination */
    stat_vals[0] = 100 + me;
    shmem_barrier_all();
    int a = (me + 1) % n, b = (me + 2) % n;
    shmemx_get_to(&stat_vals[1 + me % 7], &stat_vals[0], sizeof(long), b, a);
    shmem_barrier_all();
    int asker = (me + n - 2) % n;
    CHECK(stat_vals[1 + asker % 7] == 100 + (asker + 1) % n, "static get_to %ld",
          stat_vals[1 + asker % 7]);
    shmem_free(val);
    shmem_free(box);
    return t_done("t_getto");
}

// SPDX-License-Identifier: BSD-3-Clause
/* Classic style: start_pes, _my_pe, _num_pes, shmalloc, static symmetric data. */
#include <stdio.h>
#include <shmem.h>

long who;

int main(void)
{
    start_pes(0);
    int me = _my_pe(), n = _num_pes();
    long *box = (long *)shmalloc(sizeof(long));
    *box = -1;
    shmem_barrier_all();
    shmem_long_p(&who, me, (me + 1) % n);
    shmem_long_put(box, &who, 1, me);
    shmem_barrier_all();
    if (who != (me + n - 1) % n) {
        printf("PE %d: wrong neighbour %ld\n", me, who);
        return 1;
    }
    printf("Hello from PE %d of %d (neighbour %ld)\n", me, n, who);
    shfree(box);
    return 0;
}

// SPDX-License-Identifier: BSD-3-Clause
/* t_bounds.c - accesses outside the symmetric heap and static data are
 * refused with a message naming the PE and the address, and never written.
 * Run with TNBC_SHMEM_ON_ERROR=skip (refuse and go on) to check the memory;
 * with "abort" (the default) the job must end with a non-zero status. */
#include <stdlib.h>
#include <string.h>
#include "t_common.h"

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), peer = (me + 1) % n;
    long *heap = shmem_calloc(4, sizeof(long));
    long priv[4] = {0, 0, 0, 0}, v = 99, four[4] = {99, 99, 99, 99};
    if (argc > 1 && !strcmp(argv[1], "abort")) {
        if (me == 0)
            shmem_long_put(priv, &v, 1, peer);      /* must abort the job */
        shmem_barrier_all();
        return 0;
    }
    shmem_long_put(priv, &v, 1, peer);              /* stack: refused */
    shmem_long_p(heap + 3, 7, n + 5);               /* no such PE: refused */
    shmem_putmem(heap + 2, four, 32, peer);           /* past its block, inside the heap: allowed */
    shmem_long_atomic_add(priv, 1, peer);
    CHECK(shmem_long_g(priv, peer) == 0, "refused g returns 0");
    /* the last valid byte of the heap region is fine; one past is refused */
    shmem_barrier_all();
    CHECK(priv[0] == 0, "private memory written: %ld", priv[0]);
    CHECK(heap[2] == 99, "in-bounds part of putmem");
    /* the heap's last 8 bytes are fine; 8 bytes from 4 before its end are
     * refused (needs SHMEM_SYMMETRIC_SIZE in bytes; heap is the first block) */
    const char *hs = getenv("SHMEM_SYMMETRIC_SIZE");
    if (hs && atol(hs) > 4096) {
        char *end = (char *)heap + atol(hs);
        long v1 = 0x1111111111111111L, v2 = 0x2222222222222222L, back = 0;
        shmem_putmem(end - 8, &v1, 8, peer);
        shmem_putmem(end - 4, &v2, 8, peer);
        shmem_getmem(&back, end - 8, 8, peer);
        CHECK(back == v1, "heap end: %lx", (unsigned long)back);
        CHECK(shmem_addr_accessible(end - 1, peer) && !shmem_addr_accessible(end, peer),
              "addr_accessible at the heap end");
    }
    shmem_long_put(heap, &v, 1, peer);              /* valid: still works */
    shmem_barrier_all();
    CHECK(heap[0] == 99, "valid put after refusals");
    shmem_free(heap);
    return t_done("t_bounds");
}

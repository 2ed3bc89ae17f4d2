// SPDX-License-Identifier: BSD-3-Clause
/* t_overflow.c - sizes and strides whose byte counts overflow are refused,
 * never wrapped (issue #22 item 11): shmem_malloc(SIZE_MAX) returns NULL and
 * does not hand out the next block twice; strided iput/iget at strides near
 * 2^60 and 2^61-1 and typed puts whose nelems * size wraps are refused and
 * write nothing; shmem_align honours alignments above the page size.
 * Run with TNBC_SHMEM_ON_ERROR=skip; with "abort" (argument "abort") the
 * job must end non-zero after the one-line message. */
#include <stdint.h>
#include <string.h>
#include "t_common.h"

#define GUARD 4096   /* longs checked around the target */

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), peer = (me + 1) % n;
    long *big = shmem_calloc(GUARD, sizeof(long));
    long *dst = big + GUARD / 2, src[4] = {1, 2, 3, 4};
    if (argc > 1 && !strcmp(argv[1], "abort")) {
        if (me == 0)
            shmem_long_iput(dst, src, (ptrdiff_t)1 << 60, 1, 2, peer);  /* ends the job */
        shmem_barrier_all();
        return 0;
    }

    /* the heap */
    CHECK(shmem_malloc(SIZE_MAX) == NULL, "malloc(SIZE_MAX) must fail");
    CHECK(shmem_malloc(SIZE_MAX - 8) == NULL, "malloc(SIZE_MAX-8) must fail");
    char *a = shmem_malloc(64), *b = shmem_malloc(64);
    CHECK(a && b && a != b && (b >= a + 64 || a >= b + 64), "two blocks %p %p", a, b);
    CHECK(shmem_calloc(SIZE_MAX / 2, 4) == NULL, "calloc overflow must fail");
    CHECK(shmem_align(3, 64) == NULL, "alignment 3 is not a power of two");
    CHECK(shmem_align(SIZE_MAX / 2 + 1, 64) == NULL, "alignment 2^63 cannot fit");
    size_t aligns[] = {8192, 65536, 1 << 20};
    for (int i = 0; i < 3; i++) {
        char *p = shmem_align(aligns[i], 100);
        CHECK(p && (uintptr_t)p % aligns[i] == 0, "shmem_align(%zu) gave %p", aligns[i], p);
        /* symmetric: the same offset on every PE, so a put there lands */
        if (p) {
            shmem_char_p(p + 99, (char)(me + 1), peer);
            shmem_barrier_all();
            CHECK(p[99] == (char)((me + n - 1) % n + 1), "aligned block is symmetric: %d at %p", p[99], (void *)p);
        }
    }
    memset(a, 7, 64);
    CHECK(shmem_realloc(a, SIZE_MAX) == NULL, "realloc(SIZE_MAX) must fail");
    CHECK(a[0] == 7 && a[63] == 7, "failed realloc keeps the old block");

    /* strides and counts whose spans overflow: refused, nothing written */
    ptrdiff_t huge[] = {(ptrdiff_t)1 << 60, ((ptrdiff_t)1 << 61) - 1,
                        PTRDIFF_MAX, ((ptrdiff_t)1 << 62) + 1};
    long back[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        shmem_long_iput(dst, src, huge[i], 1, 2, peer);
        shmem_long_iput(dst, src, 1, huge[i], 2, peer);
        shmem_iput64(dst, src, huge[i], 1, 2, peer);
        shmem_iput128(dst, src, huge[i], 1, 2, peer);
        shmem_long_iget(back, dst, 1, huge[i], 2, peer);
        shmem_long_iget(back, dst, huge[i], 1, 2, peer);
    }
    CHECK(back[0] == -1 && back[1] == -1, "refused iget wrote %ld %ld", back[0], back[1]);
    shmem_long_put(dst, src, SIZE_MAX / 4 + 2, peer);     /* * 8 wraps to 16 */
    shmem_long_put_nbi(dst, src, SIZE_MAX / 8 + 1, peer); /* * 8 wraps to 0 */
    shmem_long_get(back, dst, SIZE_MAX / 4 + 2, peer);
    shmem_put64(dst, src, SIZE_MAX / 4 + 2, peer);
    shmem_putmem(dst, src, SIZE_MAX, peer);
    /* collectives: refused on every PE alike (same arguments), no hang */
    CHECK(shmem_long_alltoalls(SHMEM_TEAM_WORLD, dst, src, (ptrdiff_t)1 << 60, 1, 2) != 0,
          "alltoalls with stride 2^60 accepted");
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, SIZE_MAX / 4 + 2, 0) != 0,
          "broadcast of 2^62 longs accepted");
    CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, (size_t)1 << 40) != 0,
          "fcollect of 2^40 longs accepted");
    shmem_quiet();
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < GUARD; i++)
        bad += big[i] != 0;
    CHECK(bad == 0, "%d longs written by refused operations", bad);
    CHECK(back[0] == -1, "refused get wrote %ld", back[0]);
    shmem_barrier_all();      /* every PE checked before anyone writes again */

    /* a valid strided put still works, and lands exactly */
    shmem_long_iput(dst, src, 3, 1, 4, peer);
    shmem_barrier_all();
    CHECK(dst[0] == 1 && dst[3] == 2 && dst[6] == 3 && dst[9] == 4 && dst[1] == 0 &&
          dst[2] == 0 && dst[10] == 0, "iput stride 3: %ld %ld %ld %ld", dst[0],
          dst[3], dst[6], dst[9]);
    return t_done("t_overflow");
}

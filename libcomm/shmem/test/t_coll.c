// SPDX-License-Identifier: BSD-3-Clause
/* t_coll.c - broadcast, collect, fcollect, to_all reductions, alltoall,
 * barriers on active sets. */
#include <string.h>
#include "t_common.h"

static long psync[SHMEM_BCAST_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 64];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *src = shmem_malloc(64 * sizeof(long)), *dst = shmem_calloc(64 * n, sizeof(long));
    for (int i = 0; i < 64; i++)
        src[i] = me * 100 + i;
    shmem_barrier_all();

    shmem_broadcast64(dst, src, 8, n - 1, 0, 0, n, psync);
    if (me != n - 1)
        CHECK(dst[7] == (n - 1) * 100 + 7, "broadcast64 %ld", dst[7]);
    int *isrc = shmem_malloc(4 * sizeof(int)), *idst = shmem_calloc(4 * n, sizeof(int));
    for (int i = 0; i < 4; i++)
        isrc[i] = me * 10 + i;
    shmem_barrier_all();
    shmem_broadcast32(idst, isrc, 4, 0, 0, 0, n, psync);
    if (me != 0)
        CHECK(idst[3] == 3, "broadcast32 %d", idst[3]);

    /* collect: PE p contributes p+1 elements */
    memset(dst, 0, 64 * n * sizeof(long));
    shmem_barrier_all();
    shmem_collect64(dst, src, me + 1, 0, 0, n, psync);
    for (int p = 0, k = 0; p < n; p++)
        for (int i = 0; i <= p; i++, k++)
            CHECK(dst[k] == p * 100 + i, "collect64 dst[%d]=%ld", k, dst[k]);
    shmem_fcollect64(dst, src, 3, 0, 0, n, psync);
    CHECK(dst[3 * (n - 1) + 2] == (n - 1) * 100 + 2, "fcollect64");
    shmem_fcollect32(idst, isrc, 1, 0, 0, n, psync);
    CHECK(idst[n - 1] == (n - 1) * 10, "fcollect32");

    /* reductions */
    long lsum = 0, lmax = 0;
    static long r[4], s[4];
    s[0] = me + 1; s[1] = me; s[2] = 1L << me; s[3] = -me;
    shmem_long_sum_to_all(r, s, 1, 0, 0, n, pwrk, psync);
    for (int p = 0; p < n; p++)
        lsum += p + 1, lmax = p;
    CHECK(r[0] == lsum, "sum %ld", r[0]);
    shmem_long_max_to_all(r, s + 1, 1, 0, 0, n, pwrk, psync);
    CHECK(r[0] == lmax, "max %ld", r[0]);
    shmem_long_or_to_all(r, s + 2, 1, 0, 0, n, pwrk, psync);
    CHECK(r[0] == (1L << n) - 1, "or %ld", r[0]);
    shmem_long_min_to_all(r, s + 3, 1, 0, 0, n, pwrk, psync);
    CHECK(r[0] == -(n - 1), "min %ld", r[0]);
    static double dd, dr;
    dd = 2.0;
    shmem_double_prod_to_all(&dr, &dd, 1, 0, 0, n, NULL, psync);
    CHECK(dr == (double)(1 << n), "prod %g", dr);
    static int ia, ib;
    ia = 0xFF ^ (1 << me);
    shmem_int_and_to_all(&ib, &ia, 1, 0, 0, n, NULL, psync);
    CHECK(ib == (0xFF & ~((1 << n) - 1)), "and %x", ib);
    shmem_int_xor_to_all(&ia, &ia, 1, 0, 0, n, NULL, psync);   /* in place */
    CHECK(ia == ((n % 2 ? 0xFF : 0) ^ ((1 << n) - 1)), "xor in place %x", ia);

    /* alltoall: element p of my src goes to PE p */
    for (int p = 0; p < n; p++)
        src[p] = me * 100 + p;
    shmem_barrier_all();
    shmem_alltoall64(dst, src, 1, 0, 0, n, psync);
    for (int p = 0; p < n; p++)
        CHECK(dst[p] == p * 100 + me, "alltoall dst[%d]=%ld", p, dst[p]);

    /* an active set: even PEs only (stride 2) */
    if (n >= 3 && me % 2 == 0) {
        int size = (n + 1) / 2;
        static long e, er;
        e = me;
        shmem_long_sum_to_all(&er, &e, 1, 0, 1, size, pwrk, psync);
        long want = 0;
        for (int p = 0; p < n; p += 2)
            want += p;
        CHECK(er == want, "strided active-set sum %ld want %ld", er, want);
        shmem_barrier(0, 1, size, psync);
        shmem_sync(0, 1, size, psync);
    }
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
    shmem_free(isrc);
    shmem_free(idst);
    return t_done("t_coll");
}

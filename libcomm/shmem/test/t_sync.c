// SPDX-License-Identifier: BSD-3-Clause
/* t_sync.c - fence orders puts to one PE, quiet completes all, wait/test,
 * put-with-signal, barrier_all completes puts. */
#include <string.h>
#include "t_common.h"

#define ROUNDS 200
static long flag_s;   /* static-data flag: reached through MPI even on one node */

static void fence_order(int me, int n)
{
    long *data = shmem_calloc(ROUNDS, sizeof(long)), *flag = shmem_calloc(1, sizeof(long));
    int peer = (me + 1) % n;
    /* round r: data[r] then fence then flag=r+1. The receiver waiting on the
     * flag must then see data[r] (and every earlier one). */
    for (long r = 0; r < ROUNDS; r++) {
        shmem_long_p(&data[r], 1000 + r, peer);
        shmem_fence();
        shmem_long_p(flag, r + 1, peer);
    }
    for (long r = 1; r <= ROUNDS; r++) {
        shmem_long_wait_until(flag, SHMEM_CMP_GE, r);
        long seen = *(volatile long *)flag;
        for (long k = 0; k < seen; k++)
            if (((volatile long *)data)[k] != 1000 + k) {
                CHECK(0, "fence: flag %ld but data[%ld]=%ld", seen, k, data[k]);
                r = ROUNDS + 1;
                break;
            }
    }
    shmem_barrier_all();
    /* the same through static data (MPI window) */
    memset(data, 0, ROUNDS * sizeof(long));
    flag_s = 0;
    shmem_barrier_all();
    shmem_long_put(data, (long[]){77}, 1, peer);
    shmem_fence();
    shmem_long_p(&flag_s, 1, peer);
    shmem_long_wait_until(&flag_s, SHMEM_CMP_EQ, 1);
    CHECK(data[0] == 77, "fence heap->static: %ld", data[0]);
    shmem_barrier_all();
    shmem_free(data);
    shmem_free(flag);
}

static void quiet_completes(int me, int n)
{
    long *arr = shmem_calloc(n * 64, sizeof(long));
    long src[64];
    for (int i = 0; i < 64; i++)
        src[i] = me * 64 + i;
    for (int pe = 0; pe < n; pe++)
        shmem_long_put_nbi(arr + me * 64, src, 64, pe);
    shmem_quiet();
    /* after quiet every put is complete at every target: tell them by sync */
    shmem_sync_all();
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 64; i++)
            if (arr[p * 64 + i] != p * 64 + i) {
                CHECK(0, "quiet: arr[%d]=%ld", p * 64 + i, arr[p * 64 + i]);
                p = n;
                break;
            }
    shmem_barrier_all();
    shmem_free(arr);
}

static void wait_test(int me, int n)
{
    int *iv = shmem_calloc(1, sizeof(int));
    unsigned long long *uv = shmem_calloc(1, sizeof *uv);
    int peer = (me + 1) % n;
    CHECK(shmem_int_test(iv, SHMEM_CMP_EQ, 0) == 1, "test eq 0");
    CHECK(shmem_int_test(iv, SHMEM_CMP_GT, 0) == 0, "test gt 0");
    shmem_barrier_all();
    shmem_int_p(iv, 5, peer);
    shmem_ulonglong_atomic_set(uv, 1ULL << 40, peer);
    shmem_int_wait_until(iv, SHMEM_CMP_EQ, 5);
    shmem_ulonglong_wait_until(uv, SHMEM_CMP_GE, 1ULL << 40);
    shmem_wait_until(iv, SHMEM_CMP_NE, 0);       /* C11 generic */
    CHECK(shmem_int_test(iv, SHMEM_CMP_LE, 5) && shmem_int_test(iv, SHMEM_CMP_LT, 6),
          "test le/lt");
    shmem_barrier_all();
    shmem_free(iv);
    shmem_free(uv);
}

static void signal(int me, int n)
{
    long *buf = shmem_calloc(256, sizeof(long));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    long src[256];
    int peer = (me + 1) % n;
    for (int i = 0; i < 256; i++)
        src[i] = me * 1000 + i;
    shmem_long_put_signal(buf, src, 256, sig, 1, SHMEM_SIGNAL_ADD, peer);
    uint64_t v = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    int from = (me + n - 1) % n;
    CHECK(v == 1, "signal value %llu", (unsigned long long)v);
    CHECK(buf[255] == from * 1000 + 255 && buf[0] == from * 1000, "data before signal");
    shmem_barrier_all();
    shmem_putmem_signal_nbi(buf, src, 8, sig, 9, SHMEM_SIGNAL_SET, peer);
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 9);
    CHECK(shmem_signal_fetch(sig) == 9, "signal set");
    shmem_barrier_all();
    shmem_free(buf);
    shmem_free(sig);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    fence_order(me, n);
    quiet_completes(me, n);
    wait_test(me, n);
    signal(me, n);
    return t_done("t_sync");
}

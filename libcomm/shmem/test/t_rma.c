// SPDX-License-Identifier: BSD-3-Clause
/* t_rma.c - put/get of every flavour, heap and static data, to every PE. */
#include <string.h>
#include "t_common.h"

#define N 1024
static long sbuf[N];            /* static data: .bss */
static int ibuf[16] = {1};      /* static data: .data */
static double dstat;

static void contiguous(int me, int n)
{
    long *heap = shmem_malloc(N * sizeof(long));
    long src[N], dst[N];
    for (int pe = 0; pe < n; pe++) {
        for (int i = 0; i < N; i++)
            src[i] = me * 100000 + pe * 1000 + i;
        /* each PE writes its slice of PE pe's arrays */
        size_t k = N / n, off = me * k;
        shmem_long_put(heap + off, src + off, k, pe);
        shmem_long_put(sbuf + off, src + off, k, pe);
    }
    shmem_barrier_all();
    for (int i = 0; i < (N / n) * n; i++) {
        long want = (i / (N / n)) * 100000 + me * 1000 + i;
        CHECK(heap[i] == want, "heap[%d]=%ld want %ld", i, heap[i], want);
        CHECK(sbuf[i] == want, "sbuf[%d]=%ld want %ld", i, sbuf[i], want);
    }
    int peer = (me + 1) % n;
    shmem_long_get(dst, heap, N / n * n, peer);
    for (int i = 0; i < N / n * n; i++)
        CHECK(dst[i] == (i / (N / n)) * 100000 + peer * 1000 + i, "get heap[%d]", i);
    memset(dst, 0, sizeof dst);
    shmem_getmem(dst, sbuf, sizeof(long) * (N / n * n), peer);
    CHECK(dst[5] == (5 / (N / n)) * 100000 + peer * 1000 + 5, "getmem static %ld", dst[5]);
    shmem_barrier_all();
    shmem_free(heap);
}

static void single_elements(int me, int n)
{
    int peer = (me + 1) % n, from = (me + n - 1) % n;
    shmem_int_p(&ibuf[1], 7000 + me, peer);
    shmem_double_p(&dstat, 0.5 + me, peer);
    char *c = shmem_malloc(64);
    shmem_char_p(&c[3], (char)('a' + me), peer);
    shmem_barrier_all();
    CHECK(ibuf[1] == 7000 + from, "ibuf[1]=%d", ibuf[1]);
    CHECK(dstat == 0.5 + from, "dstat=%g", dstat);
    CHECK(c[3] == 'a' + from, "c[3]=%c", c[3]);
    CHECK(ibuf[0] == 1, ".data initial value kept: %d", ibuf[0]);
    CHECK(shmem_int_g(&ibuf[1], peer) == 7000 + me, "int_g");
    CHECK(shmem_double_g(&dstat, peer) == 0.5 + me, "double_g");
    CHECK(shmem_char_g(&c[3], peer) == 'a' + me, "char_g");
    shmem_barrier_all();
    shmem_free(c);
}

static void strided(int me, int n)
{
    int peer = (me + 1) % n, from = (me + n - 1) % n;
    long *a = shmem_calloc(64, sizeof(long));
    long src[64];
    for (int i = 0; i < 64; i++)
        src[i] = me * 1000 + i;
    /* elements 0,2,4,.. of src into 0,3,6,.. of a on peer */
    shmem_long_iput(a, src, 3, 2, 10, peer);
    shmem_barrier_all();
    for (int i = 0; i < 10; i++)
        CHECK(a[3 * i] == from * 1000 + 2 * i, "iput a[%d]=%ld", 3 * i, a[3 * i]);
    CHECK(a[1] == 0 && a[2] == 0, "iput wrote between strides");
    long got[20] = {0};
    shmem_long_iget(got, a, 2, 3, 10, peer);
    for (int i = 0; i < 10; i++)
        CHECK(got[2 * i] == me * 1000 + 2 * i, "iget got[%d]=%ld", 2 * i, got[2 * i]);
    CHECK(got[1] == 0, "iget wrote between strides");
    shmem_barrier_all();
    shmem_free(a);
}

static void nbi_and_sized(int me, int n)
{
    size_t big = 1 << 20;
    char *h = shmem_malloc(big), *src = malloc(big), *back = malloc(big);
    int peer = (me + 1) % n, from = (me + n - 1) % n;
    for (size_t i = 0; i < big; i++)
        src[i] = (char)(i * 7 + me);
    shmem_putmem_nbi(h, src, big, peer);
    shmem_quiet();
    shmem_barrier_all();
    CHECK(h[12345] == (char)(12345 * 7 + from), "1 MiB nbi put");
    shmem_getmem_nbi(back, h, big, peer);
    shmem_quiet();
    size_t bad = 0, first = big;
    for (size_t i = 0; i < big; i++)
        if (back[i] != src[i]) {
            bad++;
            first = first < i ? first : i;
        }
    CHECK(bad == 0, "1 MiB nbi get: %zu bytes differ from %zu", bad, first);
    uint32_t w32[4] = {1, 2, 3, 4};
    uint64_t w64[2] = {5, 6};
    shmem_barrier_all();
    shmem_put32(h, w32, 4, peer);
    shmem_put64(h + 16, w64, 2, peer);
    shmem_put128(h + 32, w64, 1, peer);
    shmem_barrier_all();
    CHECK(((uint32_t *)h)[3] == 4 && ((uint64_t *)(h + 16))[1] == 6 &&
          ((uint64_t *)(h + 32))[1] == 6, "sized puts");
    /* C11 generic interface */
    long *g = (long *)(h + 64);
    long v = 42 + me;
    shmem_put(g, &v, 1, peer);
    shmem_barrier_all();
    CHECK(*g == 42 + from, "generic put %ld", *g);
    CHECK(shmem_g(g, peer) == 42 + me, "generic g");
    shmem_barrier_all();
    shmem_free(h);
    free(src);
    free(back);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    contiguous(me, n);
    single_elements(me, n);
    strided(me, n);
    nbi_and_sized(me, n);
    return t_done("t_rma");
}

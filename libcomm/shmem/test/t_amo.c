// SPDX-License-Identifier: BSD-3-Clause
/* t_amo.c - atomics under contention, every operation, heap and static
 * data; locks protecting a non-atomic read-modify-write. */
#include "t_common.h"

#define ITERS 500
static long stat_ctr;
static long lock_word;

static void contention(int me, int n)
{
    long *ctr = shmem_calloc(1, sizeof(long));
    int *ictr = shmem_calloc(1, sizeof(int));
    long seen_max = -1;
    for (int i = 0; i < ITERS; i++) {
        long old = shmem_long_atomic_fetch_inc(ctr, 0);
        if (old > seen_max)
            seen_max = old;
        shmem_int_atomic_add(ictr, 2, n - 1);
        shmem_long_atomic_inc(&stat_ctr, 0);
    }
    shmem_barrier_all();
    if (me == 0) {
        CHECK(*ctr == (long)n * ITERS, "fetch_inc total %ld want %ld", *ctr, (long)n * ITERS);
        CHECK(stat_ctr == (long)n * ITERS, "static inc total %ld", stat_ctr);
    }
    if (me == n - 1)
        CHECK(*ictr == 2 * n * ITERS, "int add total %d", *ictr);
    CHECK(seen_max < (long)n * ITERS, "fetch_inc returned %ld", seen_max);
    /* compare_swap: exactly one PE wins each slot */
    long *slot = shmem_calloc(1, sizeof(long));
    long won = shmem_long_atomic_compare_swap(slot, 0, me + 1, 0) == 0, total;
    shmem_barrier_all();
    static long w, t;
    w = won;
    shmem_long_sum_to_all(&t, &w, 1, 0, 0, n, NULL, NULL);
    total = t;
    CHECK(total == 1, "compare_swap winners %ld", total);
    shmem_barrier_all();
    shmem_free(ctr);
    shmem_free(ictr);
    shmem_free(slot);
}

static void every_op(int me, int n)
{
    unsigned long *u = shmem_calloc(4, sizeof(unsigned long));
    double *d = shmem_calloc(1, sizeof(double));
    int peer = (me + 1) % n;
    if (me == 0)
        u[0] = 0xF0;
    shmem_barrier_all();
    if (me == 1 % n) {
        CHECK(shmem_ulong_atomic_fetch(&u[0], 0) == 0xF0, "fetch");
        CHECK(shmem_ulong_atomic_fetch_and(&u[0], 0x3C, 0) == 0xF0, "fetch_and old");
        CHECK(shmem_ulong_atomic_fetch_or(&u[0], 0x01, 0) == 0x30, "fetch_or old");
        CHECK(shmem_ulong_atomic_fetch_xor(&u[0], 0xFF, 0) == 0x31, "fetch_xor old");
        CHECK(shmem_ulong_atomic_fetch(&u[0], 0) == 0xCE, "after xor");
        shmem_ulong_atomic_and(&u[0], 0x0F, 0);
        shmem_ulong_atomic_or(&u[0], 0x100, 0);
        shmem_ulong_atomic_xor(&u[0], 0x1, 0);
        shmem_quiet();
        CHECK(shmem_ulong_atomic_fetch(&u[0], 0) == 0x10F, "and/or/xor %lx",
              shmem_ulong_atomic_fetch(&u[0], 0));
        CHECK(shmem_ulong_atomic_swap(&u[0], 5, 0) == 0x10F, "swap old");
        CHECK(shmem_ulong_atomic_compare_swap(&u[0], 4, 9, 0) == 5, "cswap fail");
        CHECK(shmem_ulong_atomic_compare_swap(&u[0], 5, 9, 0) == 5, "cswap ok");
        CHECK(shmem_ulong_atomic_fetch_add(&u[0], 1, 0) == 9, "fetch_add");
        CHECK(shmem_long_finc((long *)&u[1], 0) == 0, "deprecated finc");
        CHECK(shmem_long_fadd((long *)&u[1], 5, 0) == 1, "deprecated fadd");
        CHECK(shmem_atomic_fetch((long *)&u[1], 0) == 6, "generic fetch");
    }
    shmem_double_atomic_set(d, 1.5 * me, peer);
    shmem_barrier_all();
    CHECK(*d == 1.5 * ((me + n - 1) % n), "double set %g", *d);
    CHECK(shmem_double_atomic_swap(d, 2.5, me) == 1.5 * ((me + n - 1) % n), "double swap");
    CHECK(shmem_double_atomic_fetch(d, me) == 2.5, "double fetch");
    shmem_barrier_all();
    shmem_free(u);
    shmem_free(d);
}

static void locks(int me, int n)
{
    long *shared = shmem_calloc(1, sizeof(long));
    for (int i = 0; i < 100; i++) {
        shmem_set_lock(&lock_word);
        long v = shmem_long_g(shared, 0);   /* non-atomic read-modify-write */
        shmem_long_p(shared, v + 1, 0);
        shmem_clear_lock(&lock_word);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(*shared == 100L * n, "lock-protected count %ld want %ld", *shared, 100L * n);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(shmem_test_lock(&lock_word) == 0, "test_lock takes a free lock");
        CHECK(shmem_test_lock(&lock_word) == 1, "test_lock on a held lock");
        shmem_clear_lock(&lock_word);
    }
    shmem_barrier_all();
    shmem_free(shared);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    contention(me, n);
    every_op(me, n);
    locks(me, n);
    return t_done("t_amo");
}

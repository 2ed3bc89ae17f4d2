// SPDX-License-Identifier: BSD-3-Clause
/*
 * lock.c - distributed locks: the lock word on PE 0 holds 0 (free) or the
 * owner's PE number + 1, changed only by compare-and-swap.
 */
#include "internal.h"

static long try_take(long *lock)
{
    return (long)shmemi_amo(AMO_CSWAP, lock, sizeof(long),
                            (uint64_t)(shmemi.me + 1), 0, 0, 1);
}

void shmem_set_lock(long *lock)
{
    shmemi_check_init("shmem_set_lock");
    while (try_take(lock) != 0)
        shmemi_progress();
}

int shmem_test_lock(long *lock)
{
    shmemi_check_init("shmem_test_lock");
    return try_take(lock) != 0;
}

void shmem_clear_lock(long *lock)
{
    shmemi_check_init("shmem_clear_lock");
    shmemi_quiet();     /* what the critical section wrote lands first */
    shmemi_amo(AMO_SWAP, lock, sizeof(long), 0, 0, 0, 1);
}

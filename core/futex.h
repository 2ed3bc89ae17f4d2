/* SPDX-License-Identifier: BSD-3-Clause */
/* The futex calls of the library's waits (guard locks, sub-messages,
 * op states, sends from the caller's pages): raw system calls, which are
 * async-signal-safe, so the fault handler may wait on a word that another
 * thread changes. Private futexes: every word lives in this process. */
#ifndef TNBC_FUTEX_H
#define TNBC_FUTEX_H

#include <limits.h>
#include <stdatomic.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sleeps while the 32-bit word at `word` holds `expected` (returns at
 * once if it does not; spurious wake-ups happen: callers loop). */
static inline void tnbc_futex_wait(void *word, unsigned expected)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

/* Wakes up to `n` threads sleeping on `word` (INT_MAX: all). */
static inline void tnbc_futex_wake(void *word, int n)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* A one-shot flag (0, then 1 for good: a sub-message landed, a call's
 * steps started): setting it wakes every waiter. */
static inline void tnbc_flag_set(atomic_uint *flag)
{
    atomic_store(flag, 1);
    tnbc_futex_wake(flag, INT_MAX);
}

static inline void tnbc_flag_wait(atomic_uint *flag)
{
    while (!atomic_load(flag))
        tnbc_futex_wait(flag, 0);
}

#endif

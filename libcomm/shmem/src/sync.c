// SPDX-License-Identifier: BSD-3-Clause
/*
 * sync.c - ordering and completion: fence, quiet, barrier_all, the wait/test
 * family and put-with-signal.
 *
 * quiet flushes only the targets with MPI operations outstanding, so a code
 * that talks only to its node pays one memory fence. MPI does not order two
 * puts to one target, so fence is quiet. barrier_all also completes active
 * messages: PEs sum (messages sent - messages run) until the sum is zero.
 */
#include <stdio.h>

#include "internal.h"

/* Called by every waiting loop. A PE that waits also pushes out its own
 * outstanding puts: with osc/pt2pt an MPI_Put may sit in the origin's queue
 * until a flush, and the PE it waits for may be waiting on that very put. */
void shmemi_progress(void)
{
    if (shmemi.reg[SHMEMI_HEAP].ndirty || shmemi.reg[SHMEMI_DATA].ndirty)
        shmemi_quiet();
    if (shmemi.rma_progress)
        shmemi_am_poll();
}

/* Drives MPI's progress engine (and with it the osc components' progress
 * functions) without receiving anything: shmemi.comm carries collectives
 * only, so the probe never matches. Active-message handlers do not run. */
void shmemi_mpi_progress(void)
{
    int flag;
    shmemi_lock();
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, shmemi.comm, &flag, MPI_STATUS_IGNORE);
    shmemi_unlock();
}

/* One MPI_Win_flush per target with operations outstanding, not
 * MPI_Win_flush_all: Open MPI 4.1.4's osc/ucx returns from flush_all before
 * large gets have landed (measured: 1 MiB MPI_Get, 20 of 20 runs). */
void shmemi_quiet(void)
{
    shmemi_lock();
    for (int r = 0; r < SHMEMI_NREGIONS; r++) {
        struct shmemi_region *g = &shmemi.reg[r];
        for (int i = 0; i < g->ndirty; i++) {
            MPI_Win_flush(g->dirty_list[i], g->win);
            g->dirty[g->dirty_list[i]] = 0;
        }
        g->ndirty = 0;
    }
    shmemi_bounce_reset();
    shmemi_unlock();
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void shmem_quiet(void) { shmemi_quiet(); }
void shmem_fence(void) { shmemi_quiet(); }

void shmemi_barrier_world(void)
{
    long bal, sum;
    shmemi_quiet();
    for (;;) {
        shmemi_am_poll();
        shmemi_quiet();        /* puts issued by handlers (shmemx_get_to) */
        bal = shmemi_msg_balance();
        MPI_Allreduce(&bal, &sum, 1, MPI_LONG, MPI_SUM, shmemi.comm);
        if (sum == 0)
            break;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void shmem_barrier_all(void)
{
    shmemi_check_init("shmem_barrier_all");
    shmemi_barrier_world();
}

void shmem_sync_all(void)
{
    shmemi_check_init("shmem_sync_all");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    MPI_Barrier(shmemi.comm);
}

static int bad_cmp(int cmp)
{
    if (cmp >= SHMEM_CMP_EQ && cmp <= SHMEM_CMP_GE)
        return 0;
    fprintf(stderr, "tnbc-shmem: error PE %d: wait/test with unknown comparison %d; "
            "not waiting\n", shmemi.me, cmp);
    return 1;
}

#define CMP(cmp, a, b)                                                         \
    ((cmp) == SHMEM_CMP_EQ ? (a) == (b) : (cmp) == SHMEM_CMP_NE ? (a) != (b) : \
     (cmp) == SHMEM_CMP_GT ? (a) > (b) : (cmp) == SHMEM_CMP_LE ? (a) <= (b) :  \
     (cmp) == SHMEM_CMP_LT ? (a) < (b) : (a) >= (b))

#define DEFINE_WAIT(T, N)                                                      \
    int shmem_##N##_test(T *ivar, int cmp, T value)                            \
    {                                                                          \
        if (bad_cmp(cmp))                                                      \
            return 0;                                                          \
        T cur = __atomic_load_n(ivar, __ATOMIC_ACQUIRE);                       \
        if (CMP(cmp, cur, value))                                              \
            return 1;                                                          \
        shmemi_progress();                                                     \
        return 0;                                                              \
    }                                                                          \
    void shmem_##N##_wait_until(T *ivar, int cmp, T value)                     \
    {                                                                          \
        if (bad_cmp(cmp))                                                      \
            return;                                                            \
        for (;;) {                                                             \
            T cur = __atomic_load_n(ivar, __ATOMIC_ACQUIRE);                   \
            if (CMP(cmp, cur, value))                                          \
                return;                                                        \
            shmemi_progress();                                                 \
        }                                                                      \
    }                                                                          \
    void shmem_##N##_wait(T *ivar, T value)                                    \
    { shmem_##N##_wait_until(ivar, SHMEM_CMP_NE, value); }
SHMEMI_WAIT_TYPES(DEFINE_WAIT)

/* The array forms. One pass over the included elements tests each against
 * its value (VEC: values[i], else the single value); the wait forms repeat
 * passes with shmemi_progress in between, as wait_until does. */
#define DEFINE_WAIT_VEC(T, N)                                                  \
    static size_t N##_pass(T *iv, size_t n, size_t *idx, const int *st, int cmp, \
                           const T *vals, T v, int want_all, size_t *first)    \
    {                                                                          \
        size_t hits = 0, incl = 0;                                             \
        *first = SIZE_MAX;                                                     \
        for (size_t i = 0; i < n; i++) {                                       \
            if (st && st[i])                                                   \
                continue;                                                      \
            incl++;                                                            \
            T cur = __atomic_load_n(&iv[i], __ATOMIC_ACQUIRE);                 \
            if (CMP(cmp, cur, vals ? vals[i] : v)) {                           \
                if (idx)                                                       \
                    idx[hits] = i;                                             \
                if (*first == SIZE_MAX)                                        \
                    *first = i;                                                \
                hits++;                                                        \
            }                                                                  \
        }                                                                      \
        return want_all ? (hits == incl) : hits;                               \
    }                                                                          \
    static size_t N##_wait(T *iv, size_t n, size_t *idx, const int *st, int cmp, \
                           const T *vals, T v, int mode, int once)             \
    {                                                                          \
        size_t first, incl = 0, r;                                             \
        if (bad_cmp(cmp))                                                      \
            return mode == 0 ? 1 : mode == 1 ? SIZE_MAX : 0;                   \
        for (size_t i = 0; i < n; i++)                                         \
            incl += !(st && st[i]);                                            \
        if (incl == 0)      /* nothing to wait for */                          \
            return mode == 0 ? 1 : mode == 1 ? SIZE_MAX : 0;                   \
        for (;;) {                                                             \
            r = N##_pass(iv, n, idx, st, cmp, vals, v, mode == 0, &first);     \
            if (r || once)                                                     \
                break;                                                         \
            shmemi_progress();                                                 \
        }                                                                      \
        if (!r && once)                                                        \
            shmemi_progress();                                                 \
        return mode == 0 ? r != 0 : mode == 1 ? (r ? first : SIZE_MAX) : r;    \
    }                                                                          \
    void shmem_##N##_wait_until_all(T *iv, size_t n, const int *st, int cmp, T v) \
    { (void)N##_wait(iv, n, NULL, st, cmp, NULL, v, 0, 0); }                   \
    size_t shmem_##N##_wait_until_any(T *iv, size_t n, const int *st, int cmp, T v) \
    { return N##_wait(iv, n, NULL, st, cmp, NULL, v, 1, 0); }                  \
    size_t shmem_##N##_wait_until_some(T *iv, size_t n, size_t *idx,           \
                                       const int *st, int cmp, T v)            \
    { return N##_wait(iv, n, idx, st, cmp, NULL, v, 2, 0); }                   \
    void shmem_##N##_wait_until_all_vector(T *iv, size_t n, const int *st,     \
                                           int cmp, T *vs)                     \
    { (void)N##_wait(iv, n, NULL, st, cmp, vs, 0, 0, 0); }                     \
    size_t shmem_##N##_wait_until_any_vector(T *iv, size_t n, const int *st,   \
                                             int cmp, T *vs)                   \
    { return N##_wait(iv, n, NULL, st, cmp, vs, 0, 1, 0); }                    \
    size_t shmem_##N##_wait_until_some_vector(T *iv, size_t n, size_t *idx,    \
                                              const int *st, int cmp, T *vs)   \
    { return N##_wait(iv, n, idx, st, cmp, vs, 0, 2, 0); }                     \
    int shmem_##N##_test_all(T *iv, size_t n, const int *st, int cmp, T v)     \
    { return (int)N##_wait(iv, n, NULL, st, cmp, NULL, v, 0, 1); }             \
    size_t shmem_##N##_test_any(T *iv, size_t n, const int *st, int cmp, T v)  \
    { return N##_wait(iv, n, NULL, st, cmp, NULL, v, 1, 1); }                  \
    size_t shmem_##N##_test_some(T *iv, size_t n, size_t *idx, const int *st,  \
                                 int cmp, T v)                                 \
    { return N##_wait(iv, n, idx, st, cmp, NULL, v, 2, 1); }                   \
    int shmem_##N##_test_all_vector(T *iv, size_t n, const int *st, int cmp,   \
                                    T *vs)                                     \
    { return (int)N##_wait(iv, n, NULL, st, cmp, vs, 0, 0, 1); }               \
    size_t shmem_##N##_test_any_vector(T *iv, size_t n, const int *st, int cmp, \
                                       T *vs)                                  \
    { return N##_wait(iv, n, NULL, st, cmp, vs, 0, 1, 1); }                    \
    size_t shmem_##N##_test_some_vector(T *iv, size_t n, size_t *idx,          \
                                        const int *st, int cmp, T *vs)         \
    { return N##_wait(iv, n, idx, st, cmp, vs, 0, 2, 1); }
SHMEMI_WAIT_TYPES(DEFINE_WAIT_VEC)

/* Profiling control: there is no profiling layer to switch. */
void shmem_pcontrol(int level, ...) { (void)level; }

static void put_signal(void *dest, const void *src, size_t n, uint64_t *sig,
                       uint64_t signal, int op, int pe)
{
    struct shmemi_target t;
    if (op != SHMEM_SIGNAL_SET && op != SHMEM_SIGNAL_ADD) {
        fprintf(stderr, "tnbc-shmem: error PE %d: put_signal with unknown signal "
                "operation %d; refused\n", shmemi.me, op);
        return;
    }
    if (shmemi_xlate("put_signal", dest, n, pe, &t) ||
        shmemi_xlate("put_signal (signal)", sig, sizeof *sig, pe, &t))
        return;
    shmemi_put(dest, src, n, pe, 1);
    /* the data must be complete at the target before the signal lands */
    shmemi_quiet();
    shmemi_amo(op == SHMEM_SIGNAL_SET ? AMO_SET : AMO_ADD, sig, sizeof *sig,
               signal, 0, pe, 0);
}

void shmem_putmem_signal(void *dest, const void *src, size_t n, uint64_t *sig,
                         uint64_t signal, int op, int pe)
{
    put_signal(dest, src, n, sig, signal, op, pe);
}

void shmem_putmem_signal_nbi(void *dest, const void *src, size_t n, uint64_t *sig,
                             uint64_t signal, int op, int pe)
{
    put_signal(dest, src, n, sig, signal, op, pe);
}

uint64_t shmem_signal_fetch(const uint64_t *sig)
{
    return __atomic_load_n(sig, __ATOMIC_ACQUIRE);
}

uint64_t shmem_signal_wait_until(uint64_t *sig, int cmp, uint64_t value)
{
    shmem_uint64_wait_until(sig, cmp, value);
    return __atomic_load_n(sig, __ATOMIC_ACQUIRE);
}

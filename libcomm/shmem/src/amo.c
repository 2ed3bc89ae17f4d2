// SPDX-License-Identifier: BSD-3-Clause
/*
 * amo.c - remote atomic operations.
 *
 * CPU atomics are used on a region only when every PE's copy of it is mapped
 * here (one node, transport "auto"; static data too once static.c shared
 * it): mixing CPU atomics with MPI atomics on one location would not be
 * atomic. Otherwise every atomic on that region, including one to this PE,
 * goes through MPI (MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Accumulate).
 */
#include "internal.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "atomics pass values through the low bytes of a uint64_t");

static uint64_t cpu_amo(enum shmemi_amo_op op, void *p, size_t size,
                        uint64_t v, uint64_t cond)
{
#define CPU_OPS(W)                                                             \
    do {                                                                       \
        W *a = p, x = (W)v, c = (W)cond;                                       \
        switch (op) {                                                          \
        case AMO_FETCH: return __atomic_load_n(a, __ATOMIC_SEQ_CST);           \
        case AMO_SET: __atomic_store_n(a, x, __ATOMIC_SEQ_CST); return 0;      \
        case AMO_SWAP: return __atomic_exchange_n(a, x, __ATOMIC_SEQ_CST);     \
        case AMO_CSWAP:                                                        \
            __atomic_compare_exchange_n(a, &c, x, 0, __ATOMIC_SEQ_CST,         \
                                        __ATOMIC_SEQ_CST);                     \
            return c;                                                          \
        case AMO_ADD: return __atomic_fetch_add(a, x, __ATOMIC_SEQ_CST);       \
        case AMO_AND: return __atomic_fetch_and(a, x, __ATOMIC_SEQ_CST);       \
        case AMO_OR: return __atomic_fetch_or(a, x, __ATOMIC_SEQ_CST);         \
        case AMO_XOR: return __atomic_fetch_xor(a, x, __ATOMIC_SEQ_CST);       \
        }                                                                      \
    } while (0)
    if (size == 4)
        CPU_OPS(uint32_t);
    else
        CPU_OPS(uint64_t);
    return 0;
#undef CPU_OPS
}

static MPI_Op mpi_op(enum shmemi_amo_op op)
{
    switch (op) {
    case AMO_FETCH: return MPI_NO_OP;
    case AMO_ADD: return MPI_SUM;
    case AMO_AND: return MPI_BAND;
    case AMO_OR: return MPI_BOR;
    case AMO_XOR: return MPI_BXOR;
    default: return MPI_REPLACE;
    }
}

static uint64_t mpi_amo(enum shmemi_amo_op op, const struct shmemi_target *t,
                        size_t size, uint64_t v, uint64_t cond, int pe,
                        int want_old)
{
    MPI_Datatype dt = size == 4 ? MPI_UINT32_T : MPI_UINT64_T;
    uint64_t old = 0;
    shmemi_lock();
    if (op == AMO_CSWAP) {
        MPI_Compare_and_swap(&v, &cond, &old, dt, pe, t->off, t->win);
    } else if (want_old || op == AMO_FETCH) {
        MPI_Fetch_and_op(&v, &old, dt, pe, t->off, mpi_op(op), t->win);
    } else {
        const void *src = shmemi_bounce(&v, size);
        MPI_Accumulate(src ? src : &v, 1, dt, pe, t->off, 1, dt, mpi_op(op), t->win);
        if (!src)
            MPI_Win_flush_local(pe, t->win);
        shmemi_mark_pending(t->region, pe);
        shmemi_unlock();
        return 0;
    }
    MPI_Win_flush(pe, t->win);
    shmemi_unlock();
    return old;
}

/* An atomic fetch is a read of one aligned word, which is single-copy
 * atomic for loads and for MPI_Get (one transfer): it needs no
 * read-modify-write. (MPI calls a get concurrent with an accumulate a
 * conflict; wait_until's local loads of words that peers change with MPI
 * atomics rely on the same single-copy atomicity.) On the MPI path it therefore avoids MPI_Fetch_and_op,
 * whose target-side accumulate lock in Open MPI's osc/ucx a PE spinning on
 * atomic_fetch of its own variable re-takes so fast that a peer's
 * MPI_Accumulate (atomic_set) to it never gets it. With a local read, that
 * accumulate still needs this PE's MPI progress, given below: together they
 * make the set/fetch-on-a-global test, which hung (issue #23), pass. */
static uint64_t fetch_word(const struct shmemi_target *t, size_t size, int pe)
{
    uint64_t v = 0;
    if (t->local) {
        /* Peers change this word with MPI atomics, which in osc/ucx on one
         * node may need this PE's MPI progress (their accumulate lock is a
         * remote atomic): a PE spinning here must give it, or the peer's
         * atomic_set never lands. */
        shmemi_mpi_progress();
        if (size == 4)
            return __atomic_load_n((uint32_t *)t->local, __ATOMIC_SEQ_CST);
        return __atomic_load_n((uint64_t *)t->local, __ATOMIC_SEQ_CST);
    }
    shmemi_lock();
    MPI_Get(&v, (int)size, MPI_BYTE, pe, t->off, (int)size, MPI_BYTE, t->win);
    MPI_Win_flush(pe, t->win);
    shmemi_unlock();
    return v;
}

uint64_t shmemi_amo(enum shmemi_amo_op op, void *dest, size_t size,
                    uint64_t value, uint64_t cond, int pe, int want_old)
{
    struct shmemi_target t;
    if (shmemi_xlate("atomic", dest, size, pe, &t))
        return 0;
    if (t.local && (shmemi.amo_local[t.region] || shmemi.npes == 1))
        return cpu_amo(op, t.local, size, value, cond);
    if (op == AMO_FETCH)
        return fetch_word(&t, size, pe);
    return mpi_amo(op, &t, size, value, cond, pe, want_old);
}

static inline uint64_t bits(const void *v, size_t n)
{
    uint64_t b = 0;
    memcpy(&b, v, n);
    return b;
}

#define AMO(T, OP, D, V, C, PE, OLD)                                           \
    ({                                                                         \
        T v_ = (V), c_ = (C), r_;                                              \
        uint64_t o_ = shmemi_amo(OP, (void *)(D), sizeof(T), bits(&v_, sizeof(T)), \
                                 bits(&c_, sizeof(T)), PE, OLD);               \
        memcpy(&r_, &o_, sizeof(T));                                           \
        r_;                                                                    \
    })

#define DEFINE_AMO_EXT(T, N)                                                   \
    T shmem_##N##_atomic_fetch(const T *s, int pe)                             \
    { return AMO(T, AMO_FETCH, s, 0, 0, pe, 1); }                              \
    void shmem_##N##_atomic_set(T *d, T v, int pe)                             \
    { (void)AMO(T, AMO_SET, d, v, 0, pe, 0); }                                 \
    T shmem_##N##_atomic_swap(T *d, T v, int pe)                               \
    { return AMO(T, AMO_SWAP, d, v, 0, pe, 1); }
#define DEFINE_AMO(T, N)                                                       \
    T shmem_##N##_atomic_compare_swap(T *d, T c, T v, int pe)                  \
    { return AMO(T, AMO_CSWAP, d, v, c, pe, 1); }                              \
    T shmem_##N##_atomic_fetch_add(T *d, T v, int pe)                          \
    { return AMO(T, AMO_ADD, d, v, 0, pe, 1); }                                \
    void shmem_##N##_atomic_add(T *d, T v, int pe)                             \
    { (void)AMO(T, AMO_ADD, d, v, 0, pe, 0); }                                 \
    T shmem_##N##_atomic_fetch_inc(T *d, int pe)                               \
    { return AMO(T, AMO_ADD, d, 1, 0, pe, 1); }                                \
    void shmem_##N##_atomic_inc(T *d, int pe)                                  \
    { (void)AMO(T, AMO_ADD, d, 1, 0, pe, 0); }
#define DEFINE_AMO_BIT(T, N)                                                   \
    T shmem_##N##_atomic_fetch_and(T *d, T v, int pe)                          \
    { return AMO(T, AMO_AND, d, v, 0, pe, 1); }                                \
    void shmem_##N##_atomic_and(T *d, T v, int pe)                             \
    { (void)AMO(T, AMO_AND, d, v, 0, pe, 0); }                                 \
    T shmem_##N##_atomic_fetch_or(T *d, T v, int pe)                           \
    { return AMO(T, AMO_OR, d, v, 0, pe, 1); }                                 \
    void shmem_##N##_atomic_or(T *d, T v, int pe)                              \
    { (void)AMO(T, AMO_OR, d, v, 0, pe, 0); }                                  \
    T shmem_##N##_atomic_fetch_xor(T *d, T v, int pe)                          \
    { return AMO(T, AMO_XOR, d, v, 0, pe, 1); }                                \
    void shmem_##N##_atomic_xor(T *d, T v, int pe)                             \
    { (void)AMO(T, AMO_XOR, d, v, 0, pe, 0); }
SHMEMI_AMO_EXT_TYPES(DEFINE_AMO_EXT)
SHMEMI_AMO_TYPES(DEFINE_AMO)
SHMEMI_AMO_BIT_TYPES(DEFINE_AMO_BIT)

#define DEFINE_OLD_AMO(T, N)                                                   \
    T shmem_##N##_fetch(const T *s, int pe) { return shmem_##N##_atomic_fetch(s, pe); } \
    void shmem_##N##_set(T *d, T v, int pe) { shmem_##N##_atomic_set(d, v, pe); }      \
    T shmem_##N##_swap(T *d, T v, int pe) { return shmem_##N##_atomic_swap(d, v, pe); } \
    T shmem_##N##_cswap(T *d, T c, T v, int pe)                                \
    { return shmem_##N##_atomic_compare_swap(d, c, v, pe); }                   \
    T shmem_##N##_fadd(T *d, T v, int pe) { return shmem_##N##_atomic_fetch_add(d, v, pe); } \
    void shmem_##N##_add(T *d, T v, int pe) { shmem_##N##_atomic_add(d, v, pe); }      \
    T shmem_##N##_finc(T *d, int pe) { return shmem_##N##_atomic_fetch_inc(d, pe); }   \
    void shmem_##N##_inc(T *d, int pe) { shmem_##N##_atomic_inc(d, pe); }
SHMEMI_OLD_AMO_TYPES(DEFINE_OLD_AMO)
float shmem_float_swap(float *d, float v, int pe) { return shmem_float_atomic_swap(d, v, pe); }
double shmem_double_swap(double *d, double v, int pe) { return shmem_double_atomic_swap(d, v, pe); }
float shmem_float_fetch(const float *s, int pe) { return shmem_float_atomic_fetch(s, pe); }
double shmem_double_fetch(const double *s, int pe) { return shmem_double_atomic_fetch(s, pe); }
void shmem_float_set(float *d, float v, int pe) { shmem_float_atomic_set(d, v, pe); }
void shmem_double_set(double *d, double v, int pe) { shmem_double_atomic_set(d, v, pe); }

/* Non-blocking fetching atomics: issued as the blocking ones, so the value
 * is already in *fetch on return (quiet would be the latest point). */
#define DEFINE_AMO_EXT_NBI(T, N)                                               \
    void shmem_##N##_atomic_fetch_nbi(T *f, const T *s, int pe)                \
    { *f = shmem_##N##_atomic_fetch(s, pe); }                                  \
    void shmem_##N##_atomic_swap_nbi(T *f, T *d, T v, int pe)                  \
    { *f = shmem_##N##_atomic_swap(d, v, pe); }
#define DEFINE_AMO_NBI(T, N)                                                   \
    void shmem_##N##_atomic_compare_swap_nbi(T *f, T *d, T c, T v, int pe)     \
    { *f = shmem_##N##_atomic_compare_swap(d, c, v, pe); }                     \
    void shmem_##N##_atomic_fetch_inc_nbi(T *f, T *d, int pe)                  \
    { *f = shmem_##N##_atomic_fetch_inc(d, pe); }                              \
    void shmem_##N##_atomic_fetch_add_nbi(T *f, T *d, T v, int pe)             \
    { *f = shmem_##N##_atomic_fetch_add(d, v, pe); }
#define DEFINE_AMO_BIT_NBI(T, N)                                               \
    void shmem_##N##_atomic_fetch_and_nbi(T *f, T *d, T v, int pe)             \
    { *f = shmem_##N##_atomic_fetch_and(d, v, pe); }                           \
    void shmem_##N##_atomic_fetch_or_nbi(T *f, T *d, T v, int pe)              \
    { *f = shmem_##N##_atomic_fetch_or(d, v, pe); }                            \
    void shmem_##N##_atomic_fetch_xor_nbi(T *f, T *d, T v, int pe)             \
    { *f = shmem_##N##_atomic_fetch_xor(d, v, pe); }
SHMEMI_AMO_EXT_TYPES(DEFINE_AMO_EXT_NBI)
SHMEMI_AMO_TYPES(DEFINE_AMO_NBI)
SHMEMI_AMO_BIT_TYPES(DEFINE_AMO_BIT_NBI)

/* Deprecated cache management: the memory model needs none of it. */
void shmem_clear_cache_inv(void) {}
void shmem_set_cache_inv(void) {}
void shmem_clear_cache_line_inv(void *d) { (void)d; }
void shmem_set_cache_line_inv(void *d) { (void)d; }
void shmem_udcflush(void) {}
void shmem_udcflush_line(void *d) { (void)d; }

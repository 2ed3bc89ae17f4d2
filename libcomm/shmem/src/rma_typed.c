// SPDX-License-Identifier: BSD-3-Clause
/*
 * rma_typed.c - the typed and sized RMA entry points, generated from the
 * type lists in shmem.h so the header and the library cannot drift apart.
 * shmem_TYPE_p stores directly when the target is mapped: it is the 8-byte
 * message-rate path.
 */
#include "internal.h"

#define DEFINE_RMA(T, N)                                                       \
    void shmem_##N##_put(T *d, const T *s, size_t n, int pe)                   \
    { shmemi_put(d, s, shmemi_nbytes(n, sizeof(T)), pe, 0); }                                \
    void shmem_##N##_get(T *d, const T *s, size_t n, int pe)                   \
    { shmemi_get(d, s, shmemi_nbytes(n, sizeof(T)), pe, 0); }                                \
    void shmem_##N##_put_nbi(T *d, const T *s, size_t n, int pe)               \
    { shmemi_put(d, s, shmemi_nbytes(n, sizeof(T)), pe, 1); }                                \
    void shmem_##N##_get_nbi(T *d, const T *s, size_t n, int pe)               \
    { shmemi_get(d, s, shmemi_nbytes(n, sizeof(T)), pe, 1); }                                \
    void shmem_##N##_p(T *d, T v, int pe)                                      \
    {                                                                          \
        struct shmemi_target t;                                                \
        if (shmemi_xlate("p", d, sizeof(T), pe, &t))                           \
            return;                                                            \
        if (t.local)                                                           \
            *(T *)t.local = v;                                                 \
        else                                                                   \
            shmemi_put(d, &v, sizeof(T), pe, 0);                               \
    }                                                                          \
    T shmem_##N##_g(const T *s, int pe)                                        \
    {                                                                          \
        struct shmemi_target t;                                                \
        T v;                                                                   \
        memset(&v, 0, sizeof v);                                               \
        if (shmemi_xlate("g", s, sizeof(T), pe, &t))                           \
            return v;                                                          \
        if (t.local)                                                           \
            return *(const T *)t.local;                                        \
        shmemi_get(&v, s, sizeof(T), pe, 0);                                   \
        return v;                                                              \
    }                                                                          \
    void shmem_##N##_iput(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst,      \
                          size_t n, int pe)                                    \
    { shmemi_iput(d, s, dst, sst, sizeof(T), n, pe); }                         \
    void shmem_##N##_iget(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst,      \
                          size_t n, int pe)                                    \
    { shmemi_iget(d, s, dst, sst, sizeof(T), n, pe); }                         \
    void shmem_##N##_put_signal(T *d, const T *s, size_t n, uint64_t *sig,     \
                                uint64_t sv, int op, int pe)                   \
    { shmem_putmem_signal(d, s, shmemi_nbytes(n, sizeof(T)), sig, sv, op, pe); }             \
    void shmem_##N##_put_signal_nbi(T *d, const T *s, size_t n, uint64_t *sig, \
                                    uint64_t sv, int op, int pe)               \
    { shmem_putmem_signal_nbi(d, s, shmemi_nbytes(n, sizeof(T)), sig, sv, op, pe); }
SHMEMI_RMA_TYPES(DEFINE_RMA)

#define DEFINE_SIZED(B, S)                                                     \
    void shmem_put##B(void *d, const void *s, size_t n, int pe)                \
    { shmemi_put(d, s, shmemi_nbytes(n, S), pe, 0); }                                        \
    void shmem_get##B(void *d, const void *s, size_t n, int pe)                \
    { shmemi_get(d, s, shmemi_nbytes(n, S), pe, 0); }                                        \
    void shmem_put##B##_nbi(void *d, const void *s, size_t n, int pe)          \
    { shmemi_put(d, s, shmemi_nbytes(n, S), pe, 1); }                                        \
    void shmem_get##B##_nbi(void *d, const void *s, size_t n, int pe)          \
    { shmemi_get(d, s, shmemi_nbytes(n, S), pe, 1); }                                        \
    void shmem_iput##B(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst,   \
                       size_t n, int pe)                                       \
    { shmemi_iput(d, s, dst, sst, S, n, pe); }                                 \
    void shmem_iget##B(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst,   \
                       size_t n, int pe)                                       \
    { shmemi_iget(d, s, dst, sst, S, n, pe); }                                 \
    void shmem_put##B##_signal(void *d, const void *s, size_t n, uint64_t *sig, \
                               uint64_t sv, int op, int pe)                    \
    { shmem_putmem_signal(d, s, shmemi_nbytes(n, S), sig, sv, op, pe); }        \
    void shmem_put##B##_signal_nbi(void *d, const void *s, size_t n,           \
                                   uint64_t *sig, uint64_t sv, int op, int pe) \
    { shmem_putmem_signal_nbi(d, s, shmemi_nbytes(n, S), sig, sv, op, pe); }
SHMEMI_SIZES(DEFINE_SIZED)

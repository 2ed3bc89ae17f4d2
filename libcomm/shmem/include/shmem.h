/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shmem.h - OpenSHMEM 1.4/1.5 API of tnbc-shmem, an OpenSHMEM library over MPI-3.
 *
 * Remote PEs on the same node are reached by load/store through shared memory;
 * the others through one MPI-3 RMA window locked once. The extensions of the
 * design (active messages, counted segments, two-address reads) are declared
 * in <shmemx.h> under shmemx_ names. See docs/shmem.md.
 */
#ifndef TNBC_SHMEM_H
#define TNBC_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1.5: every C function and C11 generic interface of the 1.5 specification
 * is declared and implemented (docs/shmem.md lists the conformance). */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "tnbc-shmem (OpenSHMEM over MPI-3)"
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN

enum { SHMEM_THREAD_SINGLE, SHMEM_THREAD_FUNNELED, SHMEM_THREAD_SERIALIZED,
       SHMEM_THREAD_MULTIPLE };

enum { SHMEM_CMP_EQ, SHMEM_CMP_NE, SHMEM_CMP_GT, SHMEM_CMP_LE, SHMEM_CMP_LT,
       SHMEM_CMP_GE };
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_GE SHMEM_CMP_GE

enum { SHMEM_SIGNAL_SET, SHMEM_SIGNAL_ADD };

/* pSync/pWrk are accepted for compatibility; the collectives run on MPI and
 * never touch them, but the sizes are those programs expect to allocate. */
#define SHMEM_SYNC_VALUE (-1L)
#define SHMEM_BARRIER_SYNC_SIZE 4
#define SHMEM_BCAST_SYNC_SIZE 4
#define SHMEM_COLLECT_SYNC_SIZE 4
#define SHMEM_REDUCE_SYNC_SIZE 4
#define SHMEM_ALLTOALL_SYNC_SIZE 4
#define SHMEM_ALLTOALLS_SYNC_SIZE 4
#define SHMEM_SYNC_SIZE 4
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---- set-up, queries ---------------------------------------------------- */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
/* pre-1.2 names, for old codes */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);

/* ---- symmetric heap -------------------------------------------------------- */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);
void *shmalloc(size_t size);
void *shmemalign(size_t alignment, size_t size);
void *shrealloc(void *ptr, size_t size);
void shfree(void *ptr);

/* ---- RMA ----------------------------------------------------------------- */
#define SHMEMI_RMA_TYPES(X)                                                     \
    X(float, float) X(double, double) X(long double, longdouble)              \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)           \
    X(long, long) X(long long, longlong) X(unsigned char, uchar)              \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)   \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16)        \
    X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)                   \
    X(ptrdiff_t, ptrdiff)

#define SHMEMI_DECL_RMA(T, N)                                                  \
    void shmem_##N##_put(T *dest, const T *src, size_t nelems, int pe);        \
    void shmem_##N##_get(T *dest, const T *src, size_t nelems, int pe);        \
    void shmem_##N##_put_nbi(T *dest, const T *src, size_t nelems, int pe);    \
    void shmem_##N##_get_nbi(T *dest, const T *src, size_t nelems, int pe);    \
    void shmem_##N##_p(T *dest, T value, int pe);                              \
    T shmem_##N##_g(const T *src, int pe);                                     \
    void shmem_##N##_iput(T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, \
                          size_t nelems, int pe);                              \
    void shmem_##N##_iget(T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, \
                          size_t nelems, int pe);                              \
    void shmem_##N##_put_signal(T *dest, const T *src, size_t nelems,          \
                                uint64_t *sig_addr, uint64_t signal,           \
                                int sig_op, int pe);                           \
    void shmem_##N##_put_signal_nbi(T *dest, const T *src, size_t nelems,      \
                                    uint64_t *sig_addr, uint64_t signal,       \
                                    int sig_op, int pe);
SHMEMI_RMA_TYPES(SHMEMI_DECL_RMA)

#define SHMEMI_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)
#define SHMEMI_DECL_SIZED(B, S)                                                \
    void shmem_put##B(void *dest, const void *src, size_t nelems, int pe);     \
    void shmem_get##B(void *dest, const void *src, size_t nelems, int pe);     \
    void shmem_put##B##_nbi(void *dest, const void *src, size_t nelems, int pe); \
    void shmem_get##B##_nbi(void *dest, const void *src, size_t nelems, int pe); \
    void shmem_iput##B(void *dest, const void *src, ptrdiff_t dst,             \
                       ptrdiff_t sst, size_t nelems, int pe);                  \
    void shmem_iget##B(void *dest, const void *src, ptrdiff_t dst,             \
                       ptrdiff_t sst, size_t nelems, int pe);                  \
    void shmem_put##B##_signal(void *dest, const void *src, size_t nelems,     \
                               uint64_t *sig_addr, uint64_t signal,            \
                               int sig_op, int pe);                            \
    void shmem_put##B##_signal_nbi(void *dest, const void *src, size_t nelems, \
                                   uint64_t *sig_addr, uint64_t signal,        \
                                   int sig_op, int pe);
SHMEMI_SIZES(SHMEMI_DECL_SIZED)

void shmem_putmem(void *dest, const void *src, size_t nbytes, int pe);
void shmem_getmem(void *dest, const void *src, size_t nbytes, int pe);
void shmem_putmem_nbi(void *dest, const void *src, size_t nbytes, int pe);
void shmem_getmem_nbi(void *dest, const void *src, size_t nbytes, int pe);
void shmem_putmem_signal(void *dest, const void *src, size_t nbytes,
                         uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
void shmem_putmem_signal_nbi(void *dest, const void *src, size_t nbytes,
                             uint64_t *sig_addr, uint64_t signal, int sig_op,
                             int pe);
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t value);

/* ---- ordering, synchronization ------------------------------------------ */
void shmem_fence(void);
void shmem_quiet(void);
void shmem_barrier_all(void);
void shmem_sync_all(void);
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);

#define SHMEMI_WAIT_TYPES(X)                                                    \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)          \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)   \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)      \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)                   \
    X(ptrdiff_t, ptrdiff)
#define SHMEMI_DECL_WAIT(T, N)                                                 \
    void shmem_##N##_wait_until(T *ivar, int cmp, T value);                    \
    int shmem_##N##_test(T *ivar, int cmp, T value);                           \
    void shmem_##N##_wait(T *ivar, T value);
SHMEMI_WAIT_TYPES(SHMEMI_DECL_WAIT)
/* 1.5 point-to-point synchronization on arrays; status[i] != 0 excludes
 * ivars[i] (status may be NULL); _any/_some return SIZE_MAX / 0 when every
 * element is excluded */
#define SHMEMI_DECL_WAIT_VEC(T, N)                                             \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, \
                                    int cmp, T value);                         \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems,                 \
                                      const int *status, int cmp, T value);    \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, \
                                       const int *status, int cmp, T value);   \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems,            \
                                           const int *status, int cmp,         \
                                           T *values);                         \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems,          \
                                             const int *status, int cmp,       \
                                             T *values);                       \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems,         \
                                              size_t *indices,                 \
                                              const int *status, int cmp,      \
                                              T *values);                      \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status,       \
                             int cmp, T value);                                \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status,    \
                                int cmp, T value);                             \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,     \
                                 const int *status, int cmp, T value);         \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, \
                                    int cmp, T *values);                       \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems,               \
                                       const int *status, int cmp, T *values); \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, \
                                        const int *status, int cmp, T *values);
SHMEMI_WAIT_TYPES(SHMEMI_DECL_WAIT_VEC)
void shmem_pcontrol(int level, ...);

/* ---- atomics ----------------------------------------------------------------- */
#define SHMEMI_AMO_TYPES(X)                                                     \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint)    \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)                  \
    X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)                   \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define SHMEMI_AMO_EXT_TYPES(X) SHMEMI_AMO_TYPES(X) X(float, float) X(double, double)
#define SHMEMI_AMO_BIT_TYPES(X)                                                 \
    X(unsigned int, uint) X(unsigned long, ulong)                             \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)      \
    X(uint32_t, uint32) X(uint64_t, uint64)

#define SHMEMI_DECL_AMO_EXT(T, N)                                              \
    T shmem_##N##_atomic_fetch(const T *src, int pe);                          \
    void shmem_##N##_atomic_set(T *dest, T value, int pe);                     \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe);
#define SHMEMI_DECL_AMO(T, N)                                                  \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);       \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                  \
    void shmem_##N##_atomic_add(T *dest, T value, int pe);                     \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe);                           \
    void shmem_##N##_atomic_inc(T *dest, int pe);
#define SHMEMI_DECL_AMO_BIT(T, N)                                              \
    T shmem_##N##_atomic_fetch_and(T *dest, T value, int pe);                  \
    void shmem_##N##_atomic_and(T *dest, T value, int pe);                     \
    T shmem_##N##_atomic_fetch_or(T *dest, T value, int pe);                   \
    void shmem_##N##_atomic_or(T *dest, T value, int pe);                      \
    T shmem_##N##_atomic_fetch_xor(T *dest, T value, int pe);                  \
    void shmem_##N##_atomic_xor(T *dest, T value, int pe);
SHMEMI_AMO_EXT_TYPES(SHMEMI_DECL_AMO_EXT)
SHMEMI_AMO_TYPES(SHMEMI_DECL_AMO)
SHMEMI_AMO_BIT_TYPES(SHMEMI_DECL_AMO_BIT)

/* deprecated (1.3) atomic names, still common in existing codes */
#define SHMEMI_OLD_AMO_TYPES(X) SHMEMI_AMO_TYPES(X)
#define SHMEMI_DECL_OLD_AMO(T, N)                                              \
    T shmem_##N##_fetch(const T *src, int pe);                                 \
    void shmem_##N##_set(T *dest, T value, int pe);                            \
    T shmem_##N##_swap(T *dest, T value, int pe);                              \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe);                     \
    T shmem_##N##_fadd(T *dest, T value, int pe);                              \
    void shmem_##N##_add(T *dest, T value, int pe);                            \
    T shmem_##N##_finc(T *dest, int pe);                                       \
    void shmem_##N##_inc(T *dest, int pe);
SHMEMI_OLD_AMO_TYPES(SHMEMI_DECL_OLD_AMO)
float shmem_float_swap(float *dest, float value, int pe);
double shmem_double_swap(double *dest, double value, int pe);
float shmem_float_fetch(const float *src, int pe);
double shmem_double_fetch(const double *src, int pe);
void shmem_float_set(float *dest, float value, int pe);
void shmem_double_set(double *dest, double value, int pe);
/* deprecated cache management: no-ops, as in every current implementation */
void shmem_clear_cache_inv(void);
void shmem_set_cache_inv(void);
void shmem_clear_cache_line_inv(void *dest);
void shmem_set_cache_line_inv(void *dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void *dest);

/* non-blocking fetching atomics (1.5): the fetched value is in *fetch
 * after shmem_quiet (here: already when the call returns) */
#define SHMEMI_DECL_AMO_EXT_NBI(T, N)                                          \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *src, int pe);         \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);
#define SHMEMI_DECL_AMO_NBI(T, N)                                              \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond,        \
                                             T value, int pe);                 \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);          \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);
#define SHMEMI_DECL_AMO_BIT_NBI(T, N)                                          \
    void shmem_##N##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe); \
    void shmem_##N##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe);  \
    void shmem_##N##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe);
SHMEMI_AMO_EXT_TYPES(SHMEMI_DECL_AMO_EXT_NBI)
SHMEMI_AMO_TYPES(SHMEMI_DECL_AMO_NBI)
SHMEMI_AMO_BIT_TYPES(SHMEMI_DECL_AMO_BIT_NBI)

/* ---- locks ---------------------------------------------------------------------- */
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* ---- collectives (active sets) ------------------------------------------------- */
void shmem_broadcast32(void *dest, const void *src, size_t nelems, int PE_root,
                       int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_broadcast64(void *dest, const void *src, size_t nelems, int PE_root,
                       int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_collect32(void *dest, const void *src, size_t nelems, int PE_start,
                     int logPE_stride, int PE_size, long *pSync);
void shmem_collect64(void *dest, const void *src, size_t nelems, int PE_start,
                     int logPE_stride, int PE_size, long *pSync);
void shmem_fcollect32(void *dest, const void *src, size_t nelems, int PE_start,
                      int logPE_stride, int PE_size, long *pSync);
void shmem_fcollect64(void *dest, const void *src, size_t nelems, int PE_start,
                      int logPE_stride, int PE_size, long *pSync);
void shmem_alltoall32(void *dest, const void *src, size_t nelems, int PE_start,
                      int logPE_stride, int PE_size, long *pSync);
void shmem_alltoall64(void *dest, const void *src, size_t nelems, int PE_start,
                      int logPE_stride, int PE_size, long *pSync);
void shmem_alltoalls32(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems, int PE_start, int logPE_stride, int PE_size,
                       long *pSync);
void shmem_alltoalls64(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems, int PE_start, int logPE_stride, int PE_size,
                       long *pSync);

#define SHMEMI_REDUCE_BIT_TYPES(X)                                              \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define SHMEMI_REDUCE_ARITH_TYPES(X)                                            \
    SHMEMI_REDUCE_BIT_TYPES(X) X(float, float) X(double, double)              \
    X(long double, longdouble)
#define SHMEMI_DECL_TO_ALL(T, N, OP)                                           \
    void shmem_##N##_##OP##_to_all(T *dest, const T *src, int nreduce,         \
                                   int PE_start, int logPE_stride,             \
                                   int PE_size, T *pWrk, long *pSync);
/* the reduction operators, applied to X(T, N, OP) */
#define SHMEMI_BIT_OPS(X, T, N) X(T, N, and) X(T, N, or) X(T, N, xor)
#define SHMEMI_ARITH_OPS(X, T, N) X(T, N, sum) X(T, N, prod) X(T, N, min) X(T, N, max)
#define SHMEMI_DECL_BIT_TO_ALL(T, N) SHMEMI_BIT_OPS(SHMEMI_DECL_TO_ALL, T, N)
#define SHMEMI_DECL_ARITH_TO_ALL(T, N) SHMEMI_ARITH_OPS(SHMEMI_DECL_TO_ALL, T, N)
SHMEMI_REDUCE_BIT_TYPES(SHMEMI_DECL_BIT_TO_ALL)
SHMEMI_REDUCE_ARITH_TYPES(SHMEMI_DECL_ARITH_TO_ALL)
/* complex sum/prod (C only: C++ has no _Complex) */
#ifndef __cplusplus
#define SHMEMI_COMPLEX_TYPES(X) X(float _Complex, complexf) X(double _Complex, complexd)
#define SHMEMI_SUMPROD_OPS(X, T, N) X(T, N, sum) X(T, N, prod)
#define SHMEMI_DECL_SUMPROD_TO_ALL(T, N) SHMEMI_SUMPROD_OPS(SHMEMI_DECL_TO_ALL, T, N)
SHMEMI_COMPLEX_TYPES(SHMEMI_DECL_SUMPROD_TO_ALL)
#endif

/* ---- teams (1.5) ---------------------------------------------------------- */
typedef struct shmemi_team *shmem_team_t;
typedef struct { int num_contexts; } shmem_team_config_t;
extern shmem_team_t SHMEM_TEAM_WORLD;
extern shmem_team_t SHMEM_TEAM_SHARED;   /* PEs reachable by load/store */
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask,
                          shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src, int pe, shmem_team_t dest);
int shmem_team_split_strided(shmem_team_t parent, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team,
                        const shmem_team_config_t *yaxis_config, long yaxis_mask,
                        shmem_team_t *yaxis_team);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
void shmem_team_destroy(shmem_team_t team);
int shmem_team_sync(shmem_team_t team);
/* shmem_sync(team) (1.5) and shmem_sync(PE_start, logPE_stride, PE_size,
 * pSync) (deprecated) share one name: the macro picks by argument count.
 * The 4-argument function keeps the symbol shmem_sync. */
#define SHMEMI_SYNC_PICK(_1, _2, _3, _4, NAME, ...) NAME
#define shmem_sync(...)                                                        \
    SHMEMI_SYNC_PICK(__VA_ARGS__, (shmem_sync), shmemi_sync_bad,               \
                     shmemi_sync_bad, shmem_team_sync, shmemi_sync_bad)(__VA_ARGS__)
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *src,
                       size_t nbytes, int root);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *src, size_t nbytes);
int shmem_collectmem(shmem_team_t team, void *dest, const void *src, size_t nbytes);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *src, size_t nbytes);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *src,
                       ptrdiff_t dst, ptrdiff_t sst, size_t nbytes);
#define SHMEMI_DECL_TEAM_COLL(T, N)                                            \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *src,        \
                              size_t nelems, int root);                        \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *src,          \
                            size_t nelems);                                    \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *src,         \
                             size_t nelems);                                   \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *src,         \
                             size_t nelems);                                   \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *src,        \
                              ptrdiff_t dst, ptrdiff_t sst, size_t nelems);
SHMEMI_RMA_TYPES(SHMEMI_DECL_TEAM_COLL)

/* team reductions: the type tables of 1.5 (bitwise on the unsigned and
 * fixed-width types, min/max on every integer and real type, sum/prod also
 * on complex), plus the signed bitwise types of 1.4 */
#define SHMEMI_TEAM_BIT_TYPES(X)                                                \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)   \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)                  \
    X(int8_t, int8) X(int16_t, int16) X(int32_t, int32) X(int64_t, int64)     \
    X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)                 \
    X(uint64_t, uint64) X(size_t, size)                                       \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)
#define SHMEMI_TEAM_MINMAX_TYPES(X)                                             \
    X(char, char) X(signed char, schar) X(short, short) X(int, int)           \
    X(long, long) X(long long, longlong) X(ptrdiff_t, ptrdiff)                \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)   \
    X(unsigned long, ulong) X(unsigned long long, ulonglong)                  \
    X(int8_t, int8) X(int16_t, int16) X(int32_t, int32) X(int64_t, int64)     \
    X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32)                 \
    X(uint64_t, uint64) X(size_t, size) X(float, float) X(double, double)     \
    X(long double, longdouble)
#define SHMEMI_MINMAX_OPS(X, T, N) X(T, N, min) X(T, N, max)
#define SHMEMI_SUMPROD_OPS_(X, T, N) X(T, N, sum) X(T, N, prod)
#define SHMEMI_DECL_REDUCE(T, N, OP)                                           \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *src,    \
                                  size_t nreduce);
#define SHMEMI_DECL_BIT_REDUCE(T, N) SHMEMI_BIT_OPS(SHMEMI_DECL_REDUCE, T, N)
#define SHMEMI_DECL_MINMAX_REDUCE(T, N)                                        \
    SHMEMI_MINMAX_OPS(SHMEMI_DECL_REDUCE, T, N)                                \
    SHMEMI_SUMPROD_OPS_(SHMEMI_DECL_REDUCE, T, N)
SHMEMI_TEAM_BIT_TYPES(SHMEMI_DECL_BIT_REDUCE)
SHMEMI_TEAM_MINMAX_TYPES(SHMEMI_DECL_MINMAX_REDUCE)
#ifndef __cplusplus
#define SHMEMI_DECL_SUMPROD_REDUCE(T, N) SHMEMI_SUMPROD_OPS_(SHMEMI_DECL_REDUCE, T, N)
SHMEMI_COMPLEX_TYPES(SHMEMI_DECL_SUMPROD_REDUCE)
#endif

/* ---- memory hints (1.5): accepted, every block supports every use -------- */
#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)
void *shmem_malloc_with_hints(size_t size, long hints);

/* ---- contexts (1.5) --------------------------------------------------------
 * A created context shares the default context's completion: its quiet and
 * fence complete every operation of the PE, which is what they promise and
 * more. On a context created from a team, PE numbers are team PE numbers. */
typedef struct shmemi_ctx *shmem_ctx_t;
extern shmem_ctx_t SHMEM_CTX_DEFAULT;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);
#define SHMEMI_DECL_CTX_RMA(T, N)                                              \
    void shmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *src,           \
                             size_t nelems, int pe);                           \
    void shmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *src,           \
                             size_t nelems, int pe);                           \
    void shmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *src,       \
                                 size_t nelems, int pe);                       \
    void shmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *src,       \
                                 size_t nelems, int pe);                       \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);         \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *src, int pe);                \
    void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *src,          \
                              ptrdiff_t dst, ptrdiff_t sst, size_t nelems,     \
                              int pe);                                         \
    void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *src,          \
                              ptrdiff_t dst, ptrdiff_t sst, size_t nelems,     \
                              int pe);                                         \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *src,    \
                                    size_t nelems, uint64_t *sig_addr,         \
                                    uint64_t signal, int sig_op, int pe);      \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest,              \
                                        const T *src, size_t nelems,           \
                                        uint64_t *sig_addr, uint64_t signal,   \
                                        int sig_op, int pe);
SHMEMI_RMA_TYPES(SHMEMI_DECL_CTX_RMA)
#define SHMEMI_DECL_CTX_SIZED(B, S)                                            \
    void shmem_ctx_put##B(shmem_ctx_t ctx, void *dest, const void *src,        \
                          size_t nelems, int pe);                              \
    void shmem_ctx_get##B(shmem_ctx_t ctx, void *dest, const void *src,        \
                          size_t nelems, int pe);                              \
    void shmem_ctx_put##B##_nbi(shmem_ctx_t ctx, void *dest, const void *src,  \
                                size_t nelems, int pe);                        \
    void shmem_ctx_get##B##_nbi(shmem_ctx_t ctx, void *dest, const void *src,  \
                                size_t nelems, int pe);                        \
    void shmem_ctx_iput##B(shmem_ctx_t ctx, void *dest, const void *src,       \
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_ctx_iget##B(shmem_ctx_t ctx, void *dest, const void *src,       \
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe); \
    void shmem_ctx_put##B##_signal(shmem_ctx_t ctx, void *dest, const void *src, \
                                   size_t nelems, uint64_t *sig_addr,          \
                                   uint64_t signal, int sig_op, int pe);       \
    void shmem_ctx_put##B##_signal_nbi(shmem_ctx_t ctx, void *dest,            \
                                       const void *src, size_t nelems,         \
                                       uint64_t *sig_addr, uint64_t signal,    \
                                       int sig_op, int pe);
SHMEMI_SIZES(SHMEMI_DECL_CTX_SIZED)
void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                      int pe);
void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                      int pe);
void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *src,
                          size_t nbytes, int pe);
void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *src,
                          size_t nbytes, int pe);
void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *src,
                             size_t nbytes, uint64_t *sig_addr, uint64_t signal,
                             int sig_op, int pe);
void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest, const void *src,
                                 size_t nbytes, uint64_t *sig_addr,
                                 uint64_t signal, int sig_op, int pe);
#define SHMEMI_DECL_CTX_AMO_EXT(T, N)                                          \
    T shmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *src, int pe);     \
    void shmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value, int pe); \
    T shmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe);  \
    void shmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch,           \
                                          const T *src, int pe);               \
    void shmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest,   \
                                         T value, int pe);
#define SHMEMI_DECL_CTX_AMO(T, N)                                              \
    T shmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond,    \
                                          T value, int pe);                    \
    T shmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value,      \
                                       int pe);                                \
    void shmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value, int pe); \
    T shmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe);      \
    void shmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe);         \
    void shmem_ctx_##N##_atomic_compare_swap_nbi(shmem_ctx_t ctx, T *fetch,    \
                                                 T *dest, T cond, T value,     \
                                                 int pe);                      \
    void shmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch,       \
                                              T *dest, int pe);                \
    void shmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch,       \
                                              T *dest, T value, int pe);
#define SHMEMI_DECL_CTX_AMO_BIT(T, N)                                          \
    T shmem_ctx_##N##_atomic_fetch_and(shmem_ctx_t ctx, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_and(shmem_ctx_t ctx, T *dest, T value, int pe); \
    T shmem_ctx_##N##_atomic_fetch_or(shmem_ctx_t ctx, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_or(shmem_ctx_t ctx, T *dest, T value, int pe);  \
    T shmem_ctx_##N##_atomic_fetch_xor(shmem_ctx_t ctx, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_xor(shmem_ctx_t ctx, T *dest, T value, int pe); \
    void shmem_ctx_##N##_atomic_fetch_and_nbi(shmem_ctx_t ctx, T *fetch,       \
                                              T *dest, T value, int pe);       \
    void shmem_ctx_##N##_atomic_fetch_or_nbi(shmem_ctx_t ctx, T *fetch,        \
                                             T *dest, T value, int pe);        \
    void shmem_ctx_##N##_atomic_fetch_xor_nbi(shmem_ctx_t ctx, T *fetch,       \
                                              T *dest, T value, int pe);
SHMEMI_AMO_EXT_TYPES(SHMEMI_DECL_CTX_AMO_EXT)
SHMEMI_AMO_TYPES(SHMEMI_DECL_CTX_AMO)
SHMEMI_AMO_BIT_TYPES(SHMEMI_DECL_CTX_AMO_BIT)

/* Never defined: a wrong argument count or type in a generic or shmem_sync
 * call ends up calling one of these with arguments, a compile-time error. */
void shmemi_sync_bad(void);
void shmemi_generic_bad(void);

/* Base C types of the generic interfaces (C11 _Generic, C++ overloads),
 * as X(T, N, OP) with N the typed functions' name part. */
#define SHMEMI_G_RMA(X, OP)                                                     \
    X(float, float, OP) X(double, double, OP) X(long double, longdouble, OP)  \
    X(char, char, OP) X(signed char, schar, OP) X(short, short, OP)           \
    X(int, int, OP) X(long, long, OP) X(long long, longlong, OP)              \
    X(unsigned char, uchar, OP) X(unsigned short, ushort, OP)                 \
    X(unsigned int, uint, OP) X(unsigned long, ulong, OP)                     \
    X(unsigned long long, ulonglong, OP)
#define SHMEMI_G_AMO(X, OP)                                                     \
    X(int, int, OP) X(long, long, OP) X(long long, longlong, OP)              \
    X(unsigned int, uint, OP) X(unsigned long, ulong, OP)                     \
    X(unsigned long long, ulonglong, OP)
#define SHMEMI_G_AMO_EXT(X, OP) SHMEMI_G_AMO(X, OP) X(float, float, OP) X(double, double, OP)
/* int32_t and int64_t are int and long here: the bitwise functions of those
 * names take them */
#define SHMEMI_G_AMO_BIT(X, OP)                                                 \
    X(unsigned int, uint, OP) X(unsigned long, ulong, OP)                     \
    X(unsigned long long, ulonglong, OP) X(int, int32, OP) X(long, int64, OP)
#define SHMEMI_G_WAIT(X, OP)                                                    \
    X(short, short, OP) X(int, int, OP) X(long, long, OP)                     \
    X(long long, longlong, OP) X(unsigned short, ushort, OP)                  \
    X(unsigned int, uint, OP) X(unsigned long, ulong, OP)                     \
    X(unsigned long long, ulonglong, OP)
#define SHMEMI_G_BITRED(X, OP)                                                  \
    X(unsigned char, uchar, OP) X(unsigned short, ushort, OP)                 \
    X(unsigned int, uint, OP) X(unsigned long, ulong, OP)                     \
    X(unsigned long long, ulonglong, OP) X(signed char, int8, OP)             \
    X(short, short, OP) X(int, int, OP) X(long, long, OP)                     \
    X(long long, longlong, OP)
#define SHMEMI_G_MINMAX(X, OP)                                                  \
    X(char, char, OP) X(signed char, schar, OP) X(short, short, OP)           \
    X(int, int, OP) X(long, long, OP) X(long long, longlong, OP)              \
    X(unsigned char, uchar, OP) X(unsigned short, ushort, OP)                 \
    X(unsigned int, uint, OP) X(unsigned long, ulong, OP)                     \
    X(unsigned long long, ulonglong, OP) X(float, float, OP)                  \
    X(double, double, OP) X(long double, longdouble, OP)
#ifdef __cplusplus
#define SHMEMI_G_SUM(X, OP) SHMEMI_G_MINMAX(X, OP)
#else
#define SHMEMI_G_SUM(X, OP)                                                     \
    SHMEMI_G_MINMAX(X, OP) X(float _Complex, complexf, OP)                    \
    X(double _Complex, complexd, OP)
#endif

/* ---- C11 type-generic interfaces ------------------------------------------------
 * Selection is on the base C types, so the fixed-width and size types
 * (int32_t *, uint64_t *, size_t *, ...) select their base type's function
 * with the same representation. A first argument of type shmem_ctx_t selects
 * the context form. C++ gets the same names as overloads (end of file). */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
#define SHMEMI_A1(a, ...) a
#define SHMEMI_A2(a, b, ...) b
#define SHMEMI_AS(T, N, OP) T *: shmem_##N##_##OP,
#define SHMEMI_AS_C(T, N, OP) T *: shmem_##N##_##OP, const T *: shmem_##N##_##OP,
#define SHMEMI_AS_CTX(T, N, OP) T *: shmem_ctx_##N##_##OP,
#define SHMEMI_AS_CTX_C(T, N, OP) T *: shmem_ctx_##N##_##OP, const T *: shmem_ctx_##N##_##OP,
/* on the first argument, or on the second after a context */
#define SHMEMI_SEL(LIST, OP, ...)                                              \
    _Generic((SHMEMI_A1(__VA_ARGS__, 0)),                                      \
        shmem_ctx_t: _Generic((SHMEMI_A2(__VA_ARGS__, 0, 0)),                  \
                              LIST(SHMEMI_AS_CTX, OP) default: shmemi_generic_bad), \
        default: _Generic((SHMEMI_A1(__VA_ARGS__, 0)),                         \
                          LIST(SHMEMI_AS, OP) default: shmemi_generic_bad))
#define SHMEMI_SEL_C(LIST, OP, ...)                                            \
    _Generic((SHMEMI_A1(__VA_ARGS__, 0)),                                      \
        shmem_ctx_t: _Generic((SHMEMI_A2(__VA_ARGS__, 0, 0)),                  \
                              LIST(SHMEMI_AS_CTX_C, OP) default: shmemi_generic_bad), \
        default: _Generic((SHMEMI_A1(__VA_ARGS__, 0)),                         \
                          LIST(SHMEMI_AS_C, OP) default: shmemi_generic_bad))
/* no context form: on the first argument; team forms: on the second */
#define SHMEMI_SEL1(LIST, OP, x)                                               \
    _Generic((x), LIST(SHMEMI_AS, OP) default: shmemi_generic_bad)

#define shmem_put(...) SHMEMI_SEL(SHMEMI_G_RMA, put, __VA_ARGS__)(__VA_ARGS__)
#define shmem_get(...) SHMEMI_SEL(SHMEMI_G_RMA, get, __VA_ARGS__)(__VA_ARGS__)
#define shmem_put_nbi(...) SHMEMI_SEL(SHMEMI_G_RMA, put_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_get_nbi(...) SHMEMI_SEL(SHMEMI_G_RMA, get_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_p(...) SHMEMI_SEL(SHMEMI_G_RMA, p, __VA_ARGS__)(__VA_ARGS__)
#define shmem_g(...) SHMEMI_SEL_C(SHMEMI_G_RMA, g, __VA_ARGS__)(__VA_ARGS__)
#define shmem_iput(...) SHMEMI_SEL(SHMEMI_G_RMA, iput, __VA_ARGS__)(__VA_ARGS__)
#define shmem_iget(...) SHMEMI_SEL(SHMEMI_G_RMA, iget, __VA_ARGS__)(__VA_ARGS__)
#define shmem_put_signal(...) SHMEMI_SEL(SHMEMI_G_RMA, put_signal, __VA_ARGS__)(__VA_ARGS__)
#define shmem_put_signal_nbi(...) SHMEMI_SEL(SHMEMI_G_RMA, put_signal_nbi, __VA_ARGS__)(__VA_ARGS__)

#define shmem_atomic_fetch(...) SHMEMI_SEL_C(SHMEMI_G_AMO_EXT, atomic_fetch, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_set(...) SHMEMI_SEL(SHMEMI_G_AMO_EXT, atomic_set, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_swap(...) SHMEMI_SEL(SHMEMI_G_AMO_EXT, atomic_swap, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_compare_swap(...) SHMEMI_SEL(SHMEMI_G_AMO, atomic_compare_swap, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_add(...) SHMEMI_SEL(SHMEMI_G_AMO, atomic_fetch_add, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_add(...) SHMEMI_SEL(SHMEMI_G_AMO, atomic_add, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_inc(...) SHMEMI_SEL(SHMEMI_G_AMO, atomic_fetch_inc, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_inc(...) SHMEMI_SEL(SHMEMI_G_AMO, atomic_inc, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_and(...) SHMEMI_SEL(SHMEMI_G_AMO_BIT, atomic_fetch_and, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_and(...) SHMEMI_SEL(SHMEMI_G_AMO_BIT, atomic_and, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_or(...) SHMEMI_SEL(SHMEMI_G_AMO_BIT, atomic_fetch_or, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_or(...) SHMEMI_SEL(SHMEMI_G_AMO_BIT, atomic_or, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_xor(...) SHMEMI_SEL(SHMEMI_G_AMO_BIT, atomic_fetch_xor, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_xor(...) SHMEMI_SEL(SHMEMI_G_AMO_BIT, atomic_xor, __VA_ARGS__)(__VA_ARGS__)
/* the _nbi fetching atomics select on fetch, which has dest's type */
#define SHMEMI_SEL_NBI SHMEMI_SEL
#define shmem_atomic_fetch_nbi(...) SHMEMI_SEL_NBI(SHMEMI_G_AMO_EXT, atomic_fetch_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_swap_nbi(...) SHMEMI_SEL_NBI(SHMEMI_G_AMO_EXT, atomic_swap_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) SHMEMI_SEL_NBI(SHMEMI_G_AMO, atomic_compare_swap_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) SHMEMI_SEL_NBI(SHMEMI_G_AMO, atomic_fetch_inc_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) SHMEMI_SEL_NBI(SHMEMI_G_AMO, atomic_fetch_add_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) SHMEMI_SEL_NBI(SHMEMI_G_AMO_BIT, atomic_fetch_and_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) SHMEMI_SEL_NBI(SHMEMI_G_AMO_BIT, atomic_fetch_or_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) SHMEMI_SEL_NBI(SHMEMI_G_AMO_BIT, atomic_fetch_xor_nbi, __VA_ARGS__)(__VA_ARGS__)

/* the deprecated (1.3) generic atomic names, still in 1.5 */
#define shmem_fetch(src, ...) _Generic((src), SHMEMI_G_AMO_EXT(SHMEMI_AS_C, fetch) default: shmemi_generic_bad)(src, __VA_ARGS__)
#define shmem_set(dest, ...) SHMEMI_SEL1(SHMEMI_G_AMO_EXT, set, dest)(dest, __VA_ARGS__)
#define shmem_swap(dest, ...) SHMEMI_SEL1(SHMEMI_G_AMO_EXT, swap, dest)(dest, __VA_ARGS__)
#define shmem_cswap(dest, ...) SHMEMI_SEL1(SHMEMI_G_AMO, cswap, dest)(dest, __VA_ARGS__)
#define shmem_fadd(dest, ...) SHMEMI_SEL1(SHMEMI_G_AMO, fadd, dest)(dest, __VA_ARGS__)
#define shmem_add(dest, ...) SHMEMI_SEL1(SHMEMI_G_AMO, add, dest)(dest, __VA_ARGS__)
#define shmem_finc(dest, ...) SHMEMI_SEL1(SHMEMI_G_AMO, finc, dest)(dest, __VA_ARGS__)
#define shmem_inc(dest, ...) SHMEMI_SEL1(SHMEMI_G_AMO, inc, dest)(dest, __VA_ARGS__)

#define shmem_wait_until(ivar, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, wait_until, ivar)(ivar, __VA_ARGS__)
#define shmem_test(ivar, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, test, ivar)(ivar, __VA_ARGS__)
#define shmem_wait(ivar, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, wait, ivar)(ivar, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, wait_until_all, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, wait_until_any, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, wait_until_some, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, wait_until_all_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, wait_until_any_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, wait_until_some_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_test_all(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, test_all, ivars)(ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, test_any, ivars)(ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, test_some, ivars)(ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, test_all_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, test_any_vector, ivars)(ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...) SHMEMI_SEL1(SHMEMI_G_WAIT, test_some_vector, ivars)(ivars, __VA_ARGS__)

#define shmem_broadcast(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_RMA, broadcast, dest)(team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_RMA, collect, dest)(team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_RMA, fcollect, dest)(team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_RMA, alltoall, dest)(team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_RMA, alltoalls, dest)(team, dest, __VA_ARGS__)
#define shmem_and_reduce(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_BITRED, and_reduce, dest)(team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_BITRED, or_reduce, dest)(team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_BITRED, xor_reduce, dest)(team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_MINMAX, max_reduce, dest)(team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_MINMAX, min_reduce, dest)(team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_SUM, sum_reduce, dest)(team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...) SHMEMI_SEL1(SHMEMI_G_SUM, prod_reduce, dest)(team, dest, __VA_ARGS__)
#endif /* C11 */

#ifdef __cplusplus
}
#endif

/* ---- C++: the generic interfaces as overloads ----------------------------
 * Same base-type lists as the C11 selection; a shmem_ctx_t first argument
 * selects the context form. Inline, so nothing is added to the library. */
#ifdef __cplusplus
#define SHMEMI_CXX_RMA(T, N, _)                                                \
    inline void shmem_put(T *d, const T *s, size_t n, int pe) { shmem_##N##_put(d, s, n, pe); } \
    inline void shmem_put(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_put(c, d, s, n, pe); } \
    inline void shmem_get(T *d, const T *s, size_t n, int pe) { shmem_##N##_get(d, s, n, pe); } \
    inline void shmem_get(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_get(c, d, s, n, pe); } \
    inline void shmem_put_nbi(T *d, const T *s, size_t n, int pe) { shmem_##N##_put_nbi(d, s, n, pe); } \
    inline void shmem_put_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_put_nbi(c, d, s, n, pe); } \
    inline void shmem_get_nbi(T *d, const T *s, size_t n, int pe) { shmem_##N##_get_nbi(d, s, n, pe); } \
    inline void shmem_get_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, int pe) { shmem_ctx_##N##_get_nbi(c, d, s, n, pe); } \
    inline void shmem_p(T *d, T v, int pe) { shmem_##N##_p(d, v, pe); }     \
    inline void shmem_p(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_p(c, d, v, pe); } \
    inline T shmem_g(const T *s, int pe) { return shmem_##N##_g(s, pe); }   \
    inline T shmem_g(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_g(c, s, pe); } \
    inline void shmem_iput(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) \
    { shmem_##N##_iput(d, s, dst, sst, n, pe); }                             \
    inline void shmem_iput(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) \
    { shmem_ctx_##N##_iput(c, d, s, dst, sst, n, pe); }                      \
    inline void shmem_iget(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) \
    { shmem_##N##_iget(d, s, dst, sst, n, pe); }                             \
    inline void shmem_iget(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) \
    { shmem_ctx_##N##_iget(c, d, s, dst, sst, n, pe); }                      \
    inline void shmem_put_signal(T *d, const T *s, size_t n, uint64_t *sig, uint64_t sv, int op, int pe) \
    { shmem_##N##_put_signal(d, s, n, sig, sv, op, pe); }                    \
    inline void shmem_put_signal(shmem_ctx_t c, T *d, const T *s, size_t n, uint64_t *sig, uint64_t sv, int op, int pe) \
    { shmem_ctx_##N##_put_signal(c, d, s, n, sig, sv, op, pe); }             \
    inline void shmem_put_signal_nbi(T *d, const T *s, size_t n, uint64_t *sig, uint64_t sv, int op, int pe) \
    { shmem_##N##_put_signal_nbi(d, s, n, sig, sv, op, pe); }                \
    inline void shmem_put_signal_nbi(shmem_ctx_t c, T *d, const T *s, size_t n, uint64_t *sig, uint64_t sv, int op, int pe) \
    { shmem_ctx_##N##_put_signal_nbi(c, d, s, n, sig, sv, op, pe); }         \
    inline int shmem_broadcast(shmem_team_t t, T *d, const T *s, size_t n, int root) \
    { return shmem_##N##_broadcast(t, d, s, n, root); }                      \
    inline int shmem_collect(shmem_team_t t, T *d, const T *s, size_t n)     \
    { return shmem_##N##_collect(t, d, s, n); }                              \
    inline int shmem_fcollect(shmem_team_t t, T *d, const T *s, size_t n)    \
    { return shmem_##N##_fcollect(t, d, s, n); }                             \
    inline int shmem_alltoall(shmem_team_t t, T *d, const T *s, size_t n)    \
    { return shmem_##N##_alltoall(t, d, s, n); }                             \
    inline int shmem_alltoalls(shmem_team_t t, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n) \
    { return shmem_##N##_alltoalls(t, d, s, dst, sst, n); }
SHMEMI_G_RMA(SHMEMI_CXX_RMA, _)
#define SHMEMI_CXX_AMO_EXT(T, N, _)                                            \
    inline T shmem_atomic_fetch(const T *s, int pe) { return shmem_##N##_atomic_fetch(s, pe); } \
    inline T shmem_atomic_fetch(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_atomic_fetch(c, s, pe); } \
    inline void shmem_atomic_set(T *d, T v, int pe) { shmem_##N##_atomic_set(d, v, pe); } \
    inline void shmem_atomic_set(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_atomic_set(c, d, v, pe); } \
    inline T shmem_atomic_swap(T *d, T v, int pe) { return shmem_##N##_atomic_swap(d, v, pe); } \
    inline T shmem_atomic_swap(shmem_ctx_t c, T *d, T v, int pe) { return shmem_ctx_##N##_atomic_swap(c, d, v, pe); } \
    inline void shmem_atomic_fetch_nbi(T *f, const T *s, int pe) { shmem_##N##_atomic_fetch_nbi(f, s, pe); } \
    inline void shmem_atomic_fetch_nbi(shmem_ctx_t c, T *f, const T *s, int pe) { shmem_ctx_##N##_atomic_fetch_nbi(c, f, s, pe); } \
    inline void shmem_atomic_swap_nbi(T *f, T *d, T v, int pe) { shmem_##N##_atomic_swap_nbi(f, d, v, pe); } \
    inline void shmem_atomic_swap_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) { shmem_ctx_##N##_atomic_swap_nbi(c, f, d, v, pe); }
SHMEMI_G_AMO_EXT(SHMEMI_CXX_AMO_EXT, _)
#define SHMEMI_CXX_AMO(T, N, _)                                                \
    inline T shmem_atomic_compare_swap(T *d, T cn, T v, int pe) { return shmem_##N##_atomic_compare_swap(d, cn, v, pe); } \
    inline T shmem_atomic_compare_swap(shmem_ctx_t c, T *d, T cn, T v, int pe) { return shmem_ctx_##N##_atomic_compare_swap(c, d, cn, v, pe); } \
    inline T shmem_atomic_fetch_add(T *d, T v, int pe) { return shmem_##N##_atomic_fetch_add(d, v, pe); } \
    inline T shmem_atomic_fetch_add(shmem_ctx_t c, T *d, T v, int pe) { return shmem_ctx_##N##_atomic_fetch_add(c, d, v, pe); } \
    inline void shmem_atomic_add(T *d, T v, int pe) { shmem_##N##_atomic_add(d, v, pe); } \
    inline void shmem_atomic_add(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_atomic_add(c, d, v, pe); } \
    inline T shmem_atomic_fetch_inc(T *d, int pe) { return shmem_##N##_atomic_fetch_inc(d, pe); } \
    inline T shmem_atomic_fetch_inc(shmem_ctx_t c, T *d, int pe) { return shmem_ctx_##N##_atomic_fetch_inc(c, d, pe); } \
    inline void shmem_atomic_inc(T *d, int pe) { shmem_##N##_atomic_inc(d, pe); } \
    inline void shmem_atomic_inc(shmem_ctx_t c, T *d, int pe) { shmem_ctx_##N##_atomic_inc(c, d, pe); } \
    inline void shmem_atomic_compare_swap_nbi(T *f, T *d, T cn, T v, int pe) { shmem_##N##_atomic_compare_swap_nbi(f, d, cn, v, pe); } \
    inline void shmem_atomic_compare_swap_nbi(shmem_ctx_t c, T *f, T *d, T cn, T v, int pe) { shmem_ctx_##N##_atomic_compare_swap_nbi(c, f, d, cn, v, pe); } \
    inline void shmem_atomic_fetch_add_nbi(T *f, T *d, T v, int pe) { shmem_##N##_atomic_fetch_add_nbi(f, d, v, pe); } \
    inline void shmem_atomic_fetch_add_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) { shmem_ctx_##N##_atomic_fetch_add_nbi(c, f, d, v, pe); } \
    inline void shmem_atomic_fetch_inc_nbi(T *f, T *d, int pe) { shmem_##N##_atomic_fetch_inc_nbi(f, d, pe); } \
    inline void shmem_atomic_fetch_inc_nbi(shmem_ctx_t c, T *f, T *d, int pe) { shmem_ctx_##N##_atomic_fetch_inc_nbi(c, f, d, pe); }
SHMEMI_G_AMO(SHMEMI_CXX_AMO, _)
#define SHMEMI_CXX_AMO_BIT1(T, N, OP)                                          \
    inline T shmem_atomic_fetch_##OP(T *d, T v, int pe) { return shmem_##N##_atomic_fetch_##OP(d, v, pe); } \
    inline T shmem_atomic_fetch_##OP(shmem_ctx_t c, T *d, T v, int pe) { return shmem_ctx_##N##_atomic_fetch_##OP(c, d, v, pe); } \
    inline void shmem_atomic_##OP(T *d, T v, int pe) { shmem_##N##_atomic_##OP(d, v, pe); } \
    inline void shmem_atomic_##OP(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_atomic_##OP(c, d, v, pe); } \
    inline void shmem_atomic_fetch_##OP##_nbi(T *f, T *d, T v, int pe) { shmem_##N##_atomic_fetch_##OP##_nbi(f, d, v, pe); } \
    inline void shmem_atomic_fetch_##OP##_nbi(shmem_ctx_t c, T *f, T *d, T v, int pe) { shmem_ctx_##N##_atomic_fetch_##OP##_nbi(c, f, d, v, pe); }
#define SHMEMI_CXX_OLD_EXT(T, N, _)                                            \
    inline T shmem_fetch(const T *s, int pe) { return shmem_##N##_fetch(s, pe); } \
    inline void shmem_set(T *d, T v, int pe) { shmem_##N##_set(d, v, pe); }  \
    inline T shmem_swap(T *d, T v, int pe) { return shmem_##N##_swap(d, v, pe); }
SHMEMI_G_AMO_EXT(SHMEMI_CXX_OLD_EXT, _)
#define SHMEMI_CXX_OLD(T, N, _)                                                \
    inline T shmem_cswap(T *d, T c, T v, int pe) { return shmem_##N##_cswap(d, c, v, pe); } \
    inline T shmem_fadd(T *d, T v, int pe) { return shmem_##N##_fadd(d, v, pe); } \
    inline void shmem_add(T *d, T v, int pe) { shmem_##N##_add(d, v, pe); }  \
    inline T shmem_finc(T *d, int pe) { return shmem_##N##_finc(d, pe); }    \
    inline void shmem_inc(T *d, int pe) { shmem_##N##_inc(d, pe); }
SHMEMI_G_AMO(SHMEMI_CXX_OLD, _)
SHMEMI_G_AMO_BIT(SHMEMI_CXX_AMO_BIT1, and)
SHMEMI_G_AMO_BIT(SHMEMI_CXX_AMO_BIT1, or)
SHMEMI_G_AMO_BIT(SHMEMI_CXX_AMO_BIT1, xor)
#define SHMEMI_CXX_WAIT(T, N, _)                                               \
    inline void shmem_wait_until(T *iv, int cmp, T v) { shmem_##N##_wait_until(iv, cmp, v); } \
    inline int shmem_test(T *iv, int cmp, T v) { return shmem_##N##_test(iv, cmp, v); } \
    inline void shmem_wait(T *iv, T v) { shmem_##N##_wait(iv, v); }        \
    inline void shmem_wait_until_all(T *iv, size_t n, const int *st, int cmp, T v) \
    { shmem_##N##_wait_until_all(iv, n, st, cmp, v); }                       \
    inline size_t shmem_wait_until_any(T *iv, size_t n, const int *st, int cmp, T v) \
    { return shmem_##N##_wait_until_any(iv, n, st, cmp, v); }                \
    inline size_t shmem_wait_until_some(T *iv, size_t n, size_t *ix, const int *st, int cmp, T v) \
    { return shmem_##N##_wait_until_some(iv, n, ix, st, cmp, v); }           \
    inline void shmem_wait_until_all_vector(T *iv, size_t n, const int *st, int cmp, T *vs) \
    { shmem_##N##_wait_until_all_vector(iv, n, st, cmp, vs); }               \
    inline size_t shmem_wait_until_any_vector(T *iv, size_t n, const int *st, int cmp, T *vs) \
    { return shmem_##N##_wait_until_any_vector(iv, n, st, cmp, vs); }        \
    inline size_t shmem_wait_until_some_vector(T *iv, size_t n, size_t *ix, const int *st, int cmp, T *vs) \
    { return shmem_##N##_wait_until_some_vector(iv, n, ix, st, cmp, vs); }   \
    inline int shmem_test_all(T *iv, size_t n, const int *st, int cmp, T v) \
    { return shmem_##N##_test_all(iv, n, st, cmp, v); }                      \
    inline size_t shmem_test_any(T *iv, size_t n, const int *st, int cmp, T v) \
    { return shmem_##N##_test_any(iv, n, st, cmp, v); }                      \
    inline size_t shmem_test_some(T *iv, size_t n, size_t *ix, const int *st, int cmp, T v) \
    { return shmem_##N##_test_some(iv, n, ix, st, cmp, v); }                 \
    inline int shmem_test_all_vector(T *iv, size_t n, const int *st, int cmp, T *vs) \
    { return shmem_##N##_test_all_vector(iv, n, st, cmp, vs); }              \
    inline size_t shmem_test_any_vector(T *iv, size_t n, const int *st, int cmp, T *vs) \
    { return shmem_##N##_test_any_vector(iv, n, st, cmp, vs); }              \
    inline size_t shmem_test_some_vector(T *iv, size_t n, size_t *ix, const int *st, int cmp, T *vs) \
    { return shmem_##N##_test_some_vector(iv, n, ix, st, cmp, vs); }
SHMEMI_G_WAIT(SHMEMI_CXX_WAIT, _)
#define SHMEMI_CXX_RED(T, N, OP)                                               \
    inline int shmem_##OP##_reduce(shmem_team_t t, T *d, const T *s, size_t n) \
    { return shmem_##N##_##OP##_reduce(t, d, s, n); }
SHMEMI_G_BITRED(SHMEMI_CXX_RED, and)
SHMEMI_G_BITRED(SHMEMI_CXX_RED, or)
SHMEMI_G_BITRED(SHMEMI_CXX_RED, xor)
SHMEMI_G_MINMAX(SHMEMI_CXX_RED, min)
SHMEMI_G_MINMAX(SHMEMI_CXX_RED, max)
SHMEMI_G_SUM(SHMEMI_CXX_RED, sum)
SHMEMI_G_SUM(SHMEMI_CXX_RED, prod)
#endif /* __cplusplus */

#endif /* TNBC_SHMEM_H */

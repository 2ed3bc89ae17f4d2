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
                       ptrdiff_t sst, size_t nelems, int pe);
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
#define SHMEMI_OLD_AMO_TYPES(X) X(int, int) X(long, long) X(long long, longlong)
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

/* ---- teams (1.5): world and strided splits, with their collectives ---- */
typedef struct shmemi_team *shmem_team_t;
typedef struct { int num_contexts; } shmem_team_config_t;
extern shmem_team_t SHMEM_TEAM_WORLD;
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_translate_pe(shmem_team_t src, int pe, shmem_team_t dest);
int shmem_team_split_strided(shmem_team_t parent, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
void shmem_team_destroy(shmem_team_t team);
int shmem_team_sync(shmem_team_t team);
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *src,
                       size_t nbytes, int root);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *src, size_t nbytes);
int shmem_collectmem(shmem_team_t team, void *dest, const void *src, size_t nbytes);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *src, size_t nbytes);
#define SHMEMI_DECL_REDUCE(T, N, OP)                                           \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *src,    \
                                  size_t nreduce);
#define SHMEMI_DECL_BIT_REDUCE(T, N) SHMEMI_BIT_OPS(SHMEMI_DECL_REDUCE, T, N)
#define SHMEMI_DECL_ARITH_REDUCE(T, N) SHMEMI_ARITH_OPS(SHMEMI_DECL_REDUCE, T, N)
SHMEMI_REDUCE_BIT_TYPES(SHMEMI_DECL_BIT_REDUCE)
SHMEMI_REDUCE_ARITH_TYPES(SHMEMI_DECL_ARITH_REDUCE)

/* ---- C11 type-generic interfaces ------------------------------------------------ */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
#define SHMEMI_GEN_STD(dest, OP)                                               \
    _Generic((dest),                                                           \
        float *: shmem_float_##OP, double *: shmem_double_##OP,                \
        long double *: shmem_longdouble_##OP, char *: shmem_char_##OP,         \
        signed char *: shmem_schar_##OP, short *: shmem_short_##OP,            \
        int *: shmem_int_##OP, long *: shmem_long_##OP,                        \
        long long *: shmem_longlong_##OP, unsigned char *: shmem_uchar_##OP,   \
        unsigned short *: shmem_ushort_##OP, unsigned int *: shmem_uint_##OP,  \
        unsigned long *: shmem_ulong_##OP,                                     \
        unsigned long long *: shmem_ulonglong_##OP)
#define shmem_put(dest, ...) SHMEMI_GEN_STD(dest, put)(dest, __VA_ARGS__)
#define shmem_get(dest, ...) SHMEMI_GEN_STD(dest, get)(dest, __VA_ARGS__)
#define shmem_put_nbi(dest, ...) SHMEMI_GEN_STD(dest, put_nbi)(dest, __VA_ARGS__)
#define shmem_get_nbi(dest, ...) SHMEMI_GEN_STD(dest, get_nbi)(dest, __VA_ARGS__)
#define shmem_p(dest, ...) SHMEMI_GEN_STD(dest, p)(dest, __VA_ARGS__)
#define shmem_iput(dest, ...) SHMEMI_GEN_STD(dest, iput)(dest, __VA_ARGS__)
#define shmem_iget(dest, ...) SHMEMI_GEN_STD(dest, iget)(dest, __VA_ARGS__)
#define shmem_g(src, pe)                                                       \
    _Generic((src),                                                            \
        float *: shmem_float_g, const float *: shmem_float_g,                  \
        double *: shmem_double_g, const double *: shmem_double_g,              \
        char *: shmem_char_g, const char *: shmem_char_g,                      \
        short *: shmem_short_g, const short *: shmem_short_g,                  \
        int *: shmem_int_g, const int *: shmem_int_g,                          \
        long *: shmem_long_g, const long *: shmem_long_g,                      \
        long long *: shmem_longlong_g, const long long *: shmem_longlong_g,    \
        unsigned int *: shmem_uint_g, const unsigned int *: shmem_uint_g,      \
        unsigned long *: shmem_ulong_g, const unsigned long *: shmem_ulong_g)(src, pe)
#define SHMEMI_GEN_AMO(dest, OP)                                               \
    _Generic((dest),                                                           \
        int *: shmem_int_##OP, long *: shmem_long_##OP,                        \
        long long *: shmem_longlong_##OP, unsigned int *: shmem_uint_##OP,     \
        unsigned long *: shmem_ulong_##OP,                                     \
        unsigned long long *: shmem_ulonglong_##OP)
#define SHMEMI_GEN_AMO_EXT(dest, OP)                                           \
    _Generic((dest),                                                           \
        int *: shmem_int_##OP, long *: shmem_long_##OP,                        \
        long long *: shmem_longlong_##OP, unsigned int *: shmem_uint_##OP,     \
        unsigned long *: shmem_ulong_##OP,                                     \
        unsigned long long *: shmem_ulonglong_##OP,                            \
        float *: shmem_float_##OP, double *: shmem_double_##OP)
#define SHMEMI_GEN_AMO_BIT(dest, OP)                                           \
    _Generic((dest),                                                           \
        unsigned int *: shmem_uint_##OP, unsigned long *: shmem_ulong_##OP,    \
        unsigned long long *: shmem_ulonglong_##OP)
#define shmem_atomic_fetch(src, pe) SHMEMI_GEN_AMO_EXT(src, atomic_fetch)(src, pe)
#define shmem_atomic_set(dest, ...) SHMEMI_GEN_AMO_EXT(dest, atomic_set)(dest, __VA_ARGS__)
#define shmem_atomic_swap(dest, ...) SHMEMI_GEN_AMO_EXT(dest, atomic_swap)(dest, __VA_ARGS__)
#define shmem_atomic_compare_swap(dest, ...) SHMEMI_GEN_AMO(dest, atomic_compare_swap)(dest, __VA_ARGS__)
#define shmem_atomic_fetch_add(dest, ...) SHMEMI_GEN_AMO(dest, atomic_fetch_add)(dest, __VA_ARGS__)
#define shmem_atomic_add(dest, ...) SHMEMI_GEN_AMO(dest, atomic_add)(dest, __VA_ARGS__)
#define shmem_atomic_fetch_inc(dest, ...) SHMEMI_GEN_AMO(dest, atomic_fetch_inc)(dest, __VA_ARGS__)
#define shmem_atomic_inc(dest, ...) SHMEMI_GEN_AMO(dest, atomic_inc)(dest, __VA_ARGS__)
#define shmem_atomic_fetch_and(dest, ...) SHMEMI_GEN_AMO_BIT(dest, atomic_fetch_and)(dest, __VA_ARGS__)
#define shmem_atomic_and(dest, ...) SHMEMI_GEN_AMO_BIT(dest, atomic_and)(dest, __VA_ARGS__)
#define shmem_atomic_fetch_or(dest, ...) SHMEMI_GEN_AMO_BIT(dest, atomic_fetch_or)(dest, __VA_ARGS__)
#define shmem_atomic_or(dest, ...) SHMEMI_GEN_AMO_BIT(dest, atomic_or)(dest, __VA_ARGS__)
#define shmem_atomic_fetch_xor(dest, ...) SHMEMI_GEN_AMO_BIT(dest, atomic_fetch_xor)(dest, __VA_ARGS__)
#define shmem_atomic_xor(dest, ...) SHMEMI_GEN_AMO_BIT(dest, atomic_xor)(dest, __VA_ARGS__)
#define SHMEMI_GEN_WAIT(ivar, OP)                                              \
    _Generic((ivar),                                                           \
        short *: shmem_short_##OP, int *: shmem_int_##OP,                      \
        long *: shmem_long_##OP, long long *: shmem_longlong_##OP,             \
        unsigned short *: shmem_ushort_##OP, unsigned int *: shmem_uint_##OP,  \
        unsigned long *: shmem_ulong_##OP,                                     \
        unsigned long long *: shmem_ulonglong_##OP)
#define shmem_wait_until(ivar, ...) SHMEMI_GEN_WAIT(ivar, wait_until)(ivar, __VA_ARGS__)
#define shmem_test(ivar, ...) SHMEMI_GEN_WAIT(ivar, test)(ivar, __VA_ARGS__)
#define shmem_wait(ivar, ...) SHMEMI_GEN_WAIT(ivar, wait)(ivar, __VA_ARGS__)
#endif /* C11 */

#ifdef __cplusplus
}
#endif

#endif /* TNBC_SHMEM_H */

// SPDX-License-Identifier: BSD-3-Clause
/*
 * coll.c - the classic active-set collectives, mapped onto MPI collectives.
 *
 * An active set (PE_start, logPE_stride, PE_size) becomes an MPI
 * communicator, created once (MPI_Comm_create_group, collective over the set
 * only) and cached. pSync and pWrk are never touched.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define CACHE 32

struct aset { int start, logstride, size; MPI_Comm comm; };
static struct aset cache[CACHE];
static int ncache;

static int bad_set(const char *fn, int start, int logstride, int size)
{
    if (size < 1 || start < 0 || logstride < 0 || logstride > 30 ||
        start + ((long)(size - 1) << logstride) >= shmemi.npes) {
        fprintf(stderr, "tnbc-shmem: error PE %d: %s: active set (start %d, "
                "log stride %d, size %d) does not fit %d PEs\n", shmemi.me, fn,
                start, logstride, size, shmemi.npes);
        return 1;
    }
    int rel = shmemi.me - start;
    if (rel < 0 || rel % (1 << logstride) || rel >> logstride >= size) {
        fprintf(stderr, "tnbc-shmem: error PE %d: %s: this PE is not in the active "
                "set (start %d, log stride %d, size %d)\n", shmemi.me, fn, start,
                logstride, size);
        return 1;
    }
    return 0;
}

static MPI_Comm set_comm(const char *fn, int start, int logstride, int size)
{
    shmemi_check_init(fn);
    if (bad_set(fn, start, logstride, size))
        return MPI_COMM_NULL;
    if (start == 0 && (logstride == 0 || size == 1) && size == shmemi.npes)
        return shmemi.comm;
    for (int i = 0; i < ncache; i++)
        if (cache[i].start == start && cache[i].logstride == logstride &&
            cache[i].size == size)
            return cache[i].comm;
    int *ranks = malloc(sizeof(int) * size);
    MPI_Group world, g;
    for (int i = 0; i < size; i++)
        ranks[i] = start + (i << logstride);
    MPI_Comm_group(shmemi.comm, &world);
    MPI_Group_incl(world, size, ranks, &g);
    if (ncache == CACHE) {
        MPI_Comm_free(&cache[0].comm);
        memmove(cache, cache + 1, (CACHE - 1) * sizeof *cache);
        ncache--;
    }
    cache[ncache] = (struct aset){start, logstride, size, MPI_COMM_NULL};
    MPI_Comm_create_group(shmemi.comm, g, 0, &cache[ncache].comm);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    free(ranks);
    return cache[ncache++].comm;
}

int shmemi_coll_count(const char *fn, size_t nelems, size_t size)
{
    size_t b;
    /* SIZE_MAX: a typed caller's nelems * sizeof(T) already overflowed */
    if (nelems == SIZE_MAX || __builtin_mul_overflow(nelems, size, &b)) {
        shmemi_refuse("%s refused: its size in bytes overflows", fn);
        return -1;
    }
    if (b > INT_MAX) {
        shmemi_refuse("%s of %zu bytes refused: more than %d bytes in one MPI call",
                      fn, b, INT_MAX);
        return -1;
    }
    return (int)b;
}

/* Packs each destination's strided block into one contiguous buffer, one
 * MPI_Alltoall, and unpacks at the receiver's stride. */
int shmemi_alltoalls(MPI_Comm comm, void *dest, const void *src, ptrdiff_t dst,
                     ptrdiff_t sst, size_t nelems, size_t size)
{
    int np, rc;
    MPI_Comm_size(comm, &np);
    int c = shmemi_coll_count("alltoalls", nelems, size);
    if (c < 0)
        return -1;
    size_t span;
    if (dst <= 0 || sst <= 0) {
        shmemi_refuse("alltoalls refused: strides must be positive (dst %td, sst %td)",
                      dst, sst);
        return -1;
    }
    /* both buffers hold np blocks of nelems strided elements */
    if (nelems && (shmemi_span(dst, size, (size_t)np * nelems, &span) ||
                   shmemi_span(sst, size, (size_t)np * nelems, &span))) {
        shmemi_refuse("alltoalls of %zu elements at strides %td/%td refused: the "
                      "span overflows", nelems, dst, sst);
        return -1;
    }
    size_t total = (size_t)c * (size_t)np;
    char *out = malloc(total ? total : 1), *in = malloc(total ? total : 1);
    if (!out || !in)
        shmemi_fatal("out of memory for alltoalls of %zu bytes", total);
    const char *s = src;
    char *d = dest;
    for (size_t j = 0; j < (size_t)np; j++)
        for (size_t k = 0; k < nelems; k++)
            memcpy(out + (j * nelems + k) * size,
                   s + (j * nelems + k) * (size_t)sst * size, size);
    rc = MPI_Alltoall(out, c, MPI_BYTE, in, c, MPI_BYTE, comm);
    for (size_t j = 0; j < (size_t)np; j++)
        for (size_t k = 0; k < nelems; k++)
            memcpy(d + (j * nelems + k) * (size_t)dst * size,
                   in + (j * nelems + k) * size, size);
    free(out);
    free(in);
    return rc == MPI_SUCCESS ? 0 : -1;
}

void shmemi_coll_fini(void)
{
    for (int i = 0; i < ncache; i++)
        MPI_Comm_free(&cache[i].comm);
    ncache = 0;
}

void shmem_barrier(int start, int logstride, int size, long *pSync)
{
    (void)pSync;
    MPI_Comm c = set_comm("shmem_barrier", start, logstride, size);
    if (c == MPI_COMM_NULL)
        return;
    shmemi_quiet();
    MPI_Barrier(c);
}

void shmem_sync(int start, int logstride, int size, long *pSync)
{
    (void)pSync;
    MPI_Comm c = set_comm("shmem_sync", start, logstride, size);
    if (c != MPI_COMM_NULL)
        MPI_Barrier(c);
}

static void bcast(void *dest, const void *src, size_t bytes, int root, int start,
                  int logstride, int size)
{
    MPI_Comm c = set_comm("shmem_broadcast", start, logstride, size);
    if (c == MPI_COMM_NULL)
        return;
    if (root < 0 || root >= size) {
        fprintf(stderr, "tnbc-shmem: error PE %d: shmem_broadcast: root %d is not "
                "in the active set of %d PEs\n", shmemi.me, root, size);
        return;
    }
    int me, n = shmemi_coll_count("shmem_broadcast", bytes, 1);
    if (n < 0)
        return;
    MPI_Comm_rank(c, &me);
    MPI_Bcast(me == root ? (void *)src : dest, n, MPI_BYTE, root, c);
}

static void collect(void *dest, const void *src, size_t bytes, int start,
                    int logstride, int size)
{
    MPI_Comm c = set_comm("shmem_collect", start, logstride, size);
    if (c == MPI_COMM_NULL)
        return;
    shmemi_collectv(c, "shmem_collect", dest, src, bytes);
}

static void fcollect(void *dest, const void *src, size_t bytes, int start,
                     int logstride, int size)
{
    MPI_Comm c = set_comm("shmem_fcollect", start, logstride, size);
    int n = shmemi_coll_count("shmem_fcollect", bytes, 1);
    if (c != MPI_COMM_NULL && n >= 0)
        MPI_Allgather(src, n, MPI_BYTE, dest, n, MPI_BYTE, c);
}

static void alltoall(void *dest, const void *src, size_t bytes, int start,
                     int logstride, int size)
{
    MPI_Comm c = set_comm("shmem_alltoall", start, logstride, size);
    int n = shmemi_coll_count("shmem_alltoall", bytes, 1);
    if (c != MPI_COMM_NULL && n >= 0)
        MPI_Alltoall(src, n, MPI_BYTE, dest, n, MPI_BYTE, c);
}

#define DEFINE_COLL(B, S)                                                      \
    void shmem_broadcast##B(void *d, const void *s, size_t n, int root, int st, \
                            int ls, int sz, long *ps)                          \
    { (void)ps; bcast(d, s, shmemi_nbytes(n, S), root, st, ls, sz); }                        \
    void shmem_collect##B(void *d, const void *s, size_t n, int st, int ls,    \
                          int sz, long *ps)                                    \
    { (void)ps; collect(d, s, shmemi_nbytes(n, S), st, ls, sz); }                            \
    void shmem_fcollect##B(void *d, const void *s, size_t n, int st, int ls,   \
                           int sz, long *ps)                                   \
    { (void)ps; fcollect(d, s, shmemi_nbytes(n, S), st, ls, sz); }                           \
    void shmem_alltoall##B(void *d, const void *s, size_t n, int st, int ls,   \
                           int sz, long *ps)                                   \
    { (void)ps; alltoall(d, s, shmemi_nbytes(n, S), st, ls, sz); }             \
    void shmem_alltoalls##B(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst, \
                            size_t n, int st, int ls, int sz, long *ps)       \
    {                                                                          \
        (void)ps;                                                              \
        MPI_Comm c = set_comm("shmem_alltoalls", st, ls, sz);                  \
        if (c != MPI_COMM_NULL)                                                \
            shmemi_alltoalls(c, d, s, dst, sst, n, S);                         \
    }
DEFINE_COLL(32, 4)
DEFINE_COLL(64, 8)

static void reduce(void *dest, const void *src, int n, MPI_Datatype dt, MPI_Op op,
                   int start, int logstride, int size)
{
    MPI_Comm c = set_comm("shmem_to_all", start, logstride, size);
    if (c == MPI_COMM_NULL || n <= 0)
        return;
    MPI_Allreduce(dest == src ? MPI_IN_PLACE : src, dest, n, dt, op, c);
}

#define DEFINE_TO_ALL(T, N, OP)                                                \
    void shmem_##N##_##OP##_to_all(T *d, const T *s, int n, int st, int ls,    \
                                   int sz, T *w, long *ps)                     \
    { (void)w; (void)ps; reduce(d, s, n, MPI_T_##N, MPI_OP_##OP, st, ls, sz); }
#define DEFINE_BIT_TO_ALL(T, N) SHMEMI_BIT_OPS(DEFINE_TO_ALL, T, N)
#define DEFINE_ARITH_TO_ALL(T, N) SHMEMI_ARITH_OPS(DEFINE_TO_ALL, T, N)
SHMEMI_REDUCE_BIT_TYPES(DEFINE_BIT_TO_ALL)
SHMEMI_REDUCE_ARITH_TYPES(DEFINE_ARITH_TO_ALL)
#define DEFINE_SUMPROD_TO_ALL(T, N) SHMEMI_SUMPROD_OPS(DEFINE_TO_ALL, T, N)
SHMEMI_COMPLEX_TYPES(DEFINE_SUMPROD_TO_ALL)

/* Allgatherv of bytes from every PE of comm (counts may differ per PE). */
int shmemi_collectv(MPI_Comm c, const char *fn, void *dest, const void *src,
                    size_t bytes)
{
    int np, n = shmemi_coll_count(fn, bytes, 1), ok = n >= 0, all;
    MPI_Comm_size(c, &np);
    /* every PE must take part or none: a refused count on one PE would
     * leave the others inside MPI_Allgatherv */
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
    if (!all)
        return -1;
    int *counts = malloc(sizeof(int) * 2 * (size_t)np), *displs;
    if (!counts)
        shmemi_fatal("out of memory");
    displs = counts + np;
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, c);
    long d = 0;
    for (int i = 0; i < np; d += counts[i++])
        displs[i] = (int)d;
    int rc = MPI_ERR_COUNT;
    if (d <= INT_MAX)
        rc = MPI_Allgatherv(src, n, MPI_BYTE, dest, counts, displs, MPI_BYTE, c);
    else
        shmemi_refuse("%s refused: %ld bytes in all, more than %d", fn, d, INT_MAX);
    free(counts);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/*
 * team.c - OpenSHMEM 1.5 teams: SHMEM_TEAM_WORLD and strided splits, each an
 * MPI communicator plus the map from team PE numbers to world PE numbers,
 * and the team-based collectives on them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

struct shmemi_team {
    MPI_Comm comm;
    int start, stride, size;     /* team PE i is world PE start + i * stride */
};

static struct shmemi_team world_team = {MPI_COMM_NULL, 0, 1, 0};
shmem_team_t SHMEM_TEAM_WORLD = &world_team;

static int bad_team(const char *fn, shmem_team_t t)
{
    shmemi_check_init(fn);
    if (t == SHMEM_TEAM_WORLD) {
        world_team.comm = shmemi.comm;
        world_team.size = shmemi.npes;
    }
    if (t && t->comm != MPI_COMM_NULL)
        return 0;
    fprintf(stderr, "tnbc-shmem: error PE %d: %s: invalid team\n", shmemi.me, fn);
    return 1;
}

int shmem_team_my_pe(shmem_team_t t)
{
    int r;
    if (bad_team("shmem_team_my_pe", t))
        return -1;
    MPI_Comm_rank(t->comm, &r);
    return r;
}

int shmem_team_n_pes(shmem_team_t t)
{
    return bad_team("shmem_team_n_pes", t) ? -1 : t->size;
}

int shmem_team_translate_pe(shmem_team_t src, int pe, shmem_team_t dest)
{
    if (bad_team("shmem_team_translate_pe", src) || bad_team("shmem_team_translate_pe", dest) ||
        pe < 0 || pe >= src->size)
        return -1;
    int world = src->start + pe * src->stride, rel = world - dest->start;
    if (rel < 0 || rel % dest->stride || rel / dest->stride >= dest->size)
        return -1;
    return rel / dest->stride;
}

int shmem_team_split_strided(shmem_team_t parent, int start, int stride, int size,
                             const shmem_team_config_t *config, long mask,
                             shmem_team_t *out)
{
    (void)config; (void)mask;
    *out = SHMEM_TEAM_INVALID;
    if (bad_team("shmem_team_split_strided", parent))
        return -1;
    if (size < 1 || stride < 1 || start < 0 || start + (long)(size - 1) * stride >= parent->size) {
        fprintf(stderr, "tnbc-shmem: error PE %d: shmem_team_split_strided(%d, %d, %d): "
                "does not fit the parent's %d PEs\n", shmemi.me, start, stride, size,
                parent->size);
        return -1;
    }
    /* collective over the parent: members get a communicator, others NULL */
    int prel = shmem_team_my_pe(parent) - start;
    int member = prel >= 0 && prel % stride == 0 && prel / stride < size;
    MPI_Comm c;
    MPI_Comm_split(parent->comm, member ? 0 : MPI_UNDEFINED, prel, &c);
    if (!member)
        return 0;
    struct shmemi_team *t = malloc(sizeof *t);
    if (!t)
        shmemi_fatal("out of memory");
    *t = (struct shmemi_team){c, parent->start + start * parent->stride,
                              parent->stride * stride, size};
    *out = t;
    return 0;
}

void shmem_team_destroy(shmem_team_t t)
{
    if (t && t != SHMEM_TEAM_WORLD && t->comm != MPI_COMM_NULL) {
        MPI_Comm_free(&t->comm);
        free(t);
    }
}

int shmem_team_sync(shmem_team_t t)
{
    if (bad_team("shmem_team_sync", t))
        return -1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_Barrier(t->comm) == MPI_SUCCESS ? 0 : -1;
}

int shmem_broadcastmem(shmem_team_t t, void *dest, const void *src, size_t n, int root)
{
    int me;
    if (bad_team("shmem_broadcastmem", t) || root < 0 || root >= t->size)
        return -1;
    MPI_Comm_rank(t->comm, &me);
    if (me == root && dest != src)
        memcpy(dest, src, n);      /* 1.5: the root's dest is updated too */
    return MPI_Bcast(dest, (int)n, MPI_BYTE, root, t->comm) == MPI_SUCCESS ? 0 : -1;
}

int shmem_fcollectmem(shmem_team_t t, void *dest, const void *src, size_t n)
{
    if (bad_team("shmem_fcollectmem", t))
        return -1;
    return MPI_Allgather(src, (int)n, MPI_BYTE, dest, (int)n, MPI_BYTE, t->comm) ==
           MPI_SUCCESS ? 0 : -1;
}

int shmem_collectmem(shmem_team_t t, void *dest, const void *src, size_t n)
{
    if (bad_team("shmem_collectmem", t))
        return -1;
    int c = (int)n, *counts = malloc(sizeof(int) * 2 * t->size), *displs = counts + t->size;
    MPI_Allgather(&c, 1, MPI_INT, counts, 1, MPI_INT, t->comm);
    for (int i = 0, d = 0; i < t->size; d += counts[i++])
        displs[i] = d;
    int rc = MPI_Allgatherv(src, c, MPI_BYTE, dest, counts, displs, MPI_BYTE, t->comm);
    free(counts);
    return rc == MPI_SUCCESS ? 0 : -1;
}

int shmem_alltoallmem(shmem_team_t t, void *dest, const void *src, size_t n)
{
    if (bad_team("shmem_alltoallmem", t))
        return -1;
    return MPI_Alltoall(src, (int)n, MPI_BYTE, dest, (int)n, MPI_BYTE, t->comm) ==
           MPI_SUCCESS ? 0 : -1;
}

static int team_reduce(shmem_team_t t, void *dest, const void *src, size_t n,
                       MPI_Datatype dt, MPI_Op op)
{
    if (bad_team("shmem_reduce", t))
        return -1;
    return MPI_Allreduce(dest == src ? MPI_IN_PLACE : src, dest, (int)n, dt, op,
                         t->comm) == MPI_SUCCESS ? 0 : -1;
}

#define DEFINE_REDUCE(T, N, OP)                                                \
    int shmem_##N##_##OP##_reduce(shmem_team_t t, T *d, const T *s, size_t n)  \
    { return team_reduce(t, d, s, n, MPI_T_##N, MPI_OP_##OP); }
#define DEFINE_BIT_REDUCE(T, N) SHMEMI_BIT_OPS(DEFINE_REDUCE, T, N)
#define DEFINE_ARITH_REDUCE(T, N) SHMEMI_ARITH_OPS(DEFINE_REDUCE, T, N)
SHMEMI_REDUCE_BIT_TYPES(DEFINE_BIT_REDUCE)
SHMEMI_REDUCE_ARITH_TYPES(DEFINE_ARITH_REDUCE)

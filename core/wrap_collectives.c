// SPDX-License-Identifier: BSD-3-Clause
/* C bindings of the handled blocking collectives. Each one packs its
 * arguments into a struct tnbc_args and hands them to the mode. */
#include "intercept.h"

#define CALLER __builtin_return_address(0)

int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                 MPI_Datatype rt, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_ALLTOALL, .sendbuf = sb, .scount = sc, .stype = st,
                           .recvbuf = rb, .rcount = rc, .rtype = rt, .root = -1, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Alltoallv(const void *sb, const int *scs, const int *sds, MPI_Datatype st,
                  void *rb, const int *rcs, const int *rds, MPI_Datatype rt, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_ALLTOALLV, .sendbuf = sb, .scounts = scs, .sdispls = sds,
                           .stype = st, .recvbuf = rb, .rcounts = rcs, .rdispls = rds,
                           .rtype = rt, .root = -1, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                  MPI_Datatype rt, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_ALLGATHER, .sendbuf = sb, .scount = sc, .stype = st,
                           .recvbuf = rb, .rcount = rc, .rtype = rt, .root = -1, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int *rcs,
                   const int *rds, MPI_Datatype rt, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_ALLGATHERV, .sendbuf = sb, .scount = sc, .stype = st,
                           .recvbuf = rb, .rcounts = rcs, .rdispls = rds, .rtype = rt,
                           .root = -1, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
               MPI_Datatype rt, int root, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_GATHER, .sendbuf = sb, .scount = sc, .stype = st,
                           .recvbuf = rb, .rcount = rc, .rtype = rt, .root = root, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int *rcs,
                const int *rds, MPI_Datatype rt, int root, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_GATHERV, .sendbuf = sb, .scount = sc, .stype = st,
                           .recvbuf = rb, .rcounts = rcs, .rdispls = rds, .rtype = rt,
                           .root = root, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                MPI_Datatype rt, int root, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_SCATTER, .sendbuf = sb, .scount = sc, .stype = st,
                           .recvbuf = rb, .rcount = rc, .rtype = rt, .root = root, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Scatterv(const void *sb, const int *scs, const int *sds, MPI_Datatype st,
                 void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_SCATTERV, .sendbuf = sb, .scounts = scs, .sdispls = sds,
                           .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt,
                           .root = root, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_BCAST, .recvbuf = buf, .rcount = count, .rtype = type,
                           .root = root, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_ALLREDUCE, .sendbuf = sb, .recvbuf = rb, .rcount = count,
                           .stype = type, .rtype = type, .mpi_op = op, .root = -1, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_REDUCE, .sendbuf = sb, .recvbuf = rb, .rcount = count,
                           .stype = type, .rtype = type, .mpi_op = op, .root = root, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_REDUCE_SCATTER_BLOCK, .sendbuf = sb, .recvbuf = rb,
                           .rcount = count, .stype = type, .rtype = type, .mpi_op = op, .root = -1,
                           .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int *counts, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm)
{
    struct tnbc_args a = { .op = TNBC_REDUCE_SCATTER, .sendbuf = sb, .recvbuf = rb,
                           .rcounts = counts, .stype = type, .rtype = type, .mpi_op = op,
                           .root = -1, .comm = comm };
    return tnbc_collective(&a, CALLER);
}

int tnbc_pmpi_collective(const struct tnbc_args *a)
{
    switch (a->op) {
    case TNBC_ALLTOALL:
        return PMPI_Alltoall(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount, a->rtype, a->comm);
    case TNBC_ALLTOALLV:
        return PMPI_Alltoallv(a->sendbuf, a->scounts, a->sdispls, a->stype, a->recvbuf,
                              a->rcounts, a->rdispls, a->rtype, a->comm);
    case TNBC_ALLGATHER:
        return PMPI_Allgather(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount, a->rtype, a->comm);
    case TNBC_ALLGATHERV:
        return PMPI_Allgatherv(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcounts,
                               a->rdispls, a->rtype, a->comm);
    case TNBC_GATHER:
        return PMPI_Gather(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount, a->rtype,
                           a->root, a->comm);
    case TNBC_GATHERV:
        return PMPI_Gatherv(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcounts, a->rdispls,
                            a->rtype, a->root, a->comm);
    case TNBC_SCATTER:
        return PMPI_Scatter(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount, a->rtype,
                            a->root, a->comm);
    case TNBC_SCATTERV:
        return PMPI_Scatterv(a->sendbuf, a->scounts, a->sdispls, a->stype, a->recvbuf, a->rcount,
                             a->rtype, a->root, a->comm);
    case TNBC_BCAST:
        return PMPI_Bcast(a->recvbuf, a->rcount, a->rtype, a->root, a->comm);
    case TNBC_ALLREDUCE:
        return PMPI_Allreduce(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->mpi_op, a->comm);
    case TNBC_REDUCE:
        return PMPI_Reduce(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->mpi_op, a->root, a->comm);
    case TNBC_REDUCE_SCATTER_BLOCK:
        return PMPI_Reduce_scatter_block(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->mpi_op,
                                         a->comm);
    case TNBC_REDUCE_SCATTER:
        return PMPI_Reduce_scatter(a->sendbuf, a->recvbuf, a->rcounts, a->rtype, a->mpi_op, a->comm);
    default:
        return MPI_ERR_OTHER;
    }
}

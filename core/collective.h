/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives tnbc handles, and their decomposition into sub-messages.
 *
 * A receive buffer splits into one sub-message per source block (alltoall(v),
 * allgather(v), gather(v) at the root); the single-block operations (bcast,
 * allreduce, reduce at the root, scatter(v)) split into m chunks of whole
 * elements. The send side splits into one sub-message per destination block
 * where blocks differ per destination (alltoall(v), scatter(v) at the root),
 * else it is one sub-message. Offsets are relative to the buffer's lowest
 * byte, and each sub-message covers the bytes its datatype really touches
 * (true extent), so derived datatypes get an honest footprint. */
#ifndef TNBC_COLLECTIVE_H
#define TNBC_COLLECTIVE_H

#include <mpi.h>
#include <stddef.h>

enum tnbc_op {
    TNBC_ALLTOALL, TNBC_ALLTOALLV, TNBC_ALLGATHER, TNBC_ALLGATHERV,
    TNBC_GATHER, TNBC_GATHERV, TNBC_SCATTER, TNBC_SCATTERV,
    TNBC_BCAST, TNBC_ALLREDUCE, TNBC_REDUCE,
    TNBC_REDUCE_SCATTER_BLOCK, TNBC_REDUCE_SCATTER,
    TNBC_OP_COUNT
};

const char *tnbc_op_name(enum tnbc_op op);
int tnbc_op_from_name(const char *name);   /* -1 when unknown */
int tnbc_op_is_chunked(enum tnbc_op op);   /* single-block receive side */

/* The arguments of one blocking collective call, as the program passed them.
 * Unused fields are zero/NULL. bcast: recvbuf=buffer, rcount/rtype=count/type;
 * allreduce/reduce: rcount/rtype=count/type, stype=rtype;
 * reduce_scatter_block: rcount = recvcount; reduce_scatter: rcounts =
 * recvcounts (every rank's), stype = rtype. */
struct tnbc_args {
    enum tnbc_op op;
    const void *sendbuf;
    int scount;
    const int *scounts, *sdispls;
    MPI_Datatype stype;
    void *recvbuf;
    int rcount;
    const int *rcounts, *rdispls;
    MPI_Datatype rtype;
    MPI_Op mpi_op;
    int root;
    MPI_Comm comm;
};

struct tnbc_submsg {
    size_t offset;     /* from the layout's base */
    size_t bytes;      /* footprint in the buffer */
    int idx;           /* block or chunk number */
    int peer;          /* source/destination rank; -1 for chunks */
    long elem_first;   /* its elements: [elem_first, elem_first + elem_count) */
    long elem_count;   /*   of the datatype, from the buffer pointer */
};

struct tnbc_layout {
    char *base;        /* lowest byte touched; NULL when the side is absent */
    size_t span;       /* bytes from base to the highest byte touched */
    size_t bytes;      /* payload bytes (type size x count) */
    long block_bytes;  /* payload per sub-message; -1 when they differ */
    int nsub;
    struct tnbc_submsg *sub;   /* nsub entries, owned */
    /* 1 when some whole page between base and base + span may hold none
     * of the call's bytes: a gap between blocks or a hole in a derived
     * type's element of a page or more (or a type too wide to map). Such a
     * page is not the call's (another allocation, malloc's or MPI's own
     * data, a read-only or unmapped range between two arrays of a struct
     * at MPI_BOTTOM): it is never guarded, nor copied, and the call runs
     * blocking. */
    int page_holes;
};

struct tnbc_call_layout {
    int comm_size, comm_rank;
    int chunks;                /* m for chunked receive sides, else 0 */
    int send_type_size, recv_type_size;
    struct tnbc_layout recv, send;
};

/* Fill `out` for this call; `chunks` is m for the single-block operations.
 * Returns 0, or -1 with *why set to a static reason (unsupported argument). */
int tnbc_layout_build(const struct tnbc_args *a, int chunks,
                      struct tnbc_call_layout *out, const char **why);
void tnbc_layout_free(struct tnbc_call_layout *l);

/* 1 when a reduction with this predefined type and op gives the same bits
 * in any order of application (integers; no floating point, no
 * user-defined op): only those are transformed. Derived types are not
 * in the lists: Open MPI rejects predefined operations on them
 * (MPI_ERR_OP), and the blocking call keeps that behaviour. One list for the layout's
 * check and replay's chunked plans. */
int tnbc_reduction_is_exact(MPI_Datatype t, MPI_Op op);

/* Whether a call whose layout is `l` may return early, i.e. give results
 * bit-identical to the blocking call whatever a correct program does after
 * it returned. Returns 1, or 0 with *why set to a static reason (the call
 * then runs blocking). Not transformable: reductions whose result could
 * depend on the order of application (floating point, MAX/MIN included:
 * signed zeros and NaNs; user-defined ops), a send side
 * overlapping the receive side (not MPI_IN_PLACE), receive memory the
 * page guard may not protect (tnbc_guard_memory_ok), and a side with
 * page_holes. */
int tnbc_call_transformable(const struct tnbc_args *a, const struct tnbc_call_layout *l,
                            const char **why);
/* The reason given for a layout with page_holes (guard and replay alike). */
extern const char tnbc_page_holes_reason[];
/* Its part that depends only on arguments every member passes alike (MPI
 * requires a reduction's datatype and op to be the same on all processes):
 * the reduction's datatype and op. Every member reaches the same answer,
 * so a call that fails it needs no agreement to run blocking everywhere. */
int tnbc_call_form_transformable(const struct tnbc_args *a, const char **why);

/* Split `count` elements of `elem` bytes (stride `extent`) into m chunks of
 * whole elements, as evenly as possible; returns the number written (<= m,
 * fewer when count < m). Shared by trace and replay so chunks agree. */
int tnbc_chunk_split(long count, int m, long *first, long *n);

#endif

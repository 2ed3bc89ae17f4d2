// SPDX-License-Identifier: BSD-3-Clause
/* Neighbor collectives (MPI_Neighbor_alltoall(v), MPI_Neighbor_allgather(v))
 * are not transformed: their schedule is over the topology's neighbours,
 * not the communicator's ranks. Their buffers may still be guarded by an
 * earlier early-returning call, and Open MPI may move them with a system
 * call that fails on a guarded page, so the guards are lifted first; the
 * call then runs blocking, said once. */
#include "intercept.h"
#include "config.h"

/* In- and out-degree of comm's topology; 0 and 0 without one. */
static void degrees(MPI_Comm comm, int *in, int *out)
{
    int topo = MPI_UNDEFINED, rank = 0, n = 0, weighted = 0;
    *in = *out = 0;
    PMPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
        PMPI_Cartdim_get(comm, &n);
        *in = *out = 2 * n;
    } else if (topo == MPI_GRAPH) {
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &n);
        *in = *out = n;
    } else if (topo == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
    }
}

static void said(void)
{
    static int warned;
    if (tnbc_is_active())
        tnbc_warn_once(warned, "neighbor collectives are not handled by %s: they run as called, blocking",
                       tnbc_mode_name);
}

/* count elements of t at displacement d (elements) for each of n blocks. */
static void release_blocks(const void *buf, int n, const int *counts, int count, const int *displs,
                           MPI_Datatype t)
{
    MPI_Aint lb, ext;
    if (!tnbc_guard_active() || !buf || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS)
        return;
    for (int k = 0; k < n; k++) {
        long c = counts ? counts[k] : count, d = displs ? displs[k] : (long)k * count;
        tnbc_release_typed((const char *)buf + d * ext, c, t, TNBC_REL_MPI);
    }
}

int MPI_Neighbor_alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                          MPI_Datatype rt, MPI_Comm comm)
{
    int in, out;
    said();
    degrees(comm, &in, &out);
    release_blocks(sb, out, NULL, sc, NULL, st);
    release_blocks(rb, in, NULL, rc, NULL, rt);
    return TNBC_NEXT(MPI_Neighbor_alltoall)(sb, sc, st, rb, rc, rt, comm);
}

int MPI_Neighbor_alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                           void *rb, const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm)
{
    int in, out;
    said();
    degrees(comm, &in, &out);
    release_blocks(sb, out, scs, 0, sds, st);
    release_blocks(rb, in, rcs, 0, rds, rt);
    return TNBC_NEXT(MPI_Neighbor_alltoallv)(sb, scs, sds, st, rb, rcs, rds, rt, comm);
}

int MPI_Neighbor_allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                           MPI_Datatype rt, MPI_Comm comm)
{
    int in, out;
    said();
    degrees(comm, &in, &out);
    release_blocks(sb, 1, NULL, sc, NULL, st);
    release_blocks(rb, in, NULL, rc, NULL, rt);
    return TNBC_NEXT(MPI_Neighbor_allgather)(sb, sc, st, rb, rc, rt, comm);
}

int MPI_Neighbor_allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                            const int rds[], MPI_Datatype rt, MPI_Comm comm)
{
    int in, out;
    said();
    degrees(comm, &in, &out);
    release_blocks(sb, 1, NULL, sc, NULL, st);
    release_blocks(rb, in, rcs, 0, rds, rt);
    return TNBC_NEXT(MPI_Neighbor_allgatherv)(sb, sc, st, rb, rcs, rds, rt, comm);
}

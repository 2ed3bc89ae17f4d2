// SPDX-License-Identifier: BSD-3-Clause
/* MPI_Alltoallw. When every peer's block has the same datatype on each
 * side (peers with nothing to move aside) and the byte displacements are
 * multiples of that type's extent, the call is an MPI_Alltoallv in
 * disguise and is handled as one (traced, profiled and replayed as
 * `alltoallv` at its call site). Otherwise the guards on its blocks are
 * lifted and it runs blocking, said once. */
#include "intercept.h"
#include "config.h"

#include <stdlib.h>

/* The one type of the blocks that move, or MPI_DATATYPE_NULL. */
static MPI_Datatype uniform_type(const int *counts, const int *displs, const MPI_Datatype *types,
                                 int p, int *edispls)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Aint lb, ext = 0;
    for (int k = 0; k < p; k++) {
        if (counts[k] <= 0)
            continue;
        if (t == MPI_DATATYPE_NULL) {
            t = types[k];
            if (t == MPI_DATATYPE_NULL || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS || ext <= 0)
                return MPI_DATATYPE_NULL;
        } else if (types[k] != t) {
            return MPI_DATATYPE_NULL;
        }
        if (displs[k] % ext)
            return MPI_DATATYPE_NULL;
    }
    for (int k = 0; k < p; k++)
        edispls[k] = counts[k] > 0 ? (int)(displs[k] / ext) : 0;
    return t == MPI_DATATYPE_NULL ? types[0] : t;
}

static int blocking_w(const void *sb, const int *scs, const int *sds, const MPI_Datatype *sts,
                      void *rb, const int *rcs, const int *rds, const MPI_Datatype *rts,
                      MPI_Comm comm, int p)
{
    static int warned;
    if (tnbc_is_active())
        tnbc_warn_once(warned, "alltoallw with different datatypes per peer, byte displacements "
                               "not a multiple of the type's extent, or on an inter-communicator "
                               "runs blocking (not transformed)");
    for (int k = 0; tnbc_guard_active() && k < p; k++) {
        if (sb != MPI_IN_PLACE && scs[k] > 0)
            tnbc_release_typed((const char *)sb + sds[k], scs[k], sts[k], TNBC_REL_MPI);
        if (rcs[k] > 0)
            tnbc_release_typed((const char *)rb + rds[k], rcs[k], rts[k], TNBC_REL_MPI);
    }
    return PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
}

int tnbc_alltoallw(const void *sb, const int *scs, const int *sds, const MPI_Datatype *sts,
                   void *rb, const int *rcs, const int *rds, const MPI_Datatype *rts,
                   MPI_Comm comm, void *caller)
{
    int p = 0, inter = 0, rc;
    if (!tnbc_is_active() || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_size(comm, &p) : PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);   /* MPI reports it */
    int *e = inter ? NULL : malloc(2 * (size_t)(p ? p : 1) * sizeof *e);
    MPI_Datatype st = MPI_DATATYPE_NULL, rt = MPI_DATATYPE_NULL;
    if (e) {
        rt = uniform_type(rcs, rds, rts, p, e + p);
        st = sb == MPI_IN_PLACE ? rt : uniform_type(scs, sds, sts, p, e);
    }
    /* Whether a rank's blocks share one type is its own business (rank 0
     * may send ints to one peer and pairs to another while rank 1 sends
     * pairs to both): every rank must take the same path, or one runs
     * alltoallw and another alltoallv and both hang. The members agree
     * on the user's communicator, where this call stands in the same
     * order on every member (inter-communicators are blocking on all). */
    int mine = st != MPI_DATATYPE_NULL && rt != MPI_DATATYPE_NULL, all = 0;
    if (!inter && PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        all = 0;
    if (!all) {
        free(e);
        return blocking_w(sb, scs, sds, sts, rb, rcs, rds, rts, comm, p);
    }
    struct tnbc_args a = { .op = TNBC_ALLTOALLV, .sendbuf = sb, .scounts = scs, .sdispls = e,
                           .stype = st, .recvbuf = rb, .rcounts = rcs, .rdispls = e + p,
                           .rtype = rt, .root = -1, .comm = comm };
    if (sb == MPI_IN_PLACE) {
        a.scounts = NULL;
        a.sdispls = NULL;
        a.stype = MPI_DATATYPE_NULL;
    }
    rc = tnbc_collective(&a, caller);
    free(e);
    return rc;
}

int MPI_Alltoallw(const void *sb, const int scs[], const int sds[], const MPI_Datatype sts[],
                  void *rb, const int rcs[], const int rds[], const MPI_Datatype rts[], MPI_Comm comm)
{
    return tnbc_alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, __builtin_return_address(0));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-communicator state of the replay runtime: for each intra-
 * communicator the program runs a transformed collective on, two private
 * duplicates (one for the progress thread's data, one for the ranks'
 * agreement on each call) and the count of agreed calls, which tags the
 * data. Created lazily on the first candidate call (MPI_Comm_dup is
 * collective: every member asks at the same call, as they all enter it),
 * with the members' node map (MPI_Comm_split_type, once per communicator),
 * kept as an attribute of the user's communicator and freed by its delete
 * callback when the program frees the communicator (after everything in
 * flight has completed), or at MPI_Finalize. */
#ifndef TNBC_COMMS_H
#define TNBC_COMMS_H

#include "autotune.h"

#include <mpi.h>

#include <stddef.h>

struct edge_req;

struct comm_priv {
    MPI_Comm data, agree;   /* private duplicates of the user's communicator */
    int seq;                /* calls agreed on it so far */
    /* The agreement's buffers, one element per member each: per
     * communicator, since two threads may agree at once on two of them
     * (MPI forbids two at once on one). */
    struct edge_req *agree_out, *agree_got;
    /* Per member, the lowest rank of its node (MPI_COMM_TYPE_SHARED): the
     * same array on every member, so schedules built from it agree. */
    int *node_of;
    struct auto_stream auto_streams[TNBC_OP_COUNT];   /* TNBC_AUTO (autotune.h) */
};

/* before_free runs before private duplicates are freed: it must complete
 * every call in flight on them. agree_elem: the size of one element of
 * the agreement's buffers. */
void comms_init(void (*before_free)(void), size_t agree_elem);
/* comm's state, created on first use; NULL with *why (an inter-
 * communicator, or MPI refused the duplicate). */
struct comm_priv *comms_get(MPI_Comm comm, const char **why);
/* 1 when comm has private state (calls on it may be in flight). */
int comms_known(MPI_Comm comm);
/* Frees every private duplicate still held (before MPI_Finalize). */
void comms_finalize(void);

#endif

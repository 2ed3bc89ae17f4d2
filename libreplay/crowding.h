// SPDX-License-Identifier: BSD-3-Clause
/*
 * Does this rank's machine run more of the job's ranks than it has CPUs
 * for them?
 *
 * An early return overlaps communication with the program's work only
 * where something other than the program's CPU moves the data: a NIC, the
 * wire, a core left idle. Between ranks of one node the data is moved by
 * copying (shared memory), and when the node's ranks already outnumber
 * the CPUs they may run on, that copying and the progress thread are
 * taken from some rank's work: nothing is overlapped, and the switching
 * costs (measured: 4 ranks on 2 cores, docs/auto.md). tnbc auto counts the
 * communication's CPU share as all of it for a communicator that stays on
 * such a node.
 *
 * A machine is a running kernel (its boot id), not a hostname: the
 * emulated cluster's "nodes" are network namespaces of one kernel and
 * share its CPUs. Its CPUs are the union of the affinity masks of the
 * job's ranks on it.
 */
#ifndef TNBC_REPLAY_CROWDING_H
#define TNBC_REPLAY_CROWDING_H

#include <mpi.h>

struct crowding {
    int ranks;   /* the job's ranks on this rank's kernel, this one included */
    int cpus;    /* CPUs those ranks may run on (union of their affinity) */
};

/* Collective over `world` (every rank calls it once). 0, or -1 when an MPI
 * call failed (`out` then says one rank on one CPU: not crowded). */
int crowding_measure(MPI_Comm world, struct crowding *out);

static inline int crowding_crowded(const struct crowding *c)
{
    return c->ranks > c->cpus;
}

#endif

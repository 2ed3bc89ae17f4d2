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
 * costs (measured: 4 ranks on 2 cores, docs/auto.md). tnbc auto and the
 * analyzer (from the trace's run rows) count the communication's CPU share
 * as all of it for a communicator that stays on such a node.
 *
 * A machine is a running kernel (its boot id), not a hostname: the
 * emulated cluster's "nodes" are network namespaces of one kernel and
 * share its CPUs. Its CPUs are the union of the affinity masks of the
 * job's ranks on it.
 */
#ifndef TNBC_CORE_CROWDING_H
#define TNBC_CORE_CROWDING_H

#include <assert.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

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

/* The words a decision gives for a crowded machine: `members` of a
 * communicator on one node of machine `c`; `overrides` names the setting
 * that takes the share from the user instead. (Inline: tnbc-analyze uses
 * it without linking MPI.) */
static inline void crowding_why(char *buf, size_t len, int members, const struct crowding *c,
                                const char *overrides)
{
    assert(crowding_crowded(c));
    snprintf(buf, len,
             "the %d members share a node, and its machine runs %d of the job's ranks on %d "
             "CPU%s, so moving their data (copying) takes a CPU from some rank's work "
             "(%s overrides)", members, c->ranks, c->cpus, c->cpus == 1 ? "" : "s", overrides);
}

/* The same where the members are on several hosts of one machine that
 * runs the whole job (network namespaces of one kernel): the data between
 * them crosses that kernel's TCP, on the same CPUs. */
static inline void crowding_why_job(char *buf, size_t len, const struct crowding *c,
                                    const char *overrides)
{
    assert(crowding_crowded(c));
    snprintf(buf, len,
             "the job's %d ranks run on one machine with %d CPU%s (its hosts share one kernel), "
             "so moving their data (copying, TCP through that kernel) takes a CPU from some "
             "rank's work (%s overrides)", c->ranks, c->cpus, c->cpus == 1 ? "" : "s", overrides);
}

#endif

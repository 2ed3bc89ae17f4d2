/* SPDX-License-Identifier: BSD-3-Clause */
/* Open MPI's idle polling made to yield where tnbc's progress thread shares
 * its rank's CPUs (docs/replay.md, "MPI's idle polling"). */
#ifndef TNBC_YIELD_H
#define TNBC_YIELD_H

/* Would a rank allowed `mine` CPUs, of a machine with `online`, among
 * `local_ranks` ranks of its job on that machine, share a CPU with its
 * progress thread? The node's ranks taken as spread evenly over its CPUs
 * (a rank bound to one core: yes; 2 ranks unbound on 16 CPUs: no). */
int yield_crowded(long mine, long online, long local_ranks);

/* Before MPI_Init_thread, where a site is on: sets
 * OMPI_MCA_mpi_yield_when_idle=1 when this rank is launched by Open MPI,
 * the variable is unset (the user's or mpirun's choice stands) and
 * yield_crowded() says so. Returns 1 when it set it. */
int yield_when_crowded(void);

#endif

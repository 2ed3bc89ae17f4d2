// SPDX-License-Identifier: BSD-3-Clause
/* Open MPI's idle polling made to yield where the progress thread shares
 * the rank's CPUs.
 *
 * A rank that waits in MPI (a barrier, a blocking call of a site that is
 * off, the next collective while its sends of the last are still going)
 * busy-polls under Open MPI's default: it keeps its CPU until its time
 * slice ends. Where the progress thread has no CPU of its own, that is
 * time in which the early call's pieces neither leave nor land: on the
 * emulated cluster's 2 x 1 (a CPU per node), micro-c's iterations took
 * 10.5-11.9 ms busy-polling against 10.5-10.7 mostly, yielding
 * (docs/replay.md). With mpi_yield_when_idle the poll gives the CPU to
 * whatever else may run, the progress thread first. Open MPI reads the
 * variable from the environment in MPI_Init, so it is set just before. */
#include "yield.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#define YIELD_VAR "OMPI_MCA_mpi_yield_when_idle"

int yield_crowded(long mine, long online, long local_ranks)
{
    if (mine < 1 || local_ranks < 1)
        return 0;
    if (online < mine)
        online = mine;
    /* The job's ranks that share this rank's CPUs (rounded up: at least itself). */
    long sharing = (local_ranks * mine + online - 1) / online;
    return 2 * sharing > mine;    /* each with its progress thread */
}

int yield_when_crowded(void)
{
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    char *end;
    if (getenv(YIELD_VAR) || !local)
        return 0;
    long ranks = strtol(local, &end, 10);
    if (end == local || *end || ranks < 1)
        return 0;
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    long mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : online;
    if (!yield_crowded(mine, online, ranks))
        return 0;
    return setenv(YIELD_VAR, "1", 0) == 0;
}

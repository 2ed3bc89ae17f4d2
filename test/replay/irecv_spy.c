// SPDX-License-Identifier: BSD-3-Clause
/* A test-only interposer (LD_PRELOAD after libtnbc-replay.so): logs the
 * source of every PMPI_Irecv, in the order they are posted, then passes
 * the call on. The replay runtime posts a call's receives in the profile's
 * priority order; test/replay.sh compares the log with the read order the
 * program was traced with. One file per rank: $IRECV_SPY_DIR/rank-R. */
#include <mpi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*irecv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static int log_fd = -1;

static void open_log(void)
{
    const char *dir = getenv("IRECV_SPY_DIR"), *rank = getenv("OMPI_COMM_WORLD_RANK");
    char path[4096];
    if (!rank)
        rank = getenv("PMI_RANK");     /* MPICH's Hydra */
    if (!dir || !rank || snprintf(path, sizeof path, "%s/rank-%s", dir, rank) >= (int)sizeof path)
        return;
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    static irecv_fn real;
    if (!real) {
        real = (irecv_fn)dlsym(RTLD_NEXT, "PMPI_Irecv");
        open_log();
    }
    if (!real)
        abort();       /* no MPI after us: nothing sensible to do */
    if (log_fd >= 0) {
        char line[32];
        int n = snprintf(line, sizeof line, "%d %d\n", source, count);
        if (write(log_fd, line, (size_t)n) != n)
            abort();   /* a log that lies would pass a wrong order */
    }
    return real(buf, count, type, source, tag, comm, req);
}

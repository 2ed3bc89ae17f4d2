// SPDX-License-Identifier: BSD-3-Clause
/* A test-only interposer (LD_PRELOAD after libtnbc-replay.so): logs the
 * source and count of every PMPI_Irecv and the destination and count of
 * every PMPI_Isend, in the order they are posted, each with the time
 * (CLOCK_MONOTONIC, ns: one clock for every process of the machine), then
 * passes the call on. The replay runtime posts a call's receives in the
 * profile's priority order, and passes its node's turn on with a zero-byte
 * send; test/replay.sh compares the logs with the read order the program
 * was traced with and with the turn's least length. One file per rank and
 * kind: $IRECV_SPY_DIR/rank-R (receives) and rank-R.isend. */
#include <mpi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*irecv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static int open_log(const char *suffix)
{
    const char *dir = getenv("IRECV_SPY_DIR"), *rank = getenv("OMPI_COMM_WORLD_RANK");
    char path[4096];
    if (!rank)
        rank = getenv("PMI_RANK");     /* MPICH's Hydra */
    if (!dir || !rank || snprintf(path, sizeof path, "%s/rank-%s%s", dir, rank, suffix) >= (int)sizeof path)
        return -1;
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

/* "PEER COUNT NS\n" to fd (none if -1). */
static void log_post(int fd, int peer, int count)
{
    struct timespec ts;
    char line[64];
    if (fd < 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int n = snprintf(line, sizeof line, "%d %d %lld\n", peer, count,
                     (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    if (write(fd, line, (size_t)n) != n)
        abort();   /* a log that lies would pass a wrong order */
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    static irecv_fn real;
    static int fd = -1;
    if (!real) {
        real = (irecv_fn)dlsym(RTLD_NEXT, "PMPI_Irecv");
        fd = open_log("");
    }
    if (!real)
        abort();       /* no MPI after us: nothing sensible to do */
    log_post(fd, source, count);
    return real(buf, count, type, source, tag, comm, req);
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    static isend_fn real;
    static int fd = -1;
    if (!real) {
        real = (isend_fn)dlsym(RTLD_NEXT, "PMPI_Isend");
        fd = open_log(".isend");
    }
    if (!real)
        abort();
    log_post(fd, dest, count);
    return real(buf, count, type, dest, tag, comm, req);
}

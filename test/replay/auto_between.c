// SPDX-License-Identifier: BSD-3-Clause
/* A program that spends part of the time before it reads an alltoall's
 * data inside other collectives, for tnbc auto's tests:
 *
 *   auto_between ITERS BLOCK MS
 *
 * Each iteration: an MPI_Alltoall of BLOCK bytes per peer between malloc'd
 * buffers (not page-aligned); rank 0 sleeps MS ms, then a one-int
 * MPI_Allreduce; rank 1 sleeps MS ms, then another; then every rank reads
 * the received blocks. So between the alltoall's return and its first
 * read every rank of two works MS ms (its sleep) and waits about MS ms
 * inside an allreduce for the other's sleep: TCURC is the MS of work,
 * not the 2 MS that pass. Prints a checksum of what was received. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4 || atol(argv[1]) < 1 || atol(argv[2]) < 8 || atol(argv[2]) % 8 || atol(argv[3]) < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: auto_between ITERS BLOCK MS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long iters = atol(argv[1]), per = atol(argv[2]) / 8, ms = atol(argv[3]);
    char *sraw = malloc((size_t)(size * per) * 8 + 16), *rraw = malloc((size_t)(size * per) * 8 + 16);
    if (!sraw || !rraw)
        MPI_Abort(MPI_COMM_WORLD, 3);
    int64_t *send = (int64_t *)(sraw + 8), *recv = (int64_t *)(rraw + 8);
    uint64_t h = 1469598103934665603ULL;
    for (long it = 0; it < iters; it++) {
        for (long i = 0; i < size * per; i++)
            send[i] = rank * 1000003L + i * 7 + it;
        MPI_Alltoall(send, (int)per, MPI_INT64_T, recv, (int)per, MPI_INT64_T, MPI_COMM_WORLD);
        for (int k = 0; k < 2; k++) {
            int one = 1, sum = 0;
            if (rank == k)
                sleep_ms(ms);
            MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            h = (h ^ (uint64_t)sum) * 1099511628211ULL;
        }
        for (long i = 0; i < size * per; i++)
            h = (h ^ (uint64_t)recv[i]) * 1099511628211ULL;
    }
    uint64_t all[64] = { 0 };
    MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size && r < 64; r++)
            printf("auto_between: rank %d %016llx\n", r, (unsigned long long)all[r]);
    free(sraw);
    free(rraw);
    MPI_Finalize();
    return 0;
}

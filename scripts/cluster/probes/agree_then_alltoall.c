// SPDX-License-Identifier: BSD-3-Clause
/* A blocking MPI_Alltoall of BLOCK bytes alone, and after a one-integer
 * MPI_Alltoall on a duplicate communicator (as tnbc's agreement), with
 * rank 1 arriving 30 ms late (docs/cluster.md).
 *   mpicc -O2 -o agree_then_alltoall agree_then_alltoall.c
 *   mpirun -np 2 ./agree_then_alltoall BLOCK */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ITERS = 10, WARMUP = 2, MAXP = 64 };

static void busy(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
}

int main(int argc, char **argv)
{
    int rank, p, vote[MAXP], votes[MAXP];
    MPI_Comm agree;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long b = argc > 1 ? atol(argv[1]) : 1048576;
    if (p > MAXP || b <= 0) {
        if (rank == 0)
            fprintf(stderr, "agree_then_alltoall: BLOCK > 0 and at most %d ranks\n", MAXP);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *s = malloc((size_t)(b * p)), *d = malloc((size_t)(b * p));
    memset(s, 1, (size_t)(b * p));
    memset(vote, 0, sizeof vote);
    MPI_Comm_dup(MPI_COMM_WORLD, &agree);
    for (int mode = 0; mode < 2; mode++) {
        double sum = 0;
        for (int it = 0; it < ITERS; it++) {
            busy(rank ? 0.030 : 0.0);
            double t = MPI_Wtime(), fastest;
            if (mode)
                MPI_Alltoall(vote, 1, MPI_INT, votes, 1, MPI_INT, agree);
            MPI_Alltoall(s, (int)b, MPI_BYTE, d, (int)b, MPI_BYTE, MPI_COMM_WORLD);
            t = MPI_Wtime() - t;
            MPI_Allreduce(&t, &fastest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
            if (it >= WARMUP)
                sum += fastest;
        }
        if (rank == 0)
            printf("%s block %ld: min-over-ranks call time mean %.1f ms\n",
                   mode ? "agreement+Alltoall" : "Alltoall alone    ", b,
                   sum / (ITERS - WARMUP) * 1e3);
    }
    MPI_Comm_free(&agree);
    free(s);
    free(d);
    MPI_Finalize();
    return 0;
}

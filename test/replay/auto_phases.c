// SPDX-License-Identifier: BSD-3-Clause
/* A program whose read order changes halfway, for tnbc auto's tests:
 *
 *   auto_phases ITERS BLOCK SWITCH sweep|touch
 *
 * Each iteration: an MPI_Alltoall of BLOCK bytes per peer between malloc'd
 * buffers (not page-aligned). `sweep` reads the received blocks first to
 * last before iteration SWITCH and last to first from then on, working on
 * every element; `touch` reads one element of each block and computes
 * nothing (an early return has nothing to overlap). The send data depends
 * on what was received, so a wrong byte changes the printed checksum. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double work(const double *blk, long n, int b)
{
    double acc = 0;
    for (long i = 0; i < n; i++)
        acc += blk[i] * (1.0 + (double)b) - acc * 1e-9;
    return acc;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5 || atol(argv[1]) < 1 || atol(argv[2]) < 64 || atol(argv[2]) % 8 ||
        (strcmp(argv[4], "sweep") && strcmp(argv[4], "touch"))) {
        if (rank == 0)
            fprintf(stderr, "usage: auto_phases ITERS BLOCK SWITCH sweep|touch\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long iters = atol(argv[1]), per = atol(argv[2]) / 8, sw = atol(argv[3]);
    int sweep = strcmp(argv[4], "sweep") == 0;
    char *sraw = malloc((size_t)(size * per) * 8 + 16), *rraw = malloc((size_t)(size * per) * 8 + 16);
    if (!sraw || !rraw)
        MPI_Abort(MPI_COMM_WORLD, 3);
    double *send = (double *)(sraw + 8), *recv = (double *)(rraw + 8);
    double h = 1;
    for (long it = 0; it < iters; it++) {
        for (long i = 0; i < size * per; i++)
            send[i] = (double)(rank * 7 + i % 1009) + h * 1e-3 + (double)it;
        MPI_Alltoall(send, (int)per, MPI_DOUBLE, recv, (int)per, MPI_DOUBLE, MPI_COMM_WORLD);
        double acc = 0;
        for (int k = 0; k < size; k++) {
            int b = it < sw ? k : size - 1 - k;
            acc += sweep ? work(recv + b * per, per, b) : recv[b * per + per / 2] * (1.0 + b);
        }
        h = acc - (double)(int64_t)acc + 1;     /* feeds the next send */
    }
    double all = 0;
    MPI_Reduce(&h, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("auto_phases: %.17g\n", all);
    free(sraw);
    free(rraw);
    MPI_Finalize();
    return 0;
}

// SPDX-License-Identifier: BSD-3-Clause
/* A plain MPI program: MPI_Allreduce (integer sums, 256 KiB) in a loop,
 * each result read in full. Used by test/replay.sh (check_lsan): every
 * call is a chunked operation under tnbc.
 * Usage: allreduce_loop ITERATIONS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define INTS 65536

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 10;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *in = malloc(INTS * sizeof *in), *out = malloc(INTS * sizeof *out);
    if (!in || !out)
        MPI_Abort(MPI_COMM_WORLD, 1);
    long bad = 0;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < INTS; i++)
            in[i] = rank * 31 + it * 7 + i;
        MPI_Allreduce(in, out, INTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < INTS; i++)      /* sum over ranks r of r*31 + it*7 + i */
            bad += out[i] != 31 * size * (size - 1) / 2 + size * (it * 7 + i);
    }
    long allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("allreduce_loop: %s\n", allbad ? "WRONG" : "ok");
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}

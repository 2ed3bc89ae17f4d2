// SPDX-License-Identifier: BSD-3-Clause
/* A program with its own MPI_Init calling PMPI_Init, as an executable that
 * Darshan or Score-P instrumented at link time has: tnbc's MPI_Init is
 * never called. Alltoalls read backwards; one line of sums per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int MPI_Init(int *argc, char ***argv)
{
    fprintf(stderr, "tool: init\n");
    return PMPI_Init(argc, argv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = 1 << 16;
    int *s = malloc(sizeof(int) * (size_t)n * (size_t)size), *r = malloc(sizeof(int) * (size_t)n * (size_t)size);
    long sum = 0;
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < n * size; i++)
            s[i] = i + rank * 7 + it;
        MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
        for (int i = n * size - 1; i >= 0; i--)
            sum += r[i];
    }
    printf("rank %d sum %ld\n", rank, sum);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}

// SPDX-License-Identifier: BSD-3-Clause
/* A program with a real bug: after a traced collective it dereferences a
 * null pointer. Under tracing it must still crash with SIGSEGV (the fault
 * is not ours to handle), not hang or carry on. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = (size_t)size * 4096;
    char *s = calloc(n, 1), *r = calloc(n, 1);
    MPI_Alltoall(s, 4096, MPI_BYTE, r, 4096, MPI_BYTE, MPI_COMM_WORLD);
    volatile int *null = argc > 5 ? (int *)r : NULL;
    printf("about to crash: %d\n", *null);
    MPI_Finalize();
    return 0;
}

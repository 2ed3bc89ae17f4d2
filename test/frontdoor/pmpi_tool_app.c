// SPDX-License-Identifier: BSD-3-Clause
/* The program test/frontdoor.sh runs under pmpi_tool.so: three rounds of
 * an Alltoall read backwards, an MPI_File_write_at of the received data
 * and an MPI_Send of it from rank 0 to rank 1. One line of sums per rank.
 * Built with -DOWN_MPI_INIT it defines MPI_Init itself, calling PMPI_Init,
 * as an executable that Darshan or Score-P instrumented at link time
 * does: tnbc's MPI_Init is then never called. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef OWN_MPI_INIT
int MPI_Init(int *argc, char ***argv)
{
    fprintf(stderr, "tool: init\n");
    return PMPI_Init(argc, argv);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = 1 << 16;
    int *s = malloc(sizeof(int) * (size_t)n * (size_t)size), *r = malloc(sizeof(int) * (size_t)n * (size_t)size);
    long sum = 0;
    MPI_File f;
    MPI_File_open(MPI_COMM_SELF, "/dev/null", MPI_MODE_WRONLY, MPI_INFO_NULL, &f);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < n * size; i++)
            s[i] = i + rank * 7 + it;
        MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
        for (int i = n * size - 1; i >= 0; i--)
            sum += r[i];
        MPI_File_write_at(f, 0, r, 100, MPI_INT, MPI_STATUS_IGNORE);
        if (rank == 0)
            MPI_Send(r, 10, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(s, 10, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_File_close(&f);
    printf("rank %d sum %ld\n", rank, sum);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}

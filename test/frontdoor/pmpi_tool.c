// SPDX-License-Identifier: BSD-3-Clause
/* A PMPI tool, as Darshan or mpiP are: preloaded, it counts the MPI calls
 * it sees through its own MPI_x (each calls PMPI_x) and prints the counts
 * at MPI_Finalize. Behind tnbc in LD_PRELOAD it must still see MPI_Init,
 * MPI_Finalize and the calls tnbc does not transform. */
#include <mpi.h>
#include <stdio.h>

static int inits, sends, writes;

int MPI_Init(int *argc, char ***argv)
{
    inits++;
    return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    inits++;
    return PMPI_Init_thread(argc, argv, required, provided);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset at, const void *buf, int count, MPI_Datatype type,
                      MPI_Status *status)
{
    writes++;
    return PMPI_File_write_at(fh, at, buf, count, type, status);
}

int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "tool rank %d: inits %d sends %d writes %d\n", rank, inits, sends, writes);
    return PMPI_Finalize();
}

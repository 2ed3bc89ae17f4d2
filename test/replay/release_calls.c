// SPDX-License-Identifier: BSD-3-Clause
/* A plain MPI program that hands the receive buffer of an MPI_Alltoall,
 * right after the call, to MPI functions whose wrappers are generated
 * (scripts/gen-release-mpi): MPI_Mprobe + MPI_Mrecv into it (over shared
 * memory or TCP the data may be written by a system call, which gets
 * EFAULT on a guarded page), MPI_Pack from it, and MPI_Reduce_scatter_block
 * over it. Prints a checksum, so a plain run and a tnbc run compare bit
 * for bit. Used by test/replay.sh (check_release_list).
 * Usage: release_calls ITERATIONS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK_INTS 65536    /* 256 KiB per peer */

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 4;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = (long)size * BLOCK_INTS;
    int *sb = malloc(n * sizeof *sb), *rb = malloc(n * sizeof *rb), *red = malloc(BLOCK_INTS * sizeof *red);
    char *packed = malloc(n * sizeof(int));
    if (!sb || !rb || !red || !packed)
        MPI_Abort(MPI_COMM_WORLD, 1);
    unsigned long long sum = 0;
    int partner = rank ^ 1;
    for (int it = 0; it < iters; it++) {
        for (long i = 0; i < n; i++)
            sb[i] = (int)(rank * 1000003L + it * 7919L + i);
        MPI_Alltoall(sb, BLOCK_INTS, MPI_INT, rb, BLOCK_INTS, MPI_INT, MPI_COMM_WORLD);
        switch (it % 3) {
        case 0:   /* receive one block of new data straight into the buffer */
            if (partner < size) {
                MPI_Message msg;
                MPI_Request req;
                MPI_Isend(sb, BLOCK_INTS, MPI_INT, partner, 7, MPI_COMM_WORLD, &req);
                MPI_Mprobe(partner, 7, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
                MPI_Mrecv(rb + BLOCK_INTS * (size - 1), BLOCK_INTS, MPI_INT, &msg, MPI_STATUS_IGNORE);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            break;
        case 1: { /* pack the whole buffer */
            int pos = 0;
            MPI_Pack(rb, (int)n, MPI_INT, packed, (int)(n * sizeof(int)), &pos, MPI_COMM_WORLD);
            for (long i = 0; i < n; i += 97)
                sum = sum * 31 + (unsigned char)packed[i];
            break;
        }
        default:  /* a collective the library does not transform, over it */
            MPI_Reduce_scatter_block(rb, red, BLOCK_INTS, MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
            for (long i = 0; i < BLOCK_INTS; i++)
                sum = sum * 31 + (unsigned)red[i];
        }
        for (long i = 0; i < n; i++)
            sum = sum * 1099511628211ull + (unsigned)rb[i];
    }
    unsigned long long all[64] = { 0 };
    if (size <= 64)
        MPI_Gather(&sum, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size && r < 64; r++)
            printf("release_calls: rank %d checksum %llx\n", r, all[r]);
    free(sb);
    free(rb);
    free(red);
    free(packed);
    MPI_Finalize();
    return 0;
}

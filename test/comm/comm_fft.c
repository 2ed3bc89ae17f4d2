// SPDX-License-Identifier: BSD-3-Clause
/* An FFT-like program on a 2x2 process grid (the transposes of a 3-D FFT
 * with a pencil decomposition): each step transforms the local pencils,
 * transposes them on the row communicator, transforms again and
 * transposes on the column communicator; both communicators come from
 * MPI_Comm_split, and both transposes go through one call site. Each rank
 * prints a hash of its final data (rank order, via rank 0), so a plain and
 * a tuned run can be compared bit for bit.
 * Usage: comm_fft [STEPS] (4 ranks). */
#include "ct.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define B 16384   /* doubles per block: 128 KiB, many guardable pages */

/* One call site for both communicators (not inlined, so one address). */
__attribute__((noinline)) static void transpose(const double *s, double *r, MPI_Comm comm)
{
    MPI_Alltoall(s, B, MPI_DOUBLE, r, B, MPI_DOUBLE, comm);
}

/* A butterfly-like pass that reads the blocks backwards (the last block
 * first), so the program touches the received blocks out of order. */
static void butterfly(const double *in, double *out, int nblocks, int step)
{
    for (int b = nblocks - 1; b >= 0; b--)
        for (int i = 0; i < B; i++) {
            double x = in[(size_t)b * B + i], y = in[(size_t)b * B + (B - 1 - i)];
            out[(size_t)(nblocks - 1 - b) * B + i] = 0.5 * x - 0.25 * y + 0.125 * (double)(step + b);
        }
}

int main(int argc, char **argv)
{
    int rank, size, steps = argc > 1 ? atoi(argv[1]) : 4;
    ct_init(&argc, &argv, &rank, &size);
    ct_require(size == 4, rank, "comm_fft", "4 ranks (a 2x2 grid)");
    MPI_Comm row, col;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank % 2, &row);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank / 2, &col);
    double *a = malloc(2 * B * sizeof *a), *t = malloc(2 * B * sizeof *t);
    if (!a || !t)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < 2 * B; i++)
        a[i] = (double)((rank * 7919 + i * 31) % 1000) / 7.0;
    for (int s = 0; s < steps; s++) {
        butterfly(a, t, 2, s);
        transpose(t, a, row);
        butterfly(a, t, 2, s + 1);
        transpose(t, a, col);
    }
    uint64_t h = ct_hash(a, 2 * B * sizeof *a), all[4];
    MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < 4; r++)
            printf("comm_fft: rank %d hash %016llx\n", r, (unsigned long long)all[r]);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    free(a);
    free(t);
    MPI_Finalize();
    return 0;
}

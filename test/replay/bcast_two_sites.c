// SPDX-License-Identifier: BSD-3-Clause
/* The root broadcasts from one line, the others receive at another: two
 * call sites of one collective. A profile may order the chunks of the two
 * sites differently; the ranks must then agree to run it blocking.
 * Usage: bcast_two_sites [BYTES [ITERS]]; prints one checksum per
 * iteration, the same with and without tnbc. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void send_all(unsigned char *buf, int n, int root)
{
    MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);   /* the root's site */
}

static void receive_all(unsigned char *buf, int n, int root)
{
    MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);   /* everyone else's */
}

int main(int argc, char **argv)
{
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 1 << 20, iters = argc > 2 ? atoi(argv[2]) : 3;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc((size_t)n + 24), *b = buf + 24;   /* not page-aligned */
    if (!buf || n <= 0 || iters <= 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int it = 0; it < iters; it++) {
        int root = it % size;
        if (rank == root) {
            for (int i = 0; i < n; i++)
                b[i] = (unsigned char)(i * 7 + it * 13 + (i >> 12));
            send_all(b, n, root);
        } else {
            receive_all(b, n, root);
        }
        uint64_t sum = 0;
        for (int i = n - 1; i >= 0; i -= 3)   /* read backwards */
            sum = sum * 31 + b[i];
        uint64_t all[64] = { 0 };
        MPI_Gather(&sum, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int r = 0; r < size && r < 64; r++)
                printf("iter %d rank %d sum %016llx\n", it, r, (unsigned long long)all[r]);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}

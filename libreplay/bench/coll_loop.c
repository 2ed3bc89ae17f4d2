// SPDX-License-Identifier: BSD-3-Clause
/* Many small and medium collectives, to measure what the interposition
 * costs when it transforms nothing (docs/replay.md).
 *
 *   coll_loop [ITERS]   prints "coll_loop: T seconds" from rank 0 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, iters;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    iters = argc > 1 ? atoi(argv[1]) : 20000;
    int *s = malloc(sizeof(int) * 1024 * (size_t)size), *r = malloc(sizeof(int) * 1024 * (size_t)size);
    for (int i = 0; i < 1024 * size; i++)
        s[i] = i + rank;
    long sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        int v = it + rank, w;
        MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(s, 16, MPI_INT, it % size, MPI_COMM_WORLD);
        if (it % 10 == 0)
            MPI_Alltoall(s, 1024, MPI_INT, r, 1024, MPI_INT, MPI_COMM_WORLD);
        sum += w + r[it % (1024 * size)];
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_loop: %.6f seconds (%ld)\n", tmax, sum % 7);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}

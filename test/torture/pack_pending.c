// SPDX-License-Identifier: BSD-3-Clause
/* Own case: MPI_Pack of a buffer still pending from a collective that
 * returned early, MPI_Pack into and MPI_Unpack from / into pending buffers.
 * The packed bytes must be the collective's data. */
#include "tt.h"

#define N 65536

static int *fresh(int it, int salt)
{
    int *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++)
        a[i] = tt_rank == 0 ? it * 23 + salt + i : -6;
    MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
    return a;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    for (int it = 0; it < 4; it++) {
        int *a = fresh(it, 0), *p = fresh(it, 300), *u = fresh(it, 600);
        char *plain = malloc(N * sizeof *a);
        int pos = 0, pos2 = 0, pos3 = 0;
        MPI_Pack(a + 3, 30000, MPI_INT, plain, N * sizeof *a, &pos, MPI_COMM_WORLD);
        /* Pack into a pending buffer (both pending), then unpack into another. */
        MPI_Pack(a + 5, 20000, MPI_INT, p + 1000, (N - 1000) * sizeof *p, &pos2, MPI_COMM_WORLD);
        MPI_Unpack(p + 1000, (N - 1000) * sizeof *p, &pos3, u + 40000, 20000, MPI_INT,
                   MPI_COMM_WORLD);
        tt_out("rank %d it %d pos %d %d %d u[40000] %d %016llx %016llx %016llx\n", tt_rank, it, pos,
               pos2, pos3, u[40000], (unsigned long long)tt_hash(plain, (size_t)pos),
               (unsigned long long)tt_hash(p, N * sizeof *p),
               (unsigned long long)tt_hash(u, N * sizeof *u));
        free(plain);
        free(a);
        free(p);
        free(u);
    }
    tt_finish();
    return 0;
}

// SPDX-License-Identifier: BSD-3-Clause
/* Own case: MPI_Isend from and MPI_Irecv into buffers still pending from
 * collectives that returned early, completed together by MPI_Waitall. The
 * peer must get the collective's data; the received data must not be
 * overwritten by the collective landing late. */
#include "tt.h"

#define N 65536

static int *fresh(int it, int salt)
{
    int *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++)
        a[i] = tt_rank == 0 ? it * 17 + salt + i : -4;
    MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
    return a;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int peer = (tt_rank + 1) % tt_size, from = (tt_rank + tt_size - 1) % tt_size;
    for (int it = 0; it < 4; it++) {
        int *a = fresh(it, 0), *b = fresh(it, 1000);
        /* Send a slice of a that differs per rank, receive into b and a. */
        MPI_Request rq[3];
        MPI_Irecv(b + 30000 + it, 8000, MPI_INT, from, it, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(a + 1000 * (tt_rank + 1), 8000, MPI_INT, peer, it, MPI_COMM_WORLD, &rq[1]);
        MPI_Irecv(a + 50000, 100, MPI_INT, from, 100 + it, MPI_COMM_WORLD, &rq[2]);
        int small[100];
        for (int i = 0; i < 100; i++)
            small[i] = tt_rank * 100 + i;
        MPI_Send(small, 100, MPI_INT, peer, 100 + it, MPI_COMM_WORLD);
        MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
        tt_out("rank %d it %d b[%d] %d a[50000] %d %016llx %016llx\n", tt_rank, it, 30000 + it,
               b[30000 + it], a[50000], (unsigned long long)tt_hash(a, N * sizeof *a),
               (unsigned long long)tt_hash(b, N * sizeof *b));
        free(a);
        free(b);
    }
    tt_finish();
    return 0;
}

// SPDX-License-Identifier: BSD-3-Clause
/* Case 7: MPI_Mprobe + MPI_Mrecv into a buffer still pending from a
 * collective that returned early: on the root a send buffer whose data may
 * not have left yet, elsewhere a receive buffer whose data may not have
 * landed yet. MPI must see the buffer only after the collective's data
 * are in place (else the receivers get the overwritten data, or the
 * landing overwrites what Mrecv wrote). */
#include "tt.h"

#define N 65536
#define M 3000

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int peer = (tt_rank + 1) % tt_size, from = (tt_rank + tt_size - 1) % tt_size;
    int *a = malloc(N * sizeof *a), *msg = malloc(M * sizeof *msg);
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < N; i++)
            a[i] = tt_rank == 0 ? it * 7 + i : -1;
        for (int i = 0; i < M; i++)
            msg[i] = 1000000 * (tt_rank + 1) + it * M + i;
        MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Request rq;
        MPI_Isend(msg, M, MPI_INT, peer, it, MPI_COMM_WORLD, &rq);
        MPI_Message m;
        MPI_Status st;
        MPI_Mprobe(from, it, MPI_COMM_WORLD, &m, &st);
        /* Into the middle of the pending buffer, across page boundaries. */
        MPI_Mrecv(a + 10000 + it * 1111, M, MPI_INT, &m, &st);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        int n;
        MPI_Get_count(&st, MPI_INT, &n);
        tt_out("rank %d it %d from %d count %d a[0] %d a[%d] %d %016llx\n", tt_rank, it,
               st.MPI_SOURCE, n, a[0], 10000 + it * 1111, a[10000 + it * 1111],
               (unsigned long long)tt_hash(a, N * sizeof *a));
    }
    free(msg);
    free(a);
    tt_finish();
    return 0;
}

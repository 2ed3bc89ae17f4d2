// SPDX-License-Identifier: BSD-3-Clause
/* Case 7: MPI_Alltoallw whose send buffer is still pending from a collective
 * that returned early (the root's Bcast send buffer, the others' receive
 * buffer), with a different datatype per peer, and whose receive buffer is
 * pending too. Alltoallw must send the collective's data, and its own data
 * must not be overwritten by the earlier collective landing late. */
#include "tt.h"

#define N 65536

static int *fresh(int it, int salt)
{
    int *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++)
        a[i] = tt_rank == 0 ? it * 31 + salt + i : -2;
    MPI_Bcast(a, N, MPI_INT, 0, MPI_COMM_WORLD);
    return a;
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv);
    int *sc = calloc(tt_size, sizeof *sc), *sd = calloc(tt_size, sizeof *sd);
    int *rc = calloc(tt_size, sizeof *rc), *rd = calloc(tt_size, sizeof *rd);
    MPI_Datatype *st = calloc(tt_size, sizeof *st), *rt = calloc(tt_size, sizeof *rt);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (int it = 0; it < 4; it++) {
        int *a = fresh(it, 0), *b = fresh(it, 500);
        /* Peer r gets 4000 ints from byte offset r*20000 of a: as 4000 ints
         * between two even ranks, else as 2000 pairs of ints (the sender and
         * the receiver of each block compute the same type). */
        for (int r = 0; r < tt_size; r++) {
            st[r] = rt[r] = (r % 2 || tt_rank % 2) ? pair : MPI_INT;
            int k = st[r] == pair ? 2000 : 4000;
            sc[r] = rc[r] = k;
            sd[r] = r * 20000 + it * 4;
            rd[r] = 100000 + r * 20000;
        }
        MPI_Alltoallw(a, sc, sd, st, b, rc, rd, rt, MPI_COMM_WORLD);
        tt_out("rank %d it %d b[25000] %d b[%d] %d a %016llx b %016llx\n", tt_rank, it, b[25000],
               (100000 + 20000 * (tt_size - 1)) / 4, b[(100000 + 20000 * (tt_size - 1)) / 4],
               (unsigned long long)tt_hash(a, N * sizeof *a),
               (unsigned long long)tt_hash(b, N * sizeof *b));
        free(a);
        free(b);
    }
    MPI_Type_free(&pair);
    free(sc); free(sd); free(rc); free(rd); free(st); free(rt);
    tt_finish();
    return 0;
}

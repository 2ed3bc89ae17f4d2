// SPDX-License-Identifier: BSD-3-Clause
/* Neighbor collectives on buffers still in flight: an Alltoall (which goes
 * early) fills r, whose blocks are then sent at once, unread, by
 * MPI_Neighbor_alltoall on a periodic 2x2 Cartesian grid (and r's first
 * block by MPI_Neighbor_allgather). What each rank receives is checked
 * against the original senders' patterns. Prints "neighbor: ok".
 * Usage: neighbor [ROUNDS] (4 ranks). */
#include "ct.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define B 32768   /* ints per block */

static int pat(int from, int to, int i, int round) { return from * 1000003 + to * 7919 + i * 3 + round; }

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 2;
    ct_init(&argc, &argv, &rank, &size);
    ct_require(size == 4, rank, "neighbor", "4 ranks");
    MPI_Comm cart;
    int dims[2] = { 2, 2 }, periods[2] = { 1, 1 }, nb[4], me;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &me);
    /* The neighbour order of a Cartesian topology: per dimension, the
     * source then the destination of a shift by one. */
    MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
    int *s = malloc(4 * B * sizeof *s), *r = malloc(4 * B * sizeof *r), *n = malloc(4 * B * sizeof *n);
    long bad = 0;
    if (!s || !r || !n)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < B; i++)
                s[k * B + i] = pat(me, k, i, round);
        MPI_Alltoall(s, B, MPI_INT, r, B, MPI_INT, cart);
        /* r[k] = pat(k, me): forward block nb[j] to neighbour j, unread. */
        MPI_Neighbor_alltoall(r, B, MPI_INT, n, B, MPI_INT, cart);
        /* Neighbour j sent me its block from... its own neighbour list:
         * what j holds at position (j's neighbour index of me) is
         * pat(that index's rank, j); for a 2x2 periodic grid both shifts
         * of a dimension reach the same rank, so j's block j' for me is
         * r_j[j'] = pat(j', j) with j' the j-th position of its list. */
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < B; i++) {
                /* neighbour nb[j] sends its j'-th block, j' = j ^ 1 (the
                 * opposite direction of the same dimension) */
                int jp = j ^ 1;
                bad += n[j * B + i] != pat(jp, nb[j], i, round);
            }
        MPI_Neighbor_allgather(r, B, MPI_INT, n, B, MPI_INT, cart);
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < B; i++)
                bad += n[j * B + i] != pat(0, nb[j], i, round);
    }
    int status = ct_verdict("neighbor", bad, rank);
    MPI_Comm_free(&cart);
    free(s); free(r); free(n);
    MPI_Finalize();
    return status;
}

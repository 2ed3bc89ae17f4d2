// SPDX-License-Identifier: BSD-3-Clause
/* Communicators made every way, one Alltoall call site used on all of them:
 * MPI_Comm_dup of MPI_COMM_WORLD, MPI_Comm_create (the odd ranks),
 * MPI_Comm_create_group (the even ranks), and the rows of a 2x2 Cartesian
 * grid (MPI_Cart_create + MPI_Cart_sub). Every element received is checked
 * against the sender's pattern. Prints "comm_kinds: ok".
 * Usage: comm_kinds [ROUNDS] (4 ranks). */
#include "ct.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define B 32768   /* ints per block: 128 KiB */

static int pattern(int from, int to, int i, int round) { return from * 1000003 + to * 7919 + i * 3 + round; }

__attribute__((noinline)) static void exchange(const int *s, int *r, MPI_Comm comm)
{
    MPI_Alltoall(s, B, MPI_INT, r, B, MPI_INT, comm);
}

/* One round on comm, whose rank k is world rank peers[k]; wrong elements. */
static long round_on(MPI_Comm comm, const int *peers, int me, int round)
{
    int n;
    MPI_Comm_size(comm, &n);
    int *s = malloc((size_t)n * B * sizeof *s), *r = malloc((size_t)n * B * sizeof *r);
    long bad = 0;
    if (!s || !r)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < B; i++)
            s[(size_t)k * B + i] = pattern(me, peers[k], i, round);
    exchange(s, r, comm);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < B; i++)
            bad += r[(size_t)k * B + i] != pattern(peers[k], me, i, round);
    free(s);
    free(r);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 2;
    ct_init(&argc, &argv, &rank, &size);
    ct_require(size == 4, rank, "comm_kinds", "4 ranks");
    MPI_Group world, odd, even;
    MPI_Comm dup, created, grouped = MPI_COMM_NULL, cart, rows;
    int odds[2] = { 1, 3 }, evens[2] = { 0, 2 }, all[4] = { 0, 1, 2, 3 };
    int dims[2] = { 2, 2 }, periods[2] = { 0, 0 }, keep[2] = { 0, 1 };
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 2, odds, &odd);
    MPI_Group_incl(world, 2, evens, &even);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create(MPI_COMM_WORLD, odd, &created);   /* MPI_COMM_NULL on even ranks */
    if (rank % 2 == 0)
        MPI_Comm_create_group(MPI_COMM_WORLD, even, 7, &grouped);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, keep, &rows);                   /* {0,1} and {2,3} */
    int row_peers[2] = { rank / 2 * 2, rank / 2 * 2 + 1 };
    long bad = 0;
    for (int round = 0; round < rounds; round++) {
        bad += round_on(dup, all, rank, round);
        bad += round_on(rank % 2 ? created : grouped, rank % 2 ? odds : evens, rank, round);
        bad += round_on(rows, row_peers, rank, round);
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(rank % 2 ? &created : &grouped);
    MPI_Comm_free(&rows);
    MPI_Comm_free(&cart);
    MPI_Group_free(&odd);
    MPI_Group_free(&even);
    MPI_Group_free(&world);
    int status = ct_verdict("comm_kinds", bad, rank);
    MPI_Finalize();
    return status;
}

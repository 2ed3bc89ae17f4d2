// SPDX-License-Identifier: BSD-3-Clause
/* Communicators freed while an early call on them may still be in flight:
 * each round splits MPI_COMM_WORLD into two halves (even and odd ranks),
 * runs an Alltoall on its half, frees the half at once and only then
 * reads what arrived; every element is checked against the sender's
 * pattern. A last Alltoall on an inter-communicator between the halves
 * (which stays blocking) is checked the same way. Prints "comm_free: ok".
 * Usage: comm_free [ROUNDS] (an even number of ranks). */
#include "ct.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define B 65536   /* ints per block: 256 KiB */

static int pattern(int from, int to, int i, int round) { return from * 1000003 + to * 7919 + i * 3 + round; }

/* One call site for all rounds' communicators. */
__attribute__((noinline)) static void exchange(const int *s, int *r, MPI_Comm comm)
{
    MPI_Alltoall(s, B, MPI_INT, r, B, MPI_INT, comm);
}

/* peers[k]: world rank of the communicator's rank k. Returns the number
 * of wrong elements. */
static long check(const int *r, const int *peers, int n, int me, int round)
{
    long bad = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < B; i++)
            bad += r[(size_t)k * B + i] != pattern(peers[k], me, i, round);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 4;
    ct_init(&argc, &argv, &rank, &size);
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "comm_free: needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int half = size / 2, *peers = malloc((size_t)half * sizeof *peers);
    int *s = malloc((size_t)half * B * sizeof *s), *r = malloc((size_t)half * B * sizeof *r);
    if (!peers || !s || !r)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int k = 0; k < half; k++)
        peers[k] = 2 * k + rank % 2;      /* my half's members, in key order */
    long bad = 0;
    for (int round = 0; round < rounds; round++) {
        MPI_Comm h;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &h);
        for (int k = 0; k < half; k++)
            for (int i = 0; i < B; i++)
                s[(size_t)k * B + i] = pattern(rank, peers[k], i, round);
        exchange(s, r, h);
        MPI_Comm_free(&h);               /* before the data is read */
        bad += check(r, peers, half, rank, round);
    }
    /* The inter-communicator: my half's rank k talks to the other half. */
    MPI_Comm h, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &h);
    MPI_Intercomm_create(h, 0, MPI_COMM_WORLD, 1 - rank % 2, 99, &inter);
    for (int k = 0; k < half; k++) {
        peers[k] = 2 * k + 1 - rank % 2;
        for (int i = 0; i < B; i++)
            s[(size_t)k * B + i] = pattern(rank, peers[k], i, rounds);
    }
    exchange(s, r, inter);
    bad += check(r, peers, half, rank, rounds);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&h);
    int status = ct_verdict("comm_free", bad, rank);
    free(peers);
    free(s);
    free(r);
    MPI_Finalize();
    return status;
}

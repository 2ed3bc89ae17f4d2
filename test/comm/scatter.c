// SPDX-License-Identifier: BSD-3-Clause
/* MPI_Scatter (the root in place on odd rounds, at the same call site) and
 * MPI_Scatterv (different counts per rank, displacements
 * in reverse order, and the root's MPI_IN_PLACE form) on MPI_COMM_WORLD and
 * on a half from MPI_Comm_split; the root changes from call to call. Every
 * element is checked against the root's pattern, read back to front.
 * Prints "scatter: ok". Usage: scatter [ROUNDS] (an even number of ranks). */
#include "ct.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define B 40000   /* ints per rank for scatter: ~156 KiB */

static int pat(int root, int to, int i, int round) { return root * 1000003 + to * 7919 + i * 3 + round; }

static long bad;

__attribute__((noinline)) static void sc(const int *s, int *r, int root, MPI_Comm c)
{
    MPI_Scatter(s, B, MPI_INT, r, B, MPI_INT, root, c);
}
__attribute__((noinline)) static void scv(const int *s, const int *cnt, const int *dsp, int *r, int n,
                                          int root, MPI_Comm c)
{
    MPI_Scatterv(s, cnt, dsp, MPI_INT, r, n, MPI_INT, root, c);
}

static void round_on(MPI_Comm comm, const int *w, int round, int *sbuf, int *rbuf)
{
    int n, me, cnt[64], dsp[64];
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int root = round % n;
    /* scatter: block k of the root's buffer goes to k */
    if (me == root)
        for (int k = 0; k < n; k++)
            for (int i = 0; i < B; i++)
                sbuf[(size_t)k * B + i] = pat(w[root], w[k], i, round);
    int in_place = me == root && round % 2;
    sc(sbuf, in_place ? MPI_IN_PLACE : rbuf, root, comm);
    const int *mine = in_place ? sbuf + (size_t)me * B : rbuf;
    for (int i = B - 1; i >= 0; i--)
        bad += mine[i] != pat(w[root], w[me], i, round);
    /* scatterv: rank k gets B - 9973k ints (a few fewer than 64 chunks'
     * worth on the last ranks would still work), blocks in reverse order */
    for (int k = n - 1, off = 0; k >= 0; k--) {
        cnt[k] = B - 9973 * k;
        if (cnt[k] < 5)
            cnt[k] = 5;
        dsp[k] = off;
        off += cnt[k];
    }
    if (me == root)
        for (int k = 0; k < n; k++)
            for (int i = 0; i < cnt[k]; i++)
                sbuf[dsp[k] + i] = pat(w[root], w[k], i, round + 1);
    scv(sbuf, cnt, dsp, me == root ? MPI_IN_PLACE : rbuf, cnt[me], root, comm);
    if (me == root)       /* in place: the root's own block stays where it was */
        for (int i = cnt[me] - 1; i >= 0; i--)
            bad += sbuf[dsp[me] + i] != pat(w[root], w[me], i, round + 1);
    else
        for (int i = cnt[me] - 1; i >= 0; i--)
            bad += rbuf[i] != pat(w[root], w[me], i, round + 1);
}

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 2;
    ct_init(&argc, &argv, &rank, &size);
    int *sbuf = malloc((size_t)size * B * sizeof *sbuf), *rbuf = malloc(B * sizeof *rbuf);
    int world[64], half[32];
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm h;
    ct_halves("scatter", rank, size, world, half, &h);
    for (int round = 0; round < rounds; round++) {
        round_on(MPI_COMM_WORLD, world, round, sbuf, rbuf);
        round_on(h, half, round, sbuf, rbuf);
    }
    MPI_Comm_free(&h);
    int status = ct_verdict("scatter", bad, rank);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return status;
}

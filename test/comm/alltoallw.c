// SPDX-License-Identifier: BSD-3-Clause
/* MPI_Alltoallw: with one datatype for every peer and byte displacements
 * (blocks in reverse order), out of place and in place, on MPI_COMM_WORLD
 * and on a half from MPI_Comm_split (these go early, as alltoallv); and
 * with MPI_INT or MPI_UNSIGNED depending on the pair (runs blocking). Every
 * element is checked against the sender's pattern, read back to front.
 * Prints "alltoallw: ok". Usage: alltoallw [ROUNDS] (even ranks, <= 64). */
#include "ct.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define B 24000   /* ints per block */

static int pat(int from, int to, int i, int round) { return from * 1000003 + to * 7919 + i * 3 + round; }

static long bad;

__attribute__((noinline)) static void w(const void *s, const int *sc, const int *sd, const MPI_Datatype *st,
                                        void *r, const int *rc, const int *rd, const MPI_Datatype *rt,
                                        MPI_Comm c)
{
    MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, c);
}
__attribute__((noinline)) static void w_ip(void *r, const int *rc, const int *rd, const MPI_Datatype *rt,
                                           MPI_Comm c)
{
    MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r, rc, rd, rt, c);
}
__attribute__((noinline)) static void w_mixed(const void *s, const int *sc, const int *sd,
                                              const MPI_Datatype *st, void *r, const int *rc,
                                              const int *rd, const MPI_Datatype *rt, MPI_Comm c)
{
    MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, c);
}

static void round_on(MPI_Comm comm, const int *wr, int round, int *s, int *r)
{
    int n, me, cnt[64], dsp[64];
    MPI_Datatype ty[64], mixed[64];
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    for (int k = 0; k < n; k++) {
        cnt[k] = B;
        dsp[k] = (n - 1 - k) * B * (int)sizeof(int);     /* bytes, reverse order */
        ty[k] = MPI_INT;
        mixed[k] = (k + me) % 2 ? MPI_UNSIGNED : MPI_INT;  /* the same at both ends */
    }
    for (int v = 0; v < 3; v++) {
        int *src = v == 1 ? r : s;
        for (int k = 0; k < n; k++)
            for (int i = 0; i < B; i++)
                src[(n - 1 - k) * B + i] = pat(wr[me], wr[k], i, round + v);
        if (v == 0)
            w(s, cnt, dsp, ty, r, cnt, dsp, ty, comm);
        else if (v == 1)
            w_ip(r, cnt, dsp, ty, comm);
        else
            w_mixed(s, cnt, dsp, mixed, r, cnt, dsp, mixed, comm);
        for (int k = n - 1; k >= 0; k--)
            for (int i = B - 1; i >= 0; i--)
                bad += r[(n - 1 - k) * B + i] != pat(wr[k], wr[me], i, round + v);
    }
}

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 2;
    ct_init(&argc, &argv, &rank, &size);
    int *s = malloc((size_t)size * B * sizeof *s), *r = malloc((size_t)size * B * sizeof *r);
    int world[64], half[32];
    if (!s || !r)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm h;
    ct_halves("alltoallw", rank, size, world, half, &h);
    for (int round = 0; round < rounds; round++) {
        round_on(MPI_COMM_WORLD, world, round, s, r);
        round_on(h, half, round, s, r);
    }
    MPI_Comm_free(&h);
    int status = ct_verdict("alltoallw", bad, rank);
    free(s);
    free(r);
    MPI_Finalize();
    return status;
}

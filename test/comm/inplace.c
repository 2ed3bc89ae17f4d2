// SPDX-License-Identifier: BSD-3-Clause
/* MPI_IN_PLACE forms: alltoall, alltoallv, allgather, allgatherv and
 * allreduce (integer sum) with the send data in the receive buffer, on
 * MPI_COMM_WORLD and on a half from MPI_Comm_split. Every element is
 * checked against what the senders put there (their pattern, or the sum
 * of the members' patterns), read back to front. Prints "inplace: ok".
 * Usage: inplace [ROUNDS] (an even number of ranks). */
#include "ct.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define B 16384   /* ints per block: 64 KiB */

static int pat(int from, int to, int i, int round) { return from * 1000003 + to * 7919 + i * 3 + round; }

static long bad;

static void expect(const int *buf, size_t i, int want)
{
    bad += buf[i] != want;
}

/* The call sites, one per operation (not inlined). */
__attribute__((noinline)) static void a2a(int *r, MPI_Comm c)
{
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, B, MPI_INT, c);
}
__attribute__((noinline)) static void a2av(int *r, const int *cnt, const int *dsp, MPI_Comm c)
{
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r, cnt, dsp, MPI_INT, c);
}
__attribute__((noinline)) static void ag(int *r, MPI_Comm c)
{
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, B, MPI_INT, c);
}
__attribute__((noinline)) static void agv(int *r, const int *cnt, const int *dsp, MPI_Comm c)
{
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, cnt, dsp, MPI_INT, c);
}
__attribute__((noinline)) static void ar(int *r, int n, MPI_Comm c)
{
    MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_SUM, c);
}

/* One round of every operation on comm, whose rank k is world rank w[k]. */
static void round_on(MPI_Comm comm, const int *w, int round, int *buf)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int cnt[64], dsp[64];
    /* alltoall: block k goes to k */
    for (int k = 0; k < n; k++)
        for (int i = 0; i < B; i++)
            buf[(size_t)k * B + i] = pat(w[me], w[k], i, round);
    a2a(buf, comm);
    for (size_t j = (size_t)n * B; j-- > 0;)
        expect(buf, j, pat(w[j / B], w[me], (int)(j % B), round));
    /* alltoallv: the block to and from k has B - 7|me - k| ints (in place,
     * what k sends me is what I send k), packed back to back in reverse
     * order (displacements descend) */
    for (int k = n - 1, off = 0; k >= 0; k--) {
        cnt[k] = B - 7 * abs(me - k);
        dsp[k] = off;
        off += cnt[k];
    }
    for (int k = 0; k < n; k++)
        for (int i = 0; i < cnt[k]; i++)
            buf[dsp[k] + i] = pat(w[me], w[k], i, round + 1);
    a2av(buf, cnt, dsp, comm);
    for (int k = n - 1; k >= 0; k--)
        for (int i = cnt[k] - 1; i >= 0; i--)
            expect(buf, (size_t)(dsp[k] + i), pat(w[k], w[me], i, round + 1));
    /* allgather: my own block in place */
    for (int i = 0; i < B; i++)
        buf[(size_t)me * B + i] = pat(w[me], -1, i, round);
    ag(buf, comm);
    for (size_t j = (size_t)n * B; j-- > 0;)
        expect(buf, j, pat(w[j / B], -1, (int)(j % B), round));
    /* allgatherv: k contributes B - 7k ints, blocks in reverse order */
    for (int k = n - 1, off = 0; k >= 0; k--) {
        cnt[k] = B - 7 * k;
        dsp[k] = off;
        off += cnt[k];
    }
    for (int i = 0; i < cnt[me]; i++)
        buf[dsp[me] + i] = pat(w[me], -2, i, round);
    agv(buf, cnt, dsp, comm);
    for (int k = n - 1; k >= 0; k--)
        for (int i = cnt[k] - 1; i >= 0; i--)
            expect(buf, (size_t)(dsp[k] + i), pat(w[k], -2, i, round));
    /* allreduce: integer sum, exact in any order */
    for (int i = 0; i < 2 * B; i++)
        buf[i] = pat(w[me], -3, i, round) % 65536;
    ar(buf, 2 * B, comm);
    for (int i = 2 * B - 1; i >= 0; i--) {
        int s = 0;
        for (int k = 0; k < n; k++)
            s += pat(w[k], -3, i, round) % 65536;
        expect(buf, (size_t)i, s);
    }
}

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 2;
    ct_init(&argc, &argv, &rank, &size);
    int *buf = malloc((size_t)size * B * sizeof *buf), world[64], half[32];
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm h;
    ct_halves("inplace", rank, size, world, half, &h);
    for (int round = 0; round < rounds; round++) {
        round_on(MPI_COMM_WORLD, world, round, buf);
        round_on(h, half, round, buf);
    }
    MPI_Comm_free(&h);
    int status = ct_verdict("inplace", bad, rank);
    free(buf);
    MPI_Finalize();
    return status;
}
